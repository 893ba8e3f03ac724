//! `Db::q_each` and `datalith::q_each`: a collection result handed on an item at a time,
//! its first scan read in parts (or its first function's elements made rows in parts), gives exactly the items `q` gives (in the engine's order),
//! whatever the part size and the threads; a query read in parts holds a part's rows, not
//! the result's; other shapes come whole.

use datalith::edn::{read_one, Edn};
use datalith::query::{ItemSink, QueryError, QueryOptions};
use datalith::{Database, DbOptions, Input, ValueIndex};

const SCHEMA: &str = r#"[
  {:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
  {:db/ident :friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
  {:db/ident :id :db/valueType :db.type/long :db/cardinality :db.cardinality/one
   :db/unique :db.unique/identity}]"#;

fn people(n: usize) -> (tempfile::TempDir, Database) {
    people_in(n, ValueIndex::All)
}

/// `people` in a database of the given layout: with `ValueIndex::Declared` none of the
/// attributes but `:id` (unique) and `:friend` (a ref) has AVE entries.
fn people_in(n: usize, layout: ValueIndex) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = DbOptions::default();
    options.value_index = layout;
    let db = Database::open(dir.path(), options).unwrap();
    db.transact(SCHEMA).unwrap();
    let maps: Vec<String> = (0..n)
        .map(|i| {
            // Names and ages repeat (runs of one value longer than a part), tags are a
            // cardinality-many attribute with shared values.
            format!(
                "{{:db/id \"p{i}\" :id {i} :name \"n{}\" :age {} :tag [:t{} :t{}] :friend [\"p{}\"]}}",
                i % 50,
                i % 7,
                i % 3,
                i % 5,
                (i + 1) % n
            )
        })
        .collect();
    db.transact(format!("[{}]", maps.join(" ")).as_str())
        .unwrap();
    (dir, db)
}

/// Collects the items, and whether they were said to be a set.
#[derive(Default)]
struct Collect {
    set: Option<bool>,
    items: Vec<Edn>,
    /// Fail with `Cancelled` at this item.
    stop_at: Option<usize>,
}

impl ItemSink for Collect {
    fn begin(&mut self, set: bool) -> Result<(), QueryError> {
        assert!(self.set.is_none(), "begin is called once");
        self.set = Some(set);
        Ok(())
    }

    fn item(&mut self, item: &Edn) -> Result<(), QueryError> {
        assert!(self.set.is_some(), "begin comes before the items");
        if self.stop_at == Some(self.items.len()) {
            return Err(QueryError::Cancelled);
        }
        self.items.push(item.clone());
        Ok(())
    }
}

