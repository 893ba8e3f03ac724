//! The committer request of a bulk load.

use std::collections::HashMap;
use std::ops::{Bound, Range};
use std::sync::Arc;

use super::prepare::Prepared;
use crate::kv::handle::Completion;
use crate::kv::{BatchState, Direction, Outcome, Stage, Table, View, WriteRequest};
use crate::store::keys;
use crate::store::reader::IndexReader;
use crate::store::{AttrId, EntityId, Tables};
use crate::tx::batch::StoreBatch;
use crate::tx::TxError;

/// One chunk of a prepared bulk load, as a committer request: entries `range` of both sorted
/// runs (chunks follow each other, so every chunk's keys come after the previous one's), and
/// the giant records with the first chunk.
pub struct FillRequest {
    pub(crate) tables: Tables,
    pub(crate) load: Arc<Prepared>,
    pub(crate) range: Range<usize>,
    pub(crate) result: Option<Result<u64, TxError>>,
    pub(crate) completion: Option<Completion<u64, TxError>>,
}

impl FillRequest {
    /// The requests writing `load`, `chunk` datoms each (the last may be shorter).
    pub fn chunks(
        tables: &Tables,
        load: Prepared,
        chunk: usize,
    ) -> Vec<(FillRequest, crate::kv::handle::CommitHandle<u64, TxError>)> {
        let load = Arc::new(load);
        let n = load.len();
        (0..n.div_ceil(chunk.max(1)))
            .map(|i| {
                let (completion, handle) = crate::kv::handle::CommitHandle::pair();
                let r = FillRequest {
                    tables: tables.clone(),
                    load: load.clone(),
                    range: i * chunk..((i + 1) * chunk).min(n),
                    result: None,
                    completion: Some(completion),
                };
                (r, handle)
            })
            .collect()
    }
}

/// Per-attribute change of the datom count (the distinct values a load adds are counted by
/// its AVE writes' tallies).
type Deltas = HashMap<AttrId, i64>;

/// Whether a key of the load is in the table already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyState {
    Present,
    /// Not there; `append` when no key of the table sorts after it either.
    New {
        append: bool,
    },
}

/// The table's keys next to a sorted stream of probes: one seek each time the stream passes
/// an existing key, instead of one lookup per key (a load into an empty key range costs one
/// seek in all).
#[derive(Default)]
struct Existing {
    /// The first key of the table at or after the last seek; `Some(None)`: none.
    next: Option<Option<Vec<u8>>>,
}

impl Existing {
    /// Where `k` stands; probes come in ascending order.
    fn probe(&mut self, view: View<'_>, table: &Table, k: &[u8]) -> Result<KeyState, TxError> {
        let stale = match &self.next {
            None => true,
            Some(Some(n)) => n.as_slice() < k,
            Some(None) => false,
        };
        if stale {
            let first = view
                .range(
                    table,
                    Bound::Included(k),
                    Bound::Unbounded,
                    Direction::Forward,
                )?
                .next()
                .transpose()?;
            self.next = Some(first.map(|(key, _)| key.to_vec()));
        }
        Ok(match &self.next {
            Some(Some(n)) if n.as_slice() == k => KeyState::Present,
            Some(Some(_)) => KeyState::New { append: false },
            _ => KeyState::New { append: true },
        })
    }
}

fn attr_of(av: &[u8]) -> AttrId {
    // Every entry was encoded as attr ++ value by `prepare`.
    keys::split_attr(av).map_or(0, |(a, _)| a)
}

