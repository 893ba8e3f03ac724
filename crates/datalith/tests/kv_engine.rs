//! The KV engine: operations, map growth, reader slots, isolation inside a batch, poisoning,
//! and refusing files that are not ours.

#[path = "common/hold.rs"]
mod hold;
use datalith::kv::{Direction, Durability, EnvOptions, Environment, KvError, KvOp, TableKind};
use hold::hold_committer;
use std::ops::Bound;
use std::sync::Arc;

fn open(dir: &std::path::Path) -> Environment {
    Environment::open(dir, EnvOptions::default()).unwrap()
}

fn keys_of(env: &Environment, table: &datalith::kv::Table, dir: Direction) -> Vec<Vec<u8>> {
    let txn = env.read().unwrap();
    let view = txn.view();
    view.range(table, Bound::Unbounded, Bound::Unbounded, dir)
        .unwrap()
        .map(|e| e.unwrap().0.to_vec())
        .collect()
}

#[test]
fn put_get_delete_and_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let env = open(dir.path());
    let t = env.table("t", TableKind::Plain).unwrap();
    let ops = ["b", "d", "a", "c", "e"]
        .iter()
        .map(|k| KvOp::put(&t, *k, format!("v{k}")))
        .collect();
    env.transact_kv(ops).unwrap();
    env.transact_kv(vec![KvOp::delete(&t, "e")]).unwrap();

    let txn = env.read().unwrap();
    let v = txn.view();
    assert_eq!(v.get(&t, b"a").unwrap(), Some(&b"va"[..]));
    assert_eq!(v.get(&t, b"e").unwrap(), None);
    assert_eq!(v.len(&t).unwrap(), 4);
    assert_eq!(v.first(&t).unwrap().map(|e| e.0), Some(&b"a"[..]));
    assert_eq!(v.last(&t).unwrap().map(|e| e.0), Some(&b"d"[..]));
    // (lower, upper, expected keys in forward order)
    let cases: &[(Bound<&[u8]>, Bound<&[u8]>, &[&str])] = &[
        (Bound::Included(b"b"), Bound::Included(b"c"), &["b", "c"]),
        (Bound::Excluded(b"b"), Bound::Unbounded, &["c", "d"]),
        (Bound::Unbounded, Bound::Excluded(b"c"), &["a", "b"]),
        (Bound::Included(b"c"), Bound::Included(b"b"), &[]),
        (Bound::Excluded(b"b"), Bound::Excluded(b"b"), &[]),
    ];
    for (lo, hi, want) in cases {
        let fwd: Vec<_> = v
            .range(&t, *lo, *hi, Direction::Forward)
            .unwrap()
            .map(|e| String::from_utf8(e.unwrap().0.to_vec()).unwrap())
            .collect();
        assert_eq!(&fwd, want, "forward {lo:?}..{hi:?}");
        let mut back: Vec<_> = v
            .range(&t, *lo, *hi, Direction::Backward)
            .unwrap()
            .map(|e| String::from_utf8(e.unwrap().0.to_vec()).unwrap())
            .collect();
        back.reverse();
        assert_eq!(&back, want, "backward {lo:?}..{hi:?}");
        assert_eq!(v.count_range(&t, *lo, *hi).unwrap(), want.len() as u64);
    }
    drop(txn);
    assert_eq!(
        keys_of(&env, &t, Direction::Backward),
        vec![b"d".to_vec(), b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]
    );
}

#[test]
fn list_tables_keep_sorted_sets() {
    let dir = tempfile::tempdir().unwrap();
    let env = open(dir.path());
    let l = env.table("l", TableKind::List).unwrap();
    env.transact_kv(vec![
        KvOp::list_add(&l, "k", "3"),
        KvOp::list_add(&l, "k", "1"),
        KvOp::list_add(&l, "k", "2"),
        KvOp::list_add(&l, "k", "2"),
        KvOp::list_add(&l, "j", "9"),
    ])
    .unwrap();
    env.transact_kv(vec![KvOp::list_remove(&l, "k", "3")])
        .unwrap();
    let txn = env.read().unwrap();
    let v = txn.view();
    let vals: Vec<_> = v
        .list(&l, b"k")
        .unwrap()
        .map(|x| x.unwrap().to_vec())
        .collect();
    assert_eq!(vals, vec![b"1".to_vec(), b"2".to_vec()]);
    assert_eq!(v.list_count(&l, b"k").unwrap(), 2);
    assert_eq!(v.list_count(&l, b"none").unwrap(), 0);
    assert!(v.list_contains(&l, b"k", b"2").unwrap());
    assert!(!v.list_contains(&l, b"k", b"3").unwrap());
    drop(txn);
    env.transact_kv(vec![KvOp::delete(&l, "k")]).unwrap();
    assert_eq!(env.read().unwrap().view().list_count(&l, b"k").unwrap(), 0);
}

