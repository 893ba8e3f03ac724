//! Loading the schema out of the indexes.

use super::bootstrap;
use super::error::StoreError;
use super::ids::{AttrId, ATTR_PARTITION_END, TX_PARTITION_START};
use super::reader::IndexReader;
use super::schema::{attribute_from_datoms, builtin, Schema};
use super::tables::{meta_key, read_counter};
use crate::codec::Value;

/// The schema version recorded in this state.
pub fn schema_version(r: &IndexReader<'_>) -> Result<u64, StoreError> {
    Ok(read_counter(
        r.view,
        &r.t.meta,
        meta_key::SCHEMA_VERSION,
        0,
    )?)
}

/// The format of the built-in entities this state holds (`bootstrap`; 0: legacy, none stored).
pub fn builtins_format(r: &IndexReader<'_>) -> Result<u64, StoreError> {
    Ok(read_counter(r.view, &r.t.meta, bootstrap::FORMAT_KEY, 0)?)
}

/// Whether this state's built-in datoms were written at its genesis, around the transaction
/// log (`bootstrap::TX_KEY`): a replay of the log then starts from them.
pub fn builtins_at_genesis(r: &IndexReader<'_>) -> Result<bool, StoreError> {
    let tx = read_counter(r.view, &r.t.meta, bootstrap::TX_KEY, TX_PARTITION_START)?;
    Ok(tx < TX_PARTITION_START)
}

/// Builds the schema from the attribute entities of this state: the built-in attributes of its
/// format (`bootstrap`), then every user attribute, whose properties may be refs to ident
/// entities or, in a legacy state, their keywords.
pub fn load_schema(r: &IndexReader<'_>) -> Result<Schema, StoreError> {
    let mut schema = match builtins_format(r)? {
        0 => Schema::legacy(),
        _ => Schema::default(),
    };
    schema.version = schema_version(r)?;
    let mut current: Option<(u64, Vec<(AttrId, Value)>)> = None;
    let flush =
        |cur: Option<(u64, Vec<(AttrId, Value)>)>, schema: &mut Schema| -> Result<(), StoreError> {
            if let Some((e, props)) = cur {
                if let Some(attr) = attribute_from_datoms(e as AttrId, &props)? {
                    schema.insert(attr);
                }
            }
            Ok(())
        };
    let mut pending = Vec::new();
    r.scan_entities(
        builtin::FIRST_USER_ATTR as u64,
        ATTR_PARTITION_END,
        |e, a, vb| {
            pending.push((e, a, vb));
            Ok(true)
        },
    )?;
    for (e, a, vb) in pending {
        let v = r.decode_value(a, vb)?;
        match &mut current {
            Some((ce, props)) if *ce == e => props.push((a, v)),
            _ => {
                flush(current.take(), &mut schema)?;
                current = Some((e, vec![(a, v)]));
            }
        }
    }
    flush(current.take(), &mut schema)?;
    for (ident, e) in retired_idents(r)? {
        if schema.get(e as AttrId).is_some() && e < ATTR_PARTITION_END {
            schema.alias(ident, e as AttrId);
        }
    }
    Ok(schema)
}

/// Idents that entities had and lost and that no entity holds now, each with the entity that
/// lost it last: a renamed attribute's or enum's old name, which Datomic still resolves. Read
/// from the history of `:db/ident` (the entities that lost one: `history_attr`), so a
/// database without the history index has none.
pub fn retired_idents(
    r: &IndexReader<'_>,
) -> Result<Vec<(crate::codec::Keyword, u64)>, StoreError> {
    if !r.has_history() {
        return Ok(Vec::new());
    }
    let mut last: std::collections::HashMap<crate::codec::Keyword, (u64, u64)> =
        std::collections::HashMap::new();
    for e in r.entities_that_lost(builtin::IDENT)? {
        for ev in r.history_events(e, Some(builtin::IDENT))? {
            if ev.added {
                continue;
            }
            let Value::Keyword(k) = super::reader::decode_exact(ev.value)? else {
                continue;
            };
            let newer = last.get(&k).is_none_or(|(_, tx)| ev.tx > *tx);
            if newer {
                last.insert(k, (e, ev.tx));
            }
        }
    }
    let mut out = Vec::new();
    for (k, (e, _)) in last {
        if r.first_entity_with(builtin::IDENT, &Value::Keyword(k.clone()))?
            .is_none()
        {
            out.push((k, e));
        }
    }
    out.sort();
    Ok(out)
}

/// The entity the ident `k` names: the one that holds it now, else the one that lost it last
/// (an old name, which Datomic still resolves: see [`retired_idents`]).
pub fn entity_of_ident(
    r: &IndexReader<'_>,
    k: &crate::codec::Keyword,
) -> Result<Option<u64>, StoreError> {
    if let Some(e) = r.first_entity_with(builtin::IDENT, &Value::Keyword(k.clone()))? {
        return Ok(Some(e));
    }
    // Only a name nothing holds comes here (mostly an error about to be reported).
    Ok(retired_idents(r)?
        .into_iter()
        .find(|(old, _)| old == k)
        .map(|(_, e)| e))
}
