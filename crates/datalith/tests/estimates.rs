//! The planner's estimates against the actual rows, step by step, on a small order-entry
//! database (uniform dates, prices and balances, a skewed status and a skewed clerk number,
//! refs from orders to customers to nations): every step of every query in the table is
//! estimated within `FACTOR` of what it returned, the plans start from the selective side, and
//! the answers equal a plain computation over the generated rows.

use datalith::edn::{read_one, Edn};
use datalith::{Database, DbOptions};
use datalith_testdata::splitmix::SplitMix64;

/// How far an estimate may be from the actual rows (either way; counts below 10 are taken as
/// 10, where a factor says little).
const FACTOR: f64 = 10.0;

const SCHEMA: &str = r#"[
  {:db/ident :n/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :c/key :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
  {:db/ident :c/segment :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :c/nation :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :c/balance :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
  {:db/ident :o/customer :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}
  {:db/ident :o/date :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
  {:db/ident :o/status :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
  {:db/ident :o/price :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
  {:db/ident :o/priority :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :o/clerk :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"#;

const NATIONS: [&str; 5] = ["FRANCE", "GERMANY", "JAPAN", "KENYA", "PERU"];
const SEGMENTS: [&str; 5] = [
    "AUTOMOBILE",
    "BUILDING",
    "FURNITURE",
    "HOUSEHOLD",
    "MACHINERY",
];
const CUSTOMERS: usize = 2_000;
const ORDERS: usize = 20_000;
/// 1992-01-01 and 1998-08-02, in epoch milliseconds.
const FIRST_DAY: i64 = 694_224_000_000;
const LAST_DAY: i64 = 902_016_000_000;
const DAY: i64 = 86_400_000;

struct Customer {
    segment: usize,
    nation: usize,
    balance: f64,
}

struct Order {
    customer: usize,
    date: i64,
    status: &'static str,
    price: f64,
    priority: i64,
    clerk: i64,
}

fn generate() -> (Vec<Customer>, Vec<Order>) {
    let mut rng = SplitMix64::new(58);
    let unit = |rng: &mut SplitMix64| rng.next_u64() as f64 / u64::MAX as f64;
    let customers = (0..CUSTOMERS)
        .map(|_| Customer {
            segment: rng.below(5) as usize,
            nation: rng.below(5) as usize,
            balance: (unit(&mut rng) * 10_999.98 - 999.99).round(),
        })
        .collect();
    let orders = (0..ORDERS)
        .map(|_| {
            let status = match rng.below(100) {
                0..=48 => "F",
                49..=97 => "O",
                _ => "P",
            };
            Order {
                customer: rng.below(CUSTOMERS as u64) as usize,
                date: FIRST_DAY + rng.below(((LAST_DAY - FIRST_DAY) / DAY) as u64) as i64 * DAY,
                status,
                price: (1_000.0 + unit(&mut rng) * 499_000.0).round(),
                priority: 1 + rng.below(5) as i64,
                // Skewed: most orders have a low clerk number.
                clerk: (unit(&mut rng).powi(3) * 1_000.0) as i64,
            }
        })
        .collect();
    (customers, orders)
}

fn load(dir: &std::path::Path, customers: &[Customer], orders: &[Order]) -> Database {
    let db = Database::open(dir, DbOptions::default()).unwrap();
    db.transact(read_one(SCHEMA).unwrap()).unwrap();
    let nations: Vec<String> = NATIONS
        .iter()
        .map(|n| format!("{{:n/name \"{n}\"}}"))
        .collect();
    db.transact(format!("[{}]", nations.join(" ")).as_str())
        .unwrap();
    let cs: Vec<String> = customers
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                "{{:c/key {i} :c/segment \"{}\" :c/nation [:n/name \"{}\"] :c/balance {:.1}}}",
                SEGMENTS[c.segment], NATIONS[c.nation], c.balance
            )
        })
        .collect();
    db.transact(format!("[{}]", cs.join(" ")).as_str()).unwrap();
    for chunk in orders.chunks(5_000) {
        let os: Vec<String> = chunk
            .iter()
            .map(|o| {
                format!(
                    "{{:o/customer [:c/key {}] :o/date {} :o/status \"{}\" :o/price {:.1} \
                     :o/priority {} :o/clerk {}}}",
                    o.customer,
                    Edn::Inst(o.date),
                    o.status,
                    o.price,
                    o.priority,
                    o.clerk
                )
            })
            .collect();
        db.transact(format!("[{}]", os.join(" ")).as_str()).unwrap();
    }
    db
}

fn inst(text: &str) -> i64 {
    match read_one(&format!("#inst \"{text}\"")).unwrap() {
        Edn::Inst(ms) => ms,
        other => panic!("not an instant: {other}"),
    }
}

/// One query of the table: its text, the step it must start from (a prefix of the step as
/// `explain` prints it), and its answer computed over the generated rows.
struct Case {
    query: &'static str,
    first: &'static str,
    answer: fn(&[Customer], &[Order]) -> i64,
}

const CASES: &[Case] = &[
    Case {
        query: r#"[:find (count ?o) . :where [?o :o/date ?d] [(>= ?d #inst "1995-01-01")]
                   [(< ?d #inst "1995-04-01")] [?o :o/status "F"]]"#,
        first: "[?o :o/date ?d]",
        answer: |_, os| {
            let (lo, hi) = (inst("1995-01-01"), inst("1995-04-01"));
            os.iter()
                .filter(|o| o.date >= lo && o.date < hi && o.status == "F")
                .count() as i64
        },
    },
    Case {
        query: r#"[:find (count ?o) . :where [?c :c/segment "BUILDING"] [?o :o/customer ?c]
                   [?o :o/date ?d] [(< ?d #inst "1992-03-15")] [?c :c/nation ?na]
                   [?na :n/name "KENYA"]]"#,
        // One nation of five, its customers in one segment of five, then their orders.
        first: "[?na :n/name \"KENYA\"]",
        answer: |cs, os| {
            let hi = inst("1992-03-15");
            os.iter()
                .filter(|o| {
                    let c = &cs[o.customer];
                    o.date < hi && SEGMENTS[c.segment] == "BUILDING" && NATIONS[c.nation] == "KENYA"
                })
                .count() as i64
        },
    },
    Case {
        query: r#"[:find (count ?c) . :where [?c :c/balance ?b] [(> ?b 9500.0)] [?c :c/segment ?s]
                   [?c :c/nation ?na]]"#,
        first: "[?c :c/balance ?b]",
        answer: |cs, _| cs.iter().filter(|c| c.balance > 9500.0).count() as i64,
    },
    Case {
        query: r#"[:find (count ?o) . :where [?o :o/price ?p] [(< ?p 11000.0)] [?o :o/customer ?c]
                   [?c :c/balance ?b] [(< ?b 0.0)]]"#,
        // 406 cheap orders, each with one customer, against 178 customers with a negative
        // balance and their ~1,800 orders.
        first: "[?o :o/price ?p]",
        answer: |cs, os| {
            os.iter()
                .filter(|o| o.price < 11_000.0 && cs[o.customer].balance < 0.0)
                .count() as i64
        },
    },
    Case {
        query: r#"[:find (count ?o) . :where [?o :o/status ?s] [(!= ?s "F")] [?o :o/priority ?pr]
                   [(<= ?pr 2)]]"#,
        first: "[?o :o/priority ?pr]",
        answer: |_, os| {
            os.iter()
                .filter(|o| o.status != "F" && o.priority <= 2)
                .count() as i64
        },
    },
    Case {
        query: r#"[:find (count ?c) . :where [?c :c/segment ?s]
                   [(clojure.string/starts-with? ?s "MACH")] [?c :c/balance ?b]]"#,
        first: "[?c :c/segment ?s]",
        answer: |cs, _| {
            cs.iter()
                .filter(|c| SEGMENTS[c.segment].starts_with("MACH"))
                .count() as i64
        },
    },
    Case {
        query: r#"[:find (count ?o) . :where [?na :n/name "FRANCE"] [?c :c/nation ?na]
                   [?o :o/customer ?c] [?o :o/status "P"]]"#,
        first: "[?na :n/name \"FRANCE\"]",
        answer: |cs, os| {
            os.iter()
                .filter(|o| NATIONS[cs[o.customer].nation] == "FRANCE" && o.status == "P")
                .count() as i64
        },
    },
    Case {
        // Clerk numbers crowd at the low end, where interpolation between the ends
        // under-counts (a share of a tenth of the span holds ~46% of the orders).
        query: r#"[:find (count ?o) . :where [?o :o/clerk ?k] [(< ?k 100)] [?o :o/date ?d]
                   [(> ?d #inst "1998-06-01")]]"#,
        first: "[?o :o/date ?d]",
        answer: |_, os| {
            let lo = inst("1998-06-01");
            os.iter().filter(|o| o.clerk < 100 && o.date > lo).count() as i64
        },
    },
    Case {
        // A CASE WHEN as an `or-join` of tests and functions (one with a variable of its
        // own): it runs once the date it tests is bound, keeps a row per row.
        query: r#"[:find (sum ?late) . :with ?o :where [?o :o/priority 1] [?o :o/date ?d]
                   (or-join [?d ?late]
                     (and [(< ?d #inst "1995-01-01")] [(ground 0) ?late])
                     (and [(>= ?d #inst "1995-01-01")] [(ground 0) ?zero] [(+ ?zero 1) ?late]))]"#,
        first: "[?o :o/priority 1]",
        answer: |_, os| {
            let cut = inst("1995-01-01");
            os.iter()
                .filter(|o| o.priority == 1 && o.date >= cut)
                .count() as i64
        },
    },
];

#[test]
fn estimates_stay_within_a_factor_of_the_actual_rows() {
    let (customers, orders) = generate();
    let dir = tempfile::tempdir().unwrap();
    let db = load(dir.path(), &customers, &orders);
    // Every write in LMDB first: the estimates sample it, and what of the load the applier
    // had not written yet (which depends on the machine's load) would change them.
    db.env().checkpoint().unwrap();
    let snapshot = db.db().unwrap();
    let (mut steps, mut within, mut table) = (0, 0, String::new());
    let mut problems = Vec::new();
    for case in CASES {
        let (result, plan) = snapshot
            .explain(case.query, &[])
            .unwrap_or_else(|e| panic!("{}: {e}", case.query));
        let want = (case.answer)(&customers, &orders);
        assert_eq!(result, Edn::Long(want), "{}", case.query);
        let first = &plan.steps[0].what;
        if !first.starts_with(case.first) {
            problems.push(format!(
                "{}: starts from {first}, not {}\n{plan}",
                case.query, case.first
            ));
        }
        for s in &plan.steps {
            let (e, a) = (s.estimated.max(10) as f64, s.actual.max(10) as f64);
            let ratio = (e / a).max(a / e);
            steps += 1;
            if ratio <= FACTOR {
                within += 1;
            } else {
                problems.push(format!(
                    "{}: step {} estimated {} against {} actual\n{plan}",
                    case.query, s.what, s.estimated, s.actual
                ));
            }
            table.push_str(&format!(
                "{:>8} {:>8} {:>6.2}x  {}\n",
                s.estimated, s.actual, ratio, s.what
            ));
        }
    }
    eprintln!("estimated   actual  ratio  step\n{table}{within} of {steps} steps within {FACTOR}x");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A prefix test bounds the scan of the values it tests: every string that starts with the
/// prefix must still be found, at the edges of the code points too (the bound past a prefix
/// is its last character incremented) and for values too long to be keyed whole.
#[test]
fn prefix_bounds_find_every_string_with_the_prefix() {
    let long = format!("ab{}", "x".repeat(600));
    let values = [
        "",
        "a",
        "ab",
        "ab\u{0}",
        "abc",
        "ab\u{10FFFF}",
        "ab\u{10FFFF}z",
        "ac",
        "b",
        "\u{10FFFF}",
        "\u{10FFFF}a",
        "\u{D7FF}",
        "\u{E000}",
        "é",
        "éa",
        "f",
    ];
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    db.transact(
        "[{:db/ident :s/v :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
    )
    .unwrap();
    let mut all: Vec<String> = values.iter().map(|s| s.to_string()).collect();
    all.push(long);
    let data: Vec<String> = all
        .iter()
        .map(|s| format!("{{:s/v {}}}", Edn::String(s.clone())))
        .collect();
    db.transact(format!("[{}]", data.join(" ")).as_str())
        .unwrap();
    let snapshot = db.db().unwrap();
    for prefix in [
        "",
        "a",
        "ab",
        "ab\u{10FFFF}",
        "\u{10FFFF}",
        "\u{D7FF}",
        "é",
        "z",
    ] {
        let got = snapshot
            .q(
                "[:find (count ?e) . :in $ ?p :where [?e :s/v ?v] [(clojure.string/starts-with? ?v ?p)]]",
                &[Edn::String(prefix.to_string())],
            )
            .unwrap();
        let want = all.iter().filter(|s| s.starts_with(prefix)).count() as i64;
        let got = match got {
            Edn::Nil => 0,
            Edn::Long(n) => n,
            other => panic!("{other}"),
        };
        assert_eq!(got, want, "prefix {prefix:?}");
    }
}
