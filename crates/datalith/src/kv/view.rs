//! Reading: one API over a snapshot ([`super::ReadTxn`]) and over the committer's write
//! transaction (which sees every earlier request of its batch), optionally with an
//! in-memory [`Overlay`] of writes merged into every read (speculative databases).

use super::error::KvError;
use super::overlay::{self, Merge, Overlay, TableOverlay};
use super::table::{Table, TableKind};
use heed::RoTxn;
use std::ops::Bound;

/// A borrowed read view of one consistent state of the environment.
///
/// Every read method consults the overlay first when there is one; without one each method
/// is the plain LMDB call behind a single branch.
#[derive(Clone, Copy)]
pub struct View<'t> {
    pub(crate) txn: &'t RoTxn<'t>,
    pub(crate) overlay: Option<&'t Overlay>,
}

/// A `(key, value)` pair borrowed from the memory map (zero copy).
pub type Entry<'t> = (&'t [u8], &'t [u8]);

/// An iterator over entries borrowed from a snapshot.
pub type Entries<'t> = Box<dyn Iterator<Item = Result<Entry<'t>, KvError>> + 't>;

/// An iterator over the values of one key of a list table.
pub type ListValues<'t> = Box<dyn Iterator<Item = Result<&'t [u8], KvError>> + 't>;

/// Which way a range is walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending key (then value) order.
    Forward,
    /// Descending order.
    Backward,
}

fn lmdb<T>(r: heed::Result<T>) -> Result<T, KvError> {
    r.map_err(KvError::from)
}

