//! The operations without HTTP, on a database in a temporary directory.

use std::sync::atomic::AtomicBool;

use datalith::edn::{read_one, Edn};
use datalith::{Database, DbOptions, Durability};

use super::*;
use crate::error::codes;

const SCHEMA: &str = r#"[{:db/ident :person/email :db/valueType :db.type/string
   :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]"#;

fn database() -> (tempfile::TempDir, Source) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync)).unwrap();
    db.transact(SCHEMA).unwrap();
    // Few leases, so that a test fills the table quickly.
    (
        dir,
        Source::new(db, std::time::Duration::from_secs(60), 8, 1 << 20),
    )
}

/// No other databases.
struct Alone;

impl Databases for Alone {
    fn source(&self, name: &str) -> Result<std::sync::Arc<Source>> {
        Err(crate::error::ServerError::new(
            codes::UNKNOWN_DATABASE,
            name.to_string(),
        ))
    }
}

fn call(db: &Source, op: Op, body: &str) -> Result<Edn> {
    call_with(db, &Alone, op, body)
}

fn call_with(db: &Source, others: &dyn Databases, op: Op, body: &str) -> Result<Edn> {
    let cancel = AtomicBool::new(false);
    let cx = Context {
        name: "people",
        limits: QueryLimits {
            timeout_ms: 10_000,
            memory_limit: Some(1 << 30),
            threads: None,
        },
        cancel: &cancel,
        databases: others,
        stop_early: None,
        outlet: None,
        format: crate::format::Format::Edn,
    };
    let request = Request::new(Some(read_one(body).unwrap()), op.fields())?;
    op.run(db, &request, &cx)?.into_edn()
}

fn field<'a>(m: &'a Edn, key: &str) -> &'a Edn {
    let Edn::Map(pairs) = m else {
        panic!("not a map: {m}")
    };
    &pairs
        .iter()
        .find(|(k, _)| *k == Edn::kw(key))
        .unwrap_or_else(|| panic!("no {key} in {m}"))
        .1
}

#[test]
fn transact_reports_tempids_datoms_and_bases() {
    let (_dir, db) = database();
    let r = call(
        &db,
        Op::Transact,
        r#"{:tx-data "[{:db/id \"ann\" :person/email \"ann@x\" :person/name \"Ann\"}]"}"#,
    )
    .unwrap();
    let tx = field(&r, ":tx").clone();
    assert_eq!(field(field(&r, ":db-after"), ":basis-t"), &tx);
    let Edn::Long(tx) = tx else { panic!() };
    let Edn::Long(before) = field(field(&r, ":db-before"), ":basis-t") else {
        panic!("{r}")
    };
    assert!(*before < tx, "{r}");
    let Edn::Map(tempids) = field(&r, ":tempids") else {
        panic!("{r}")
    };
    assert_eq!(tempids.len(), 1, "{r}");
    assert_eq!(tempids[0].0, Edn::String("ann".into()));
    let tx_data = field(&r, ":tx-data").to_string();
    assert!(tx_data.contains(":person/name \"Ann\""), "{tx_data}");
    assert!(tx_data.contains(":db/txInstant"), "{tx_data}");
}

