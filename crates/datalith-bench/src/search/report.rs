//! `summary.md`, `summary.jsonl` (one line per peer and row, read by `datalith-bench all`) and
//! `search.csv` (one line per peer and query kind).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use super::goals::{mark, Verdict};
use super::merge::PeerSummary;
use super::queries::Kind;
use crate::common::markdown::peer_table_header;
use crate::common::passes::Spread;
use crate::common::BenchError;

/// Everything the summary shows.
pub struct Report<'a> {
    pub header: &'a str,
    pub peers: &'a [PeerSummary],
    pub kinds: &'a [Kind],
    pub verdicts: &'a [Verdict],
}

fn ms(s: Option<&Spread>) -> String {
    s.map_or("-".into(), |s| format!("{:.3}", s.median))
}

impl Report<'_> {
    fn names(&self) -> Vec<String> {
        self.peers.iter().map(|p| p.peer.clone()).collect()
    }

    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# Search workload\n\n{}\n", self.header);
        let names = self.names();
        let _ = writeln!(s, "## Peers\n");
        for p in self.peers {
            let state = match (&p.skipped, &p.failed, p.passes) {
                (_, Some(f), _) => format!("**FAILED**: {f}"),
                (Some(why), None, 0) => format!("skipped: {why}"),
                (_, None, n) => format!("{n} pass(es)"),
            };
            let _ = writeln!(s, "- `{}`: {state}", p.peer);
        }
        let _ = writeln!(s, "\n## Indexing (median of the passes)\n");
        peer_table_header(&mut s, "figure", &names);
        let rows: [(&str, Box<dyn Fn(&PeerSummary) -> String>); 3] = [
            ("docs/s, durable", Box::new(|p| rate(p, "durable"))),
            ("docs/s, no sync", Box::new(|p| rate(p, "nosync"))),
            (
                "index MB on disk (durable)",
                Box::new(|p| {
                    p.bytes
                        .as_ref()
                        .map_or("-".into(), |b| format!("{:.1}", b.median / 1e6))
                }),
            ),
        ];
        for (label, f) in rows {
            let _ = write!(s, "| {label} |");
            for p in self.peers {
                let _ = write!(s, " {} |", f(p));
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(
            s,
            "\nThe largest files of each durable index (first pass):\n"
        );
        for p in self.peers.iter().filter(|p| !p.files.is_empty()) {
            let files: Vec<String> = p
                .files
                .iter()
                .map(|(f, b)| format!("`{f}` {:.1} MB", *b as f64 / 1e6))
                .collect();
            let _ = writeln!(s, "- `{}`: {}", p.peer, files.join(", "));
        }
        for (title, top) in [
            ("Top-10 latency, ms: p50 / p99", true),
            ("Full count latency, ms: p50 / p99", false),
        ] {
            let _ = writeln!(s, "\n## {title}\n");
            peer_table_header(&mut s, "kind (queries)", &names);
            for &k in self.kinds {
                let n = self
                    .peers
                    .iter()
                    .find_map(|p| p.kinds.get(&k))
                    .map_or(0, |x| x.queries);
                let _ = write!(s, "| {} ({n}) |", k.name());
                for p in self.peers {
                    let cell = p.kinds.get(&k).map_or("-".into(), |x| {
                        let (a, b) = if top {
                            (&x.top_p50, &x.top_p99)
                        } else {
                            (&x.count_p50, &x.count_p99)
                        };
                        if a.is_none() {
                            "-".into()
                        } else {
                            format!("{} / {}", ms(a.as_ref()), ms(b.as_ref()))
                        }
                    });
                    let _ = write!(s, " {cell} |");
                }
                let _ = writeln!(s);
            }
        }
        let _ = writeln!(
            s,
            "\n## Top-10 agreement with Lucene BM25 (mean overlap, ties with the 10th counted)\n"
        );
        peer_table_header(&mut s, "kind", &names);
        for &k in self.kinds {
            let _ = write!(s, "| {} |", k.name());
            for p in self.peers {
                let o = p.kinds.get(&k).and_then(|x| x.overlap);
                let _ = write!(s, " {} |", o.map_or("-".into(), |o| format!("{o:.3}")));
            }
            let _ = writeln!(s);
        }
        let _ = write!(s, "| all |");
        for p in self.peers {
            let _ = write!(
                s,
                " {} |",
                p.overlap_all.map_or("-".into(), |o| format!("{o:.3}"))
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "\n## Count check (every pass; the reference is the bench's own index)\n"
        );
        peer_table_header(&mut s, "kind", &names);
        for &k in self.kinds {
            let _ = write!(s, "| {} |", k.name());
            for p in self.peers {
                let cell = match p.kinds.get(&k) {
                    Some(x) if p.passes > 0 => format!(
                        "{}/{} counts, {}/{} top-10 ok",
                        x.queries - x.wrong_counts,
                        x.queries,
                        x.queries - x.wrong_tops,
                        x.queries
                    ),
                    _ => "not run".into(),
                };
                let _ = write!(s, " {cell} |");
            }
            let _ = writeln!(s);
        }
        for p in self.peers {
            for e in p.wrong_docs.iter().chain(&p.examples) {
                let _ = writeln!(s, "\n- `{}`: {e}", p.peer);
            }
        }
        let _ = writeln!(
            s,
            "\n## Goals (issue 52)\n\n| goal | datalith vs peer | verdict |\n|---|---|---|"
        );
        for v in self.verdicts {
            let _ = writeln!(s, "| {} | {} | {} |", v.goal, v.detail, mark(v.met));
        }
        s
    }

    pub fn write_jsonl(&self, path: &Path) -> Result<(), BenchError> {
        let mut out = String::new();
        let mut line = |v: serde_json::Value| {
            out.push_str(&v.to_string());
            out.push('\n');
        };
        for p in self.peers {
            let status = if p.failed.is_some() {
                "failed"
            } else if p.passes == 0 {
                "skipped"
            } else {
                "ok"
            };
            let base = |task: String| json!({"workload": "search", "peer": p.peer, "task": task, "status": status});
            for mode in ["durable", "nosync"] {
                let mut v = base(format!("index-{mode}"));
                v["docs_per_s"] = json!(p.index_rate.get(mode).map(|x| x.median));
                v["spread"] = json!(p.index_rate.get(mode));
                line(v);
            }
            let mut v = base("index-bytes".into());
            v["bytes"] = json!(p.bytes.as_ref().map(|b| b.median));
            line(v);
            for (k, x) in &p.kinds {
                for (task, a, b) in [
                    ("top", &x.top_p50, &x.top_p99),
                    ("count", &x.count_p50, &x.count_p99),
                ] {
                    let mut v = base(format!("{task}-{}", k.name()));
                    v["p50_ms"] = json!(a.as_ref().map(|s| s.median));
                    v["p99_ms"] = json!(b.as_ref().map(|s| s.median));
                    v["p50_spread"] = json!(a);
                    v["queries"] = json!(x.queries);
                    v["wrong_counts"] = json!(x.wrong_counts);
                    v["wrong_tops"] = json!(x.wrong_tops);
                    v["overlap"] = json!(x.overlap);
                    line(v);
                }
            }
            let mut v = base("overlap".into());
            v["overlap"] = json!(p.overlap_all);
            line(v);
        }
        for v in self.verdicts {
            line(
                json!({"workload": "search", "verdict": v.goal, "detail": v.detail, "met": v.met}),
            );
        }
        std::fs::write(path, out).map_err(BenchError::io(path))
    }

    pub fn write_csv(&self, path: &Path) -> Result<(), BenchError> {
        let mut s = String::from(
            "peer,kind,queries,top_p50_ms,top_p99_ms,count_p50_ms,count_p99_ms,overlap,wrong_counts,wrong_tops\n",
        );
        let f = |x: &Option<Spread>| {
            x.as_ref()
                .map_or(String::new(), |s| format!("{:.4}", s.median))
        };
        for p in self.peers {
            for (k, x) in &p.kinds {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{},{}",
                    p.peer,
                    k.name(),
                    x.queries,
                    f(&x.top_p50),
                    f(&x.top_p99),
                    f(&x.count_p50),
                    f(&x.count_p99),
                    x.overlap.map_or(String::new(), |o| format!("{o:.4}")),
                    x.wrong_counts,
                    x.wrong_tops
                );
            }
        }
        std::fs::write(path, s).map_err(BenchError::io(path))
    }
}

fn rate(p: &PeerSummary, mode: &str) -> String {
    p.index_rate.get(mode).map_or("-".into(), |r| {
        format!("{:.0} ({})", r.median, r.range_text(|x| format!("{x:.0}")))
    })
}
