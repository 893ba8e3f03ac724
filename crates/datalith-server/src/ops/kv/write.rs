//! `kv-put`, `kv-delete` and `kv-write`: each request one transaction, answered once durable
//! with how many puts and deletes it held.

use datalith::edn::Edn;
use datalith::kv::KvOp;

use super::super::request::short;
use super::super::{Request, Source};
use super::{bytes, table_name};
use crate::error::{Result, ServerError};

/// `{:table T :key K :value V}`.
pub fn put(source: &Source, request: &Request) -> Result<Edn> {
    let name = table_name(request)?;
    let key = bytes::key("key", request.required("key")?)?;
    let value = bytes::of("value", request.required("value")?)?;
    commit(source, &name, vec![(key, value)], Vec::new())
}

/// `{:table T :key K}`: removing an absent key is not an error.
pub fn delete(source: &Source, request: &Request) -> Result<Edn> {
    let name = table_name(request)?;
    let key = bytes::key("key", request.required("key")?)?;
    commit(source, &name, Vec::new(), vec![key])
}

/// `{:table T :put [[K V] ...] :delete [K ...]}`: the puts, then the deletes, in one
/// transaction (`:put` may also be a map of keys to values).
pub fn write(source: &Source, request: &Request) -> Result<Edn> {
    let name = table_name(request)?;
    let pairs = match request.get("put") {
        None => Vec::new(),
        Some(Edn::Map(pairs)) => pairs.clone(),
        Some(Edn::Vector(items) | Edn::List(items)) => items
            .iter()
            .map(|item| match item {
                Edn::Vector(kv) | Edn::List(kv) if kv.len() == 2 => {
                    Ok((kv[0].clone(), kv[1].clone()))
                }
                other => Err(ServerError::invalid(format!(
                    ":put holds [key value] pairs, got {}",
                    short(other)
                ))),
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(ServerError::invalid(format!(
                ":put must be a vector of [key value] pairs, got {}",
                short(other)
            )))
        }
    };
    let puts = pairs
        .iter()
        .map(|(k, v)| Ok((bytes::key("put", k)?, bytes::of("put", v)?)))
        .collect::<Result<Vec<_>>>()?;
    let deletes = request
        .seq("delete")?
        .iter()
        .map(|k| bytes::key("delete", k))
        .collect::<Result<Vec<_>>>()?;
    commit(source, &name, puts, deletes)
}

fn commit(
    source: &Source,
    name: &str,
    puts: Vec<(Vec<u8>, Vec<u8>)>,
    deletes: Vec<Vec<u8>>,
) -> Result<Edn> {
    let (put_count, delete_count) = (puts.len(), deletes.len());
    let table = source.database.kv_table(name)?;
    let mut ops: Vec<KvOp> = puts
        .into_iter()
        .map(|(k, v)| KvOp::put(&table, k, v))
        .collect();
    ops.extend(deletes.into_iter().map(|k| KvOp::delete(&table, k)));
    if !ops.is_empty() {
        source.database.env().transact_kv(ops)?;
    }
    Ok(Edn::Map(vec![
        (Edn::kw(":puts"), Edn::Long(put_count as i64)),
        (Edn::kw(":deletes"), Edn::Long(delete_count as i64)),
    ]))
}