#[test]
fn bad_input_is_a_typed_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let env = open(dir.path());
    let t = env.table("t", TableKind::Plain).unwrap();
    let l = env.table("l", TableKind::List).unwrap();
    let f = env.fixed_list_table("f", 8).unwrap();
    let long = vec![7u8; 512];
    let cases: Vec<(KvOp, fn(&KvError) -> bool)> = vec![
        (KvOp::put(&t, long.clone(), "v"), |e| {
            matches!(e, KvError::KeyTooLong { len: 512, .. })
        }),
        (KvOp::put(&t, "", "v"), |e| {
            matches!(e, KvError::EmptyKey { .. })
        }),
        (KvOp::list_add(&l, "k", long.clone()), |e| {
            matches!(e, KvError::ListValueTooLong { .. })
        }),
        (KvOp::list_add(&t, "k", "v"), |e| {
            matches!(e, KvError::WrongTableKind { .. })
        }),
        (KvOp::put(&l, "k", "v"), |e| {
            matches!(e, KvError::WrongTableKind { .. })
        }),
        (KvOp::list_add(&f, "k", "seven b"), |e| {
            matches!(
                e,
                KvError::ListValueWidth {
                    len: 7,
                    width: 8,
                    ..
                }
            )
        }),
    ];
    for (op, check) in cases {
        // A good op in the same transaction must not be written either.
        let err = env
            .transact_kv(vec![KvOp::put(&t, "good", "x"), op])
            .unwrap_err();
        assert!(check(&err), "unexpected error {err:?}");
        assert!(err.is_user_error());
    }
    assert_eq!(env.read().unwrap().view().len(&t).unwrap(), 0);
    // A fixed-width table takes values of its width, and reopens as one.
    env.transact_kv(vec![KvOp::list_add(&f, "k", 7u64.to_be_bytes())])
        .unwrap();
    assert!(env.poisoned().is_none());
    assert_eq!(
        env.table("f", TableKind::List).unwrap().kind(),
        TableKind::List
    );
    assert!(matches!(
        env.table("l", TableKind::Plain),
        Err(KvError::WrongTableKind { .. })
    ));
    assert!(matches!(
        env.table("", TableKind::Plain),
        Err(KvError::InvalidTableName { .. })
    ));
    assert!(matches!(
        env.table("__datalith_x", TableKind::Plain),
        Err(KvError::InvalidTableName { .. })
    ));
}

#[test]
fn tables_and_data_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let env = open(dir.path());
        let t = env.table("kept", TableKind::List).unwrap();
        env.transact_kv(vec![KvOp::list_add(&t, "a", "1")]).unwrap();
    }
    let env = open(dir.path());
    assert_eq!(
        env.tables().unwrap(),
        vec![("kept".to_string(), TableKind::List)]
    );
    let t = env.table("kept", TableKind::List).unwrap();
    assert!(env
        .read()
        .unwrap()
        .view()
        .list_contains(&t, b"a", b"1")
        .unwrap());
}

