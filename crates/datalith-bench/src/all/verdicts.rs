//! `RESULTS.md`: one table row per comparison, Datalith against the best peer of the row, read
//! from the `summary.jsonl` each workload wrote into the results folder.
//!
//! Invariants: a row compares like with like (durable against durable in W, the same task in
//! Q, the same rate in B); Datalith's own variants are never "the best peer"; a row whose
//! peer did not run says so instead of passing.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

/// Whether a larger figure is better (throughput) or a smaller one (latency, CPU, bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// One comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub workload: String,
    pub what: String,
    pub unit: String,
    pub better: Better,
    /// Datalith's condition and figure.
    pub ours: Option<(String, f64)>,
    /// The best peer and its figure.
    pub best_peer: Option<(String, f64)>,
}

impl Row {
    /// How many times better Datalith is than the best peer (above 1: ahead).
    pub fn advantage(&self) -> Option<f64> {
        let ((_, a), (_, b)) = (self.ours.as_ref()?, self.best_peer.as_ref()?);
        if *a <= 0.0 || *b <= 0.0 {
            return None;
        }
        Some(match self.better {
            Better::Higher => a / b,
            Better::Lower => b / a,
        })
    }

    /// `ahead`, `behind` or why there is no verdict.
    pub fn verdict(&self) -> String {
        match (self.advantage(), &self.ours, &self.best_peer) {
            (Some(x), _, _) if x > 1.0 => format!("**ahead** {x:.2}x"),
            (Some(x), _, _) => format!("**behind** {x:.2}x"),
            (None, None, _) => "n/a: Datalith not measured".into(),
            (None, _, None) => "n/a: no peer measured".into(),
            _ => "n/a".into(),
        }
    }
}

/// Reads a `summary.jsonl` (missing file: no lines).
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn f(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64).filter(|x| x.is_finite())
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// The best (by `better`) of `(name, figure)` candidates.
fn best(cands: impl Iterator<Item = (String, f64)>, better: Better) -> Option<(String, f64)> {
    cands.max_by(|a, b| match better {
        Better::Higher => a.1.total_cmp(&b.1),
        Better::Lower => b.1.total_cmp(&a.1),
    })
}

/// Whether a W condition is one of Datalith's.
fn datalith_w(name: &str) -> bool {
    name.starts_with("kv-") || name.starts_with("dl-")
}

/// Rows of one W family (`write-kv` or `write-dl`): pure write per batch (durable only), the
/// mixed phase per read level, and the bulk load.
pub fn w_rows(family: &str, lines: &[Value]) -> Vec<Row> {
    let ran = |v: &&Value| {
        v.get("skipped").is_none_or(Value::is_null) && v.get("error").is_none_or(Value::is_null)
    };
    let pure: Vec<&Value> = lines
        .iter()
        .filter(|v| s(v, "phase") != "init")
        .filter(ran)
        .filter(|v| s(v, "durability") == "durable")
        .collect();
    let mut batches: Vec<u64> = pure
        .iter()
        .filter_map(|v| v.get("batch").and_then(Value::as_u64))
        .collect();
    batches.sort_unstable();
    batches.dedup();
    let mut rows = Vec::new();
    let side = |ours: bool, batch: u64, metric: &dyn Fn(&Value) -> Option<f64>| {
        best(
            pure.iter()
                .filter(|v| v.get("batch").and_then(Value::as_u64) == Some(batch))
                .filter(|v| datalith_w(s(v, "condition")) == ours)
                .filter_map(|v| Some((s(v, "condition").to_string(), metric(v)?))),
            Better::Higher,
        )
    };
    for &b in &batches {
        let tp = |v: &Value| f(v, "throughput_wps");
        rows.push(Row {
            workload: family.into(),
            what: format!("pure write, batch {b}, durable"),
            unit: "writes/s".into(),
            better: Better::Higher,
            ours: side(true, b, &tp),
            best_peer: side(false, b, &tp),
        });
    }
    for (key, spread, level) in [
        ("mixed", "mixed_spread", "query"),
        ("mixed_raw", "mixed_raw_spread", "raw"),
    ] {
        let rate = |v: &Value| {
            let m = v.get(key).filter(|m| !m.is_null())?;
            spread_median(v, spread).or_else(|| {
                let secs = f(m, "seconds")?;
                (secs > 0.0).then(|| f(m, "iterations").unwrap_or(0.0) / secs)
            })
        };
        let ours = side(true, 1, &rate);
        let peer = side(false, 1, &rate);
        if ours.is_some() || peer.is_some() {
            rows.push(Row {
                workload: family.into(),
                what: format!("mixed read/write, {level} reads, durable"),
                unit: "iterations/s".into(),
                better: Better::Higher,
                ours,
                best_peer: peer,
            });
        }
    }
    let inits: Vec<&Value> = lines
        .iter()
        .filter(|v| s(v, "phase") == "init")
        .filter(ran)
        .collect();
    if !inits.is_empty() {
        let side = |ours: bool| {
            best(
                inits
                    .iter()
                    .filter(|v| s(v, "condition").starts_with("dl-") == ours)
                    .filter_map(|v| Some((s(v, "condition").to_string(), f(v, "seconds")?))),
                Better::Lower,
            )
        };
        rows.push(Row {
            workload: family.into(),
            what: "bulk load".into(),
            unit: "s".into(),
            better: Better::Lower,
            ours: side(true),
            best_peer: side(false),
        });
    }
    rows
}