/// Queries whose items are handed on; `(query, inputs)`. Those whose first step scans an
/// attribute and keeps the value (or a cardinality-one entity) are read in parts.
const HANDED: &[(&str, &[&str])] = &[
    // One scan: the value kept, the entity kept (cardinality one), both.
    ("[:find ?n :where [?e :name ?n]]", &[]),
    ("[:find ?e :where [?e :age ?a]]", &[]),
    ("[:find ?e ?n :where [?e :name ?n]]", &[]),
    ("[:find [?n ...] :where [?e :name ?n]]", &[]),
    ("[:find ?n :where [_ :name ?n]]", &[]),
    ("[:find ?t :where [_ :tag ?t]]", &[]),
    // Cardinality many: the entity alone is kept (whole), the value kept (parts).
    ("[:find ?e :where [?e :tag ?t]]", &[]),
    ("[:find ?t :where [?e :tag ?t]]", &[]),
    ("[:find ?e ?t :where [?e :tag ?t]]", &[]),
    // The entities of one value, in parts of entities (the entity kept), or whole.
    ("[:find ?e ?n :where [?e :age 3] [?e :name ?n]]", &[]),
    ("[:find ?e :where [?e :tag :t1]]", &[]),
    ("[:find ?n :where [?e :tag :t1] [?e :name ?n]]", &[]),
    // Later steps: joins, tests, functions, not, or, a rule, pulls.
    ("[:find ?n ?a :where [?e :name ?n] [?e :age ?a]]", &[]),
    (
        "[:find ?e ?f :where [?e :id ?i] [?e :friend ?f] [?f :age ?a] [(> ?a 3)]]",
        &[],
    ),
    (
        "[:find ?i ?s :where [?e :id ?i] [(* ?i 2) ?d] [(str ?d) ?s]]",
        &[],
    ),
    ("[:find ?i :where [?e :id ?i] (not [?e :tag :t1])]", &[]),
    (
        "[:find ?i :where [?e :id ?i] (or [?e :tag :t0] [?e :age 3])]",
        &[],
    ),
    (
        "[:find ?i ?j :in $ % :where [?e :id ?i] (pal ?e ?f) [?f :id ?j]]",
        &["[[(pal ?a ?b) [?a :friend ?b]] [(pal ?a ?b) [?b :friend ?a]]]"],
    ),
    (
        "[:find (pull ?e [:name {:friend [:id]}]) ?i :where [?e :id ?i] [(< ?i 40)]]",
        &[],
    ),
    ("[:find [(pull ?e [:id :age]) ...] :where [?e :id]]", &[]),
    // Bags, ranges on the scan, inputs, nothing found.
    ("[:find ?a :with ?e :where [?e :age ?a]]", &[]),
    (
        "[:find ?i :where [?e :id ?i] [(>= ?i 10)] [(< ?i 90)]]",
        &[],
    ),
    (
        "[:find ?e ?n :in $ ?min :where [?e :name ?n] [?e :age ?a] [(>= ?a ?min)]]",
        &["4"],
    ),
    ("[:find ?x ?y :in [[?x ?y]]]", &["[[1 2] [3 4] [1 2]]"]),
    // A function's collection first: its elements made rows a part at a time when the
    // element is kept (duplicates and order of the collection whatever they are), whole when
    // it is not.
    ("[:find ?x :where [(range 0 500) [?x ...]]]", &[]),
    (
        "[:find ?x ?s :where [(range 0 300) [?x ...]] [(str ?x) ?s]]",
        &[],
    ),
    (
        "[:find ?x ?n :where [(range 0 60) [?x ...]] [?e :id ?x] [?e :name ?n]]",
        &[],
    ),
    ("[:find ?x :where [(ground [3 1 2 1 3]) [?x ...]]]", &[]),
    (
        "[:find [?x ...] :where [(ground [3 1 2 1 3]) [?x ...]]]",
        &[],
    ),
    (
        "[:find ?y :where [(range 0 100) [?x ...]] [(mod ?x 7) ?y]]",
        &[],
    ),
    (
        "[:find ?y :with ?x :where [(range 0 100) [?x ...]] [(mod ?x 7) ?y]]",
        &[],
    ),
    (
        "[:find ?x ?k :in $ ?k :where [(range 0 ?k) [?x ...]] (not [(= ?x 5)])]",
        &["200"],
    ),
    ("[:find ?x :where [(range 0 0) [?x ...]]]", &[]),
    // A function's relation first: its tuples' first values, a shorter one left out,
    // duplicates whatever they are; whole when a column is not kept or is a blank.
    (
        "[:find ?a ?b :where [(ground [[5 6] [1 2] [3 4] [1 2] [5 6 7] [8] [0 9]]) [[?a ?b]]]]",
        &[],
    ),
    (
        "[:find ?a ?b ?n :where [(ground [[3 :z] [1 :x] [2 :y] [1 :x] [40 :w]]) [[?a ?b]]] [?e :id ?a] [?e :name ?n]]",
        &[],
    ),
    (
        "[:find ?a :where [(ground [[1 2] [1 3] [2 2] [4 1]]) [[?a ?b]]]]",
        &[],
    ),
    (
        "[:find ?a :where [(ground [[1 2] [1 3] [2 2] [4 1]]) [[?a _]]]]",
        &[],
    ),
    // An input of many rows: in parts of its rows when its variables are kept (duplicates
    // in it whatever they are), whole when not.
    (
        "[:find ?x ?n :in $ [?x ...] :where [?e :id ?x] [?e :name ?n]]",
        &["[3 1 4 1 5 9 2 6 5 3 5 8 9 7 9 3 2 3 8 4 6 2 6 4 3 3 8 3 2 7 9 5 299 300 -1]"],
    ),
    (
        "[:find ?n :in $ [?x ...] :where [?e :id ?x] [?e :name ?n]]",
        &["[3 1 4 1 5 9 2 6 5 3 5 8 9 7 9 3 2 3 8 4 6 2 6 4 3 3 8 3 2 7 9 5]"],
    ),
    (
        "[:find ?a ?b ?e :in $ [[?a ?b]] :where [?e :id ?a] [?e :age ?b]]",
        &["[[1 1] [2 2] [3 3] [8 1] [8 1] [15 1] [7 0] [7 1] [14 0]]"],
    ),
    ("[:find ?e :where [?e :name \"nobody\"]]", &[]),
    ("[:find ?e :where [?e :id ?i] [(> ?i 100000)]]", &[]),
];

