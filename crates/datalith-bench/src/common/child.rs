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
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use super::BenchError;

/// What a child printed and how it ended.
#[derive(Debug)]
pub struct ChildOutput {
    /// Every `RESULT` object, in order.
    pub results: Vec<serde_json::Value>,
    /// The exit status.
    pub status: ExitStatus,
}

/// Runs `cmd`, calling `on_progress` for each `PROGRESS` line; stderr goes to `stderr_log`.
pub fn run(
    mut cmd: Command,
    what: &str,
    stderr_log: &Path,
    mut on_progress: impl FnMut(u64),
) -> Result<ChildOutput, BenchError> {
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
    let mut results = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| fail(format!("reading stdout: {e}")))?;
        if let Some(n) = line.strip_prefix("PROGRESS ") {
            if let Ok(n) = n.trim().parse() {
                on_progress(n);
            }
        } else if let Some(json) = line.strip_prefix("RESULT ") {
            results.push(
                serde_json::from_str(json)
                    .map_err(|e| fail(format!("bad RESULT line ({e}): {json}")))?,
            );
        }
    }
    let status = child
        .wait()
        .map_err(|e| fail(format!("waiting for it: {e}")))?;
    Ok(ChildOutput { results, status })
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
