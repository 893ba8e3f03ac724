//! The `datalith` binary on damaged, empty, missing and foreign data files: every reading
//! command exits 2 with a message naming the file, no process dies of a signal, and `check`
//! creates and changes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_datalith");

fn run(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(BIN)
        .args(args)
        .env("DATALITH_HISTORY", "/dev/null")
        .output()
        .expect("run datalith");
    // A signal leaves no exit code: make it a code no command uses.
    let code = o.status.code().unwrap_or(-1);
    (
        code,
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A small database made by the binary itself, with its lock file removed (as a copied
/// database would be), and its data file's bytes.
fn sample(dir: &Path) -> (PathBuf, Vec<u8>) {
    let db = dir.join("sound");
    let s = db.to_str().unwrap();
    let schema = "[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                   {:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]";
    assert_eq!(run(&["transact", s, schema]).0, 0);
    let mut data = String::from("[");
    for i in 0..3000 {
        data.push_str(&format!("{{:name \"p{i}\" :n {}}}", i % 13));
    }
    data.push(']');
    let (code, _, err) = run(&["transact", s, &data]);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_file(db.join("lock.mdb")).unwrap();
    let bytes = std::fs::read(db.join("data.mdb")).unwrap();
    (db, bytes)
}

fn listing(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| {
                let p = e.unwrap().path();
                let b = std::fs::read(&p).unwrap_or_default();
                (p, b)
            })
            .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn damaged_files_exit_2_naming_the_file_and_check_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (sound, bytes) = sample(tmp.path());
    let (code, out, err) = run(&["check", sound.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("every one walked"), "{out}");
    assert!(!sound.join("lock.mdb").exists(), "check made a lock file");

    let page = 4096;
    let pages = bytes.len() / page;
    let cases: Vec<(&str, Box<dyn Fn(&mut Vec<u8>)>, &str)> = vec![
        ("zero-length", Box::new(|b| b.clear()), "the file is empty"),
        (
            "text",
            Box::new(|b| *b = b"hello, world\n".to_vec()),
            "not a database file",
        ),
        (
            "half",
            Box::new(move |b| b.truncate(b.len() / 2)),
            "past the end of the file",
        ),
        (
            "second-meta-cut",
            Box::new(move |b| b.truncate(page + 10)),
            "truncated",
        ),
        (
            "zeroed-pages",
            Box::new(move |b| b[2 * page..pages / 2 * page].fill(0)),
            "corrupt",
        ),
    ];
    for (name, damage, message) in &cases {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let mut b = bytes.clone();
        damage(&mut b);
        std::fs::write(dir.join("data.mdb"), &b).unwrap();
        let d = dir.to_str().unwrap();
        let before = listing(&dir);
        for args in [
            vec!["check", d],
            vec!["stat", d],
            vec!["query", d, "[:find (count ?e) . :where [?e :name]]"],
            vec!["export", d],
        ] {
            let (code, _, err) = run(&args);
            assert_eq!(code, 2, "{name} {args:?}: {err}");
            assert!(err.contains(message), "{name} {args:?}: {err}");
            assert!(
                err.contains(&format!("{d}/data.mdb")),
                "{name} {args:?}: {err}"
            );
        }
        assert!(listing(&dir) == before, "{name}: the directory changed");
    }

    // Missing: nothing is created.
    let missing = tmp.path().join("missing");
    let (code, _, err) = run(&["check", missing.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(!missing.exists());
    let empty_dir = tmp.path().join("empty-dir");
    std::fs::create_dir(&empty_dir).unwrap();
    let (code, _, err) = run(&["check", empty_dir.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(listing(&empty_dir).is_empty());
}
