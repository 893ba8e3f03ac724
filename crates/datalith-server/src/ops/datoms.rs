//! `datoms`: `{:index :eavt :components [...] :limit N :offset N :basis-t T}`, Datomic's
//! `datoms`: the datoms of an index whose leading components equal the given ones, in index
//! order, a page at a time. Indexes: `:eavt` (components e a v), `:aevt` (a e v), `:avet`
//! (a v e). E is an entity id, ident or lookup ref, A an attribute's ident, V a value (an
//! entity reference for a ref attribute). Each datom is `[e :attribute v]`: the indexes keep
//! no transaction (there is no history yet).
//!
//! The answer is `{:result [...] :basis-t T}`, plus `:next-offset N` when more datoms
//! follow: ask again with `:offset N` and the same `:basis-t` (which fails if the database
//! has moved on, since the server keeps no older value yet). A walk of a whole index or
//! attribute stops after the page, so a page never costs more memory than its datoms.

use std::ops::Bound;

use datalith::codec::Value;
use datalith::edn::{edn_from_value, value_from_edn, Edn};
use datalith::error as lib;
use datalith::kv::Direction;
use datalith::raw::{Components, Index};
use datalith::store::Schema;
use datalith::{Datom, Db, Eid};

use super::request::short;
use super::{answer, basis, Request, Source};
use crate::error::{Result, ServerError};

pub const FIELDS: &[&str] = &[
    "index",
    "components",
    "limit",
    "offset",
    "basis-t",
    "lease-ms",
    "as-of",
    "since",
    "history",
];

/// Datoms a page holds when the request names no `:limit`.
pub const DEFAULT_LIMIT: u64 = 1000;
/// The most datoms a page may hold.
pub const MAX_LIMIT: u64 = 100_000;

pub fn run(source: &Source, request: &Request) -> Result<Edn> {
    let index = index(request.required("index")?)?;
    let given = request.seq("components")?;
    if given.len() > 3 {
        return Err(ServerError::invalid(format!(
            ":components has at most 3 (got {})",
            given.len()
        )));
    }
    let (limit, offset) = page_size(request)?;
    let (db, basis) = basis::snapshot(source, request)?;
    // An entity the components name that does not exist has no datoms (as in Datomic).
    let found = match components(&db, index, &given)? {
        Some(c) => walk(&db, index, &c, wanted(offset, limit))?,
        None => Vec::new(),
    };
    Ok(page(&db, &found, offset, limit, basis))
}

/// The request's `:limit` (checked against the most a page holds) and `:offset`.
pub(super) fn page_size(request: &Request) -> Result<(u64, u64)> {
    let limit = request.count("limit")?.unwrap_or(DEFAULT_LIMIT);
    if limit > MAX_LIMIT {
        return Err(ServerError::invalid(format!(
            ":limit {limit} is over the most a page holds, {MAX_LIMIT}"
        )));
    }
    Ok((limit, request.count("offset")?.unwrap_or(0)))
}

/// How many datoms a walk gathers for a page: up to its end, and one more, which says
/// whether another page follows.
pub(super) fn wanted(offset: u64, limit: u64) -> usize {
    usize::try_from(offset.saturating_add(limit).saturating_add(1)).unwrap_or(usize::MAX)
}

/// The page `offset..offset + limit` of `found` as the answer, with `:next-offset` when
/// `found` goes past it.
pub(super) fn page(db: &Db, found: &[Datom], offset: u64, limit: u64, basis: u64) -> Edn {
    let datoms: Vec<Edn> = found
        .iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|d| datom_edn(db.schema(), d, false))
        .collect();
    let mut out = answer(Edn::Vector(datoms), basis);
    if found.len() as u64 > offset.saturating_add(limit) {
        if let Edn::Map(pairs) = &mut out {
            pairs.push((Edn::kw(":next-offset"), Edn::Long((offset + limit) as i64)));
        }
    }
    out
}

