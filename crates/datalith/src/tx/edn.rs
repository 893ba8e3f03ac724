//! Tx data from EDN: `[{:db/id "x" :attr v} [:db/add e a v] ...]`.

use super::data::{AttrName, EntityMap, EntityRef, Tempid, TxData, TxItem, TxOp, TxValue};
use super::error::TxError;
use crate::codec::Keyword;
use crate::edn::{to_edn_string, value_from_edn, Edn};

fn malformed(detail: impl Into<String>, form: &Edn) -> TxError {
    TxError::Malformed {
        detail: detail.into(),
        form: to_edn_string(form),
    }
}

impl TxData {
    /// Tx data from EDN data: a vector of entity maps and `[:db/add e a v]`-style operations,
    /// as `transact` reads it from text. The first form that is not tx data is kept as it is
    /// (the forms after it are not read) and fails when the transaction reaches it, after
    /// the forms before it, as Datomic reads a transaction's forms in order; the error names
    /// the form.
    ///
    /// ```
    /// use datalith::{Edn, TxData};
    ///
    /// let edn: Edn = r#"[{:db/id "ann" :name "Ann"} [:db/add "ann" :age 41]]"#.parse().unwrap();
    /// assert_eq!(TxData::from_edn(&edn).unwrap().items.len(), 2);
    /// let err = TxData::from_edn(&Edn::Long(1)).unwrap_err();
    /// assert_eq!(err.category().code, ":db.error/not-transaction-data");
    /// ```
    pub fn from_edn(e: &Edn) -> Result<TxData, TxError> {
        tx_data_from_edn(e)
    }
}

/// Converts EDN tx data.
pub fn tx_data_from_edn(e: &Edn) -> Result<TxData, TxError> {
    let items = match e {
        Edn::Vector(items) | Edn::List(items) => items,
        other => {
            return Err(malformed(
                "tx data is a vector of maps and operations",
                other,
            ))
        }
    };
    let mut out = TxData::default();
    for it in items {
        if is_install_op(it) || retracts_nothing(it) {
            continue;
        }
        match tx_item(it) {
            Ok(item) => out.items.push(item),
            Err(_) => {
                // Read again, for its error, when the transaction reaches it (`TxData::unread`).
                out.unread = Some(it.clone());
                break;
            }
        }
    }
    Ok(out)
}

/// One form of tx data.
fn tx_item(it: &Edn) -> Result<TxItem, TxError> {
    Ok(match it {
        Edn::Map(_) => TxItem::Map(entity_map(it)?),
        Edn::Vector(op) | Edn::List(op) => TxItem::Op(operation(op, it)?),
        other => return Err(malformed("expected a map or an operation vector", other)),
    })
}

/// Why `form`, a form of tx data [`tx_data_from_edn`] kept unread, is not tx data.
pub fn unread_error(form: &Edn) -> TxError {
    match tx_item(form) {
        Err(e) => e,
        // Kept only because it failed; reading is deterministic.
        Ok(_) => malformed("not tx data", form),
    }
}

/// Whether `k` is one of the attributes Datomic's schema once had to be installed or altered
/// through (`:db.install/attribute`, `:db.alter/attribute`, `:db.install/partition`, ...,
/// and their reverses `:db.install/_attribute`): since Datomic 0.9.5530 an attribute entity
/// is installed or altered by its own datoms, and the old forms are still accepted and do
/// nothing more. Accepted the same way here, so schema files of that style transact.
fn is_install_attr(k: &Keyword) -> bool {
    matches!(k.namespace(), Some("db.install" | "db.alter"))
}

/// `[:db/add :db.part/db :db.install/attribute x]` and its `:db.alter` twin: nothing to do.
fn is_install_op(it: &Edn) -> bool {
    match it {
        Edn::Vector(op) | Edn::List(op) => matches!(
            op.as_slice(),
            [Edn::Keyword(add), _, Edn::Keyword(a), _]
                if add.namespace() == Some("db") && add.name() == "add" && is_install_attr(a)
        ),
        _ => false,
    }
}

/// `[:db/retractEntity x]` where `x` names no entity (a map, a double, a boolean, nil, ...):
/// Datomic retracts nothing and reports no error, as its `retractEntity` finds no datoms of
/// such a value; a lookup ref or an ident that names nothing does the same when it runs.
fn retracts_nothing(it: &Edn) -> bool {
    match it {
        Edn::Vector(op) | Edn::List(op) => match op.as_slice() {
            [Edn::Keyword(f), e]
                if matches!(f.namespace(), Some("db" | "db.fn")) && f.name() == "retractEntity" =>
            {
                matches!(entity_ref(e, it), Err(TxError::UnresolvableEntity { .. }))
            }
            _ => false,
        },
        _ => false,
    }
}

