//! The suite's files: datasets, cases, Datomic's recorded answers, the documented answers
//! (`documented-answers.edn`, not from the peer) and the pending list, read with Datalith's
//! own EDN reader.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use datalith::edn::{read_one, to_edn_string, Edn};

/// One dataset: schema tx data, then data tx data, then each of `txs` (bases 1, 2, ... of a
/// time case; basis 0 is the state after the data).
pub struct Dataset {
    pub schema: Edn,
    pub data: Edn,
    pub txs: Vec<Edn>,
}

/// What a case does on its dataset.
pub enum Action {
    /// `d/q` with the dataset as the first source, then `inputs`.
    Query { query: Edn, inputs: Vec<Edn> },
    /// `d/pull` of `pattern` on the entity `eid` (a lookup ref or an ident).
    Pull { pattern: Edn, eid: Edn },
    /// Each tx data in turn, then the query `then` on the database after them.
    Tx {
        txs: Vec<Edn>,
        then: Edn,
        then_inputs: Vec<Edn>,
    },
    /// Each of `txs`, then `report`: the answer is that transaction's report, as
    /// `{:tempids [string ...] :tx-data [[e attribute v added] ...]}` (the transaction entity
    /// `:conformance/tx`, `:db/txInstant`'s value `:conformance/instant`, other entities
    /// placeholders).
    Report { txs: Vec<Edn>, report: Edn },
    /// A case with `:db` (the time group): each of `txs` (bases after the dataset's), then
    /// `body` on the time view `view` of the database after them.
    Time {
        txs: Vec<Edn>,
        /// `:now`, `:history`, or a vector of steps (`[:as-of 1 :history]`).
        view: Edn,
        body: TimeBody,
    },
}

/// What a time case does on its view.
pub enum TimeBody {
    /// `d/q` with the view as the first source, then `inputs` (which may hold
    /// `{:conformance/time view}`, `{:conformance/log true}`, `{:conformance/tx k}`,
    /// `{:conformance/t k}` and `{:conformance/db name}`).
    Query { query: Edn, inputs: Vec<Edn> },
    /// `d/pull` of `pattern` on `eid` (nil when it names no entity in the view).
    Pull { pattern: Edn, eid: Edn },
    /// `d/datoms` of the view: `[index & components]`, each datom answered as the row
    /// `[attribute value tx-position added]` (tx-position: the basis whose transaction wrote
    /// it, 0 for the dataset's schema and data).
    Datoms { spec: Vec<Edn> },
}

/// One case of `cases/<group>.edn`.
pub struct Case {
    /// The id's text without the colon, `group/name`.
    pub id: String,
    pub group: String,
    pub dataset: String,
    pub action: Action,
    /// Pull results are compared without their `:db/id` entries.
    pub without_db_id: bool,
    /// Entity ids in the answer are compared as the placeholder `:conformance/id`
    /// (`:ids-as-placeholders true`): answers that hold entities, compared by shape and count.
    pub ids_as_placeholders: bool,
}

/// Datomic's answer to a case.
pub enum Answer {
    Result(Edn),
    Error {
        db_error: Option<String>,
        message: String,
    },
}

/// The suite's folder; `CONFORMANCE_DIR` names another one laid out the same way (for a
/// suite of generated cases answered by the peer, compared without being kept).
pub fn suite_dir() -> PathBuf {
    match std::env::var_os("CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance"),
    }
}

