//! Reading: one API over a snapshot ([`super::ReadTxn`]) and over the committer's write
//! transaction (which sees every earlier request of its batch), optionally with an
//! in-memory [`Overlay`] of writes merged into every read (speculative databases).
//!
//! Every read method exists once for the three sources (snapshot, batch transaction,
//! overlay) and their merge; the cursor walks they share (ranges, one key's values, a list
//! reader) are in `walk.rs`.

use super::error::KvError;
use super::lmdb::cursor::Op;
use super::lmdb::{Cursor, Dbi, LmdbError, RoTxn};
use super::overlay::{self, Merge, Overlay, OverlaySource, TableOverlay};
use super::pending::{Hi, Lo, Pending};
use super::table::{Table, TableKind};
use std::ops::Bound;

mod walk;

pub use walk::ListReader;
use walk::{fixed_pages, list_walk, RangeIter};

/// A borrowed read view of one consistent state of the environment.
///
/// Every read method consults the overlay first when there is one; without one each method
/// is the plain LMDB call behind a single branch.
#[derive(Clone, Copy)]
pub struct View<'t> {
    pub(crate) txn: &'t RoTxn,
    layer: Option<Layer<'t>>,
    /// In the committer: the batch's writes not yet applied to `txn`, which every read checks
    /// it cannot miss (`kv::pending`).
    pending: Option<&'t Pending>,
    /// The environment's meta table, where the tally counters are (`kv::tally`).
    tallies: Option<Dbi>,
}