fn spread_median(v: &Value, key: &str) -> Option<f64> {
    v.get(key)
        .filter(|x| !x.is_null())
        .and_then(|x| f(x, "median"))
}

/// Rows of Q: per task, `datalith` (reads) or `datalith-nosync` (writes) against the fastest
/// other peer.
/// The rows of a `--remote` run: Datalith's server against Datalevin's, as the server issue
/// asks (every Q task by its median ms; W by throughput at each batch). Without Datalevin's
/// server (it cannot run here) a row has no verdict.
pub fn remote_rows(workload: &str, lines: &[Value]) -> Vec<Row> {
    let ok = |v: &&Value| {
        s(v, "status") == "ok"
            || (v.get("throughput_wps").is_some()
                && v.get("skipped").is_none_or(Value::is_null)
                && v.get("error").is_none_or(Value::is_null))
    };
    let (key, ours, theirs, metric, unit, better) = match workload {
        "write-remote" => (
            "batch",
            "dl-remote",
            "datalevin-remote",
            "throughput_wps",
            "writes/s",
            Better::Higher,
        ),
        _ => (
            "task",
            "datalith-remote",
            "datalevin-remote",
            "median_ms",
            "ms",
            Better::Lower,
        ),
    };
    let name = |v: &Value| -> String {
        match key {
            "batch" => v.get("batch").map_or(String::new(), ToString::to_string),
            _ => s(v, "task").to_string(),
        }
    };
    let peer = |v: &Value| -> String {
        match key {
            "batch" => s(v, "condition").to_string(),
            _ => s(v, "peer").to_string(),
        }
    };
    let mut rows_of: Vec<String> = Vec::new();
    for v in lines.iter().filter(|v| peer(v) == ours) {
        let n = name(v);
        if !rows_of.contains(&n) {
            rows_of.push(n);
        }
    }
    rows_of
        .into_iter()
        .map(|n| {
            let figure = |who: &str| {
                lines
                    .iter()
                    .filter(ok)
                    .find(|v| peer(v) == who && name(v) == n)
                    .and_then(|v| Some((who.to_string(), f(v, metric)?)))
            };
            Row {
                workload: workload.into(),
                what: match key {
                    "batch" => format!("over the server, batch {n}, durable"),
                    _ => format!("{n} over the server"),
                },
                unit: unit.into(),
                better,
                ours: figure(ours),
                best_peer: figure(theirs),
            }
        })
        .collect()
}

pub fn q_rows(lines: &[Value]) -> Vec<Row> {
    let mut tasks: Vec<String> = Vec::new();
    for v in lines {
        let t = s(v, "task").to_string();
        if !tasks.contains(&t) {
            tasks.push(t);
        }
    }
    let writes = ["init", "add-1", "add-5", "add-all", "retract-5"];
    tasks
        .into_iter()
        .map(|t| {
            let ours_name = if writes.contains(&t.as_str()) {
                "datalith-nosync"
            } else {
                "datalith"
            };
            let ok = lines
                .iter()
                .filter(|v| s(v, "task") == t && s(v, "status") == "ok");
            let ours = ok
                .clone()
                .find(|v| s(v, "peer") == ours_name)
                .and_then(|v| Some((ours_name.to_string(), f(v, "median_ms")?)));
            let peer = best(
                ok.filter(|v| !s(v, "peer").starts_with("datalith"))
                    .filter_map(|v| Some((s(v, "peer").to_string(), f(v, "median_ms")?))),
                Better::Lower,
            );
            Row {
                workload: "query".into(),
                what: t,
                unit: "ms".into(),
                better: Better::Lower,
                ours,
                best_peer: peer,
            }
        })
        .collect()
}

