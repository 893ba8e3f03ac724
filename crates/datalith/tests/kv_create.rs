//! Creating an environment. Its data file is made whole under a directory of its own and only
//! then named `data.mdb`, so a crash or a full disk part way leaves either no data file or a
//! whole one: never an empty or partial file, which every later open would have to refuse
//! (an empty `data.mdb` cannot be told from a damaged one, and still is refused).

use std::path::Path;

use datalith::kv::{EnvOptions, Environment, KvOp, TableKind};

#[path = "common/dead_pid.rs"]
mod dead_pid;
use dead_pid::dead_pid;

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    n.sort();
    n
}

fn write_and_read_back(dir: &Path) {
    let env = Environment::open(dir, EnvOptions::default()).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    env.transact_kv(vec![KvOp::put(&t, b"k", b"v")]).unwrap();
    drop(env);
    let env = Environment::open(dir, EnvOptions::default()).unwrap();
    let t = env.table("t", TableKind::Plain).unwrap();
    let read = env.read().unwrap();
    assert_eq!(read.view().get(&t, b"k").unwrap(), Some(&b"v"[..]));
}

#[test]
fn a_new_environment_leaves_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    write_and_read_back(dir.path());
    assert_eq!(
        names(dir.path()),
        ["data.mdb", "lock.mdb", "txlog.dlog", "writer.pid"]
    );
}

#[test]
fn the_leftovers_of_a_creation_that_died_are_removed_and_the_directory_opens() {
    let dir = tempfile::tempdir().unwrap();
    // What a process that died while creating the data file leaves: its directory with an
    // empty data file, and no `data.mdb`.
    let partial = dir
        .path()
        .join(format!("data.mdb.creating.{}.0", dead_pid()));
    std::fs::create_dir(&partial).unwrap();
    std::fs::write(partial.join("data.mdb"), b"").unwrap();
    write_and_read_back(dir.path());
    assert!(!partial.exists());
    assert_eq!(
        names(dir.path()),
        ["data.mdb", "lock.mdb", "txlog.dlog", "writer.pid"]
    );
}

#[test]
fn an_empty_data_file_is_still_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.mdb"), b"").unwrap();
    let err = Environment::open(dir.path(), EnvOptions::default()).unwrap_err();
    assert_eq!(err.category(), datalith::error::NOT_A_DATABASE, "{err}");
    assert_eq!(
        std::fs::metadata(dir.path().join("data.mdb"))
            .unwrap()
            .len(),
        0
    );
}

/// The generation of the log's newest checkpoint slot: how many checkpoints it has had.
fn checkpoints(dir: &Path) -> u64 {
    let log = std::fs::read(dir.join(datalith::kv::wal::LOG_FILE)).unwrap();
    // Two slots of `(44 + 2 pages + 4)` bytes rounded up to 4 KiB: 12 KiB with 4 KiB pages.
    [0usize, 12 << 10]
        .iter()
        .filter(|&&at| log[at..at + 4] == 0x4b43_4c44u32.to_le_bytes())
        .map(|&at| u64::from_le_bytes(log[at + 8..at + 16].try_into().unwrap()))
        .max()
        .unwrap()
}

#[test]
fn a_new_database_makes_its_tables_durable_in_one_checkpoint() {
    // Each table made alone was a checkpoint of its own (three syncs): 13 for a new store's
    // tables, a third of the time to create a database and bulk-load 100,000 datoms into it.
    let dir = tempfile::tempdir().unwrap();
    drop(datalith::Database::open(dir.path(), datalith::DbOptions::default()).unwrap());
    let new = checkpoints(dir.path());
    assert!(new <= 4, "a new database took {new} checkpoints");
    // Opening it again creates nothing: its tables cost no checkpoint.
    drop(datalith::Database::open(dir.path(), datalith::DbOptions::default()).unwrap());
    let again = checkpoints(dir.path()) - new;
    assert!(again <= 2, "reopening took {again} checkpoints");
}
