//! Tx data as EDN text, for error messages: the offending form is shown as the user would
//! have written it, not as Rust's debug output.

use super::data::{EntityMap, EntityRef, Tempid, TxValue};
use crate::codec::{Keyword, Value};
use crate::edn::{edn_from_value, to_edn_string, Edn};

/// A value as EDN text.
pub fn value_text(v: &Value) -> String {
    to_edn_string(&edn_from_value(v))
}

/// A tx value as EDN text.
pub fn tx_value_text(v: &TxValue) -> String {
    to_edn_string(&tx_value_edn(v))
}

/// An entity map as EDN text.
pub fn map_text(m: &EntityMap) -> String {
    to_edn_string(&map_edn(m))
}

fn tempid_edn(t: &Tempid) -> Edn {
    match t {
        Tempid::Named(s) => Edn::String(s.to_string()),
        Tempid::Negative(n) => Edn::Long(*n),
        // A map without `:db/id` has no written name; its number identifies it.
        Tempid::Anonymous(n) => Edn::Symbol(Keyword::new(None, &format!("map#{n}"))),
        Tempid::CurrentTx => Edn::String("datomic.tx".into()),
    }
}

fn entity_edn(r: &EntityRef) -> Edn {
    match r {
        EntityRef::Id(id) => Edn::Long(*id as i64),
        EntityRef::Temp(t) => tempid_edn(t),
        EntityRef::Lookup(k, v) => Edn::Vector(vec![Edn::Keyword(k.clone()), edn_from_value(v)]),
        EntityRef::Ident(k) => Edn::Keyword(k.clone()),
    }
}

fn tx_value_edn(v: &TxValue) -> Edn {
    match v {
        TxValue::Value(v) => edn_from_value(v),
        TxValue::Entity(r) => entity_edn(r),
        TxValue::Map(m) => map_edn(m),
        TxValue::Many(items) => Edn::Vector(items.iter().map(tx_value_edn).collect()),
    }
}

fn map_edn(m: &EntityMap) -> Edn {
    let mut pairs = Vec::with_capacity(m.attrs.len() + 1);
    if let Some(id) = &m.id {
        pairs.push((Edn::kw(":db/id"), entity_edn(id)));
    }
    for (name, v) in &m.attrs {
        let key = if name.reverse {
            Keyword::new(name.attr.namespace(), &format!("_{}", name.attr.name()))
        } else {
            name.attr.clone()
        };
        pairs.push((Edn::Keyword(key), tx_value_edn(v)));
    }
    Edn::Map(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edn::read_one;
    use crate::tx::edn::tx_data_from_edn;
    use crate::tx::TxItem;

    #[test]
    fn maps_print_as_written() {
        // Operations print through `Display` (`tx/show.rs`, tested there).
        for text in [
            r#"{:db/id "a", :person/name "Ann", :person/_manager [:person/id "p8"]}"#,
            r#"{:person/friends [{:person/id "x"} 12]}"#,
            r#"{:db/id -1, :person/tags [:a :b]}"#,
        ] {
            let data = tx_data_from_edn(&read_one(&format!("[{text}]")).unwrap()).unwrap();
            match &data.items[0] {
                TxItem::Map(m) => assert_eq!(map_text(m), text),
                other => panic!("{other}"),
            }
        }
    }
}