/// Rows of H (history): per row, `datalith` against the fastest other peer (Datomic), as Q's
/// reads.
pub fn h_rows(lines: &[Value]) -> Vec<Row> {
    q_rows(lines)
        .into_iter()
        .map(|r| Row {
            workload: "history".into(),
            ..r
        })
        .collect()
}

/// Rows of S (search): per figure (indexing docs/s durable and not, index size, top-10 and
/// count p50 per query kind), `datalith` against the best other peer.
pub fn s_rows(lines: &[Value]) -> Vec<Row> {
    let ok: Vec<&Value> = lines
        .iter()
        .filter(|v| s(v, "status") == "ok" && !s(v, "peer").is_empty())
        .collect();
    let mut tasks: Vec<String> = Vec::new();
    for v in &ok {
        let t = s(v, "task").to_string();
        if t != "overlap" && !tasks.contains(&t) {
            tasks.push(t);
        }
    }
    tasks
        .into_iter()
        .map(|t| {
            let (key, unit, better, scale) = match t.as_str() {
                "index-durable" | "index-nosync" => ("docs_per_s", "docs/s", Better::Higher, 1.0),
                "index-bytes" => ("bytes", "MB", Better::Lower, 1e-6),
                _ => ("p50_ms", "ms (p50)", Better::Lower, 1.0),
            };
            let at = ok.iter().filter(|v| s(v, "task") == t);
            let fig = |v: &&&Value| Some((s(v, "peer").to_string(), f(v, key)? * scale));
            Row {
                workload: "search".into(),
                what: t.clone(),
                unit: unit.into(),
                better,
                ours: at
                    .clone()
                    .filter(|v| s(v, "peer") == "datalith")
                    .find_map(|v| fig(&v)),
                best_peer: best(
                    at.filter(|v| s(v, "peer") != "datalith")
                        .filter_map(|v| fig(&v)),
                    better,
                ),
            }
        })
        .collect()
}

/// Rows of B: per rate, CPU %, write calls/s and device MiB/s of `datalith` against the
/// lowest peer (its `datalith-*` alternatives are not peers).
pub fn b_rows(lines: &[Value]) -> Vec<Row> {
    let ok: Vec<&Value> = lines.iter().filter(|v| s(v, "status") == "ok").collect();
    let mut rates: Vec<f64> = ok.iter().filter_map(|v| f(v, "target_rate")).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    let mut rows = Vec::new();
    for rate in rates {
        for (key, what, unit) in [
            ("cpu_pct", "CPU", "%"),
            ("syscw_per_s", "write calls", "calls/s"),
            ("device_mib_s", "device bytes", "MiB/s"),
        ] {
            let at = ok.iter().filter(|v| f(v, "target_rate") == Some(rate));
            let ours = at
                .clone()
                .find(|v| s(v, "store") == "datalith")
                .and_then(|v| Some(("datalith".to_string(), f(v, key)?)));
            let peer = best(
                at.filter(|v| !s(v, "store").starts_with("datalith"))
                    .filter_map(|v| Some((s(v, "store").to_string(), f(v, key)?))),
                Better::Lower,
            );
            rows.push(Row {
                workload: "blob".into(),
                what: format!("{rate} blobs/s, {what}"),
                unit: unit.into(),
                better: Better::Lower,
                ours,
                best_peer: peer,
            });
        }
    }
    rows
}

/// The peers of the complex workload a verdict compares with; DuckDB, a columnar engine, is
/// reported beside them as the reference for what is possible, not as a peer to beat.
const COMPLEX_PEERS: [&str; 3] = ["postgres", "sqlite", "datalevin"];

