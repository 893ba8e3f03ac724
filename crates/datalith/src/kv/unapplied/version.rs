//! One logged group waiting to be applied, and the versions of the waiting groups that
//! readers pair with their LMDB snapshots.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::super::overlay::{touched, Overlay, OverlaySource, TableOverlay, Touched};
use super::super::pending::{Hi, Lo};
use super::super::stage::{OpKind, Stage};
use super::super::wal::{Logged, TailGroup};
use super::signal::Signal;
use crate::limits::{UNAPPLIED_READER_OPS, UNAPPLIED_SCAN_OPS, UNAPPLIED_TOUCHED_MAX_OPS};

/// One logged group waiting to be applied.
pub(crate) struct Group {
    pub(crate) seq: u64,
    pub(crate) stage: Arc<Stage>,
    pub(crate) logged: Logged,
    at: Instant,
    /// The keys it writes, listed on a reader's first need (once per group: the versions
    /// that hold it share it).
    touched: OnceLock<Touched>,
}

impl Group {
    pub(crate) fn new(seq: u64, stage: Arc<Stage>, logged: Logged) -> Group {
        Group {
            seq,
            stage,
            logged,
            at: Instant::now(),
            touched: OnceLock::new(),
        }
    }

    fn touched(&self) -> &Touched {
        self.touched.get_or_init(|| Touched::of(&self.stage))
    }

    /// Whether a key of `table` this group writes lies in `[lo, hi]`.
    fn meets(&self, table: u32, lo: Lo<'_>, hi: Hi<'_>) -> bool {
        match self.stage.len() <= UNAPPLIED_SCAN_OPS {
            true => touched::scan_meets(&self.stage, table, lo, hi),
            false => self.touched().meets(table, lo, hi),
        }
    }

    /// The number of the last op on `key` of `table`, if this group writes it.
    fn last_op(&self, table: u32, key: &[u8]) -> Option<usize> {
        match self.stage.len() <= UNAPPLIED_SCAN_OPS {
            true => touched::scan_last_op(&self.stage, table, key),
            false => self.touched().last_op(table, key),
        }
    }
}

/// The groups published since the applier last trimmed, shared by every version since:
/// publishing appends one, where copying the whole list cost O(groups) per commit (KV writes
/// at batch 1 wait for thousands of groups when the apply delay is long).
#[derive(Default)]
struct Chain {
    groups: Mutex<Vec<Arc<Group>>>,
}

/// One published state of the unapplied groups: the first `len` groups of its chain.
pub(crate) struct Unapplied {
    chain: Arc<Chain>,
    pub(super) len: usize,
    /// When the oldest group was published (`None`: no group).
    pub(super) first_at: Option<Instant>,
    /// The last group's sequence number (`None`: no group).
    pub(super) last_seq: Option<u64>,
    /// LMDB's id of the transaction that applied the groups before these; a snapshot older
    /// than it misses groups this version no longer holds.
    pub(super) applied_txnid: usize,
    pub(super) ops: usize,
    overlay: OnceLock<Option<Arc<Overlay>>>,
    /// The groups, for readers that look up the keys each writes instead of folding their
    /// overlay up front (`overlay::touched`); `None` when they write too many ops.
    listed: OnceLock<Option<Vec<Arc<Group>>>>,
    signal: Arc<Signal>,
}

impl Unapplied {
    /// A version holding `groups` (none published yet).
    pub(super) fn fresh(
        groups: Vec<Arc<Group>>,
        applied_txnid: usize,
        signal: Arc<Signal>,
    ) -> Unapplied {
        let ops = groups.iter().map(|g| g.stage.len()).sum();
        Unapplied {
            len: groups.len(),
            first_at: groups.first().map(|g| g.at),
            last_seq: groups.last().map(|g| g.seq),
            chain: Arc::new(Chain {
                groups: Mutex::new(groups),
            }),
            applied_txnid,
            ops,
            overlay: OnceLock::new(),
            listed: OnceLock::new(),
            signal,
        }
    }

    /// The groups another process acknowledged and LMDB does not hold yet, read back from the
    /// log (`wal::tail`) for a snapshot of a read-only environment. Nothing applies them here,
    /// so nothing listens to its signal.
    pub(crate) fn read_back(groups: &[Arc<TailGroup>]) -> Unapplied {
        let groups = groups
            .iter()
            .map(|g| Arc::new(Group::new(g.seq, g.stage.clone(), Logged::read_back(g.seq))))
            .collect();
        Unapplied::fresh(groups, 0, Arc::new(Signal::default()))
    }

