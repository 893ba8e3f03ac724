//! One database, many processes: one writer process and several reader processes on one
//! database directory, for a stated time.
//!
//! The writer transacts without pause (one new entity per transaction, `:share/id k`, and the
//! counter entity `:share/id 0` updated to `k` in the same transaction; every 97th transaction
//! also adds 400 entities, so that large groups, checkpoints and the log's wrap happen) and,
//! after each acknowledgement, stores `k` in a shared memory word (`ACK`, a file mapped by
//! every process). A reader loops: it loads the acknowledged `k` first, then takes a snapshot
//! (`Database::db`) and requires that entity `k` exists and that the counter is at least `k`:
//! the snapshot began after `k` was acknowledged, so it must include it. Each reader prints
//! its reads, its violations, its errors and the time from loading `k` to the answer (which
//! bounds how late an acknowledged commit becomes visible to another process). Readers pause
//! 2 ms between reads (`READ_PAUSE`).
//!
//! `datalith-torture share [--secs N] [--readers R] [--dir DIR] [--datalith PATH]` runs them,
//! and runs `datalith check DIR` on the live database halfway; it exits 1 when a reader saw a
//! violation or an error, or the check failed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use datalith::edn::Edn;
use datalith::{Database, DbOptions};

/// The schema the writer installs.
const SCHEMA: &str = "[{:db/ident :share/id :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :share/v :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]";

/// Every this many transactions, one adds `BULK_ENTITIES` more entities.
const BULK_EVERY: u64 = 97;
const BULK_ENTITIES: u64 = 400;

/// Between a reader's reads.
const READ_PAUSE: Duration = Duration::from_millis(2);

/// Options of `share`.
pub struct Options {
    secs: u64,
    readers: usize,
    dir: Option<PathBuf>,
    datalith: PathBuf,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut o = Options {
            secs: 60,
            readers: 4,
            dir: None,
            datalith: exe.with_file_name("datalith"),
        };
        let number = |v: &str| v.parse::<u64>().map_err(|_| format!("not a number: {v}"));
        for pair in args.chunks(2) {
            let [name, value] = pair else {
                return Err(format!("{} needs a value", pair[0]));
            };
            match name.as_str() {
                "--secs" => o.secs = number(value)?.max(1),
                "--readers" => o.readers = number(value)?.max(1) as usize,
                "--dir" => o.dir = Some(PathBuf::from(value)),
                "--datalith" => o.datalith = PathBuf::from(value),
                other => return Err(format!("unknown option {other}\n{}", super::USAGE)),
            }
        }
        Ok(o)
    }
}

/// The acknowledged counter, shared by every process through a mapped file.
struct Ack {
    word: &'static AtomicU64,
}

impl Ack {
    fn map(path: &Path) -> Result<Ack, String> {
        use std::os::fd::AsRawFd;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        file.set_len(8).map_err(|e| e.to_string())?;
        // SAFETY: a shared mapping of 8 bytes of a file we hold open; it stays mapped for the
        // life of the process (never unmapped), so the reference is valid for 'static. Every
        // process reads and writes it only through `AtomicU64`, which is 8-byte aligned at the
        // start of a page.
        let word = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            if p == libc::MAP_FAILED {
                return Err(format!(
                    "mmap {}: {}",
                    path.display(),
                    std::io::Error::last_os_error()
                ));
            }
            &*(p as *const AtomicU64)
        };
        Ok(Ack { word })
    }
}

/// Runs the writer and the readers, then reports.
pub fn run(o: &Options) -> Result<bool, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let temp;
    let base = match &o.dir {
        Some(d) => d.clone(),
        None => {
            temp = tempfile_dir()?;
            temp.clone()
        }
    };
    let db_dir = base.join("db");
    let ack = base.join("ack");
    let _ = std::fs::remove_dir_all(&db_dir);
    let _ = std::fs::remove_file(&ack);
    {
        let db = Database::open(&db_dir, DbOptions::default()).map_err(|e| e.to_string())?;
        db.transact(SCHEMA).map_err(|e| e.to_string())?;
    }
    Ack::map(&ack)?;
    let secs = o.secs.to_string();
    let spawn = |mode: &str| {
        Command::new(&exe)
            .args([mode, path_str(&db_dir), path_str(&ack), &secs])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting {mode}: {e}"))
    };
    let writer = spawn("share-writer")?;
    // Readers start once the writer holds the database, as they would on a live one.
    std::thread::sleep(Duration::from_millis(200));
    let readers = (0..o.readers)
        .map(|_| spawn("share-reader"))
        .collect::<Result<Vec<_>, _>>()?;
    std::thread::sleep(Duration::from_secs(o.secs) / 2);
    let check = Command::new(&o.datalith)
        .args(["check", path_str(&db_dir)])
        .output()
        .map_err(|e| format!("running {} check: {e}", o.datalith.display()))?;
    let check_ok = check.status.success();
    println!(
        "datalith check on the live database: exit {}{}",
        check.status.code().unwrap_or(-1),
        match check_ok {
            true => String::new(),
            false => format!(
                "\n{}{}",
                String::from_utf8_lossy(&check.stdout),
                String::from_utf8_lossy(&check.stderr)
            ),
        }
    );
    let mut ok = check_ok;
    let out = writer.wait_with_output().map_err(|e| e.to_string())?;
    print!("writer: {}", String::from_utf8_lossy(&out.stdout));
    ok &= out.status.success();
    for (i, r) in readers.into_iter().enumerate() {
        let out = r.wait_with_output().map_err(|e| e.to_string())?;
        print!("reader {i}: {}", String::from_utf8_lossy(&out.stdout));
        ok &= out.status.success();
    }
    Ok(ok)
}

