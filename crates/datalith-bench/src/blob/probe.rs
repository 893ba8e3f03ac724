//! What the operating system says a process and a block device did: CPU time (`getrusage`),
//! I/O counters (`/proc/self/io`) and sectors written (`/sys/dev/block/<maj>:<min>/stat`).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use crate::common::BenchError;

/// CPU and I/O counters of this whole process (every thread, including store threads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcCounters {
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Write-family system calls (`syscw`: write, pwrite, writev, ...), one per call.
    pub syscw: u64,
    /// Bytes this process caused to be sent to storage (`write_bytes`): counted when a page is
    /// dirtied, so it misses file-system journal writes and counts overwritten pages once each.
    pub write_bytes: u64,
    /// Bytes passed to write-family calls (`wchar`).
    pub wchar: u64,
}

impl ProcCounters {
    /// The counters of this process now. `/proc/self/io` missing (not Linux) reads as zeros.
    pub fn now() -> ProcCounters {
        // SAFETY: `getrusage` only writes into the zeroed struct we hand it.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: RUSAGE_SELF is valid and `ru` is a valid, writable `rusage`.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let (user_s, sys_s) = if rc == 0 {
            (secs(ru.ru_utime), secs(ru.ru_stime))
        } else {
            (0.0, 0.0)
        };
        let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
        let field = |name: &str| {
            io.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        ProcCounters {
            user_s,
            sys_s,
            syscw: field("syscw"),
            write_bytes: field("write_bytes"),
            wchar: field("wchar"),
        }
    }

    /// What happened between `earlier` and `self`.
    pub fn since(self, earlier: ProcCounters) -> ProcCounters {
        ProcCounters {
            user_s: self.user_s - earlier.user_s,
            sys_s: self.sys_s - earlier.sys_s,
            syscw: self.syscw.saturating_sub(earlier.syscw),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            wchar: self.wchar.saturating_sub(earlier.wchar),
        }
    }
}

/// The block device holding a directory, read through its `stat` file in sysfs.
#[derive(Debug, Clone)]
pub struct Device {
    /// `maj:min` of the device.
    pub id: String,
    /// Its kernel name (`vda`, `loop0`, `nvme0n1p2`), for the report.
    pub name: String,
    stat: PathBuf,
}

impl Device {
    /// The device of the file system holding `dir`, or `None` if it has no block device
    /// (tmpfs, overlay without a backing device) or sysfs is not there.
    pub fn of(dir: &Path) -> Option<Device> {
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata(dir).ok()?.dev();
        // SAFETY: `major`/`minor` only decode the number.
        let (maj, min) = (libc::major(dev), libc::minor(dev));
        let id = format!("{maj}:{min}");
        let sys = PathBuf::from(format!("/sys/dev/block/{id}"));
        let stat = sys.join("stat");
        std::fs::metadata(&stat).ok()?;
        let name = std::fs::read_link(&sys)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| id.clone());
        Some(Device { id, name, stat })
    }

    /// Bytes written to the device since boot (sectors written x 512, the unit of
    /// `/sys/block/*/stat` whatever the device's sector size).
    pub fn bytes_written(&self) -> Result<u64, BenchError> {
        let text = std::fs::read_to_string(&self.stat).map_err(BenchError::io(&self.stat))?;
        parse_sectors_written(&text)
            .map(|s| s * 512)
            .ok_or_else(|| BenchError::Child {
                what: format!("device {}", self.name),
                message: format!("cannot parse {}: {text:?}", self.stat.display()),
            })
    }
}

/// Field 7 of a block `stat` line is sectors written.
fn parse_sectors_written(stat: &str) -> Option<u64> {
    stat.split_whitespace().nth(6)?.parse().ok()
}

/// Writes every dirty page of every file system to its device and waits (`sync(2)`), so
/// that the device counters include everything a run left in the page cache.
pub fn sync_all() {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_written_is_the_seventh_field() {
        let cases: &[(&str, Option<u64>)] = &[
            (
                "   12345      678   90123   4567   89012   3456  7890123  45678  0  1234  5678",
                Some(7890123),
            ),
            ("1 2 3 4 5 6", None),
            ("1 2 3 4 5 6 x", None),
        ];
        for (line, want) in cases {
            assert_eq!(parse_sectors_written(line), *want, "{line}");
        }
    }

    #[test]
    fn own_counters_move_forward() {
        let a = ProcCounters::now();
        let path = std::env::temp_dir().join(format!("blob-probe-{}", std::process::id()));
        std::fs::write(&path, vec![7u8; 4096]).expect("write temp file");
        let _ = std::fs::remove_file(&path);
        let d = ProcCounters::now().since(a);
        assert!(d.syscw >= 1, "{d:?}");
        assert!(d.user_s >= 0.0 && d.sys_s >= 0.0);
    }
}
