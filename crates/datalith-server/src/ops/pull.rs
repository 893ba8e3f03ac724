//! `pull`: `{:selector PATTERN :eid E :basis-t T}`, and `pull-many`: `{:selector PATTERN
//! :eids [E...]}`. PATTERN is EDN text or data; E an entity id, an ident or a lookup ref. An
//! entity that names none pulls as nil (Datomic's answer).

use datalith::edn::Edn;
use datalith::Eid;

use super::{answer, basis, Request, Source};
use crate::error::Result;

pub const FIELDS: &[&str] = &[
    "selector", "eid", "basis-t", "lease-ms", "as-of", "since", "history",
];
pub const MANY_FIELDS: &[&str] = &[
    "selector", "eids", "basis-t", "lease-ms", "as-of", "since", "history",
];

pub fn one(source: &Source, request: &Request) -> Result<Edn> {
    let selector = request.text("selector")?;
    let eid = Eid::from_edn(request.required("eid")?)?;
    let (db, basis) = basis::snapshot(source, request)?;
    Ok(answer(db.pull(&selector, eid)?, basis))
}

pub fn many(source: &Source, request: &Request) -> Result<Edn> {
    let selector = request.text("selector")?;
    request.required("eids")?;
    let eids = request
        .seq("eids")?
        .iter()
        .map(Eid::from_edn)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let (db, basis) = basis::snapshot(source, request)?;
    let pulled = db.pull_many(&selector, &eids)?;
    Ok(answer(Edn::Vector(pulled), basis))
}
