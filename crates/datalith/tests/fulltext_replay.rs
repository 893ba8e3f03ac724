//! Full-text indexes rebuilt by replaying the write-ahead log: transactions writing
//! `:db/fulltext` values (creations, card-one updates, card-many values, retractions, a
//! retracted entity, a full-text attribute installed later) and KV search index
//! writes, several sharing commit groups, all acknowledged while LMDB holds none of them (or
//! holds them, the log not yet checkpointed). The directory as a kill leaves it is reopened:
//! every search answers exactly as before (values, scores, counts) and `check` is clean.

use std::path::Path;
use std::time::Duration;

use datalith::edn::{to_edn_string, Edn};
use datalith::search::{AnalyzerConfig, DocChange, SearchIndex};
use datalith::{Database, DbOptions};

fn options() -> DbOptions {
    let mut o = DbOptions::default();
    // Nothing checkpointed, nothing written into LMDB by the applier or by readers: the
    // acknowledged groups are in the log alone until `apply_logged`.
    o.env.log_checkpoint_interval = Duration::from_secs(3600);
    o.env.log_checkpoint_bytes = u64::MAX;
    o.env.log_checkpoint_freed_bytes = u64::MAX;
    o.env.log_apply_delay = Duration::from_secs(3600);
    o.env.log_readers_apply = false;
    o
}

const SCHEMA: &str = r#"[{:db/ident :doc/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :doc/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/fulltext true}
  {:db/ident :doc/tag :db/valueType :db.type/string :db/cardinality :db.cardinality/many :db/fulltext true}]"#;

