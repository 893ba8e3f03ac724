//! The results folders under `bench/results/`, the workloads each one's `run.json` names, and
//! the newest folder of each workload (the one `RESULTS.md` publishes).

use std::path::{Path, PathBuf};

use super::record::{RunRecord, WorkloadRun};

/// One workload as one folder holds it.
#[derive(Debug, Clone)]
pub struct Published {
    /// The folder's name (`2026-12-02-query`).
    pub folder: String,
    /// The folder.
    pub path: PathBuf,
    /// The folder's run.
    pub record: RunRecord,
    /// This workload's part of it.
    pub run: WorkloadRun,
}

impl Published {
    /// The directory of this workload's `summary.jsonl`, charts and `summary.md`.
    pub fn workload_dir(&self) -> PathBuf {
        if self.run.dir == "." {
            self.path.clone()
        } else {
            self.path.join(&self.run.dir)
        }
    }

    /// The same, relative to the results directory, with `/` separators (for links).
    pub fn link_dir(&self) -> String {
        if self.run.dir == "." {
            self.folder.clone()
        } else {
            format!("{}/{}", self.folder, self.run.dir)
        }
    }
}

/// Everything under the results directory.
#[derive(Debug, Default)]
pub struct Catalog {
    /// Every workload of every recorded folder.
    pub published: Vec<Published>,
    /// Folders without a readable `run.json`, with why.
    pub unrecorded: Vec<(String, String)>,
}

/// Where workloads go in `RESULTS.md`: the seeds' four first, then the others by name.
const ORDER: [&str; 8] = [
    "write-dl",
    "write-kv",
    "query",
    "blob",
    "history",
    "search",
    "query-remote",
    "write-remote",
];

impl Catalog {
    /// Reads every folder of `dir` (files at its top, such as `RESULTS.md`, are not folders).
    pub fn scan(dir: &Path) -> Catalog {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        let mut c = Catalog::default();
        for folder in names {
            let path = dir.join(&folder);
            match RunRecord::read(&path) {
                Ok(record) => {
                    for run in &record.runs {
                        c.published.push(Published {
                            folder: folder.clone(),
                            path: path.clone(),
                            record: record.clone(),
                            run: run.clone(),
                        });
                    }
                }
                Err(e) => c.unrecorded.push((folder, e.to_string())),
            }
        }
        c
    }

    /// The newest folder of each workload (by the run's date, then the folder's name), in
    /// publishing order.
    pub fn newest(&self) -> Vec<&Published> {
        let mut names: Vec<&str> = self
            .published
            .iter()
            .map(|p| p.run.workload.as_str())
            .collect();
        names.sort_by_key(|n| (ORDER.iter().position(|o| o == n).unwrap_or(ORDER.len()), *n));
        names.dedup();
        names
            .into_iter()
            .filter_map(|n| {
                self.published
                    .iter()
                    .filter(|p| p.run.workload == n)
                    .max_by(|a, b| {
                        (a.record.date.as_str(), a.folder.as_str())
                            .cmp(&(b.record.date.as_str(), b.folder.as_str()))
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(date: &str, workloads: &[&str]) -> RunRecord {
        RunRecord {
            commit: "0123456789abcdef".into(),
            date: date.into(),
            runs: workloads
                .iter()
                .map(|w| WorkloadRun {
                    workload: w.to_string(),
                    dir: w.to_string(),
                    command: format!("datalith-bench all --only {w}"),
                    wall_s: 1.0,
                    exit: Some(0),
                })
                .collect(),
        }
    }

    #[test]
    fn the_newest_folder_of_each_workload_in_publishing_order() {
        let dir = tempfile::tempdir().unwrap();
        let folders: [(&str, &str, &[&str]); 4] = [
            (
                "2026-12-01-all",
                "2026-12-01 10:00:00",
                &["query", "write-dl"],
            ),
            ("2026-12-02-query", "2026-12-02 09:00:00", &["query"]),
            (
                "2026-12-02-complex",
                "2026-12-02 08:00:00",
                &["complex-sf1"],
            ),
            ("2026-12-02-blob", "2026-12-02 07:00:00", &["blob"]),
        ];
        for (name, date, workloads) in folders {
            let p = dir.path().join(name);
            std::fs::create_dir(&p).unwrap();
            record(date, workloads).write(&p).unwrap();
        }
        std::fs::create_dir(dir.path().join("2026-11-30-old")).unwrap();
        std::fs::write(dir.path().join("RESULTS.md"), "").unwrap();
        let c = Catalog::scan(dir.path());
        let got: Vec<(String, String)> = c
            .newest()
            .iter()
            .map(|p| (p.run.workload.clone(), p.folder.clone()))
            .collect();
        let want = [
            ("write-dl", "2026-12-01-all"),
            ("query", "2026-12-02-query"),
            ("blob", "2026-12-02-blob"),
            ("complex-sf1", "2026-12-02-complex"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(c.unrecorded.len(), 1);
        assert_eq!(c.unrecorded[0].0, "2026-11-30-old");
    }
}
