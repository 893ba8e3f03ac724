//! Schema changes inside a transaction: datoms on attribute entities make a new schema, if the
//! existing data allows it.

use std::collections::{HashMap, HashSet};

use super::error::TxError;
use crate::codec::Value;
use crate::kv::Direction;
use crate::store::bootstrap;
use crate::store::ids::{AttrId, ATTR_PARTITION_END};
use crate::store::reader::IndexReader;
use crate::store::schema::{attribute_from_datoms, builtin, Attribute, Cardinality, Schema};
use crate::store::Datom;
use std::ops::Bound;

/// The schema after `datoms`, or `None` when they touch no attribute.
pub fn apply_schema_change(
    r: &IndexReader<'_>,
    schema: &Schema,
    datoms: &[Datom],
) -> Result<Option<Schema>, TxError> {
    let touched: Vec<u64> = {
        let mut seen = HashSet::new();
        datoms
            .iter()
            .map(|d| d.e)
            .filter(|e| *e < ATTR_PARTITION_END && seen.insert(*e))
            .collect()
    };
    if let Some(d) = datoms
        .iter()
        .find(|d| d.added && d.a == builtin::CARDINALITY && d.e >= ATTR_PARTITION_END)
    {
        // Outside the attribute partition: an entity given a cardinality but no value type.
        let ident = datoms
            .iter()
            .find(|i| i.e == d.e && i.a == builtin::IDENT && i.added)
            .map(|i| i.v.to_string())
            .unwrap_or_else(|| format!("entity {}", d.e));
        return Err(TxError::InvalidInstallAttribute {
            attr: ident,
            property: ":db/valueType".into(),
        });
    }
    // An ident asserted now that was a renamed attribute's old name is that entity's from
    // now on, not the attribute's.
    let reclaimed: Vec<&crate::codec::Keyword> = datoms
        .iter()
        .filter(|d| d.added && d.a == builtin::IDENT)
        .filter_map(|d| match &d.v {
            Value::Keyword(k) if schema.is_alias(k) => Some(k),
            _ => None,
        })
        .collect();
    if touched.is_empty() && reclaimed.is_empty() {
        return Ok(None);
    }
    let mut next = schema.clone();
    next.version += 1;
    for k in reclaimed {
        next.forget_alias(k);
    }
    for e in touched {
        let id = e as AttrId;
        let name = || {
            schema
                .get(id)
                .map(|a| a.ident.to_string())
                .or_else(|| bootstrap::ident_of(e).map(|k| k.to_string()))
                .unwrap_or_else(|| format!("entity {e}"))
        };
        if id < builtin::FIRST_USER_ATTR {
            return Err(TxError::SchemaChange {
                attr: name(),
                reason: "built-in entities (attributes and the idents of their values) cannot \
                         be changed"
                    .into(),
            });
        }
        let mut props: Vec<(AttrId, Value)> = r.entity(e)?;
        for d in datoms.iter().filter(|d| d.e == e) {
            if d.added {
                props.push((d.a, d.v.clone()));
            } else if let Some(i) = props.iter().position(|(a, v)| *a == d.a && *v == d.v) {
                props.remove(i);
            }
        }
        let new = attribute_from_datoms(id, &props).map_err(|err| TxError::SchemaChange {
            attr: name(),
            reason: err.to_string(),
        })?;
        let old = schema.get(id).cloned();
        // A new attribute says its cardinality (Datomic has no default).
        if let (None, Some(new)) = (&old, &new) {
            if !props.iter().any(|(a, _)| *a == builtin::CARDINALITY) {
                return Err(TxError::InvalidInstallAttribute {
                    attr: new.ident.to_string(),
                    property: ":db/cardinality".into(),
                });
            }
        }
        // Whether the attribute has data: one seek into its AVE range (exact, unlike the
        // statistics, which a batch writes only at its end).
        let mut datom_count = 0u64;
        r.scan_attr(
            id,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            |_, _| {
                datom_count += 1;
                Ok(false)
            },
        )?;
        match (&old, new) {
            (None, None) => {}
            // Datomic never uninstalls an attribute (its value type and cardinality cannot be
            // retracted), with or without datoms.
            (Some(old), None) => {
                return Err(TxError::SchemaChange {
                    attr: old.ident.to_string(),
                    reason: if datom_count > 0 {
                        "cannot remove an attribute that has datoms".to_string()
                    } else {
                        "an installed attribute keeps its :db/valueType and :db/cardinality"
                            .to_string()
                    },
                });
            }
            (old, Some(new)) => {
                if let Some(problem) = mismatched_properties(&new) {
                    return Err(TxError::InvalidAttributeProperties {
                        attr: new.ident.to_string(),
                        problem,
                    });
                }
                if let Some(old) = old {
                    if let Some(reason) = never_altered(old, &new) {
                        return Err(TxError::SchemaChange {
                            attr: new.ident.to_string(),
                            reason,
                        });
                    }
                    if old.unique.is_none() && new.unique.is_some() {
                        check_no_duplicates(r, id, &new.ident.to_string())?;
                    }
                    if old.cardinality == Cardinality::Many && new.cardinality == Cardinality::One {
                        check_single_valued(r, id, &new.ident.to_string())?;
                    }
                }
                next.insert(new);
            }
        }
    }
    Ok(Some(next))
}

