//! The start of a large conjunction chosen by looking ahead (`query/exec/lookahead.rs`): on
//! a chain shaped like TPC-H Q8 (one region of few nations holding many customers, their
//! orders and lines, and a rare part type at the far end), the step-by-step choice starts at
//! the single region and grows the rows through every join before the part type cuts them;
//! the lookahead starts at the part type. Checked: the plan's first step, the rows the plan
//! moves, and the answer against the same rows computed in Rust.

use datalith::edn::{read_one, Edn};
use datalith::{Database, DbOptions, TxData};

const REGIONS: i64 = 2;
const NATIONS: i64 = 6;
const CUSTOMERS: i64 = 300;
const ORDERS: i64 = 3000;
const LINES: i64 = 12000;
const PARTS: i64 = 400;
const TYPES: i64 = 100;

fn nation_region(n: i64) -> i64 {
    n % REGIONS
}
fn customer_nation(c: i64) -> i64 {
    c % NATIONS
}
fn order_customer(o: i64) -> i64 {
    (o * 7) % CUSTOMERS
}
fn line_order(l: i64) -> i64 {
    l % ORDERS
}
fn line_part(l: i64) -> i64 {
    (l / 3) % PARTS
}
fn part_type(p: i64) -> i64 {
    p % TYPES
}
fn line_qty(l: i64) -> i64 {
    (l * 31) % 17
}

fn database() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let attr = |ident: &str, ty: &str| {
        format!(
            "{{:db/ident {ident} :db/valueType :db.type/{ty} :db/cardinality :db.cardinality/one}}"
        )
    };
    let schema = format!(
        "[{} {} {} {} {} {} {} {} {}]",
        attr(":region/name", "string"),
        attr(":nation/region", "ref"),
        attr(":customer/nation", "ref"),
        attr(":order/customer", "ref"),
        attr(":line/order", "ref"),
        attr(":line/part", "ref"),
        attr(":line/qty", "long"),
        attr(":line/no", "long"),
        attr(":part/type", "string"),
    );
    db.transact(TxData::from_edn(&read_one(&schema).unwrap()).unwrap())
        .unwrap();
    let mut tx = String::from("[");
    for r in 0..REGIONS {
        tx.push_str(&format!("{{:db/id \"r{r}\" :region/name \"R{r}\"}}"));
    }
    for n in 0..NATIONS {
        tx.push_str(&format!(
            "{{:db/id \"n{n}\" :nation/region \"r{}\"}}",
            nation_region(n)
        ));
    }
    for c in 0..CUSTOMERS {
        tx.push_str(&format!(
            "{{:db/id \"c{c}\" :customer/nation \"n{}\"}}",
            customer_nation(c)
        ));
    }
    for o in 0..ORDERS {
        tx.push_str(&format!(
            "{{:db/id \"o{o}\" :order/customer \"c{}\"}}",
            order_customer(o)
        ));
    }
    for p in 0..PARTS {
        tx.push_str(&format!(
            "{{:db/id \"p{p}\" :part/type \"T{}\"}}",
            part_type(p)
        ));
    }
    for l in 0..LINES {
        tx.push_str(&format!(
            "{{:line/no {l} :line/order \"o{}\" :line/part \"p{}\" :line/qty {}}}",
            line_order(l),
            line_part(l),
            line_qty(l)
        ));
    }
    tx.push(']');
    db.transact(TxData::from_edn(&read_one(&tx).unwrap()).unwrap())
        .unwrap();
    (dir, db)
}

#[test]
fn a_chain_starts_from_the_constant_that_keeps_the_rows_small() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    // Written region first: the order written never matters, the estimates do.
    let query = r#"[:find ?no ?q
                   :where
                   [?r :region/name "R0"]
                   [?n :nation/region ?r]
                   [?c :customer/nation ?n]
                   [?o :order/customer ?c]
                   [?l :line/order ?o]
                   [?l :line/part ?p]
                   [?l :line/no ?no]
                   [?l :line/qty ?q]
                   [?p :part/type "T7"]]"#;
    let (result, plan) = snapshot.explain(query, &[]).unwrap();
    let mut want: Vec<(i64, i64)> = (0..LINES)
        .filter(|&l| part_type(line_part(l)) == 7)
        .filter(|&l| nation_region(customer_nation(order_customer(line_order(l)))) == 0)
        .map(|l| (l, line_qty(l)))
        .collect();
    want.sort_unstable();
    assert!(!want.is_empty(), "the case selects some lines");
    let Edn::Set(rows) = &result else {
        panic!("not a set: {result:?}")
    };
    let mut got: Vec<(i64, i64)> = rows
        .iter()
        .map(|r| match r {
            Edn::Vector(v) => match v.as_slice() {
                [Edn::Long(no), Edn::Long(q)] => (*no, *q),
                other => panic!("not two longs: {other:?}"),
            },
            other => panic!("not a row: {other:?}"),
        })
        .collect();
    got.sort_unstable();
    assert_eq!(got, want);
    let shown: Vec<String> = plan.steps.iter().map(|s| s.to_string()).collect();
    assert!(
        shown[0].contains(":part/type"),
        "starts from the part type: {shown:#?}"
    );
    // The rows the plan moved: from the part type, each step holds at most the part's
    // lines (120 here); from the region, the orders alone are half of all (1,500).
    let moved: u64 = plan.steps.iter().map(|s| s.actual).sum();
    assert!(moved < 1500, "{moved} rows moved: {shown:#?}");
}

#[test]
fn a_small_conjunction_keeps_the_step_by_step_start() {
    let (_dir, db) = database();
    let snapshot = db.db().unwrap();
    // Five patterns: under the lookahead's threshold; the region starts, as before.
    let query = r#"[:find (count ?l) .
                   :where
                   [?r :region/name "R0"]
                   [?n :nation/region ?r]
                   [?c :customer/nation ?n]
                   [?o :order/customer ?c]
                   [?l :line/order ?o]]"#;
    let (result, plan) = snapshot.explain(query, &[]).unwrap();
    let want = (0..LINES)
        .filter(|&l| nation_region(customer_nation(order_customer(line_order(l)))) == 0)
        .count() as i64;
    assert_eq!(result, Edn::Long(want));
    assert!(
        plan.steps[0].to_string().contains(":region/name"),
        "{:#?}",
        plan.steps
    );
}