impl FillRequest {
    /// Writes this request's share of the load's datoms into both indexes, with the
    /// statistics they add; the datoms written.
    fn fill(
        &self,
        view: View<'_>,
        stage: &mut Stage,
        batch: &mut BatchState,
    ) -> Result<u64, TxError> {
        let t = &self.tables;
        let p = &*self.load;
        let arena = p.arena.as_slice();
        let (eav, ave) = (&p.eav[self.range.clone()], &p.ave[self.range.clone()]);
        let giants = if self.range.start == 0 {
            p.giants.as_slice()
        } else {
            &[]
        };
        let r = IndexReader::new(view, t);
        if self.range.start == 0 {
            // The full-text values, indexed by the first request (their indexes are small
            // beside the datoms, and one writer per attribute keeps each block written once).
            super::super::fulltext::index_loaded(&r, &p.texts, stage)?;
        }
        if self.range.start == 0 && t.tx_log.is_some() {
            // These datoms bypass the transaction log.
            stage.put(&t.meta, crate::store::tables::meta_key::TX_LOG_GAP, &[1]);
        }
        for (k, full) in giants {
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
        let bytes: usize = eav.iter().map(|x| x.av(arena).len() + 8).sum();
        stage.reserve(2 * eav.len(), 2 * bytes);
        let mut deltas: Deltas = HashMap::new();

        // EAV; datoms already present are not counted.
        let mut eav_keys = Existing::default();
        let mut prev_e: Option<EntityId> = None;
        let mut key = KeyState::New { append: false };
        for x in eav {
            let av = x.av(arena);
            let new_key = prev_e != Some(x.e);
            let e = keys::eav_key(x.e);
            if new_key {
                prev_e = Some(x.e);
                key = eav_keys.probe(view, &t.eav, &e)?;
            }
            match key {
                KeyState::New { append: true } if new_key => stage.list_append(&t.eav, &e, av),
                KeyState::New { append: false } if new_key => stage.list_add_sorted(&t.eav, &e, av),
                // A key this load created: its values come in order.
                KeyState::New { .. } => stage.list_append_dup(&t.eav, &e, av),
                KeyState::Present => {
                    if view.list_contains(&t.eav, &e, av)? {
                        *deltas.entry(attr_of(av)).or_default() -= 1;
                    }
                    stage.list_add_sorted(&t.eav, &e, av);
                }
            }
        }

        // History: a bulk load makes no transaction, so its datoms' assertions are stamped
        // with the basis before it (the last transaction's id). EAV's order is the history
        // index's order for one stamp (attribute, then value).
        // Read before the batch state changes (a deferring request's reads may fail).
        let counters = match batch.get::<StoreBatch>().and_then(|s| s.counters) {
            Some(c) => c,
            None => crate::tx::run::read_counters(&r)?,
        };
        if let Some(h) = &t.history {
            let stamp = counters.2 - 1;
            let mut h_keys = Existing::default();
            let mut prev_e: Option<EntityId> = None;
            let mut ev = Vec::with_capacity(64);
            for x in eav {
                let av = x.av(arena);
                let new_key = prev_e != Some(x.e);
                let e = keys::eav_key(x.e);
                if new_key {
                    prev_e = Some(x.e);
                    key = h_keys.probe(view, h, &e)?;
                }
                ev.clear();
                crate::store::history::event_bytes_from_index_form(
                    attr_of(av),
                    stamp,
                    true,
                    &av[keys::ATTR_BYTES..],
                    &mut ev,
                );
                match key {
                    KeyState::New { append: true } if new_key => stage.list_append(h, &e, &ev),
                    KeyState::New { append: false } if new_key => stage.list_add_sorted(h, &e, &ev),
                    KeyState::New { .. } => stage.list_append_dup(h, &e, &ev),
                    KeyState::Present => stage.list_add_sorted(h, &e, &ev),
                }
            }
        }

        // AVE, counting datoms per attribute in the same pass; a new key's first value is
        // tallied under its attribute, so LMDB counts the new distinct values as it takes
        // them (`kv::tally`), as it does a transaction's.
        let mut sketches: HashMap<AttrId, crate::store::sketch::Sketch> = HashMap::new();
        let mut ave_keys = Existing::default();
        let mut prev_av: Option<&[u8]> = None;
        // The attribute being counted: (id, datoms).
        let mut cur: Option<(AttrId, i64)> = None;
        for x in ave {
            let av = x.av(arena);
            let e = keys::eav_key(x.e);
            if let (Some(ae), Ok(_)) = (&t.attr_entities, p.listed.binary_search(&attr_of(av))) {
                // Listed instead of in AVE (`store::value_index`), counted all the same.
                let a = attr_of(av);
                stage.list_add(ae, &a.to_be_bytes(), &e);
                *deltas.entry(a).or_default() += 1;
                sketches.entry(a).or_default().add(&av[keys::ATTR_BYTES..]);
                continue;
            }
            let new_key = prev_av != Some(av);
            if new_key {
                prev_av = Some(av);
                key = ave_keys.probe(view, &t.ave, av)?;
                let a = attr_of(av);
                if cur.is_none_or(|c| c.0 != a) {
                    if let Some((a, d)) = cur.replace((a, 0)) {
                        *deltas.entry(a).or_default() += d;
                    }
                }
            }
            let Some(c) = cur.as_mut() else { continue };
            c.1 += 1;
            match key {
                KeyState::New { append } if new_key => {
                    stage.list_place_tallied(append, &t.ave, av, &e, c.0)
                }
                KeyState::New { .. } => stage.list_append_dup(&t.ave, av, &e),
                KeyState::Present => stage.list_add_sorted(&t.ave, av, &e),
            }
        }
        if let Some((a, d)) = cur {
            *deltas.entry(a).or_default() += d;
        }

        let slot = batch.slot(|| StoreBatch::new(t.clone()));
        slot.last_instant = None;
        t.last_instant.forget();
        slot.counters = Some((counters.0.max(p.max_e + 1), counters.1, counters.2));
        for (a, d) in deltas {
            slot.stats.entry(a).or_default().0 += d;
        }
        for (a, s) in sketches {
            slot.sketches.entry(a).or_default().merge(&s);
        }
        Ok(eav.len() as u64)
    }
}

impl WriteRequest for FillRequest {
    // Its new distinct values are counted by tallies as LMDB takes them, like a
    // transaction's, so LMDB may take them later (`kv::unapplied`).
    fn may_apply_later(&self) -> bool {
        true
    }

    // `fill` reads everything (the probes, the counters) before it touches the batch state,
    // and fails on any read error, as deferring asks.
    fn defers_apply(&self) -> bool {
        true
    }

    // When its batch commits straight into LMDB after all (too large to wait for the LMDB
    // writer), the index writes go once into the data file, made durable by the checkpoint
    // after the commit, instead of into the log too.
    fn checkpoints_instead_of_logging(&self) -> bool {
        true
    }

    fn size_hint(&self) -> usize {
        // Both indexes hold every datom: key, value and LMDB's per-node overhead.
        let n = self.range.len();
        2 * (n * self.load.arena.len() / self.load.len().max(1) + 24 * n)
    }

    crate::tx::request::prepare_by_attempt!(fill);

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
