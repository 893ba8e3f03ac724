//! Parent side of workload W: one child process per condition and batch size (so each has its
//! own CPU time and peak RSS), progress, then the summary, plots and exit status.

use std::path::Path;
use std::process::{Command, ExitCode};

use indicatif::ProgressBar;

use super::args::{ChildArgs, Plan, WriteArgs};
use super::condition::{self, ConditionSpec, Runner, Store};
use super::result::RunResult;
use super::runner::{self, Params};
use super::{init, merge, peers, plots, summary};
use crate::common::child::{self, emit_result};
use crate::common::device::Device;
use crate::common::loopback::{self, Floor};
use crate::common::{passes, progress, BenchError};

/// `datalith-bench write`.
pub fn run(args: WriteArgs) -> Result<ExitCode, BenchError> {
    let plan = Plan::from_args(&args)?;
    let logs = plan.out.join("logs");
    for dir in [&plan.out, &logs, &plan.db_dir] {
        std::fs::create_dir_all(dir).map_err(BenchError::io(dir))?;
    }
    let peers_dir = crate::common::child::peers_dir(args.run.peers_dir.as_deref());
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
        .sum::<u64>()
        * plan.passes as u64;
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
    let mut init_passes = Vec::new();
    for pass in 0..if plan.init.is_empty() { 0 } else { plan.passes } {
        let mut inits = Vec::new();
        for c in passes::rotated(&plan.init, pass) {
            bar.set_message(format!("{} (bulk load, pass {})", c.name(), pass + 1));
            let r = init::run_condition(c, &phase);
            progress::println(&bar, &init::one_line(&r));
            inits.push(r);
        }
        // Table order, whatever the pass's order.
        inits.sort_by_key(|r| plan.init.iter().position(|c| c.name() == r.condition));
        init_passes.push(inits);
    }
    let inits = init::merge_passes(&init_passes);
    // Datalevin's prepared server (`--remote`): its start script, or why there is none.
    let datalevin_server = crate::common::dtlv_server::locate();
    let mut base = 0;
    let mut by_pass: Vec<Vec<RunResult>> = Vec::new();
    // The loopback round trip, once a pass, before the pass's conditions run.
    let mut floors: Vec<Floor> = Vec::new();
    for pass in 0..plan.passes {
        let order = passes::rotated(&plan.conditions, pass);
        if order.iter().any(|c| c.store == Store::DatalithRemote) {
            floors.push(loopback::measure()?);
        }
        progress::println(
            &bar,
            &format!(
                "pass {}/{}: {}",
                pass + 1,
                plan.passes,
                order
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        let mut results = Vec::new();
        for &batch in &plan.batches {
            for spec in &order {
                bar.set_message(format!("{} b{batch} pass {}", spec.name, pass + 1));
                let run = RunId {
                    batch,
                    pass,
                    passes: plan.passes,
                };
                let r = match spec.runner() {
                    Runner::InProcess => run_in_child(spec, run, &plan, &logs, &args, &bar, base),
                    Runner::PeerHarness => match jvm_skip(&args) {
                        Some(why) => RunResult::skipped(spec, batch, plan.writes, why),
                        None if spec.store == Store::DatalevinRemote => {
                            peers::run_datalevin_remote(spec, run, &peer_run, &datalevin_server)
                        }
                        None => peers::run_datalevin(spec, run, &peer_run),
                    },
                    Runner::Unavailable(why) => RunResult::skipped(spec, batch, plan.writes, &why),
                };
                base += planned(batch);
                bar.set_position(base);
                progress::println(&bar, &summary::one_line(&r));
                results.push(r);
            }
        }
        by_pass.push(results);
    }
    let results = merge::passes(&plan, &by_pass);
    bar.finish_and_clear();
    let pngs = match plots::write(&plan, &results) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("warning: plots not written: {e}");
            Vec::new()
        }
    };
    let floor = loopback::median(floors);
    let md = summary::write(&plan, &results, &inits, &pngs, floor)?;
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
    if !missing.is_empty() && !plan.quick && !args.run.allow_missing_peers {
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
    } else if args.run.quick && !args.jvm_peers {
        Some("--quick skips the JVM peers (a JVM start costs ~10 s); add --jvm-peers to run them")
    } else {
        None
    }
}

/// Which run of a condition: its batch size and pass.
#[derive(Debug, Clone, Copy)]
pub struct RunId {
    pub batch: usize,
    pub pass: usize,
    pub passes: usize,
}

impl RunId {
    /// The file-name tag of the run: `<condition>-b<batch>`, `-p<pass>` when there are passes.
    pub fn tag(&self, condition: &str) -> String {
        if self.passes > 1 {
            format!("{condition}-b{}-p{}", self.batch, self.pass + 1)
        } else {
            format!("{condition}-b{}", self.batch)
        }
    }
}

fn run_in_child(
    spec: &ConditionSpec,
    run: RunId,
    plan: &Plan,
    logs: &Path,
    args: &WriteArgs,
    bar: &ProgressBar,
    base: u64,
) -> RunResult {
    let batch = run.batch;
    let tag = run.tag(&spec.name);
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
        .args(["--warmup", &plan.warmup.to_string()])
        .args(["--warmup-secs", &plan.warmup_secs.to_string()])
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
    if a.warmup > 0 {
        warm_up(&spec, &a)?;
    }
    let mut store = condition::open(&spec, &a.dir)?;
    let device = Device::of(&a.dir);
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
            warmup: a.warmup,
            warmup_secs: a.warmup_secs,
            csv: &a.csv,
            device: device.as_ref(),
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

/// The untimed warm-up of a child: `a.warmup` writes (at most `a.warmup_secs`) of the same
/// condition and batch size into a throwaway store beside the real one, in this process, so
/// that every condition starts its timed run warmed as a JVM peer's does.
fn warm_up(spec: &ConditionSpec, a: &ChildArgs) -> Result<(), BenchError> {
    let mut dir = a.dir.clone().into_os_string();
    dir.push("-warmup");
    let dir = std::path::PathBuf::from(dir);
    let _ = std::fs::remove_dir_all(&dir);
    let csv = dir.join("warmup.csv");
    {
        let mut store = condition::open(spec, &dir)?;
        runner::run(
            spec,
            store.as_mut(),
            &Params {
                batch: a.batch.max(1),
                writes: a.warmup,
                window: a.warmup.max(1),
                max_secs: Some(a.warmup_secs.max(0.01)),
                seed: a.seed ^ 0x7761_726d,
                mixed: 0,
                warmup: 0,
                warmup_secs: 0.0,
                csv: &csv,
                device: None,
            },
        )?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