/// Transactions in order (those in one inner list are submitted together and share groups),
/// with the KV search writes submitted beside them.
fn steps() -> Vec<(Vec<String>, Vec<Vec<DocChange>>)> {
    let put = |id: u64, text: &str| DocChange::Put {
        id,
        text: text.into(),
    };
    let many: Vec<String> = (0..20)
        .map(|i| {
            format!(
                r#"[{{:doc/name "n{i}" :doc/title "note {i} about {}" :doc/tag ["t{}" "shared tag"]}}]"#,
                ["foxes", "hens", "red fox", "lazy dogs"][i % 4],
                i % 3
            )
        })
        .collect();
    vec![
        (vec![SCHEMA.to_string()], vec![]),
        (
            vec![
                r#"[{:doc/name "a" :doc/title "The quick brown fox" :doc/tag ["animal" "fast runner"]}
                    {:doc/name "b" :doc/title "A red fox and a red hen"}
                    {:doc/name "c" :doc/title "Lazy dogs sleep" :doc/tag "animal"}]"#
                    .to_string(),
            ],
            vec![vec![
                put(1, "The quick brown fox jumps over the lazy dog"),
                put(2, "A red fox and a red hen"),
                put(3, "Hiking in the hills"),
            ]],
        ),
        (
            many,
            (10..30)
                .map(|i| vec![put(i, &format!("doc {i} fox {}", "hen ".repeat(i as usize % 4)))])
                .collect(),
        ),
        (
            vec![
                r#"[{:doc/name "c" :doc/title "Sleepy cats"}]"#.to_string(),
                r#"[[:db/retract [:doc/name "a"] :doc/tag "animal"]]"#.to_string(),
                r#"[[:db/retractEntity [:doc/name "n3"]]]"#.to_string(),
                r#"[[:db/retract [:doc/name "n4"] :doc/title]]"#.to_string(),
            ],
            vec![
                vec![put(2, "a blue whale"), DocChange::Remove { id: 3 }],
                vec![DocChange::Remove { id: 12 }, put(40, "fox fox fox")],
            ],
        ),
        // A full-text attribute installed later (an installed attribute's :db/fulltext is
        // never altered), and values of it beside the others in one group.
        (
            vec![r#"[{:db/ident :doc/plain :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/fulltext true}]"#.to_string()],
            vec![],
        ),
        (
            (0..6)
                .map(|i| format!(r#"[{{:doc/name "n{i}" :doc/plain "plain {i} fox"}}]"#))
                .collect(),
            vec![],
        ),
        (
            vec![r#"[{:doc/name "n5" :doc/plain "a fox in a box"}]"#.to_string()],
            vec![vec![put(3, "back again: fox")]],
        ),
    ]
}

const WORDS: &[&str] = &[
    "fox",
    "red",
    "hen",
    "animal",
    "cats",
    "dogs",
    "tag",
    "box",
    "+fox +red",
    "\\\"red fox\\\"",
    "fox -hen",
    "no*",
];

/// Every answer that must survive: per attribute and query, the entities, values and scores;
/// per KV query, the hits, the count; the KV index's length.
fn answers(db: &Database, ix: &SearchIndex) -> Vec<String> {
    let snapshot = db.db().unwrap();
    let mut out = Vec::new();
    for attr in [":doc/title", ":doc/tag", ":doc/plain"] {
        for w in WORDS {
            let q = format!(
                r#"[:find ?n ?v ?s :where [(fulltext $ {attr} "{w}") [[?e ?v _ ?s]]] [?e :doc/name ?n]]"#
            );
            let got = match snapshot.q(&q, &[]) {
                Ok(Edn::Set(mut rows)) => {
                    rows.sort_by_key(to_edn_string);
                    to_edn_string(&Edn::Vector(rows))
                }
                other => format!("{other:?}"),
            };
            out.push(format!("{attr} {w}: {got}"));
        }
    }
    for w in WORDS {
        let w = w.replace("\\\"", "\"");
        out.push(format!(
            "kv {w}: {:?} count {:?}",
            ix.search(&w, 8)
                .map(|hits| hits.iter().map(|h| (h.id, h.score)).collect::<Vec<_>>()),
            ix.count(&w)
        ));
    }
    out.push(format!("kv length {:?}", ix.len()));
    out
}

/// Copies the files a kill leaves: the data file (as the page cache holds it) and, unless
/// `log` is false, the log.
fn copy(live: &Path, log: bool) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let mut names = vec!["data.mdb"];
    if log {
        names.push(datalith::kv::wal::LOG_FILE);
    }
    for name in names {
        std::fs::copy(live.join(name), copy.path().join(name)).unwrap();
    }
    copy
}

fn reopen(dir: &Path) -> (Database, SearchIndex) {
    let db = Database::open(dir, DbOptions::default()).unwrap();
    let ix = db
        .env()
        .search_index("docs", AnalyzerConfig::default())
        .unwrap();
    (db, ix)
}

#[test]
fn replaying_the_log_rebuilds_the_full_text_indexes() {
    let live = tempfile::tempdir().unwrap();
    let db = Database::open(live.path(), options()).unwrap();
    let ix = db
        .env()
        .search_index("docs", AnalyzerConfig::default())
        .unwrap();
    for (txs, writes) in steps() {
        let handles: Vec<_> = txs.iter().map(|t| db.transact_async(t.as_str())).collect();
        let kv: Vec<_> = writes.into_iter().map(|w| ix.write_async(w)).collect();
        for (h, t) in handles.into_iter().zip(&txs) {
            h.wait().unwrap_or_else(|e| panic!("{t}: {e}"));
        }
        for h in kv {
            h.wait().unwrap();
        }
    }
    // Copied before anything reads (a check may write LMDB whole first).
    let unapplied = copy(live.path(), true);
    let data_alone = copy(live.path(), false);
    let expected = answers(&db, &ix);
    // The answers are worth comparing: rows of each kind are there (spot checks).
    for want in [
        r#":doc/title fox: [["a" "The quick brown fox""#,
        r#":doc/title cats: [["c" "Sleepy cats" 1.0]]"#,
        r#":doc/tag animal: [["c" "animal" 1.0]]"#,
        r#":doc/plain box: [["n5" "a fox in a box" 1.0]]"#,
        "kv fox: Ok([(40, ",
        "kv length Ok(23)",
    ] {
        assert!(
            expected.iter().any(|a| a.starts_with(want)),
            "no answer starting {want}: {expected:#?}"
        );
    }
    let live_check = db.db().unwrap().check().unwrap();
    assert!(live_check.is_ok(), "{:?}", live_check.problems);

    // Rows: (what is copied, whether LMDB was written first) -> whether the writes are
    // there. The data file alone shows that LMDB did not hold them: the log did.
    db.env().apply_logged().unwrap();
    let applied = copy(live.path(), true);
    drop((ix, db));
    let cases = [
        ("log, LMDB without the writes", unapplied, true),
        ("log, LMDB with the writes", applied, true),
        ("LMDB without the writes, no log", data_alone, false),
    ];
    for (name, dir, there) in cases {
        let (db, ix) = reopen(dir.path());
        let got = answers(&db, &ix);
        if there {
            assert_eq!(got, expected, "{name}");
        } else {
            assert_eq!(ix.len().unwrap(), 0, "{name}");
            assert_ne!(got, expected, "{name}");
        }
        let check = db.db().unwrap().check().unwrap();
        assert!(check.is_ok(), "{name}: {:?}", check.problems);
        let kv_check = ix.check().unwrap();
        assert!(
            kv_check.problems.is_empty(),
            "{name}: {:?}",
            kv_check.problems
        );
    }
}
