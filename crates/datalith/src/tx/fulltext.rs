//! Stage 5, beside the EAV and AVE writes: the full-text index of each `:db/fulltext`
//! attribute follows its string values in the same commit (`search`). A value is one
//! document, owned by `entity ++ hash(value)`, numbered by the index. An attribute that
//! becomes full-text in a transaction has its current values indexed by it; one that stops
//! being so (or changes its analysis) has its index emptied (and refilled).

use rustc_hash::FxHashMap as HashMap;
use std::ops::Bound;

use super::error::TxError;
use crate::codec::Value;
use crate::kv::{Direction, Stage};
use crate::search::tables::SearchTables;
use crate::search::write::SpaceWriter;
use crate::search::{Analyzer, AnalyzerConfig, SearchError};
use crate::store::reader::IndexReader;
use crate::store::{AttrId, Datom, EntityId, Schema};

/// The owner of a value's document: the entity and the first 8 bytes of the value's hash.
pub fn owner(e: EntityId, text: &str) -> [u8; 16] {
    let mut o = [0u8; 16];
    o[..8].copy_from_slice(&e.to_be_bytes());
    o[8..].copy_from_slice(&blake3::hash(text.as_bytes()).as_bytes()[..8]);
    o
}

impl From<SearchError> for TxError {
    fn from(e: SearchError) -> TxError {
        match e {
            SearchError::Kv(k) => TxError::from(k),
            other => TxError::Search(other),
        }
    }
}

/// Stages the full-text changes of `datoms`, made under `before` and leaving `after`.
pub fn stage_fulltext(
    r: &IndexReader<'_>,
    before: &Schema,
    after: &Schema,
    datoms: &[Datom],
    stage: &mut Stage,
) -> Result<(), TxError> {
    stage_fulltext_reindexing(r, before, after, datoms, &[], stage)
}

/// `stage_fulltext`, with the indexes of `reindex` emptied and refilled from the state before
/// the datoms (the built-ins' upgrade: a state whose `:db/doc` values were never indexed).
pub fn stage_fulltext_reindexing(
    r: &IndexReader<'_>,
    before: &Schema,
    after: &Schema,
    datoms: &[Datom],
    reindex: &[AttrId],
    stage: &mut Stage,
) -> Result<(), TxError> {
    let Some(t) = &r.t.search else {
        return Ok(());
    };
    let config = |s: &Schema, a: AttrId| s.get(a).and_then(|x| x.fulltext);
    // Attributes whose analysis this transaction changes (on, off, or another analyzer).
    let mut changed: Vec<AttrId> = reindex.to_vec();
    if before.version != after.version {
        for attr in after.user_attributes() {
            if config(before, attr.id) != attr.fulltext {
                changed.push(attr.id);
            }
        }
        for attr in before.user_attributes() {
            if attr.fulltext.is_some() && after.get(attr.id).is_none() {
                changed.push(attr.id);
            }
        }
    }
    let mut touched: Vec<AttrId> = datoms
        .iter()
        .filter(|d| config(after, d.a).is_some() && matches!(d.v, Value::String(_)))
        .map(|d| d.a)
        .chain(changed.iter().copied())
        .collect();
    touched.sort_unstable();
    touched.dedup();
    let mut analyzers: HashMap<AttrId, Analyzer> = HashMap::default();
    for a in touched {
        let name = after
            .get(a)
            .or_else(|| before.get(a))
            .map(|x| x.ident.to_string())
            .unwrap_or_else(|| format!("attribute {a}"));
        let mut w = SpaceWriter::new(r.view, t, a, name)?;
        let now = config(after, a);
        if changed.contains(&a) {
            empty_index(r, t, a, &mut w)?;
            if let Some(c) = now {
                let analyzer = analyzers.entry(a).or_insert_with(|| Analyzer::new(c));
                index_current(r, a, &mut w, analyzer)?;
            }
        }
        if let Some(c) = now {
            let analyzer = analyzers.entry(a).or_insert_with(|| Analyzer::new(c));
            for d in datoms.iter().filter(|d| d.a == a) {
                let Value::String(text) = &d.v else { continue };
                let o = owner(d.e, text);
                if let Some(doc) = w.doc_of_owner(&o)? {
                    w.remove(doc)?;
                }
                if d.added {
                    let doc = w.next_doc();
                    w.add(doc, text, &o, analyzer)?;
                }
            }
        }
        w.finish(stage)?;
    }
    Ok(())
}

/// Removes every document of index `a`.
fn empty_index(
    r: &IndexReader<'_>,
    t: &SearchTables,
    a: AttrId,
    w: &mut SpaceWriter<'_>,
) -> Result<(), TxError> {
    let mut docs = Vec::new();
    for e in r
        .view
        .prefix(&t.docs, &a.to_be_bytes(), Direction::Forward)?
    {
        let (k, _) = e?;
        if let Some(d) = k.get(4..12).and_then(|b| b.try_into().ok()) {
            docs.push(u64::from_be_bytes(d));
        }
    }
    for d in docs {
        w.remove(d)?;
    }
    Ok(())
}

/// Indexes every current string value of `a`.
fn index_current(
    r: &IndexReader<'_>,
    a: AttrId,
    w: &mut SpaceWriter<'_>,
    analyzer: &Analyzer,
) -> Result<(), TxError> {
    let mut values: Vec<(EntityId, String)> = Vec::new();
    let mut raw: Vec<(Vec<u8>, EntityId)> = Vec::new();
    r.scan_attr(
        a,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
        |vb, e| {
            raw.push((vb.to_vec(), e));
            Ok(true)
        },
    )?;
    for (vb, e) in raw {
        if let Value::String(s) = r.decode_value(a, &vb)? {
            values.push((e, s.to_string()));
        }
    }
    for (e, text) in values {
        let doc = w.next_doc();
        w.add(doc, &text, &owner(e, &text), analyzer)?;
    }
    Ok(())
}

/// Indexes the full-text values of a bulk load, `(entity, attribute, analysis, text)`; a
/// value the index already holds is left as it is.
pub fn index_loaded(
    r: &IndexReader<'_>,
    texts: &[(EntityId, AttrId, AnalyzerConfig, std::sync::Arc<str>)],
    stage: &mut Stage,
) -> Result<(), TxError> {
    let Some(t) = &r.t.search else {
        return Ok(());
    };
    let mut attrs: Vec<(AttrId, AnalyzerConfig)> = texts.iter().map(|x| (x.1, x.2)).collect();
    attrs.sort_unstable_by_key(|x| x.0);
    attrs.dedup_by_key(|x| x.0);
    for (a, config) in attrs {
        let analyzer = Analyzer::new(config);
        let mut w = SpaceWriter::new(r.view, t, a, format!("attribute {a}"))?;
        for (e, _, _, text) in texts.iter().filter(|x| x.1 == a) {
            let o = owner(*e, text);
            if w.doc_of_owner(&o)?.is_none() {
                let doc = w.next_doc();
                w.add(doc, text, &o, &analyzer)?;
            }
        }
        w.finish(stage)?;
    }
    Ok(())
}
