//! KV search indexes: answers as tables of input and expected output, and a property test of
//! random writes against a plain model (which documents match, by the query's boolean
//! meaning; the top k equal to the best k of every match scored in full; the index checked).

use std::collections::BTreeMap;

use datalith::kv::{EnvOptions, Environment};
use datalith::search::{AnalyzerConfig, DocChange, Language, SearchIndex, StopWords};
use proptest::prelude::*;

fn open(dir: &std::path::Path, config: AnalyzerConfig) -> (Environment, SearchIndex) {
    let env = Environment::open(dir, EnvOptions::default()).unwrap();
    let ix = env.search_index("docs", config).unwrap();
    (env, ix)
}

fn put(id: u64, text: &str) -> DocChange {
    DocChange::Put {
        id,
        text: text.into(),
    }
}

const DOCS: &[(u64, &str)] = &[
    (1, "The quick brown fox jumps over the lazy dog"),
    (2, "A red fox and a red hen"),
    (3, "Hiking in the hills: hikers love hiking"),
    (4, "The dog sleeps; the fox does not"),
    (5, "Café au lait in Zürich"),
    (10, "fox fox fox"),
];

#[test]
fn queries_answer_as_expected() {
    let dir = tempfile::tempdir().unwrap();
    let (_env, ix) = open(dir.path(), AnalyzerConfig::default());
    ix.write(DOCS.iter().map(|(id, t)| put(*id, t)).collect())
        .unwrap();
    let cases: &[(&str, &[u64])] = &[
        ("fox", &[1, 2, 4, 10]),
        ("FOX", &[1, 2, 4, 10]),
        ("fox dog", &[1, 2, 4, 10]),
        ("+fox +dog", &[1, 4]),
        ("fox AND dog", &[1, 4]),
        ("fox -dog", &[2, 10]),
        ("fox NOT dog", &[2, 10]),
        ("\"red fox\"", &[2]),
        ("\"fox red\"", &[]),
        ("\"lazy dog\" hen", &[1, 2]),
        ("hik*", &[3]),
        ("zürich", &[5]),
        ("café", &[5]),
        ("absent", &[]),
        ("-fox", &[]),
        ("+fox -\"red fox\"", &[1, 4, 10]),
    ];
    for (q, want) in cases {
        let mut got: Vec<u64> = ix.search(q, 100).unwrap().iter().map(|h| h.id).collect();
        got.sort_unstable();
        assert_eq!(got, *want, "query {q:?}");
        assert_eq!(ix.count(q).unwrap(), want.len() as u64, "count of {q:?}");
    }
    // Ranked: the document that is all fox first, then the short one.
    let ranked: Vec<u64> = ix.search("fox", 2).unwrap().iter().map(|h| h.id).collect();
    assert_eq!(ranked, vec![10, 2]);
    assert!(ix.check().unwrap().problems.is_empty());
}

#[test]
fn bad_queries_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (_env, ix) = open(dir.path(), AnalyzerConfig::default());
    for q in ["", "   ", "\"unclosed", "*", "+", "fox AND", "AND fox"] {
        let e = ix.search(q, 10).unwrap_err();
        assert_eq!(
            e.category().code,
            ":datalith.error/invalid-search-query",
            "{q:?}: {e}"
        );
    }
}

#[test]
fn updates_and_removals_are_followed_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (_env, ix) = open(dir.path(), AnalyzerConfig::default());
        ix.write(DOCS.iter().map(|(id, t)| put(*id, t)).collect())
            .unwrap();
        ix.write(vec![put(2, "a blue whale"), DocChange::Remove { id: 10 }])
            .unwrap();
    }
    let (_env, ix) = open(dir.path(), AnalyzerConfig::default());
    let ids = |q| -> Vec<u64> {
        let mut v: Vec<u64> = ix.search(q, 10).unwrap().iter().map(|h| h.id).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(ids("fox"), vec![1, 4]);
    assert_eq!(ids("whale"), vec![2]);
    assert_eq!(ix.len().unwrap(), 5);
    assert!(ix.check().unwrap().problems.is_empty());
}

#[test]
fn stemming_and_stop_words_are_per_index() {
    let dir = tempfile::tempdir().unwrap();
    let env = Environment::open(dir.path(), EnvOptions::default()).unwrap();
    let english = AnalyzerConfig {
        stop_words: StopWords::Language(Language::English),
        stemmer: Some(Language::English),
    };
    let stemmed = env.search_index("stemmed", english).unwrap();
    let plain = env
        .search_index("plain", AnalyzerConfig::default())
        .unwrap();
    for ix in [&stemmed, &plain] {
        ix.write(vec![put(1, "The hikers were hiking"), put(2, "a hike")])
            .unwrap();
    }
    assert_eq!(stemmed.count("hike").unwrap(), 2);
    assert_eq!(plain.count("hike").unwrap(), 1);
    assert_eq!(stemmed.count("the").unwrap(), 0);
    assert_eq!(plain.count("the").unwrap(), 1);
    // An index keeps the analysis it was made with.
    let again = env
        .search_index("stemmed", AnalyzerConfig::default())
        .unwrap();
    assert_eq!(again.count("hike").unwrap(), 2);
}

// ---- the model ----

const WORDS: &[&str] = &["ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen"];

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// Whether `doc` matches `q` by the query's boolean meaning.
fn model_matches(q: &[(u8, Vec<String>)], doc: &[String]) -> bool {
    let has = |clause: &[String]| -> bool {
        if clause.len() == 1 {
            if let Some(p) = clause[0].strip_suffix('*') {
                return doc.iter().any(|w| w.starts_with(p));
            }
            return doc.contains(&clause[0]);
        }
        doc.windows(clause.len()).any(|w| w == clause)
    };
    let must: Vec<_> = q.iter().filter(|c| c.0 == 1).collect();
    let should: Vec<_> = q.iter().filter(|c| c.0 == 0).collect();
    if q.iter().filter(|c| c.0 == 2).any(|c| has(&c.1)) {
        return false;
    }
    if !must.is_empty() {
        return must.iter().all(|c| has(&c.1));
    }
    should.iter().any(|c| has(&c.1))
}

