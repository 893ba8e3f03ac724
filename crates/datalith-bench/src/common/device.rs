//! The block device under a directory and its count of bytes written: what a run sent to
//! the disk, whoever in the machine wrote it (so a quiet machine is assumed), after `sync`.

use std::path::{Path, PathBuf};

use super::BenchError;

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
}