#[test]
fn the_map_grows_by_itself_to_ten_times_its_initial_size_in_every_mode() {
    // Every mode: under `WriteMapAsync` the warmer faults in pages past the used end while the
    // map is resized under it, and no value may suffer.
    for durability in Durability::ALL {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = EnvOptions::with_durability(durability);
        opts.initial_map_bytes = 1 << 20;
        let env = Environment::open(dir.path(), opts).unwrap();
        let initial = env.map_bytes();
        let t = env.table("t", TableKind::Plain).unwrap();
        let value = |i: u32| vec![(i % 251) as u8; 4000];
        let mut handles = Vec::new();
        for i in 0..3000u32 {
            // Mix sync and async writes of ~12 MB in all, 12x the initial map.
            let ops = vec![KvOp::put(&t, i.to_be_bytes(), value(i))];
            if i % 2 == 0 {
                handles.push(env.transact_kv_async(ops));
            } else {
                env.transact_kv(ops).unwrap();
            }
        }
        for h in handles {
            h.wait().unwrap();
        }
        assert!(
            env.map_bytes() >= 10 * initial,
            "{durability:?}: map {} vs initial {initial}",
            env.map_bytes()
        );
        assert!(env.commit_counters().map_growths > 0, "{durability:?}");
        let txn = env.read().unwrap();
        assert_eq!(txn.view().len(&t).unwrap(), 3000, "{durability:?}");
        for i in 0..3000u32 {
            let got = txn.view().get(&t, &i.to_be_bytes()).unwrap();
            assert_eq!(got, Some(&value(i)[..]), "{durability:?}: key {i}");
        }
    }
}

#[test]
fn snapshots_begun_after_many_ended_see_every_commit_since_and_held_ones_keep_theirs() {
    // Ended snapshots are kept reset and renewed by the next ones: a renewed snapshot must
    // read the state as of its own beginning, across commits and map growths (a small map,
    // no snapshot held across a write), and one held across commits keeps its own (the
    // default map: a growth would wait for it).
    for durability in Durability::ALL {
        for small_map in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let mut opts = EnvOptions::with_durability(durability);
            if small_map {
                opts.initial_map_bytes = 1 << 20;
            }
            let env = Environment::open(dir.path(), opts).unwrap();
            let t = env.table("t", TableKind::Plain).unwrap();
            let value = |i: u32| vec![(i % 251) as u8; 2000];
            let mut held = Vec::new();
            for round in 0..40u32 {
                // More snapshots at once than are kept idle, then all ended.
                let many: Vec<_> = (0..20).map(|_| env.read().unwrap()).collect();
                for txn in &many {
                    let got = txn.view().len(&t).unwrap();
                    assert_eq!(got, u64::from(round) * 25, "{durability:?} round {round}");
                }
                drop(many);
                let ops = (0..25)
                    .map(|j| KvOp::put(&t, (round * 25 + j).to_be_bytes(), value(round)))
                    .collect();
                env.transact_kv(ops).unwrap();
                if !small_map && round % 10 == 0 {
                    held.push((round, env.read().unwrap()));
                }
            }
            let what = format!("{durability:?}, small map {small_map}");
            assert_eq!(env.commit_counters().map_growths > 0, small_map, "{what}");
            let txn = env.read().unwrap();
            assert_eq!(txn.view().len(&t).unwrap(), 1000, "{what}");
            for (round, old) in held {
                let want = u64::from(round + 1) * 25;
                assert_eq!(old.view().len(&t).unwrap(), want, "{what}: held {round}");
            }
        }
    }
}

