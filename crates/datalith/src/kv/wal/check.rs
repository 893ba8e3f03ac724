//! A read-only look at a directory's log, for `check`: what the next open for writing would
//! replay, and whether it would refuse the log as damaged inside (`survivor`).

use std::path::Path;

use super::super::error::KvError;
use super::file::LogFile;
use super::recovery;

/// How many more looks a damage found in the log gets, to tell it from a record a live writer
/// was writing (`check_log`).
const LIVE_LOOKS: usize = 3;
/// Between those looks: long enough for a writer to finish the record it was writing.
const LIVE_LOOK_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// What a directory's log holds beyond its checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogCheck {
    /// Whole records after the checkpoint: the next open for writing replays them.
    pub records_after_checkpoint: u64,
    /// Why the next open for writing would refuse the log (damaged inside), if it would.
    pub damage: Option<String>,
}

/// Reads the log of directory `dir` (whose data file has pages of `page_bytes`) without
/// writing anything; `None` when the directory has no log. A process writing the log may be
/// running: what is read is then a moment of it.
pub fn check_log(dir: &Path, page_bytes: usize) -> Result<Option<LogCheck>, KvError> {
    let Some(log) = LogFile::open_to_read(dir, page_bytes)? else {
        return Ok(None);
    };
    let checkpoint = log.checkpoint();
    if let Some(detail) = log.damage(checkpoint.as_ref()) {
        return Ok(Some(LogCheck {
            records_after_checkpoint: 0,
            damage: Some(detail),
        }));
    }
    let Some(c) = checkpoint else {
        return Ok(Some(LogCheck {
            records_after_checkpoint: 0,
            damage: None,
        }));
    };
    let (mut records, mut damage) = recovery::inspect(&log, &c)?;
    // A process writing the log meanwhile makes a record the scan met half written look
    // damaged once it is whole for the search after it: damage counts only if a second look
    // stops at the same record (damage on disk stays where it is; the writer moves on).
    for _ in 0..LIVE_LOOKS {
        let Some(first) = &damage else { break };
        std::thread::sleep(LIVE_LOOK_PAUSE);
        let Some(log) = LogFile::open_to_read(dir, page_bytes)? else {
            return Ok(None);
        };
        let Some(c) = log.checkpoint() else { break };
        let (again_records, again) = recovery::inspect(&log, &c)?;
        let confirmed = again.as_ref().is_some_and(|d| d.seq == first.seq);
        (records, damage) = (again_records, again);
        if confirmed {
            break;
        }
    }
    Ok(Some(LogCheck {
        records_after_checkpoint: records,
        damage: damage.map(|d| d.detail),
    }))
}
