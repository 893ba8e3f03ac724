//! Where a batch's staged but not yet applied writes lie, so reads can tell whether they may
//! miss one.
//!
//! The committer applies the ops of requests that opted in (`WriteRequest::defers_apply`)
//! once per batch instead of once per request: one sorted pass puts a thousand requests'
//! fresh keys in key order, where per request each random key searched from the root
//! (W at batch 100: ~260K -> ~360K writes/s). A request still must see every earlier
//! request's writes, so every read of its [`View`](super::View) first asks [`Pending`]
//! whether unapplied ops may lie in the range it reads. If they may, the read fails with
//! [`KvError::PendingWrites`] and marks the hit; the committer then applies the pending ops,
//! drops what the request staged and runs its `prepare` again, now reading LMDB with
//! everything applied.
//!
//! The ranges are conservative (a false alarm only costs an early apply and a second
//! `prepare`), never the other way: per table, and per table and 8-byte key head (an entity
//! in EAV, an attribute and the start of a value in AVE), the least and greatest key's first
//! `BOUND_BYTES` bytes. A key `k` is at least `lower` (a prefix of the least key is no
//! greater than it) and at most `upper` extended by `0xff` bytes forever.

use std::cell::{Cell, RefCell};
use std::ops::Bound;

use rustc_hash::FxHashMap;

use super::chunked::Chunked;
use super::error::KvError;
use super::stage::{Mark, Stage};
use super::table::Table;

/// How many leading key bytes the bounds keep. Keys that differ only past them look alike
/// to the bounds, so a read of a new key among them counts as a hit: unique string values
/// that share a long beginning (URLs, prefixed ids) made every upsert's uniqueness check a
/// hit, each hit a second `prepare` and the next batches eager. With 32 bytes (an AVE key's
/// first 27 bytes of a string), 3,000 transactions of 100 entities whose unique `:u` is
/// `https://data.example.org/people/` and a 10-digit number ran at 1,577 transactions a
/// second against 2,924 with the bare number (2,827 against 4,980 queued at once); with 64,
/// 2,717 against 3,111 (4,440 against 5,108: the longer values' own cost), for 0.5% more
/// instructions under `Database::transact` at W batch 100 (callgrind, 20,000 writes).
const BOUND_BYTES: usize = 64;
/// How many leading key bytes name a bucket.
const HEAD_BYTES: usize = 8;
/// Lanes kept per table and head prefix (see `Pending::lanes`). Keys written in order (new
/// entity ids in EAV, a transaction's own entity, ascending values) go there, appended,
/// instead of into the hash map, whose inserts miss the cache once it is large: W sync at
/// batch 1000 spent ~10% of the committer's time recording heads. Requests that reach the
/// committer out of order (clients taking batches of keys from one counter) need a lane per
/// inversion: eight lanes take any order of eight clients' batches (a run goes to the lane
/// whose last run is the greatest below it, so the lanes needed are the longest descending
/// sequence); with four, a log of eight clients' batches still met the shared bounds of
/// the heads beyond them every few hundred transactions.
const LANES: usize = 8;

/// Runs of keys in ascending order, each with its bounds: heads ascending, and the runs of
/// one head disjoint and ascending (each run's keys above every key of the run before).
///
/// A head keeps its runs apart rather than one bounds over all of them: a read between two
/// runs (an upsert of keys that a request written out of order reads, while the requests
/// around it wait unapplied) must not count as a hit. One bounds per head made every such
/// read a hit, and a log applied with eight clients' batches slightly out of order spent
/// most of its commits applying early (1,565 against 4,492 transactions a second in order,
/// `examples/apply_edn.rs`).
#[derive(Default)]
struct Lane {
    /// The last run, kept beside the list: every run noted is compared with each lane's
    /// last, and reaching it through the chunks was ~10% of `widen_head` at W batch 100.
    last: Option<(u64, Span)>,
    runs: Chunked<(u64, Span)>,
}

/// The lanes of one table and head prefix, and how many runs in a row found no lane.
///
/// A prefix whose runs keep missing every lane (an attribute of random values, W's `:v`:
/// each value a head of its own) sends them to the scattered heads without trying the eight
/// lanes first, but for every `RETRY_EVERY`-th run, which tries them again: trying them was
/// ~540 instructions a run, most of `Pending::note_keys` at W batch 100 once the entities'
/// keys were noted as ranges. Where a run goes changes only how tight the bounds are.
#[derive(Default)]
struct Lanes {
    lanes: Vec<Lane>,
    misses: u32,
}

impl Lanes {
    /// Misses in a row after which runs skip the lanes.
    const SKIP_AFTER: u32 = 16;
    /// While skipping, every this many runs tries the lanes again.
    const RETRY_EVERY: u32 = 64;
}

/// Where a run lies against a lane's last run.
#[derive(PartialEq, Eq)]
enum Place {
    /// Above it: appended.
    After,
    /// Same head, keys among its keys: the two become one run.
    Meets,
    /// Below it, or no last run.
    Elsewhere,
}

impl Lane {
    fn place(&self, h: u64, span: &Span) -> Place {
        match &self.last {
            Some((lh, _)) if *lh < h => Place::After,
            Some((lh, ls)) if *lh == h => match (span.above(ls), ls.above(span)) {
                (true, _) => Place::After,
                (false, false) => Place::Meets,
                (false, true) => Place::Elsewhere,
            },
            _ => Place::Elsewhere,
        }
    }

    fn push(&mut self, h: u64, span: Span) {
        debug_assert!(self.is_empty() || self.place(h, &span) == Place::After);
        self.runs.push((h, span));
        self.last = Some((h, span));
    }

    /// Widens the last run over `span` (of its head, among its keys), then joins it with the
    /// runs before it it now reaches, so that the runs of a head stay apart.
    fn cover_last(&mut self, span: &Span) {
        let (h, mut run) = self.runs.pop().expect("a lane with a last run");
        run.cover(span);
        while let Some((ph, ps)) = self.runs.last_mut() {
            if *ph != h || run.above(ps) {
                break;
            }
            run.cover(ps);
            self.runs.pop();
        }
        self.runs.push((h, run));
        self.last = Some((h, run));
    }