#[test]
fn q_binds_args_after_the_database_and_names_its_basis() {
    let (_dir, db) = database();
    db.database.transact(r#"[{:person/email "ann@x" :person/name "Ann"} {:person/email "bob@x" :person/name "Bob"}]"#)
        .unwrap();
    let r = call(
        &db,
        Op::Q,
        r#"{:query "[:find ?n :in $ ?e :where [?x :person/email ?e] [?x :person/name ?n]]" :args ["bob@x"]}"#,
    )
    .unwrap();
    assert_eq!(field(&r, ":result"), &read_one(r#"#{["Bob"]}"#).unwrap());
    let basis = field(&r, ":basis-t").clone();
    // The same basis is served; another one is refused.
    let same =
        format!(r#"{{:query [:find (count ?x) . :where [?x :person/email]] :basis-t {basis}}}"#);
    assert_eq!(
        field(&call(&db, Op::Q, &same).unwrap(), ":result"),
        &Edn::Long(2)
    );
    let other = r#"{:query "[:find ?x :where [?x :person/email]]" :basis-t 1}"#;
    assert_eq!(
        call(&db, Op::Q, other).unwrap_err().category,
        codes::BASIS_UNAVAILABLE
    );
}

#[test]
fn q_pages_add_up_to_the_whole_result() {
    let (_dir, db) = database();
    let whole = r#"{:query "[:find ?x ?y :where [(range 0 7) [?x ...]] [(* ?x 10) ?y]]"}"#;
    let Edn::Set(all) = field(&call(&db, Op::Q, whole).unwrap(), ":result").clone() else {
        panic!("not a set")
    };
    assert_eq!(all.len(), 7);
    let paged = |limit: &str, offset: u64| {
        let body = format!(
            r#"{{:query "[:find ?x ?y :where [(range 0 7) [?x ...]] [(* ?x 10) ?y]]" {limit} :offset {offset}}}"#
        );
        call(&db, Op::Q, &body).unwrap()
    };
    let cases: &[(&str, u64, std::ops::Range<usize>, Option<i64>)] = &[
        // :limit, :offset, the rows of the whole result, :next-offset
        (":limit 3", 0, 0..3, Some(3)),
        (":limit 3", 3, 3..6, Some(6)),
        (":limit 3", 6, 6..7, None),
        (":limit 3", 7, 7..7, None),
        (":limit 3", 99, 7..7, None),
        (":limit 0", 2, 2..2, Some(2)),
        ("", 5, 5..7, None),
    ];
    for (limit, offset, rows, next) in cases {
        let r = paged(limit, *offset);
        assert_eq!(
            field(&r, ":result"),
            &Edn::Set(all[rows.clone()].to_vec()),
            "{limit} {offset}"
        );
        let got = match &r {
            Edn::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| *k == Edn::kw(":next-offset"))
                .map(|(_, v)| v.clone()),
            _ => None,
        };
        assert_eq!(got, next.map(Edn::Long), "{limit} {offset}");
    }
    let scalar = r#"{:query "[:find (count ?x) . :where [(range 0 7) [?x ...]]]" :limit 1}"#;
    let e = call(&db, Op::Q, scalar).unwrap_err();
    assert!(e.message.contains("page a collection result"), "{e}");
}

#[test]
fn later_pages_are_slices_of_the_first_pages_result_kept_under_its_basis() {
    let (_dir, db) = database();
    db.database
        .transact(r#"[{:person/email "a@x"} {:person/email "b@x"} {:person/email "c@x"}]"#)
        .unwrap();
    let query = r#"[:find ?m :where [_ :person/email ?m]]"#;
    let page = |extra: &str| {
        call(
            &db,
            Op::Q,
            &format!("{{:query {query:?} :limit 2 {extra}}}"),
        )
    };
    let first = page("").unwrap();
    let Edn::Long(basis) = *field(&first, ":basis-t") else {
        panic!("no basis")
    };
    // The database moves on, and the first page's value was never leased.
    db.database.transact(r#"[{:person/email "d@x"}]"#).unwrap();
    // Asked of the value itself, the next page comes from the kept result: that value's rows.
    let second = page(&format!(":offset 2 :basis-t {basis}")).unwrap();
    assert_eq!(field(&second, ":basis-t"), &Edn::Long(basis));
    let mut rows = match (field(&first, ":result"), field(&second, ":result")) {
        (Edn::Set(a), Edn::Set(b)) => [a.clone(), b.clone()].concat(),
        other => panic!("{other:?}"),
    };
    rows.sort_by_key(datalith::edn::to_edn_string);
    assert_eq!(
        Edn::Vector(rows),
        read_one(r#"[["a@x"] ["b@x"] ["c@x"]]"#).unwrap()
    );
    // What is not kept still needs its value: other inputs, another point in time.
    for extra in [
        format!(":offset 2 :basis-t {basis} :args [1]"),
        format!(":offset 2 :basis-t {basis} :as-of {basis}"),
    ] {
        let e = page(&extra).unwrap_err();
        assert_eq!(e.category, codes::BASIS_UNAVAILABLE, "{extra}: {e}");
    }
    // With no room to keep results, the same page is refused the same way.
    let dir = tempfile::tempdir().unwrap();
    let open = Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync)).unwrap();
    open.transact(SCHEMA).unwrap();
    open.transact(r#"[{:person/email "a@x"} {:person/email "b@x"} {:person/email "c@x"}]"#)
        .unwrap();
    let none = Source::new(open, std::time::Duration::from_secs(60), 8, 0);
    let first = call(&none, Op::Q, &format!("{{:query {query:?} :limit 2}}")).unwrap();
    let Edn::Long(basis) = *field(&first, ":basis-t") else {
        panic!("no basis")
    };
    none.database
        .transact(r#"[{:person/email "d@x"}]"#)
        .unwrap();
    let e = call(
        &none,
        Op::Q,
        &format!("{{:query {query:?} :limit 2 :offset 2 :basis-t {basis}}}"),
    )
    .unwrap_err();
    assert_eq!(e.category, codes::BASIS_UNAVAILABLE, "{e}");
}

#[test]
fn an_explained_query_answers_its_plan_as_data() {
    let (_dir, db) = database();
    db.database
        .transact(r#"[{:person/email "a@x" :person/name "Ann"} {:person/email "b@x" :person/name "Bob"}]"#)
        .unwrap();
    let body = r#"{:query "[:find ?n :where [?p :person/email \"a@x\"] [?p :person/name ?n]]" :explain true}"#;
    let r = call(&db, Op::Q, body).unwrap();
    assert_eq!(field(&r, ":result"), &read_one(r#"#{["Ann"]}"#).unwrap());
    let plan = field(&r, ":plan");
    assert_eq!(field(plan, ":rows"), &Edn::Long(1));
    let Edn::Vector(clauses) = field(plan, ":clauses") else {
        panic!("{plan:?}")
    };
    assert_eq!(clauses.len(), 2);
    assert_eq!(
        field(&clauses[0], ":clause"),
        &Edn::String(r#"[?p :person/email "a@x"]"#.into())
    );
    assert_eq!(field(&clauses[0], ":line"), &Edn::Long(1));
    let Edn::Vector(steps) = field(plan, ":steps") else {
        panic!("{plan:?}")
    };
    // The lookup by the unique email first: one row, as estimated.
    assert_eq!(field(&steps[0], ":index"), &Edn::String("AVE".into()));
    assert_eq!(field(&steps[0], ":actual"), &Edn::Long(1));
    assert_eq!(field(&steps[0], ":clauses"), &read_one("[0]").unwrap());
    // Without :explain, no plan; a page of an explained query has one too.
    let plain = call(&db, Op::Q, &body.replace(" :explain true", "")).unwrap();
    assert!(matches!(&plain, Edn::Map(m) if !m.iter().any(|(k, _)| *k == Edn::kw(":plan"))));
    let paged = call(
        &db,
        Op::Q,
        &body.replace(":explain true", ":explain true :limit 1"),
    )
    .unwrap();
    assert_eq!(field(field(&paged, ":plan"), ":rows"), &Edn::Long(1));
    let e = call(
        &db,
        Op::Q,
        &body.replace(":explain true", r#":explain "yes""#),
    )
    .unwrap_err();
    assert!(e.message.contains(":explain must be true or false"), "{e}");
}

#[test]
fn a_query_may_not_raise_its_limits_past_the_servers() {
    let (_dir, db) = database();
    let cases = [
        r#"{:query "[:find ?x :where [?x :person/email] :timeout 99999999]"}"#,
        r#"{:query "{:find [?x] :where [[?x :person/email]] :memory-limit [99999999999999]}"}"#,
    ];
    for body in cases {
        let e = call(&db, Op::Q, body).unwrap_err();
        assert!(
            e.message.contains("over this server's limit"),
            "{body}: {e}"
        );
    }
    let ok = r#"{:query "[:find ?x :where [?x :person/email] :timeout 500]" :timeout 999999}"#;
    assert!(call(&db, Op::Q, ok).is_ok());
}

#[test]
fn pull_and_pull_many() {
    let (_dir, db) = database();
    db.database
        .transact(
            r#"[{:db/id "a" :person/email "ann@x" :person/name "Ann" :person/friend "b"}
                    {:db/id "b" :person/email "bob@x" :person/name "Bob"}]"#,
        )
        .unwrap();
    let r = call(&db, Op::Pull, r#"{:selector "[:person/name {:person/friend [:person/name]}]" :eid [:person/email "ann@x"]}"#).unwrap();
    assert_eq!(
        field(&r, ":result"),
        &read_one(r#"{:person/name "Ann", :person/friend [{:person/name "Bob"}]}"#).unwrap()
    );
    let r = call(
        &db,
        Op::PullMany,
        r#"{:selector [:person/name] :eids [[:person/email "bob@x"] [:person/email "nobody"]]}"#,
    )
    .unwrap();
    assert_eq!(
        field(&r, ":result"),
        &read_one(r#"[{:person/name "Bob"} nil]"#).unwrap()
    );
}

#[test]
fn datoms_come_a_page_at_a_time() {
    let (_dir, db) = database();
    let people: Vec<String> = (0..25)
        .map(|i| format!(r#"{{:person/email "p{i:02}@x" :person/name "P{i}"}}"#))
        .collect();
    db.database
        .transact(format!("[{}]", people.join(" ")).as_str())
        .unwrap();
    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let r = call(
            &db,
            Op::Datoms,
            &format!("{{:index :avet :components [:person/email] :limit 10 :offset {offset}}}"),
        )
        .unwrap();
        let Edn::Vector(page) = field(&r, ":result") else {
            panic!()
        };
        seen.extend(page.iter().map(|d| d.as_seq().unwrap()[2].clone()));
        match &r {
            Edn::Map(pairs) => match pairs.iter().find(|(k, _)| *k == Edn::kw(":next-offset")) {
                Some((_, Edn::Long(n))) => offset = *n,
                _ => break,
            },
            _ => unreachable!(),
        }
    }
    let want: Vec<Edn> = (0..25).map(|i| Edn::String(format!("p{i:02}@x"))).collect();
    assert_eq!(seen, want);
    let r = call(
        &db,
        Op::Datoms,
        r#"{:index :eavt :components [[:person/email "p03@x"] :person/name]}"#,
    )
    .unwrap();
    assert_eq!(field(&r, ":result").as_seq().unwrap().len(), 1);
    // As Datomic's `datoms`: an attribute that names none matches nothing, unless a value
    // follows it, which only the attribute could read.
    let r = call(&db, Op::Datoms, r#"{:index :avet :components [:no/such]}"#).unwrap();
    assert_eq!(field(&r, ":result").as_seq().unwrap().len(), 0);
    let e = call(
        &db,
        Op::Datoms,
        r#"{:index :avet :components [:no/such 1]}"#,
    )
    .unwrap_err();
    assert_eq!(e.category, datalith::error::NOT_AN_ENTITY);
    let e = call(&db, Op::Datoms, r#"{:index :veat}"#).unwrap_err();
    assert!(e.message.contains("not an index"), "{e}");
}

#[test]
fn unknown_fields_and_wrong_bodies_are_refused() {
    let (_dir, db) = database();
    let cases = [
        (Op::Q, r#"{:qurey "[:find ?x]"}"#, "unknown field :qurey"),
        (Op::Q, r#"[:find ?x]"#, "must be a map"),
        (Op::Q, r#"{:args []}"#, "missing field :query"),
        (
            Op::Q,
            r#"{:query "[:find ?x :where [?x :a]]" :args 1}"#,
            "must be a vector",
        ),
        (Op::Datoms, r#"{:index :eavt :limit -1}"#, "non-negative"),
        (
            Op::Transact,
            r#"{:tx-data "[{:person/name"}"#,
            ":tx-data:1:",
        ),
    ];
    for (op, body, want) in cases {
        let e = call(&db, op, body).unwrap_err();
        assert!(e.message.contains(want), "{body}: {e}");
    }
}

#[test]
fn index_range_is_half_open_and_paged() {
    let (_dir, db) = database();
    let people: Vec<String> = (0..10)
        .map(|i| format!(r#"{{:person/email "p{i}@x" :person/name "P{i}"}}"#))
        .collect();
    db.database
        .transact(format!("[{}]", people.join(" ")).as_str())
        .unwrap();
    let emails = |r: &Edn| -> Vec<Edn> {
        field(r, ":result")
            .as_seq()
            .unwrap()
            .iter()
            .map(|d| d.as_seq().unwrap()[2].clone())
            .collect()
    };
    let r = call(
        &db,
        Op::IndexRange,
        r#"{:attrid :person/email :start "p2@x" :end "p5@x"}"#,
    )
    .unwrap();
    let want: Vec<Edn> = (2..5).map(|i| Edn::String(format!("p{i}@x"))).collect();
    assert_eq!(emails(&r), want);
    let r = call(
        &db,
        Op::IndexRange,
        r#"{:attrid :person/email :start "p8@x" :limit 1}"#,
    )
    .unwrap();
    assert_eq!(emails(&r), [Edn::String("p8@x".into())]);
    assert_eq!(field(&r, ":next-offset"), &Edn::Long(1));
}

#[test]
fn tx_range_reads_the_log_a_page_at_a_time() {
    let (_dir, db) = database();
    let ann = db
        .database
        .transact(r#"[{:person/email "ann@x"}]"#)
        .unwrap();
    let bob = db
        .database
        .transact(r#"[{:person/email "bob@x"}]"#)
        .unwrap();
    let r = call(&db, Op::TxRange, &format!("{{:start {} :limit 1}}", ann.tx)).unwrap();
    let Edn::Vector(entries) = field(&r, ":result") else {
        panic!("{r}")
    };
    assert_eq!(entries.len(), 1);
    assert_eq!(field(&entries[0], ":tx"), &Edn::Long(ann.tx as i64));
    assert!(field(&entries[0], ":data")
        .to_string()
        .contains(r#":person/email "ann@x""#));
    assert_eq!(field(&r, ":next-start"), &Edn::Long(bob.tx as i64));
    let r = call(&db, Op::TxRange, &format!("{{:start {}}}", bob.tx)).unwrap();
    assert_eq!(field(&r, ":result").as_seq().unwrap().len(), 1);
    assert!(!r.to_string().contains(":next-start"));
}

#[test]
fn a_leased_value_is_read_again_until_its_lease_ends() {
    let (_dir, db) = database();
    db.database
        .transact(r#"[{:person/email "ann@x"}]"#)
        .unwrap();
    let count = "[:find (count ?p) . :where [?p :person/email]]";
    let first = call(&db, Op::Q, &format!("{{:query {count:?} :lease-ms 60000}}")).unwrap();
    let basis = field(&first, ":basis-t").clone();
    let short = call(&db, Op::Q, &format!("{{:query {count:?} :lease-ms 1}}")).unwrap();
    assert_eq!(field(&short, ":basis-t"), &basis);
    db.database
        .transact(r#"[{:person/email "bob@x"}]"#)
        .unwrap();
    // The leased value answers as it did; the latest has moved on.
    let again = call(
        &db,
        Op::Q,
        &format!("{{:query {count:?} :basis-t {basis}}}"),
    )
    .unwrap();
    assert_eq!(field(&again, ":result"), &Edn::Long(1));
    let latest = call(&db, Op::Q, &format!("{{:query {count:?} :lease-ms 1}}")).unwrap();
    assert_eq!(field(&latest, ":result"), &Edn::Long(2));
    let moved_on = field(&latest, ":basis-t").clone();
    // That second lease was 1 ms: ended, and its value is no longer the latest once more
    // is written.
    std::thread::sleep(std::time::Duration::from_millis(20));
    db.database
        .transact(r#"[{:person/email "cid@x"}]"#)
        .unwrap();
    let e = call(
        &db,
        Op::Q,
        &format!("{{:query {count:?} :basis-t {moved_on}}}"),
    )
    .unwrap_err();
    assert_eq!(e.category, codes::BASIS_UNAVAILABLE);
    assert!(e.message.contains("lease ended"), "{e}");
    // Pages of datoms from one leased value.
    let page = call(
        &db,
        Op::Datoms,
        &format!("{{:index :avet :components [:person/email] :basis-t {basis} :limit 5}}"),
    )
    .unwrap();
    assert_eq!(field(&page, ":result").as_seq().unwrap().len(), 1);
    // Too long a lease is refused; ended leases are swept.
    let e = call(
        &db,
        Op::Q,
        &format!("{{:query {count:?} :lease-ms 999999999}}"),
    )
    .unwrap_err();
    assert!(e.message.contains("--max-lease-ms"), "{e}");
    assert_eq!(db.leases.count(), 1);
    db.leases.sweep(false);
    assert_eq!(db.leases.count(), 1);
    // A growth of the map waiting for snapshots ends every lease.
    db.leases.sweep(true);
    assert_eq!(db.leases.count(), 0);
}

#[test]
fn a_query_joins_another_database_named_among_its_inputs() {
    let (_dir, people) = database();
    let (_dir2, films) = database();
    let films = std::sync::Arc::new(films);
    struct Films(std::sync::Arc<Source>);
    impl Databases for Films {
        fn source(&self, name: &str) -> Result<std::sync::Arc<Source>> {
            match name {
                "films" => Ok(self.0.clone()),
                other => Err(crate::error::ServerError::new(
                    codes::UNKNOWN_DATABASE,
                    other.to_string(),
                )),
            }
        }
    }
    people
        .database
        .transact(r#"[{:person/email "ann@x" :person/name "Ann"}]"#)
        .unwrap();
    films
        .database
        .transact(r#"[{:person/email "ann@x" :person/name "Ann the director"}]"#)
        .unwrap();
    let q = r#"{:query "[:find ?n ?d :in $ $films :where [?p :person/email ?e] [?p :person/name ?n] [$films ?f :person/email ?e] [$films ?f :person/name ?d]]" :args [#datalith/db "films"]}"#;
    let r = call_with(&people, &Films(films.clone()), Op::Q, q).unwrap();
    assert_eq!(
        field(&r, ":result"),
        &read_one(r#"#{["Ann" "Ann the director"]}"#).unwrap()
    );
    let unknown =
        r#"{:query "[:find ?e :in $ $x :where [$x ?e :person/name]]" :args [#datalith/db "nope"]}"#;
    let e = call_with(&people, &Films(films.clone()), Op::Q, unknown).unwrap_err();
    assert_eq!(e.category, codes::UNKNOWN_DATABASE);
    // A value of the other database named by its basis: leased, then the database moves on.
    let leased = call(
        &films,
        Op::Q,
        r#"{:query "[:find ?e . :where [?e :person/email]]" :lease-ms 60000}"#,
    )
    .unwrap();
    let Edn::Long(t) = *field(&leased, ":basis-t") else {
        panic!("no basis")
    };
    films
        .database
        .transact(r#"[{:person/email "ann@x" :person/name "Ann the producer"}]"#)
        .unwrap();
    let director = |input: &str| {
        let q = format!(
            r#"{{:query "[:find ?d . :in $ $films :where [$films ?f :person/name ?d]]" :args [{input}]}}"#
        );
        call_with(&people, &Films(films.clone()), Op::Q, &q)
    };
    let cases: &[(String, std::result::Result<&str, datalith::error::Category>)] = &[
        // input, the name read or the error's category
        (
            format!(r#"#datalith/db ["films" {t}]"#),
            Ok("Ann the director"),
        ),
        (
            r#"#datalith/db "films""#.to_string(),
            Ok("Ann the producer"),
        ),
        (
            r#"#datalith/db ["films" 1]"#.to_string(),
            Err(codes::BASIS_UNAVAILABLE),
        ),
        (
            r#"#datalith/db 5"#.to_string(),
            Err(datalith::error::INVALID_ARGUMENT),
        ),
        (
            r#"#datalith/db ["films"]"#.to_string(),
            Err(datalith::error::INVALID_ARGUMENT),
        ),
        (
            r#"#datalith/db ["films" -1]"#.to_string(),
            Err(datalith::error::INVALID_ARGUMENT),
        ),
    ];
    for (input, want) in cases {
        match (director(input), want) {
            (Ok(r), Ok(name)) => {
                assert_eq!(
                    field(&r, ":result"),
                    &Edn::String(name.to_string()),
                    "{input}"
                )
            }
            (Err(e), Err(category)) => assert_eq!(&e.category, category, "{input}: {e}"),
            (got, want) => panic!("{input}: {got:?}, wanted {want:?}"),
        }
    }
}

#[test]
fn a_kept_page_that_read_another_database_is_served_only_to_its_readers() {
    let (_dir, people) = database();
    let (_dir2, films) = database();
    let films = std::sync::Arc::new(films);
    /// Serves "films" to a reader allowed it, refuses it otherwise.
    struct Films(std::sync::Arc<Source>, bool);
    impl Databases for Films {
        fn source(&self, name: &str) -> Result<std::sync::Arc<Source>> {
            match (name, self.1) {
                ("films", true) => Ok(self.0.clone()),
                _ => Err(crate::error::ServerError::new(
                    codes::FORBIDDEN,
                    name.to_string(),
                )),
            }
        }
    }
    for db in [&people.database, &films.database] {
        db.transact(
            r#"[{:person/email "a@x" :person/name "A"} {:person/email "b@x" :person/name "B"}]"#,
        )
        .unwrap();
    }
    let t = films.database.db().unwrap().basis_t().unwrap();
    let basis = people.database.db().unwrap().basis_t().unwrap();
    let q = format!(
        r#"{{:query "[:find ?e ?n :in $ $films :where [?p :person/email ?e] [$films ?f :person/email ?e] [$films ?f :person/name ?n]]" :args [#datalith/db ["films" {t}]] :limit 1 :basis-t {basis}}}"#
    );
    let first = call_with(&people, &Films(films.clone(), true), Op::Q, &q).unwrap();
    assert_eq!(field(&first, ":next-offset"), &Edn::Long(1));
    // The same page again, kept now: not for a reader who may not read films.
    let e = call_with(&people, &Films(films.clone(), false), Op::Q, &q).unwrap_err();
    assert_eq!(e.category, codes::FORBIDDEN, "{e}");
    let again = call_with(&people, &Films(films, true), Op::Q, &q).unwrap();
    assert_eq!(field(&again, ":result"), field(&first, ":result"));
}

#[test]
fn past_the_most_leases_the_one_ending_first_ends_early() {
    let (_dir, db) = database();
    let count = "[:find (count ?p) . :where [?p :person/email]]";
    let mut bases = Vec::new();
    for i in 0..=db.leases.most() {
        db.database
            .transact(format!(r#"[{{:person/email "p{i}@x"}}]"#).as_str())
            .unwrap();
        // The first lease is the shortest: it goes when the table is full.
        let ms = if i == 0 { 10_000 } else { 60_000 };
        let r = call(&db, Op::Q, &format!("{{:query {count:?} :lease-ms {ms}}}")).unwrap();
        bases.push(field(&r, ":basis-t").clone());
    }
    assert_eq!(db.leases.count(), db.leases.most());
    let first = format!("{{:query {count:?} :basis-t {}}}", bases[0]);
    assert_eq!(
        call(&db, Op::Q, &first).unwrap_err().category,
        codes::BASIS_UNAVAILABLE
    );
    let second = format!("{{:query {count:?} :basis-t {}}}", bases[1]);
    assert_eq!(
        field(&call(&db, Op::Q, &second).unwrap(), ":result"),
        &Edn::Long(2)
    );
}

#[test]
fn two_hundred_clients_each_read_the_value_they_took_while_writes_go_on() {
    // The load test's clients: each takes a value (`db()`: a read with `:lease-ms`), and
    // reads it by its basis afterwards, while the others write. With the default table every
    // value taken is still there when its holder reads it (with 64 leases, the first 136
    // were let go before they were read).
    let dir = tempfile::tempdir().unwrap();
    let database =
        Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync)).unwrap();
    database.transact(SCHEMA).unwrap();
    let db = Source::new(
        database,
        std::time::Duration::from_secs(60),
        leases::DEFAULT_MAX_LEASES,
        1 << 20,
    );
    let count = "[:find (count ?p) . :where [?p :person/email]]";
    let mut taken = Vec::new();
    for i in 0..200 {
        db.database
            .transact(format!(r#"[{{:person/email "c{i}@x"}}]"#).as_str())
            .unwrap();
        let r = call(&db, Op::Q, &format!("{{:query {count:?} :lease-ms 10000}}")).unwrap();
        taken.push((field(&r, ":basis-t").clone(), i + 1));
    }
    for (basis, people) in taken {
        let r = call(
            &db,
            Op::Q,
            &format!("{{:query {count:?} :basis-t {basis}}}"),
        )
        .unwrap();
        assert_eq!(field(&r, ":result"), &Edn::Long(people));
    }
    assert_eq!(db.leases.count(), 200);
}
