//! CPU time and peak memory of this process, from `getrusage`.

/// Resource usage of the whole process (every thread, including store background threads).
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Peak resident set size in MB (Linux reports KiB).
    pub peak_rss_mb: f64,
}

impl Usage {
    /// Usage of this process so far.
    pub fn now() -> Usage {
        // SAFETY: `getrusage` only writes into the zeroed struct we hand it.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: RUSAGE_SELF is valid and `ru` is a valid, writable `rusage`.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        if rc != 0 {
            return Usage::default();
        }
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Usage {
            user_s: secs(ru.ru_utime),
            sys_s: secs(ru.ru_stime),
            peak_rss_mb: ru.ru_maxrss as f64 / 1024.0,
        }
    }

    /// CPU spent between `earlier` and `self`; the peak RSS is `self`'s (it never decreases).
    pub fn since(self, earlier: Usage) -> Usage {
        Usage {
            user_s: self.user_s - earlier.user_s,
            sys_s: self.sys_s - earlier.sys_s,
            peak_rss_mb: self.peak_rss_mb,
        }
    }
}
