//! The goals of issue 52, each a verdict: Datalith faster than SQLite FTS5 and Datalevin on
//! every query kind (top-10 and count p50) and at indexing (durable and not); its p50 within
//! 1.5x of tantivy's on every kind; its mean top-10 agreement with Lucene at least 0.9; its
//! index no larger than 1.5x tantivy's.

use super::merge::PeerSummary;
use super::queries::Kind;

/// One goal and whether it was met.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub goal: String,
    /// Datalith's figure, the peer's, and the limit or ratio, as text.
    pub detail: String,
    /// `None`: a side was not measured.
    pub met: Option<bool>,
}

/// Tantivy's allowance on latency and size.
pub const TANTIVY_FACTOR: f64 = 1.5;
/// The agreement with Lucene required.
pub const MIN_OVERLAP: f64 = 0.9;

/// The verdicts, given every peer's summary (Datalith's under `datalith`).
pub fn verdicts(peers: &[PeerSummary], kinds: &[Kind]) -> Vec<Verdict> {
    let get = |name: &str| peers.iter().find(|p| p.peer == name && p.passes > 0);
    let ours = get("datalith");
    let mut out = Vec::new();
    let p50 = |s: &PeerSummary, k: Kind, count: bool| {
        let ks = s.kinds.get(&k)?;
        Some(if count {
            ks.count_p50.as_ref()?.median
        } else {
            ks.top_p50.as_ref()?.median
        })
    };
    for rival in ["sqlite-fts5", "datalevin"] {
        for &k in kinds {
            for count in [false, true] {
                let what = if count { "count" } else { "top-10" };
                let (a, b) = (
                    ours.and_then(|s| p50(s, k, count)),
                    get(rival).and_then(|s| p50(s, k, count)),
                );
                out.push(Verdict {
                    goal: format!("{} {what} p50 faster than {rival}", k.name()),
                    detail: pair_ms(a, b),
                    met: a.zip(b).map(|(a, b)| a < b),
                });
            }
        }
        for mode in ["durable", "nosync"] {
            let rate = |s: &PeerSummary| s.index_rate.get(mode).map(|x| x.median);
            let (a, b) = (ours.and_then(rate), get(rival).and_then(rate));
            out.push(Verdict {
                goal: format!("indexing ({mode}) faster than {rival}"),
                detail: match (a, b) {
                    (Some(a), Some(b)) => format!("{a:.0} vs {b:.0} docs/s ({:.2}x)", a / b),
                    _ => "not measured".into(),
                },
                met: a.zip(b).map(|(a, b)| a > b),
            });
        }
    }
    for &k in kinds {
        for count in [false, true] {
            let what = if count { "count" } else { "top-10" };
            let (a, b) = (
                ours.and_then(|s| p50(s, k, count)),
                get("tantivy").and_then(|s| p50(s, k, count)),
            );
            out.push(Verdict {
                goal: format!(
                    "{} {what} p50 within {TANTIVY_FACTOR}x of tantivy",
                    k.name()
                ),
                detail: pair_ms(a, b),
                met: a.zip(b).map(|(a, b)| a <= TANTIVY_FACTOR * b),
            });
        }
    }
    let o = ours.and_then(|s| s.overlap_all);
    out.push(Verdict {
        goal: format!("top-10 agreement with Lucene BM25 at least {MIN_OVERLAP}"),
        detail: o.map_or("not measured".into(), |o| format!("{o:.3}")),
        met: o.map(|o| o >= MIN_OVERLAP),
    });
    let size = |s: &PeerSummary| s.bytes.as_ref().map(|b| b.median);
    let (a, b) = (ours.and_then(size), get("tantivy").and_then(size));
    out.push(Verdict {
        goal: format!("index no larger than {TANTIVY_FACTOR}x tantivy's"),
        detail: match (a, b) {
            (Some(a), Some(b)) => format!("{:.1} MB vs {:.1} MB ({:.2}x)", a / 1e6, b / 1e6, a / b),
            _ => "not measured".into(),
        },
        met: a.zip(b).map(|(a, b)| a <= TANTIVY_FACTOR * b),
    });
    out
}

/// `a ms vs b ms (b/a x)`.
fn pair_ms(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{a:.3} ms vs {b:.3} ms ({:.2}x)", a / b),
        (Some(a), None) => format!("{a:.3} ms vs not measured"),
        (None, Some(b)) => format!("not measured vs {b:.3} ms"),
        _ => "not measured".into(),
    }
}

/// The verdict column's text.
pub fn mark(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "met",
        Some(false) => "**NOT met**",
        None => "n/a (not measured)",
    }
}