fn query_text(q: &[(u8, Vec<String>)]) -> String {
    q.iter()
        .map(|(occ, ws)| {
            let sign = ["", "+", "-"][*occ as usize];
            if ws.len() == 1 {
                format!("{sign}{}", ws[0])
            } else {
                format!("{sign}\"{}\"", ws.join(" "))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn doc_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..12).prop_map(|w| w.join(" "))
}

fn clause() -> impl Strategy<Value = (u8, Vec<String>)> {
    let word = prop::sample::select(WORDS).prop_map(|w| vec![w.to_string()]);
    let prefix = prop::sample::select(WORDS).prop_map(|w| vec![format!("{}*", &w[..1])]);
    let phrase = prop::collection::vec(prop::sample::select(WORDS), 2..4)
        .prop_map(|w| w.iter().map(|x| x.to_string()).collect());
    (
        prop::sample::select(&[0u8, 0, 0, 1, 2][..]),
        prop_oneof![4 => word, 1 => prefix, 1 => phrase],
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn index_agrees_with_the_model(
        batches in prop::collection::vec(
            prop::collection::vec((0u64..300, prop::option::weighted(0.85, doc_text())), 1..60),
            1..5,
        ),
        queries in prop::collection::vec(prop::collection::vec(clause(), 1..4), 12),
        k in 1usize..12,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (_env, ix) = open(dir.path(), AnalyzerConfig::default());
        let mut model: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for batch in &batches {
            let mut changes = Vec::new();
            for (id, text) in batch {
                match text {
                    Some(t) => {
                        model.insert(*id, words(t));
                        changes.push(put(*id, t));
                    }
                    None => {
                        model.remove(id);
                        changes.push(DocChange::Remove { id: *id });
                    }
                }
            }
            ix.write(changes).unwrap();
        }
        let report = ix.check().unwrap();
        prop_assert!(report.problems.is_empty(), "{:?}", report.problems);
        prop_assert_eq!(ix.len().unwrap(), model.len() as u64);
        for q in &queries {
            let text = query_text(q);
            let want: Vec<u64> = model.iter().filter(|(_, d)| model_matches(q, d)).map(|(id, _)| *id).collect();
            prop_assert_eq!(ix.count(&text).unwrap(), want.len() as u64, "count {}", text);
            let every = ix.search(&text, usize::MAX >> 1).unwrap();
            let mut ids: Vec<u64> = every.iter().map(|h| h.id).collect();
            ids.sort_unstable();
            prop_assert_eq!(&ids, &want, "matches of {}", text);
            // The pruned top k is the best k of the full ranking.
            let top = ix.search(&text, k).unwrap();
            let best: Vec<u64> = every.iter().take(k).map(|h| h.id).collect();
            let got: Vec<u64> = top.iter().map(|h| h.id).collect();
            prop_assert_eq!(got, best, "top {} of {}", k, text);
        }
    }
}

/// A clause of the whole syntax, as text.
fn rich_clause() -> impl Strategy<Value = String> {
    let word = prop::sample::select(WORDS).prop_map(|w| w.to_string());
    let atom = prop_oneof![
        3 => word.clone(),
        1 => word.clone().prop_map(|w| format!("{}*", &w[..1])),
        1 => word.clone().prop_map(|w| format!("{}?{}", &w[..1], &w[2..])),
        1 => word.clone().prop_map(|w| format!("{w}~")),
        1 => (word.clone(), word.clone()).prop_map(|(a, b)| format!("[{a} TO {b}]")),
        1 => (word.clone(), word.clone(), 0u32..3).prop_map(|(a, b, s)| format!("\"{a} {b}\"~{s}")),
        1 => (word.clone(), word.clone()).prop_map(|(a, b)| format!("({a} OR {b})")),
        1 => (word.clone(), word).prop_map(|(a, b)| format!("(+{a} -{b})")),
        1 => Just("*:*".to_string()),
    ];
    (prop::sample::select(&["", "", "+", "-"][..]), atom).prop_map(|(s, a)| format!("{s}{a}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every form of the syntax: the index answers what the in-memory evaluator (no index,
    /// one document at a time) answers.
    #[test]
    fn the_index_agrees_with_the_in_memory_evaluator(
        docs in prop::collection::vec(doc_text(), 1..40),
        queries in prop::collection::vec(prop::collection::vec(rich_clause(), 1..4), 10),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (_env, ix) = open(dir.path(), AnalyzerConfig::default());
        ix.write(docs.iter().enumerate().map(|(i, t)| put(i as u64, t)).collect()).unwrap();
        let texts: Vec<&str> = docs.iter().map(String::as_str).collect();
        for q in &queries {
            let text = q.join(" ");
            let parsed = datalith::search::parse_query(&text, ix.analyzer()).unwrap();
            let mut want: Vec<u64> = datalith::search::naive::search_texts(&parsed, ix.analyzer(), &texts)
                .iter()
                .map(|h| h.id)
                .collect();
            want.sort_unstable();
            let mut got: Vec<u64> = ix.search(&text, usize::MAX >> 1).unwrap().iter().map(|h| h.id).collect();
            got.sort_unstable();
            prop_assert_eq!(&got, &want, "{}", text);
            prop_assert_eq!(ix.count(&text).unwrap(), want.len() as u64, "count {}", text);
        }
    }
}
