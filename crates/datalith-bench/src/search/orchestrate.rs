//! The run: the corpus and the queries (written for the JVM peers), the reference answers,
//! then every pass (the peer order rotated), then the checks, the summary and the charts.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use super::analyze::Tokenization;
use super::args::{Resolved, SearchArgs};
use super::corpus::{self, Doc};
use super::engine::{InProcess, Mode, PeerPass};
use super::external::{self, Invocation};
use super::merge::{self, Expected};
use super::queries::{self, Query};
use super::reference::Reference;
use super::report::Report;
use super::{datalith_peer, goals, measure, plot, sqlite_peer};
use crate::common::{child, passes, BenchError};

/// `datalith-bench search`.
pub fn run(args: SearchArgs) -> Result<ExitCode, BenchError> {
    let r = args.resolve()?;
    let out = args.run.out.join("search");
    let work = out.join("work");
    let log_dir = out.join("logs");
    for d in [&out, &work, &log_dir] {
        std::fs::create_dir_all(d).map_err(BenchError::io(d))?;
    }
    let t = Instant::now();
    let docs = corpus::load(&args.corpus_dir, r.docs)?;
    let docs_tsv = out.join("docs.tsv");
    corpus::write_tsv(&docs_tsv, &docs)?;
    let words = Reference::build(&docs, Tokenization::Words);
    let queries = {
        let alnum = Reference::build(&docs, Tokenization::Alnum);
        queries::generate(&docs, &words, &alnum, &r.kinds, r.per_kind, args.seed)
    };
    let queries_tsv = out.join("queries.tsv");
    queries::write_tsv(&queries_tsv, &queries)?;
    let matches: Vec<Vec<u32>> = queries.iter().map(|q| words.matches(q)).collect();
    drop(words);
    let bytes: usize = docs.iter().map(|d| d.text.len()).sum();
    eprintln!(
        "search: {} documents ({:.1} MB), {} queries, reference answers in {:.1} s",
        docs.len(),
        bytes as f64 / 1e6,
        queries.len(),
        t.elapsed().as_secs_f64()
    );
    let peers_dir = child::peers_dir(args.run.peers_dir.as_deref());
    let mut by_peer: BTreeMap<String, Vec<PeerPass>> = BTreeMap::new();
    for pass in 0..r.passes {
        let order = passes::rotated(&r.peers, pass);
        eprintln!("pass {}/{}: {}", pass + 1, r.passes, order.join(", "));
        for label in &order {
            let dir = work.join(label);
            let got = match label.as_str() {
                "lucene" | "datalevin" => external::run(
                    label,
                    &Invocation {
                        peers_dir: &peers_dir,
                        docs: &docs_tsv,
                        queries: &queries_tsv,
                        work: &dir,
                        log_dir: &log_dir,
                        batch: r.batch,
                        rounds: r.rounds,
                        warm: measure::WARM_DOCS,
                        install: !args.run.quick && pass == 0,
                        heap: &args.run.heap,
                        pass,
                        n_queries: queries.len(),
                    },
                ),
                other => in_process(other, &dir, &docs, &queries, &r),
            };
            let _ = std::fs::remove_dir_all(&dir);
            eprintln!("  {label}: {}", pass_line(&got));
            by_peer.entry(label.clone()).or_default().push(got);
        }
    }
    let _ = std::fs::remove_dir_all(&work);

    let exp = Expected {
        queries: &queries,
        matches: &matches,
        docs: docs.len() as u64,
    };
    let lucene = by_peer.get("lucene").and_then(|ps| {
        ps.iter().find_map(|p| match p {
            PeerPass::Ran { queries, .. } => Some(queries.as_slice()),
            _ => None,
        })
    });
    let summaries: Vec<merge::PeerSummary> = r
        .peers
        .iter()
        .map(|p| {
            merge::merge(
                p,
                by_peer.get(p).map_or(&[][..], Vec::as_slice),
                &exp,
                lucene,
            )
        })
        .collect();
    let verdicts = goals::verdicts(&summaries, &r.kinds);
    let header = header(&args, &r, &docs, &queries);
    let report = Report {
        header: &header,
        peers: &summaries,
        kinds: &r.kinds,
        verdicts: &verdicts,
    };
    let mut md = report.markdown();
    let charts = plot::all(&out, &summaries, &r.kinds)?;
    if !charts.is_empty() {
        md.push_str("\n## Charts\n\n");
        for c in &charts {
            md.push_str(&format!("![{c}]({})\n", c.replace(".png", ".svg")));
        }
    }
    let md_path = out.join("summary.md");
    std::fs::write(&md_path, &md).map_err(BenchError::io(&md_path))?;
    report.write_jsonl(&out.join("summary.jsonl"))?;
    report.write_csv(&out.join("search.csv"))?;
    println!("{md}");
    println!("written: {}", out.display());

    let mut bad = false;
    for s in &summaries {
        if s.wrong() > 0 {
            eprintln!(
                "datalith-bench search: {}: WRONG ANSWERS ({}; see summary.md)",
                s.peer,
                s.wrong()
            );
            bad = true;
        }
        if let Some(f) = &s.failed {
            eprintln!("datalith-bench search: {} FAILED: {f}", s.peer);
            bad = true;
        }
        if s.passes == 0 && s.failed.is_none() && !args.run.quick {
            eprintln!(
                "datalith-bench search: {} SKIPPED in a full run: {}{}",
                s.peer,
                s.skipped.as_deref().unwrap_or("?"),
                if args.run.allow_missing_peers {
                    "; allowed by --allow-missing-peers"
                } else {
                    ""
                }
            );
            bad |= !args.run.allow_missing_peers;
        }
    }
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The in-process peer named `label`, or why it cannot run in this build.
fn in_process_peer(label: &str) -> Result<Box<dyn InProcess>, String> {
    match label {
        "datalith" => Ok(Box::new(datalith_peer::Datalith)),
        "sqlite-fts5" => Ok(Box::new(sqlite_peer::Sqlite)),
        #[cfg(feature = "search-peers")]
        "tantivy" => Ok(Box::new(super::tantivy_peer::Tantivy)),
        #[cfg(not(feature = "search-peers"))]
        "tantivy" => Err("datalith-bench was built without the cargo feature search-peers".into()),
        other => Err(format!("no in-process peer {other}")),
    }
}

/// One pass of an in-process peer: a warm-up indexing (untimed, removed), index no-sync (then
/// removed), index durable, query it.
fn in_process(label: &str, dir: &Path, docs: &[Doc], queries: &[Query], r: &Resolved) -> PeerPass {
    let peer = match in_process_peer(label) {
        Ok(p) => p,
        Err(why) => return PeerPass::Skipped(why),
    };
    let go = || -> Result<PeerPass, BenchError> {
        let warm = dir.join("warmup");
        measure::index(
            &*peer,
            &warm,
            &docs[..docs.len().min(measure::WARM_DOCS)],
            r.batch,
            Mode::NoSync,
        )?;
        let _ = std::fs::remove_dir_all(&warm);
        let mut index = Vec::new();
        for mode in Mode::ALL {
            let d = dir.join(mode.name());
            index.push(measure::index(&*peer, &d, docs, r.batch, mode)?);
            if mode == Mode::NoSync {
                let _ = std::fs::remove_dir_all(&d);
            }
        }
        let s = peer.open(&dir.join(Mode::Durable.name()))?;
        let queries = measure::queries(label, &*s, queries, r.rounds)?;
        Ok(PeerPass::Ran { index, queries })
    };
    go().unwrap_or_else(|e| PeerPass::Failed(e.to_string()))
}

/// The progress line of one peer's pass.
fn pass_line(p: &PeerPass) -> String {
    match p {
        PeerPass::Ran { index, queries } => {
            let idx: Vec<String> = index
                .iter()
                .map(|i| format!("{} {:.0} docs/s", i.mode.name(), i.docs as f64 / i.seconds))
                .collect();
            let calls: u64 = queries
                .iter()
                .map(|q| q.top_ns.iter().chain(&q.count_ns).sum::<u64>())
                .sum();
            format!(
                "{}; {} queries, {:.1} s in timed calls",
                idx.join(", "),
                queries.len(),
                calls as f64 / 1e9
            )
        }
        PeerPass::Skipped(why) => format!("skipped: {why}"),
        PeerPass::Failed(why) => format!("FAILED: {why}"),
    }
}

/// The summary's header: corpus, queries, peers, timer scopes.
fn header(args: &SearchArgs, r: &Resolved, docs: &[Doc], queries: &[Query]) -> String {
    let bytes: usize = docs.iter().map(|d| d.text.len()).sum();
    format!(
        "Corpus: GCIDE (Debian package `dict-gcide`, {}), one document per definition block \
         of `gcide.index` (the `00-database-*` entries left out), in file order: {} documents, \
         {:.1} MB. Queries: {} ({} per kind), seed {}; every term ASCII letters and in the same \
         documents under both tokenizations (UAX #29 words; runs of letters and digits). \
         Indexing: a commit every {} documents, each engine writing from one thread; `durable` \
         flushes each commit to the disk, `nosync` skips the flush (Datalith `NoSync`, SQLite \
         `synchronous=OFF`, Lucene and tantivy a directory whose sync is a no-op, Datalevin \
         `:nosync`); the timer runs from the empty directory to the closed index, after an untimed warm-up \
         indexing of the first {} documents into a throwaway directory (the JVM's JIT, the \
         page cache), the same for every engine. Size: \
         allocated blocks of the closed durable index. Queries run on the durable index: one \
         untimed round over every query, then {} timed round(s), the top-10 call and the count \
         call of each query timed apart; p50/p99 over every timed call of a kind, the median \
         of the passes. {} pass(es), the peer order rotated each pass. {}\n\n\
         Tokenization: Datalith, Lucene (`StandardTokenizer` + `LowerCaseFilter`, no stop \
         words) and tantivy (a UAX #29 tokenizer of the bench, lower-cased) cut UAX #29 words; \
         SQLite FTS5 has no such tokenizer: `unicode61 remove_diacritics 0` (runs of letters \
         and digits), and Datalevin (an analyzer function) gets the same runs, lower-cased, no \
         stop words (the JDK has no UAX #29 segmenter: its word `BreakIterator` keeps GCIDE's \
         `Ab\"di` whole). None stems; the queries' terms are in the same documents under both \
         tokenizations, so every count must equal the reference's. Scoring: BM25 in Lucene (default similarity), tantivy, SQLite (`bm25()`) \
         and Datalith; Datalevin ranks by its own TF-IDF with proximity. Full counts: Lucene \
         `IndexSearcher.count`, tantivy `Count`, SQLite `count(*)`, Datalith `count`; Datalevin \
         has no count call: its count is the length of `search` with `:top` the number of \
         documents.",
        args.corpus_dir.display(),
        docs.len(),
        bytes as f64 / 1e6,
        queries.len(),
        r.per_kind,
        args.seed,
        r.batch,
        docs.len().min(measure::WARM_DOCS),
        r.rounds,
        r.passes,
        crate::common::jvm::describe(&args.run.heap),
    )
}
