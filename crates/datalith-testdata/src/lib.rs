//! The people data set of seed 003 (workload Q of the benchmarks), in one place for every
//! user: `datalith-bench`, the CLI's demo, and `datalith`'s examples.
//!
//! Invariant: the data depends only on `(n, seed)` and this crate's own generator (SplitMix64
//! and a Fisher-Yates shuffle), never on a `rand` release, so a seed names the same people
//! forever and peers in other languages can be fed the same file.

#![warn(missing_docs)]

pub mod people;

pub use people::{generate, AttrValue, Person, LAST_NAMES, NAMES};
