//! A small run of the server's load test (`datalith-torture serve`): clients mixing reads
//! and writes, then a restart checking every acknowledged write; and the same with the
//! server killed (SIGKILL) halfway. The full run (200 clients, 60 s) is a command of its
//! own (crates/datalith-server/README.md).

use std::process::Command;

fn load(extra: &[&str]) -> String {
    load_with_workers(extra, None)
}

/// The load test against a server whose runtime has `workers` threads (tokio's
/// `TOKIO_WORKER_THREADS`, which the server started by the load test inherits: what
/// `--workers` sets).
fn load_with_workers(extra: &[&str], workers: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_datalith-torture"));
    if let Some(n) = workers {
        command.env("TOKIO_WORKER_THREADS", n);
    }
    let out = command
        .args(["serve", "--secs", "2", "--clients", "16", "--dir"])
        .arg(dir.path())
        .arg("--datalith")
        .arg(env!("CARGO_BIN_EXE_datalith"))
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn every_acknowledged_write_survives_a_stop_and_a_kill() {
    let clean = load(&[]);
    assert!(clean.contains(" lost 0"), "{clean}");
    assert!(clean.contains("transact"), "{clean}");
    let killed = load(&["--kill"]);
    assert!(killed.contains("SIGKILL halfway"), "{killed}");
    assert!(killed.contains(" lost 0"), "{killed}");
}

/// One worker: short queries run in place only while nothing else runs, transactions hand
/// the worker's other connections on while they wait (`block_in_place`); every read answers
/// and every acknowledged write survives.
#[test]
fn a_server_with_one_worker_answers_every_client() {
    let out = load_with_workers(&[], Some("1"));
    assert!(out.contains(" lost 0"), "{out}");
    for op in ["q-lookup", "q-count", "pull", "transact"] {
        let line = out.lines().find(|l| l.starts_with(op)).unwrap_or("");
        assert!(line.contains("errors 0"), "{op}: {out}");
    }
}