fn tempfile_dir() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("datalith-share-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(dir)
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// The writer process: transacts for `secs`, publishing each acknowledged counter.
pub fn writer(dir: &Path, ack: &Path, secs: u64) -> Result<bool, String> {
    let ack = Ack::map(ack)?;
    let db = Database::open(dir, DbOptions::default()).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut k = 0u64;
    while Instant::now() < deadline {
        k += 1;
        let mut tx = format!("[{{:share/id {k} :share/v {k}}} {{:share/id 0 :share/v {k}}}");
        if k % BULK_EVERY == 0 {
            for j in 0..BULK_ENTITIES {
                tx.push_str(&format!(" {{:share/id -{} :share/v {k}}}", k * 1000 + j));
            }
        }
        tx.push(']');
        db.transact(tx.as_str())
            .map_err(|e| format!("transaction {k}: {e}"))?;
        ack.word.store(k, Ordering::Release);
    }
    println!("transactions {k}");
    Ok(true)
}

/// Holds the database at `dir` for writing, as an application would, until its standard
/// input closes: installs `:name`, transacts `{:name "Ann"}`, prints `held`, then waits.
pub fn hold(dir: &Path) -> Result<bool, String> {
    use std::io::{Read, Write};
    let db = Database::open(dir, DbOptions::default()).map_err(|e| e.to_string())?;
    db.transact(
        "[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
    )
    .map_err(|e| e.to_string())?;
    db.transact(r#"[{:name "Ann"}]"#)
        .map_err(|e| e.to_string())?;
    println!("held");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    Ok(true)
}

/// The reader process: checks for `secs` that each snapshot holds every acknowledged commit.
pub fn reader(dir: &Path, ack: &Path, secs: u64) -> Result<bool, String> {
    let ack = Ack::map(ack)?;
    let db = Database::open_read_only(dir, DbOptions::default()).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (mut reads, mut violations, mut errors) = (0u64, 0u64, 0u64);
    let mut latencies = Vec::new();
    let mut first_problem = None;
    let q = "[:find ?v . :in $ ?k :where [?e :share/id ?k] [?e :share/v ?v]]";
    while Instant::now() < deadline {
        // A reader that also does other work: several readers spinning on 2 cores would
        // measure the scheduler, not the database.
        std::thread::sleep(READ_PAUSE);
        let k = ack.word.load(Ordering::Acquire);
        let started = Instant::now();
        let answer = db.db().map_err(|e| e.to_string()).and_then(|snap| {
            let own = snap
                .q(q, &[Edn::Long(k as i64)])
                .map_err(|e| e.to_string())?;
            let counter = snap.q(q, &[Edn::Long(0)]).map_err(|e| e.to_string())?;
            Ok((own, counter))
        });
        latencies.push(started.elapsed());
        reads += 1;
        match answer {
            Ok((own, counter)) => {
                let own_ok = k == 0 || own == Edn::Long(k as i64);
                let counter_ok = match counter {
                    Edn::Long(c) => c as u64 >= k,
                    _ => k == 0,
                };
                if !(own_ok && counter_ok) {
                    violations += 1;
                    first_problem.get_or_insert(format!(
                        "acknowledged {k}, snapshot read entity {k}: {own}, counter: {counter}"
                    ));
                }
            }
            Err(e) => {
                errors += 1;
                first_problem.get_or_insert(e);
            }
        }
    }
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    println!(
        "reads {reads} violations {violations} errors {errors} latency p50 {:.2} ms p99 {:.2} ms max {:.2} ms{}",
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3,
        first_problem.map(|p| format!(" first problem: {p}")).unwrap_or_default()
    );
    Ok(violations == 0 && errors == 0)
}