    fn is_empty(&self) -> bool {
        self.last.is_none()
    }

    fn clear(&mut self) {
        self.runs.clear();
        self.last = None;
    }

    /// Whether a key of the read `[lo, hi]`, all of whose keys have head `h`, may be in one
    /// of the lane's runs: only the first run of `h` not wholly below `lo` can hold one.
    fn may_meet(&self, h: u64, lo: &[u8], hi: Hi<'_>) -> bool {
        let i = self.runs.partition_point(|(rh, s)| {
            *rh < h || (*rh == h && !at_most_extended(lo, s.upper.as_slice()))
        });
        self.runs
            .get(i)
            .is_some_and(|(rh, s)| *rh == h && s.may_meet(Lo::Key(lo), hi))
    }
}

/// At most the first `BOUND_BYTES` of a key.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Truncated {
    bytes: [u8; BOUND_BYTES],
    len: u8,
}

impl Truncated {
    fn of(key: &[u8]) -> Truncated {
        let n = key.len().min(BOUND_BYTES);
        let mut bytes = [0u8; BOUND_BYTES];
        bytes[..n].copy_from_slice(&key[..n]);
        Truncated {
            bytes,
            len: n as u8,
        }
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// Whether `key` is at most `upper` followed by `0xff` bytes without end: `key`'s first bytes
/// are no greater than `upper`'s.
fn at_most_extended(key: &[u8], upper: &[u8]) -> bool {
    let n = key.len().min(upper.len());
    key[..n] <= upper[..n]
}

/// Conservative bounds of some keys.
#[derive(Clone, Copy)]
struct Span {
    lower: Truncated,
    upper: Truncated,
}

impl Span {
    fn of(key: &[u8]) -> Span {
        let t = Truncated::of(key);
        Span { lower: t, upper: t }
    }

    fn widen(&mut self, key: &[u8]) {
        // Compared before copied: most keys fall inside, and building a `Truncated` for each
        // (zeroing and copying 32 bytes) was ~4% of all CPU samples at W async batch 100.
        let k = &key[..key.len().min(BOUND_BYTES)];
        debug_assert!(self.lower.as_slice() <= self.upper.as_slice());
        if k < self.lower.as_slice() {
            self.lower = Truncated::of(k);
        } else if k > self.upper.as_slice() {
            self.upper = Truncated::of(k);
        }
    }

    /// Widens it over every key `other` covers.
    fn cover(&mut self, other: &Span) {
        self.widen(other.lower.as_slice());
        self.widen(other.upper.as_slice());
    }

    /// Whether every key it covers is above every key `other` covers.
    fn above(&self, other: &Span) -> bool {
        !at_most_extended(self.lower.as_slice(), other.upper.as_slice())
    }

    /// Whether a key of the read `[lo, hi]` may be one of the keys.
    fn may_meet(&self, lo: Lo<'_>, hi: Hi<'_>) -> bool {
        let above_lower = match hi {
            // Conservative for an exclusive end: as if it were included.
            Hi::Key(h) | Hi::Below(h) => h >= self.lower.as_slice(),
            Hi::Unbounded => true,
        };
        let below_upper = match lo {
            Lo::Key(l) => at_most_extended(l, self.upper.as_slice()),
            Lo::Unbounded => true,
        };
        above_lower && below_upper
    }
}

/// The low end of a read (inclusive; an exclusive bound is widened to inclusive).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Lo<'a> {
    Key(&'a [u8]),
    Unbounded,
}

/// The high end of a read (inclusive).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Hi<'a> {
    Key(&'a [u8]),
    /// Every key less than this one.
    Below(&'a [u8]),
    Unbounded,
}

impl<'a> Lo<'a> {
    pub(crate) fn of(b: Bound<&'a [u8]>) -> Lo<'a> {
        match b {
            Bound::Included(k) | Bound::Excluded(k) => Lo::Key(k),
            Bound::Unbounded => Lo::Unbounded,
        }
    }

    /// Whether `key` is at or above this bound.
    pub(crate) fn admits(&self, key: &[u8]) -> bool {
        match self {
            Lo::Key(l) => key >= *l,
            Lo::Unbounded => true,
        }
    }
}

impl<'a> Hi<'a> {
    pub(crate) fn of(b: Bound<&'a [u8]>) -> Hi<'a> {
        match b {
            Bound::Included(k) => Hi::Key(k),
            Bound::Excluded(k) => Hi::Below(k),
            Bound::Unbounded => Hi::Unbounded,
        }
    }

    /// Whether `key` is at or below this bound.
    pub(crate) fn admits(&self, key: &[u8]) -> bool {
        match self {
            Hi::Key(h) => key <= *h,
            Hi::Below(h) => key < *h,
            Hi::Unbounded => true,
        }
    }
}

/// The head every key of the read `[lo, hi]` has, if they all have one: keys between two keys
/// that share their first 8 bytes share them too, shorter keys sort outside, and the least
/// key with a greater head is that head's 8 bytes alone.
fn one_head(lo: Lo<'_>, hi: Hi<'_>) -> Option<u64> {
    let Lo::Key(l) = lo else { return None };
    let a = head(l)?;
    let next = a.checked_add(1).map(u64::to_be_bytes);
    let inside = match hi {
        Hi::Key(h) => head(h) == Some(a) || next.is_some_and(|n| h < &n[..]),
        Hi::Below(h) => head(h) == Some(a) || next.is_some_and(|n| h <= &n[..]),
        Hi::Unbounded => false,
    };
    inside.then_some(a)
}

fn head(key: &[u8]) -> Option<u64> {
    let h: [u8; HEAD_BYTES] = key.get(..HEAD_BYTES)?.try_into().ok()?;
    Some(u64::from_be_bytes(h))
}

/// The bounds of the heads that fit no lane (W's AVE keys of random values), indexed only
/// once a read needs them.
///
/// Every head's bounds are also folded into one span per table and 4-byte key prefix (an
/// attribute in AVE), which alone settles most reads: a read the span misses cannot meet one of
/// its heads. Until a read falls inside such a span, heads are only appended to a list; the
/// first read that does builds the per-head map from the list, and from then until `clear`
/// heads go straight into the map. A batch whose reads never enter the scattered heads' ranges
/// (W: random `:v` values written, ascending `:k` values read) then never pays for a map
/// probe a head: with every head in the map, the probes missed the cache and took ~9% of the
/// committer's time at W batch 1000, and ~5% of the applier's (`Unapplied::refold_after`).
#[derive(Default)]
struct Scattered {
    /// Per (table id, first 4 bytes of the head): bounds of every head under it.
    coarse: FxHashMap<(u32, u32), Span>,
    /// Heads not yet in `fine`, as noted.
    listed: RefCell<Chunked<((u32, u64), Span)>>,
    /// Per (table id, head): its bounds; holds every head once `indexed`.
    fine: RefCell<FxHashMap<(u32, u64), Span>>,
    /// Whether `fine` is built (a read needed it since the last `clear`).
    indexed: Cell<bool>,
}

/// A head's first 4 bytes (the attribute of an AVE key, the high half of an EAV entity).
fn prefix(head: u64) -> u32 {
    (head >> 32) as u32
}

/// The value a short list of pairs keeps for `key`, added (empty) when missing: a transaction
/// touches a handful of tables and attributes, which a scan finds sooner than a hash.
fn entry<K: PartialEq, V: Default>(pairs: &mut Vec<(K, V)>, key: K) -> &mut V {
    let i = match pairs.iter().position(|(k, _)| *k == key) {
        Some(i) => i,
        None => {
            pairs.push((key, V::default()));
            pairs.len() - 1
        }
    };
    &mut pairs[i].1
}

/// Adds `span` to the bounds `map` keeps for `at`.
fn cover_in<K: std::hash::Hash + Eq>(map: &mut FxHashMap<K, Span>, at: K, span: Span) {
    map.entry(at).and_modify(|s| s.cover(&span)).or_insert(span);
}

impl Scattered {
    fn add(&mut self, at: (u32, u64), span: Span) {
        cover_in(&mut self.coarse, (at.0, prefix(at.1)), span);
        match self.indexed.get() {
            true => cover_in(self.fine.get_mut(), at, span),
            false => self.listed.get_mut().push((at, span)),
        }
    }

    /// Whether a key of the read `[lo, hi]`, all of whose keys have head `h`, may be one of
    /// the heads' keys.
    fn may_meet(&self, table: u32, h: u64, lo: Lo<'_>, hi: Hi<'_>) -> bool {
        let Some(c) = self.coarse.get(&(table, prefix(h))) else {
            return false;
        };
        if !c.may_meet(lo, hi) {
            return false;
        }
        if !self.indexed.replace(true) {
            let mut fine = self.fine.borrow_mut();
            let mut listed = self.listed.borrow_mut();
            for &(at, span) in listed.iter() {
                cover_in(&mut fine, at, span);
            }
            listed.clear();
        }
        self.fine
            .borrow()
            .get(&(table, h))
            .is_some_and(|s| s.may_meet(lo, hi))
    }

    fn clear(&mut self) {
        self.coarse.clear();
        self.listed.get_mut().clear();
        self.fine.get_mut().clear();
        self.indexed.set(false);
    }
}

impl std::fmt::Debug for Scattered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scattered")
            .field("prefixes", &self.coarse.len())
            .field("listed", &self.listed.borrow().len())
            .field("indexed", &self.fine.borrow().len())
            .finish()
    }
}

/// Keys that are a head and nothing more (an entity in EAV and in the history index), as
/// ranges of consecutive heads per table, ascending.
///
/// A transaction's new entities take consecutive ids, so their EAV and history keys arrive as
/// one ascending run of heads, two or more keys each. Noted as runs of one head each, every
/// entity cost a lane search and a 74-byte run, and the noting was a quarter of the
/// committer's instructions at W batch 100 (callgrind, 2026-12-05: 2,900 of 11,400 a write).
/// A range holds only heads that were written, every one of them, so it is as exact as the
/// runs were: a read of a head no write touched never falls inside one.
#[derive(Default)]
struct Whole {
    /// Per table id and head prefix (the user and the transaction partitions apart, as a
    /// transaction's entities and its own entity alternate): ranges `(first, last)` of heads,
    /// ascending, disjoint and not adjacent.
    ranges: Vec<((u32, u32), Chunked<(u64, u64)>)>,
}

impl Whole {
    /// Adds the heads `first..=last` of `table` (of one prefix), if they lie past the last
    /// range of their prefix (or reach into it from its start on); `false` leaves them to the
    /// caller.
    fn append(&mut self, table: u32, first: u64, last: u64) -> bool {
        debug_assert!(first <= last && prefix(first) == prefix(last));
        let ranges = entry(&mut self.ranges, (table, prefix(first)));
        match ranges.last_mut() {
            // Adjacent to or overlapping the last range, not below its start: one range.
            Some((a, b)) if first >= *a && first <= b.saturating_add(1) => {
                *b = (*b).max(last);
                true
            }
            Some((_, b)) if first <= *b => false,
            _ => {
                ranges.push((first, last));
                true
            }
        }
    }

    /// Whether head `h` of `table` was written as a key of its own.
    fn holds(&self, table: u32, h: u64) -> bool {
        let Some((_, ranges)) = self.ranges.iter().find(|(t, _)| *t == (table, prefix(h))) else {
            return false;
        };
        let i = ranges.partition_point(|(_, b)| *b < h);
        ranges.get(i).is_some_and(|(a, _)| *a <= h)
    }

    fn clear(&mut self) {
        self.ranges.iter_mut().for_each(|(_, r)| r.clear());
    }
}

/// The unapplied ops of a batch, as key bounds; see the module documentation.
#[derive(Default)]
pub(crate) struct Pending {
    /// The first unapplied op of the stage, when there is one.
    from: Option<Mark>,
    /// Per table id: bounds of all its unapplied keys.
    tables: Vec<(u32, Span)>,
    /// Per table id and head prefix (an attribute in AVE): up to `LANES` lanes of the runs of
    /// its unapplied keys of at least `HEAD_BYTES` (a head may sit in several places: a read
    /// consults all of them). Per prefix, not per table: a transaction writes its attributes'
    /// AVE keys one attribute after the other, so in one lane per table an attribute of
    /// random values (W's `:v`) put its heads after every run of the attribute before it, and
    /// that attribute's next run found no lane.
    lanes: Vec<((u32, u32), Lanes)>,
    /// The same, for heads that fit no lane.
    scattered: Scattered,
    /// Keys that are a head alone, as ranges of heads.
    whole: Whole,
    /// A read met the bounds since the committer last looked.
    hit: Cell<bool>,
}

impl Pending {
    /// Where the unapplied ops start, if any are.
    pub(crate) fn from(&self) -> Option<Mark> {
        self.from
    }

    /// Records the stage's ops from `from` on (a request's, just staged) as unapplied.
    pub(crate) fn note(&mut self, stage: &Stage, from: Mark) {
        if stage.mark().ops() == from.ops() {
            return;
        }
        self.from.get_or_insert(from);
        self.note_keys(stage.keys_from(from));
    }

    /// Records `keys` as unapplied. A run of keys with one head (an entity's EAV entries, an
    /// attribute's ascending values in AVE) costs one record, not one per key.
    pub(crate) fn note_keys<'k>(&mut self, keys: impl Iterator<Item = (u32, &'k [u8])>) {
        let mut run: Option<((u32, u64), Span)> = None;
        // Consecutive heads written as whole keys: (table, first, last).
        let mut heads: Option<(u32, u64, u64)> = None;
        for (table, key) in keys {
            if key.len() == HEAD_BYTES {
                let h = head(key).expect("a key of a head's length");
                match &mut heads {
                    Some((t, _, last))
                        if *t == table
                            && (h == *last
                                || (Some(h) == last.checked_add(1)
                                    && prefix(h) == prefix(*last))) =>
                    {
                        *last = h
                    }
                    _ => {
                        if let Some(r) = heads.replace((table, h, h)) {
                            self.note_heads(r);
                        }
                    }
                }
                continue;
            }
            self.widen_table(table, key);
            let Some(h) = head(key) else { continue };
            match &mut run {
                Some((at, span)) if *at == (table, h) => span.widen(key),
                _ => {
                    if let Some((at, span)) = run.replace(((table, h), Span::of(key))) {
                        self.widen_head(at, span);
                    }
                }
            }
        }
        if let Some((at, span)) = run {
            self.widen_head(at, span);
        }
        if let Some(r) = heads {
            self.note_heads(r);
        }
    }

    fn widen_table(&mut self, table: u32, key: &[u8]) {
        match self.tables.iter_mut().find(|(t, _)| *t == table) {
            Some((_, span)) => span.widen(key),
            None => self.tables.push((table, Span::of(key))),
        }
    }

    /// Notes the whole-key heads `first..=last` of `table`: as a range when they come after
    /// the table's others, else one run each (an update of older entities).
    fn note_heads(&mut self, (table, first, last): (u32, u64, u64)) {
        self.widen_table(table, &first.to_be_bytes());
        self.widen_table(table, &last.to_be_bytes());
        if self.whole.append(table, first, last) {
            return;
        }
        for h in first..=last {
            self.widen_head((table, h), Span::of(&h.to_be_bytes()));
        }
    }

    fn widen_head(&mut self, at: (u32, u64), span: Span) {
        let (table, h) = at;
        let set = entry(&mut self.lanes, (table, prefix(h)));
        if set.misses >= Lanes::SKIP_AFTER && set.misses % Lanes::RETRY_EVERY != 0 {
            set.misses = set.misses.wrapping_add(1);
            self.scattered.add(at, span);
            return;
        }
        let placed = Self::place_in_lanes(&mut set.lanes, h, span);
        set.misses = match placed {
            true => 0,
            false => set.misses.wrapping_add(1),
        };
        if !placed {
            self.scattered.add(at, span);
        }
    }

    /// Puts the run `(h, span)` in one of `lanes` (the lane that can take it whose last run is
    /// the greatest keeps the lanes tight), or a new one while there are fewer than `LANES`;
    /// `false` when none can take it.
    fn place_in_lanes(lanes: &mut Vec<Lane>, h: u64, span: Span) -> bool {
        let mut best: Option<(usize, Place)> = None;
        for (i, l) in lanes.iter().enumerate() {
            match l.place(h, &span) {
                Place::Meets => {
                    best = Some((i, Place::Meets));
                    break;
                }
                Place::After => {
                    let greater = |b: &Lane| {
                        let (x, y) = (l.last.as_ref(), b.last.as_ref());
                        x.map(|(h, s)| (h, s.lower.as_slice()))
                            > y.map(|(h, s)| (h, s.lower.as_slice()))
                    };
                    if best.as_ref().is_none_or(|(b, _)| greater(&lanes[*b])) {
                        best = Some((i, Place::After));
                    }
                }
                Place::Elsewhere => {}
            }
        }
        match best {
            Some((i, Place::Meets)) => {
                lanes[i].cover_last(&span);
                return true;
            }
            Some((i, _)) => {
                lanes[i].push(h, span);
                return true;
            }
            None => {}
        }
        if let Some(l) = lanes.iter_mut().find(|l| l.is_empty()) {
            l.push(h, span);
            return true;
        }
        if lanes.len() < LANES {
            let mut lane = Lane::default();
            lane.push(h, span);
            lanes.push(lane);
            return true;
        }
        false
    }

    /// Whether no key is recorded (a view need not consult it).
    pub(crate) fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Counts the stage's ops from `from` on as unapplied without recording their bounds: for
    /// ops written before any further read.
    pub(crate) fn include(&mut self, from: Mark) {
        self.from.get_or_insert(from);
    }

    /// Everything noted has been applied (or dropped with its batch).
    pub(crate) fn clear(&mut self) {
        self.from = None;
        self.tables.clear();
        // The lanes keep their chunks (regrown each time, they were ~1% of the committer's
        // time at W batch 1000).
        for (_, set) in &mut self.lanes {
            set.lanes.iter_mut().for_each(Lane::clear);
        }
        self.scattered.clear();
        self.whole.clear();
        self.hit.set(false);
    }

    /// Whether a read met unapplied ops since the last call (and forgets it).
    pub(crate) fn take_hit(&self) -> bool {
        self.hit.replace(false)
    }

    /// Fails a read of `table` over `[lo, hi]` that may miss an unapplied write.
    pub(crate) fn check(&self, table: &Table, lo: Lo<'_>, hi: Hi<'_>) -> Result<(), KvError> {
        self.check_id(table.id, lo, hi)
    }

    fn check_id(&self, table: u32, lo: Lo<'_>, hi: Hi<'_>) -> Result<(), KvError> {
        let Some((_, span)) = self.tables.iter().find(|(t, _)| *t == table) else {
            return Ok(());
        };
        if !span.may_meet(lo, hi) {
            return Ok(());
        }
        let meets = match one_head(lo, hi) {
            Some(h) => {
                let Lo::Key(l) = lo else {
                    unreachable!("a read within one head has a low key")
                };
                let in_lane = |lane: &Lane| lane.may_meet(h, l, hi);
                let lanes = self.lanes.iter().find(|(t, _)| *t == (table, prefix(h)));
                // A whole-key head is the least key of its head: a read meets it only when it
                // starts there (conservative at the high end, as the spans are).
                (l.len() == HEAD_BYTES && self.whole.holds(table, h))
                    || lanes.is_some_and(|(_, ls)| ls.lanes.iter().any(in_lane))
                    || self.scattered.may_meet(table, h, lo, hi)
            }
            None => true,
        };
        if meets {
            self.hit.set(true);
            return Err(KvError::PendingWrites);
        }
        Ok(())
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("tables", &self.tables.len())
            .field("lanes", &self.lanes.len())
            .field("scattered", &self.scattered)
            .finish()
    }
}

#[cfg(test)]
mod view_tests {
    //! A committer's `View` with pending writes, read by read: a read that may miss one fails,
    //! one that cannot reads LMDB.
    use super::*;
    use crate::kv::{Direction, EnvOptions, Environment, KvOp, TableKind, View};

