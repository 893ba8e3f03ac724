//! `tx-range`: `{:start TX :end TX :limit N}`, Datomic's `tx-range`: the transaction log,
//! each transaction `start <= tx < end` (either end open when absent) with its instant and
//! datoms, oldest first: `{:result [{:tx T, :instant #inst "...", :data [[e :attr v tx
//! added] ...]} ...], :next-start T}`, `:next-start` there when more follow (ask again with
//! `:start` set to it). The log is read from one snapshot, an entry at a time, and the walk
//! stops after the page. The answer names no basis: the log only grows, so a range that
//! ends at or below a basis always reads the same.

use datalith::codec::Value;
use datalith::edn::{edn_from_value, Edn};
use datalith::error as lib;
use datalith::tx::log::TxLogEntry;
use datalith::{Database, Db};

use super::datoms::datom_edn;
use super::Request;
use crate::error::{Result, ServerError};

pub const FIELDS: &[&str] = &["start", "end", "limit"];

/// Transactions a page holds when the request names no `:limit`.
pub const DEFAULT_LIMIT: u64 = 100;
/// The most transactions a page may hold (each may hold many datoms).
pub const MAX_LIMIT: u64 = 10_000;

pub fn run(database: &Database, request: &Request) -> Result<Edn> {
    if !database.keeps_tx_log() {
        return Err(ServerError::new(
            lib::INVALID_ARGUMENT,
            "this database keeps no transaction log (made before the log existed)",
        ));
    }
    let limit = request.count("limit")?.unwrap_or(DEFAULT_LIMIT);
    if limit > MAX_LIMIT {
        return Err(ServerError::invalid(format!(
            ":limit {limit} is over the most a page holds, {MAX_LIMIT}"
        )));
    }
    let entries = database.tx_range(request.count("start")?, request.count("end")?)?;
    // Taken after the log's snapshot, so every attribute its entries name is in its schema
    // (attributes are never removed).
    let db = database.db()?;
    let mut result = Vec::new();
    let mut next = None;
    for entry in entries {
        let entry = entry?;
        if result.len() as u64 == limit {
            next = Some(entry.tx);
            break;
        }
        result.push(entry_edn(&db, &entry));
    }
    let mut out = vec![(Edn::kw(":result"), Edn::Vector(result))];
    if let Some(tx) = next {
        out.push((Edn::kw(":next-start"), Edn::Long(tx as i64)));
    }
    Ok(Edn::Map(out))
}

fn entry_edn(db: &Db, entry: &TxLogEntry) -> Edn {
    let data = entry
        .datoms
        .iter()
        .map(|d| datom_edn(db.schema(), d, true))
        .collect();
    let instant = entry
        .instant
        .map_or(Edn::Nil, |ms| edn_from_value(&Value::Instant(ms)));
    Edn::Map(vec![
        (Edn::kw(":tx"), Edn::Long(entry.tx as i64)),
        (Edn::kw(":instant"), instant),
        (Edn::kw(":data"), Edn::Vector(data)),
    ])
}
