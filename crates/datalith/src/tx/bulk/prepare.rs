//! Encoding and sorting a bulk load on the caller's threads.

use std::cmp::Ordering;

use crate::codec::{self, Keyword, Value};
use crate::store::ids::{EntityId, TX_PARTITION_START, USER_PARTITION_START};
use crate::store::keys::{self, ATTR_BYTES};
use crate::store::reader::giant_key;
use crate::store::schema::Schema;
use crate::store::AttrId;
use crate::tx::TxError;

/// Attributes remembered per chunk (past these, idents are looked up in the schema).
const SEEN_ATTRS: usize = 16;

/// Loads smaller than this are prepared on one thread (threads cost more than they save).
/// Workload Q's `init` (100K datoms) took 55 ms on two threads against 60 on one (medians of
/// 11 `fill_db` runs, three alternating rounds, 2026-12-06).
const PARALLEL_MIN_DATOMS: usize = 64 * 1024;

/// Bytes of an entry's `attr ++ value` kept inline for comparisons.
const HEAD: usize = 16;

/// One datom as an index entry: its entity and its `attr ++ value` bytes in an arena.
#[derive(Clone, Copy)]
pub(super) struct Entry {
    /// The first bytes of `attr ++ value`, zero-padded, read big-endian: most comparisons
    /// end here, in one integer comparison. Padding with zeros keeps the order of the full
    /// bytes (a shorter run sorts first either way).
    head: u128,
    /// Entity id.
    pub(super) e: EntityId,
    off: usize,
    len: u32,
}

impl Entry {
    pub(super) fn av<'a>(&self, arena: &'a [u8]) -> &'a [u8] {
        &arena[self.off..self.off + self.len as usize]
    }

    fn cmp_av(&self, other: &Entry, arena: &[u8]) -> Ordering {
        match self.head.cmp(&other.head) {
            Ordering::Equal if self.len as usize <= HEAD && other.len as usize <= HEAD => {
                // Both fit in their heads: equal heads mean one is a prefix of the other (or
                // they are equal), and the shorter sorts first.
                self.len.cmp(&other.len)
            }
            Ordering::Equal => self.av(arena).cmp(other.av(arena)),
            o => o,
        }
    }

    fn cmp_eav(&self, other: &Entry, arena: &[u8]) -> Ordering {
        self.e.cmp(&other.e).then_with(|| self.cmp_av(other, arena))
    }

    fn cmp_ave(&self, other: &Entry, arena: &[u8]) -> Ordering {
        self.cmp_av(other, arena).then_with(|| self.e.cmp(&other.e))
    }
}

/// Encoded, sorted, duplicate-free index entries of a bulk load.
pub struct Prepared {
    /// Every `attr ++ value` index key, back to back.
    pub(super) arena: Vec<u8>,
    /// Sorted by (entity, attr ++ value).
    pub(super) eav: Vec<Entry>,
    /// The same datoms sorted by (attr ++ value, entity).
    pub(super) ave: Vec<Entry>,
    /// `giants` records (attr ++ hash, full encoding) of values too long to index inline.
    pub(super) giants: Vec<([u8; 20], Vec<u8>)>,
    /// Highest entity id seen.
    pub(super) max_e: EntityId,
    /// The attributes whose datoms have no AVE entries (`store::value_index`), sorted: their
    /// entities go to `attr_entities` instead.
    pub(super) listed: Vec<AttrId>,
    /// The values of `:db/fulltext` attributes, for their indexes (`tx::fulltext`).
    pub(super) texts: Vec<(
        EntityId,
        AttrId,
        crate::search::AnalyzerConfig,
        std::sync::Arc<str>,
    )>,
}

impl Prepared {
    /// Names the attributes whose datoms have no AVE entries.
    pub fn list_attributes(&mut self, mut listed: Vec<AttrId>) {
        listed.sort_unstable();
        self.listed = listed;
    }

    /// Datoms to write (duplicates removed).
    pub fn len(&self) -> usize {
        self.eav.len()
    }
}