#[test]
fn a_thousand_threads_read_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let env = open(dir.path());
    let t = env.table("t", TableKind::Plain).unwrap();
    env.transact_kv(vec![KvOp::put(&t, "k", "v")]).unwrap();
    let barrier = Arc::new(std::sync::Barrier::new(1000));
    let threads: Vec<_> = (0..1000)
        .map(|_| {
            let env = env.clone();
            let t = t.clone();
            let barrier = barrier.clone();
            std::thread::Builder::new()
                .stack_size(64 * 1024)
                .spawn(move || {
                    let txn = env.read().unwrap();
                    // Every thread holds its snapshot while all the others open theirs.
                    barrier.wait();
                    assert_eq!(txn.view().get(&t, b"k").unwrap(), Some(&b"v"[..]));
                })
                .unwrap()
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
}

#[test]
fn a_reader_keeps_its_snapshot_across_commits_and_a_pending_growth() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = EnvOptions::with_durability(Durability::NoSync);
    opts.initial_map_bytes = 1 << 20;
    let env = Environment::open(dir.path(), opts).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    env.transact_kv(vec![KvOp::put(&t, "k", "old")]).unwrap();
    let reader = env.read().unwrap();
    let before = env.commit_counters().map_growths;
    // Many commits, then enough data to force a growth, from another thread.
    let writer = {
        let env = env.clone();
        let t = t.clone();
        std::thread::spawn(move || {
            for i in 0..100u32 {
                env.transact_kv(vec![KvOp::put(&t, "k", format!("new{i}"))])
                    .unwrap();
            }
            let big = vec![1u8; 8000];
            for i in 0..400u32 {
                env.transact_kv(vec![KvOp::put(&t, i.to_be_bytes(), big.clone())])
                    .unwrap();
            }
        })
    };
    // While the writer runs (and possibly waits for this reader before it can grow the map),
    // the snapshot still sees exactly its own state.
    for _ in 0..50 {
        assert_eq!(reader.view().get(&t, b"k").unwrap(), Some(&b"old"[..]));
        assert_eq!(reader.view().len(&t).unwrap(), 1);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    drop(reader);
    writer.join().unwrap();
    assert!(env.commit_counters().map_growths > before);
    assert_eq!(
        env.read().unwrap().view().get(&t, b"k").unwrap(),
        Some(&b"new99"[..])
    );
}

#[test]
fn one_bad_request_fails_alone_inside_a_shared_batch() {
    let dir = tempfile::tempdir().unwrap();
    let env = open(dir.path());
    let t = env.table("t", TableKind::Plain).unwrap();
    env.transact_kv(vec![KvOp::put(&t, "taken", "x")]).unwrap();
    // Queue many requests at once so they share batches; every 10th collides.
    let handles: Vec<_> = (0..500u32)
        .map(|i| {
            let key = if i % 10 == 0 {
                b"taken".to_vec()
            } else {
                format!("k{i}").into_bytes()
            };
            env.transact_kv_async(vec![
                KvOp::put(&t, format!("side{i}"), "s"),
                KvOp::insert(&t, key, "v"),
            ])
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let r = h.wait();
        if i % 10 == 0 {
            assert!(
                matches!(r, Err(KvError::KeyExists { .. })),
                "request {i}: {r:?}"
            );
        } else {
            r.unwrap();
        }
    }
    let txn = env.read().unwrap();
    let v = txn.view();
    for i in 0..500u32 {
        // A rejected request leaves nothing behind, not even its other ops.
        assert_eq!(
            v.get(&t, format!("side{i}").as_bytes()).unwrap().is_some(),
            i % 10 != 0,
            "side{i}"
        );
    }
    assert_eq!(v.get(&t, b"taken").unwrap(), Some(&b"x"[..]));
    assert!(
        env.commit_counters().largest_batch > 1,
        "requests should have shared commits"
    );
}

#[test]
fn an_insert_sees_earlier_requests_of_its_batch() {
    let dir = tempfile::tempdir().unwrap();
    let env = open(dir.path());
    let t = env.table("t", TableKind::Plain).unwrap();
    let handles: Vec<_> = (0..200)
        .map(|_| env.transact_kv_async(vec![KvOp::insert(&t, "once", "v")]))
        .collect();
    let ok = handles
        .into_iter()
        .filter(|_| true)
        .map(|h| h.wait().is_ok())
        .filter(|ok| *ok)
        .count();
    assert_eq!(ok, 1, "exactly one insert of the same key may win");
}

#[test]
fn a_failed_commit_poisons_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let env = open(dir.path());
    let t = env.table("t", TableKind::Plain).unwrap();
    env.transact_kv(vec![KvOp::put(&t, "before", "1")]).unwrap();
    env.inject_commit_failure();
    let err = env
        .transact_kv(vec![KvOp::put(&t, "lost", "1")])
        .unwrap_err();
    assert!(matches!(err, KvError::CommitFailed { .. }), "{err:?}");
    let err = env
        .transact_kv(vec![KvOp::put(&t, "after", "1")])
        .unwrap_err();
    assert!(matches!(err, KvError::Poisoned { .. }), "{err:?}");
    assert!(env.poisoned().is_some());
    let txn = env.read().unwrap();
    assert!(txn.view().get(&t, b"before").unwrap().is_some());
    assert!(txn.view().get(&t, b"lost").unwrap().is_none());
    assert!(txn.view().get(&t, b"after").unwrap().is_none());
    drop(txn);
    drop(env);
    // Reopening clears the poison: the file itself is intact.
    let env = open(dir.path());
    let t = env.table("t", TableKind::Plain).unwrap();
    env.transact_kv(vec![KvOp::put(&t, "after", "1")]).unwrap();
}

#[test]
fn a_failed_checkpoint_poisons_the_environment_in_every_mode() {
    // With the log (`Durable`) a failed checkpoint leaves the log as it was, so reopening
    // replays every acknowledged write; without it a failed sync is final too, and the data
    // still in the page cache reads back after the reopen (no machine crash here).
    for durability in Durability::ALL {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::open(dir.path(), EnvOptions::with_durability(durability)).unwrap();
        let t = env.table("t", TableKind::Plain).unwrap();
        env.transact_kv(vec![KvOp::put(&t, "before", "1")]).unwrap();
        env.inject_checkpoint_failure();
        // (`Durable`: the background checkpointer may meet the failure first.)
        let err = env.checkpoint().unwrap_err();
        assert!(
            matches!(err, KvError::CommitFailed { .. } | KvError::Poisoned { .. }),
            "{durability:?}: {err:?}"
        );
        let again = env.checkpoint().unwrap_err();
        assert!(
            matches!(
                again,
                KvError::CommitFailed { .. } | KvError::Poisoned { .. }
            ),
            "{durability:?}: a failed sync was retried: {again:?}"
        );
        let err = env
            .transact_kv(vec![KvOp::put(&t, "after", "1")])
            .unwrap_err();
        assert!(
            matches!(err, KvError::Poisoned { .. }),
            "{durability:?}: {err:?}"
        );
        assert!(
            err.to_string().contains("reopened"),
            "{durability:?}: the error does not say what to do: {err}"
        );
        let txn = env.read().unwrap();
        assert!(
            txn.view().get(&t, b"before").unwrap().is_some(),
            "{durability:?}"
        );
        drop(txn);
        drop(env);
        let env = Environment::open(dir.path(), EnvOptions::with_durability(durability)).unwrap();
        let t = env.table("t", TableKind::Plain).unwrap();
        assert!(
            env.read()
                .unwrap()
                .view()
                .get(&t, b"before")
                .unwrap()
                .is_some(),
            "{durability:?}"
        );
        env.transact_kv(vec![KvOp::put(&t, "after", "1")]).unwrap();
        env.checkpoint().unwrap();
    }
}

#[test]
fn foreign_and_corrupt_files_are_refused_with_typed_errors() {
    // Garbage where LMDB expects its data file.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.mdb"), vec![0x5Au8; 64 * 1024]).unwrap();
    let err = Environment::open(dir.path(), EnvOptions::default()).unwrap_err();
    assert!(matches!(err, KvError::NotADatabase { .. }), "{err:?}");

    // A valid LMDB environment that some other program made.
    let dir = tempfile::tempdir().unwrap();
    {
        let env = unsafe {
            heed::EnvOpenOptions::new()
                .max_dbs(4)
                .open(dir.path())
                .unwrap()
        };
        let wtxn = env.write_txn().unwrap();
        env.create_databases_and_commit(wtxn, |opener, wtxn| -> Result<_, heed::Error> {
            let db =
                opener.create_database::<heed::types::Bytes, heed::types::Bytes>(wtxn, None)?;
            db.put(wtxn, b"theirs", b"1")?;
            Ok(heed::CommitOrAbort::<(), ()>::Commit(()))
        })
        .unwrap();
        env.prepare_for_closing().wait();
    }
    let err = Environment::open(dir.path(), EnvOptions::default()).unwrap_err();
    assert!(matches!(err, KvError::Foreign { .. }), "{err:?}");
}

/// One transaction large enough that the committer sorts the later tables' ops on a helper
/// thread while LMDB takes the first table's: the result must be the sequential one. Keys
/// share 16-byte heads (the sort's fix-up of long keys), plain keys are set more than once (the
/// last write wins), list values are added and removed, and half the keys exist already.
#[test]
fn a_large_transaction_over_several_tables_ends_as_its_ops_in_order() {
    use std::collections::{BTreeMap, BTreeSet};
    let dir = tempfile::tempdir().unwrap();
    let env = open(dir.path());
    let plain = env.table("plain", TableKind::Plain).unwrap();
    let list_a = env.table("list_a", TableKind::List).unwrap();
    let list_b = env.table("list_b", TableKind::List).unwrap();
    let mut plain_model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut lists: [BTreeMap<Vec<u8>, BTreeSet<Vec<u8>>>; 2] = Default::default();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for round in 0..2 {
        let mut ops = Vec::new();
        for i in 0..40_000u64 {
            let r = next();
            // Long keys with a shared head: "same-16-byte-head/" ++ a small number.
            let long_key = format!("same-16-byte-head/{}", r % 300).into_bytes();
            let short_key = (r % 5_000).to_be_bytes().to_vec();
            let value = (i + round * 1_000_000).to_be_bytes().to_vec();
            match r % 7 {
                0 | 1 => {
                    ops.push(KvOp::put(&plain, short_key.clone(), value.clone()));
                    plain_model.insert(short_key, value);
                }
                2 | 3 => {
                    ops.push(KvOp::list_add(&list_a, long_key.clone(), value.clone()));
                    lists[0].entry(long_key).or_default().insert(value);
                }
                4 | 5 => {
                    ops.push(KvOp::list_add(&list_b, short_key.clone(), value.clone()));
                    lists[1].entry(short_key).or_default().insert(value);
                }
                _ => {
                    // Remove a value added earlier (of this round or the last), if any.
                    let held = lists[0]
                        .iter()
                        .nth((r >> 20) as usize % lists[0].len().max(1));
                    if let Some((k, vs)) = held {
                        let (k, v) = (k.clone(), vs.iter().next().unwrap().clone());
                        ops.push(KvOp::list_remove(&list_a, k.clone(), v.clone()));
                        let vs = lists[0].get_mut(&k).unwrap();
                        vs.remove(&v);
                        if vs.is_empty() {
                            lists[0].remove(&k);
                        }
                    }
                }
            }
        }
        env.transact_kv(ops).unwrap();
    }
    let all = |t: &datalith::kv::Table| -> Vec<(Vec<u8>, Vec<u8>)> {
        let txn = env.read().unwrap();
        let v = txn.view();
        v.range(t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.0.to_vec(), e.1.to_vec())
            })
            .collect()
    };
    let flatten = |m: &BTreeMap<Vec<u8>, BTreeSet<Vec<u8>>>| -> Vec<(Vec<u8>, Vec<u8>)> {
        m.iter()
            .flat_map(|(k, vs)| vs.iter().map(move |v| (k.clone(), v.clone())))
            .collect()
    };
    assert_eq!(all(&plain), plain_model.into_iter().collect::<Vec<_>>());
    assert_eq!(all(&list_a), flatten(&lists[0]));
    assert_eq!(all(&list_b), flatten(&lists[1]));
}

