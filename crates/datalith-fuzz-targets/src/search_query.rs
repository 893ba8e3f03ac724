//! Target `search_query`: the full-text query parser and engine on any text. Input: the query
//! (bytes that are not UTF-8 are read lossily, since a caller's text always is UTF-8).
//!
//! Beyond "no panic": a query either parses, or fails as a typed
//! `SearchError::BadQuery` (`:datalith.error/invalid-search-query`), the same under every
//! analysis; on two small indexes (plain, and English stop words with stemming, each a few
//! hundred documents so that postings span several blocks) `search` and `count` give the
//! parser's verdict, and when they answer: `count(q)` equals the number of every match and is
//! at least `search(q, k).len()`, the top k are distinct documents among the matches, with
//! finite scores, best first, scoring as the best k of every match do (block-max pruning
//! loses nothing); `match_offsets` gives ranges on character boundaries of the text.

use std::collections::HashSet;
use std::sync::OnceLock;

use datalith::kv::{Durability, EnvOptions, Environment};
use datalith::search::{
    parse_query, Analyzer, AnalyzerConfig, DocChange, Language, SearchError, SearchIndex, StopWords,
};

/// The words the fixture documents are made of (some English stop words and inflections).
const WORDS: &[&str] = &[
    "fox", "foxes", "red", "hen", "the", "and", "hiking", "hikers", "hike", "lazy", "dog", "dogs",
    "quick", "brown", "jumps", "over", "café", "zürich", "naïve", "日本", "東京", "x", "a1", "42",
];

/// A few documents written out (punctuation, case, non-Latin scripts, repetition).
const SPECIAL: &[&str] = &[
    "The quick brown fox jumps over the lazy dog",
    "A red fox and a red hen",
    "Hiking in the hills: hikers love hiking!",
    "Café au lait in Zürich, naïve résumé",
    "東京 日本 日本語",
    "fox fox fox fox fox fox fox fox",
    "",
    "---",
    "it's a fox's den; don't",
];

fn config(english: bool) -> AnalyzerConfig {
    match english {
        false => AnalyzerConfig::default(),
        true => AnalyzerConfig {
            stop_words: StopWords::Language(Language::English),
            stemmer: Some(Language::English),
        },
    }
}

/// The fixture's documents: [`SPECIAL`], then generated ones.
fn documents() -> Vec<(u64, String)> {
    let mut state = 0x5eed_u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let mut docs: Vec<(u64, String)> = SPECIAL
        .iter()
        .enumerate()
        .map(|(i, t)| (i as u64, t.to_string()))
        .collect();
    for id in 100..400u64 {
        let n = 1 + next() % 12;
        let text: Vec<&str> = (0..n).map(|_| WORDS[next() % WORDS.len()]).collect();
        docs.push((id * 7, text.join(" ")));
    }
    docs
}

/// The two fixture indexes (plain, English), in an environment whose directory is removed
/// once open.
fn indexes() -> &'static [SearchIndex; 2] {
    static IX: OnceLock<(Environment, [SearchIndex; 2])> = OnceLock::new();
    &IX.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mut options = EnvOptions::default();
        options.durability = Durability::NoSync;
        let env = Environment::open(dir.path(), options).expect("open an environment");
        let make = |name: &str, english: bool| {
            let ix = env
                .search_index(name, config(english))
                .expect("a search index");
            let puts = documents()
                .into_iter()
                .map(|(id, text)| DocChange::Put { id, text })
                .collect();
            ix.write(puts).expect("index the fixture");
            // Some removed and some rewritten, so postings have holes.
            let changes = (100..400u64)
                .step_by(9)
                .map(|id| match id % 2 {
                    0 => DocChange::Remove { id: id * 7 },
                    _ => DocChange::Put {
                        id: id * 7,
                        text: "rewritten fox".into(),
                    },
                })
                .collect();
            ix.write(changes).expect("change the fixture");
            ix
        };
        let both = [make("plain", false), make("english", true)];
        (env, both)
    })
    .1
}

fn assert_bad_query(e: &SearchError, what: &str, text: &str) {
    assert!(
        matches!(e, SearchError::BadQuery { .. })
            && e.category().code == ":datalith.error/invalid-search-query",
        "{what} of {text:?}: {e} ({})",
        e.category().code
    );
}

/// Parses and runs the query in `data` (a bad query is fine; a panic, an untyped error or
/// answers that disagree are findings).
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    let k = 1 + data.len() % 9;
    for (english, ix) in [false, true].into_iter().zip(indexes()) {
        let parsed = parse_query(text, &Analyzer::new(config(english)));
        let top = ix.search(text, k);
        let every = ix.search(text, usize::MAX >> 1);
        let count = ix.count(text);
        let offsets = ix.match_offsets(text, SPECIAL[english as usize]);
        let (q, top, every, count) = match (parsed, top, every, count) {
            (Ok(q), Ok(top), Ok(every), Ok(count)) => (q, top, every, count),
            (Err(e), top, every, count) => {
                assert_bad_query(&e, "parse", text);
                for (what, r) in [
                    ("search", top.map(|_| ())),
                    ("search all", every.map(|_| ())),
                    ("count", count.map(|_| ())),
                    ("match_offsets", offsets.map(|_| ())),
                ] {
                    match r {
                        Ok(()) => panic!("{what} answered {text:?}, which does not parse"),
                        Err(e) => assert_bad_query(&e, what, text),
                    }
                }
                continue;
            }
            (Ok(_), top, every, count) => panic!(
                "{text:?} parses but search/count fail: {:?} {:?} {:?}",
                top.err(),
                every.err(),
                count.err()
            ),
        };
        let at = |what: &str| format!("{what} of {text:?} (english {english}, k {k})");
        assert_eq!(count, every.len() as u64, "{}", at("count and every match"));
        assert!(count >= top.len() as u64, "{}", at("count and top k"));
        assert_eq!(
            top.len() as u64,
            count.min(k as u64),
            "{}",
            at("top k size")
        );
        if q.matches_nothing() {
            assert_eq!(count, 0, "{}", at("a query matching nothing"));
        }
        let all: HashSet<u64> = every.iter().map(|h| h.id).collect();
        assert_eq!(all.len(), every.len(), "{}", at("distinct matches"));
        let ids: HashSet<u64> = top.iter().map(|h| h.id).collect();
        assert_eq!(ids.len(), top.len(), "{}", at("distinct top k"));
        assert!(ids.is_subset(&all), "{}", at("top k among the matches"));
        for hits in [&top, &every] {
            assert!(
                hits.iter().all(|h| h.score.is_finite())
                    && hits.windows(2).all(|w| w[0].score >= w[1].score),
                "{}: {hits:?}",
                at("finite scores, best first")
            );
        }
        let best: Vec<f32> = every.iter().take(k).map(|h| h.score).collect();
        let got: Vec<f32> = top.iter().map(|h| h.score).collect();
        assert_eq!(got, best, "{}", at("top k scores against every match"));
        let sample = SPECIAL[english as usize];
        for (start, end) in offsets.expect("a parsed query's offsets") {
            assert!(
                start < end
                    && end <= sample.len()
                    && sample.is_char_boundary(start)
                    && sample.is_char_boundary(end),
                "{}: {start}..{end}",
                at("match offsets")
            );
        }
    }
}
