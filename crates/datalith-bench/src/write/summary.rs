//! `summary.md` (tables and the ratios the issue asks for) and `summary.jsonl`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::args::Plan;
use super::condition::Family;
use super::init::{self, InitResult};
use super::result::RunResult;
use crate::common::loopback::Floor;
use crate::common::BenchError;

/// Writes both summary files; returns the Markdown one's path.
pub fn write(
    plan: &Plan,
    results: &[RunResult],
    inits: &[InitResult],
    pngs: &[PathBuf],
    loopback: Option<Floor>,
) -> Result<PathBuf, BenchError> {
    let jsonl_path = plan.out.join("summary.jsonl");
    let mut jsonl = String::new();
    for r in inits {
        jsonl.push_str(&serde_json::to_string(r)?);
        jsonl.push('\n');
    }
    for r in results {
        jsonl.push_str(&serde_json::to_string(r)?);
        jsonl.push('\n');
    }
    std::fs::write(&jsonl_path, jsonl).map_err(BenchError::io(&jsonl_path))?;
    let md_path = plan.out.join("summary.md");
    let mut md = markdown(plan, results, pngs, loopback);
    // The bulk-load section goes before the plots (or last).
    let at = md.find("\n## Plots").unwrap_or(md.len());
    md.insert_str(at, &init::markdown(inits));
    std::fs::write(&md_path, md).map_err(BenchError::io(&md_path))?;
    Ok(md_path)
}

/// Peers that were selected but did not run, with the reason (deduplicated by name).
pub fn missing_peers(results: &[RunResult]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in results {
        if let Some(why) = &r.skipped {
            let peer = !r.condition.starts_with("kv-") && !r.condition.starts_with("dl-");
            if peer && !out.iter().any(|(n, _)| n == &r.condition) {
                out.push((r.condition.clone(), why.clone()));
            }
        }
    }
    out
}

/// One line per run for the terminal.
pub fn one_line(r: &RunResult) -> String {
    let head = format!("{:<28} b{:<5}", r.condition, r.batch);
    if let Some(why) = &r.skipped {
        return format!("{head} skipped: {why}");
    }
    if !r.measured() {
        return format!("{head} FAILED: {}", r.error.as_deref().unwrap_or("?"));
    }
    let mut s = format!(
        "{head} {:>8} writes{} {:>8.2} s {:>12} w/s  call {} ms  commit {} ms  count {}",
        r.writes,
        if r.capped { " (capped)" } else { "" },
        r.seconds,
        num(r.throughput_wps),
        ms(r.call_latency_ms),
        ms(r.commit_latency_ms),
        if r.count_ok { "ok" } else { "WRONG" }
    );
    if let Some(m) = &r.mixed {
        let _ = write!(
            s,
            "; mixed {} its {:.2} s count {}",
            m.iterations,
            m.seconds,
            if m.count_ok { "ok" } else { "WRONG" }
        );
    }
    if let Some(e) = &r.error {
        let _ = write!(s, "  ERROR: {e}");
    }
    s
}

fn num(x: f64) -> String {
    let s = format!("{x:.1}");
    let (int, frac) = s.split_once('.').unwrap_or((&s, "0"));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}.{frac}")
}

fn ms(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| {
        if v >= 10.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.3}")
        }
    })
}

fn yes(b: bool) -> &'static str {
    if b {
        "ok"
    } else {
        "**WRONG**"
    }
}

fn find<'a>(results: &'a [RunResult], cond: &str, batch: usize) -> Option<&'a RunResult> {
    results
        .iter()
        .find(|r| r.condition == cond && r.batch == batch && r.measured() && r.writes > 0)
}

