//! A small run of the server's load test (`datalith-torture serve`): clients mixing reads
//! and writes, then a restart checking every acknowledged write; and the same with the
//! server killed (SIGKILL) halfway. The full run (200 clients, 60 s) is a command of its
//! own (crates/datalith-server/README.md).

use std::process::Command;

fn load(extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_datalith-torture"))
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
