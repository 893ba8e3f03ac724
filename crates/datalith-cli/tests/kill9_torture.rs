//! The kill -9 torture binary (`datalith-torture`): a short run loses nothing, answers every
//! full-text query as the data says and every `check` is clean, and its verification does
//! report a write that is missing and a full-text answer that is wrong. The full run (1000
//! cycles) is `scripts/kill9_torture.sh`; here `DATALITH_KILL9_CYCLES` sets the count.

use std::process::Command;

fn torture() -> Command {
    Command::new(env!("CARGO_BIN_EXE_datalith-torture"))
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_short_torture_loses_nothing_and_checks_clean_in_both_modes_of_the_log() {
    let cycles = std::env::var("DATALITH_KILL9_CYCLES").unwrap_or_else(|_| "6".into());
    // `nosync` writes the same log without its sync: a process crash keeps the written
    // records in the page cache, so it too must lose nothing acknowledged.
    for durability in ["durable", "nosync"] {
        let dir = tempfile::tempdir().unwrap();
        let out = torture()
            .args(["kill9", "--cycles", &cycles, "--seed", "7"])
            .args(["--cycles-per-database", "3", "--max-delay-ms", "100"])
            .args(["--durability", durability])
            .args(["--datalith", env!("CARGO_BIN_EXE_datalith")])
            .arg("--dir")
            .arg(dir.path())
            .output()
            .unwrap();
        let printed = text(&out);
        assert!(out.status.success(), "{durability}: {printed}");
        assert!(
            printed.contains(&format!("{durability} writes")),
            "{printed}"
        );
        let last = printed.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(&format!("cycles {cycles} acks "))
                && last.contains(" lost 0 check_failures 0 reopen_failures 0 wrong_answers 0"),
            "{durability}: {printed}"
        );
    }
}

#[test]
fn verification_reports_acknowledged_writes_that_are_missing() {
    let dir = tempfile::tempdir().unwrap();
    let out = torture()
        .args(["kill9", "--cycles", "1", "--seed", "3"])
        .args(["--datalith", env!("CARGO_BIN_EXE_datalith")])
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let (db, log) = (dir.path().join("db0"), dir.path().join("acks0.log"));
    let acked = std::fs::read_to_string(&log).unwrap();
    let real = acked.lines().count();
    assert!(real > 0, "the writer acknowledged nothing");
    // Rows: what is appended to the ack log -> what verification prints and its exit code.
    let cases = [
        ("", format!("acks {real} lost 0"), 0),
        (
            "d 999/0\n",
            format!("acks {} lost 1 (first lost: d 999/0)", real + 1),
            1,
        ),
        // Write 0/0 went to Datalog (even numbers do), so the KV table lacks it.
        ("k 0/0\n", format!("acks {} lost 2", real + 2), 1),
        // Entity 0/0 never reached version 999.
        ("t 0/0 999\n", format!("acks {} lost 3", real + 3), 1),
        // No such search write was ever logged.
        ("s 999999\n", format!("acks {} lost 4", real + 4), 1),
        // A line cut by the kill (no newline) was never acknowledged.
        ("d 999/1", format!("acks {} lost 4", real + 4), 1),
    ];
    let mut log_text = acked;
    for (append, want, code) in cases {
        log_text.push_str(append);
        std::fs::write(&log, &log_text).unwrap();
        let out = torture().arg("verify").arg(&db).arg(&log).output().unwrap();
        let printed = text(&out);
        assert!(printed.starts_with(&want), "after {append:?}: {printed}");
        assert_eq!(out.status.code(), Some(code), "after {append:?}: {printed}");
    }
}

#[test]
fn verification_reports_full_text_answers_that_disagree_with_the_writes() {
    use datalith::search::{AnalyzerConfig, DocChange};
    use datalith::{Database, DbOptions};
    let dir = tempfile::tempdir().unwrap();
    let out = torture()
        .args(["kill9", "--cycles", "1", "--seed", "5"])
        .args(["--datalith", env!("CARGO_BIN_EXE_datalith")])
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let (db_dir, log) = (dir.path().join("db0"), dir.path().join("acks0.log"));
    let acked = std::fs::read_to_string(&log).unwrap();
    // Write 0/0 (a creation) is the first acknowledged.
    assert!(acked.starts_with("d 0/0\n"), "{acked}");
    // A document no logged search write touched.
    let intents = std::fs::read_to_string(db_dir.join("torture-search.log")).unwrap();
    let untouched = (0..300u64)
        .find(|id| {
            !intents
                .split_whitespace()
                .any(|c| c == format!("r{id}") || c.starts_with(&format!("p{id}.")))
        })
        .unwrap();
    // (The database is open only while it is changed: verification opens it to write.)
    let open = || Database::open(&db_dir, DbOptions::default()).unwrap();
    // Rows: a write made behind the writer's back -> the first wrong answer verification
    // reports (a search one first: the Datalog ones are listed before it).
    let cases: [(Box<dyn Fn()>, String); 2] = [
        (
            Box::new(|| {
                let ix = open()
                    .env()
                    .search_index("torture", AnalyzerConfig::default())
                    .unwrap();
                ix.write(vec![DocChange::Put {
                    id: untouched,
                    text: format!("d{untouched}v999 amber"),
                }])
                .unwrap()
            }),
            // One document more than the writes put.
            "(first wrong: search index length".to_string(),
        ),
        (
            // A text that is not its version's (the version is not moved).
            Box::new(|| {
                open()
                    .transact(r#"[{:torture/key "0/0" :torture/text "grove heron"}]"#)
                    .unwrap();
            }),
            "(first wrong: entity 0/0 at version ".into(),
        ),
    ];
    for (tamper, want) in &cases {
        tamper();
        let out = torture()
            .arg("verify")
            .arg(&db_dir)
            .arg(&log)
            .output()
            .unwrap();
        let printed = text(&out);
        assert!(printed.contains(want.as_str()), "want {want:?}: {printed}");
        assert_eq!(out.status.code(), Some(1), "{printed}");
    }
}