fn markdown(
    plan: &Plan,
    results: &[RunResult],
    pngs: &[PathBuf],
    loopback: Option<Floor>,
) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "# Workload W ({}): pure write, then mixed read/write\n",
        plan.family.out_name()
    );
    let _ = writeln!(w, "- date: {}", utc_now());
    let _ = writeln!(w, "- machine: {}", machine());
    let _ = writeln!(
        w,
        "- command: `{}`",
        std::env::args().collect::<Vec<_>>().join(" ")
    );
    let _ = writeln!(
        w,
        "- size: {} writes per condition{}, batches {:?}, CSV row every {} writes, mixed phase {} \
         iterations on the batch-1 store, cap per phase: {}",
        plan.writes,
        if plan.quick { " (--quick)" } else { "" },
        plan.batches,
        plan.window,
        plan.mixed,
        plan.max_secs.map_or("none".into(), |s| format!("{s} s"))
    );
    if let Some(f) = loopback {
        let _ = writeln!(
            w,
            "- the floor under dl-remote: {} (the median pass's)",
            f.sentence()
        );
    }
    let _ = writeln!(
        w,
        "- seed: {} (UUID values and mixed-phase keys)",
        plan.seed
    );
    let _ = writeln!(
        w,
        "- async conditions keep at most {} calls in flight; sync ones make one call at a time",
        super::MAX_IN_FLIGHT
    );
    let _ = writeln!(
        w,
        "- ET = throughput x (1 ms / mean commit latency); commit latency = submit to durable \
         completion; machines are noisy: compare ratios within this run"
    );
    let _ = writeln!(
        w,
        "- disk bytes / write: sectors written to the disk under the store (`/sys/dev/block`) \
         from the first call until the count check returned, each end after `sync` (so the \
         pages a store left in the page cache count too), over the writes; the whole \
         machine's writes to that disk (a server's too), so a quiet machine is assumed; `-` \
         for the JVM peers"
    );
    let _ = writeln!(
        w,
        "- CSV rows of async conditions count submitted writes; the last row is taken once \
         every write is durable, and the table's figures come from it"
    );
    let _ = writeln!(
        w,
        "- passes: {} over every condition, the condition order rotated by one each pass; a \
         cell is the pass with the median throughput (its CSV and latencies), with the min-max \
         over the passes beside it",
        plan.passes
    );
    let _ = writeln!(
        w,
        "- warm-up, the same for every condition: before each timed run, up to {} writes (at \
         most {} s) of the same condition and batch into a throwaway store, in the process that \
         then runs the timed writes (for Datalevin: the same JVM); before each mixed phase, up \
         to as many untimed read+write iterations on keys already present; {}",
        plan.warmup,
        plan.warmup_secs,
        crate::common::jvm::describe(&plan.heap)
    );
    let _ = writeln!(
        w,
        "- timers, the same for every condition: the pure-write clock runs from the first call \
         until the last write is durable (store opened, schema installed and warm-up done \
         before it); the mixed clock runs over the timed iterations only, each a read call then \
         a write call; `query` mixed reads go through the store's query API (Datalog `q` for \
         Datalith and Datalevin, SQL for SQLite, `get` for KV stores), `raw` ones through the \
         raw index (AVE then EAV: Datalith's reader, Datalevin's `datoms`)\n"
    );
    if plan.family == Family::Remote {
        let _ = writeln!(
            w,
            "- over the server (`--remote`): `dl-remote` is the real `datalith serve` (durable, \
             its own process, on 127.0.0.1:0, started with the store) driven by \
             `datalith-client` (CBOR bodies over HTTP/1.1, one kept-alive connection): each call \
             writes the records as EDN text (in the CBOR body) and is one `transact` request answered once durable; its \
             user/sys seconds and peak RSS are the client's only. `dl-sync` is the embedded \
             `transact` of the same records. `dl-bare` is the floor under `dl-remote`: the same \
             text in a frame over one loopback TCP connection to a process of the bench \
             (`__bare-serve`) holding the database, the embedded `transact` there, a few bytes \
             back once durable (no HTTP, no body format, no report). `datalevin-remote` is Datalevin's server \
             (prepared outside this repository, `$DATALEVIN_SERVER_DIR`: Datalevin 0.10.15's \
             server layer over the 1.2.8 runtime jar, bench/peers/README.md \"Datalevin's \
             server\"; its own process on 127.0.0.1, started for each run with a fresh root, \
             Datalevin's default durable flags) driven by Datalevin's own client in the \
             harness's JVM (`bench/peers/datalevin/write.clj`, condition `datalevin-remote`: \
             `datalevin-default`'s `transact!` of entity maps on a database of the server, its \
             warm-up on another database of the same server, the count a `(count ?e)` query \
             of `:k`); its user/sys seconds and peak RSS are the client JVM's only\n"
        );
    }

    let missing = missing_peers(results);
    if !missing.is_empty() {
        if plan.quick {
            let _ = writeln!(w, "Peers not run (allowed in --quick):\n");
        } else {
            let _ = writeln!(
                w,
                "> **WARNING: INCOMPLETE RUN. These peers did not run, so the comparisons with \
                 them are missing:**\n>"
            );
        }
        for (n, why) in &missing {
            let pre = if plan.quick { "" } else { "> " };
            let _ = writeln!(w, "{pre}- `{n}`: {why}");
        }
        let _ = writeln!(w);
    }
    let failed: Vec<&RunResult> = results.iter().filter(|r| !r.ok()).collect();
    if !failed.is_empty() {
        let _ = writeln!(w, "> **FAILED RUNS ({}):**\n>", failed.len());
        for r in failed {
            let _ = writeln!(
                w,
                "> - `{}` b{}: {}",
                r.condition,
                r.batch,
                r.error.as_deref().unwrap_or("count check failed")
            );
        }
        let _ = writeln!(w);
    }

    if results.is_empty() {
        // A bulk-load-only run (`--init-only`): its section follows.
        return s;
    }
    let _ = writeln!(w, "## Pure write\n");
    let _ = writeln!(
        w,
        "| condition | durability | batch | writes | seconds | throughput (w/s) | min-max (passes) \
         | mean call ms | mean commit ms | commit p50 / p99 ms | ET | user s | sys s | peak RSS MB \
         | disk bytes / write | count ok |"
    );
    let _ = writeln!(
        w,
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"
    );
    for r in results.iter().filter(|r| r.measured()) {
        let per_write = match (r.device_bytes, r.writes) {
            (Some(b), n) if n > 0 => format!("{:.0}", b as f64 / n as f64),
            _ => "-".into(),
        };
        let _ = writeln!(
            w,
            "| {} | {} | {} | {}{} | {:.2} | {} | {} | {} | {} | {} / {} | {} | {:.2} | {:.2} | {:.1} \
             | {} | {} |",
            r.condition,
            r.durability,
            r.batch,
            r.writes,
            if r.capped { " (capped)" } else { "" },
            r.seconds,
            num(r.throughput_wps),
            spread_text(r.throughput_spread.as_ref()),
            ms(r.call_latency_ms),
            ms(r.commit_latency_ms),
            ms(r.commit_p50_ms),
            ms(r.commit_p99_ms),
            r.et.map_or("-".into(), num),
            r.user_s,
            r.sys_s,
            r.peak_rss_mb,
            per_write,
            yes(r.count_ok)
        );
    }

    let mixed: Vec<&RunResult> = results.iter().filter(|r| r.mixed.is_some()).collect();
    if !mixed.is_empty() {
        let _ = writeln!(
            w,
            "\n## Mixed read/write (on the batch-1 store; one read then one write per \
             iteration, each its own call; `query` first, then `raw` on the store it left)\n"
        );
        let _ = writeln!(
            w,
            "| condition | durability | read | iterations | wall s | iterations/s | min-max \
             (passes) | warm-up | user s | sys s | reads found | mean read ms | keys after | \
             count ok |"
        );
        let _ = writeln!(
            w,
            "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"
        );
        for r in &mixed {
            for raw in [false, true] {
                let Some(m) = (if raw { &r.mixed_raw } else { &r.mixed }) else {
                    continue;
                };
                let spread = if raw {
                    &r.mixed_raw_spread
                } else {
                    &r.mixed_spread
                };
                let _ = writeln!(
                    w,
                    "| {} | {} | {} | {}{} | {:.2} | {} | {} | {} | {:.2} | {:.2} | {} | {} | {} \
                     | {} |",
                    r.condition,
                    r.durability,
                    if raw { "raw" } else { "query" },
                    m.iterations,
                    if m.capped { " (capped)" } else { "" },
                    m.seconds,
                    num(spread.as_ref().map_or(m.rate(), |s| s.median)),
                    spread_text(spread.as_ref()),
                    m.warmup_iterations,
                    m.user_s,
                    m.sys_s,
                    m.reads_found,
                    ms(m.mean_read_ms),
                    m.expected_count,
                    yes(m.count_ok)
                );
            }
        }
    }

    if plan.family == Family::Datalog && !mixed.is_empty() {
        // Wall time compares runs of equal length; a capped run stopped early, so the rate
        // (iterations per second) is what compares.
        let _ = writeln!(
            w,
            "\n## Mixed phase ratios (iterations per second, median over passes, this run)\n"
        );
        let _ = writeln!(
            w,
            "| ratio | read | numerator it/s | denominator it/s | ratio | target | met |"
        );
        let _ = writeln!(w, "|---|---|--:|--:|--:|---|---|");
        let rate = |name: &str, raw: bool| {
            mixed
                .iter()
                .find(|r| r.condition == name)
                .and_then(|r| mixed_median(r, raw))
        };
        for (a, b, raw) in [
            ("dl-async", "sqlite-wal", false),
            ("dl-async", "datalevin-async", false),
            ("dl-sync", "datalevin-default", false),
            ("dl-async", "datalevin-async", true),
            ("dl-sync", "datalevin-default", true),
        ] {
            let (value, met, x, y) = match (rate(a, raw), rate(b, raw)) {
                (Some(x), Some(y)) if y > 0.0 => {
                    let q = x / y;
                    (format!("{q:.2}x"), verdict(q, "> 1x"), num(x), num(y))
                }
                _ => ("n/a (not run)".into(), "", "n/a".into(), "n/a".into()),
            };
            let level = if raw { "raw" } else { "query" };
            let _ = writeln!(
                w,
                "| {a} / {b} | {level} | {x} | {y} | {value} | > 1x | {met} |"
            );
        }
    }

    let _ = writeln!(w, "\n## Ratios (throughput, this run)\n");
    let _ = writeln!(
        w,
        "| ratio | batch | numerator w/s | denominator w/s | ratio | target | met |"
    );
    let _ = writeln!(w, "|---|--:|--:|--:|--:|---|---|");
    let mut ratio = |a: &str, b: &str, batch: usize, target: &str| {
        let (x, y) = (find(results, a, batch), find(results, b, batch));
        let cell = |r: Option<&RunResult>| r.map_or("n/a".into(), |r| num(r.throughput_wps));
        let (value, met) = match (x, y) {
            (Some(x), Some(y)) if y.throughput_wps > 0.0 => {
                let q = x.throughput_wps / y.throughput_wps;
                (format!("{q:.2}x"), verdict(q, target))
            }
            _ => ("n/a (not run)".into(), ""),
        };
        let _ = writeln!(
            w,
            "| {a} / {b} | {batch} | {} | {} | {value} | {target} | {met} |",
            cell(x),
            cell(y)
        );
    };
    for (a, b, batches, target) in ratios(plan) {
        for batch in batches {
            ratio(a, b, batch, target(batch));
        }
    }

    let skipped: Vec<&RunResult> = results.iter().filter(|r| r.skipped.is_some()).collect();
    if !skipped.is_empty() {
        let _ = writeln!(w, "\n## Skipped\n");
        for r in skipped {
            let _ = writeln!(
                w,
                "- `{}` b{}: {}",
                r.condition,
                r.batch,
                r.skipped.as_deref().unwrap_or("")
            );
        }
    }
    let counters: Vec<&RunResult> = results.iter().filter(|r| r.counters.is_some()).collect();
    if !counters.is_empty() {
        let _ = writeln!(w, "\n## Datalith commit batching (after the run)\n");
        let _ = writeln!(w, "| condition | batch | counters |");
        let _ = writeln!(w, "|---|--:|---|");
        for r in counters {
            let _ = writeln!(
                w,
                "| {} | {} | `{}` |",
                r.condition,
                r.batch,
                r.counters
                    .as_ref()
                    .map(|c| c.to_string())
                    .unwrap_or_default()
            );
        }
    }
    if !pngs.is_empty() {
        let _ = writeln!(w, "\n## Plots\n");
        for p in pngs {
            // Every plot is also written as SVG beside its PNG; the summary shows the SVG.
            let name = file_name(&p.with_extension("svg"));
            let _ = writeln!(w, "![{name}]({name})");
        }
    }
    s
}

