//! The people of workload Q: generated from a fixed seed by a self-contained generator (so
//! the data never changes with a `rand` release), shuffled, and written to a JSON-lines file
//! (`{"id":N,"name":"Ivan","last-name":"Ivanov","sex":"male","age":23,"salary":12345}`) that
//! every peer, in process or not, loads: all peers see identical data.

use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::common::BenchError;

/// First names, uniform (seed 003).
pub const NAMES: [&str; 8] = [
    "Ivan", "Petr", "Sergei", "Oleg", "Yuri", "Dmitry", "Fedor", "Denis",
];
/// Last names, uniform (seed 003).
pub const LAST_NAMES: [&str; 6] = [
    "Ivanov",
    "Petrov",
    "Sidorov",
    "Kovalev",
    "Kuznetsov",
    "Voronoi",
];

/// One person: five attributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    /// The person's number in the file (1-based, before shuffling): peers may use it as a
    /// tempid, never as a promise about entity ids.
    pub id: u64,
    pub name: String,
    #[serde(rename = "last-name")]
    pub last_name: String,
    /// `male` or `female` (a keyword in the Datalog peers).
    pub sex: String,
    pub age: i64,
    pub salary: i64,
}

/// SplitMix64: tiny, well-mixed, and fixed forever.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (the modulo bias is below 1e-14 for the sizes used here).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `n` people from `seed`, shuffled (Fisher-Yates).
pub fn generate(n: u64, seed: u64) -> Vec<Person> {
    let mut rng = SplitMix(seed);
    let mut people: Vec<Person> = (1..=n)
        .map(|id| Person {
            id,
            name: NAMES[rng.below(NAMES.len() as u64) as usize].to_string(),
            last_name: LAST_NAMES[rng.below(LAST_NAMES.len() as u64) as usize].to_string(),
            sex: if rng.below(2) == 0 { "male" } else { "female" }.to_string(),
            age: rng.below(100) as i64,
            salary: rng.below(100_000) as i64,
        })
        .collect();
    for i in (1..people.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        people.swap(i, j);
    }
    people
}

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
    fn generation_is_fixed_and_in_range() {
        let a = generate(2_000, 7);
        let b = generate(2_000, 7);
        assert_eq!(a, b);
        assert_ne!(a, generate(2_000, 8));
        let mut ids: Vec<u64> = a.iter().map(|p| p.id).collect();
        assert_ne!(ids, (1..=2_000).collect::<Vec<_>>(), "shuffled");
        ids.sort_unstable();
        assert_eq!(ids, (1..=2_000).collect::<Vec<_>>());
        for p in &a {
            assert!(NAMES.contains(&p.name.as_str()));
            assert!(LAST_NAMES.contains(&p.last_name.as_str()));
            assert!(p.sex == "male" || p.sex == "female");
            assert!((0..100).contains(&p.age));
            assert!((0..100_000).contains(&p.salary));
        }
        // Uniform enough: every name appears about n/8 times.
        for n in NAMES {
            let c = a.iter().filter(|p| p.name == n).count();
            assert!((150..350).contains(&c), "{n}: {c}");
        }
    }

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
