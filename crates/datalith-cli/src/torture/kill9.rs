//! The torture loop: start a writer, kill it with SIGKILL at a random moment, verify, check.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use datalith::kv::Durability;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Options of `datalith-torture kill9`.
pub struct Options {
    cycles: u64,
    dir: Option<PathBuf>,
    datalith: PathBuf,
    seed: u64,
    max_delay_ms: u64,
    cycles_per_database: u64,
    /// The writer's durability mode: every mode promises that a process crash loses nothing
    /// acknowledged, so the same verification holds for each.
    durability: Durability,
}

impl Options {
    /// Parses `--name value` pairs.
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut o = Options {
            cycles: 1000,
            dir: None,
            datalith: exe.with_file_name("datalith"),
            seed: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            max_delay_ms: 300,
            cycles_per_database: 50,
            durability: Durability::Durable,
        };
        let number = |v: &str| v.parse::<u64>().map_err(|_| format!("not a number: {v}"));
        for pair in args.chunks(2) {
            let [name, value] = pair else {
                return Err(format!("{} needs a value", pair[0]));
            };
            match name.as_str() {
                "--cycles" => o.cycles = number(value)?,
                "--dir" => o.dir = Some(PathBuf::from(value)),
                "--datalith" => o.datalith = PathBuf::from(value),
                "--seed" => o.seed = number(value)?,
                "--max-delay-ms" => o.max_delay_ms = number(value)?.max(1),
                "--cycles-per-database" => o.cycles_per_database = number(value)?.max(1),
                "--durability" => {
                    o.durability = Durability::from_label(value)
                        .ok_or_else(|| format!("unknown durability {value}"))?
                }
                other => return Err(format!("unknown option {other}\n{}", super::USAGE)),
            }
        }
        Ok(o)
    }
}

#[derive(Default)]
struct Tally {
    cycles: u64,
    acks: usize,
    by_kind: [usize; 4],
    lost: usize,
    wrong: usize,
    search_unacknowledged: usize,
    check_failures: u64,
    reopen_failures: u64,
    killed_before_first_ack: u64,
}

impl Tally {
    fn line(&self) -> String {
        format!(
            "cycles {} acks {} lost {} check_failures {} reopen_failures {} wrong_answers {} (killed before the first ack: {}; acks by kind: {} creates, {} full-text updates, {} KV puts, {} search writes; search writes found committed but unacknowledged: {})",
            self.cycles,
            self.acks,
            self.lost,
            self.check_failures,
            self.reopen_failures,
            self.wrong,
            self.killed_before_first_ack,
            self.by_kind[0],
            self.by_kind[1],
            self.by_kind[2],
            self.by_kind[3],
            self.search_unacknowledged
        )
    }
}

fn lines_in(path: &Path) -> usize {
    std::fs::read(path).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count())
}

/// Starts a writer and kills it: most cycles a random moment after its first
/// acknowledgement, one in eight a random moment after start (open and recovery too).
/// Returns whether it was killed before acknowledging anything in this cycle.
fn write_and_kill(
    dir: &Path,
    ack_log: &Path,
    cycle: u64,
    rng: &mut StdRng,
    max_delay: u64,
    durability: Durability,
) -> Result<bool, String> {
    let before = lines_in(ack_log);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("writer")
        .arg(dir)
        .arg(ack_log)
        .arg(cycle.to_string())
        .arg(durability.label())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start the writer: {e}"))?;
    let early = rng.random_range(0..8) == 0;
    if !early {
        let start = Instant::now();
        while lines_in(ack_log) == before && start.elapsed() < Duration::from_secs(30) {
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                return Err(format!("cycle {cycle}: the writer ended ({status}): {err}"));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    std::thread::sleep(Duration::from_millis(rng.random_range(0..max_delay)));
    // `Child::kill` is SIGKILL on Unix.
    child.kill().map_err(|e| format!("kill: {e}"))?;
    child.wait().map_err(|e| format!("wait: {e}"))?;
    Ok(lines_in(ack_log) == before)
}

/// `datalith check DIR`: `None` when clean, else what it printed.
fn check(datalith: &Path, dir: &Path) -> Result<Option<String>, String> {
    let out = Command::new(datalith)
        .arg("check")
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("run {}: {e}", datalith.display()))?;
    Ok((!out.status.success()).then(|| {
        format!(
            "exit {:?}: {}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }))
}

/// Runs the torture; `Ok(true)` when nothing was lost and every check was clean.
pub fn run(o: &Options) -> Result<bool, String> {
    if !o.datalith.is_file() {
        return Err(format!(
            "no datalith binary at {} (build datalith-cli, or pass --datalith PATH)",
            o.datalith.display()
        ));
    }
    let scratch;
    let root = match &o.dir {
        Some(d) => d.clone(),
        None => {
            scratch = tempfile_dir()?;
            scratch.clone()
        }
    };
    println!(
        "kill -9 torture: {} cycles, {} writes, seed {}, in {}",
        o.cycles,
        o.durability.label(),
        o.seed,
        root.display()
    );
    let mut rng = StdRng::seed_from_u64(o.seed);
    let mut tally = Tally::default();
    for cycle in 0..o.cycles {
        // A fresh database every few cycles keeps each verification and check small.
        let generation = cycle / o.cycles_per_database;
        let dir = root.join(format!("db{generation}"));
        let ack_log = root.join(format!("acks{generation}.log"));
        if cycle % o.cycles_per_database == 0 && generation > 0 {
            let old = generation - 1;
            let _ = std::fs::remove_dir_all(root.join(format!("db{old}")));
            let _ = std::fs::remove_file(root.join(format!("acks{old}.log")));
        }
        if write_and_kill(
            &dir,
            &ack_log,
            cycle,
            &mut rng,
            o.max_delay_ms,
            o.durability,
        )? {
            tally.killed_before_first_ack += 1;
        }
        tally.cycles += 1;
        match super::verify::verify(&dir, &ack_log) {
            Ok(v) => {
                if !v.lost.is_empty() {
                    println!(
                        "cycle {cycle}: {} acknowledged writes lost, e.g. {}",
                        v.lost.len(),
                        v.lost[0]
                    );
                }
                tally.lost += v.lost.len();
                if !v.wrong.is_empty() {
                    println!(
                        "cycle {cycle}: {} wrong answers, e.g. {}",
                        v.wrong.len(),
                        v.wrong[0]
                    );
                }
                tally.wrong += v.wrong.len();
                tally.search_unacknowledged += v.search_unacknowledged;
                if (cycle + 1) % o.cycles_per_database == 0 || cycle + 1 == o.cycles {
                    tally.acks += v.acks;
                    for (t, n) in tally.by_kind.iter_mut().zip(v.by_kind) {
                        *t += n;
                    }
                }
            }
            Err(e) => {
                println!("cycle {cycle}: reopen or verify failed: {e}");
                tally.reopen_failures += 1;
            }
        }
        if dir.join("data.mdb").is_file() {
            if let Some(report) = check(&o.datalith, &dir)? {
                println!("cycle {cycle}: check failed: {report}");
                tally.check_failures += 1;
            }
        }
        if (cycle + 1) % 50 == 0 {
            println!("{}", tally.line());
        }
    }
    println!("{}", tally.line());
    if o.dir.is_none() {
        let _ = std::fs::remove_dir_all(&root);
    }
    Ok(tally.lost == 0
        && tally.wrong == 0
        && tally.check_failures == 0
        && tally.reopen_failures == 0)
}

fn tempfile_dir() -> Result<PathBuf, String> {
    let base = std::env::temp_dir().join(format!("datalith-torture-{}", std::process::id()));
    std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    Ok(base)
}