type Target = fn(usize) -> &'static str;

/// Whether ratio `q` meets a target written `>= Nx` or `> Nx` (other targets get no verdict).
fn verdict(q: f64, target: &str) -> &'static str {
    let parse = |t: &str| t.trim().trim_end_matches('x').trim().parse::<f64>().ok();
    let ok = if let Some(n) = target.strip_prefix(">=").and_then(parse) {
        q >= n
    } else if let Some(n) = target.strip_prefix('>').and_then(parse) {
        q > n
    } else {
        return "";
    };
    if ok {
        "yes"
    } else {
        "**NO**"
    }
}

/// The median iterations per second of a mixed phase over the passes (`raw`: the raw-read
/// phase), or its one pass's rate.
fn mixed_median(r: &RunResult, raw: bool) -> Option<f64> {
    let (m, spread) = if raw {
        (&r.mixed_raw, &r.mixed_raw_spread)
    } else {
        (&r.mixed, &r.mixed_spread)
    };
    spread
        .as_ref()
        .map(|s| s.median)
        .or(m.as_ref().map(|m| m.rate()))
}

/// `min-max (n)` of a spread over passes, `-` without one.
fn spread_text(s: Option<&crate::common::passes::Spread>) -> String {
    s.map_or("-".into(), |s| {
        format!("{} ({})", s.range_text(num), s.passes.len())
    })
}

