//! The run: data, peers loaded, the passes (peers rotated), answers checked against the
//! reference, then `summary.md`, `summary.jsonl`, the chart and `explain.md`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::ExitCode;

use super::answer::{compare, Answer};
use super::args::{ComplexArgs, Resolved};
use super::cell::{Cell, Check, Outcome, PassOutcome};
use super::datalith_peer::{self, DatalithPeer};
use super::peer::Peer;
use super::postgres::{self, PostgresPeer};
use super::queries::{self, Query};
use super::report::{ms_text, Table};
use super::sqlite_peer::SqlitePeer;
use super::{external, generate, plot, timing};
use crate::all::machine::Machine;
use crate::common::passes::{self, Spread};
use crate::common::BenchError;

/// A peer of the run: in process (loaded), external, or not able to run (why).
enum Slot {
    InProcess(Box<dyn Peer>),
    External,
    Missing(String),
}

fn log(line: &str) {
    eprintln!("{line}");
}

/// `datalith-bench complex`.
pub fn run(args: ComplexArgs) -> Result<ExitCode, BenchError> {
    let r = args.resolve()?;
    let out = args.run.out.join("complex");
    let log_dir = out.join("logs");
    for d in [&out, &log_dir, &args.data_dir] {
        std::fs::create_dir_all(d).map_err(BenchError::io(d))?;
    }
    let machine = Machine::describe(&out);
    let (data, _) = generate::ensure(&args.data_dir, r.sf, log)?;
    let queries = queries::load(&r.queries_dir, &r.queries, r.sf)?;
    let qdir = out.join("queries");
    external::write_queries(&qdir, &queries).map_err(BenchError::io(&qdir))?;

    let mut loads: Vec<String> = Vec::new();
    let mut slots: Vec<(String, Slot)> = Vec::new();
    for p in &r.peers {
        let slot = match p.as_str() {
            "postgres" if postgres::bin_dir().is_none() => Slot::Missing(format!(
                "PostgreSQL not installed ({} or $PG_BIN)",
                postgres::DEFAULT_BIN
            )),
            "postgres" => match PostgresPeer::start(&data, log) {
                Ok((peer, secs)) => {
                    loads.push(format!(
                        "postgres: fresh cluster, COPY + indexes + VACUUM ANALYZE in {secs:.1} s"
                    ));
                    Slot::InProcess(Box::new(peer))
                }
                Err(e) => Slot::Missing(format!("could not start or load: {e}")),
            },
            "datalith" => {
                let (peer, secs) =
                    DatalithPeer::open_or_load(&datalith_peer::dir_for(&data), &data, r.sf, log)?;
                loads.push(load_line("datalith", secs));
                Slot::InProcess(Box::new(peer))
            }
            "sqlite" => {
                let (peer, secs) =
                    SqlitePeer::open_or_load(&data.join("sqlite"), &data, r.sf, log)?;
                loads.push(load_line("sqlite", secs));
                Slot::InProcess(Box::new(peer))
            }
            _ => Slot::External,
        };
        slots.push((p.clone(), slot));
    }

    // (peer, query) -> the outcome of each pass.
    let mut by_cell: HashMap<(String, &'static str), Vec<PassOutcome>> = HashMap::new();
    let peers_dir = crate::common::child::peers_dir(args.run.peers_dir.as_deref());
    for pass in 0..r.passes {
        let order = passes::rotated(&r.peers, pass);
        log(&format!(
            "pass {}/{}: {}",
            pass + 1,
            r.passes,
            order.join(", ")
        ));
        for label in &order {
            let Some((_, slot)) = slots.iter_mut().find(|(p, _)| p == label) else {
                continue;
            };
            let outcomes: Vec<PassOutcome> = match slot {
                Slot::Missing(why) => {
                    log(&format!("  pass {} {label}: skipped: {why}", pass + 1));
                    queries
                        .iter()
                        .map(|_| PassOutcome::Skipped(why.clone()))
                        .collect()
                }
                Slot::InProcess(peer) => queries
                    .iter()
                    .map(|q| {
                        let o = timing::pass(peer.as_mut(), q, r.secs, r.limit);
                        log(&format!(
                            "  pass {} {label} {}: {}",
                            pass + 1,
                            q.name,
                            describe(&o)
                        ));
                        o
                    })
                    .collect(),
                Slot::External => {
                    let inv = external::Invocation {
                        peers_dir: &peers_dir,
                        data: &data,
                        out: &out,
                        log_dir: &log_dir,
                        secs: r.secs,
                        timeout_secs: r.limit.as_secs_f64(),
                        pass,
                    };
                    let (o, load) = external::run(label, &queries, &inv);
                    if let (0, Some(s)) = (pass, load) {
                        loads.push(format!("{label}: loaded in {s:.1} s (its harness)"));
                    }
                    match o.first() {
                        Some(PassOutcome::Skipped(why))
                            if o.iter().all(|x| matches!(x, PassOutcome::Skipped(_))) =>
                        {
                            log(&format!("  pass {} {label}: skipped: {why}", pass + 1))
                        }
                        _ => {
                            for (q, x) in queries.iter().zip(&o) {
                                log(&format!(
                                    "  pass {} {label} {}: {}",
                                    pass + 1,
                                    q.name,
                                    describe(x)
                                ));
                            }
                        }
                    }
                    o
                }
            };
            for (q, o) in queries.iter().zip(outcomes) {
                by_cell.entry((label.clone(), q.name)).or_default().push(o);
            }
        }
    }

    let reference = reference(&r.peers, &queries, &by_cell);
    let cells = merge(&r.peers, &queries, &by_cell, reference.as_deref());
    let explain_md = match slots.iter().find(|(p, _)| p == "datalith") {
        Some((_, Slot::InProcess(peer))) if !args.no_explain => {
            log("explaining Datalith's plans (one more run of each query)");
            Some(explain_all(peer.as_ref(), &queries, &cells))
        }
        _ => None,
    };
    drop(slots); // stops PostgreSQL

    let table = Table {
        queries: &r.queries,
        peers: &r.peers,
        cells: &cells,
    };
    let header = header(&args, &r, &machine, &loads, reference.as_deref());
    let md = table.markdown(&header);
    let md_path = out.join("summary.md");
    std::fs::write(&md_path, &md).map_err(BenchError::io(&md_path))?;
    table.write_jsonl(&out.join("summary.jsonl"))?;
    let m_path = out.join("machine.json");
    std::fs::write(&m_path, serde_json::to_string_pretty(&machine)?)
        .map_err(BenchError::io(&m_path))?;
    plot::bars(
        &out.join("complex-latency.png"),
        &format!("TPC-H SF {} in Datalog and SQL: median ms per query", r.sf),
        &table,
    )?;
    if let Some(e) = explain_md {
        let p = out.join("explain.md");
        std::fs::write(&p, e).map_err(BenchError::io(&p))?;
    }
    println!("{md}");
    println!("written: {}", out.display());

    let wrong = cells.iter().any(|c| {
        matches!(
            c.outcome,
            Outcome::Failed(_)
                | Outcome::Measured {
                    check: Check::Differs(_),
                    ..
                }
        )
    });
    let timed_out = cells.iter().any(|c| matches!(c.outcome, Outcome::TimedOut));
    let missing = cells
        .iter()
        .any(|c| matches!(c.outcome, Outcome::Skipped(_)));
    if wrong || (timed_out && args.run.quick) {
        eprintln!(
            "datalith-bench complex: cells FAILED, answers WRONG or timed out (see summary.md)"
        );
        return Ok(ExitCode::from(1));
    }
    if missing && !args.run.quick && !args.run.allow_missing_peers {
        eprintln!(
            "datalith-bench complex: peers SKIPPED in a full run (see summary.md; \
             --allow-missing-peers to accept)"
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

fn load_line(peer: &str, secs: Option<f64>) -> String {
    match secs {
        Some(s) => format!("{peer}: loaded in {s:.1} s"),
        None => format!("{peer}: the database loaded by an earlier run (its marker matches)"),
    }
}

fn describe(o: &PassOutcome) -> String {
    match o {
        PassOutcome::Ran { ms, runs, answer } => format!(
            "{} ms ({runs} runs, {} rows)",
            ms_text(*ms),
            answer.rows.len()
        ),
        PassOutcome::TimedOut => "TIMED OUT".into(),
        PassOutcome::Failed(m) => format!("FAILED: {m}"),
        PassOutcome::Skipped(m) => format!("skipped: {m}"),
    }
}

/// PostgreSQL when it answered anything, else SQLite (`--no-postgres`, or PostgreSQL not
/// installed in a --quick run).
fn reference(
    peers: &[String],
    queries: &[Query],
    by_cell: &HashMap<(String, &'static str), Vec<PassOutcome>>,
) -> Option<String> {
    ["postgres", "sqlite"]
        .into_iter()
        .filter(|p| peers.iter().any(|x| x == p))
        .find(|p| {
            queries.iter().any(|q| {
                by_cell
                    .get(&(p.to_string(), q.name))
                    .is_some_and(|v| v.iter().any(|o| matches!(o, PassOutcome::Ran { .. })))
            })
        })
        .map(str::to_string)
}

/// The passes of every (peer, query) as one cell, its answers checked.
fn merge(
    peers: &[String],
    queries: &[Query],
    by_cell: &HashMap<(String, &'static str), Vec<PassOutcome>>,
    reference: Option<&str>,
) -> Vec<Cell> {
    let mut cells = Vec::new();
    for q in queries {
        let want: Option<&Answer> = reference.and_then(|r| {
            by_cell
                .get(&(r.to_string(), q.name))?
                .iter()
                .find_map(|o| match o {
                    PassOutcome::Ran { answer, .. } => Some(answer),
                    _ => None,
                })
        });
        for p in peers {
            let passes = by_cell
                .get(&(p.clone(), q.name))
                .map(Vec::as_slice)
                .unwrap_or_default();
            let outcome = merge_one(passes, want, reference == Some(p.as_str()), q.ordered);
            cells.push(Cell {
                peer: p.clone(),
                query: q.name.to_string(),
                outcome,
            });
        }
    }
    cells
}

fn merge_one(
    passes: &[PassOutcome],
    want: Option<&Answer>,
    is_reference: bool,
    ordered: bool,
) -> Outcome {
    let mut ms = Vec::new();
    let mut runs = 0;
    let mut rows = 0;
    let mut check = if is_reference {
        Check::Reference
    } else if want.is_some() {
        Check::Agrees
    } else {
        Check::NoReference
    };
    for o in passes {
        match o {
            PassOutcome::Skipped(m) => return Outcome::Skipped(m.clone()),
            PassOutcome::Failed(m) => return Outcome::Failed(m.clone()),
            PassOutcome::TimedOut => return Outcome::TimedOut,
            PassOutcome::Ran {
                ms: x,
                runs: n,
                answer,
            } => {
                ms.push(*x);
                runs += n;
                rows = answer.rows.len();
                if let (Check::Agrees | Check::Reference, Some(w)) = (&check, want) {
                    if let Err(d) = compare(w, answer, ordered) {
                        check = Check::Differs(d);
                    }
                }
            }
        }
    }
    match Spread::of(&ms) {
        Some(spread) => Outcome::Measured {
            spread,
            runs,
            rows,
            check,
        },
        None => Outcome::Skipped("not run".into()),
    }
}

/// Datalith's plan of each query it answered (one more, untimed run of each).
fn explain_all(peer: &dyn Peer, queries: &[Query], cells: &[Cell]) -> String {
    let mut s = String::from(
        "# Datalith's plans of the TPC-H ports\n\nEach step of each port with the plan it ran: \
         the index read of each step, estimated / actual rows (`Db::explain`).\n",
    );
    let mut body = String::new();
    for q in queries {
        let ran = cells
            .iter()
            .any(|c| c.peer == "datalith" && c.query == q.name && c.ms().is_some());
        let s = &mut body;
        let _ = writeln!(s, "\n## {}\n", q.name);
        if !ran {
            let _ = writeln!(s, "(not explained: the query did not finish in the run)");
            continue;
        }
        match peer.explain(q) {
            Some(Ok(text)) => s.push_str(&text),
            Some(Err(e)) => {
                let _ = writeln!(s, "explain failed: {e}");
            }
            None => {
                let _ = writeln!(s, "(this peer has no explain)");
            }
        }
    }
    s.push_str(&estimate_table(&body));
    s.push_str(&body);
    s
}

/// How far each plan step's estimate is from its actual rows, over every step printed in
/// `body` (`estimated E, actual A)`, as `Step` prints it): how many are within 10x (counts
/// below 10 taken as 10), and the steps that are not.
fn estimate_table(body: &str) -> String {
    let mut query = "";
    let (mut steps, mut within) = (0u32, 0u32);
    let mut off = String::new();
    for line in body.lines() {
        if let Some(q) = line.strip_prefix("## ") {
            query = q;
            continue;
        }
        let Some(at) = line.rfind("estimated ") else {
            continue;
        };
        let nums: Vec<u64> = line[at..]
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .take(2)
            .filter_map(|w| w.parse().ok())
            .collect();
        let [e, a] = nums[..] else { continue };
        let (ef, af) = (e.max(10) as f64, a.max(10) as f64);
        let ratio = (ef / af).max(af / ef);
        steps += 1;
        if ratio <= 10.0 {
            within += 1;
        } else {
            let what: String = line.chars().take(100).collect();
            let _ = writeln!(off, "| {query} | {e} | {a} | {ratio:.0}x | `{what}` |");
        }
    }
    let share = if steps == 0 {
        0.0
    } else {
        100.0 * within as f64 / steps as f64
    };
    let mut s = format!(
        "\n## Estimates against actual rows\n\n{within} of {steps} plan steps ({share:.1}%) are \
         estimated within 10x of their actual rows (counts below 10 taken as 10). The others:\n\n\
         | query | estimated | actual | off by | step |\n|---|--:|--:|--:|---|\n"
    );
    s.push_str(&off);
    s
}

fn header(
    args: &ComplexArgs,
    r: &Resolved,
    machine: &Machine,
    loads: &[String],
    reference: Option<&str>,
) -> String {
    let command: Vec<String> = std::env::args().collect();
    let reference_text = match reference {
        Some("postgres") => "PostgreSQL's (exact NUMERIC)".to_string(),
        Some("sqlite") if r.peers.iter().any(|p| p == "postgres") => {
            "SQLite's: PostgreSQL could not run (see below)".to_string()
        }
        Some("sqlite") => "SQLite's (PostgreSQL left out of this run)".to_string(),
        Some(other) => format!("{other}'s"),
        None => "none: no reference peer answered, answers unchecked".to_string(),
    };
    format!(
        "`{}`\n\n{}\
         - TPC-H scale factor {} (data from `{}`, dbgen's .tbl files, in `{}`)\n\
         - loads: {}\n\
         - {} passes, the peers' order rotated by one each pass; per (peer, query, pass) one \
         warm-up run (its answer is the one checked), then timed runs for {} s (at least one), \
         the pass's figure the median run; a run stopped at {} s is a timeout\n\
         - answers compared with {reference_text}: numbers within a relative {:e}, text and \
         dates exactly, in order where the query orders\n\n\
         **What each timer includes:** one query call until its whole answer is in the \
         caller's hands, normalized to rows (Datalith: every step of the port, on one `Db` \
         value, each `q` returning EDN; SQLite: the statement prepared and stepped to its last \
         row; PostgreSQL: the simple-query protocol over loopback, every value as text).\n\n\
         **Settings:** Datalith durable (the default options), money and quantities as doubles, \
         dates as instants; SQLite WAL, 1 GiB page cache, REAL money; PostgreSQL 15, a fresh \
         cluster, NUMERIC(15,2) money, fsync off, shared_buffers 1GB, work_mem 256MB. Every \
         peer at its default parallelism: Datalith spreads a query's large steps over the cores \
         (`QueryOptions::threads`), Datalevin runs partitioned segments, PostgreSQL parallel \
         workers (`max_parallel_workers_per_gather` 2), DuckDB 2 threads, SQLite one thread. \
         SQL peers: the spec's primary keys and an index on each foreign key. The ports and what they change: \
         `bench/complex/PORTS.md`.",
        command.join(" "),
        machine.markdown(),
        r.sf,
        generate::GENERATOR,
        args.data_dir.display(),
        loads.join("; "),
        r.passes,
        r.secs,
        r.limit.as_secs_f64(),
        super::answer::REL_TOL,
    )
}

#[cfg(test)]
mod tests {
    use super::estimate_table;

    #[test]
    fn the_estimate_table_counts_steps_within_ten_times() {
        let body = "\n## q1\n\n1. [?l :a ?x]  (AVE SCAN, estimated 100, actual 90)\n\
                    2. [(< ?x 3)]  (NONE, estimated 5, actual 400)\n\n## q2\n\n\
                    1. [?o :b ?y]  (EAV, estimated 2, actual 60)\nrows: 1\n";
        let t = estimate_table(body);
        // 100 vs 90: within; 5 (as 10) vs 400: 40x; 2 (as 10) vs 60: 6x, within.
        assert!(t.contains("2 of 3 plan steps (66.7%)"), "{t}");
        assert!(t.contains("| q1 | 5 | 400 | 40x |"), "{t}");
        assert!(!t.contains("| q2 |"), "{t}");
    }
}