    /// This version plus `group`, sharing its chain. Only the newest version is extended
    /// (under `Lazy::current`'s lock), so the chain's length is this version's.
    pub(super) fn extended(&self, group: Group) -> Unapplied {
        let ops = self.ops + group.stage.len();
        let (at, seq) = (group.at, group.seq);
        let mut groups = lock(&self.chain.groups);
        debug_assert_eq!(
            groups.len(),
            self.len,
            "only the newest version is extended"
        );
        groups.push(Arc::new(group));
        drop(groups);
        Unapplied {
            chain: self.chain.clone(),
            len: self.len + 1,
            first_at: self.first_at.or(Some(at)),
            last_seq: Some(seq),
            applied_txnid: self.applied_txnid,
            ops,
            overlay: OnceLock::new(),
            listed: OnceLock::new(),
            signal: self.signal.clone(),
        }
    }

    /// The newest group's sequence number (`None`: no group).
    pub(crate) fn last_seq(&self) -> Option<u64> {
        self.last_seq
    }

    /// Staged ops of the groups.
    pub(crate) fn ops(&self) -> usize {
        self.ops
    }

    /// Whether no group is waiting.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every group up to sequence number `seq` has reached LMDB (this version holds
    /// none of them).
    pub(super) fn applied_through(&self, seq: u64) -> bool {
        lock(&self.chain.groups)[..self.len]
            .first()
            .is_none_or(|g| g.seq > seq)
    }

    /// The groups, oldest first.
    pub(crate) fn groups(&self) -> Vec<Arc<Group>> {
        lock(&self.chain.groups)[..self.len].to_vec()
    }

    /// Every group's writes, in order, as a fresh overlay.
    pub(crate) fn fold(&self) -> Overlay {
        fold(&self.groups())
    }

    /// The groups after sequence number `seq`, oldest first.
    pub(super) fn groups_after(&self, seq: u64) -> Vec<Arc<Group>> {
        let mut groups = self.groups();
        groups.retain(|g| g.seq > seq);
        groups
    }

    /// LMDB's id of the commit that applied the groups before these.
    pub(crate) fn applied_txnid(&self) -> usize {
        self.applied_txnid
    }

    /// Whether a snapshot of LMDB transaction `txnid` may be read with this version.
    pub(crate) fn fits(&self, txnid: usize) -> bool {
        txnid >= self.applied_txnid
    }

    /// Every group's writes as one overlay (`None` when there are none), built on first use.
    /// A reader that has to build a large one asks the applier to catch up soon.
    pub(crate) fn overlay(&self) -> Option<&Arc<Overlay>> {
        self.overlay
            .get_or_init(|| {
                if self.is_empty() {
                    return None;
                }
                if self.ops >= UNAPPLIED_READER_OPS {
                    self.signal.nudge();
                }
                Some(Arc::new(self.fold()))
            })
            .as_ref()
    }

    /// Whether a reader merges the overlay only into the reads that meet the groups' writes
    /// (`OverlaySource`); otherwise (no groups, or more ops than are cheap to list) into
    /// every read.
    pub(crate) fn lists_touched(&self) -> bool {
        self.listed().is_some()
    }

    fn listed(&self) -> Option<&[Arc<Group>]> {
        self.listed
            .get_or_init(|| {
                (!self.is_empty() && self.ops <= UNAPPLIED_TOUCHED_MAX_OPS).then(|| self.groups())
            })
            .as_deref()
    }
}

impl OverlaySource for Unapplied {
    fn meets(&self, table: u32, lo: Lo<'_>, hi: Hi<'_>) -> bool {
        match self.listed() {
            Some(groups) => groups.iter().any(|g| g.meets(table, lo, hi)),
            None => true,
        }
    }

    fn plain_get(&self, table: u32, key: &[u8]) -> Option<Option<&[u8]>> {
        let Some(groups) = self.listed() else {
            let o = Unapplied::overlay(self)?;
            return match o.table(table)? {
                TableOverlay::Plain(m) => m.get(key).map(|v| v.as_deref()),
                TableOverlay::List(_) => None,
            };
        };
        // The newest group that writes the key decides.
        groups.iter().rev().find_map(|g| {
            let op = g.last_op(table, key)?;
            let (kind, _, _, _, value) = g.stage.op(op);
            debug_assert!(matches!(kind, OpKind::Put | OpKind::Delete));
            Some((kind == OpKind::Put).then_some(value))
        })
    }

    fn overlay(&self) -> Option<&Overlay> {
        Unapplied::overlay(self).map(|o| &**o)
    }
}

/// `groups`' writes, in order, as a fresh overlay.
fn fold(groups: &[Arc<Group>]) -> Overlay {
    let mut o = Overlay::new();
    for g in groups {
        o.apply_stage(&g.stage);
    }
    o
}

/// Locks `m`, also when a thread panicked while holding it (the state it guards is valid
/// between operations).
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