/// Queries answered whole (the sink sees nothing).
const WHOLE: &[&str] = &[
    "[:find (count ?e) . :where [?e :name]]",
    "[:find ?a (count ?e) :where [?e :age ?a]]",
    "[:find ?n . :where [?e :name ?n]]",
    "[:find [?n ?a] :where [?e :name ?n] [?e :age ?a]]",
    "{:find [?n] :where [[?e :name ?n]] :limit 5}",
    "{:find [?n ?a] :where [[?e :name ?n] [?e :age ?a]] :order-by [?a]}",
];

fn inputs(texts: &[&str]) -> Vec<Edn> {
    texts.iter().map(|t| read_one(t).unwrap()).collect()
}

/// Items in one order (a set's order is the engine's), as text.
fn sorted(items: &[Edn]) -> Vec<String> {
    let mut v: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    v.sort();
    v
}

fn items_of(result: &Edn) -> (&[Edn], bool) {
    match result {
        Edn::Set(items) => (items, true),
        Edn::Vector(items) => (items, false),
        other => panic!("a collection result, not {other}"),
    }
}

/// On either layout: a first step over an attribute without AVE entries is read in parts
/// of entities (`store::listed`), one over an attribute in AVE in parts of values. The
/// answers are those of every attribute in AVE.
#[test]
fn handed_items_are_the_querys_items_whatever_the_parts_and_threads() {
    let (_all_dir, all) = people(300);
    let (_declared_dir, declared) = people_in(300, ValueIndex::Declared);
    let all = all.db().unwrap();
    for (snapshot, layout) in [(all.clone(), "all"), (declared.db().unwrap(), "declared")] {
        handed_items_on(&all, &snapshot, layout);
    }
}

fn handed_items_on(all: &datalith::Db, snapshot: &datalith::Db, layout: &str) {
    for (query, texts) in HANDED {
        let args = inputs(texts);
        let whole = snapshot.q(query, &args).unwrap();
        let (expected, set) = items_of(&whole);
        let want = all.q(query, &args).unwrap();
        assert_eq!(
            sorted(items_of(&want).0),
            sorted(expected),
            "{query}: the {layout} layout's answer"
        );
        for part_rows in [1, 2, 7, 64, 100_000] {
            for threads in [1, 3] {
                let options = QueryOptions::default()
                    .part_rows(part_rows)
                    .threads(threads)
                    .spread_from_rows(4);
                let mut sink = Collect::default();
                let answer = snapshot.q_each(query, &args, &options, &mut sink).unwrap();
                assert!(answer.is_none(), "{query}: handed on");
                assert_eq!(sink.set, Some(set), "{query}");
                assert_eq!(
                    sorted(&sink.items),
                    sorted(expected),
                    "{query}, parts of {part_rows}, {threads} threads, {layout} layout"
                );
                // A set's items are told apart across parts: none comes twice.
                if set {
                    let mut seen = sorted(&sink.items);
                    seen.dedup();
                    assert_eq!(seen.len(), sink.items.len(), "{query}");
                }
            }
        }
    }
}

/// The parsed query says ahead of the run which results come in rows (what a client asks
/// before the answer arrives).
#[test]
fn the_parsed_query_tells_which_results_come_in_rows() {
    for (query, _) in HANDED {
        let ast = datalith::query::parse(query).unwrap();
        assert!(ast.comes_in_rows(), "{query}");
    }
    for query in WHOLE {
        let ast = datalith::query::parse(query).unwrap();
        assert!(!ast.comes_in_rows(), "{query}");
    }
}

