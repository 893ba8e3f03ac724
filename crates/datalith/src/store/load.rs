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
    Ok(schema)
}