/// A request that defers its writes (`WriteRequest::defers_apply`): reads `read` (if any),
/// records what each of its runs saw, and writes `key` = what it saw (or `missed` when a read
/// failed and it `swallows` the error, breaking its promise).
struct Probe {
    table: datalith::kv::Table,
    key: &'static [u8],
    value: &'static [u8],
    read: Option<&'static [u8]>,
    swallows: bool,
    runs: Arc<std::sync::Mutex<Vec<Result<Option<Vec<u8>>, String>>>>,
    done: crossbeam_channel::Sender<()>,
}

impl datalith::kv::WriteRequest for Probe {
    fn size_hint(&self) -> usize {
        64
    }

    fn prepare(
        &mut self,
        view: datalith::kv::View<'_>,
        stage: &mut datalith::kv::Stage,
        _batch: &mut datalith::kv::BatchState,
    ) -> Result<(), datalith::kv::Rejected> {
        let mut value = self.value.to_vec();
        if let Some(k) = self.read {
            let seen = view
                .get(&self.table, k)
                .map(|v| v.map(<[u8]>::to_vec))
                .map_err(|e| e.to_string());
            self.runs.lock().unwrap().push(seen.clone());
            value = match seen {
                Ok(v) => v.unwrap_or_default(),
                Err(_) if self.swallows => b"missed".to_vec(),
                Err(_) => return Err(datalith::kv::Rejected),
            };
        }
        stage.put(&self.table, self.key, &value);
        Ok(())
    }