#[test]
fn other_shapes_come_whole_and_the_sink_sees_nothing() {
    let (_dir, db) = people(60);
    let snapshot = db.db().unwrap();
    for query in WHOLE {
        let mut sink = Collect::default();
        let outcome = snapshot
            .q_each(query, &[], &QueryOptions::default(), &mut sink)
            .unwrap()
            .expect("whole");
        assert_eq!(outcome.result, snapshot.q(query, &[]).unwrap(), "{query}");
        assert!(sink.set.is_none() && sink.items.is_empty(), "{query}");
    }
    // A plan asked for comes whole, with the plan.
    let mut sink = Collect::default();
    let outcome = snapshot
        .q_each(
            "[:find ?n :where [?e :name ?n]]",
            &[],
            &QueryOptions::default().explain(true),
            &mut sink,
        )
        .unwrap()
        .expect("whole");
    assert!(outcome.plan.is_some());
    assert!(sink.items.is_empty());
}

/// The whole result's rows do not fit the memory limit, a part's do: read in parts, the
/// query answers; whole, it stops. Each row of `[?e ?n]` is counted at tens of bytes, so
/// 20,000 of them pass 256 KiB and 256 do not come near it.
#[test]
fn a_query_read_in_parts_holds_a_part_not_the_result() {
    let (_dir, db) = people(20_000);
    let snapshot = db.db().unwrap();
    let query = "[:find ?e ?n ?a :where [?e :id ?i] [?e :name ?n] [?e :age ?a]]";
    let limit = 256 * 1024;
    let whole = snapshot.q_with(query, &[], &QueryOptions::default().memory_limit(limit));
    assert!(
        matches!(whole, Err(QueryError::ResourceExhausted { .. })),
        "{whole:?}"
    );
    let mut sink = Collect::default();
    let options = QueryOptions::default().memory_limit(limit).part_rows(256);
    let answer = snapshot.q_each(query, &[], &options, &mut sink).unwrap();
    assert!(answer.is_none());
    assert_eq!(sink.items.len(), 20_000);
    // The entities of one value read in parts too (a third of the people have :t1).
    let mut sink = Collect::default();
    let options = QueryOptions::default().memory_limit(limit).part_rows(256);
    let query = "[:find ?e ?n ?a :where [?e :tag :t1] [?e :name ?n] [?e :age ?a]]";
    assert!(snapshot
        .q_each(query, &[], &options, &mut sink)
        .unwrap()
        .is_none());
    assert_eq!(
        sink.items.len(),
        items_of(&snapshot.q(query, &[]).unwrap()).0.len()
    );
    let whole = snapshot.q_with(query, &[], &QueryOptions::default().memory_limit(limit));
    assert!(
        matches!(whole, Err(QueryError::ResourceExhausted { .. })),
        "{whole:?}"
    );
    // A function's collection, its elements made rows a part at a time: the rows of 20,000
    // elements (two values each) pass 1 MiB, the elements alone (32 bytes each) do not.
    let query = "[:find ?x ?s :where [(range 0 20000) [?x ...]] [(str ?x) ?s]]";
    let limit = 1024 * 1024;
    let whole = snapshot.q_with(query, &[], &QueryOptions::default().memory_limit(limit));
    assert!(
        matches!(whole, Err(QueryError::ResourceExhausted { .. })),
        "{whole:?}"
    );
    let mut sink = Collect::default();
    let options = QueryOptions::default().memory_limit(limit).part_rows(256);
    assert!(snapshot
        .q_each(query, &[], &options, &mut sink)
        .unwrap()
        .is_none());
    assert_eq!(sink.items.len(), 20_000);
    // An input's deduplication counts the set it uses (a borrowed row each), not a second
    // copy of every row, and lets it go: 20,000 ids (~1.1 MiB of rows) answer under 1.9 MB
    // (they stopped there when the set counted each row whole, ~2.2 MiB).
    let ids = Edn::Vector((0..20_000).map(Edn::Long).collect());
    let under = QueryOptions::default().memory_limit(1_900_000);
    let mut sink = Collect::default();
    assert!(snapshot
        .q_each(
            "[:find ?x :in [?x ...]]",
            std::slice::from_ref(&ids),
            &under,
            &mut sink
        )
        .unwrap()
        .is_none());
    assert_eq!(sink.items.len(), 20_000);
    // An input of many rows, in parts of its rows: the same ids, four columns a row of the
    // answer (~3 MiB whole).
    let query = "[:find ?x ?e ?n ?a :in $ [?x ...] :where [?e :id ?x] [?e :name ?n] [?e :age ?a]]";
    let limit = 3 * 1024 * 1024;
    let whole = snapshot.q_with(
        query,
        std::slice::from_ref(&ids),
        &QueryOptions::default().memory_limit(limit),
    );
    assert!(
        matches!(whole, Err(QueryError::ResourceExhausted { .. })),
        "{whole:?}"
    );
    let mut sink = Collect::default();
    let options = QueryOptions::default().memory_limit(limit).part_rows(256);
    assert!(snapshot
        .q_each(query, std::slice::from_ref(&ids), &options, &mut sink)
        .unwrap()
        .is_none());
    assert_eq!(sink.items.len(), 20_000);
    // A scan whose parts could share rows (a cardinality-many value dropped) is read whole,
    // and stops.
    let mut sink = Collect::default();
    let repeats = snapshot.q_each(
        "[:find ?e :where [?e :tag ?t]]",
        &[],
        &QueryOptions::default()
            .memory_limit(limit / 8)
            .part_rows(256),
        &mut sink,
    );
    assert!(
        matches!(repeats, Err(QueryError::ResourceExhausted { .. })),
        "{repeats:?}"
    );
}

