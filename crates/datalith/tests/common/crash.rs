//! The harness shared by the kill -9 tests: a child test process writes and prints `ACK <key>`
//! once a write is acknowledged as durable; the parent kills it at a random moment and gets
//! back every key the child acknowledged before it died.

use rand::RngExt;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Kill cycles per test (`DATALITH_CRASH_CYCLES`, default 20).
pub fn cycles() -> u32 {
    std::env::var("DATALITH_CRASH_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

/// The child's side: prints acknowledgements, one line each, flushed at once so that nothing
/// acknowledged is still in a buffer when the child is killed.
#[derive(Clone)]
pub struct Acker(Arc<Mutex<std::io::Stdout>>);

impl Acker {
    pub fn new() -> Acker {
        Acker(Arc::new(Mutex::new(std::io::stdout())))
    }

    pub fn ack(&self, key: impl std::fmt::Display) {
        let mut o = self.0.lock().unwrap();
        writeln!(o, "ACK {key}").unwrap();
        o.flush().unwrap();
    }
}

/// Runs the ignored test `child` of this test binary with `env`, kills it with SIGKILL at a
/// random moment after its first acknowledgement, and returns the keys it acknowledged.
pub fn run_and_kill(child: &str, env: &[(&str, String)]) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(&exe);
    cmd.args([
        "--exact",
        child,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut proc = cmd.spawn().unwrap();
    let stdout = proc.stdout.take().unwrap();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let acked = acked.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(k) = line.strip_prefix("ACK ") {
                    acked.lock().unwrap().push(k.to_string());
                }
            }
        })
    };
    // Kill at a random moment after the child is writing (startup time varies with load).
    let started = std::time::Instant::now();
    while acked.lock().unwrap().is_empty() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let pause = rand::rng().random_range(0..250);
    std::thread::sleep(Duration::from_millis(pause));
    proc.kill().unwrap();
    proc.wait().unwrap();
    reader.join().unwrap();
    let keys = std::mem::take(&mut *acked.lock().unwrap());
    keys
}
