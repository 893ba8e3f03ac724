//! The kill -9 torture binary (`datalith-torture`): a short run loses nothing and every
//! `check` is clean, and its verification does report a write that is missing. The full run
//! (1000 cycles) is `scripts/kill9_torture.sh`; here `DATALITH_KILL9_CYCLES` sets the count.

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
fn a_short_torture_loses_nothing_and_checks_clean() {
    let cycles = std::env::var("DATALITH_KILL9_CYCLES").unwrap_or_else(|_| "6".into());
    let dir = tempfile::tempdir().unwrap();
    let out = torture()
        .args(["kill9", "--cycles", &cycles, "--seed", "7"])
        .args(["--cycles-per-database", "3", "--max-delay-ms", "100"])
        .args(["--datalith", env!("CARGO_BIN_EXE_datalith")])
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let printed = text(&out);
    assert!(out.status.success(), "{printed}");
    let last = printed.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("cycles {cycles} acks "))
            && last.contains(" lost 0 check_failures 0 reopen_failures 0"),
        "{printed}"
    );
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
        // A line cut by the kill (no newline) was never acknowledged.
        ("d 999/1", format!("acks {} lost 2", real + 2), 1),
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
