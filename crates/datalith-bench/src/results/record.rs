//! `run.json`: the record of one results folder's run, written by `datalith-bench all` next to
//! its `machine.json` (and by hand, from their `RUN.md`, for folders written before it).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::common::BenchError;

/// The file name of the record in a results folder.
pub const FILE: &str = "run.json";

/// One folder's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// `git rev-parse HEAD` of the tree that ran (with `-dirty` when it had changes).
    pub commit: String,
    /// UTC start, `YYYY-MM-DD HH:MM:SS`.
    pub date: String,
    /// The workloads the run made, in order.
    pub runs: Vec<WorkloadRun>,
}

/// One workload of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadRun {
    /// The workload's name (`write-kv`, `write-dl`, `query`, `blob`, `history`, `search`,
    /// `complex-sf0.1`, ...): the key under which the newest folder is published.
    pub workload: String,
    /// Where its `summary.jsonl` is, relative to the folder (`.` for the folder itself).
    pub dir: String,
    /// The exact command line.
    pub command: String,
    /// Wall-clock seconds of the workload's run.
    pub wall_s: f64,
    /// Its exit code (`None`: killed, or not recorded).
    pub exit: Option<i32>,
}

impl RunRecord {
    /// Reads `dir/run.json`.
    pub fn read(dir: &Path) -> Result<RunRecord, BenchError> {
        let path = dir.join(FILE);
        let text = std::fs::read_to_string(&path).map_err(BenchError::io(&path))?;
        Ok(serde_json::from_str(&text)?)
    }

    /// Writes `dir/run.json`.
    pub fn write(&self, dir: &Path) -> Result<(), BenchError> {
        let path = dir.join(FILE);
        std::fs::write(&path, serde_json::to_string_pretty(self)? + "\n")
            .map_err(BenchError::io(&path))
    }

    /// The commit's first 7 hex digits (and `-dirty` if so).
    pub fn short_commit(&self) -> String {
        let dirty = self.commit.ends_with("-dirty");
        let hex: String = self.commit.chars().take(7).collect();
        if dirty {
            format!("{hex}-dirty")
        } else {
            hex
        }
    }
}