fn read_file(path: &Path) -> Edn {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    read_one(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn get<'a>(map: &'a Edn, key: &str) -> Option<&'a Edn> {
    match map {
        Edn::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| matches!(k, Edn::Keyword(kw) if kw.to_string() == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn keyword_text(e: &Edn, what: &str) -> String {
    match e {
        Edn::Keyword(k) => k.to_symbol_text(),
        other => panic!("{what} must be a keyword, not {}", to_edn_string(other)),
    }
}

fn seq_of(e: Option<&Edn>) -> Vec<Edn> {
    e.and_then(Edn::as_seq)
        .map(<[Edn]>::to_vec)
        .unwrap_or_default()
}

pub fn datasets() -> BTreeMap<String, Dataset> {
    let Edn::Map(pairs) = read_file(&suite_dir().join("datasets.edn")) else {
        panic!("datasets.edn must be a map");
    };
    pairs
        .iter()
        .map(|(name, ds)| {
            let name = keyword_text(name, "a dataset name");
            let field = |k: &str| {
                get(ds, k)
                    .cloned()
                    .unwrap_or_else(|| panic!("dataset {name} has no {k}"))
            };
            let dataset = Dataset {
                schema: field(":schema"),
                data: field(":data"),
                txs: seq_of(get(ds, ":txs")),
            };
            (name, dataset)
        })
        .collect()
}

/// The tuple-valued attributes the datasets install (printed, `:pt/xy`): their vector values
/// are one value each, so pull results keep their order.
pub fn tuple_attributes(datasets: &BTreeMap<String, Dataset>) -> BTreeSet<String> {
    let tuple = Edn::kw(":db.type/tuple");
    datasets
        .values()
        .filter_map(|d| d.schema.as_seq())
        .flatten()
        .filter(|attr| get(attr, ":db/valueType") == Some(&tuple))
        .filter_map(|attr| get(attr, ":db/ident").map(to_edn_string))
        .collect()
}

pub fn cases() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(suite_dir().join("cases"))
        .expect("the cases directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "edn"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let Edn::Vector(items) = read_file(&f) else {
            panic!("{} must be a vector of cases", f.display());
        };
        out.extend(items.iter().map(case));
    }
    out
}

fn case(m: &Edn) -> Case {
    let id = get(m, ":id").unwrap_or_else(|| panic!("a case without :id: {}", to_edn_string(m)));
    let Edn::Keyword(kw) = id else {
        panic!("case id {} is not a keyword", to_edn_string(id));
    };
    let id = kw.to_symbol_text();
    let group = kw.namespace().unwrap_or("none").to_string();
    let dataset = keyword_text(
        get(m, ":dataset").unwrap_or_else(|| panic!("{id} has no :dataset")),
        ":dataset",
    );
    let action = if let Some(view) = get(m, ":db") {
        let body = if let Some(query) = get(m, ":query") {
            TimeBody::Query {
                query: query.clone(),
                inputs: seq_of(get(m, ":inputs")),
            }
        } else if let Some(pattern) = get(m, ":pull") {
            TimeBody::Pull {
                pattern: pattern.clone(),
                eid: get(m, ":eid")
                    .cloned()
                    .unwrap_or_else(|| panic!("{id} pulls without :eid")),
            }
        } else if let Some(spec) = get(m, ":datoms") {
            TimeBody::Datoms {
                spec: seq_of(Some(spec)),
            }
        } else {
            panic!("{id} has :db but no :query, :pull or :datoms")
        };
        Action::Time {
            txs: seq_of(get(m, ":txs")),
            view: view.clone(),
            body,
        }
    } else if let Some(query) = get(m, ":query") {
        Action::Query {
            query: query.clone(),
            inputs: seq_of(get(m, ":inputs")),
        }
    } else if let Some(pattern) = get(m, ":pull") {
        Action::Pull {
            pattern: pattern.clone(),
            eid: get(m, ":eid")
                .cloned()
                .unwrap_or_else(|| panic!("{id} pulls without :eid")),
        }
    } else if let Some(report) = get(m, ":report") {
        assert!(
            get(m, ":ids-as-placeholders") == Some(&Edn::Bool(true)),
            "{id}: a report case compares entities as placeholders"
        );
        Action::Report {
            txs: seq_of(get(m, ":txs")),
            report: report.clone(),
        }
    } else {
        let txs = match (get(m, ":txs"), get(m, ":tx")) {
            (Some(txs), _) => seq_of(Some(txs)),
            (None, Some(tx)) => vec![tx.clone()],
            (None, None) => panic!("{id} has no :query, :pull, :tx or :txs"),
        };
        Action::Tx {
            txs,
            then: get(m, ":then")
                .cloned()
                .unwrap_or_else(|| panic!("{id} has no :then query")),
            then_inputs: seq_of(get(m, ":then-inputs")),
        }
    };
    Case {
        id,
        group,
        dataset,
        action,
        without_db_id: get(m, ":without-db-id") == Some(&Edn::Bool(true)),
        ids_as_placeholders: get(m, ":ids-as-placeholders") == Some(&Edn::Bool(true)),
    }
}

pub fn answers() -> BTreeMap<String, Answer> {
    let Edn::Map(pairs) = read_file(&suite_dir().join("datomic-answers.edn")) else {
        panic!("datomic-answers.edn must be a map");
    };
    pairs
        .iter()
        .filter(|(k, _)| to_edn_string(k) != ":conformance/datomic-version")
        .map(|(id, a)| {
            let id = keyword_text(id, "an answer id");
            let answer = answer(&id, a);
            (id, answer)
        })
        .collect()
}

/// `{:result value}` or `{:error {:db/error kw :message str}}`.
fn answer(id: &str, a: &Edn) -> Answer {
    match (get(a, ":result"), get(a, ":error")) {
        (Some(r), _) => Answer::Result(r.clone()),
        (None, Some(err)) => Answer::Error {
            db_error: get(err, ":db/error")
                .filter(|e| **e != Edn::Nil)
                .map(to_edn_string),
            message: match get(err, ":message") {
                Some(Edn::String(s)) => s.clone(),
                _ => String::new(),
            },
        },
        (None, None) => panic!("answer {id} has neither :result nor :error"),
    }
}

/// The cases of `documented-answers.edn` with their `:expected` answers: derived from
/// Datomic's documentation, not recorded from the peer (which cannot give them).
pub fn documented() -> Vec<(Case, Answer)> {
    let path = suite_dir().join("documented-answers.edn");
    if !path.exists() {
        return Vec::new();
    }
    let Edn::Vector(items) = read_file(&path) else {
        panic!("documented-answers.edn must be a vector of cases");
    };
    items
        .iter()
        .map(|m| {
            let c = case(m);
            let expected = get(m, ":expected")
                .unwrap_or_else(|| panic!("documented case {} has no :expected", c.id));
            let a = answer(&c.id, expected);
            (c, a)
        })
        .collect()
}

/// The ids expected to fail today, with why.
pub fn pending() -> BTreeMap<String, String> {
    let Edn::Map(pairs) = read_file(&suite_dir().join("pending.edn")) else {
        panic!("pending.edn must be a map of case id to reason");
    };
    pairs
        .iter()
        .map(|(id, why)| {
            let why = match why {
                Edn::String(s) => s.clone(),
                other => to_edn_string(other),
            };
            (keyword_text(id, "a pending id"), why)
        })
        .collect()
}
