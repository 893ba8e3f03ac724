//! Tx data printed back as EDN, for error messages: the form a user wrote, as they wrote it
//! (`[:db/add "alice" :person/age 30]`, `{:db/id "alice", :person/name "Alice"}`), never the
//! Rust structures that hold it.

use std::fmt;

use super::data::{EntityMap, EntityRef, Tempid, TxItem, TxOp, TxValue};
use crate::codec::Keyword;
use crate::edn::{edn_from_value, Edn};

impl Tempid {
    /// The tempid as tx data writes it (a map without `:db/id` has none: a placeholder
    /// string names it).
    pub fn to_edn(&self) -> Edn {
        match self {
            Tempid::Named(s) => Edn::String(s.to_string()),
            Tempid::Negative(n) => Edn::Long(*n),
            Tempid::Anonymous(n) => Edn::String(format!("<map #{n}>")),
            Tempid::CurrentTx => Edn::String("datomic.tx".into()),
        }
    }
}

impl EntityRef {
    /// The reference as tx data writes it.
    pub fn to_edn(&self) -> Edn {
        match self {
            EntityRef::Id(e) => Edn::Long(*e as i64),
            EntityRef::Temp(t) => t.to_edn(),
            EntityRef::Lookup(a, v) => {
                Edn::Vector(vec![Edn::Keyword(a.clone()), edn_from_value(v)])
            }
            EntityRef::Ident(k) => Edn::Keyword(k.clone()),
        }
    }
}

impl TxValue {
    /// The value as tx data writes it.
    pub fn to_edn(&self) -> Edn {
        match self {
            TxValue::Value(v) => edn_from_value(v),
            TxValue::Entity(r) => r.to_edn(),
            TxValue::Map(m) => m.to_edn(),
            TxValue::Many(items) => Edn::Vector(items.iter().map(TxValue::to_edn).collect()),
        }
    }
}

impl EntityMap {
    /// The map as tx data writes it (reverse attributes as `:ns/_name`).
    pub fn to_edn(&self) -> Edn {
        let mut pairs = Vec::with_capacity(self.attrs.len() + 1);
        if let Some(id) = &self.id {
            pairs.push((Edn::kw(":db/id"), id.to_edn()));
        }
        for (name, v) in &self.attrs {
            let k = if name.reverse {
                Keyword::new(name.attr.namespace(), &format!("_{}", name.attr.name()))
            } else {
                name.attr.clone()
            };
            pairs.push((Edn::Keyword(k), v.to_edn()));
        }
        Edn::Map(pairs)
    }
}

impl TxOp {
    /// The operation in list form.
    pub fn to_edn(&self) -> Edn {
        let kw = |k: &str| Edn::kw(k);
        let opt = |v: &Option<TxValue>| v.as_ref().map_or(Edn::Nil, TxValue::to_edn);
        Edn::Vector(match self {
            TxOp::Add { e, a, v } => vec![
                kw(":db/add"),
                e.to_edn(),
                Edn::Keyword(a.clone()),
                v.to_edn(),
            ],
            TxOp::Retract { e, a, v } => {
                let mut items = vec![kw(":db/retract"), e.to_edn(), Edn::Keyword(a.clone())];
                if let Some(v) = v {
                    items.push(v.to_edn());
                }
                items
            }
            TxOp::RetractEntity { e } => vec![kw(":db/retractEntity"), e.to_edn()],
            TxOp::Cas { e, a, old, new } => vec![
                kw(":db/cas"),
                e.to_edn(),
                Edn::Keyword(a.clone()),
                opt(old),
                new.to_edn(),
            ],
            TxOp::Call { function, args } => std::iter::once(Edn::Keyword(function.clone()))
                .chain(args.iter().map(edn_from_value))
                .collect(),
        })
    }
}

impl TxItem {
    /// The item as tx data writes it.
    pub fn to_edn(&self) -> Edn {
        match self {
            TxItem::Map(m) => m.to_edn(),
            TxItem::Op(op) => op.to_edn(),
        }
    }
}

macro_rules! display_as_edn {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_edn(), f)
            }
        }
    )*};
}

display_as_edn!(EntityRef, TxValue, EntityMap, TxOp, TxItem);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Value;

    #[test]
    fn tx_data_prints_as_the_edn_it_was_read_from() {
        let cases = [
            r#"[:db/add "alice" :person/age 30]"#,
            r#"[:db/add [:person/email "a@b.c"] :person/friend :bob]"#,
            r#"[:db/retract 1048577 :person/name]"#,
            r#"[:db/cas 1048577 :person/age nil 31]"#,
            r#"[:db/retractEntity -1]"#,
            r#"{:db/id "alice", :person/name "Alice", :person/_friend [{:person/name "Bob"}]}"#,
        ];
        for text in cases {
            let data = crate::tx::edn::tx_data_from_edn(
                &crate::edn::read_one(&format!("[{text}]")).unwrap(),
            )
            .unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(data.items[0].to_string(), text);
        }
        let string_tempid = Tempid::Named("a\"b".into());
        assert_eq!(string_tempid.to_edn().to_string(), r#""a\"b""#);
        assert_eq!(TxValue::Value(Value::Long(3)).to_string(), "3");
    }
}
