//! `index-range`: `{:attrid :attr :start V :end V :limit N :offset N :basis-t T}`, Datomic's
//! `index-range`: the AVET datoms of one attribute whose values lie in `[start, end)` (either
//! end open when absent), in value order, a page at a time as `datoms` answers. The walk
//! stops after the page.

use std::ops::Bound;

use datalith::edn::Edn;
use datalith::kv::Direction;
use datalith::Datom;

use super::datoms::{attribute, page, page_size, value, wanted};
use super::{basis, Request, Source};
use crate::error::Result;

pub const FIELDS: &[&str] = &[
    "attrid", "start", "end", "limit", "offset", "basis-t", "lease-ms", "as-of", "since", "history",
];

pub fn run(source: &Source, request: &Request) -> Result<Edn> {
    let (limit, offset) = page_size(request)?;
    let (db, basis) = basis::snapshot(source, request)?;
    let a = attribute(&db, request.required("attrid")?)?;
    let start = request
        .get("start")
        .map(|v| value(&db, Some(a), v))
        .transpose()?;
    let end = request
        .get("end")
        .map(|v| value(&db, Some(a), v))
        .transpose()?;
    let want = wanted(offset, limit);
    let r = db.reader();
    let mut found = Vec::new();
    r.scan_attr(
        a,
        start.as_ref().map_or(Bound::Unbounded, Bound::Included),
        end.as_ref().map_or(Bound::Unbounded, Bound::Excluded),
        Direction::Forward,
        |vb, e| {
            found.push(Datom {
                e,
                a,
                v: r.decode_value(a, vb)?,
                tx: 0,
                added: true,
            });
            Ok(found.len() < want)
        },
    )?;
    Ok(page(&db, &found, offset, limit, basis))
}
