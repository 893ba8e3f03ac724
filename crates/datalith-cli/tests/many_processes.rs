//! One database, many processes, with real processes: readers in other processes see every
//! acknowledged commit while one process writes, the reading commands work on a live
//! database, and a second writer gets the busy error naming the holder. The long run (60 s,
//! four readers) is `datalith-torture share`; here `DATALITH_SHARE_SECS` sets its length.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn datalith() -> Command {
    Command::new(env!("CARGO_BIN_EXE_datalith"))
}

#[test]
fn readers_in_other_processes_see_every_acknowledged_commit() {
    let secs = std::env::var("DATALITH_SHARE_SECS").unwrap_or_else(|_| "4".into());
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_datalith-torture"))
        .args(["share", "--secs", &secs, "--readers", "3"])
        .args(["--datalith", env!("CARGO_BIN_EXE_datalith")])
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let printed = text(&out);
    assert!(out.status.success(), "{printed}");
    assert!(
        printed.contains("datalith check on the live database: exit 0"),
        "{printed}"
    );
    let readers: Vec<&str> = printed
        .lines()
        .filter(|l| l.starts_with("reader "))
        .collect();
    assert_eq!(readers.len(), 3, "{printed}");
    for r in readers {
        assert!(r.contains(" violations 0 errors 0 "), "{printed}");
        assert!(
            !r.contains("reads 0 "),
            "a reader that read nothing shows nothing: {printed}"
        );
    }
}

/// A process that holds the database for writing, as an application would (`datalith-torture
/// hold`), until dropped.
struct Holder {
    child: Child,
}

impl Holder {
    fn start(db: &std::path::Path) -> Holder {
        let mut child = Command::new(env!("CARGO_BIN_EXE_datalith-torture"))
            .arg("hold")
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "held");
        Holder { child }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn reading_commands_work_on_a_database_another_process_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let _holder = Holder::start(&db);
    let path = db.to_str().unwrap();
    // (arguments, what the output must contain)
    let cases: &[(&[&str], &str)] = &[
        (
            &["query", path, "[:find ?n . :where [_ :name ?n]]"],
            "\"Ann\"",
        ),
        (&["stat", path], "datoms"),
        (&["check", path], ""),
        (&["export", path], ":name"),
        (&["log", path], "Ann"),
    ];
    for (args, wanted) in cases {
        let out = datalith().args(*args).output().unwrap();
        let printed = text(&out);
        assert!(out.status.success(), "datalith {args:?}: {printed}");
        assert!(printed.contains(wanted), "datalith {args:?}: {printed}");
    }
    let copy = dir.path().join("copy");
    let out = datalith()
        .args(["copy", path, copy.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let out = datalith()
        .args([
            "query",
            copy.to_str().unwrap(),
            "[:find ?n . :where [_ :name ?n]]",
        ])
        .output()
        .unwrap();
    assert!(
        text(&out).contains("\"Ann\""),
        "the copy holds the acknowledged commit: {}",
        text(&out)
    );
}

#[test]
fn a_second_writer_is_told_busy_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let holder = Holder::start(&db);
    let started = Instant::now();
    let out = datalith()
        .args([
            "transact",
            db.to_str().unwrap(),
            "[{:name \"Bob\"}]",
            "--format",
            "edn",
        ])
        .output()
        .unwrap();
    let waited = started.elapsed();
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(2), "{printed}");
    assert!(printed.contains(":datalith.error/busy"), "{printed}");
    assert!(printed.contains(":cognitect.anomalies/busy"), "{printed}");
    assert!(
        printed.contains(&format!("process {}", holder.child.id())),
        "{printed}"
    );
    // The default busy timeout is 5 s: it waited, and not for ever.
    assert!(
        waited >= Duration::from_secs(4) && waited < Duration::from_secs(30),
        "{waited:?}"
    );
}
