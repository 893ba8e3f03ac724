//! Child processes and their line protocol.
//!
//! Each condition runs in a child process (our own binary re-invoked with a hidden subcommand,
//! or a peer harness such as the JVM one in `bench/peers/`), so its CPU time and peak RSS are
//! its own. Children print lines on stdout:
//! - `PROGRESS <writes>`: how far the run is (drives the progress bar);
//! - `RESULT <json>`: one result object;
//!
//! and anything else, which is ignored. Their stderr goes to a log file.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::BenchError;

/// What a child printed and how it ended.
#[derive(Debug)]
pub struct ChildOutput {
    /// Every `RESULT` object, in order.
    pub results: Vec<serde_json::Value>,
    /// The exit status.
    pub status: ExitStatus,
    /// Killed because it ran past its deadline.
    pub timed_out: bool,
}

/// Runs `cmd`, calling `on_progress` for each `PROGRESS` line; stderr goes to `stderr_log`.
pub fn run(
    cmd: Command,
    what: &str,
    stderr_log: &Path,
    on_progress: impl FnMut(u64),
) -> Result<ChildOutput, BenchError> {
    run_until(cmd, what, stderr_log, None, on_progress)
}

/// Where `bench/peers` is: `--peers-dir`, else the nearest `bench/peers` (a folder with
/// `run.sh`) above the current directory, else the one of the source tree this binary was
/// built from.
pub fn peers_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            let candidate = dir.join("bench").join("peers");
            if candidate.join("run.sh").is_file() {
                return candidate;
            }
        }
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(manifest)
        .join("bench")
        .join("peers")
}

/// A harness that ended badly without saying why in its result: `error` gets its exit status
/// and the last lines of its log (an error the result already carries is kept).
pub fn note_failed_exit(status: ExitStatus, stderr_log: &Path, error: &mut Option<String>) {
    if !status.success() && error.is_none() {
        *error = Some(format!(
            "harness exited with {}: {}",
            status,
            tail(stderr_log, 2)
        ));
    }
}

/// Starts `cmd` with no stdin, its stderr into the new file `stderr_log` and its stdout
/// piped, which is returned beside the child.
pub fn spawn_logged(
    cmd: &mut Command,
    what: &str,
    stderr_log: &Path,
) -> Result<(std::process::Child, std::process::ChildStdout), BenchError> {
    let log = File::create(stderr_log).map_err(BenchError::io(stderr_log))?;
    let fail = |message: String| BenchError::Child {
        what: what.to_string(),
        message,
    };
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .map_err(|e| fail(format!("cannot start: {e}")))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| fail("no stdout pipe".into()))?;
    Ok((child, stdout))
}

/// [`run`], killing the child (SIGKILL, by its pid) if it is still running after `deadline`.
pub fn run_until(
    mut cmd: Command,
    what: &str,
    stderr_log: &Path,
    deadline: Option<Duration>,
    mut on_progress: impl FnMut(u64),
) -> Result<ChildOutput, BenchError> {
    let (mut child, stdout) = spawn_logged(&mut cmd, what, stderr_log)?;
    let fail = |message: String| BenchError::Child {
        what: what.to_string(),
        message,
    };
    let finished = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let watchdog = deadline.map(|limit| {
        let (finished, timed_out) = (finished.clone(), timed_out.clone());
        let pid = child.id() as libc::pid_t;
        std::thread::spawn(move || {
            let start = Instant::now();
            while !finished.load(Ordering::Acquire) {
                if start.elapsed() >= limit {
                    timed_out.store(true, Ordering::Release);
                    // SAFETY: `pid` is our own child, not yet reaped (we reap it only after
                    // `finished` is set), so the id cannot have been reused.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    });
    let mut results = Vec::new();
    // Read to the end whatever happens, so the child is always reaped below.
    let mut bad = None;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if let Some(n) = line.strip_prefix("PROGRESS ") {
            if let Ok(n) = n.trim().parse() {
                on_progress(n);
            }
        } else if let Some(json) = line.strip_prefix("RESULT ") {
            match serde_json::from_str(json) {
                Ok(v) => results.push(v),
                Err(e) => bad = Some(format!("bad RESULT line ({e}): {json}")),
            }
        }
    }
    // Stop the watchdog before reaping, so it never signals a reused pid.
    finished.store(true, Ordering::Release);
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    let status = child
        .wait()
        .map_err(|e| fail(format!("waiting for it: {e}")))?;
    if let Some(message) = bad {
        return Err(fail(message));
    }
    Ok(ChildOutput {
        results,
        status,
        timed_out: timed_out.load(Ordering::Acquire),
    })
}

/// The last `n` lines of a log file, for error messages.
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Child side: reports progress.
pub fn emit_progress(writes: u64) {
    let mut out = std::io::stdout().lock();
    // A closed pipe only loses progress display; the result line below reports failure.
    let _ = writeln!(out, "PROGRESS {writes}");
    let _ = out.flush();
}

/// Child side: reports a result object.
pub fn emit_result<T: serde::Serialize>(result: &T) -> Result<(), BenchError> {
    let json = serde_json::to_string(result)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "RESULT {json}")
        .and_then(|_| out.flush())
        .map_err(|e| BenchError::Child {
            what: "stdout".into(),
            message: e.to_string(),
        })
}
