//! The people of workload Q: generated from a fixed seed by `datalith-testdata` (the one
//! generator of the bench, the demo and the examples), shuffled, and written to a JSON-lines file
//! (`{"id":N,"name":"Ivan","last-name":"Ivanov","sex":"male","age":23,"salary":12345}`) that
//! every peer, in process or not, loads: all peers see identical data.

use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

use crate::common::BenchError;

pub use datalith_testdata::{generate, Person};

/// Writes the people as JSON lines.
pub fn write(path: &Path, people: &[Person]) -> Result<(), BenchError> {
    let file = std::fs::File::create(path).map_err(BenchError::io(path))?;
    let mut w = BufWriter::new(file);
    for p in people {
        serde_json::to_writer(&mut w, p)?;
        w.write_all(b"\n").map_err(BenchError::io(path))?;
    }
    w.flush().map_err(BenchError::io(path))
}

/// Reads the people back (the in-process peers load the same file as the others).
pub fn read(path: &Path) -> Result<Vec<Person>, BenchError> {
    let file = std::fs::File::open(path).map_err(BenchError::io(path))?;
    let mut out = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(BenchError::io(path))?;
        if !line.trim().is_empty() {
            out.push(serde_json::from_str(&line)?);
        }
    }
    Ok(out)
}

/// The retraction order of `retract-5`: the people's file order reversed, so it differs from
/// the insertion order (which is already shuffled) without a second generator.
pub fn retract_order(people: &[Person]) -> Vec<usize> {
    (0..people.len()).rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("people.jsonl");
        let people = generate(50, 1);
        write(&path, &people).unwrap();
        assert_eq!(read(&path).unwrap(), people);
        let first = std::fs::read_to_string(&path).unwrap();
        assert!(first.lines().next().unwrap().contains("\"last-name\":"));
    }
}
