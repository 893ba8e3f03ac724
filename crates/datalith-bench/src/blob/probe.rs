//! What the operating system says a process and a block device did: CPU time (`getrusage`),
//! I/O counters (`/proc/self/io`) and sectors written (`common::device`).

use serde::{Deserialize, Serialize};

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

pub use crate::common::device::{sync_all, Device};

#[cfg(test)]
mod tests {
    use super::*;

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