/// The comparisons the issue asks for: (numerator, denominator, batches, target).
fn ratios(plan: &Plan) -> Vec<(&'static str, &'static str, Vec<usize>, Target)> {
    let all = plan.batches.clone();
    let b1: Vec<usize> = all.iter().copied().filter(|b| *b == 1).collect();
    let beat_wal: Target = |b| if b == 1 { ">= 5x" } else { "> 1x" };
    let ahead: Target = |_| "> 1x";
    let at_wal: Target = |b| if b == 1000 { ">= 0.8x" } else { ">= 1x" };
    let close: Target = |_| "close to 1 (group commit hides the fsync)";
    match plan.family {
        Family::Kv => vec![
            ("kv-async-durable", "lmdb-raw-nosync", b1, close),
            ("kv-async-durable", "sqlite-wal", all.clone(), beat_wal),
            ("kv-sync-durable", "datalevin-kv", all.clone(), ahead),
            ("kv-async-durable", "datalevin-kv-async", all.clone(), ahead),
            ("kv-async-durable", "kv-async-nosync", all, close),
        ],
        // The write-cost issue's goals: a durable Datalog commit the caller waits for at or
        // above SQLite WAL's at batch 1 to 100, 0.8x at 1000.
        Family::Datalog => vec![
            ("dl-async", "sqlite-wal", all.clone(), beat_wal),
            ("dl-sync", "sqlite-wal", all.clone(), at_wal),
            ("dl-all-sync", "sqlite-wal", all.clone(), at_wal),
            ("dl-all-async", "sqlite-wal", all.clone(), beat_wal),
            ("dl-sync", "datalevin-default", all.clone(), ahead),
            ("dl-async", "datalevin-async", all, ahead),
        ],
        // Over the server within 1.5x of embedded `transact` at batch 100 (the goal),
        // and ahead of Datalevin's server at every batch.
        Family::Remote => vec![
            ("dl-remote", "dl-sync", all.clone(), |b| {
                if b == 100 {
                    ">= 0.667x"
                } else {
                    "(goal at batch 100: >= 0.667x)"
                }
            }),
            // The floor: what a server with nothing but a socket and the embedded call reaches.
            ("dl-bare", "dl-sync", all.clone(), |_| {
                "(the floor under dl-remote)"
            }),
            ("dl-remote", "dl-bare", all.clone(), |_| {
                "(what HTTP, CBOR and the report cost)"
            }),
            ("dl-remote", "datalevin-remote", all.clone(), ahead),
            ("dl-sync", "datalevin-default", all, ahead),
        ],
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let rocks = if cfg!(feature = "rocksdb") {
        "with"
    } else {
        "without"
    };
    format!("{cpu}, {cores} cores, Linux {kernel}; datalith-bench {rocks} the rocksdb feature")
}

/// Current UTC time as `YYYY-MM-DD HH:MM:SS UTC` (no date crate needed).
fn utc_now() -> String {
    format!("{} UTC", crate::common::clock::utc_now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_verdicts() {
        let cases = [
            (5.0, ">= 5x", "yes"),
            (4.99, ">= 5x", "**NO**"),
            (1.01, "> 1x", "yes"),
            (1.0, "> 1x", "**NO**"),
            (0.9, "close to 1", ""),
        ];
        for (q, target, expected) in cases {
            assert_eq!(verdict(q, target), expected, "{q} {target}");
        }
    }

    #[test]
    fn numbers_group_thousands() {
        let cases = [
            (0.0, "0.0"),
            (93.54, "93.5"),
            (16_829.2, "16,829.2"),
            (1_234_567.0, "1,234,567.0"),
            (-1234.0, "-1,234.0"),
        ];
        for (x, s) in cases {
            assert_eq!(num(x), s);
        }
    }
}