/// Rows of the complex workload (TPC-H): per query, `datalith` against the fastest of
/// PostgreSQL, SQLite and Datalevin, then the geometric mean over the queries every one of
/// them answered.
pub fn c_rows(workload: &str, lines: &[Value]) -> Vec<Row> {
    let answered = |v: &&Value| {
        v.get("median_ms").is_some_and(|m| !m.is_null())
            && matches!(s(v, "answer"), "agrees" | "reference")
    };
    let mut queries: Vec<String> = Vec::new();
    for v in lines {
        let q = s(v, "query").to_string();
        if !q.is_empty() && !queries.contains(&q) {
            queries.push(q);
        }
    }
    let ms = |peer: &str, q: &str| {
        lines
            .iter()
            .filter(answered)
            .find(|v| s(v, "peer") == peer && s(v, "query") == q)
            .and_then(|v| f(v, "median_ms"))
    };
    let mut rows = Vec::new();
    let mut logs = [0.0f64; 1 + COMPLEX_PEERS.len()];
    let mut complete = 0usize;
    for q in &queries {
        let ours = ms("datalith", q).map(|m| ("datalith".to_string(), m));
        let peers: Vec<(String, f64)> = COMPLEX_PEERS
            .iter()
            .filter_map(|p| Some((p.to_string(), ms(p, q)?)))
            .collect();
        if let Some((_, o)) = ours.as_ref().filter(|_| peers.len() == COMPLEX_PEERS.len()) {
            complete += 1;
            logs[0] += o.ln();
            for (i, (_, m)) in peers.iter().enumerate() {
                logs[i + 1] += m.ln();
            }
        }
        rows.push(Row {
            workload: workload.into(),
            what: q.clone(),
            unit: "ms".into(),
            better: Better::Lower,
            ours,
            best_peer: best(peers.into_iter(), Better::Lower),
        });
    }
    if complete > 0 {
        let mean = |l: f64| (l / complete as f64).exp();
        rows.push(Row {
            workload: workload.into(),
            what: format!("geometric mean ({complete} queries every one answered)"),
            unit: "ms".into(),
            better: Better::Lower,
            ours: Some(("datalith".into(), mean(logs[0]))),
            best_peer: best(
                COMPLEX_PEERS
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (p.to_string(), mean(logs[i + 1]))),
                Better::Lower,
            ),
        });
    }
    rows
}

/// The table of `rows` as Markdown.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| workload | row | unit | Datalith | best peer | verdict |\n|---|---|---|--:|--:|---|\n",
    );
    let cell = |x: &Option<(String, f64)>| {
        x.as_ref()
            .map_or("-".into(), |(n, v)| format!("{} ({n})", figure(*v)))
    };
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            r.workload,
            r.what,
            r.unit,
            cell(&r.ours),
            cell(&r.best_peer),
            r.verdict()
        );
    }
    out
}

