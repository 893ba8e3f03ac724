//! Parent side of workload W: one child process per condition and batch size (so each has its
//! own CPU time and peak RSS), progress, then the summary, plots and exit status.

use std::path::Path;
use std::process::{Command, ExitCode};

use indicatif::ProgressBar;

use super::args::{ChildArgs, Plan, WriteArgs};
use super::condition::{self, ConditionSpec, Runner};
use super::result::RunResult;
use super::runner::{self, Params};
use super::{init, peers, plots, summary};
use crate::common::child::{self, emit_result};
use crate::common::{progress, BenchError};

/// `datalith-bench write`.
pub fn run(args: WriteArgs) -> Result<ExitCode, BenchError> {
    let plan = Plan::from_args(&args)?;
    let logs = plan.out.join("logs");
    for dir in [&plan.out, &logs, &plan.db_dir] {
        std::fs::create_dir_all(dir).map_err(BenchError::io(dir))?;
    }
    let peers_dir = peers::peers_dir(args.peers_dir.as_deref());
    eprintln!(
        "datalith-bench write{}: {} writes per condition, batches {:?}, {} conditions, CSV row \
         every {} writes, cap {}, mixed {} iterations (batch 1), seed {}, out {}",
        if args.kv { " --kv" } else { "" },
        plan.writes,
        plan.batches,
        plan.conditions.len(),
        plan.window,
        plan.max_secs
            .map_or("none".to_string(), |s| format!("{s} s per phase")),
        plan.mixed,
        plan.seed,
        plan.out.display()
    );
    let planned = |batch: usize| plan.writes + if batch == 1 { plan.mixed } else { 0 };
    let total: u64 = plan
        .batches
        .iter()
        .map(|&b| planned(b) * plan.conditions.len() as u64)
        .sum();
    let bar = progress::bar(total);
    let peer_run = peers::PeerRun {
        plan: &plan,
        peers: &peers_dir,
        logs: &logs,
        keep_db: args.keep_db,
    };
    let phase = init::PhaseRun {
        plan: &plan,
        peers: &peers_dir,
        logs: &logs,
        keep_db: args.keep_db,
        jvm_skip: jvm_skip(&args),
    };
    let mut inits = Vec::new();
    for &c in &plan.init {
        bar.set_message(format!("{} (bulk load)", c.name()));
        let r = init::run_condition(c, &phase);
        progress::println(&bar, &init::one_line(&r));
        inits.push(r);
    }
    let mut base = 0;
    let mut results = Vec::new();
    for &batch in &plan.batches {
        for spec in &plan.conditions {
            bar.set_message(format!("{} b{batch}", spec.name));
            let r = match spec.runner() {
                Runner::InProcess => run_in_child(spec, batch, &plan, &logs, &args, &bar, base),
                Runner::PeerHarness => match jvm_skip(&args) {
                    Some(why) => RunResult::skipped(spec, batch, plan.writes, why),
                    None => peers::run_datalevin(spec, batch, &peer_run),
                },
                Runner::Unavailable(why) => RunResult::skipped(spec, batch, plan.writes, &why),
            };
            base += planned(batch);
            bar.set_position(base);
            progress::println(&bar, &summary::one_line(&r));
            results.push(r);
        }
    }
    bar.finish_and_clear();
    let pngs = match plots::write(&plan, &results) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("warning: plots not written: {e}");
            Vec::new()
        }
    };
    let md = summary::write(&plan, &results, &inits, &pngs)?;
    eprintln!("summary: {}", md.display());
    let mut failed: Vec<String> = inits
        .iter()
        .filter(|r| !r.ok())
        .map(|r| {
            format!(
                "{} (bulk load): {}",
                r.condition,
                r.error.as_deref().unwrap_or("count check failed")
            )
        })
        .collect();
    failed.extend(results.iter().filter(|r| !r.ok()).map(|r| {
        format!(
            "{} b{}: {}",
            r.condition,
            r.batch,
            r.error.as_deref().unwrap_or("?")
        )
    }));
    let mut missing = summary::missing_peers(&results);
    missing.extend(
        inits
            .iter()
            .filter(|r| r.is_peer())
            .filter_map(|r| Some((r.condition.clone(), r.skipped.clone()?))),
    );
    if !missing.is_empty() {
        let level = if plan.quick { "note" } else { "WARNING" };
        eprintln!(
            "{level}: peers that did not run: {}",
            missing
                .iter()
                .map(|(n, why)| format!("{n} ({why})"))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if !failed.is_empty() {
        eprintln!("!!! {} RUN(S) FAILED:", failed.len());
        for f in &failed {
            eprintln!("!!!   {f}");
        }
        return Ok(ExitCode::from(1));
    }
    if !missing.is_empty() && !plan.quick && !args.allow_missing_peers {
        eprintln!(
            "!!! INCOMPLETE FULL RUN: a full run needs every peer (or --allow-missing-peers)"
        );
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// Why the JVM peers do not run, if they do not.
fn jvm_skip(args: &WriteArgs) -> Option<&'static str> {
    if args.skip_jvm_peers {
        Some("--skip-jvm-peers")
    } else if args.quick && !args.jvm_peers {
        Some("--quick skips the JVM peers (a JVM start costs ~10 s); add --jvm-peers to run them")
    } else {
        None
    }
}

fn run_in_child(
    spec: &ConditionSpec,
    batch: usize,
    plan: &Plan,
    logs: &Path,
    args: &WriteArgs,
    bar: &ProgressBar,
    base: u64,
) -> RunResult {
    let tag = format!("{}-b{batch}", spec.name);
    let dir = plan.db_dir.join(&tag);
    // Each run starts from an empty directory.
    let _ = std::fs::remove_dir_all(&dir);
    let csv = plan.out.join(format!("{tag}.csv"));
    let log = logs.join(format!("{tag}.stderr"));
    let mixed = if batch == 1 { plan.mixed } else { 0 };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return RunResult::failed(spec, batch, plan.writes, &e.to_string()),
    };
    let mut cmd = Command::new(exe);
    cmd.arg("__write-child")
        .args(["--condition", &spec.name])
        .args(["--batch", &batch.to_string()])
        .args(["--writes", &plan.writes.to_string()])
        .args(["--window", &plan.window.to_string()])
        .args(["--seed", &plan.seed.to_string()])
        .args(["--mixed", &mixed.to_string()])
        .arg("--dir")
        .arg(&dir)
        .arg("--csv")
        .arg(&csv);
    if let Some(s) = plan.max_secs {
        cmd.args(["--max-secs", &s.to_string()]);
    }
    let outcome = child::run(cmd, &tag, &log, |n| bar.set_position(base + n));
    if !args.keep_db {
        let _ = std::fs::remove_dir_all(&dir);
    }
    match outcome {
        Err(e) => RunResult::failed(spec, batch, plan.writes, &e.to_string()),
        Ok(out) => match out.results.into_iter().next() {
            Some(v) => match serde_json::from_value::<RunResult>(v) {
                Ok(mut r) => {
                    if !out.status.success() && r.error.is_none() {
                        r.error = Some(format!("child exited with {}", out.status));
                    }
                    r
                }
                Err(e) => RunResult::failed(spec, batch, plan.writes, &e.to_string()),
            },
            None => RunResult::failed(
                spec,
                batch,
                plan.writes,
                &format!(
                    "child exited with {} and no result; stderr: {}",
                    out.status,
                    child::tail(&log, 5)
                ),
            ),
        },
    }
}

/// The hidden child subcommand: one condition at one batch size, in this process.
pub fn run_child(a: ChildArgs) -> Result<ExitCode, BenchError> {
    if let Some(r) = init::run_child(&a) {
        return r;
    }
    let spec = condition::find(&a.condition)?;
    let mut store = condition::open(&spec, &a.dir)?;
    let result = runner::run(
        &spec,
        store.as_mut(),
        &Params {
            batch: a.batch.max(1),
            writes: a.writes,
            window: a.window.max(1),
            max_secs: a.max_secs,
            seed: a.seed,
            mixed: a.mixed,
            csv: &a.csv,
        },
    )?;
    // Close the store (Datalith joins its committer) before reporting.
    drop(store);
    emit_result(&result)?;
    if let Some(e) = &result.error {
        eprintln!("{} b{}: {e}", result.condition, result.batch);
    }
    Ok(if result.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
