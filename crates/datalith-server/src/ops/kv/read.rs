//! `kv-get` and `kv-tables`.

use datalith::edn::Edn;

use super::super::{Request, Source};
use super::{bytes, table_name};
use crate::error::Result;

/// `{:table T :key K}`: `{:result V}`, nil when the key (or the table) is absent.
pub fn get(source: &Source, request: &Request) -> Result<Edn> {
    let name = table_name(request)?;
    let key = bytes::key("key", request.required("key")?)?;
    let Some(table) = source.database.existing_kv_table(&name)? else {
        return Ok(result(Edn::Nil));
    };
    let snapshot = source.database.env().read()?;
    let found = snapshot.view().get(&table, &key)?.map(bytes::edn);
    Ok(result(found.unwrap_or(Edn::Nil)))
}

/// `{:result ["sessions" ...]}`: the database's key-value tables.
pub fn tables(source: &Source) -> Result<Edn> {
    let names = source.database.kv_table_names()?;
    Ok(result(Edn::Vector(
        names.into_iter().map(Edn::String).collect(),
    )))
}

pub(super) fn result(value: Edn) -> Edn {
    Edn::Map(vec![(Edn::kw(":result"), value)])
}
