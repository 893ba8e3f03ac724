//! One writing process per database: the write-ahead log is held with an exclusive `flock`
//! (`wal::file`) by the process that writes it. A second process that opens for writing waits
//! up to `EnvOptions::busy_timeout` for the hold to end, as SQLite's `busy_timeout`, then
//! fails with `KvError::Busy` naming the holder (its pid, from `writer.pid`) and the wait.
//!
//! Why not pass the log between processes, as SQLite passes its write lock: a writer keeps
//! state that lives in its memory only (the groups acknowledged but not yet in LMDB, the
//! checkpointer's page-reuse guard, the committer's overlay), so a hand-off would first apply
//! every group and take a checkpoint (two data-file syncs) and the next holder would read the
//! log back: a cost per hand-off that would fall on every commit of an application sharing
//! its database with a script. Readers are never refused (`wal::tail`); writers from many
//! processes share one database through a server.

use std::io::ErrorKind;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::kv::error::KvError;
use crate::limits::WRITER_BUSY_POLL;

/// The file that names the process holding the log: its pid, in decimal. Written after the
/// hold begins; read only to name the holder in an error (a stale one is harmless: it is
/// read only while some process holds the log).
pub(crate) const WRITER_PID_FILE: &str = "writer.pid";

/// Runs `take` (which takes the log's hold, or fails with `ResourceBusy` while another process
/// has it) until it succeeds, fails otherwise, or `timeout` has passed; then records this
/// process as the holder.
pub(super) fn hold<T>(
    timeout: Duration,
    dir: &Path,
    mut take: impl FnMut() -> Result<T, KvError>,
) -> Result<T, KvError> {
    let started = Instant::now();
    loop {
        match take() {
            Ok(held) => {
                // Only a name for others' errors: a directory that refuses it loses nothing.
                let _ = std::fs::write(dir.join(WRITER_PID_FILE), std::process::id().to_string());
                return Ok(held);
            }
            Err(KvError::Io(e)) if e.kind() == ErrorKind::ResourceBusy => {
                let waited = started.elapsed();
                if waited >= timeout {
                    return Err(KvError::Busy {
                        holder: holder(dir).unwrap_or(0),
                        waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                    });
                }
                std::thread::sleep(WRITER_BUSY_POLL.min(timeout - waited));
            }
            Err(e) => return Err(e),
        }
    }
}

/// The pid `writer.pid` names, if it holds one.
fn holder(dir: &Path) -> Option<u32> {
    std::fs::read_to_string(dir.join(WRITER_PID_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()
}
