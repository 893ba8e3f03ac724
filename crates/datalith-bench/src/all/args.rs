//! Flags of `datalith-bench all` and the workload command lines they resolve to.

use clap::Args;
use std::path::PathBuf;

/// `datalith-bench all`: every workload, every peer, one results folder.
#[derive(Args, Debug, Clone)]
pub struct AllArgs {
    /// CI size: every workload in its quick mode (JVM and Node peers skipped, RocksDB only if
    /// built in), still checking every count; a few minutes in a release build.
    #[arg(long)]
    pub quick: bool,
    /// The results folder (default `bench-results/all-<UTC date>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Heap of every JVM and Node peer, e.g. 4g.
    #[arg(long, default_value = crate::common::jvm::DEFAULT_HEAP)]
    pub heap: String,
    /// Passes of every workload (default 3, or 1 with --quick).
    #[arg(long)]
    pub passes: Option<usize>,
    /// Let the run finish although a peer could not run (reported loudly in RESULTS.md).
    #[arg(long)]
    pub allow_missing_peers: bool,
    /// Directory of the peer harnesses (default: bench/peers of this repository).
    #[arg(long)]
    pub peers_dir: Option<PathBuf>,
    /// Cap on the seconds of each W phase of each condition (passed to `write --max-secs`; a
    /// capped run is marked in the summaries). Default: none, every condition writes it all.
    #[arg(long)]
    pub max_secs: Option<f64>,
    /// W conditions to run (passed to `write --conditions`: names or prefixes), for a W run
    /// that keeps every peer but leaves out some of Datalith's own durability variants to fit
    /// its time. Default: every condition.
    #[arg(long, value_delimiter = ',')]
    pub conditions: Vec<String>,
    /// Workloads to run (default all; `history` and `search` only in a full run unless named
    /// here): write-kv, write-dl, query, blob, history, search.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
}

/// The workloads, in run order: name, sub-folder written under the results folder.
pub const WORKLOADS: [(&str, &str); 6] = [
    ("write-kv", "write-kv"),
    ("write-dl", "write-dl"),
    ("query", "query"),
    ("blob", "blob"),
    ("history", "history"),
    ("search", "search"),
];

/// Whether `all` runs workload `name`: those `--only` names, else every one, except that a
/// `--quick` run (CI's) leaves `history` and `search` out (their peers are JVMs; `search`
/// needs its corpus installed and the cargo feature `search-peers`) unless `--only` names
/// them.
pub fn runs(name: &str, a: &AllArgs) -> bool {
    if !a.only.is_empty() {
        return a.only.iter().any(|w| w == name);
    }
    !(a.quick && matches!(name, "history" | "search"))
}

/// The `datalith-bench` arguments of workload `name` (one of [`WORKLOADS`]).
pub fn command_line(name: &str, a: &AllArgs, out: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = match name {
        "write-kv" => vec!["write".into(), "--kv".into()],
        "write-dl" => vec!["write".into()],
        "query" => vec!["query".into()],
        "history" => vec!["history".into()],
        "search" => vec!["search".into()],
        _ => vec!["blob".into()],
    };
    v.push("--out".into());
    v.push(out.display().to_string());
    if a.quick {
        v.push("--quick".into());
        // Smaller than each workload's own --quick, so that the four fit CI's 3 minutes; every
        // count is still checked.
        v.extend(
            match name {
                "write-kv" | "write-dl" => vec!["--max-secs", "1.5", "--writes", "1000"],
                "query" => vec!["--secs", "0.1", "--cap-secs", "1", "--people", "1000"],
                "history" => vec!["--secs", "0.1"],
                "search" => vec!["--per-kind", "5"],
                _ => vec!["--secs", "1", "--rates", "10,1000"],
            }
            .into_iter()
            .map(String::from),
        );
    }
    if let Some(p) = a.passes {
        v.push("--passes".into());
        v.push(p.to_string());
    }
    if let (Some(cap), "write-kv" | "write-dl") = (a.max_secs, name) {
        v.push("--max-secs".into());
        v.push(cap.to_string());
    }
    if let ([_, ..], "write-kv" | "write-dl") = (a.conditions.as_slice(), name) {
        v.push("--conditions".into());
        v.push(a.conditions.join(","));
    }
    if name != "blob" {
        v.push("--heap".into());
        v.push(a.heap.clone());
        if a.allow_missing_peers {
            v.push("--allow-missing-peers".into());
        }
        if let Some(d) = &a.peers_dir {
            v.push("--peers-dir".into());
            v.push(d.display().to_string());
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(quick: bool) -> AllArgs {
        AllArgs {
            quick,
            out: None,
            heap: "4g".into(),
            passes: None,
            allow_missing_peers: false,
            peers_dir: None,
            max_secs: None,
            conditions: vec![],
            only: vec![],
        }
    }

    #[test]
    fn command_lines() {
        let out = std::path::Path::new("R");
        let cases: [(&str, bool, &str); 9] = [
            ("write-kv", false, "write --kv --out R --heap 4g"),
            ("write-dl", false, "write --out R --heap 4g"),
            ("query", false, "query --out R --heap 4g"),
            ("blob", false, "blob --out R"),
            ("history", false, "history --out R --heap 4g"),
            ("search", false, "search --out R --heap 4g"),
            (
                "search",
                true,
                "search --out R --quick --per-kind 5 --heap 4g",
            ),
            (
                "history",
                true,
                "history --out R --quick --secs 0.1 --heap 4g",
            ),
            (
                "blob",
                true,
                "blob --out R --quick --secs 1 --rates 10,1000",
            ),
        ];
        for (name, quick, want) in cases {
            assert_eq!(
                command_line(name, &args(quick), out).join(" "),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn w_flags_reach_only_the_w_workloads() {
        let mut a = args(false);
        a.max_secs = Some(30.0);
        a.conditions = vec!["kv-sync-durable".into(), "sqlite".into()];
        let out = std::path::Path::new("R");
        assert_eq!(
            command_line("write-kv", &a, out).join(" "),
            "write --kv --out R --max-secs 30 --conditions kv-sync-durable,sqlite --heap 4g"
        );
        assert_eq!(
            command_line("query", &a, out).join(" "),
            "query --out R --heap 4g"
        );
    }

    #[test]
    fn history_stays_out_of_quick_runs_unless_named() {
        let mut a = args(true);
        assert!(!runs("history", &a));
        assert!(runs("query", &a));
        a.only = vec!["history".into()];
        assert!(runs("history", &a));
        assert!(!runs("query", &a));
        assert!(runs("history", &args(false)));
        assert!(!runs("search", &args(true)));
        assert!(runs("search", &args(false)));
    }
}