    /// Runs `read` on a view of a table holding "b" and "d", with `waiting` staged over it.
    fn read_with_pending<T>(
        waiting: &[&[u8]],
        read: impl FnOnce(View<'_>, &Table) -> Result<T, KvError>,
    ) -> Result<T, KvError> {
        let dir = tempfile::tempdir().unwrap();
        // Reads LMDB itself below: the writes must be there, not in an unapplied group.
        let options = EnvOptions {
            log_apply_later: false,
            ..EnvOptions::default()
        };
        let env = Environment::open(dir.path(), options).unwrap();
        let table = env.table("t", TableKind::Plain).unwrap();
        env.transact_kv(vec![
            KvOp::put(&table, &b"b"[..], &b"1"[..]),
            KvOp::put(&table, &b"d"[..], &b"2"[..]),
        ])
        .unwrap();
        let mut stage = Stage::default();
        let from = stage.mark();
        for k in waiting {
            stage.put(&table, k, b"x");
        }
        let mut pending = Pending::default();
        pending.note(&stage, from);
        let txn = env.shared().core.env.write_txn().unwrap();
        let out = read(View::new(&txn).with_pending(&pending), &table);
        assert_eq!(
            out.is_err(),
            pending.take_hit(),
            "an error is a hit, and only that"
        );
        txn.abort();
        out
    }

    fn missed<T>(r: Result<T, KvError>) -> bool {
        matches!(r, Err(KvError::PendingWrites))
    }

    #[test]
    fn each_read_fails_exactly_when_a_waiting_key_may_change_it() {
        use std::ops::Bound::{Excluded, Included, Unbounded};
        // (waiting keys, read, must fail)
        type Read = fn(View<'_>, &Table) -> Result<(), KvError>;
        let rows: &[(&[&[u8]], Read, bool)] = &[
            (&[b"e"], |v, t| v.last(t).map(drop), true),
            (&[b"a"], |v, t| v.last(t).map(drop), false),
            (&[b"a"], |v, t| v.first(t).map(drop), true),
            (&[b"e"], |v, t| v.first(t).map(drop), false),
            (&[b"c"], |v, t| v.get(t, b"c").map(drop), true),
            (&[b"e"], |v, t| v.get(t, b"c").map(drop), false),
            (
                &[b"c"],
                |v, t| {
                    v.range(t, Included(b"b"), Included(b"d"), Direction::Forward)
                        .map(drop)
                },
                true,
            ),
            (
                &[b"e"],
                |v, t| {
                    v.range(t, Included(b"b"), Excluded(b"d"), Direction::Forward)
                        .map(drop)
                },
                false,
            ),
            (
                &[b"e"],
                |v, t| {
                    v.range(t, Included(b"b"), Unbounded, Direction::Forward)
                        .map(drop)
                },
                true,
            ),
            (&[b"e"], |v, t| v.len(t).map(drop), true),
            (&[], |v, t| v.len(t).map(drop), false),
        ];
        for (i, (waiting, read, fails)) in rows.iter().enumerate() {
            assert_eq!(missed(read_with_pending(waiting, read)), *fails, "row {i}");
        }
    }

    #[test]
    fn reads_that_cannot_miss_answer_from_lmdb() {
        let last = read_with_pending(&[b"a"], |v, t| Ok(v.last(t)?.map(|(k, _)| k.to_vec())));
        assert_eq!(last.unwrap(), Some(b"d".to_vec()));
        let first = read_with_pending(&[b"e"], |v, t| Ok(v.first(t)?.map(|(k, _)| k.to_vec())));
        assert_eq!(first.unwrap(), Some(b"b".to_vec()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meets(keys: &[&[u8]], lo: Lo<'_>, hi: Hi<'_>) -> bool {
        let mut span = Span::of(keys[0]);
        for k in &keys[1..] {
            span.widen(k);
        }
        span.may_meet(lo, hi)
    }

    /// The naive answer: does any key lie in the read?
    fn truly_meets(keys: &[&[u8]], lo: Lo<'_>, hi: Hi<'_>) -> bool {
        keys.iter().any(|k| {
            let above = match lo {
                Lo::Key(l) => *k >= l,
                Lo::Unbounded => true,
            };
            let below = match hi {
                Hi::Key(h) => *k <= h,
                Hi::Below(h) => *k < h,
                Hi::Unbounded => true,
            };
            above && below
        })
    }

    #[test]
    fn bounds_are_never_narrower_than_the_keys() {
        // Two keys longer than the bounds keep, differing only past them.
        let long_a = [1u8; BOUND_BYTES + 4];
        let mut long_b = long_a;
        long_b[BOUND_BYTES + 3] = 9;
        // Values that share a long beginning and differ within the kept bytes.
        let url = |n: u8| {
            let mut k = b"\0\0\0\x65\x09https://data.example.org/people/00000000".to_vec();
            k.push(b'0' + n);
            k
        };
        let (url_1, url_2, url_3) = (url(1), url(2), url(3));
        assert!(url_3.len() < BOUND_BYTES);
        let table: &[(&[&[u8]], Lo, Hi, bool)] = &[
            (&[&url_1, &url_2], Lo::Key(&url_3), Hi::Key(&url_3), false),
            (&[&url_1, &url_3], Lo::Key(&url_2), Hi::Key(&url_2), true), // inside the span
            (&[b"b"], Lo::Key(b"a"), Hi::Key(b"c"), true),
            (&[b"b"], Lo::Key(b"c"), Hi::Key(b"d"), false),
            (&[b"b"], Lo::Key(b"a"), Hi::Key(b"a\xff"), false),
            (&[b"b"], Lo::Key(b"b"), Hi::Key(b"b"), true),
            (&[b"ab"], Lo::Unbounded, Hi::Below(b"b"), true),
            (&[b"b"], Lo::Unbounded, Hi::Below(b"b"), true), // conservative: end as if included
            (&[b"c"], Lo::Unbounded, Hi::Below(b"b"), false),
            (&[b"a", b"z"], Lo::Key(b"m"), Hi::Key(b"n"), true), // conservative: inside the span
            (&[&long_b], Lo::Key(&long_a), Hi::Key(&long_a), true), // same kept bytes
            (&[&long_a], Lo::Key(&long_b), Hi::Unbounded, true),
            (&[b"k"], Lo::Unbounded, Hi::Unbounded, true),
        ];
        for (i, (keys, lo, hi, want)) in table.iter().enumerate() {
            assert_eq!(meets(keys, *lo, *hi), *want, "row {i}");
            if truly_meets(keys, *lo, *hi) {
                assert!(meets(keys, *lo, *hi), "row {i}: narrower than the keys");
            }
        }
    }

    #[test]
    fn random_reads_through_the_head_buckets_are_flagged_when_they_meet_a_key() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        // Keys in neighbouring heads (and some shorter than a head), so reads inside one head,
        // across heads and across tables all occur; more heads than a table has lanes, noted
        // in several calls, so heads land in lanes, beyond them and in both.
        let heads: Vec<[u8; 8]> = (0..12u8)
            .map(|i| match i {
                0 => [0; 8],
                11 => [255; 8],
                // Two 4-byte prefixes among them: scattered heads are first settled by prefix.
                i => [0, 0, 0, i / 6, 0, 0, i / 4, i],
            })
            .collect();
        let key = |rng: &mut rand::rngs::StdRng| -> Vec<u8> {
            if rng.random_bool(0.1) {
                return (0..rng.random_range(0..8))
                    .map(|_| rng.random_range(0..3u8) * 127)
                    .collect();
            }
            let mut k = heads[rng.random_range(0..heads.len())].to_vec();
            k.extend((0..rng.random_range(0..12)).map(|_| rng.random_range(0..3u8) * 127));
            k
        };
        // Reused after `clear` half the time, as the committer reuses it (its lanes then start
        // out empty but allocated).
        let mut pending = Pending::default();
        for _ in 0..20_000 {
            let keys: Vec<(u32, Vec<u8>)> = (0..rng.random_range(1..40))
                .map(|_| (rng.random_range(0..2u32), key(&mut rng)))
                .collect();
            match rng.random_bool(0.5) {
                true => pending.clear(),
                false => pending = Pending::default(),
            }
            // Reads between the calls too: the scattered heads are indexed by the first read
            // that needs them and kept indexed by the calls after it.
            let mut rest = &keys[..];
            let mut noted = 0;
            while !rest.is_empty() {
                let (now, later) = rest.split_at(rng.random_range(1..=rest.len()));
                pending.note_keys(now.iter().map(|(t, k)| (*t, k.as_slice())));
                noted += now.len();
                rest = later;
                if rest.is_empty() || rng.random_bool(0.5) {
                    read_and_check(&mut rng, &key, &pending, &keys[..noted]);
                }
            }
        }
    }

    /// A random read of `pending` noted with `keys`: flagged if it truly meets one of them.
    fn read_and_check(
        rng: &mut rand::rngs::StdRng,
        key: &dyn Fn(&mut rand::rngs::StdRng) -> Vec<u8>,
        pending: &Pending,
        keys: &[(u32, Vec<u8>)],
    ) {
        use rand::RngExt;
        let a = key(rng);
        // Half the reads stay inside one head, where the per-head bounds decide.
        let b = match a.len() >= HEAD_BYTES && rng.random_bool(0.5) {
            true => {
                let mut b = a[..HEAD_BYTES].to_vec();
                b.extend((0..rng.random_range(0..12)).map(|_| rng.random_range(0..3u8) * 127));
                b
            }
            false => key(rng),
        };
        let (lo, hi) = random_read(rng, &a, &b);
        let table = rng.random_range(0..2u32);
        let ours: Vec<&[u8]> = keys
            .iter()
            .filter(|(t, _)| *t == table)
            .map(|(_, k)| k.as_slice())
            .collect();
        if truly_meets(&ours, lo, hi) {
            assert!(
                pending.check_id(table, lo, hi).is_err(),
                "keys {ours:?} read {a:?}..{b:?}"
            );
            assert!(pending.take_hit());
        } else {
            pending.take_hit();
        }
    }

    /// One head's runs, noted by requests out of order (as eight clients' batches reach a
    /// log): a read between two runs is no hit, a read inside one is, and a run that reaches
    /// into others joins them.
    #[test]
    fn the_runs_of_one_head_stay_apart() {
        // The key of value `v` under one head (an attribute and the start of a value in AVE).
        let key = |v: u16| -> Vec<u8> {
            let mut k = vec![0, 0, 0, 7, 0x80, 0, 0, 0];
            k.extend(v.to_be_bytes());
            k
        };
        // (runs noted, one request each, as (first, last) value; reads as (lo, hi, a hit?))
        type Row = (&'static [(u16, u16)], &'static [(u16, u16, bool)]);
        let rows: &[Row] = &[
            // In order: each run after the last.
            (
                &[(10, 19), (20, 29), (40, 49)],
                &[
                    (30, 39, false),
                    (15, 15, true),
                    (41, 60, true),
                    (0, 9, false),
                    (50, 90, false),
                ],
            ),
            // Out of order: a run below the last goes to another lane.
            (
                &[(40, 49), (10, 19), (60, 69), (20, 29)],
                &[
                    (30, 39, false),
                    (50, 59, false),
                    (70, 80, false),
                    (25, 25, true),
                    (45, 45, true),
                ],
            ),
            // A run over two earlier ones in one lane joins them and what lies between.
            (
                &[(10, 19), (30, 39), (50, 59), (15, 35)],
                &[(22, 24, true), (40, 49, false)],
            ),
            // More inversions than lanes: the rest share bounds per head (conservative).
            (
                &[
                    (100, 109),
                    (90, 99),
                    (80, 89),
                    (70, 79),
                    (60, 69),
                    (50, 59),
                    (40, 49),
                    (30, 39),
                    (20, 29),
                    (0, 5),
                ],
                &[(11, 15, true), (110, 119, false), (31, 31, true)],
            ),
        ];
        for (i, (runs, reads)) in rows.iter().enumerate() {
            let mut pending = Pending::default();
            for &(a, b) in *runs {
                let keys = [key(a), key(b)];
                pending.note_keys(keys.iter().map(|k| (1, k.as_slice())));
            }
            for (j, &(lo, hi, want)) in reads.iter().enumerate() {
                let (lo, hi) = (key(lo), key(hi));
                let hit = pending.check_id(1, Lo::Key(&lo), Hi::Key(&hi)).is_err();
                assert_eq!(hit, want, "row {i}, read {j}");
                pending.take_hit();
            }
        }
    }

    /// Keys that are a head alone (EAV's and the history's entity keys), noted call by call:
    /// the heads written, and only those, are hits, whether they came in order (ranges) or
    /// not (runs).
    #[test]
    fn whole_key_heads_are_hits_exactly_where_written() {
        // (calls, each a list of heads noted in order; heads read, with whether each is a hit;
        // whether every head came in order, so that all are ranges: a run's bounds also take
        // in the longer keys of its head, conservatively)
        type Row = (&'static [&'static [u64]], &'static [(u64, bool)], bool);
        let rows: &[Row] = &[
            // One transaction's new entities, two keys each.
            (
                &[&[5, 5, 6, 6, 7, 7]],
                &[(4, false), (5, true), (7, true), (8, false)],
                true,
            ),
            // The next transactions: adjacent, then past a gap.
            (
                &[&[5, 6], &[7, 8], &[11, 12]],
                &[(8, true), (9, false), (10, false), (11, true), (13, false)],
                true,
            ),
            // Each transaction's entities, then its own entity (another prefix): two ranges.
            (
                &[&[5, 6, 7, 1 << 44], &[8, 9, (1 << 44) + 1]],
                &[
                    (9, true),
                    (10, false),
                    (1 << 44, true),
                    ((1 << 44) + 1, true),
                ],
                true,
            ),
            // An update of an older entity: below the last range, noted as a run.
            (
                &[&[10, 11, 12], &[3], &[20]],
                &[(3, true), (4, false), (12, true), (13, false), (20, true)],
                false,
            ),
            // Down inside one call, and back over a range's start.
            (
                &[&[9, 8, 7], &[7, 8, 9, 10]],
                &[(6, false), (7, true), (8, true), (10, true), (11, false)],
                false,
            ),
        ];
        for (i, (calls, reads, ranges)) in rows.iter().enumerate() {
            let mut pending = Pending::default();
            for heads in *calls {
                let keys: Vec<[u8; 8]> = heads.iter().map(|h| h.to_be_bytes()).collect();
                pending.note_keys(keys.iter().map(|k| (3, &k[..])));
            }
            for &(h, want) in *reads {
                let k = h.to_be_bytes();
                // The key alone, and a range from it over longer keys of its head.
                let mut longer = k.to_vec();
                longer.push(0xff);
                for hi in [Hi::Key(&k[..]), Hi::Key(&longer)] {
                    let hit = pending.check_id(3, Lo::Key(&k), hi).is_err();
                    assert_eq!(hit, want, "row {i}, head {h}");
                    pending.take_hit();
                }
                // Longer keys of the head than the head itself: no write there.
                let after = pending
                    .check_id(3, Lo::Key(&longer), Hi::Key(&longer))
                    .is_err();
                assert!(
                    !(after && *ranges),
                    "row {i}, head {h}: only the key itself was written"
                );
                pending.take_hit();
            }
        }
    }

    /// Runs of random heads under one prefix (an attribute of random values): once they keep
    /// missing the lanes they go to the scattered heads directly, and every key noted is
    /// still a hit, before and after.
    #[test]
    fn random_heads_past_the_lanes_are_each_found() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let key = |h: u32, tail: u8| -> Vec<u8> {
            let mut k = vec![0, 0, 0, 9];
            k.extend(h.to_be_bytes());
            k.push(tail);
            k
        };
        let mut pending = Pending::default();
        let mut noted = Vec::new();
        let mut skipped = false;
        for _ in 0..3_000 {
            let k = key(rng.random_range(0..u32::MAX), rng.random_range(0..4u8));
            pending.note_keys(std::iter::once((2, k.as_slice())));
            noted.push(k);
            skipped |= pending.lanes[0].1.misses > Lanes::SKIP_AFTER;
        }
        assert!(skipped, "the runs came to skip the lanes");
        for k in &noted {
            assert!(
                pending.check_id(2, Lo::Key(k), Hi::Key(k)).is_err(),
                "{k:?}"
            );
            pending.take_hit();
        }
        // A head none of them has: no hit (their bounds stay per head).
        let absent = (0..u32::MAX)
            .map(|h| key(h, 0))
            .find(|k| !noted.iter().any(|n| n[..8] == k[..8]))
            .expect("an unused head");
        assert!(pending
            .check_id(2, Lo::Key(&absent), Hi::Key(&absent))
            .is_ok());
    }

    /// Scattered heads, step by step: noted before and after the first read that indexes them,
    /// each read answered by its own head's bounds.
    #[test]
    fn scattered_heads_answer_before_and_after_they_are_indexed() {
        let key = |prefix: u32, rest: u32, tail: &[u8]| -> Vec<u8> {
            let mut k = prefix.to_be_bytes().to_vec();
            k.extend(rest.to_be_bytes());
            k.extend(tail);
            k
        };
        let head = |k: &[u8]| super::head(k).unwrap();
        // Note this key, or read [lo, hi] expecting a hit (and the heads indexed or not after).
        enum Step {
            Note(Vec<u8>),
            Read(Vec<u8>, Vec<u8>, bool, bool),
        }
        use Step::{Note, Read};
        let steps = [
            Note(key(7, 1, b"m")),
            Note(key(7, 9, b"m")),
            // Another prefix: settled by the prefix bounds, nothing indexed.
            Read(key(8, 1, b"a"), key(8, 1, b"z"), false, false),
            // Below the prefix's bounds: settled by them too.
            Read(key(7, 1, b"a"), key(7, 1, b"b"), false, false),
            // Inside them, in a head no key has: indexes, misses.
            Read(key(7, 5, b"a"), key(7, 5, b"z"), false, true),
            Read(key(7, 1, b"a"), key(7, 1, b"z"), true, true),
            // Noted after indexing: found by its own head.
            Note(key(7, 5, b"q")),
            Read(key(7, 5, b"p"), key(7, 5, b"r"), true, true),
            Read(key(7, 5, b"r"), key(7, 5, b"s"), false, true),
            Read(key(7, 3, b"a"), key(7, 3, b"z"), false, true),
        ];
        let mut s = Scattered::default();
        for (i, step) in steps.iter().enumerate() {
            match step {
                Note(k) => s.add((1, head(k)), Span::of(k)),
                Read(lo, hi, want, indexed) => {
                    let got = s.may_meet(1, head(lo), Lo::Key(lo), Hi::Key(hi));
                    assert_eq!((got, s.indexed.get()), (*want, *indexed), "step {i}");
                }
            }
        }
        s.clear();
        assert!(!s.indexed.get());
        assert!(!s.may_meet(1, head(&key(7, 5, b"q")), Lo::Unbounded, Hi::Unbounded));
    }

    /// A read from `a` (or from the start) up to `b` (inclusive, exclusive, or to the end).
    fn random_read<'a>(rng: &mut rand::rngs::StdRng, a: &'a [u8], b: &'a [u8]) -> (Lo<'a>, Hi<'a>) {
        use rand::RngExt;
        let lo = if rng.random_bool(0.1) {
            Lo::Unbounded
        } else {
            Lo::Key(a)
        };
        let hi = match rng.random_range(0..4) {
            0 => Hi::Key(b),
            1 | 2 => Hi::Below(b),
            _ => Hi::Unbounded,
        };
        (lo, hi)
    }

    #[test]
    fn random_reads_that_meet_a_key_are_always_flagged() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let word = |rng: &mut rand::rngs::StdRng| -> Vec<u8> {
            let n = rng.random_range(0..24);
            (0..n).map(|_| rng.random_range(0..4u8) * 80).collect()
        };
        for _ in 0..20_000 {
            let keys: Vec<Vec<u8>> = (0..rng.random_range(1..5))
                .map(|_| word(&mut rng))
                .collect();
            let keys: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
            let (a, b) = (word(&mut rng), word(&mut rng));
            let (lo, hi) = random_read(&mut rng, &a, &b);
            if truly_meets(&keys, lo, hi) {
                assert!(meets(&keys, lo, hi), "keys {keys:?} read {a:?}..{b:?}");
            }
        }
    }
}
