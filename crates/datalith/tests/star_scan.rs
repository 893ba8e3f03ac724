//! A star of patterns on a bound entity answered by scanning its attributes (rows naming a
//! large share of the attributes' entities): the answer equals the one computed in Rust when
//! values are missing, when an entity is in several rows, and when an attribute of
//! cardinality one holds two values for one entity (data older than its cardinality); and
//! `explain` shows that the scan ran.

use std::collections::BTreeSet;

use datalith::edn::{read_one, Edn};
use datalith::{Database, DbOptions, TxData};

/// Options of a database that keeps every datom in AVE (`ValueIndex::All`): these plans read
/// attributes by value through AVE, which a database of the default layout keeps only for
/// declared attributes (their reads of the others are `AEV` steps, tested in
/// `value_index.rs`).
fn every_value_in_ave() -> DbOptions {
    let mut options = DbOptions::default();
    options.value_index = datalith::ValueIndex::All;
    options
}

const ITEMS: i64 = 600;
const ORDERS: i64 = 900;

/// Item `i`'s price (every item), colour (every item but each seventh) and weight (every item
/// but each fifth); order `o`'s item.
fn price(i: i64) -> i64 {
    (i * 37) % 101
}
fn colour(i: i64) -> Option<String> {
    (i % 7 != 0).then(|| format!("c{}", i % 4))
}
fn weight(i: i64) -> Option<f64> {
    (i % 5 != 0).then_some((i % 13) as f64 + 0.5)
}
fn item_of(o: i64) -> i64 {
    (o * 7) % ITEMS
}

fn tx(db: &Database, text: &str) {
    db.transact(TxData::from_edn(&read_one(text).unwrap()).unwrap())
        .unwrap();
}

fn database() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), every_value_in_ave()).unwrap();
    tx(
        &db,
        r#"[{:db/ident :item/no :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
            {:db/ident :item/price :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
            {:db/ident :item/colour :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
            {:db/ident :item/weight :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
            {:db/ident :order/no :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
            {:db/ident :order/item :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}]"#,
    );
    let mut t = String::from("[");
    for i in 0..ITEMS {
        t.push_str(&format!(
            "{{:db/id \"i{i}\" :item/no {i} :item/price {}",
            price(i)
        ));
        if let Some(c) = colour(i) {
            t.push_str(&format!(" :item/colour \"{c}\""));
        }
        if let Some(w) = weight(i) {
            t.push_str(&format!(" :item/weight {w:?}"));
        }
        t.push('}');
    }
    for o in 0..ORDERS {
        t.push_str(&format!(
            "{{:order/no {o} :order/item \"i{}\"}}",
            item_of(o)
        ));
    }
    t.push(']');
    tx(&db, &t);
    (dir, db)
}

fn rows(e: &Edn) -> BTreeSet<String> {
    match e {
        Edn::Set(rows) | Edn::Vector(rows) => rows.iter().map(|r| format!("{r}")).collect(),
        other => panic!("not a set of rows: {other}"),
    }
}

fn row(items: &[String]) -> String {
    format!("[{}]", items.join(" "))
}

#[test]
fn a_scanned_star_answers_as_rust_does() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    // (query, the rows in Rust)
    type Want = fn() -> BTreeSet<String>;
    let cases: &[(&str, Want)] = &[
        // Every item once; an item without a colour or a weight has no row.
        (
            "[:find ?n ?p ?c ?w :where [?i :item/no ?n] [?i :item/price ?p]
              [?i :item/colour ?c] [?i :item/weight ?w]]",
            || {
                (0..ITEMS)
                    .filter_map(|i| {
                        let (c, w) = (colour(i)?, weight(i)?);
                        Some(row(&[
                            i.to_string(),
                            price(i).to_string(),
                            format!("{c:?}"),
                            format!("{w:?}"),
                        ]))
                    })
                    .collect()
            },
        ),
        // An item in several orders: its values in each of their rows.
        (
            "[:find ?o ?p ?c :where [?x :order/no ?o] [?x :order/item ?i]
              [?i :item/price ?p] [?i :item/colour ?c]]",
            || {
                (0..ORDERS)
                    .filter_map(|o| {
                        let i = item_of(o);
                        let c = colour(i)?;
                        Some(row(&[
                            o.to_string(),
                            price(i).to_string(),
                            format!("{c:?}"),
                        ]))
                    })
                    .collect()
            },
        ),
    ];
    for (query, want) in cases {
        let (result, plan) = snapshot.explain(query, &[]).unwrap();
        assert_eq!(rows(&result), want(), "{query}");
        let shown = plan.steps.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(
            shown
                .iter()
                .any(|s| s.contains(":item/price") && s.contains("AVE SCAN")),
            "{query}: the star should scan its attributes: {shown:#?}"
        );
    }
}