    fn defers_apply(&self) -> bool {
        true
    }

    fn finish(self: Box<Self>, _outcome: datalith::kv::Outcome) {
        let _ = self.done.send(());
    }
}

#[test]
fn a_deferred_request_sees_the_waiting_writes_of_earlier_requests_of_its_batch() {
    // (the reader swallows a failed read, the value it ends up writing)
    let table: &[(bool, &[u8])] = &[
        // Kept promise: the read fails, the waiting write is applied, the rerun sees it.
        (false, b"a"),
        // Broken promise: the batch is redone with every write applied at once.
        (true, b"a"),
    ];
    for (swallows, written) in table {
        let dir = tempfile::tempdir().unwrap();
        // Deferral is about writes waiting for LMDB inside one write transaction: the path
        // where every group is its own LMDB commit.
        let mut options = EnvOptions::default();
        options.log_apply_later = false;
        let env = Environment::open(dir.path(), options).unwrap();
        let t = env.table("t", TableKind::Plain).unwrap();
        hold_committer(&env, 200);
        let (done, finished) = crossbeam_channel::unbounded();
        let runs = Arc::new(std::sync::Mutex::new(Vec::new()));
        let probe = |key, value, read, swallows| Probe {
            table: t.clone(),
            key,
            value,
            read,
            swallows,
            runs: runs.clone(),
            done: done.clone(),
        };
        env.submit(Box::new(probe(b"k1", b"a", None, false)));
        env.submit(Box::new(probe(b"k2", b"", Some(b"k1"), *swallows)));
        for _ in 0..2 {
            finished.recv().unwrap();
        }
        let runs = runs.lock().unwrap().clone();
        assert!(runs.len() >= 2, "swallows {swallows}: {runs:?}");
        // Its first run shared the batch with the writer and met the waiting write.
        assert!(runs[0].is_err(), "swallows {swallows}: {runs:?}");
        assert_eq!(
            runs.last().unwrap(),
            &Ok(Some(b"a".to_vec())),
            "swallows {swallows}"
        );
        let read = env.read().unwrap();
        assert_eq!(
            read.view().get(&t, b"k2").unwrap(),
            Some(*written),
            "swallows {swallows}"
        );
    }
}

