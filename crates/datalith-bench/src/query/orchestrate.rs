//! The run: data file, in-process peers, external peers, then the report.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use datalith::kv::Durability;

use super::args::QueryArgs;
use super::datalith::DatalithPeer;
use super::external::{self, Invocation};
use super::peer::{Cell, Outcome, Peer};
use super::remote::{self, RemotePeer};
use super::report::Table;
use super::sqlite::SqlitePeer;
use super::tasks::{Kind, Task};
use super::timing::OVER_CAP;
use super::{data, merge, plot, python};
use crate::common::loopback::{self, Floor};
use crate::common::{passes, progress, BenchError};

/// `datalith-bench query`.
pub fn run(args: QueryArgs) -> Result<ExitCode, BenchError> {
    let r = args.resolve()?;
    let out = args.run.out.join("query");
    let db_dir = out.join("db");
    let log_dir = out.join("logs");
    for d in [&out, &db_dir, &log_dir] {
        std::fs::create_dir_all(d).map_err(BenchError::io(d))?;
    }
    let data_path = out.join("people.jsonl");
    data::write(&data_path, &data::generate(r.people, args.seed))?;
    let people = Arc::new(data::read(&data_path)?);
    let peers_dir = crate::common::child::peers_dir(args.run.peers_dir.as_deref());

    let external: Vec<&String> = r
        .peers
        .iter()
        .filter(|p| external::PEERS.contains(&p.as_str()))
        .collect();
    let spec_path = out.join("python-spec.json");
    if r.peers.iter().any(|p| python::is_python(p)) {
        python::write_spec(&spec_path, &r.tasks, r.plan)?;
    }
    // An install target (the wheel serves two peers) is installed once per run.
    let mut installed: Vec<&'static str> = Vec::new();
    let total = (r.passes * r.peers.len() * r.tasks.len()) as u64;
    let bar = progress::bar(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} pass x peer x task cells {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    let mut by_pass: Vec<Vec<Cell>> = Vec::new();
    // The loopback round trip, once a pass, just before the pass's peers run.
    let mut floors: Vec<Floor> = Vec::new();
    let mut explains: Vec<(String, Vec<datalith::query::PlanStep>)> = Vec::new();
    for pass in 0..r.passes {
        let order = passes::rotated(&r.peers, pass);
        progress::println(
            &bar,
            &format!("pass {}/{}: {}", pass + 1, r.passes, order.join(", ")),
        );
        let mut cells: Vec<Cell> = Vec::new();
        if order.iter().any(|p| p == remote::LABEL) {
            floors.push(loopback::measure()?);
        }
        // How an external harness runs in this pass; installing is idempotent but slow to
        // check: once, before the first pass.
        // `spec`: the Python harness's spec file is its last argument.
        let invocation = |install: bool, spec: bool| Invocation {
            peers_dir: &peers_dir,
            data: &data_path,
            dir: &db_dir,
            log_dir: &log_dir,
            plan: r.plan,
            install: install && !args.run.quick && pass == 0,
            heap: &args.run.heap,
            pass,
            spec: spec.then_some(spec_path.as_path()),
            server: None,
        };
        for label in &order {
            if label == "datalevin-remote" {
                let inv = invocation(true, false);
                cells.extend(datalevin_remote(&r.tasks, &inv, &bar));
            } else if python::is_python(label) {
                let target = python::install_target(label);
                let install =
                    !args.run.quick && pass == 0 && target.is_some_and(|t| !installed.contains(&t));
                installed.extend(target);
                let tasks: Vec<Task> = r
                    .tasks
                    .iter()
                    .copied()
                    .filter(|t| python::runs(label, t))
                    .collect();
                bar.inc((r.tasks.len() - tasks.len()) as u64);
                let inv = invocation(install, true);
                cells.extend(run_external(label, &tasks, &inv, &bar));
            } else if external.contains(&label) {
                let inv = invocation(true, false);
                cells.extend(run_external(label, &r.tasks, &inv, &bar));
            } else {
                cells.extend(run_in_process(label, &r, &people, &db_dir, &bar));
                if label == "datalith" && explains.is_empty() {
                    explains = explain_all(&r.tasks, &people, &db_dir);
                }
            }
        }
        by_pass.push(cells);
    }
    bar.finish_and_clear();
    let cells = merge::passes(&r.peers, &r.tasks, &by_pass);

    let table = Table {
        people: r.people,
        tasks: &r.tasks,
        peers: &r.peers,
        cells: &cells,
        loopback: loopback::median(floors),
    };
    let plans_equal = plans_equal(&explains);
    let verdicts = table.verdicts(plans_equal);
    let mismatches = table.mismatches();
    let mut header = header(&args, &r);
    if let Some(f) = table.loopback {
        let _ = write!(
            header,
            "\n\n**The floor under datalith-remote:** {} (the median pass's).",
            f.sentence()
        );
    }
    let md = table.markdown(&header, &verdicts, &mismatches);
    let md_path = out.join("summary.md");
    std::fs::write(&md_path, &md).map_err(BenchError::io(&md_path))?;
    table.write_jsonl(&out.join("summary.jsonl"))?;
    if !explains.is_empty() {
        let p = out.join("explain.md");
        std::fs::write(&p, explain_md(&explains)).map_err(BenchError::io(&p))?;
    }
    let reads: Vec<Task> = r
        .tasks
        .iter()
        .copied()
        .filter(|t| t.kind == Kind::Read)
        .collect();
    let writes: Vec<Task> = r
        .tasks
        .iter()
        .copied()
        .filter(|t| t.kind == Kind::Write)
        .collect();
    plot::bars(
        &out.join("query-latency.png"),
        "Workload Q: queries, median ms",
        &table,
        &reads,
    )?;
    plot::bars(
        &out.join("write-latency.png"),
        "Workload Q: transactions, median ms",
        &table,
        &writes,
    )?;
    let _ = std::fs::remove_dir_all(&db_dir);
    println!("{md}");
    println!("written: {}", out.display());

    let failed: Vec<&Cell> = cells
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Failed(_)))
        .collect();
    // A peer is missing when it ran no task at all (runtime or harness absent); a task one
    // peer does not have (Datomic has no init) is reported, not a failure.
    let skipped_external: Vec<&String> = r
        .peers
        .iter()
        .filter(|p| {
            external.contains(p) || p.as_str() == "datalevin-remote" || python::is_python(p)
        })
        .filter(|p| {
            let mine: Vec<&Cell> = cells.iter().filter(|c| &c.peer == *p).collect();
            !mine.is_empty()
                && mine
                    .iter()
                    .all(|c| matches!(c.outcome, Outcome::Skipped(_)))
        })
        .collect();
    let mut bad = false;
    if !mismatches.is_empty() {
        eprintln!(
            "datalith-bench query: RESULT COUNTS DIFFER BETWEEN PEERS (or from the datoms a \
             write task must leave):"
        );
        for m in &mismatches {
            eprintln!("  {}: {:?}", m.task, m.counts);
        }
        bad = true;
    }
    if !failed.is_empty() {
        eprintln!(
            "datalith-bench query: {} cells FAILED (see summary.md)",
            failed.len()
        );
        bad = true;
    }
    if !skipped_external.is_empty() && !args.run.quick {
        eprintln!(
            "datalith-bench query: peers SKIPPED in a full run: {:?} (see summary.md){}",
            skipped_external,
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

/// Datalevin's server over every task, one pass: the prepared server
/// (`$DATALEVIN_SERVER_DIR`, `common/dtlv_server.rs`) started on a free port of 127.0.0.1 with
/// a fresh root, Datalevin's harness (`query.clj` with the server's URI) over the tasks that
/// run over a server (`remote::not_remote`: as datalith-remote), then the server stopped.
/// Every cell is skipped, with the reason, when no server is prepared; failed when it does not
/// start.
fn datalevin_remote(
    tasks: &[Task],
    inv: &Invocation<'_>,
    bar: &indicatif::ProgressBar,
) -> Vec<Cell> {
    const LABEL: &str = "datalevin-remote";
    let all = |outcome: Outcome| -> Vec<Cell> {
        tasks
            .iter()
            .map(|t| {
                bar.inc(1);
                Cell {
                    peer: LABEL.into(),
                    task: t.name.to_string(),
                    outcome: outcome.clone(),
                }
            })
            .collect()
    };
    let script = match crate::common::dtlv_server::locate() {
        Ok(s) => s,
        Err(why) => {
            progress::println(bar, &format!("{LABEL:>26} (all tasks) skipped: {why}"));
            return all(Outcome::Skipped(why));
        }
    };
    let (over, not_over): (Vec<Task>, Vec<Task>) = tasks
        .iter()
        .copied()
        .partition(|t| remote::not_remote(t).is_none());
    let mut cells: Vec<Cell> = not_over
        .iter()
        .map(|t| {
            bar.inc(1);
            let cell = Cell {
                peer: LABEL.into(),
                task: t.name.to_string(),
                outcome: Outcome::Skipped(remote::not_remote(t).unwrap_or_default().into()),
            };
            progress::println(bar, &cell_line(&cell));
            cell
        })
        .collect();
    if over.is_empty() {
        return cells;
    }
    bar.set_message(format!("{LABEL} (starting the server)"));
    let root = inv.dir.join(format!("{LABEL}-server-p{}", inv.pass + 1));
    let log = inv
        .log_dir
        .join(format!("{LABEL}-server-p{}.log", inv.pass + 1));
    let server =
        match crate::common::dtlv_server::DatalevinServer::start(&script, &root, inv.heap, &log) {
            Ok(s) => s,
            Err(why) => {
                progress::println(bar, &format!("{LABEL:>26} (all tasks) FAILED: {why}"));
                cells.extend(over.iter().map(|t| {
                    bar.inc(1);
                    Cell {
                        peer: LABEL.into(),
                        task: t.name.to_string(),
                        outcome: Outcome::Failed(why.clone()),
                    }
                }));
                return cells;
            }
        };
    let uri = server.uri();
    let inv = Invocation {
        server: Some(&uri),
        ..*inv
    };
    cells.extend(run_external(LABEL, &over, &inv, bar));
    drop(server);
    cells
}

/// One in-process peer over every task, one pass.
fn run_in_process(
    label: &str,
    r: &super::args::Resolved,
    people: &Arc<Vec<data::Person>>,
    db_dir: &Path,
    bar: &indicatif::ProgressBar,
) -> Vec<Cell> {
    let mut peer: Box<dyn Peer> = match label {
        "datalith" => Box::new(DatalithPeer::new(
            Durability::Durable,
            people.clone(),
            db_dir,
        )),
        "datalith-all" => Box::new(DatalithPeer::all(people.clone(), db_dir)),
        "datalith-nosync" => Box::new(DatalithPeer::new(
            Durability::NoSync,
            people.clone(),
            db_dir,
        )),
        "datalith-writemap-mapasync" => Box::new(DatalithPeer::new(
            Durability::WriteMapAsync,
            people.clone(),
            db_dir,
        )),
        "sqlite" => Box::new(SqlitePeer::new(true, people.clone(), db_dir)),
        remote::LABEL => Box::new(RemotePeer::new(people.clone(), db_dir)),
        _ => Box::new(SqlitePeer::new(false, people.clone(), db_dir)),
    };
    let mut cells = Vec::new();
    for t in &r.tasks {
        bar.set_message(format!("{label} {}", t.name));
        if let (remote::LABEL, Some(why)) = (label, remote::not_remote(t)) {
            cells.push(Cell {
                peer: label.to_string(),
                task: t.name.to_string(),
                outcome: Outcome::Skipped(why.to_string()),
            });
        } else if peer.runs(t) {
            let outcome = match peer.run(t, r.plan.for_kind(t.kind)) {
                Ok(m) => Outcome::Measured(m),
                Err(BenchError::Store { op, message, .. }) if op == OVER_CAP => {
                    Outcome::Skipped(message)
                }
                Err(e) => Outcome::Failed(e.to_string()),
            };
            let cell = Cell {
                peer: label.to_string(),
                task: t.name.to_string(),
                outcome,
            };
            progress::println(bar, &cell_line(&cell));
            cells.push(cell);
        }
        bar.inc(1);
    }
    cells
}

/// One external peer over every task, one pass.
fn run_external(
    label: &str,
    tasks: &[Task],
    inv: &Invocation<'_>,
    bar: &indicatif::ProgressBar,
) -> Vec<Cell> {
    bar.set_message(format!("{label} (external)"));
    let got = external::run(label, tasks, inv, || bar.inc(1));
    let same_skip = match got.first().map(|c| &c.outcome) {
        Some(Outcome::Skipped(why)) if got.iter().all(|c| c.outcome == got[0].outcome) => {
            Some(why.clone())
        }
        _ => None,
    };
    if let Some(why) = same_skip {
        progress::println(bar, &format!("{label:>26} (all tasks) skipped: {why}"));
    } else {
        for c in &got {
            progress::println(bar, &cell_line(c));
        }
    }
    got
}

/// The progress line of one cell.
fn cell_line(c: &Cell) -> String {
    match &c.outcome {
        Outcome::Measured(m) => format!(
            "{:>26} {:<10} {:>10.3} ms  ({} runs, count {})",
            c.peer, c.task, m.median_ms, m.runs, m.count
        ),
        Outcome::Skipped(why) => format!("{:>26} {:<10} skipped: {why}", c.peer, c.task),
        Outcome::Failed(why) => format!("{:>26} {:<10} FAILED: {why}", c.peer, c.task),
    }
}

/// The executed plan of every Datalith read task, on a fresh durable database.
fn explain_all(
    tasks: &[Task],
    people: &Arc<Vec<data::Person>>,
    db_dir: &Path,
) -> Vec<(String, Vec<datalith::query::PlanStep>)> {
    let mut peer = DatalithPeer::new(Durability::Durable, people.clone(), db_dir);
    tasks
        .iter()
        .filter(|t| t.query.is_some())
        .filter_map(|t| peer.explain(t).ok().map(|s| (t.name.to_string(), s)))
        .collect()
}

/// Whether q2 and q2-switch ran the same steps (`None` if either was not explained).
fn plans_equal(explains: &[(String, Vec<datalith::query::PlanStep>)]) -> Option<bool> {
    let get = |n: &str| explains.iter().find(|(t, _)| t == n).map(|(_, s)| s);
    let (a, b) = (get("q2")?, get("q2-switch")?);
    Some(
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.what == y.what && x.actual == y.actual),
    )
}

fn explain_md(explains: &[(String, Vec<datalith::query::PlanStep>)]) -> String {
    let mut s = String::from(
        "# Datalith plans of workload Q (explain: index read, estimated / actual rows)\n",
    );
    for (task, steps) in explains {
        let _ = writeln!(s, "\n## {task}\n");
        for (i, st) in steps.iter().enumerate() {
            let _ = writeln!(
                s,
                "{}. `{}`: {}, estimated {}, actual {}",
                i + 1,
                st.what,
                st.index,
                st.estimated,
                st.actual
            );
        }
    }
    s
}

/// What the `--remote` peers time, when they run.
fn remote_scope(r: &super::args::Resolved) -> String {
    if !r
        .peers
        .iter()
        .any(|p| super::args::REMOTE.contains(&p.as_str()))
    {
        return String::new();
    }
    "\n\n**Over the server (`--remote`):** `datalith-remote` is the real `datalith serve` \
     (durable, its own process, started on 127.0.0.1:0) driven by `datalith-client` in this \
     process (CBOR bodies over HTTP/1.1, one kept-alive connection). A read task takes one value \
     (`Connection::db`) before the clock and times `RemoteDb::q`: the request, the server's \
     work, the answer's CBOR read back into values. A write task runs on a fresh server \
     and database with the schema installed before the clock; each transaction is a request \
     answered once durable. `init` (the bulk loader writes files) and `lookup-raw` (the client \
     has no raw index call) do not run over the server. `datalevin-remote` is Datalevin's \
     server (prepared outside this repository, `$DATALEVIN_SERVER_DIR`: Datalevin 0.10.15's \
     server layer over the 1.2.8 runtime jar, bench/peers/README.md \"Datalevin's server\"; \
     its own process on 127.0.0.1, started once a pass, query result cache off, Datalevin's \
     default durable flags) driven by Datalevin's own client in the harness's JVM \
     (`bench/peers/datalevin/query.clj` with the server's URI): a read task takes `d/db` of \
     one connection to a database loaded once (one transaction) and times `d/q` (run by the \
     server); a write task runs on a fresh database of the server with the schema installed \
     before the clock, each `transact!` one request answered once durable. The same tasks as \
     `datalith-remote` run over it."
        .to_string()
}

fn python_scope(r: &super::args::Resolved) -> String {
    if !r.peers.iter().any(|p| python::is_python(p)) {
        return String::new();
    }
    "\n\n**From Python (`--python`):** each `-py` peer is `bench/peers/python/query.py` in its \
     own CPython process, under the timing above, with the Datalog texts, `:in` values and \
     SQL of the Rust peers (read from `python-spec.json`). `datalith-py` is the wheel built \
     from this checkout (`import datalith`; `Db.q` on a value taken before the clock, results \
     converted to Python sets, tuples and ints; `init` is `datalith.init_db`); \
     `datalevin-py` is Datalevin's PyPI package over JPype (`Connection.query` with the \
     query cache off, as the JVM harness; `init` is `init_db`; the seed's flags); \
     `sqlite3-py` is Python's `sqlite3` (the statement's `fetchall`). `datalith` is the Rust \
     API in this process, for the conversion cost of q1."
        .to_string()
}

fn header(args: &QueryArgs, r: &super::args::Resolved) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{} people ({} datoms), seed {}{}. Machine: {cpu}, {cores} cores.\n\n\
         **Passes:** {} passes over every peer, the peer order rotated by one each pass; a cell \
         is the median of its pass medians (spread table below).\n\n\
         **Warm-up, the same for every peer:** a read task runs untimed for {:.2} s (at least 3 \
         calls), a write task once untimed; then each task repeats for {} s (at least {} timed \
         runs) and the pass reports the median run. {}.\n\n\
         **What each timer includes, for every peer:** a read task times one query call until \
         its whole result is in the caller's hands (Datalith: `q` returning EDN; SQLite: the \
         statement stepped to its last row; Datalevin and Datomic: `d/q` on a db value taken \
         before the clock; Datascript: its JS API `d.q`, which reads the query text and \
         converts the result to JS arrays at each call: the npm build exports no other entry \
         point). `lookup-raw` times the AVE walk and one EAV lookup per entity. `init` times \
         opening an empty store, installing the schema and bulk-loading prepared datoms \
         (Datalith `Database::init_db`; Datalevin `init-db`; Datascript `init_db`; SQLite open, \
         pragmas, `CREATE TABLE` and one transaction); Datomic has no bulk loader. The other \
         write tasks time the transactions only, each run on a fresh store with the schema \
         installed before the clock starts.\n\n\
         **Conditions:** `datalith` and `sqlite` durable (fsync per commit; SQLite WAL \
         synchronous=FULL); `datalith-nosync` is `Durability::NoSync`, the write-ahead log without \
         its sync (no fsync at commit, as Datalevin's `:nosync`), \
         `datalith-writemap-mapasync` is `MDB_WRITEMAP | MDB_MAPASYNC`, `sqlite-nosync` is WAL \
         with synchronous=OFF; Datalevin on disk with the seed's flags `:nordahead :notls \
         :writemap :nosync`, Datomic `datomic:mem://`, Datascript in memory (Node). Harnesses: \
         `bench/peers/` (see its README).{}",
        r.people,
        r.people * 5,
        args.seed,
        if args.run.quick { ", --quick" } else { "" },
        r.passes,
        r.plan.secs * 2.0 / 3.0,
        r.plan.secs,
        r.plan.min_runs,
        crate::common::jvm::describe(&args.run.heap),
        remote_scope(r) + &python_scope(r),
    )
}
