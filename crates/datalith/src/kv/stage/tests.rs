//! The stage's staging, ordering and application, against LMDB.

use super::apply::{lower_priority, partition_least_table};
use super::*;

fn ops_of(stage: &Stage) -> Vec<(OpKind, u32, TableKind, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    stage.for_each_op(|kind, id, table_kind, key, value| {
        out.push((kind, id, table_kind, key.to_vec(), value.to_vec()))
    });
    out
}

fn staged() -> Stage {
    let plain = Table::for_test("p", 1, TableKind::Plain);
    let list = Table::for_test("l", 2, TableKind::List);
    let mut stage = Stage::default();
    stage.reserve(1000, 1 << 16);
    stage.put(&plain, b"counter", b"7");
    stage.list_add(&list, b"k1", b"a");
    stage.list_remove(&list, b"k0", b"b");
    stage.put(&plain, b"stats", b"");
    stage.list_add(&list, b"k2", b"c");
    stage
}

#[test]
fn a_compact_copy_holds_the_same_ops_in_no_more_memory_than_they_take() {
    let stage = staged();
    let copy = stage.compact();
    assert_eq!(ops_of(&copy), ops_of(&stage));
    assert_eq!(copy.len(), 5);
    assert_eq!(copy.bytes.capacity(), copy.bytes.len());
    assert_eq!(copy.ops.capacity(), copy.ops.len());
    assert!(stage.bytes.capacity() > copy.bytes.capacity());
}

#[test]
fn deferrable_keys_in_names_the_list_ops_of_the_range_in_order() {
    let stage = staged();
    let cases: [(std::ops::Range<usize>, &[&[u8]]); 4] = [
        (0..5, &[b"k1", b"k0", b"k2"]),
        (2..5, &[b"k0", b"k2"]),
        (3..4, &[]),
        (4..99, &[b"k2"]),
    ];
    for (range, want) in cases {
        let got: Vec<(u32, &[u8])> = stage.deferrable_keys_in(range.clone()).collect();
        let want: Vec<(u32, &[u8])> = want.iter().map(|k| (2, *k)).collect();
        assert_eq!(got, want, "range {range:?}");
    }
}

/// Ops of a plain table (1), a list table (2) and a plain table no writer reads (3): which
/// ops `for_each_kept_op_in` passes on and whether it held any back, and which
/// `for_each_deferrable_op_in` and `deferrable_keys_in` name, for each range and `defer`.
#[test]
fn the_committer_holds_back_list_ops_and_those_of_tables_no_writer_reads() {
    let plain = Table::for_test("p", 1, TableKind::Plain);
    let list = Table::for_test("l", 2, TableKind::List);
    let log = Table::for_test("g", 3, TableKind::Plain).unread_by_writers();
    let mut stage = Stage::default();
    stage.put(&plain, b"p0", b"1");
    stage.list_add(&list, b"l0", b"a");
    stage.put(&log, b"g0", b"entry");
    stage.put(&plain, b"p1", b"2");
    stage.delete(&log, b"g1");
    type Case<'a> = (
        std::ops::Range<usize>,
        bool,
        &'a [&'a [u8]],
        bool,
        &'a [&'a [u8]],
    );
    let cases: [Case; 5] = [
        (
            0..5,
            false,
            &[b"p0", b"l0", b"g0", b"p1", b"g1"],
            false,
            &[b"l0", b"g0", b"g1"],
        ),
        (0..5, true, &[b"p0", b"p1"], true, &[b"l0", b"g0", b"g1"]),
        (3..4, true, &[b"p1"], false, &[]),
        (2..3, true, &[], true, &[b"g0"]),
        (4..99, false, &[b"g1"], false, &[b"g1"]),
    ];
    for (range, defer, kept, held, deferrable) in cases {
        let mut got = Vec::new();
        let was_held = stage.for_each_kept_op_in(range.clone(), defer, |_, _, _, k, _| got.push(k));
        assert_eq!(got, kept, "kept, {range:?} defer {defer}");
        assert_eq!(was_held, held, "held, {range:?} defer {defer}");
        let mut named = Vec::new();
        stage.for_each_deferrable_op_in(range.clone(), |_, _, _, k, _| named.push(k));
        assert_eq!(named, deferrable, "deferrable ops, {range:?}");
        let keys: Vec<&[u8]> = stage
            .deferrable_keys_in(range.clone())
            .map(|(_, k)| k)
            .collect();
        assert_eq!(keys, deferrable, "deferrable keys, {range:?}");
    }
}

#[test]
fn the_least_table_goes_first_and_each_part_keeps_its_order() {
    // (tables in order, the split and the op numbers after it)
    let cases: [(&[u64], usize, &[u64]); 5] = [
        (&[], 0, &[]),
        (&[3], 1, &[0]),
        (&[5, 2, 5, 2, 7, 2], 3, &[1, 3, 5, 0, 2, 4]),
        (&[2, 2, 9, 9], 2, &[0, 1, 2, 3]),
        (&[9, 8, 7, 9, 8, 7], 2, &[2, 5, 0, 1, 3, 4]),
    ];
    for (tables, split, want) in cases {
        let mut order: Vec<SortKey> = tables
            .iter()
            .enumerate()
            .map(|(i, t)| (*t, 0, i as u64))
            .collect();
        assert_eq!(partition_least_table(&mut order), split, "{tables:?}");
        let got: Vec<u64> = order.iter().map(|k| k.2).collect();
        assert_eq!(got, want, "{tables:?}");
    }
}

/// The sort helper's lower priority is its own: the thread that spawned it (the applier)
/// keeps its priority, since Linux sets a nice value per thread when given a thread id.
#[test]
fn lowering_a_thread_s_priority_leaves_its_spawner_s_alone() {
    fn nice_of_this_thread() -> i32 {
        // SAFETY: as in `lower_priority`.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            *libc::__errno_location() = 0;
            libc::getpriority(libc::PRIO_PROCESS, tid)
        }
    }
    let before = nice_of_this_thread();
    let target = (before + 3).min(19);
    let helper = std::thread::spawn(move || {
        lower_priority(target);
        nice_of_this_thread()
    })
    .join()
    .unwrap();
    assert_eq!(helper, target);
    assert_eq!(nice_of_this_thread(), before);
}