/// Occurrences of `#db/id [:db.part/p]` (no number) made so far: each is a tempid of its own.
static FRESH_DB_IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A `#db/id [:db.part/p]` or `#db/id [:db.part/p -n]` literal (Datomic's reader tempids, in
/// its schema and data files): a tempid of its own per occurrence without `-n`, the same one
/// for every `-n` of a partition within a transaction, and the transaction itself in
/// `:db.part/tx`. Datalith has no partitions: the partition only tells these apart.
fn db_id_literal(inner: &Edn, form: &Edn) -> Result<EntityRef, TxError> {
    let bad = || {
        malformed(
            "#db/id takes [partition] or [partition negative-number]",
            form,
        )
    };
    let (part, n) = match inner {
        Edn::Vector(items) | Edn::List(items) => match items.as_slice() {
            [Edn::Keyword(p)] => (p, None),
            [Edn::Keyword(p), Edn::Long(n)] if *n < 0 => (p, Some(*n)),
            _ => return Err(bad()),
        },
        _ => return Err(bad()),
    };
    if part.namespace() == Some("db.part") && part.name() == "tx" {
        return Ok(EntityRef::Temp(Tempid::CurrentTx));
    }
    let name = match n {
        Some(n) => format!("#db/id[{part} {n}]"),
        None => {
            let k = FRESH_DB_IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            format!("#db/id[{part}]#{k}")
        }
    };
    Ok(EntityRef::Temp(Tempid::Named(name.as_str().into())))
}

fn is_db_id_tag(k: &Keyword) -> bool {
    k.namespace() == Some("db") && k.name() == "id"
}

/// An entity reference: id, tempid, ident or lookup ref, as Datomic reads what stands in
/// entity position: a number is an entity id (a big integer too), a list like a vector is a
/// lookup ref, and anything else names no entity.
pub fn entity_ref(e: &Edn, form: &Edn) -> Result<EntityRef, TxError> {
    Ok(match e {
        Edn::Long(n) => long_entity(*n),
        Edn::BigInt(n) => match i64::try_from(*n) {
            Ok(n) => long_entity(n),
            Err(_) => return Err(unresolvable(e, form)),
        },
        Edn::String(s) if s == "datomic.tx" => EntityRef::Temp(Tempid::CurrentTx),
        // Datomic reads a string with a leading colon as the ident it spells, not a tempid.
        Edn::String(s) => match Keyword::from_colon_text(s) {
            Some(k) => EntityRef::Ident(k),
            None => EntityRef::Temp(Tempid::Named(s.as_str().into())),
        },
        Edn::Keyword(k) if k.to_string() == ":db/current-tx" => EntityRef::Temp(Tempid::CurrentTx),
        Edn::Keyword(k) => EntityRef::Ident(k.clone()),
        Edn::Tagged(tag, inner) if is_db_id_tag(tag) => db_id_literal(inner, e)?,
        Edn::Vector(items) | Edn::List(items) => lookup_ref(items, e, form)?,
        _ => return Err(unresolvable(e, form)),
    })
}

fn long_entity(n: i64) -> EntityRef {
    match n {
        n if n < 0 => EntityRef::Temp(Tempid::Negative(n)),
        n => EntityRef::Id(n as u64),
    }
}

/// A value in entity position that names no entity (a map, a double, a boolean, nil, ...:
/// Datomic's `:db.error/not-an-entity`).
fn unresolvable(e: &Edn, form: &Edn) -> TxError {
    TxError::UnresolvableEntity {
        entity: to_edn_string(e),
        form: to_edn_string(form),
    }
}

/// `[attribute value]` in entity position. Datomic refuses another length as an invalid
/// lookup ref, a first element that is a number (or other non-keyword) as no attribute, and
/// a string there as no keyword.
fn lookup_ref(items: &[Edn], e: &Edn, form: &Edn) -> Result<EntityRef, TxError> {
    let text = || to_edn_string(e);
    let form = || to_edn_string(form);
    match items {
        [Edn::Keyword(_), Edn::Nil] => Err(TxError::LookupRefNil {
            lookup: text(),
            form: form(),
        }),
        [Edn::Keyword(k), v] => Ok(EntityRef::Lookup(
            k.clone(),
            value_from_edn(v)
                .ok_or_else(|| malformed("lookup ref value must be a plain value", e))?,
        )),
        [Edn::String(s), _] => Err(TxError::NotAKeyword {
            value: to_edn_string(&Edn::String(s.clone())),
            lookup: text(),
            form: form(),
        }),
        [a, _] => Err(TxError::NotAnAttribute {
            value: to_edn_string(a),
            lookup: text(),
            form: form(),
        }),
        _ => Err(TxError::InvalidLookupRef {
            lookup: text(),
            form: form(),
        }),
    }
}

fn tx_value(e: &Edn) -> Result<TxValue, TxError> {
    Ok(match e {
        Edn::Map(_) => TxValue::Map(Box::new(entity_map(e)?)),
        Edn::Tagged(tag, inner) if is_db_id_tag(tag) => TxValue::Entity(db_id_literal(inner, e)?),
        // nil is an element of a tuple (`[nil "b"]`), not a value of its own: such a vector
        // is one tuple value.
        Edn::Vector(items) if items.contains(&Edn::Nil) => {
            TxValue::Value(value_from_edn(e).ok_or_else(|| malformed("not a storable tuple", e))?)
        }
        Edn::Vector(items) | Edn::Set(items) | Edn::List(items) => {
            TxValue::Many(items.iter().map(tx_value).collect::<Result<_, _>>()?)
        }
        Edn::Nil => {
            return Err(TxError::NilValue {
                form: to_edn_string(e),
            })
        }
        other => TxValue::Value(
            value_from_edn(other).ok_or_else(|| malformed("not a storable value", other))?,
        ),
    })
}

fn entity_map(e: &Edn) -> Result<EntityMap, TxError> {
    let Edn::Map(pairs) = e else {
        return Err(malformed("expected a map", e));
    };
    let mut m = EntityMap::default();
    for (k, v) in pairs {
        let Edn::Keyword(k) = k else {
            return Err(malformed("map keys are attribute keywords", k));
        };
        if k.namespace() == Some("db") && k.name() == "id" {
            // `:db/id nil` is no id: a new entity, as in Datomic.
            m.id = (*v != Edn::Nil).then(|| entity_ref(v, e)).transpose()?;
            continue;
        }
        // `:db.install/_attribute :db.part/db` and the like (see `is_install_attr`).
        if is_install_attr(k) {
            continue;
        }
        let name = AttrName::parse(k);
        if name.reverse && *v == Edn::Nil {
            // A reverse attribute's value stands in entity position, where nil names none.
            return Err(unresolvable(v, e));
        }
        m.attrs.push((name, tx_value(v)?));
    }
    Ok(m)
}

fn kw(e: &Edn, form: &Edn) -> Result<Keyword, TxError> {
    match e {
        Edn::Keyword(k) => Ok(k.clone()),
        other => Err(TxError::AttributeNotKeyword {
            value: to_edn_string(other),
            form: to_edn_string(form),
        }),
    }
}

fn operation(op: &[Edn], form: &Edn) -> Result<TxOp, TxError> {
    let Some(Edn::Keyword(name)) = op.first() else {
        return Err(malformed(
            "an operation starts with a keyword such as :db/add",
            form,
        ));
    };
    let arity = |n: usize| {
        if op.len() == n + 1 {
            Ok(())
        } else {
            Err(malformed(format!("{name} takes {n} arguments"), form))
        }
    };
    let name_s = name.to_string();
    Ok(match name_s.as_str() {
        ":db/add" => {
            // Datomic reads the first four elements and ignores any after them.
            if op.len() < 4 {
                arity(3)?;
            }
            TxOp::Add {
                e: entity_ref(&op[1], form)?,
                a: kw(&op[2], form)?,
                v: tx_value(&op[3])?,
            }
        }
        ":db/retract" => {
            if op.len() != 3 && op.len() != 4 {
                return Err(malformed(":db/retract takes 2 or 3 arguments", form));
            }
            TxOp::Retract {
                e: entity_ref(&op[1], form)?,
                a: kw(&op[2], form)?,
                v: op.get(3).map(tx_value).transpose()?,
            }
        }
        ":db/retractEntity" | ":db.fn/retractEntity" => {
            arity(1)?;
            TxOp::RetractEntity {
                e: entity_ref(&op[1], form)?,
            }
        }
        ":db/cas" | ":db.fn/cas" => {
            arity(4)?;
            if op[1] == Edn::Nil || op[4] == Edn::Nil {
                return Err(TxError::InvalidCas {
                    form: to_edn_string(form),
                });
            }
            TxOp::Cas {
                e: cas_entity(&op[1], &op[2], &op[3], form)?,
                a: kw(&op[2], form)?,
                old: if op[3] == Edn::Nil {
                    None
                } else {
                    Some(tx_value(&op[3])?)
                },
                new: tx_value(&op[4])?,
            }
        }
        ":db.fn/call" => {
            let f = op.get(1).and_then(|f| {
                f.as_keyword()
                    .cloned()
                    .or_else(|| f.as_symbol().map(|s| Keyword::parse(&s)))
            });
            let f = f.ok_or_else(|| malformed(":db.fn/call needs a function name", form))?;
            TxOp::Call {
                function: f,
                args: args(&op[2..], form)?,
            }
        }
        _ => TxOp::Call {
            function: name.clone(),
            args: args(&op[1..], form)?,
        },
    })
}

/// A `:db/cas`'s entity: Datomic compares the expected value with what an entity that names
/// nothing (a map, a double, ...) holds, which is nothing, so such a cas fails its compare
/// unless it expected nil.
fn cas_entity(e: &Edn, a: &Edn, old: &Edn, form: &Edn) -> Result<EntityRef, TxError> {
    entity_ref(e, form).map_err(|err| match err {
        TxError::UnresolvableEntity { entity, .. } if *old != Edn::Nil => TxError::CasOnNothing {
            entity,
            attr: to_edn_string(a),
            expected: to_edn_string(old),
        },
        other => other,
    })
}

fn args(items: &[Edn], form: &Edn) -> Result<Vec<crate::codec::Value>, TxError> {
    items
        .iter()
        .map(|a| {
            value_from_edn(a).ok_or_else(|| {
                malformed(
                    format!("function argument {} is not a value", to_edn_string(a)),
                    form,
                )
            })
        })
        .collect()
}