impl<'t> View<'t> {
    pub(crate) fn new(txn: &'t RoTxn<'t>) -> View<'t> {
        View { txn, overlay: None }
    }

    /// This view with `overlay` merged into every read (replacing any overlay it had).
    pub fn with_overlay(self, overlay: &'t Overlay) -> View<'t> {
        View {
            txn: self.txn,
            overlay: Some(overlay),
        }
    }

    /// The overlay this view merges, if any.
    pub fn overlay(&self) -> Option<&'t Overlay> {
        self.overlay
    }

    /// The overlay of `table`, when this view has one that touches it.
    #[inline]
    fn patch(&self, table: &Table) -> Option<&'t TableOverlay> {
        match self.overlay {
            None => None,
            Some(o) => o.table(table.id),
        }
    }

    /// This view without its overlay (the snapshot underneath).
    fn base(&self) -> View<'t> {
        View::new(self.txn)
    }

    /// The value stored under `key` (the first value for a list table).
    pub fn get(&self, table: &Table, key: &[u8]) -> Result<Option<&'t [u8]>, KvError> {
        if key.is_empty() {
            return Ok(None);
        }
        if let Some(o) = self.patch(table) {
            return match o {
                TableOverlay::Plain(m) => match m.get(key) {
                    Some(v) => Ok(v.as_deref()),
                    None => lmdb(table.db.get(self.txn, key)),
                },
                TableOverlay::List(_) => self.list(table, key)?.next().transpose(),
            };
        }
        lmdb(table.db.get(self.txn, key))
    }

    /// Entries whose keys fall within the bounds, in the given direction. For a list table
    /// every `(key, value)` pair is an entry.
    pub fn range<'a>(
        &self,
        table: &Table,
        lower: Bound<&'a [u8]>,
        upper: Bound<&'a [u8]>,
        direction: Direction,
    ) -> Result<Entries<'t>, KvError> {
        if bounds_are_empty(lower, upper) {
            return Ok(Box::new(std::iter::empty()));
        }
        if let Some(o) = self.patch(table) {
            let forward = direction == Direction::Forward;
            let base = self.base().range(table, lower, upper, direction)?;
            return Ok(Box::new(Merge {
                base: base.peekable(),
                over: overlay::present_in_range(o, lower, upper, forward).peekable(),
                shadow: o,
                forward,
            }));
        }
        // heed positions a range with a key only, which in a list table lands on the key's
        // *first* value: an excluded lower bound (forward) would then yield the bound key's
        // other values, an included upper bound (backward) would skip them. Such a bound is
        // rewritten to the equivalent bound on the next possible key, `key ++ [0]`.
        let (mut lo_buf, mut hi_buf) = (Vec::new(), Vec::new());
        let (lower, upper) = if table.kind == TableKind::List {
            let lower = match (direction, lower) {
                (Direction::Forward, Bound::Excluded(k)) => {
                    next_key(k, &mut lo_buf).map_or(Bound::Excluded(k), Bound::Included)
                }
                (_, b) => b,
            };
            let upper = match (direction, upper) {
                (Direction::Backward, Bound::Included(k)) => {
                    next_key(k, &mut hi_buf).map_or(Bound::Included(k), Bound::Excluded)
                }
                (_, b) => b,
            };
            (lower, upper)
        } else {
            (lower, upper)
        };
        let bounds = (lower, upper);
        Ok(match direction {
            Direction::Forward => Box::new(lmdb(table.db.range(self.txn, &bounds))?.map(lmdb)),
            Direction::Backward => Box::new(lmdb(table.db.rev_range(self.txn, &bounds))?.map(lmdb)),
        })
    }

    /// Calls `f` with each entry of a forward [`Self::range`], stopping when it returns
    /// false. The same entries as `range`, without a boxed iterator per entry when there is
    /// no overlay (scans that touch many entries).
    pub fn range_each<'a>(
        &self,
        table: &Table,
        lower: Bound<&'a [u8]>,
        upper: Bound<&'a [u8]>,
        mut f: impl FnMut(&'t [u8], &'t [u8]) -> Result<bool, KvError>,
    ) -> Result<(), KvError> {
        // As in `range`: an excluded lower key of a list table becomes the next possible key.
        let mut lo_buf = Vec::new();
        let lower = match lower {
            Bound::Excluded(k) if table.kind == TableKind::List => {
                next_key(k, &mut lo_buf).map_or(Bound::Excluded(k), Bound::Included)
            }
            b => b,
        };
        let exact = table.kind != TableKind::List || !matches!(lower, Bound::Excluded(_));
        if self.patch(table).is_some() || !exact || bounds_are_empty(lower, upper) {
            for e in self.range(table, lower, upper, Direction::Forward)? {
                let (k, v) = e?;
                if !f(k, v)? {
                    break;
                }
            }
            return Ok(());
        }
        for e in lmdb(table.db.range(self.txn, &(lower, upper)))? {
            let (k, v) = lmdb(e)?;
            if !f(k, v)? {
                break;
            }
        }
        Ok(())
    }

    /// Entries whose keys start with `prefix`.
    pub fn prefix(
        &self,
        table: &Table,
        prefix: &[u8],
        direction: Direction,
    ) -> Result<Entries<'t>, KvError> {
        if direction == Direction::Forward && self.patch(table).is_none() {
            return Ok(Box::new(
                lmdb(table.db.prefix_iter(self.txn, prefix))?.map(lmdb),
            ));
        }
        // Backward always goes through `range`: heed's reverse prefix walk misses entries of
        // a list table whose key ends in 0xFF (found by the overlay's property test).
        let end = overlay::prefix_successor(prefix);
        let upper = match &end {
            Some(e) => Bound::Excluded(e.as_slice()),
            None => Bound::Unbounded,
        };
        let lower = if prefix.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Included(prefix)
        };
        self.range(table, lower, upper, direction)
    }

    /// Number of entries within the bounds. LMDB keeps no per-page counts, so this walks the
    /// range: O(n). The planner uses its own statistics instead.
    pub fn count_range(
        &self,
        table: &Table,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Result<u64, KvError> {
        let mut n = 0u64;
        for e in self.range(table, lower, upper, Direction::Forward)? {
            e?;
            n += 1;
        }
        Ok(n)
    }

    /// Number of entries in the table (O(1): from LMDB's page statistics).
    /// With an overlay: the snapshot's count corrected by each entry the overlay mentions
    /// (O(overlay size) lookups).
    pub fn len(&self, table: &Table) -> Result<u64, KvError> {
        let n = lmdb(table.db.len(self.txn))?;
        let Some(o) = self.patch(table) else {
            return Ok(n);
        };
        let base = self.base();
        let mut n = n as i64;
        match o {
            TableOverlay::Plain(m) => {
                for (k, v) in m {
                    n += i64::from(v.is_some()) - i64::from(base.get(table, k)?.is_some());
                }
            }
            TableOverlay::List(m) => {
                for (k, p) in m {
                    if p.cleared {
                        n -= base.list_count(table, k)? as i64;
                    }
                    for (v, present) in &p.values {
                        let had = !p.cleared && base.list_contains(table, k, v)?;
                        n += i64::from(*present) - i64::from(had);
                    }
                }
            }
        }
        Ok(n.max(0) as u64)
    }

    /// First entry in key order.
    pub fn first(&self, table: &Table) -> Result<Option<Entry<'t>>, KvError> {
        if self.patch(table).is_some() {
            return self
                .range(
                    table,
                    Bound::Unbounded,
                    Bound::Unbounded,
                    Direction::Forward,
                )?
                .next()
                .transpose();
        }
        lmdb(table.db.first(self.txn))
    }

    /// Last entry in key order.
    pub fn last(&self, table: &Table) -> Result<Option<Entry<'t>>, KvError> {
        if self.patch(table).is_some() {
            return self
                .range(
                    table,
                    Bound::Unbounded,
                    Bound::Unbounded,
                    Direction::Backward,
                )?
                .next()
                .transpose();
        }
        lmdb(table.db.last(self.txn))
    }

    /// The sorted values of `key` in a list table.
    pub fn list(&self, table: &Table, key: &[u8]) -> Result<ListValues<'t>, KvError> {
        require_list(table)?;
        if key.is_empty() {
            return Ok(Box::new(std::iter::empty()));
        }
        if let Some(o) = self.patch(table) {
            let TableOverlay::List(m) = o else {
                return self.base().list(table, key);
            };
            let Some(p) = m.get(key) else {
                return self.base().list(table, key);
            };
            let base: ListValues<'t> = if p.cleared {
                Box::new(std::iter::empty())
            } else {
                self.base().list(table, key)?
            };
            let base = base
                .map(move |r| r.map(|v| (key_placeholder(), v)))
                .filter(move |r| !matches!(r, Ok((_, v)) if p.values.contains_key(*v)));
            let over: Box<dyn Iterator<Item = (&'t [u8], &'t [u8])> + 't> = Box::new(
                p.values
                    .iter()
                    .filter(|(_, present)| **present)
                    .map(|(v, _)| (key_placeholder(), v.as_slice())),
            );
            return Ok(Box::new(
                Merge {
                    base: base.peekable(),
                    over: over.peekable(),
                    shadow: o,
                    forward: true,
                }
                .map(|r| r.map(|(_, v)| v)),
            ));
        }
        match lmdb(table.db.get_duplicates(self.txn, key))? {
            Some(it) => Ok(Box::new(it.map(|r| lmdb(r).map(|(_, v)| v)))),
            None => Ok(Box::new(std::iter::empty())),
        }
    }

    /// Calls `f` with each value of [`Self::list`], stopping when it returns false; without
    /// an overlay, no boxed iterator.
    pub fn list_each(
        &self,
        table: &Table,
        key: &[u8],
        mut f: impl FnMut(&'t [u8]) -> Result<bool, KvError>,
    ) -> Result<(), KvError> {
        require_list(table)?;
        if key.is_empty() {
            return Ok(());
        }
        if self.patch(table).is_some() {
            for v in self.list(table, key)? {
                if !f(v?)? {
                    break;
                }
            }
            return Ok(());
        }
        if let Some(it) = lmdb(table.db.get_duplicates(self.txn, key))? {
            for r in it {
                let (_, v) = lmdb(r)?;
                if !f(v)? {
                    break;
                }
            }
        }
        Ok(())
    }

    /// How many values `key` has in a list table.
    pub fn list_count(&self, table: &Table, key: &[u8]) -> Result<u64, KvError> {
        let mut n = 0;
        for v in self.list(table, key)? {
            v?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether `key` holds exactly `value` in a list table.
    pub fn list_contains(&self, table: &Table, key: &[u8], value: &[u8]) -> Result<bool, KvError> {
        require_list(table)?;
        if key.is_empty() {
            return Ok(false);
        }
        if let Some(TableOverlay::List(m)) = self.patch(table) {
            if let Some(p) = m.get(key) {
                if let Some(present) = p.values.get(value) {
                    return Ok(*present);
                }
                if p.cleared {
                    return Ok(false);
                }
            }
        }
        // A dupsort table sorts a key's values; walk them in order and stop once past `value`.
        match lmdb(table.db.get_duplicates(self.txn, key))? {
            None => Ok(false),
            Some(it) => {
                for r in it {
                    let (_, v) = lmdb(r)?;
                    match v.cmp(value) {
                        std::cmp::Ordering::Less => continue,
                        std::cmp::Ordering::Equal => return Ok(true),
                        std::cmp::Ordering::Greater => return Ok(false),
                    }
                }
                Ok(false)
            }
        }
    }
}

/// The smallest key after `k` (`k ++ [0]`), built in `buf`; `None` if it would exceed
/// LMDB's key limit.
fn next_key<'b>(k: &[u8], buf: &'b mut Vec<u8>) -> Option<&'b [u8]> {
    if k.len() >= crate::limits::MAX_KEY_BYTES {
        return None;
    }
    buf.clear();
    buf.extend_from_slice(k);
    buf.push(0);
    Some(buf.as_slice())
}

/// The key slot of a list value inside a merge of one key's values (all equal, so only the
/// values decide the order).
fn key_placeholder() -> &'static [u8] {
    &[]
}

fn require_list(table: &Table) -> Result<(), KvError> {
    if table.kind != TableKind::List {
        return Err(KvError::WrongTableKind {
            name: table.name.to_string(),
            actual: table.kind.name(),
            wanted: TableKind::List.name(),
        });
    }
    Ok(())
}

/// LMDB's range functions misbehave on inverted bounds; an inverted range is simply empty.
fn bounds_are_empty(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b))
        | (Bound::Excluded(a), Bound::Excluded(b)) => a >= b,
        _ => false,
    }
}