/// Why an attribute's properties do not go together, as Datomic refuses them at install:
/// a component that is not a ref, a tuple of no kind or of several (only one of
/// `:db/tupleAttrs`, `:db/tupleTypes`, `:db/tupleType`), a tuple kind on a non-tuple.
fn mismatched_properties(a: &Attribute) -> Option<String> {
    use crate::codec::ValueType;
    if a.is_component && a.value_type != ValueType::Ref {
        return Some(format!(
            ":db/isComponent needs :db.type/ref, not {} (components must be refs)",
            a.value_type.ident()
        ));
    }
    let kinds = [
        a.tuple_attrs.is_some(),
        a.tuple_types.is_some(),
        a.tuple_type.is_some(),
    ]
    .into_iter()
    .filter(|k| *k)
    .count();
    match (a.value_type == ValueType::Tuple, kinds) {
        (true, 1) | (false, 0) => None,
        (true, 0) => Some(
            "a :db.type/tuple attribute needs one of :db/tupleAttrs, :db/tupleTypes or \
             :db/tupleType (invalid tuple kind)"
                .into(),
        ),
        (true, _) => Some(
            "a :db.type/tuple attribute takes only one of :db/tupleAttrs, :db/tupleTypes and \
             :db/tupleType (invalid tuple kind)"
                .into(),
        ),
        (false, _) => Some(format!(
            ":db/tupleAttrs, :db/tupleTypes and :db/tupleType belong to :db.type/tuple \
             attributes, not {}",
            a.value_type.ident()
        )),
    }
}

/// Why the change from `old` to `new` is refused when it changes a property Datomic never
/// lets an installed attribute change (its schema documentation: `:db/valueType`,
/// `:db/fulltext`, `:db/tupleAttrs`, `:db/tupleTypes`, `:db/tupleType`), whether or not the
/// attribute has datoms: the indexes, the full-text index and the tuples' values were made for
/// the old property.
fn never_altered(old: &Attribute, new: &Attribute) -> Option<String> {
    let changed = |property: &str, from: String, to: String| {
        Some(format!(
            "{property} of an installed attribute can never be altered (from {from} to {to})"
        ))
    };
    let flag = |on: bool| if on { "true" } else { ":disabled" }.to_string();
    let list = |l: &Option<Vec<String>>| {
        l.as_ref()
            .map_or("nil".to_string(), |l| format!("[{}]", l.join(" ")))
    };
    if old.value_type != new.value_type {
        return changed(
            ":db/valueType",
            old.value_type.ident().to_string(),
            new.value_type.ident().to_string(),
        );
    }
    if old.fulltext.is_some() != new.fulltext.is_some() {
        return changed(
            ":db/fulltext",
            flag(old.fulltext.is_some()),
            flag(new.fulltext.is_some()),
        );
    }
    let attrs = |a: &Attribute| {
        a.tuple_attrs
            .as_ref()
            .map(|l| l.iter().map(|k| k.to_string()).collect::<Vec<_>>())
    };
    if old.tuple_attrs != new.tuple_attrs {
        return changed(":db/tupleAttrs", list(&attrs(old)), list(&attrs(new)));
    }
    let types = |t: &Option<Vec<crate::codec::ValueType>>| {
        t.as_ref()
            .map(|l| l.iter().map(|v| v.ident().to_string()).collect::<Vec<_>>())
    };
    if old.tuple_types != new.tuple_types {
        return changed(
            ":db/tupleTypes",
            list(&types(&old.tuple_types)),
            list(&types(&new.tuple_types)),
        );
    }
    if old.tuple_type != new.tuple_type {
        let one = |t: &Option<crate::codec::ValueType>| {
            t.map_or("nil".to_string(), |v| v.ident().to_string())
        };
        return changed(":db/tupleType", one(&old.tuple_type), one(&new.tuple_type));
    }
    None
}

fn check_no_duplicates(r: &IndexReader<'_>, a: AttrId, name: &str) -> Result<(), TxError> {
    let mut last: Option<&[u8]> = None;
    let mut dup = None;
    r.scan_attr(
        a,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
        |vb, _| {
            if last == Some(vb) {
                dup = Some(vb.to_vec());
                return Ok(false);
            }
            last = Some(vb);
            Ok(true)
        },
    )?;
    match dup {
        None => Ok(()),
        Some(_) => Err(TxError::SchemaChange {
            attr: name.to_string(),
            reason: "cannot make it unique: two entities share a value".into(),
        }),
    }
}

fn check_single_valued(r: &IndexReader<'_>, a: AttrId, name: &str) -> Result<(), TxError> {
    let mut seen: HashMap<u64, ()> = HashMap::new();
    let mut many = false;
    r.scan_attr(
        a,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
        |_, e| {
            if seen.insert(e, ()).is_some() {
                many = true;
                return Ok(false);
            }
            Ok(true)
        },
    )?;
    if many {
        return Err(TxError::SchemaChange {
            attr: name.to_string(),
            reason: "cannot make it cardinality one: an entity has several values".into(),
        });
    }
    Ok(())
}
