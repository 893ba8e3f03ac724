//! `datalith-torture serve`: a bounded load test of `datalith serve` on loopback. It starts
//! the real server on a fresh database, runs `--clients` threads for `--secs` seconds, each
//! through the Rust client (`datalith-client`) mixing queries (a lookup by key, a count),
//! pulls and one-entity transactions, and records each operation's latency and every
//! acknowledged transaction's key; then stops the server (SIGTERM, or with `--kill` SIGKILL
//! halfway through the run, as a crash), starts it again on the same directory and checks
//! that every acknowledged key is there. It prints p50/p99 per operation, errors and lost
//! writes, and fails when any write was lost, or (without `--kill`) any request failed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use datalith::edn::Edn;
use datalith_client::Client;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

const SCHEMA: &str = "[{:db/ident :item/key :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :item/n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]";

/// Options of `serve`.
pub struct Options {
    secs: u64,
    clients: usize,
    kill: bool,
    dir: Option<PathBuf>,
    datalith: PathBuf,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut o = Options {
            secs: 60,
            clients: 200,
            kill: false,
            dir: None,
            datalith: exe.with_file_name("datalith"),
        };
        let number = |v: &str| v.parse::<u64>().map_err(|_| format!("not a number: {v}"));
        let mut rest = args.iter();
        while let Some(name) = rest.next() {
            if name == "--kill" {
                o.kill = true;
                continue;
            }
            let value = rest.next().ok_or_else(|| format!("{name} needs a value"))?;
            match name.as_str() {
                "--secs" => o.secs = number(value)?.max(1),
                "--clients" => o.clients = number(value)?.max(1) as usize,
                "--dir" => o.dir = Some(PathBuf::from(value)),
                "--datalith" => o.datalith = PathBuf::from(value),
                other => return Err(format!("unknown option {other}\n{}", super::USAGE)),
            }
        }
        Ok(o)
    }
}

/// The kinds of operation, as reported.
const OPS: [&str; 4] = ["q-lookup", "q-count", "pull", "transact"];

/// What the clients recorded.
#[derive(Default)]
struct Record {
    latencies: [Vec<Duration>; 4],
    errors: [u64; 4],
    first_error: Option<String>,
    acked: Vec<String>,
    /// Reads refused because their `db()` value was let go early (past the most leases a
    /// database keeps, the oldest goes): the documented answer, counted apart.
    let_go: u64,
}

