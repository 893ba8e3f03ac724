//! Bulk load (`init_db` / `fill_db`): datoms with known entity ids written straight into the
//! indexes, skipping the transaction pipeline (no tempids, upserts, cardinality or uniqueness
//! checks: the caller vouches for the data). Encoding and sorting happen on the caller's
//! thread; the committer only copies sorted entries into LMDB.

use std::collections::HashMap;

use super::batch::StoreBatch;
use super::error::TxError;
use crate::codec::{self, Value};
use crate::kv::handle::Completion;
use crate::kv::{BatchState, Outcome, Rejected, Stage, View, WriteRequest};
use crate::limits::MAX_KEY_BYTES;
use crate::store::ids::{EntityId, TX_PARTITION_START, USER_PARTITION_START};
use crate::store::keys::{self, ATTR_BYTES};
use crate::store::reader::{giant_key, IndexReader};
use crate::store::schema::Schema;
use crate::store::{AttrId, Tables};

/// Encoded, sorted index entries of one chunk of a bulk load.
pub struct Prepared {
    /// `(entity key, attr ++ value)`, sorted.
    eav: Vec<([u8; 8], Vec<u8>)>,
    /// `(attr ++ value, entity key)`, sorted.
    ave: Vec<(Vec<u8>, [u8; 8])>,
    /// `giants` records (attr ++ hash, full encoding) of values too long to index inline.
    giants: Vec<([u8; 20], Vec<u8>)>,
    /// Highest entity id seen.
    max_e: EntityId,
}

/// Encodes and sorts datoms `(entity, attribute, value)`; checks attributes, types and ids.
pub fn prepare(schema: &Schema, datoms: &[(EntityId, AttrId, Value)]) -> Result<Prepared, TxError> {
    let mut eav = Vec::with_capacity(datoms.len());
    let mut giants = Vec::new();
    let mut max_e = 0;
    for (e, a, v) in datoms {
        if !(USER_PARTITION_START..TX_PARTITION_START).contains(e) {
            return Err(TxError::Malformed {
                detail: format!("bulk-load entity ids must lie in [{USER_PARTITION_START}, {TX_PARTITION_START})"),
                form: format!("[{e} {a} {v:?}]"),
            });
        }
        let attr = schema.get(*a).ok_or_else(|| TxError::UnknownAttribute {
            attr: format!("#{a}"),
            form: format!("[{e} {a} {v:?}]"),
        })?;
        if v.value_type() != attr.value_type {
            return Err(TxError::WrongType {
                attr: attr.ident.to_string(),
                expected: attr.value_type.ident().to_string(),
                got: format!("{v:?}"),
                form: format!("[{e} {} {v:?}]", attr.ident),
            });
        }
        let mut av = Vec::with_capacity(ATTR_BYTES + 16);
        keys::attr_prefix(*a, &mut av);
        codec::encode(v, &mut av);
        if let Some(g) = codec::index_key::shrink_to_index_key(&mut av, ATTR_BYTES) {
            giants.push((giant_key(*a, &g.hash), g.full));
        }
        debug_assert!(av.len() <= MAX_KEY_BYTES);
        max_e = max_e.max(*e);
        eav.push((keys::eav_key(*e), av));
    }
    eav.sort_unstable();
    eav.dedup();
    let mut ave: Vec<(Vec<u8>, [u8; 8])> = eav.iter().map(|(e, av)| (av.clone(), *e)).collect();
    ave.sort_unstable();
    giants.sort_unstable();
    giants.dedup();
    Ok(Prepared {
        eav,
        ave,
        giants,
        max_e,
    })
}

/// One chunk of a bulk load, as a committer request.
pub struct FillRequest {
    pub(crate) tables: Tables,
    pub(crate) chunk: Prepared,
    pub(crate) result: Option<Result<u64, TxError>>,
    pub(crate) completion: Option<Completion<u64, TxError>>,
}

