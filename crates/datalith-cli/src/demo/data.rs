//! The demo data: the 20,000 people of the query benchmark (seed 003's dataset, from
//! `datalith-testdata` with a fixed seed so every demo database is the same), plus a small project graph with
//! refs, a component, cardinality-many values and a recursive dependency chain for rules.

use datalith::codec::Keyword;
use datalith::edn::Edn;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// The generator's seed (printed by the tour so the data can be reproduced).
pub const SEED: u64 = 20_000;
/// People in the demo.
pub const PEOPLE: usize = 20_000;
/// People per transaction while loading.
pub const CHUNK: usize = 1000;

/// The schema, as EDN text (shown by `.schema` later, so it documents itself).
pub const SCHEMA: &str = r#"[
 {:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/doc "First name"}
 {:db/ident :last-name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/doc "Last name"}
 {:db/ident :sex :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one :db/doc ":male or :female"}
 {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
 {:db/ident :salary :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
 {:db/ident :follows :db/valueType :db.type/ref :db/cardinality :db.cardinality/many
  :db/doc "People this person follows"}
 {:db/ident :project/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :project/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
 {:db/ident :project/lead :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
 {:db/ident :project/depends-on :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
 {:db/ident :project/tasks :db/valueType :db.type/ref :db/cardinality :db.cardinality/many
  :db/isComponent true :db/doc "Tasks belong to their project (retracted with it)"}
 {:db/ident :task/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :task/done :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}
 {:db/ident :task/hours :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
]"#;

fn kw(s: &str) -> Edn {
    Edn::Keyword(Keyword::parse(s))
}

fn s(x: &str) -> Edn {
    Edn::String(x.to_string())
}

/// The people (`datalith-testdata`, the benchmark's generator), in transactions of [`CHUNK`]
/// maps; the `i`-th person loaded has tempid `"p<i>"`.
pub fn people() -> Vec<Edn> {
    let mut out = Vec::new();
    let mut chunk = Vec::with_capacity(CHUNK);
    for (i, p) in datalith_testdata::generate(PEOPLE as u64, SEED)
        .iter()
        .enumerate()
    {
        chunk.push(Edn::Map(vec![
            (kw(":db/id"), s(&format!("p{i}"))),
            (kw(":name"), s(&p.name)),
            (kw(":last-name"), s(&p.last_name)),
            (kw(":sex"), kw(p.sex_keyword())),
            (kw(":age"), Edn::Long(p.age)),
            (kw(":salary"), Edn::Long(p.salary)),
        ]));
        if chunk.len() == CHUNK {
            out.push(Edn::Vector(std::mem::take(&mut chunk)));
        }
    }
    if !chunk.is_empty() {
        out.push(Edn::Vector(chunk));
    }
    out
}

/// `:follows` edges among the first 200 people (ids as loaded), from the same seed.
pub fn follows(ids: &[u64]) -> Edn {
    let mut rng = StdRng::seed_from_u64(SEED + 1);
    let n = ids.len().min(200);
    let mut ops = Vec::new();
    for i in 0..n {
        for _ in 0..rng.random_range(1..4usize) {
            let j = rng.random_range(0..n);
            if j != i {
                ops.push(Edn::Vector(vec![
                    kw(":db/add"),
                    Edn::Long(ids[i] as i64),
                    kw(":follows"),
                    Edn::Long(ids[j] as i64),
                ]));
            }
        }
    }
    Edn::Vector(ops)
}

/// The project graph: `(name, tags, lead index, depends-on, tasks (title, done, hours))`.
const PROJECTS: &[(&str, &[&str], usize, &[&str], &[(&str, bool, i64)])] = &[
    (
        "storage",
        &[":lmdb", ":core"],
        0,
        &[],
        &[
            ("EAV and AVE indexes", true, 40),
            ("statistics at commit", true, 12),
        ],
    ),
    (
        "query-engine",
        &[":datalog", ":core"],
        1,
        &["storage"],
        &[
            ("cost-based planner", true, 60),
            ("rules", true, 30),
            ("explain", false, 8),
        ],
    ),
    (
        "shell",
        &[":cli"],
        2,
        &["query-engine"],
        &[("multi-line input", true, 6), ("tab completion", true, 4)],
    ),
    (
        "benchmarks",
        &[":perf"],
        3,
        &["query-engine", "storage"],
        &[("peer harnesses", false, 20), ("plots", false, 6)],
    ),
    (
        "docs",
        &[":docs"],
        4,
        &["shell"],
        &[("quick start", true, 2)],
    ),
    (
        "release",
        &[":ops"],
        5,
        &["docs", "benchmarks"],
        &[("changelog", false, 3), ("tag 0.1.0", false, 1)],
    ),
];

/// The projects as tx data (leads are people ids as loaded).
pub fn projects(ids: &[u64]) -> Edn {
    let mut items = Vec::new();
    for (name, tags, lead, deps, tasks) in PROJECTS {
        let mut m = vec![
            (kw(":db/id"), s(name)),
            (kw(":project/name"), s(name)),
            (
                kw(":project/tags"),
                Edn::Set(tags.iter().map(|t| kw(t)).collect()),
            ),
            (
                kw(":project/lead"),
                Edn::Long(ids.get(*lead * 7).copied().unwrap_or(ids[0]) as i64),
            ),
            (
                kw(":project/tasks"),
                Edn::Vector(
                    tasks
                        .iter()
                        .map(|(title, done, hours)| {
                            Edn::Map(vec![
                                (kw(":task/title"), s(title)),
                                (kw(":task/done"), Edn::Bool(*done)),
                                (kw(":task/hours"), Edn::Long(*hours)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ];
        if !deps.is_empty() {
            m.push((
                kw(":project/depends-on"),
                Edn::Vector(deps.iter().map(|d| s(d)).collect()),
            ));
        }
        items.push(Edn::Map(m));
    }
    Edn::Vector(items)
}
