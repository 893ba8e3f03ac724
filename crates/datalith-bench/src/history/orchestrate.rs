//! The run: the data file, Datalith loaded once, then every pass (the peer order rotated),
//! then the report.

use std::process::ExitCode;

use super::args::HistoryArgs;
use super::data::{self, Answer};
use super::datalith::{DatalithPeer, LABEL};
use super::external::{self, Invocation};
use super::report::{self, Cell, Outcome, Table};
use super::rows::Row;
use crate::common::{passes, progress, BenchError};

/// `datalith-bench history`.
pub fn run(args: HistoryArgs) -> Result<ExitCode, BenchError> {
    let r = args.resolve()?;
    let out = args.run.out.join("history");
    let db_dir = out.join("db");
    let log_dir = out.join("logs");
    for d in [&out, &db_dir, &log_dir] {
        std::fs::create_dir_all(d).map_err(BenchError::io(d))?;
    }
    let data_path = out.join("history.jsonl");
    let (spec, txs) = data::generate(r.size, args.seed);
    data::write(&data_path, &spec, &txs)?;
    // Datalith loads the file every peer loads.
    let (spec, txs) = data::read(&data_path)?;
    let expected: Vec<(String, Answer)> = r
        .rows
        .iter()
        .filter_map(|row| Some((row.name.to_string(), data::expected(&spec, &txs, row)?)))
        .collect();
    let peers_dir = crate::common::child::peers_dir(args.run.peers_dir.as_deref());
    let bar = progress::bar((r.passes * r.peers.len() * r.rows.len()) as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} pass x peer x row cells {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }

    let mut load_lines: Vec<String> = Vec::new();
    let datalith = if r.peers.iter().any(|p| p == LABEL) {
        bar.set_message("datalith: loading");
        let peer = DatalithPeer::load(&db_dir, &spec, &txs);
        if let Ok(p) = &peer {
            let line = format!("datalith loaded in {:.1} s", p.load_secs);
            progress::println(&bar, &line);
            load_lines.push(line);
        }
        Some(peer)
    } else {
        None
    };
    let mut by_pass: Vec<Vec<Cell>> = Vec::new();
    for pass in 0..r.passes {
        let order = passes::rotated(&r.peers, pass);
        progress::println(
            &bar,
            &format!("pass {}/{}: {}", pass + 1, r.passes, order.join(", ")),
        );
        let mut cells = Vec::new();
        for label in &order {
            bar.set_message(label.clone());
            if label == LABEL {
                let got = match &datalith {
                    Some(Ok(peer)) => run_datalith(peer, &r.rows, r.plan),
                    Some(Err(e)) => all(label, &r.rows, Outcome::Failed(e.to_string())),
                    None => Vec::new(),
                };
                for c in &got {
                    progress::println(&bar, &cell_line(c));
                }
                bar.inc(got.len() as u64);
                cells.extend(got);
            } else {
                let work = db_dir.join(label);
                std::fs::create_dir_all(&work).map_err(BenchError::io(&work))?;
                let inv = Invocation {
                    peers_dir: &peers_dir,
                    data: &data_path,
                    work: &work,
                    log_dir: &log_dir,
                    plan: r.plan,
                    // Installing is idempotent but slow to check: once, before the first pass.
                    install: !args.run.quick && pass == 0,
                    heap: &args.run.heap,
                    pass,
                };
                let ran = external::run(label, &r.rows, &inv);
                if let Some(s) = ran.load_secs {
                    let line = format!("{label} loaded in {s:.1} s (pass {})", pass + 1);
                    progress::println(&bar, &line);
                    load_lines.push(line);
                }
                for c in &ran.cells {
                    progress::println(&bar, &cell_line(c));
                }
                bar.inc(ran.cells.len() as u64);
                cells.extend(ran.cells);
            }
        }
        by_pass.push(cells);
    }
    bar.finish_and_clear();
    drop(datalith);
    let _ = std::fs::remove_dir_all(&db_dir);

    let cells = report::merge_passes(&r.peers, &r.rows, &by_pass);
    let table = Table {
        rows: &r.rows,
        peers: &r.peers,
        cells: &cells,
        expected: &expected,
    };
    let verdicts = table.verdicts();
    let wrong = table.wrong_answers();
    let header = header(&args, &r, &spec, &load_lines);
    let md = table.markdown(&header, &verdicts, &wrong);
    let md_path = out.join("summary.md");
    std::fs::write(&md_path, &md).map_err(BenchError::io(&md_path))?;
    table.write_jsonl(&out.join("summary.jsonl"))?;
    table.write_csv(&out.join("history.csv"))?;
    println!("{md}");
    println!("written: {}", out.display());

    let mut bad = false;
    if !wrong.is_empty() {
        eprintln!(
            "datalith-bench history: WRONG ANSWERS (count or sum differs from the generator's):"
        );
        for w in &wrong {
            eprintln!("  {} {}: got {:?}, want {:?}", w.peer, w.row, w.got, w.want);
        }
        bad = true;
    }
    let failed = cells
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Failed(_)))
        .count();
    if failed > 0 {
        eprintln!("datalith-bench history: {failed} cells FAILED (see summary.md)");
        bad = true;
    }
    let skipped: Vec<&Cell> = cells
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Skipped(_)))
        .collect();
    if !skipped.is_empty() && !args.run.quick {
        let names: Vec<String> = skipped
            .iter()
            .map(|c| format!("{} {}", c.peer, c.row))
            .collect();
        eprintln!(
            "datalith-bench history: cells SKIPPED in a full run: {} (see summary.md){}",
            names.join(", "),
            if args.run.allow_missing_peers {
                "; allowed by --allow-missing-peers"
            } else {
                ""
            }
        );
        bad |= !args.run.allow_missing_peers;
    }
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Every row of one peer with the same outcome.
fn all(peer: &str, rows: &[Row], outcome: Outcome) -> Vec<Cell> {
    rows.iter()
        .map(|r| Cell {
            peer: peer.to_string(),
            row: r.name.to_string(),
            outcome: outcome.clone(),
        })
        .collect()
}

