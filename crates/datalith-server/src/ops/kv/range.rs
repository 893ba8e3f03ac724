//! `kv-range` and `kv-count`: the entries whose keys lie between two bounds, in key order.
//!
//! Bounds: the lower one `:start K` (included) or `:after K` (excluded), the upper one `:end K`
//! (excluded) or `:through K` (included); either open when absent. So every range the
//! library's `View::range` reads (`Bound`s both ways) can be asked for.
//!
//! A page holds `:limit` entries (default 1000, at most 100,000), and stops early past
//! [`PAGE_BYTES`] of keys and values (never before its first entry). When more follow, the
//! answer names the next page's bound, the first key it did not send: `:next-start K` going
//! forward (ask again with `:start K`), `:next-through K` with `:reverse true` (ask again
//! with `:through K`), the other bound unchanged. Each page reads the latest state (these
//! tables have no leased values): a walk sees every key that stays in the range throughout,
//! once, in order; a key written meanwhile is seen if its page has not passed it.

use std::ops::Bound;

use datalith::edn::Edn;
use datalith::kv::Direction;

use super::super::request::short;
use super::super::{Request, Source};
use super::read::result;
use super::{bytes, table_name};
use crate::error::{Result, ServerError};

/// Entries a page holds when the request names no `:limit`.
pub const DEFAULT_LIMIT: u64 = 1000;
/// The most entries a page may hold.
pub const MAX_LIMIT: u64 = 100_000;
/// The bytes of keys and values past which a page ends (values may be large: a page of a
/// thousand 1 MiB values would be a gigabyte of EDN).
pub const PAGE_BYTES: usize = 8 << 20;

pub fn range(source: &Source, request: &Request) -> Result<Edn> {
    let name = table_name(request)?;
    let (lower, upper) = bounds(request)?;
    let reverse = flag(request, "reverse")?;
    let keys_only = flag(request, "keys-only")?;
    let limit = request.count("limit")?.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ServerError::invalid(format!(
            ":limit {limit} is not from 1 to the most a page holds, {MAX_LIMIT}"
        )));
    }
    let Some(table) = source.database.existing_kv_table(&name)? else {
        return Ok(result(Edn::Vector(Vec::new())));
    };
    let direction = match reverse {
        true => Direction::Backward,
        false => Direction::Forward,
    };
    let snapshot = source.database.env().read()?;
    let view = snapshot.view();
    let entries = view.range(&table, slices(&lower), slices(&upper), direction)?;
    let (mut rows, mut held, mut next) = (Vec::new(), 0usize, None);
    for entry in entries {
        let (k, v) = entry?;
        if rows.len() as u64 == limit || (held >= PAGE_BYTES && !rows.is_empty()) {
            next = Some(k.to_vec());
            break;
        }
        held += k.len();
        rows.push(match keys_only {
            true => bytes::edn(k),
            false => {
                held += v.len();
                Edn::Vector(vec![bytes::edn(k), bytes::edn(v)])
            }
        });
    }
    let mut answer = vec![(Edn::kw(":result"), Edn::Vector(rows))];
    if let Some(k) = next {
        let field = match reverse {
            true => ":next-through",
            false => ":next-start",
        };
        answer.push((Edn::kw(field), bytes::edn(&k)));
    }
    Ok(Edn::Map(answer))
}

pub fn count(source: &Source, request: &Request) -> Result<Edn> {
    let name = table_name(request)?;
    let (lower, upper) = bounds(request)?;
    let Some(table) = source.database.existing_kv_table(&name)? else {
        return Ok(result(Edn::Long(0)));
    };
    let snapshot = source.database.env().read()?;
    let view = snapshot.view();
    let n = match (&lower, &upper) {
        // The whole table: LMDB's page statistics, without a walk.
        (Bound::Unbounded, Bound::Unbounded) => view.len(&table)?,
        _ => view.count_range(&table, slices(&lower), slices(&upper))?,
    };
    Ok(result(Edn::Long(n as i64)))
}

type Bounds = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The request's bounds: `:start`/`:after` below, `:end`/`:through` above.
fn bounds(request: &Request) -> Result<Bounds> {
    let one = |included: &str, excluded: &str| -> Result<Bound<Vec<u8>>> {
        match (request.get(included), request.get(excluded)) {
            (Some(_), Some(_)) => Err(ServerError::invalid(format!(
                ":{included} and :{excluded} are the same bound: give one"
            ))),
            (Some(k), None) => Ok(Bound::Included(bytes::bound(included, k)?)),
            (None, Some(k)) => Ok(Bound::Excluded(bytes::bound(excluded, k)?)),
            (None, None) => Ok(Bound::Unbounded),
        }
    };
    Ok((one("start", "after")?, one("through", "end")?))
}

fn slices(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    b.as_ref().map(Vec::as_slice)
}

/// An optional boolean field; absent: false.
fn flag(request: &Request, field: &str) -> Result<bool> {
    match request.get(field) {
        None => Ok(false),
        Some(Edn::Bool(b)) => Ok(*b),
        Some(other) => Err(ServerError::invalid(format!(
            ":{field} must be true or false, got {}",
            short(other)
        ))),
    }
}