/// A figure with about three significant digits.
pub fn figure(v: f64) -> String {
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 0.1 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn remote_rows_put_the_server_against_datalevins_server_only() {
        let q = vec![
            json!({"peer":"datalith","task":"q1","status":"ok","median_ms":0.08}),
            json!({"peer":"datalith-remote","task":"q1","status":"ok","median_ms":0.7}),
            json!({"peer":"datalevin-remote","task":"q1","status":"ok","median_ms":1.4}),
            json!({"peer":"datalith-remote","task":"q2","status":"ok","median_ms":1.2}),
            json!({"peer":"datalevin-remote","task":"q2","status":"skipped"}),
        ];
        let w = vec![
            json!({"condition":"dl-sync","batch":100,"throughput_wps":230000.0}),
            json!({"condition":"dl-remote","batch":100,"throughput_wps":100000.0}),
            json!({"condition":"datalevin-remote","batch":100,"throughput_wps":20000.0}),
            json!({"condition":"dl-remote","batch":1000,"throughput_wps":500000.0}),
            json!({"condition":"datalevin-remote","batch":1000,"skipped":"no server"}),
        ];
        let got = |workload: &str, lines: &[Value]| -> Vec<(String, String)> {
            remote_rows(workload, lines)
                .iter()
                .map(|r| (r.what.clone(), r.verdict()))
                .collect()
        };
        let table: [(&str, &[Value], &[(&str, &str)]); 2] = [
            (
                "query-remote",
                &q,
                &[
                    ("q1 over the server", "**ahead** 2.00x"),
                    ("q2 over the server", "n/a: no peer measured"),
                ],
            ),
            (
                "write-remote",
                &w,
                &[
                    ("over the server, batch 100, durable", "**ahead** 5.00x"),
                    (
                        "over the server, batch 1000, durable",
                        "n/a: no peer measured",
                    ),
                ],
            ),
        ];
        for (workload, lines, want) in table {
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(got(workload, lines), want, "{workload}");
        }
    }

    #[test]
    fn q_rows_compare_against_the_fastest_other_peer() {
        let lines = vec![
            json!({"peer":"datalith","task":"q1","status":"ok","median_ms":1.0}),
            json!({"peer":"datalith-nosync","task":"q1","status":"ok","median_ms":0.1}),
            json!({"peer":"sqlite","task":"q1","status":"ok","median_ms":2.0}),
            json!({"peer":"datalevin","task":"q1","status":"ok","median_ms":4.0}),
            json!({"peer":"datalith-nosync","task":"add-1","status":"ok","median_ms":30.0}),
            json!({"peer":"datascript","task":"add-1","status":"ok","median_ms":20.0}),
            json!({"peer":"datalith","task":"q2","status":"ok","median_ms":1.0}),
            json!({"peer":"sqlite","task":"q2","status":"skipped"}),
        ];
        let rows = q_rows(&lines);
        let got: Vec<(String, String)> =
            rows.iter().map(|r| (r.what.clone(), r.verdict())).collect();
        assert_eq!(
            got,
            vec![
                ("q1".to_string(), "**ahead** 2.00x".to_string()),
                ("add-1".to_string(), "**behind** 0.67x".to_string()),
                ("q2".to_string(), "n/a: no peer measured".to_string()),
            ]
        );
    }

    #[test]
    fn h_rows_compare_datalith_with_datomic() {
        let lines = vec![
            json!({"workload":"history","peer":"datalith","task":"asof25-agg","status":"ok","median_ms":1.0}),
            json!({"workload":"history","peer":"datomic","task":"asof25-agg","status":"ok","median_ms":3.0}),
            json!({"workload":"history","peer":"datalith","task":"tx-range","status":"skipped"}),
            json!({"workload":"history","peer":"datomic","task":"tx-range","status":"ok","median_ms":3.0}),
        ];
        let got: Vec<(String, String, String)> = h_rows(&lines)
            .iter()
            .map(|r| (r.workload.clone(), r.what.clone(), r.verdict()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "history".to_string(),
                    "asof25-agg".to_string(),
                    "**ahead** 3.00x".to_string()
                ),
                (
                    "history".to_string(),
                    "tx-range".to_string(),
                    "n/a: Datalith not measured".to_string()
                ),
            ]
        );
    }

    #[test]
    fn w_rows_compare_durable_only_and_mixed_levels() {
        let lines = vec![
            json!({"condition":"kv-async-durable","durability":"durable","batch":1,"throughput_wps":100.0}),
            json!({"condition":"kv-async-nosync","durability":"nosync","batch":1,"throughput_wps":900.0}),
            json!({"condition":"sqlite-wal","durability":"durable","batch":1,"throughput_wps":50.0}),
            json!({"condition":"datalevin-kv","durability":"durable","batch":1,"throughput_wps":80.0,
                   "skipped":"not installed"}),
            json!({"condition":"dl-async","durability":"durable","batch":1,"throughput_wps":10.0,
                   "mixed":{"iterations":100,"seconds":1.0},"mixed_spread":{"median":120.0},
                   "mixed_raw":{"iterations":300,"seconds":1.0}}),
            json!({"condition":"datalevin-async","durability":"durable","batch":1,"throughput_wps":5.0,
                   "mixed":{"iterations":60,"seconds":1.0},"mixed_raw":{"iterations":600,"seconds":1.0}}),
            json!({"phase":"init","condition":"dl-init","seconds":2.0}),
            json!({"phase":"init","condition":"datalevin-init","seconds":4.0}),
        ];
        let rows = w_rows("write-kv", &lines);
        let got: Vec<(String, String)> =
            rows.iter().map(|r| (r.what.clone(), r.verdict())).collect();
        assert_eq!(
            got,
            vec![
                (
                    "pure write, batch 1, durable".to_string(),
                    "**ahead** 2.00x".to_string()
                ),
                (
                    "mixed read/write, query reads, durable".to_string(),
                    "**ahead** 2.00x".to_string()
                ),
                (
                    "mixed read/write, raw reads, durable".to_string(),
                    "**behind** 0.50x".to_string()
                ),
                ("bulk load".to_string(), "**ahead** 2.00x".to_string()),
            ]
        );
    }

    #[test]
    fn b_rows_take_the_lowest_peer_per_metric() {
        let lines = vec![
            json!({"store":"datalith","target_rate":10.0,"status":"ok","cpu_pct":1.0,"syscw_per_s":5.0,"device_mib_s":2.0}),
            json!({"store":"datalith-blocking","target_rate":10.0,"status":"ok","cpu_pct":0.1,"syscw_per_s":1.0,"device_mib_s":0.1}),
            json!({"store":"sqlite","target_rate":10.0,"status":"ok","cpu_pct":2.0,"syscw_per_s":100.0,"device_mib_s":1.0}),
            json!({"store":"rocksdb","target_rate":10.0,"status":"skipped"}),
        ];
        let got: Vec<String> = b_rows(&lines).iter().map(Row::verdict).collect();
        assert_eq!(
            got,
            vec!["**ahead** 2.00x", "**ahead** 20.00x", "**behind** 0.50x"]
        );
    }

    #[test]
    fn c_rows_leave_duckdb_and_unanswered_queries_out_of_the_verdict() {
        let lines = vec![
            json!({"peer":"postgres","query":"q1","answer":"reference","median_ms":4.0}),
            json!({"peer":"datalith","query":"q1","answer":"agrees","median_ms":2.0}),
            json!({"peer":"sqlite","query":"q1","answer":"agrees","median_ms":8.0}),
            json!({"peer":"datalevin","query":"q1","answer":"agrees","median_ms":16.0}),
            json!({"peer":"duckdb","query":"q1","answer":"agrees","median_ms":0.1}),
            json!({"peer":"postgres","query":"q2","answer":"reference","median_ms":1.0}),
            json!({"peer":"datalith","query":"q2","error":"memory limit"}),
            json!({"peer":"sqlite","query":"q2","answer":"differs: row 1","median_ms":0.5}),
            json!({"peer":"datalevin","query":"q2","answer":"agrees","median_ms":2.0}),
        ];
        let got: Vec<(String, String)> = c_rows("complex-sf1", &lines)
            .iter()
            .map(|r| (r.what.clone(), r.verdict()))
            .collect();
        let want = [
            ("q1", "**ahead** 2.00x"),
            ("q2", "n/a: Datalith not measured"),
            (
                "geometric mean (1 queries every one answered)",
                "**ahead** 2.00x",
            ),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn s_rows_take_the_best_other_peer_per_figure() {
        let lines = vec![
            json!({"workload":"search","peer":"datalith","task":"top-and","status":"ok","p50_ms":1.0}),
            json!({"workload":"search","peer":"tantivy","task":"top-and","status":"ok","p50_ms":0.5}),
            json!({"workload":"search","peer":"lucene","task":"top-and","status":"ok","p50_ms":4.0}),
            json!({"workload":"search","peer":"datalith","task":"index-durable","status":"ok","docs_per_s":300.0}),
            json!({"workload":"search","peer":"sqlite-fts5","task":"index-durable","status":"ok","docs_per_s":100.0}),
            json!({"workload":"search","peer":"datalevin","task":"index-durable","status":"skipped","docs_per_s":null}),
            json!({"workload":"search","peer":"datalith","task":"index-bytes","status":"ok","bytes":2e6}),
            json!({"workload":"search","peer":"tantivy","task":"index-bytes","status":"ok","bytes":1e6}),
            json!({"workload":"search","peer":"datalith","task":"overlap","status":"ok","overlap":0.9}),
            json!({"workload":"search","verdict":"x","met":true}),
        ];
        let got: Vec<(String, String)> = s_rows(&lines)
            .iter()
            .map(|r| (r.what.clone(), r.verdict()))
            .collect();
        let want = [
            ("top-and", "**behind** 0.50x"),
            ("index-durable", "**ahead** 3.00x"),
            ("index-bytes", "**behind** 0.50x"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
    }
}