/// Datalith over every row, one pass.
fn run_datalith(peer: &DatalithPeer, rows: &[Row], plan: super::timing::Plan) -> Vec<Cell> {
    rows.iter()
        .map(|row| Cell {
            peer: LABEL.to_string(),
            row: row.name.to_string(),
            outcome: match peer.run(row, plan) {
                Ok(m) => Outcome::Measured(m),
                Err(e) => Outcome::Failed(e.to_string()),
            },
        })
        .collect()
}

/// The progress line of one cell.
fn cell_line(c: &Cell) -> String {
    match &c.outcome {
        Outcome::Measured(m) => format!(
            "{:>9} {:<15} {:>10.3} ms median, {:>10.3} ms min ({} calls, count {}, sum {})",
            c.peer, c.row, m.median_ms, m.min_ms, m.runs, m.answer.count, m.answer.checksum
        ),
        Outcome::Skipped(why) => format!("{:>9} {:<15} skipped: {why}", c.peer, c.row),
        Outcome::Failed(why) => format!("{:>9} {:<15} FAILED: {why}", c.peer, c.row),
    }
}

/// The summary's header: data, sizes, peers, timer scopes.
fn header(
    args: &HistoryArgs,
    r: &super::args::Resolved,
    spec: &data::Spec,
    loads: &[String],
) -> String {
    let cps: Vec<String> = spec
        .checkpoints
        .iter()
        .map(|c| format!("{}% after {} transactions", c.percent, c.after))
        .collect();
    format!(
        "{} items (`:item/id`, a unique identity long), each with {} versions of \
         `:item/value` (a cardinality-one long: every update retracts the previous value), \
         {} assertions in {} transactions of {} items (each round updates every item, in id \
         order), each transaction with its own `:db/txInstant` one second after the last; \
         values from SplitMix64 seed {}. Every peer loads the same file (`history.jsonl`), \
         untimed: {}. As-of points: {}. Lookup: {} ids; entity-history: `:item/id` {}.\n\n\
         Peers: {}. {} pass(es), the peer order rotated each pass; {} s timed per row after a warm-up of two thirds of \
         that (at least 3 calls), at least {} timed calls. {}\n\n\
         Timer scopes: a query row times the query on a database value taken before the \
         clock; an as-of row times making the as-of value and the query (`(d/q q (d/as-of \
         db t))`, `db.as_of(t)` then `q`); entity-history times making the history value and \
         the query; tx-range times reading every transaction of the range and its datoms \
         (counting the `:item/value` ones); tx-data-q times the query with the log as input.",
        spec.entities,
        spec.updates,
        spec.entities * spec.updates,
        spec.transactions,
        spec.batch,
        spec.seed,
        if loads.is_empty() {
            "no load reported".to_string()
        } else {
            loads.join("; ")
        },
        cps.join(", "),
        spec.lookup_ids.len(),
        spec.history_id,
        r.peers
            .iter()
            .map(|p| match p.as_str() {
                "datalith" => "`datalith`, on disk, durable (every pass reads the one database \
                               loaded at the start)"
                    .to_string(),
                "datomic" => "`datomic`, the Datomic peer library 1.0.7075 with an in-memory \
                              database (`datomic:mem://`, as the other Datomic harnesses), \
                              loaded again in each pass (its own JVM) and indexed \
                              (`request-index`, `sync-index`) before the rows"
                    .to_string(),
                other => format!("`{other}`"),
            })
            .collect::<Vec<_>>()
            .join("; "),
        r.passes,
        r.plan.secs,
        r.plan.min_runs,
        crate::common::jvm::describe(&args.run.heap),
    )
}
