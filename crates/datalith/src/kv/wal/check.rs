//! A read-only look at a directory's log, for `check`: what the next open for writing would
//! replay, and whether it would refuse the log as damaged inside (`survivor`).

use std::path::Path;

use super::super::error::KvError;
use super::file::LogFile;
use super::recovery;

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
    let (records, damage) = recovery::inspect(&log, &c)?;
    Ok(Some(LogCheck {
        records_after_checkpoint: records,
        damage: damage.map(|d| d.detail),
    }))
}