/// Writes a view merges over its snapshot.
#[derive(Clone, Copy)]
enum Layer<'t> {
    /// Merged into every read of a table it writes (a speculative database's writes).
    Whole(&'t Overlay),
    /// Merged only into a read that meets one of its writes, built on first need (a
    /// snapshot's committed groups that LMDB does not hold yet: see `overlay::touched`).
    OnDemand(&'t dyn OverlaySource),
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

fn lmdb<T>(r: Result<T, LmdbError>) -> Result<T, KvError> {
    r.map_err(KvError::from)
}

impl<'t> View<'t> {
    pub(crate) fn new(txn: &'t RoTxn) -> View<'t> {
        View {
            txn,
            layer: None,
            pending: None,
            tallies: None,
        }
    }

    /// This view reading tally counters from the meta table `meta`.
    pub(crate) fn with_tallies(self, meta: Dbi) -> View<'t> {
        View {
            tallies: Some(meta),
            ..self
        }
    }

    /// For each key starting with `prefix` of list table `table` that this view's overlay
    /// creates (gives values where the snapshot has none) or empties: `f(key, 1)` or
    /// `f(key, -1)`. With the snapshot's tally counters this gives the counts of the state the
    /// view shows; it costs two lookups per such key the overlay holds.
    pub fn overlay_key_balance(
        &self,
        table: &Table,
        prefix: &[u8],
        mut f: impl FnMut(&[u8], i64),
    ) -> Result<(), KvError> {
        let end = overlay::prefix_successor(prefix);
        let hi = match &end {
            Some(e) => Hi::Below(e),
            None => Hi::Unbounded,
        };
        let Some(TableOverlay::List(m)) = self.patch(table, Lo::Key(prefix), hi) else {
            return Ok(());
        };
        let base = self.base();
        for key in m.keys_with_prefix(prefix) {
            let now = self.list(table, key)?.next().transpose()?.is_some();
            let before = lmdb(base.txn.get(table.db, key))?.is_some();
            match (before, now) {
                (false, true) => f(key, 1),
                (true, false) => f(key, -1),
                _ => {}
            }
        }
        Ok(())
    }

    /// The stored counter of `tally` as LMDB holds it in this snapshot, without what the overlay
    /// changes (see `kv::tally`; decode it with [`tally::decode`](super::tally::decode)). `None`
    /// when nothing was counted, or for a view of the committer's.
    pub fn tally(&self, tally: u32) -> Result<Option<&'t [u8]>, KvError> {
        match self.tallies {
            None => Ok(None),
            Some(meta) => lmdb(self.txn.get(meta, &super::tally::key(tally))),
        }
    }

    /// This view failing every read that may miss one of `pending`'s unapplied writes.
    pub(crate) fn with_pending(self, pending: &'t Pending) -> View<'t> {
        View {
            pending: Some(pending),
            ..self
        }
    }

    /// Fails a read of `[lo, hi]` in `table` that may miss an unapplied write of the batch.
    #[inline]
    fn check(&self, table: &Table, lo: Lo<'_>, hi: Hi<'_>) -> Result<(), KvError> {
        match self.pending {
            None => Ok(()),
            Some(p) => p.check(table, lo, hi),
        }
    }

    #[inline]
    fn check_key(&self, table: &Table, key: &[u8]) -> Result<(), KvError> {
        self.check(table, Lo::Key(key), Hi::Key(key))
    }

    #[inline]
    fn check_all(&self, table: &Table) -> Result<(), KvError> {
        self.check(table, Lo::Unbounded, Hi::Unbounded)
    }

    /// This view with `overlay` merged into every read (replacing any overlay it had).
    pub fn with_overlay(self, overlay: &'t Overlay) -> View<'t> {
        View {
            layer: Some(Layer::Whole(overlay)),
            ..self
        }
    }

    /// This view with `source`'s overlay merged into the reads that meet its writes
    /// (replacing any overlay it had).
    pub(crate) fn with_overlay_on_demand(self, source: &'t dyn OverlaySource) -> View<'t> {
        View {
            layer: Some(Layer::OnDemand(source)),
            ..self
        }
    }

    /// The overlay this view merges, if any (built now if it is built on demand).
    pub fn overlay(&self) -> Option<&'t Overlay> {
        match self.layer? {
            Layer::Whole(o) => Some(o),
            Layer::OnDemand(source) => source.overlay(),
        }
    }

    /// The overlay of `table` that a read of its keys in `[lo, hi]` merges, if any.
    #[inline]
    fn patch(&self, table: &Table, lo: Lo<'_>, hi: Hi<'_>) -> Option<&'t TableOverlay> {
        match self.layer? {
            Layer::Whole(o) => o.table(table.id),
            Layer::OnDemand(source) => match source.meets(table.id, lo, hi) {
                true => source.overlay()?.table(table.id),
                false => None,
            },
        }
    }

    #[inline]
    fn patch_key(&self, table: &Table, key: &[u8]) -> Option<&'t TableOverlay> {
        self.patch(table, Lo::Key(key), Hi::Key(key))
    }

    #[inline]
    fn patch_all(&self, table: &Table) -> Option<&'t TableOverlay> {
        self.patch(table, Lo::Unbounded, Hi::Unbounded)
    }

    #[inline]
    fn patch_range(
        &self,
        table: &Table,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Option<&'t TableOverlay> {
        self.patch(table, Lo::of(lower), Hi::of(upper))
    }

    /// Whether every read of `table` merges an overlay (a list reader then keeps no cursor).
    fn merges_every_read(&self, table: &Table) -> bool {
        matches!(self.layer, Some(Layer::Whole(o)) if o.table(table.id).is_some())
    }

    /// Whether this view merges writes over its snapshot (an overlay, or groups LMDB does not
    /// hold yet).
    pub(crate) fn has_overlay(&self) -> bool {
        self.layer.is_some()
    }

    /// This view without its overlay (the snapshot underneath: what LMDB holds).
    pub(crate) fn base(&self) -> View<'t> {
        View {
            layer: None,
            ..*self
        }
    }

    /// The value stored under `key` (the first value for a list table).
    pub fn get(&self, table: &Table, key: &[u8]) -> Result<Option<&'t [u8]>, KvError> {
        if key.is_empty() {
            return Ok(None);
        }
        self.check_key(table, key)?;
        if let (Some(Layer::OnDemand(source)), TableKind::Plain) = (self.layer, table.kind) {
            // The key's last write, if the layer has one, without building the overlay.
            return match source.plain_get(table.id, key) {
                Some(v) => Ok(v),
                None => lmdb(self.txn.get(table.db, key)),
            };
        }
        if let Some(o) = self.patch_key(table, key) {
            return match o {
                TableOverlay::Plain(m) => match m.get(key) {
                    Some(v) => Ok(v.as_deref()),
                    None => lmdb(self.txn.get(table.db, key)),
                },
                // A key the overlay does not mention reads as the snapshot holds it, without
                // the merge's cursor and boxes (the committer's lookups of fresh values).
                TableOverlay::List(m) if !m.mentions(key) => lmdb(self.txn.get(table.db, key)),
                TableOverlay::List(_) => self.list(table, key)?.next().transpose(),
            };
        }
        lmdb(self.txn.get(table.db, key))
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
        self.check(table, Lo::of(lower), Hi::of(upper))?;
        if let Some(o) = self.patch_range(table, lower, upper) {
            let forward = direction == Direction::Forward;
            let base = self.base().range(table, lower, upper, direction)?;
            return Ok(Box::new(Merge {
                base: base.peekable(),
                over: overlay::present_in_range(o, lower, upper, forward).peekable(),
                shadow: o,
                forward,
            }));
        }
        Ok(Box::new(RangeIter::new(
            self.txn, table, lower, upper, direction,
        )?))
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
        if self.patch_range(table, lower, upper).is_some() || bounds_are_empty(lower, upper) {
            for e in self.range(table, lower, upper, Direction::Forward)? {
                let (k, v) = e?;
                if !f(k, v)? {
                    break;
                }
            }
            return Ok(());
        }
        self.check(table, Lo::of(lower), Hi::of(upper))?;
        let mut it = RangeIter::new(self.txn, table, lower, upper, Direction::Forward)?;
        while let Some((k, v)) = it.advance()? {
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
        self.check_all(table)?;
        let n = lmdb(self.txn.entries(table.db))?;
        let Some(o) = self.patch_all(table) else {
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
                for k in m.cleared_keys() {
                    n -= base.list_count(table, k)? as i64;
                }
                for (k, v, present) in m.all_pairs() {
                    let had = !m.is_cleared(k) && base.list_contains(table, k, v)?;
                    n += i64::from(present) - i64::from(had);
                }
            }
        }
        Ok(n.max(0) as u64)
    }

    /// First entry in key order.
    pub fn first(&self, table: &Table) -> Result<Option<Entry<'t>>, KvError> {
        let first = self.end_unchecked(table, Direction::Forward)?;
        // Only a pending key at or before the first one could change the answer.
        match first {
            Some((k, _)) => self.check(table, Lo::Unbounded, Hi::Key(k))?,
            None => self.check_all(table)?,
        }
        Ok(first)
    }

    /// The first entry met walking the whole table in `direction`, without checking for
    /// pending writes of the batch.
    fn end_unchecked(
        &self,
        table: &Table,
        direction: Direction,
    ) -> Result<Option<Entry<'t>>, KvError> {
        if self.patch_all(table).is_some() {
            return self
                .range(table, Bound::Unbounded, Bound::Unbounded, direction)?
                .next()
                .transpose();
        }
        let op = match direction {
            Direction::Forward => Op::First,
            Direction::Backward => Op::Last,
        };
        lmdb(lmdb(Cursor::open(self.txn, table.db))?.step(op))
    }

    /// Last entry in key order.
    pub fn last(&self, table: &Table) -> Result<Option<Entry<'t>>, KvError> {
        let last = self.end_unchecked(table, Direction::Backward)?;
        // Only a pending key at or after the last one could change the answer.
        match last {
            Some((k, _)) => self.check(table, Lo::Key(k), Hi::Unbounded)?,
            None => self.check_all(table)?,
        }
        Ok(last)
    }

    /// The sorted values of `key` in a list table.
    pub fn list(&self, table: &Table, key: &[u8]) -> Result<ListValues<'t>, KvError> {
        require_list(table)?;
        if key.is_empty() {
            return Ok(Box::new(std::iter::empty()));
        }
        self.check_key(table, key)?;
        if let Some(o) = self.patch_key(table, key) {
            let TableOverlay::List(m) = o else {
                return self.base().list(table, key);
            };
            // The overlay's copy of the key outlives the caller's, as the values must.
            let Some(key) = m.own_key(key) else {
                return self.base().list(table, key);
            };
            let base: ListValues<'t> = if m.is_cleared(key) {
                Box::new(std::iter::empty())
            } else {
                self.base().list(table, key)?
            };
            let base = base
                .map(move |r| r.map(|v| (key_placeholder(), v)))
                .filter(move |r| !matches!(r, Ok((_, v)) if m.decided(key, v).is_some()));
            let over: Box<dyn Iterator<Item = (&'t [u8], &'t [u8])> + 't> = Box::new(
                m.pairs_of(key)
                    .filter(|(_, _, present)| *present)
                    .map(|(_, v, _)| (key_placeholder(), v)),
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
        let mut cursor = lmdb(Cursor::open(self.txn, table.db))?;
        let mut next = lmdb(cursor.seek_exact(key))?.map(|(_, v)| v);
        Ok(Box::new(std::iter::from_fn(move || {
            let v = next.take()?;
            match lmdb(cursor.step(Op::NextDup)) {
                Ok(n) => next = n.map(|(_, v)| v),
                Err(e) => return Some(Err(e)),
            }
            Some(Ok(v))
        })))
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
        self.check_key(table, key)?;
        if self.patch_key(table, key).is_some() {
            for v in self.list(table, key)? {
                if !f(v?)? {
                    break;
                }
            }
            return Ok(());
        }
        let mut cursor = lmdb(Cursor::open(self.txn, table.db))?;
        list_walk(&mut cursor, key, None, f)
    }

    /// Calls `f(block, width)` with the values of `key` in list `table`, in order, stopping
    /// when it returns false. A block is a run of values packed end to end, each `width`
    /// bytes: for a fixed-width table ([`super::Environment::fixed_list_table`]) up to a page
    /// of values per call, else (and with an overlay on the table) one value per call.
    pub fn list_blocks(
        &self,
        table: &Table,
        key: &[u8],
        mut f: impl FnMut(&'t [u8], usize) -> Result<bool, KvError>,
    ) -> Result<(), KvError> {
        let width = match table.fixed {
            Some(w) if !key.is_empty() && self.patch_key(table, key).is_none() => usize::from(w),
            _ => return self.list_each(table, key, |v| f(v, v.len())),
        };
        self.check_key(table, key)?;
        let mut cursor = lmdb(Cursor::open(self.txn, table.db))?;
        if let Some((_, first)) = lmdb(cursor.seek_exact(key))? {
            fixed_pages(&mut cursor, first, |b| f(b, width))?;
        }
        Ok(())
    }

    /// Calls `f(key, block, width)` for the entries of list `table` whose keys fall within
    /// the bounds, forward, stopping when it returns false: each key's values in blocks as
    /// [`Self::list_blocks`] gives them.
    pub fn range_blocks<'a>(
        &self,
        table: &Table,
        lower: Bound<&'a [u8]>,
        upper: Bound<&'a [u8]>,
        mut f: impl FnMut(&'t [u8], &'t [u8], usize) -> Result<bool, KvError>,
    ) -> Result<(), KvError> {
        require_list(table)?;
        let width = match table.fixed {
            Some(w)
                if !bounds_are_empty(lower, upper)
                    && self.patch_range(table, lower, upper).is_none() =>
            {
                usize::from(w)
            }
            _ => return self.range_each(table, lower, upper, |k, v| f(k, v, v.len())),
        };
        self.check(table, Lo::of(lower), Hi::of(upper))?;
        let lower = match lower {
            Bound::Included([]) | Bound::Excluded([]) => Bound::Unbounded,
            b => b,
        };
        let mut cursor = lmdb(Cursor::open(self.txn, table.db))?;
        let mut at = match lower {
            Bound::Unbounded => lmdb(cursor.step(Op::First))?,
            Bound::Included(k) => lmdb(cursor.seek(k))?,
            Bound::Excluded(k) => match lmdb(cursor.seek(k))? {
                Some((found, _)) if found == k => lmdb(cursor.step(Op::NextNoDup))?,
                other => other,
            },
        };
        while let Some((k, first)) = at {
            let inside = match upper {
                Bound::Unbounded => true,
                Bound::Included(u) => k <= u,
                Bound::Excluded(u) => k < u,
            };
            if !inside || !fixed_pages(&mut cursor, first, |b| f(k, b, width))? {
                break;
            }
            at = lmdb(cursor.step(Op::NextNoDup))?;
        }
        Ok(())
    }

    /// A reader of list `table` that keeps one LMDB cursor across many lookups: lookups of
    /// ascending keys mostly stay on the leaf page of the previous one (no descent from the
    /// root). Any overlay of the view is merged as in [`Self::list_each`].
    pub fn list_reader(&self, table: &Table) -> Result<ListReader<'t>, KvError> {
        require_list(table)?;
        let cursor = match self.merges_every_read(table) {
            true => None,
            false => Some(lmdb(Cursor::open(self.txn, table.db))?),
        };
        Ok(ListReader {
            view: *self,
            table: table.clone(),
            cursor,
        })
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

    /// How many values `key` has in a list table: LMDB's count of the key's values (O(1):
    /// it is kept in the key's sub-tree header) when the overlay holds no change to the key,
    /// else a walk ([`Self::list_count`]).
    pub fn list_len(&self, table: &Table, key: &[u8]) -> Result<u64, KvError> {
        require_list(table)?;
        if key.is_empty() {
            return Ok(0);
        }
        self.check_key(table, key)?;
        if self.patch_key(table, key).is_some() {
            return self.list_count(table, key);
        }
        let mut cursor = lmdb(Cursor::open(self.txn, table.db))?;
        Ok(match lmdb(cursor.seek_exact(key))? {
            Some(_) => lmdb(cursor.count())? as u64,
            None => 0,
        })
    }

    /// Whether `key` holds exactly `value` in a list table.
    pub fn list_contains(&self, table: &Table, key: &[u8], value: &[u8]) -> Result<bool, KvError> {
        require_list(table)?;
        if key.is_empty() {
            return Ok(false);
        }
        self.check_key(table, key)?;
        if let Some(TableOverlay::List(m)) = self.patch_key(table, key) {
            if let Some(present) = m.decided(key, value) {
                return Ok(present);
            }
            if m.is_cleared(key) {
                return Ok(false);
            }
        }
        if value.is_empty() || value.len() > crate::limits::MAX_KEY_BYTES {
            // LMDB rejects such values: none can be stored.
            return Ok(false);
        }
        // The key's first value at least `value` (one search within the key's sorted values).
        let mut cursor = lmdb(Cursor::open(self.txn, table.db))?;
        Ok(lmdb(cursor.seek_value(key, value))?.is_some_and(|(_, v)| v == value))
    }
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
