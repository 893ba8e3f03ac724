//! Query results compared as values: sets (a `:find` result) in any order.

use datalith::edn::{to_edn_string, Edn};

/// `e` with every set's members and every map's entries sorted (by their EDN text), at any
/// depth: EDN sets and maps have no order.
pub fn normalize(e: &Edn) -> Edn {
    match e {
        Edn::Set(items) => {
            let mut v: Vec<Edn> = items.iter().map(normalize).collect();
            v.sort_by_key(to_edn_string);
            Edn::Set(v)
        }
        Edn::Vector(items) => Edn::Vector(items.iter().map(normalize).collect()),
        Edn::Map(pairs) => {
            let mut p: Vec<(Edn, Edn)> = pairs
                .iter()
                .map(|(k, v)| (normalize(k), normalize(v)))
                .collect();
            p.sort_by_key(|(k, _)| to_edn_string(k));
            Edn::Map(p)
        }
        other => other.clone(),
    }
}

/// Asserts that `got` equals `want` as values (sets and maps in any order), printing both as
/// EDN after `context` when they differ.
pub fn assert_same(context: &str, got: &Edn, want: &Edn) {
    assert_eq!(
        normalize(got),
        normalize(want),
        "{context}\n got: {}\nwant: {}",
        to_edn_string(got),
        to_edn_string(want)
    );
}
