//! `check`'s part for full-text indexes: each `:db/fulltext` attribute's index sound in
//! itself (`search::check`) and holding exactly the attribute's current string values (one
//! document each, of the value's length under the attribute's analysis); an attribute that
//! is not full-text holds no documents.

use std::collections::HashSet;
use std::ops::Bound;

use super::check::Inconsistency;
use crate::codec::Value;
use crate::kv::Direction;
use crate::search::read::SpaceReader;
use crate::search::{check, Analyzer};
use crate::store::reader::IndexReader;
use crate::store::{Schema, StoreError};

fn problem(detail: String) -> Inconsistency {
    Inconsistency::FullText { detail }
}

fn search_err(e: crate::search::SearchError) -> StoreError {
    match e {
        crate::search::SearchError::Kv(k) => k.into(),
        other => StoreError::Corrupt {
            detail: other.to_string(),
        },
    }
}

/// Appends what is wrong with the full-text indexes of `r`'s state.
pub(crate) fn check_fulltext(
    r: &IndexReader<'_>,
    schema: &Schema,
    problems: &mut Vec<Inconsistency>,
) -> Result<(), StoreError> {
    let Some(t) = &r.t.search else {
        return Ok(());
    };
    for attr in schema.attributes() {
        let reader = SpaceReader::new(r.view, t, attr.id).map_err(search_err)?;
        let name = attr.ident.to_string();
        let Some(config) = attr.fulltext else {
            if reader.stats.docs > 0 {
                problems.push(problem(format!(
                    "{name} is not full-text but its index holds {} documents",
                    reader.stats.docs
                )));
            }
            continue;
        };
        let report = check::check_space(&reader, &name).map_err(search_err)?;
        problems.extend(report.problems.into_iter().map(problem));
        // The index's documents against the current values.
        let analyzer = Analyzer::new(config);
        let mut raw: Vec<(Vec<u8>, u64)> = Vec::new();
        r.scan_attr(
            attr.id,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            |vb, e| {
                raw.push((vb.to_vec(), e));
                Ok(true)
            },
        )?;
        let mut owners: HashSet<[u8; 16]> = HashSet::new();
        for (vb, e) in raw {
            let Value::String(text) = r.decode_value(attr.id, &vb)? else {
                continue;
            };
            let o = crate::tx::fulltext::owner(e, &text);
            owners.insert(o);
            let doc = match r
                .view
                .get(&t.owners, &crate::search::tables::key(attr.id, &o))?
            {
                Some(d) => d.try_into().ok().map(u64::from_be_bytes),
                None => {
                    problems.push(problem(format!(
                        "{name}: the value of entity {e} is not in the full-text index"
                    )));
                    continue;
                }
            };
            let entry = doc
                .map(|d| reader.doc(d))
                .transpose()
                .map_err(search_err)?
                .flatten();
            let want = analyzer.tokens(&text).len() as u32;
            match entry {
                Some(d) if d.len == want && d.owner == o => {}
                _ => problems.push(problem(format!(
                    "{name}: the document of entity {e}'s value does not match the value"
                ))),
            }
        }
        if report.docs != owners.len() as u64 {
            problems.push(problem(format!(
                "{name}: the index holds {} documents, the attribute {} string values",
                report.docs,
                owners.len()
            )));
        }
    }
    Ok(())
}

impl crate::db::Db {
    /// The contents and bytes of attribute `a`'s full-text index (`None` in a database made
    /// before full-text indexes existed, opened read-only).
    pub fn fulltext_sizes(
        &self,
        a: crate::store::AttrId,
    ) -> Result<Option<crate::search::read::SpaceSizes>, StoreError> {
        let r = self.reader();
        let Some(t) = &r.t.search else {
            return Ok(None);
        };
        let reader = SpaceReader::new(r.view, t, a).map_err(search_err)?;
        reader.sizes().map(Some).map_err(search_err)
    }
}