pub fn run(o: &Options) -> Result<bool, String> {
    let temp;
    let base = match &o.dir {
        Some(d) => d.clone(),
        None => {
            temp = std::env::temp_dir().join(format!("datalith-serve-load-{}", std::process::id()));
            temp.clone()
        }
    };
    let db = base.join("load");
    let _ = std::fs::remove_dir_all(&db);
    std::fs::create_dir_all(&base).map_err(|e| e.to_string())?;
    let (mut server, url) = start(&o.datalith, &db)?;
    let people = Client::new(&url).database("load");
    people.transact(SCHEMA).map_err(|e| e.to_string())?;

    let record = Arc::new(Mutex::new(Record::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let clients: Vec<_> = (0..o.clients)
        .map(|c| {
            let (url, record, stop) = (url.clone(), record.clone(), stop.clone());
            std::thread::spawn(move || client(c, &url, &record, &stop))
        })
        .collect();
    let run_for = Duration::from_secs(o.secs);
    if o.kill {
        std::thread::sleep(run_for / 2);
        // A crash: acknowledged transactions must all be there after the restart.
        let _ = server.kill();
        stop.store(true, Ordering::Relaxed);
    } else {
        std::thread::sleep(run_for);
        stop.store(true, Ordering::Relaxed);
    }
    for c in clients {
        let _ = c.join();
    }
    let ran = started.elapsed();
    if !o.kill {
        terminate(&server);
    }
    let status = server.wait().map_err(|e| e.to_string())?;
    let record = std::mem::take(&mut *record.lock().unwrap_or_else(|p| p.into_inner()));

    let (mut again, url) = start(&o.datalith, &db)?;
    let found = keys(&url);
    terminate(&again);
    let _ = again.wait();
    let found = found?;
    let lost: Vec<&String> = record
        .acked
        .iter()
        .filter(|k| !found.contains(*k))
        .collect();

    println!(
        "{} clients for {:.1} s{}; server exit {:?}",
        o.clients,
        ran.as_secs_f64(),
        if o.kill { ", SIGKILL halfway" } else { "" },
        status.code()
    );
    for (i, op) in OPS.iter().enumerate() {
        let mut l = record.latencies[i].clone();
        l.sort();
        let at = |q: f64| {
            l.get(((l.len() as f64 - 1.0) * q) as usize)
                .copied()
                .unwrap_or_default()
        };
        println!(
            "{op:9} {:7} ops  p50 {:8.3} ms  p99 {:8.3} ms  errors {}",
            l.len(),
            at(0.5).as_secs_f64() * 1e3,
            at(0.99).as_secs_f64() * 1e3,
            record.errors[i]
        );
    }
    let errors: u64 = record.errors.iter().sum();
    if let Some(e) = &record.first_error {
        println!("first error: {e}");
    }
    println!(
        "db() values let go early {}; acknowledged {} found {} lost {}",
        record.let_go,
        record.acked.len(),
        found.len(),
        lost.len()
    );
    Ok(lost.is_empty() && (o.kill || errors == 0))
}

/// One client: a mix of reads and writes until told to stop.
fn client(c: usize, url: &str, record: &Mutex<Record>, stop: &AtomicBool) {
    let db = Client::new(url).database("load");
    let mut rng = StdRng::seed_from_u64(c as u64);
    let mut mine: Vec<String> = Vec::new();
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let kind = match rng.random_range(0..10) {
            0..=3 => 0,
            4 => 1,
            5..=6 => 2,
            _ => 3,
        };
        let known = (!mine.is_empty()).then(|| mine[rng.random_range(0..mine.len())].clone());
        // Reads need a key written before: until then, every operation writes.
        let (kind, key) = match known {
            Some(key) => (kind, key),
            None => (3, String::new()),
        };
        let start = Instant::now();
        let outcome = match kind {
            3 => {
                let key = format!("c{c}-{n}");
                n += 1;
                let tx = format!(r#"[{{:item/key "{key}" :item/n {n}}}]"#);
                db.transact(tx.as_str()).map(|_| {
                    mine.push(key.clone());
                    Some(key)
                })
            }
            0 => db
                .db()
                .and_then(|v| {
                    v.q(
                        "[:find ?n . :in $ ?k :where [?e :item/key ?k] [?e :item/n ?n]]",
                        &[Edn::String(key)],
                    )
                })
                .map(|_| None),
            1 => db
                .db()
                .and_then(|v| v.q("[:find (count ?e) . :where [?e :item/key]]", &[]))
                .map(|_| None),
            _ => db
                .db()
                .and_then(|v| {
                    let eid = (
                        datalith::Keyword::parse(":item/key"),
                        datalith::Value::String(key.as_str().into()),
                    );
                    v.pull("[:item/n]", eid)
                })
                .map(|_| None),
        };
        let took = start.elapsed();
        let kind = if n > 0 && matches!(outcome, Ok(Some(_))) {
            3
        } else {
            kind
        };
        let mut r = record.lock().unwrap_or_else(|p| p.into_inner());
        match outcome {
            Ok(acked) => {
                r.latencies[kind].push(took);
                r.acked.extend(acked);
            }
            // After a kill, failures are the crash's, not errors of the server.
            Err(_) if stop.load(Ordering::Relaxed) => {}
            Err(e) if e.code.as_deref() == Some(":datalith.error/basis-unavailable") => {
                r.let_go += 1;
            }
            Err(e) => {
                r.errors[kind] += 1;
                r.first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

/// Every key in the database.
fn keys(url: &str) -> Result<std::collections::HashSet<String>, String> {
    let v = Client::new(url)
        .database("load")
        .db()
        .and_then(|v| v.q("[:find [?k ...] :where [_ :item/key ?k]]", &[]))
        .map_err(|e| e.to_string())?;
    match v {
        Edn::Vector(items) => Ok(items
            .into_iter()
            .filter_map(|k| match k {
                Edn::String(s) => Some(s),
                _ => None,
            })
            .collect()),
        Edn::Nil => Ok(Default::default()),
        other => Err(format!("keys: {other}")),
    }
}

/// Starts `datalith serve DB` on a free loopback port; returns it and its URL.
fn start(datalith: &Path, db: &Path) -> Result<(Child, String), String> {
    let mut child = Command::new(datalith)
        .arg("serve")
        .arg(db)
        .args(["--listen", "127.0.0.1:0", "--max-concurrent", "256"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", datalith.display()))?;
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no stdout")?;
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let url = line
        .split("listening on ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .ok_or_else(|| format!("the server did not start: {line}"))?
        .to_string();
    Ok((child, url))
}

fn terminate(child: &Child) {
    // SAFETY: a signal to our own child process.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
}