/// A batch slot that copies the (first) value of `from` in `source` to `copy` in `out` once
/// the batch's requests are done, counting its runs.
struct Copier {
    source: datalith::kv::Table,
    out: datalith::kv::Table,
    from: &'static [u8],
    runs: Arc<std::sync::atomic::AtomicUsize>,
}

impl datalith::kv::BatchSlot for Copier {
    fn finish(
        &mut self,
        view: datalith::kv::View<'_>,
        stage: &mut datalith::kv::Stage,
    ) -> Result<(), KvError> {
        self.runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let seen = match self.source.kind() {
            TableKind::Plain => view.get(&self.source, self.from)?.map(<[u8]>::to_vec),
            TableKind::List => view
                .list(&self.source, self.from)?
                .next()
                .transpose()?
                .map(<[u8]>::to_vec),
        };
        stage.put(&self.out, b"copy", seen.as_deref().unwrap_or(b"none"));
        Ok(())
    }

    fn as_any(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// Writes `key` = `value` into `source` and asks for the batch's `Copier`.
struct SlotUser {
    source: datalith::kv::Table,
    out: datalith::kv::Table,
    key: &'static [u8],
    value: &'static [u8],
    from: &'static [u8],
    runs: Arc<std::sync::atomic::AtomicUsize>,
    done: crossbeam_channel::Sender<()>,
}

impl datalith::kv::WriteRequest for SlotUser {
    fn size_hint(&self) -> usize {
        64
    }

    fn prepare(
        &mut self,
        _view: datalith::kv::View<'_>,
        stage: &mut datalith::kv::Stage,
        batch: &mut datalith::kv::BatchState,
    ) -> Result<(), datalith::kv::Rejected> {
        match self.source.kind() {
            TableKind::List => stage.list_add(&self.source, self.key, self.value),
            TableKind::Plain => stage.put(&self.source, self.key, self.value),
        }
        let (source, out) = (self.source.clone(), self.out.clone());
        let (from, runs) = (self.from, self.runs.clone());
        batch.slot(|| Copier {
            source,
            out,
            from,
            runs,
        });
        Ok(())
    }

    fn finish(self: Box<Self>, _outcome: datalith::kv::Outcome) {
        let _ = self.done.send(());
    }

    /// It reads nothing: its writes may be deferred.
    fn defers_apply(&self) -> bool {
        true
    }
}

#[test]
fn a_batch_slot_reads_every_write_of_its_batch_when_lmdb_is_written_later() {
    // A plain table's writes reach the committer's overlay at once; a list table's are
    // deferred (`committer::later::Working`): a slot that may read one of them runs again once
    // they are there.
    // (source kind, writes of the batch's requests, key the slot reads, what it copies, its
    // runs)
    type Case = (
        TableKind,
        &'static [(&'static [u8], &'static [u8])],
        &'static [u8],
        &'static [u8],
        usize,
    );
    let table: &[Case] = &[
        (TableKind::Plain, &[(b"k1", b"a")], b"k1", b"a", 1),
        (
            TableKind::Plain,
            &[(b"k1", b"a"), (b"k2", b"b")],
            b"k2",
            b"b",
            1,
        ),
        (TableKind::Plain, &[(b"k1", b"a")], b"k9", b"none", 1),
        (TableKind::Plain, &[(b"k1", b"a")], b"old", b"before", 1),
        (TableKind::List, &[(b"k1", b"a")], b"k1", b"a", 2),
        (
            TableKind::List,
            &[(b"k1", b"a"), (b"k2", b"b")],
            b"k1",
            b"a",
            2,
        ),
        (
            TableKind::List,
            &[(b"k1", b"a"), (b"k2", b"b")],
            b"k2",
            b"b",
            2,
        ),
        (TableKind::List, &[(b"k1", b"a")], b"k9", b"none", 1),
        (TableKind::List, &[(b"k1", b"a")], b"old", b"before", 1),
    ];
    for (kind, writes, from, copied, runs) in table {
        let dir = tempfile::tempdir().unwrap();
        let env = open(dir.path());
        let source = env.table("source", *kind).unwrap();
        let out = env.table("out", TableKind::Plain).unwrap();
        env.transact_kv(vec![match kind {
            TableKind::List => KvOp::list_add(&source, &b"old"[..], &b"before"[..]),
            TableKind::Plain => KvOp::put(&source, &b"old"[..], &b"before"[..]),
        }])
        .unwrap();
        hold_committer(&env, 200);
        let (done, finished) = crossbeam_channel::unbounded();
        let counted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        for (key, value) in writes.iter() {
            env.submit(Box::new(SlotUser {
                source: source.clone(),
                out: out.clone(),
                key,
                value,
                from,
                runs: counted.clone(),
                done: done.clone(),
            }));
        }
        for _ in 0..writes.len() {
            finished.recv().unwrap();
        }
        let case = format!("{kind:?} {writes:?} reading {from:?}");
        let read = env.read().unwrap();
        assert_eq!(
            read.view().get(&out, b"copy").unwrap(),
            Some(*copied),
            "{case}"
        );
        assert_eq!(
            counted.load(std::sync::atomic::Ordering::SeqCst),
            *runs,
            "{case}"
        );
        drop(read);
        drop(env);
        let env = open(dir.path());
        let out = env.table("out", TableKind::Plain).unwrap();
        let read = env.read().unwrap();
        assert_eq!(
            read.view().get(&out, b"copy").unwrap(),
            Some(*copied),
            "{case}"
        );
    }
}
