//! The key-value tables of a database, beside its Datalog store: a program's tables of bytes
//! to bytes, named as every face of the database names them (`datalith::api::kv_tables`: the
//! table `sessions` is the catalog's `py/sessions`), so a table the Python package writes in
//! process is read here, and the other way round.
//!
//! | op | body | answer |
//! |---|---|---|
//! | `kv-tables` (GET) | | `{:result ["sessions" ...]}` |
//! | `kv-get` | `{:table T :key K}` | `{:result V}` (nil when absent) |
//! | `kv-put` | `{:table T :key K :value V}` | `{:puts 1, :deletes 0}` |
//! | `kv-delete` | `{:table T :key K}` | `{:puts 0, :deletes 1}` (an absent key is no error) |
//! | `kv-write` | `{:table T :put [[K V] ...] :delete [K ...]}` | `{:puts N, :deletes M}`: one transaction |
//! | `kv-range` | `{:table T :start K :end K :reverse B :limit N :keys-only B}` | `{:result [[K V] ...]}` and the next page's bound |
//! | `kv-count` | `{:table T :start K :end K}` | `{:result N}` |
//!
//! Keys and values are bytes ([`bytes`]). Reads read the latest state: the key-value tables
//! are not part of a Datalog value, so they take no `:basis-t`. A read of a table never
//! written answers as an empty table and creates nothing (a reader may not write); a write
//! creates its table. Every write is one durable transaction, acknowledged once durable.

mod bytes;
mod range;
mod read;
mod write;

pub use range::{count, range};
pub use read::{get, tables};
pub use write::{delete, put, write};

use super::Request;
use crate::error::{Result, ServerError};

/// The fields of each operation.
pub const GET_FIELDS: &[&str] = &["table", "key"];
pub const PUT_FIELDS: &[&str] = &["table", "key", "value"];
pub const DELETE_FIELDS: &[&str] = &["table", "key"];
pub const WRITE_FIELDS: &[&str] = &["table", "put", "delete"];
pub const RANGE_FIELDS: &[&str] = &[
    "table",
    "start",
    "after",
    "end",
    "through",
    "reverse",
    "limit",
    "keys-only",
];
pub const COUNT_FIELDS: &[&str] = &["table", "start", "after", "end", "through"];

/// The program's table the request names (`:table "sessions"`).
fn table_name(request: &Request) -> Result<String> {
    match request.required("table")? {
        datalith::Edn::String(name) if !name.is_empty() => Ok(name.clone()),
        other => Err(ServerError::invalid(format!(
            ":table must be a table's name, a non-empty string, got {}",
            super::request::short(other)
        ))),
    }
}