#[test]
fn a_sinks_error_stops_the_query_and_is_its_answer() {
    let (_dir, db) = people(300);
    let snapshot = db.db().unwrap();
    let mut sink = Collect {
        stop_at: Some(10),
        ..Collect::default()
    };
    let options = QueryOptions::default().part_rows(4);
    let answer = snapshot.q_each(
        "[:find ?e ?n :where [?e :name ?n]]",
        &[],
        &options,
        &mut sink,
    );
    assert!(matches!(answer, Err(QueryError::Cancelled)), "{answer:?}");
    assert_eq!(sink.items.len(), 10);
}

#[test]
fn several_sources_hand_on_their_items_too() {
    let (_dir, db) = people(120);
    let snapshot = db.db().unwrap();
    let query = "[:find ?n ?x :in $ [?x ...] :where [?e :name ?n] [?e :age ?x]]";
    let xs = read_one("[1 2]").unwrap();
    let inputs = [Input::Db(snapshot.clone()), Input::Value(xs)];
    let whole = datalith::q(query, &inputs).unwrap();
    let mut sink = Collect::default();
    let options = QueryOptions::default().part_rows(3);
    assert!(datalith::q_each(query, &inputs, &options, &mut sink)
        .unwrap()
        .is_none());
    assert_eq!(sorted(&sink.items), sorted(items_of(&whole).0));
}

/// The time the sink takes is the caller's: a query whose items take longer to hand on than
/// its `:timeout` still answers, the engine's own time being far within it.
#[test]
fn the_sinks_time_is_not_the_querys() {
    struct Slow(usize);
    impl ItemSink for Slow {
        fn begin(&mut self, _set: bool) -> Result<(), QueryError> {
            Ok(())
        }
        fn item(&mut self, _item: &Edn) -> Result<(), QueryError> {
            std::thread::sleep(std::time::Duration::from_millis(2));
            self.0 += 1;
            Ok(())
        }
    }
    let (_dir, db) = people(300);
    let snapshot = db.db().unwrap();
    let mut sink = Slow(0);
    // 300 items, 2 ms each: 600 ms of handing on against a timeout of 300 ms.
    let options = QueryOptions::default().part_rows(10).timeout_ms(300);
    let answer = snapshot.q_each(
        "[:find ?e ?n :where [?e :name ?n]]",
        &[],
        &options,
        &mut sink,
    );
    assert!(matches!(answer, Ok(None)), "{answer:?}");
    assert_eq!(sink.0, 300);
}
