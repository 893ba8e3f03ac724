//! The corpus: the GNU Collaborative International Dictionary of English (GCIDE) as Debian's
//! `dict-gcide` package installs it for `dictd` (`/usr/share/dictd/gcide.index` and
//! `gcide.dict.dz`), about 40 MB of English that nobody here wrote.
//!
//! Documents: one per distinct definition block the index points at (several headwords share
//! a block), in the order of the blocks in the file, numbered from 1; the `00-database-*`
//! entries (the dictionary's own description) are left out. Tabs, carriage returns and line
//! feeds become spaces, so that every engine, in process or in a JVM, reads the same text from
//! one line of `docs.tsv`; no tokenizer here treats them differently from a space.

use std::io::{BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::common::BenchError;

/// Where `dict-gcide` installs the dictionary.
pub const DEFAULT_DIR: &str = "/usr/share/dictd";
/// What installs it (the message of a missing corpus).
pub const INSTALL_HINT: &str =
    "install it with `bench/peers/install.sh corpus` (Debian's package dict-gcide)";

/// One document.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    pub id: u64,
    pub text: String,
}

/// The two files of a dictd dictionary.
fn files(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("gcide.index"), dir.join("gcide.dict.dz"))
}

/// Reads the first `limit` documents (all with `None`) of the GCIDE in `dir`.
pub fn load(dir: &Path, limit: Option<usize>) -> Result<Vec<Doc>, BenchError> {
    let (index, dict) = files(dir);
    for f in [&index, &dict] {
        if !f.is_file() {
            return Err(BenchError::Arg {
                arg: "--corpus-dir",
                message: format!(
                    "the GCIDE corpus is missing ({} not found): {INSTALL_HINT}",
                    f.display()
                ),
            });
        }
    }
    let blocks = blocks(&index)?;
    let mut raw = Vec::new();
    let file = std::fs::File::open(&dict).map_err(BenchError::io(&dict))?;
    // A dictzip file is a gzip file with an extra header field: any gzip reader inflates it.
    flate2::read::GzDecoder::new(std::io::BufReader::new(file))
        .read_to_end(&mut raw)
        .map_err(BenchError::io(&dict))?;
    let mut docs = Vec::with_capacity(blocks.len());
    for (offset, len) in blocks {
        if limit.is_some_and(|n| docs.len() >= n) {
            break;
        }
        let (start, end) = (offset as usize, (offset + len) as usize);
        let Some(bytes) = raw.get(start..end) else {
            return Err(BenchError::Store {
                store: "corpus".into(),
                op: "read",
                message: format!(
                    "{}: a block {start}..{end} past the end ({} bytes)",
                    index.display(),
                    raw.len()
                ),
            });
        };
        let text: String = String::from_utf8_lossy(bytes)
            .chars()
            .map(|c| {
                if matches!(c, '\t' | '\n' | '\r') {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        docs.push(Doc {
            id: docs.len() as u64 + 1,
            text,
        });
    }
    Ok(docs)
}

/// The distinct `(offset, length)` blocks of a dictd index, by offset.
fn blocks(index: &Path) -> Result<Vec<(u64, u64)>, BenchError> {
    let file = std::fs::File::open(index).map_err(BenchError::io(index))?;
    let mut out = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(BenchError::io(index))?;
        let mut f = line.split('\t');
        let (Some(word), Some(off), Some(len)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if word.starts_with("00-database-") {
            continue;
        }
        if let (Some(o), Some(l)) = (base64_number(off), base64_number(len)) {
            if l > 0 {
                out.push((o, l));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A number in dictd's index notation: base-64 digits `A-Za-z0-9+/`, most significant first.
fn base64_number(s: &str) -> Option<u64> {
    let mut n: u64 = 0;
    for b in s.bytes() {
        let d = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        n = n.checked_mul(64)?.checked_add(u64::from(d))?;
    }
    (!s.is_empty()).then_some(n)
}

/// Writes `docs.tsv`: `id TAB text`, a document a line (the JVM peers read it).
pub fn write_tsv(path: &Path, docs: &[Doc]) -> Result<(), BenchError> {
    let file = std::fs::File::create(path).map_err(BenchError::io(path))?;
    let mut w = BufWriter::new(file);
    for d in docs {
        writeln!(w, "{}\t{}", d.id, d.text).map_err(BenchError::io(path))?;
    }
    w.flush().map_err(BenchError::io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictd_numbers() {
        let cases = [
            ("A", Some(0)),
            ("B", Some(1)),
            ("BA", Some(64)),
            ("Fz", Some(5 * 64 + 51)),
            ("/", Some(63)),
            ("", None),
            ("a-", None),
        ];
        for (s, want) in cases {
            assert_eq!(base64_number(s), want, "{s}");
        }
    }

    #[test]
    fn reads_a_small_dictionary() {
        let dir = tempfile::tempdir().unwrap();
        let text = "Aa\n  first.\nBb\tsecond\r\n";
        std::fs::write(
            dir.path().join("gcide.index"),
            // Two headwords share the first block; the database entry is left out.
            "00-database-info\tA\tB\nA\tA\tM\nAlpha\tA\tM\nB\tM\tL\n",
        )
        .unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text.as_bytes()).unwrap();
        std::fs::write(dir.path().join("gcide.dict.dz"), gz.finish().unwrap()).unwrap();
        let docs = load(dir.path(), None).unwrap();
        let got: Vec<(u64, &str)> = docs.iter().map(|d| (d.id, d.text.as_str())).collect();
        assert_eq!(got, vec![(1, "Aa   first. "), (2, "Bb second  ")]);
        assert_eq!(load(dir.path(), Some(1)).unwrap().len(), 1);
        let missing = load(&dir.path().join("nope"), None)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("install.sh corpus"), "{missing}");
    }
}