fn index(form: &Edn) -> Result<Index> {
    let name = match form {
        Edn::Keyword(k) => k.to_string(),
        Edn::String(s) => s.clone(),
        other => short(other),
    };
    Index::parse(&name).ok_or_else(|| {
        ServerError::invalid(format!(
            ":index {name} is not an index (:eavt, :aevt, :avet or :vaet)"
        ))
    })
}

/// The components in the index's order, read as Datomic's `datoms` reads them
/// (`Components::from_edn`); `None` when an entity they name does not exist.
fn components(db: &Db, index: Index, given: &[Edn]) -> Result<Option<Components>> {
    Ok(Components::from_edn(db, index, given)?)
}

pub(super) fn attribute(db: &Db, form: &Edn) -> Result<u32> {
    let unknown = || {
        ServerError::new(
            lib::NOT_AN_ENTITY,
            format!("{} is not an attribute of this database", short(form)),
        )
        .with("entity", form.clone())
    };
    let Edn::Keyword(k) = form else {
        return Err(unknown());
    };
    db.attr(k).map(|a| a.id).ok_or_else(unknown)
}

fn entity(db: &Db, form: &Edn) -> Result<u64> {
    let eid = Eid::from_edn(form)?;
    db.entid(eid)?.ok_or_else(|| {
        ServerError::new(
            lib::NOT_AN_ENTITY,
            format!("{} names no entity", short(form)),
        )
        .with("entity", form.clone())
    })
}

/// A value component: an entity reference for a ref attribute, else the value itself.
pub(super) fn value(db: &Db, a: Option<u32>, form: &Edn) -> Result<Value> {
    let is_ref = a
        .and_then(|a| db.schema().get(a))
        .is_some_and(|attr| attr.is_ref());
    if is_ref && matches!(form, Edn::Keyword(_) | Edn::Vector(_)) {
        return Ok(Value::Ref(entity(db, form)?));
    }
    value_from_edn(form)
        .ok_or_else(|| ServerError::invalid(format!("{} is not a value", short(form))))
}

/// At most `want` datoms of the walk, stopping early where the walk is over a whole index or
/// attribute (the library's `datoms` gathers everything first).
fn walk(db: &Db, index: Index, c: &Components, want: usize) -> Result<Vec<Datom>> {
    let datom = |e, a, v| Datom {
        e,
        a,
        v,
        tx: 0,
        added: true,
    };
    let r = db.reader();
    let mut out = Vec::new();
    match (index, c.e, c.a, &c.v) {
        (Index::Eav, None, _, _) => {
            r.scan_entities(0, u64::MAX, |e, a, vb| {
                out.push(datom(e, a, r.decode_value(a, vb)?));
                Ok(out.len() < want)
            })?;
        }
        (Index::Ave, _, Some(a), None) => {
            r.scan_attr(
                a,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
                |vb, e| {
                    if c.e.is_none_or(|x| x == e) {
                        out.push(datom(e, a, r.decode_value(a, vb)?));
                    }
                    Ok(out.len() < want)
                },
            )?;
        }
        // `[a e ...]` of AEVT is the entity's values of the attribute: EAVT answers it
        // without sorting the whole attribute.
        (Index::Aev, Some(_), Some(_), _) => {
            out = db.datoms(Index::Eav, c)?;
        }
        _ => out = db.datoms(index, c)?,
    }
    out.truncate(want);
    Ok(out)
}

/// A datom's attribute as the answers name it: its ident (its id when the schema has none).
pub fn attr_edn(schema: &Schema, a: u32) -> Edn {
    schema
        .get(a)
        .map_or_else(|| Edn::Long(a as i64), |x| Edn::Keyword(x.ident.clone()))
}

/// A datom as `[e :attribute v]`, or `[e :attribute v tx added]` with `with_tx`.
pub fn datom_edn(schema: &Schema, d: &Datom, with_tx: bool) -> Edn {
    let mut items = vec![
        Edn::Long(d.e as i64),
        attr_edn(schema, d.a),
        edn_from_value(&d.v),
    ];
    if with_tx {
        items.push(Edn::Long(d.tx as i64));
        items.push(Edn::Bool(d.added));
    }
    Edn::Vector(items)
}
