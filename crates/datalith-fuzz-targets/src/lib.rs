//! The bodies of Datalith's fuzz targets, as plain functions of the fuzzer's bytes.
//!
//! Each target takes any bytes and must return without panicking, crashing or hanging: an
//! error from Datalith is an ordinary outcome; a panic is a finding. Where a target can check
//! more than "no crash" it does (EDN prints and re-reads to the same text; every committed
//! transaction leaves `check` clean).
//!
//! Two drivers run them: `fuzz/` (cargo-fuzz and libFuzzer, nightly, outside the workspace)
//! for long runs, and `tests/replay.rs` (stable, in `cargo test --workspace`) over the seed
//! corpus in `fuzz/corpus/<target>/` plus a few thousand deterministic mutations of it.

#![warn(missing_docs)]

pub mod cbor;
pub mod damaged_file;
pub mod deadline;
pub mod edn;
pub mod fixture;
pub mod mutate;
pub mod pull;
pub mod query;
pub mod search_query;
pub mod tx;

/// Every target by its name (the name of its directory under `fuzz/corpus/` and of its
/// cargo-fuzz binary).
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("edn", edn::run),
    ("cbor", cbor::run),
    ("query", query::run),
    ("tx", tx::run),
    ("pull", pull::run),
    ("damaged_file", damaged_file::run),
    ("search_query", search_query::run),
];

/// Splits fuzz input at NUL bytes into UTF-8 parts (`None` when a part is not UTF-8: such
/// input says nothing about the text reader the targets exercise).
pub fn text_parts(data: &[u8]) -> Option<Vec<&str>> {
    data.split(|b| *b == 0)
        .map(|p| std::str::from_utf8(p).ok())
        .collect()
}
