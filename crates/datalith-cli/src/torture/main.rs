//! `datalith-torture`: the kill -9 torture of the commit path, as a binary so that it can be
//! rerun unchanged whenever the commit path changes.
//!
//! `datalith-torture kill9 [--cycles N] ...` runs N cycles (default 1000). Each starts a
//! writer (this binary, `writer` mode) that issues asynchronous Datalog transactions
//! (`transact_async`: creations, and updates and retractions of a `:db/fulltext`
//! attribute), durable KV writes (`transact_kv_async`) and KV search index writes
//! (`SearchIndex::write_async`), and appends every acknowledged write to an acknowledgement
//! log, fsynced after each line; kills it with SIGKILL at a random moment; reopens the
//! database as a user would, checks that every acknowledged write of the database's life is
//! there, that `fulltext` queries and the search index answer as the data says
//! (`search_model.rs`), and runs `datalith check` on it. It prints cycles,
//! acknowledgements, lost writes, check failures and wrong answers, and exits 1 when
//! anything was lost, answered wrong or a check failed. `--durability nosync` (or another
//! mode) opens the writer in that mode: every mode promises that a process crash loses
//! nothing acknowledged, so the verification is the same.
//!
//! `datalith-torture share` runs one writer process and several reader processes on one
//! database and checks that every snapshot of every reader holds every commit acknowledged
//! before it began (`share.rs`).
//!
//! `datalith-torture serve` is a bounded load test of `datalith serve`, optionally killing
//! the server halfway, then checking every acknowledged transaction (`serve_load.rs`).
//!
//! `datalith-torture verify DIR ACKLOG` runs the verification alone (used by the tests to
//! show that a lost write is reported).
//!
//! The ack log is written only after the engine reports a write durable, so a write the
//! log names must survive; a write killed between commit and log line may survive unlogged,
//! which is fine.

mod kill9;
mod search_model;
mod serve_load;
mod share;
mod verify;
mod writer;

use std::path::PathBuf;

use datalith::kv::Durability;
use std::process::ExitCode;

const USAGE: &str = "usage:
  datalith-torture kill9 [--cycles N] [--dir DIR] [--datalith PATH] [--seed S]
                         [--max-delay-ms MS] [--cycles-per-database N]
                         [--durability durable|nometasync|nosync|writemap-mapasync]
  datalith-torture verify DIR ACKLOG
  datalith-torture writer DIR ACKLOG CYCLE DURABILITY
  datalith-torture share [--secs N] [--readers R] [--dir DIR] [--datalith PATH]
  datalith-torture share-writer DIR ACK SECS
  datalith-torture share-reader DIR ACK SECS
  datalith-torture hold DIR
  datalith-torture serve [--secs N] [--clients C] [--kill] [--dir DIR] [--datalith PATH]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("kill9") => kill9::Options::parse(&args[1..]).and_then(|o| kill9::run(&o)),
        Some("verify") if args.len() == 3 => {
            verify::verify(&PathBuf::from(&args[1]), &PathBuf::from(&args[2])).map(|v| {
                println!(
                    "acks {} lost {}{} wrong {}{}",
                    v.acks,
                    v.lost.len(),
                    v.lost
                        .first()
                        .map(|k| format!(" (first lost: {k})"))
                        .unwrap_or_default(),
                    v.wrong.len(),
                    v.wrong
                        .first()
                        .map(|w| format!(" (first wrong: {w})"))
                        .unwrap_or_default()
                );
                v.lost.is_empty() && v.wrong.is_empty()
            })
        }
        Some("writer") if args.len() == 5 => {
            match (args[3].parse(), Durability::from_label(&args[4])) {
                (Ok(cycle), Some(durability)) => writer::run(
                    &PathBuf::from(&args[1]),
                    &PathBuf::from(&args[2]),
                    cycle,
                    durability,
                ),
                _ => Err(format!("bad cycle {} or durability {}", args[3], args[4])),
            }
        }
        Some("hold") if args.len() == 2 => share::hold(&PathBuf::from(&args[1])),
        Some("share") => share::Options::parse(&args[1..]).and_then(|o| share::run(&o)),
        Some("serve") => serve_load::Options::parse(&args[1..]).and_then(|o| serve_load::run(&o)),
        Some(mode @ ("share-writer" | "share-reader")) if args.len() == 4 => {
            match args[3].parse() {
                Ok(secs) => {
                    let (dir, ack) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
                    match mode {
                        "share-writer" => share::writer(&dir, &ack, secs),
                        _ => share::reader(&dir, &ack, secs),
                    }
                }
                Err(_) => Err(format!("bad seconds {}", args[3])),
            }
        }
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
