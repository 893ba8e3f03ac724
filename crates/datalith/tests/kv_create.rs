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
