//! Tx data as EDN text, for error messages: the offending form is shown as the user would
//! have written it, not as Rust's debug output.

use super::data::{EntityMap, EntityRef, Tempid, TxItem, TxOp, TxValue};
use crate::codec::{Keyword, Value};
use crate::edn::{edn_from_value, to_edn_string, Edn};

/// A value as EDN text.
pub fn value_text(v: &Value) -> String {
    to_edn_string(&edn_from_value(v))
}

/// An entity reference as EDN text.
pub fn entity_text(r: &EntityRef) -> String {
    to_edn_string(&entity_edn(r))
}

/// A tx value as EDN text.
pub fn tx_value_text(v: &TxValue) -> String {
    to_edn_string(&tx_value_edn(v))
}

/// An entity map as EDN text.
pub fn map_text(m: &EntityMap) -> String {
    to_edn_string(&map_edn(m))
}

/// An operation as EDN text.
pub fn op_text(op: &TxOp) -> String {
    to_edn_string(&op_edn(op))
}

/// One item of tx data as EDN text.
pub fn item_text(item: &TxItem) -> String {
    match item {
        TxItem::Map(m) => map_text(m),
        TxItem::Op(op) => op_text(op),
    }
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

fn op_edn(op: &TxOp) -> Edn {
    let kw = |k: &Keyword| Edn::Keyword(k.clone());
    Edn::Vector(match op {
        TxOp::Add { e, a, v } => vec![Edn::kw(":db/add"), entity_edn(e), kw(a), tx_value_edn(v)],
        TxOp::Retract { e, a, v } => {
            let mut out = vec![Edn::kw(":db/retract"), entity_edn(e), kw(a)];
            out.extend(v.iter().map(tx_value_edn));
            out
        }
        TxOp::RetractEntity { e } => vec![Edn::kw(":db/retractEntity"), entity_edn(e)],
        TxOp::Cas { e, a, old, new } => vec![
            Edn::kw(":db/cas"),
            entity_edn(e),
            kw(a),
            old.as_ref().map_or(Edn::Nil, tx_value_edn),
            tx_value_edn(new),
        ],
        TxOp::Call { function, args } => {
            let mut out = vec![kw(function)];
            out.extend(args.iter().map(edn_from_value));
            out
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edn::read_one;
    use crate::tx::edn::tx_data_from_edn;

    #[test]
    fn forms_print_as_written() {
        for text in [
            r#"{:db/id "a", :person/name "Ann", :person/_manager [:person/id "p8"]}"#,
            r#"[:db/add [:person/id "p8"] :person/tags [:a :b]]"#,
            r#"[:db/retract -1 :person/name]"#,
            r#"[:db/retractEntity :color/red]"#,
            r#"[:db/cas 17 :person/age nil 3]"#,
            r#"{:person/friends [{:person/id "x"} 12]}"#,
        ] {
            let data = tx_data_from_edn(&read_one(&format!("[{text}]")).unwrap()).unwrap();
            assert_eq!(item_text(&data.items[0]), text);
        }
    }
}