impl FillRequest {
    fn attempt(
        &mut self,
        view: View<'_>,
        stage: &mut Stage,
        batch: &mut BatchState,
    ) -> Result<u64, TxError> {
        let t = &self.tables;
        let r = IndexReader::new(view, t);
        // Attributes with no datom yet (in the database or earlier in this batch) cannot
        // already hold a value; entities with no datom cannot already hold a datom.
        let pending: HashMap<AttrId, i64> = batch
            .get::<StoreBatch>()
            .map(|s| s.stats.iter().map(|(a, (d, _))| (*a, *d)).collect())
            .unwrap_or_default();
        let mut attr_has_data: HashMap<AttrId, bool> = HashMap::new();
        let mut stats: HashMap<AttrId, (i64, i64)> = HashMap::new();
        let mut written = 0u64;
        for (k, full) in &self.chunk.giants {
            match view.get(&t.giants, k)? {
                Some(existing) if existing == full.as_slice() => {}
                Some(_) => {
                    return Err(TxError::Malformed {
                        detail: "two different long values share a 128-bit hash; refusing to store the second".into(),
                        form: "bulk load".into(),
                    })
                }
                None => stage.put(&t.giants, k, full),
            }
        }
        for (e, av) in &self.chunk.eav {
            stage.list_add(&t.eav, e, av);
            written += 1;
        }
        let mut prev: Option<&[u8]> = None;
        for (av, e) in &self.chunk.ave {
            stage.list_add(&t.ave, av, e);
            let (a, _) = keys::split_attr(av).expect("encoded here");
            let s = stats.entry(a).or_default();
            s.0 += 1;
            if prev != Some(av.as_slice()) {
                // A new value for the attribute, unless the database already has it.
                let has_data = match attr_has_data.get(&a) {
                    Some(h) => *h,
                    None => {
                        let h = r.stats(a)?.datoms > 0 || pending.get(&a).is_some_and(|d| *d != 0);
                        attr_has_data.insert(a, h);
                        h
                    }
                };
                if !has_data || view.get(&t.ave, av)?.is_none() {
                    s.1 += 1;
                }
                prev = Some(av);
            }
        }
        // Datoms already present are not counted twice.
        let mut last_e: Option<&[u8; 8]> = None;
        let mut e_exists = false;
        for (e, av) in &self.chunk.eav {
            if last_e != Some(e) {
                e_exists = view.get(&t.eav, e)?.is_some();
                last_e = Some(e);
            }
            if e_exists && view.list_contains(&t.eav, e, av)? {
                let (a, _) = keys::split_attr(av).expect("encoded here");
                stats.entry(a).or_default().0 -= 1;
            }
        }
        let slot = batch.slot(|| StoreBatch::new(t.clone()));
        let counters = match slot.counters {
            Some(c) => c,
            None => super::run::read_counters(&r)?,
        };
        slot.counters = Some((counters.0.max(self.chunk.max_e + 1), counters.1, counters.2));
        for (a, (d, n)) in stats {
            let x = slot.stats.entry(a).or_default();
            x.0 += d;
            x.1 += n;
        }
        Ok(written)
    }
}

impl WriteRequest for FillRequest {
    fn size_hint(&self) -> usize {
        self.chunk.eav.len() * 64
    }

    fn prepare(
        &mut self,
        view: View<'_>,
        stage: &mut Stage,
        batch: &mut BatchState,
    ) -> Result<(), Rejected> {
        let r = self.attempt(view, stage, batch);
        let ok = r.is_ok();
        self.result = Some(r);
        if ok {
            Ok(())
        } else {
            Err(Rejected)
        }
    }

    fn finish(mut self: Box<Self>, outcome: Outcome) {
        let result = match outcome {
            Outcome::Committed | Outcome::Rejected => self
                .result
                .take()
                .unwrap_or_else(|| Err(crate::kv::KvError::Closed.into())),
            Outcome::Failed(e) => Err(e.into()),
        };
        if let Some(c) = self.completion.take() {
            c.complete(result);
        }
    }
}