#[test]
fn two_values_of_a_cardinality_one_attribute_both_answer() {
    let (_dir, db) = database();
    // A bulk load checks no cardinality: item 1 gets a second colour, as data written before
    // its attribute became cardinality one would hold it.
    let found = db
        .db()
        .unwrap()
        .q("[:find ?i . :where [?i :item/no 1]]", &[])
        .unwrap();
    let Edn::Long(item) = found else {
        panic!("item 1's entity: {found}")
    };
    let colour_attr = datalith::codec::Keyword::parse(":item/colour");
    db.fill_db(&[(
        item as u64,
        colour_attr,
        datalith::codec::Value::string("extra"),
    )])
    .unwrap();
    let query = "[:find ?n ?p ?c :where [?i :item/no ?n] [?i :item/price ?p] [?i :item/colour ?c]]";
    let (result, plan) = db.db().unwrap().explain(query, &[]).unwrap();
    let mut want: BTreeSet<String> = (0..ITEMS)
        .filter_map(|i| {
            let c = colour(i)?;
            Some(row(&[
                i.to_string(),
                price(i).to_string(),
                format!("{c:?}"),
            ]))
        })
        .collect();
    want.insert(row(&["1".into(), price(1).to_string(), "\"extra\"".into()]));
    assert_eq!(rows(&result), want);
    let shown = plan.steps.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(
        shown
            .iter()
            .any(|s| s.contains("AVE SCAN") && s.contains(":item/colour")),
        "the star should scan its attributes: {shown:#?}"
    );
}

/// Scanning an attribute of few values costs less than its count of datoms says (a value's
/// entity ids come a page at a time): a colour (4 values over 514 items) is scanned for 15
/// rows, where 15 lookups in EAV cost less than scanning 600 numbers of their own.
#[test]
fn an_attribute_of_few_values_is_scanned_for_fewer_rows() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    type Want = fn() -> BTreeSet<String>;
    // (query, the star's attribute, the index it should read, the rows in Rust)
    let cases: &[(&str, &str, &str, Want)] = &[
        (
            "[:find ?n ?c :where [?i :item/no ?n] [(< ?n 15)] [?i :item/colour ?c]]",
            ":item/colour",
            "AVE SCAN",
            || {
                (0..15)
                    .filter_map(|i| Some(row(&[i.to_string(), format!("{:?}", colour(i)?)])))
                    .collect()
            },
        ),
        (
            "[:find ?p ?n :where [?i :item/price ?p] [(< ?p 3)] [?i :item/no ?n]]",
            ":item/no",
            "EAV",
            || {
                (0..ITEMS)
                    .filter(|i| price(*i) < 3)
                    .map(|i| row(&[price(i).to_string(), i.to_string()]))
                    .collect()
            },
        ),
    ];
    for (query, attr, index, want) in cases {
        let (result, plan) = snapshot.explain(query, &[]).unwrap();
        assert_eq!(rows(&result), want(), "{query}");
        let shown = plan.steps.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let step = shown
            .iter()
            .find(|s| s.contains(attr))
            .unwrap_or_else(|| panic!("{query}: no step reads {attr}: {shown:#?}"));
        assert!(
            step.contains(&format!("({index},")),
            "{query}: {attr} should be read by {index}: {shown:#?}"
        );
    }
}
