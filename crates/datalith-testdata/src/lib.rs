//! The benchmark data in one place for every user: the people data set of seed 003
//! (workload Q; `datalith-bench`, the CLI's demo, `datalith`'s examples) and the SplitMix64
//! stream workload W draws its values and mixed-phase keys from (the Rust bench and the
//! Datalevin harness alike), and the commands the documents show a user (`doc_commands`), for
//! the tests that keep each document's commands working.
//!
//! Invariant: the data depends only on `(n, seed)` and this crate's own generator (SplitMix64
//! and a Fisher-Yates shuffle), never on a `rand` release, so a seed names the same people
//! forever and peers in other languages can be fed the same file.

#![warn(missing_docs)]

pub mod doc_commands;
pub mod people;
pub mod splitmix;

pub use people::{generate, AttrValue, Person, LAST_NAMES, NAMES};
pub use splitmix::SplitMix64;