/// Checks, encodes and sorts datoms `(entity, attribute, value)`: attributes must exist,
/// values have their attribute's type, entity ids lie in the user partition. Large loads are
/// split over the available cores.
pub fn prepare(
    schema: &Schema,
    datoms: &[(EntityId, Keyword, Value)],
) -> Result<Prepared, TxError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 || datoms.len() < PARALLEL_MIN_DATOMS {
        return prepare_part(schema, datoms);
    }
    let per = datoms.len().div_ceil(threads);
    let parts: Vec<Result<Prepared, TxError>> = std::thread::scope(|s| {
        let handles: Vec<_> = datoms
            .chunks(per)
            .map(|part| s.spawn(move || prepare_part(schema, part)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut merged: Option<Prepared> = None;
    for part in parts {
        let part = part?;
        merged = Some(match merged {
            None => part,
            Some(m) => merge(m, part),
        });
    }
    Ok(merged.unwrap_or_else(|| Prepared {
        arena: Vec::new(),
        eav: Vec::new(),
        ave: Vec::new(),
        giants: Vec::new(),
        max_e: 0,
        texts: Vec::new(),
        listed: Vec::new(),
    }))
}

fn malformed(e: EntityId, a: &Keyword, v: &Value) -> TxError {
    TxError::Malformed {
        detail: format!(
            "bulk-load entity ids must lie in [{USER_PARTITION_START}, {TX_PARTITION_START})"
        ),
        form: format!("[{e} {a} {v}]"),
    }
}

/// One chunk, on the current thread.
fn prepare_part(
    schema: &Schema,
    datoms: &[(EntityId, Keyword, Value)],
) -> Result<Prepared, TxError> {
    let mut arena = Vec::with_capacity(datoms.len() * 24);
    let mut eav = Vec::with_capacity(datoms.len());
    let mut giants = Vec::new();
    let mut max_e = 0;
    // A load names few attributes: remember them rather than hash every datom's ident.
    let mut seen: Vec<(
        &Keyword,
        AttrId,
        crate::codec::ValueType,
        Option<crate::search::AnalyzerConfig>,
    )> = Vec::new();
    let mut texts = Vec::new();
    for (e, k, v) in datoms {
        if !(USER_PARTITION_START..TX_PARTITION_START).contains(e) {
            return Err(malformed(*e, k, v));
        }
        let (a, ty, fulltext) = match seen.iter().find(|(sk, _, _, _)| *sk == k) {
            Some((_, a, ty, f)) => (*a, *ty, *f),
            None => {
                let attr = schema
                    .by_ident(k)
                    .ok_or_else(|| TxError::UnknownAttribute {
                        attr: k.to_string(),
                        form: format!("[{e} {k} {v}]"),
                    })?;
                if seen.len() < SEEN_ATTRS {
                    seen.push((k, attr.id, attr.value_type, attr.fulltext));
                }
                (attr.id, attr.value_type, attr.fulltext)
            }
        };
        if !v.is_storable() {
            return Err(TxError::NotStorable {
                attr: k.to_string(),
                value: format!("{v:?}"),
                form: format!("[{e} {k} {v:?}]"),
            });
        }
        if v.value_type() != Some(ty) {
            return Err(TxError::WrongType {
                attr: k.to_string(),
                expected: ty.ident().to_string(),
                got: format!("{v}"),
                form: format!("[{e} {k} {v}]"),
            });
        }
        if let Value::Tuple(elems) = v {
            let attr = schema.get(a).expect("looked up above");
            if let Some(reason) = crate::tx::terms::tuple_shape_error(attr, elems) {
                return Err(TxError::InvalidTupleValue {
                    attr: k.to_string(),
                    value: v.to_string(),
                    reason,
                    form: format!("[{e} {k} {v}]"),
                });
            }
        }
        if let (Some(config), Value::String(text)) = (fulltext, v) {
            texts.push((*e, a, config, text.clone()));
        }
        let off = arena.len();
        keys::attr_prefix(a, &mut arena);
        codec::encode(v, &mut arena);
        if let Some(g) = codec::index_key::shrink_to_index_key(&mut arena, off + ATTR_BYTES) {
            giants.push((giant_key(a, &g.hash), g.full));
        }
        let len = arena.len() - off;
        let mut head = [0u8; HEAD];
        let n = len.min(HEAD);
        head[..n].copy_from_slice(&arena[off..off + n]);
        max_e = max_e.max(*e);
        eav.push(Entry {
            head: u128::from_be_bytes(head),
            e: *e,
            off,
            len: len as u32,
        });
    }
    let a = &arena;
    let mut ave = eav.clone();
    let sort_eav = |eav: &mut Vec<Entry>| {
        // Datoms often come in entity order already.
        if !eav.is_sorted_by(|x, y| x.cmp_eav(y, a) != Ordering::Greater) {
            eav.sort_unstable_by(|x, y| x.cmp_eav(y, a));
        }
        eav.dedup_by(|x, y| x.cmp_eav(y, a) == Ordering::Equal);
    };
    let sort_ave = |ave: &mut Vec<Entry>| {
        ave.sort_unstable_by(|x, y| x.cmp_ave(y, a));
        ave.dedup_by(|x, y| x.cmp_ave(y, a) == Ordering::Equal);
    };
    // One thread: on a shared machine a helper thread for the second sort loses more
    // waiting for a core than it gains (measured on workload Q's init under load).
    sort_eav(&mut eav);
    sort_ave(&mut ave);
    giants.sort_unstable();
    giants.dedup();
    Ok(Prepared {
        arena,
        eav,
        ave,
        giants,
        max_e,
        texts,
        listed: Vec::new(),
    })
}

/// Merges two prepared chunks (their arenas appended, their sorted runs merged).
fn merge(a: Prepared, b: Prepared) -> Prepared {
    let shift = a.arena.len();
    let mut arena = a.arena;
    arena.extend_from_slice(&b.arena);
    let moved = |mut x: Entry| {
        x.off += shift;
        x
    };
    let b_eav: Vec<Entry> = b.eav.into_iter().map(moved).collect();
    let b_ave: Vec<Entry> = b.ave.into_iter().map(moved).collect();
    let eav = merge_runs(a.eav, b_eav, |x, y| x.cmp_eav(y, &arena));
    let ave = merge_runs(a.ave, b_ave, |x, y| x.cmp_ave(y, &arena));
    let mut giants = a.giants;
    giants.extend(b.giants);
    giants.sort_unstable();
    giants.dedup();
    let mut texts = a.texts;
    texts.extend(b.texts);
    Prepared {
        texts,
        listed: Vec::new(),
        eav,
        ave,
        giants,
        max_e: a.max_e.max(b.max_e),
        arena,
    }
}

/// Merges two sorted runs, dropping entries equal to the one before (a datom given twice).
fn merge_runs(
    a: Vec<Entry>,
    b: Vec<Entry>,
    cmp: impl Fn(&Entry, &Entry) -> Ordering,
) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = j >= b.len() || (i < a.len() && cmp(&a[i], &b[j]) != Ordering::Greater);
        let x = if take_a {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        if out.last().is_none_or(|l| cmp(l, &x) != Ordering::Equal) {
            out.push(x);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(arena: &mut Vec<u8>, e: u64, av: &[u8]) -> Entry {
        let off = arena.len();
        arena.extend_from_slice(av);
        let mut head = [0u8; 16];
        let n = av.len().min(16);
        head[..n].copy_from_slice(&av[..n]);
        Entry {
            head: u128::from_be_bytes(head),
            e,
            off,
            len: av.len() as u32,
        }
    }

    /// The padded head never contradicts the order of the full bytes.
    #[test]
    fn entry_order_is_byte_order() {
        let values: &[&[u8]] = &[
            b"",
            b"\0",
            b"\0\0",
            b"a",
            b"a\0",
            b"a\0b",
            b"ab",
            b"0123456789abcdef",
            b"0123456789abcdef\0",
            b"0123456789abcdefg",
            b"0123456789abcdeg",
        ];
        let mut arena = Vec::new();
        let entries: Vec<Entry> = values.iter().map(|v| entry(&mut arena, 1, v)).collect();
        for (x, vx) in entries.iter().zip(values) {
            for (y, vy) in entries.iter().zip(values) {
                assert_eq!(x.cmp_av(y, &arena), vx.cmp(vy), "{vx:?} {vy:?}");
            }
        }
    }

    #[test]
    fn merged_runs_are_sorted_and_unique() {
        let cases: &[(&[u8], &[u8], &[u8])] = &[
            (&[1, 3, 5], &[2, 4, 6], &[1, 2, 3, 4, 5, 6]),
            (&[1, 2], &[2, 3], &[1, 2, 3]),
            (&[], &[1, 1], &[1]),
            (&[], &[], &[]),
        ];
        for (a, b, expected) in cases {
            let mut arena = Vec::new();
            let run = |arena: &mut Vec<u8>, xs: &[u8]| -> Vec<Entry> {
                xs.iter().map(|x| entry(arena, 1, &[*x])).collect()
            };
            let (ra, rb) = (run(&mut arena, a), run(&mut arena, b));
            let out = merge_runs(ra, rb, |x, y| x.cmp_eav(y, &arena));
            let got: Vec<u8> = out.iter().map(|x| x.av(&arena)[0]).collect();
            assert_eq!(&got, expected);
        }
    }
}
