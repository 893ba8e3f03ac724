//! The keys some writes touch, so that a read can tell whether their overlay could change
//! its answer.
//!
//! A snapshot that carries committed groups LMDB does not hold yet (`kv::unapplied`) used to
//! fold them into an [`Overlay`] before its first read and merge it into every read. Most
//! reads never meet those writes (a read of one entity while another is written): for them
//! the merged state is LMDB's own, since an overlay changes exactly the keys its writes
//! mention. So the snapshot first lists the keys (one pass, two allocations, where the fold
//! allocates per write and per tree node) and builds the overlay only for a read whose range
//! holds one of them.

use super::super::pending::{Hi, Lo};
use super::super::stage::Stage;

/// Every `(table, key)` one group's writes mention, sorted, with the keys' bytes in one
/// arena.
#[derive(Debug, Default)]
pub(crate) struct Touched {
    /// Each op's key, sorted by table, key bytes, then op.
    keys: Vec<Key>,
    bytes: Vec<u8>,
}

/// One op's key: its table, where its bytes are in `Touched::bytes`, and the op's number in
/// its stage.
#[derive(Debug, Clone, Copy)]
struct Key {
    table: u32,
    start: u32,
    end: u32,
    op: u32,
}

impl Touched {
    /// The keys of every op of `stage`.
    pub(crate) fn of(stage: &Stage) -> Touched {
        let mut t = Touched {
            keys: Vec::with_capacity(stage.len()),
            bytes: Vec::with_capacity(stage.staged_bytes()),
        };
        let mut op = 0;
        stage.for_each_op(|_, table, _, key, _| {
            t.add(table, key, op);
            op += 1;
        });
        let Touched { keys, bytes } = &mut t;
        keys.sort_unstable_by(|a, b| {
            (a.table, span(bytes, a), a.op).cmp(&(b.table, span(bytes, b), b.op))
        });
        t
    }

    fn add(&mut self, table: u32, key: &[u8], op: u32) {
        // A stage never holds 4 GiB (`MAX_BATCH_BYTES`): the offsets fit.
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(key);
        let end = self.bytes.len() as u32;
        self.keys.push(Key {
            table,
            start,
            end,
            op,
        });
    }

    /// The number (in its stage) of the last op on `key` of `table`, if any writes it.
    pub(crate) fn last_op(&self, table: u32, key: &[u8]) -> Option<usize> {
        let bytes = &self.bytes;
        let after = self
            .keys
            .partition_point(|k| (k.table, span(bytes, k)) <= (table, key));
        let k = self.keys.get(after.checked_sub(1)?)?;
        (k.table == table && span(bytes, k) == key).then_some(k.op as usize)
    }

    /// Whether a key of `table` in the read `[lo, hi]` is one of the keys (a `Lo` is taken as
    /// inclusive, as everywhere a read's bounds are checked: at worst a needless merge).
    pub(crate) fn meets(&self, table: u32, lo: Lo<'_>, hi: Hi<'_>) -> bool {
        let bytes = &self.bytes;
        let first = self.keys.partition_point(|k| match lo {
            Lo::Key(l) => (k.table, span(bytes, k)) < (table, l),
            Lo::Unbounded => k.table < table,
        });
        let Some(k) = self.keys.get(first).filter(|k| k.table == table) else {
            return false;
        };
        hi.admits(span(bytes, k))
    }
}

/// [`Touched::meets`] for a stage too small to be worth listing: looks at each op.
pub(crate) fn scan_meets(stage: &Stage, table: u32, lo: Lo<'_>, hi: Hi<'_>) -> bool {
    let mut met = false;
    stage.for_each_op(|_, t, _, key, _| {
        met = met || (t == table && lo.admits(key) && hi.admits(key));
    });
    met
}

/// [`Touched::last_op`] for a stage too small to be worth listing: looks at each op.
pub(crate) fn scan_last_op(stage: &Stage, table: u32, key: &[u8]) -> Option<usize> {
    let (mut op, mut last) = (0, None);
    stage.for_each_op(|_, t, _, k, _| {
        if t == table && k == key {
            last = Some(op);
        }
        op += 1;
    });
    last
}

fn span<'b>(bytes: &'b [u8], k: &Key) -> &'b [u8] {
    &bytes[k.start as usize..k.end as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::table::{Table, TableKind};

    fn staged(keys: &[(u32, &[u8])]) -> Stage {
        let mut stage = Stage::default();
        for (id, k) in keys {
            let table = Table::for_test("t", *id, TableKind::Plain);
            stage.put(&table, k, b"v");
        }
        stage
    }

    #[test]
    fn a_read_meets_exactly_the_ranges_that_hold_a_key() {
        let stage = staged(&[(1, b"b"), (1, b"d"), (2, b"a"), (1, b"d")]);
        let t = Touched::of(&stage);
        let cases: &[(u32, Lo<'_>, Hi<'_>, bool)] = &[
            (1, Lo::Key(b"b"), Hi::Key(b"b"), true),
            (1, Lo::Key(b"c"), Hi::Key(b"c"), false),
            (1, Lo::Key(b"a"), Hi::Key(b"a"), false),
            (1, Lo::Key(b"c"), Hi::Key(b"d"), true),
            (1, Lo::Key(b"c"), Hi::Below(b"d"), false),
            (1, Lo::Key(b"e"), Hi::Unbounded, false),
            (1, Lo::Unbounded, Hi::Below(b"b"), false),
            (1, Lo::Unbounded, Hi::Key(b"b"), true),
            (1, Lo::Key(b"ba"), Hi::Key(b"c"), false),
            (1, Lo::Unbounded, Hi::Unbounded, true),
            (2, Lo::Key(b"a"), Hi::Key(b"a"), true),
            (2, Lo::Key(b"a\0"), Hi::Unbounded, false),
            (3, Lo::Unbounded, Hi::Unbounded, false),
            (0, Lo::Unbounded, Hi::Unbounded, false),
        ];
        for (table, lo, hi, want) in cases {
            assert_eq!(
                t.meets(*table, *lo, *hi),
                *want,
                "table {table} {lo:?} {hi:?}"
            );
            assert_eq!(
                scan_meets(&stage, *table, *lo, *hi),
                *want,
                "scanned: table {table} {lo:?} {hi:?}"
            );
        }
    }

    #[test]
    fn the_last_op_on_a_key_is_found() {
        let stage = staged(&[(1, b"b"), (1, b"d"), (2, b"b"), (1, b"b"), (1, b"c")]);
        let t = Touched::of(&stage);
        let cases: &[(u32, &[u8], Option<usize>)] = &[
            (1, b"b", Some(3)),
            (1, b"c", Some(4)),
            (1, b"d", Some(1)),
            (2, b"b", Some(2)),
            (1, b"a", None),
            (1, b"bb", None),
            (1, b"e", None),
            (2, b"a", None),
            (3, b"b", None),
        ];
        for (table, key, want) in cases {
            assert_eq!(t.last_op(*table, key), *want, "table {table} key {key:?}");
            assert_eq!(
                scan_last_op(&stage, *table, key),
                *want,
                "scanned: table {table} key {key:?}"
            );
        }
    }

    #[test]
    fn no_writes_meet_no_read() {
        let t = Touched::of(&Stage::default());
        assert!(!t.meets(1, Lo::Unbounded, Hi::Unbounded));
        assert!(!scan_meets(
            &Stage::default(),
            1,
            Lo::Unbounded,
            Hi::Unbounded
        ));
    }
}
