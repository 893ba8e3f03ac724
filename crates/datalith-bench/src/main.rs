//! `datalith-bench`: one subcommand per workload of `BENCHMARKS.md`, each running Datalith and
//! its peers in the same run and writing CSVs, a summary and plots.
//!
//! Keep this file a table of subcommands: each workload lives in its own module.

mod all;
mod blob;
mod common;
mod complex;
mod history;
mod query;
mod results;
mod search;
mod write;

/// mimalloc: the Datalog pipeline allocates many small short-lived buffers, and glibc's
/// allocator (consolidation, chunk unlinking) was a fifth of the committer's time. (SQLite, bundled
/// C code, allocates through its own page cache and libc.) `datalith_alloc` says why it is not
/// `mimalloc::MiMalloc` as it comes.
#[global_allocator]
static GLOBAL: datalith_alloc::Allocator = datalith_alloc::Allocator;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "datalith-bench",
    about = "Datalith's benchmark suite (see BENCHMARKS.md)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every workload with every peer into one results folder, the machine described, and a
    /// generated RESULTS.md (verdict per row against the best peer).
    All(all::AllArgs),
    /// Workload W: pure writes into an empty store, then mixed read/write, against the peers.
    Write(write::WriteArgs),
    /// Workload Q: the seed's queries and transaction tasks on 20,000 people, against the peers.
    Query(query::QueryArgs),
    /// Workload H: as-of, history and log reads of one history, against the Datomic peer.
    History(history::HistoryArgs),
    /// Workload complex: TPC-H's 22 queries in Datalog on Datalith, in SQL on PostgreSQL (the
    /// answer reference), SQLite and the external peers; answers checked, medians, charts.
    Complex(complex::ComplexArgs),
    /// Workload S: full-text search on a real English corpus (GCIDE) against Lucene, tantivy,
    /// SQLite FTS5 and Datalevin's search engine.
    Search(search::SearchArgs),
    /// Internal: runs one condition of workload W in this (child) process, so that its CPU
    /// time and peak RSS are its own.
    #[command(name = "__write-child", hide = true)]
    WriteChild(write::ChildArgs),
    /// The published results: bench/results/RESULTS.md and the README's performance block
    /// from the newest folder of each workload; with --check, that every folder is whole and
    /// both match.
    Results(results::ResultsArgs),
    /// Workload B: steady-rate blob writes, durable every 500 ms, against SQLite and RocksDB.
    Blob(blob::BlobArgs),
    /// Internal: runs one store at one rate of workload B in this (child) process.
    #[command(name = "__blob-child", hide = true)]
    BlobChild(blob::BlobChildArgs),
    /// Internal: the bare server under `write --remote`'s `dl-bare` (`common::bare`), serving
    /// the database in DIR on one loopback connection.
    #[command(name = "__bare-serve", hide = true)]
    BareServe { dir: std::path::PathBuf },
}

fn main() -> ExitCode {
    // As the `datalith` command does: a query's freed rows serve the next steps and queries.
    datalith_alloc::keep_freed_memory();
    let result = match Cli::parse().command {
        Command::All(args) => all::run(args),
        Command::Write(args) => write::run(args),
        Command::WriteChild(args) => write::run_child(args),
        Command::Blob(args) => blob::run(args),
        Command::BlobChild(args) => blob::run_child(args),
        Command::BareServe { dir } => common::bare::serve(&dir),
        Command::Query(args) => query::run(args),
        Command::History(args) => history::run(args),
        Command::Search(args) => search::run(args),
        Command::Complex(args) => complex::run(args),
        Command::Results(args) => results::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("datalith-bench: error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod doc_commands {
    /// Every `datalith-bench` command the user documents show parses as the program does; a document
    /// that names a subcommand or flag the program lost fails here.
    #[test]
    fn every_documented_command_parses() {
        let failures = datalith_testdata::doc_commands::parse_failures::<super::Cli>(
            env!("CARGO_MANIFEST_DIR"),
            "datalith-bench",
            10,
        );
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
