//! Counting a child's system calls with `perf stat` on syscall tracepoints: exact counts of
//! every thread of the child, at the cost of a counter increment per call (unlike `strace`,
//! which stops the process at every call and would distort its CPU time).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Calls that make data durable.
pub const SYNC_CALLS: &[&str] = &[
    "fsync",
    "fdatasync",
    "msync",
    "sync_file_range",
    "syncfs",
    "sync",
];
/// Calls that write.
pub const WRITE_CALLS: &[&str] = &["write", "pwrite64", "writev", "pwritev", "pwritev2"];

/// A working `perf` and the tracepoints this kernel has.
#[derive(Debug, Clone)]
pub struct Tracer {
    events: Vec<String>,
}

/// Where the tracepoints live (tracefs, or its old place under debugfs).
const EVENT_DIRS: &[&str] = &[
    "/sys/kernel/tracing/events/syscalls",
    "/sys/kernel/debug/tracing/events/syscalls",
];

impl Tracer {
    /// `Some` if `perf stat` can count syscall tracepoints here (perf installed, tracefs
    /// readable, permissions allow).
    pub fn detect() -> Option<Tracer> {
        let dir = EVENT_DIRS.iter().map(Path::new).find(|d| d.is_dir())?;
        let events: Vec<String> = SYNC_CALLS
            .iter()
            .chain(WRITE_CALLS)
            .map(|c| format!("sys_enter_{c}"))
            .filter(|e| dir.join(e).is_dir())
            .map(|e| format!("syscalls:{e}"))
            .collect();
        if events.is_empty() {
            return None;
        }
        let ok = Command::new("perf")
            .args(["stat", "-x", ",", "-o", "/dev/null", "-e"])
            .arg(events.join(","))
            .args(["--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        ok.then_some(Tracer { events })
    }

    /// `program args...` wrapped in `perf stat`, writing its counts to `out`.
    pub fn wrap(&self, program: &Path, out: &Path) -> Command {
        let mut cmd = Command::new("perf");
        cmd.args(["stat", "-x", ","])
            .arg("-o")
            .arg(out)
            .arg("-e")
            .arg(self.events.join(","))
            .arg("--")
            .arg(program);
        cmd
    }
}

/// Counts read back from a `perf stat -x ,` output file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyscallCounts {
    /// fsync-family calls.
    pub syncs: u64,
    /// write-family calls.
    pub writes: u64,
}

/// Parses `perf stat -x ,` output: `count,unit,event,...` lines; `#` lines are comments.
pub fn parse(text: &str) -> SyscallCounts {
    let mut counts = SyscallCounts::default();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = line.split(',');
        let (Some(count), Some(event)) = (fields.next(), fields.nth(1)) else {
            continue;
        };
        let Ok(n) = count.trim().parse::<u64>() else {
            continue;
        };
        let call = event.trim().trim_start_matches("syscalls:sys_enter_");
        if SYNC_CALLS.contains(&call) {
            counts.syncs += n;
        } else if WRITE_CALLS.contains(&call) {
            counts.writes += n;
        }
    }
    counts
}

/// Reads and parses a perf output file; `None` if it is missing.
pub fn read(path: &PathBuf) -> Option<SyscallCounts> {
    std::fs::read_to_string(path).ok().map(|t| parse(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_csv_is_summed_by_family() {
        let cases: &[(&str, SyscallCounts)] = &[
            ("", SyscallCounts::default()),
            (
                "# started on Sun\n\n12,,syscalls:sys_enter_fdatasync,1000,100.00,,\n\
                 3,,syscalls:sys_enter_fsync,1000,100.00,,\n\
                 500,,syscalls:sys_enter_pwrite64,1000,100.00,,\n\
                 7,,syscalls:sys_enter_write,1000,100.00,,\n",
                SyscallCounts {
                    syncs: 15,
                    writes: 507,
                },
            ),
            (
                "<not counted>,,syscalls:sys_enter_msync,0,0.00,,\n",
                SyscallCounts::default(),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), *want, "{text}");
        }
    }
}
