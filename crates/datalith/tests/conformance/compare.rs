//! Comparing an answer with Datomic's: the shape of the result decides what order means.
//!
//! A relation or collection result is compared as a multiset of rows (Datomic returns a set,
//! or a list when `:with` keeps duplicates), a tuple or scalar as it is. Inside a row, maps
//! (pull results, `:keys` rows) compare by key, and a vector held by a map (a card-many
//! attribute in a pull) compares as a multiset, except under a tuple-valued attribute. Doubles are equal within 1e-9 (relative to
//! their size beyond 1).

use std::collections::BTreeSet;

use datalith::edn::{to_edn_string, Edn};

/// Attributes (as printed, `:pt/xy`) whose vector values keep their order inside maps:
/// tuple-valued attributes, where a vector is one value rather than card-many values.
pub type Ordered = BTreeSet<String>;

/// What the `:find` of a query returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A set of tuples (also `:keys` maps and aggregate rows).
    Relation,
    /// `[?x ...]`
    Collection,
    /// `[?x ?y]`
    Tuple,
    /// `?x .`
    Scalar,
    /// A pull result or any other single value compared as it is.
    Value,
}

/// The shape the `:find` section of `query` (a vector or a map form) asks for.
pub fn find_shape(query: &Edn) -> Shape {
    let find: Vec<&Edn> = match query {
        Edn::Vector(items) => items
            .iter()
            .skip_while(|e| !is_keyword(e, "find"))
            .skip(1)
            .take_while(|e| !matches!(e, Edn::Keyword(_)))
            .collect(),
        Edn::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| is_keyword(k, "find"))
            .and_then(|(_, v)| v.as_seq())
            .map(|s| s.iter().collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    match find.as_slice() {
        [Edn::Vector(inner)] if matches!(inner.last(), Some(e) if is_symbol(e, "...")) => {
            Shape::Collection
        }
        [Edn::Vector(_)] => Shape::Tuple,
        [_, dot] if is_symbol(dot, ".") => Shape::Scalar,
        _ => Shape::Relation,
    }
}

fn is_keyword(e: &Edn, name: &str) -> bool {
    matches!(e, Edn::Keyword(k) if k.namespace().is_none() && k.name() == name)
}

fn is_symbol(e: &Edn, text: &str) -> bool {
    e.as_symbol().as_deref() == Some(text)
}

/// Whether `got` is Datomic's `want` for a result of `shape`.
pub fn same_answer(shape: Shape, want: &Edn, got: &Edn, ordered: &Ordered) -> bool {
    match shape {
        Shape::Relation | Shape::Collection => match (rows(want, ordered), rows(got, ordered)) {
            (Some(w), Some(g)) => same_multiset(&w, &g),
            _ => false,
        },
        Shape::Tuple | Shape::Scalar | Shape::Value => {
            same(&canon(want, ordered), &canon(got, ordered))
        }
    }
}

fn rows(e: &Edn, ordered: &Ordered) -> Option<Vec<Edn>> {
    match e {
        Edn::Set(items) | Edn::Vector(items) | Edn::List(items) => {
            Some(items.iter().map(|x| canon(x, ordered)).collect())
        }
        _ => None,
    }
}

fn same_multiset(want: &[Edn], got: &[Edn]) -> bool {
    if want.len() != got.len() {
        return false;
    }
    let mut w: Vec<&Edn> = want.iter().collect();
    let mut g: Vec<&Edn> = got.iter().collect();
    w.sort_by_cached_key(|e| to_edn_string(e));
    g.sort_by_cached_key(|e| to_edn_string(e));
    w.iter().zip(&g).all(|(a, b)| same(a, b))
}

/// Order removed where it carries no meaning: sets sorted, map entries sorted by key, and
/// vectors held by maps sorted (unless the key is in `ordered`). Lists become vectors
/// (Datomic prints tuples as either).
pub fn canon(e: &Edn, ordered: &Ordered) -> Edn {
    canon_in(e, false, ordered)
}

fn canon_in(e: &Edn, unordered: bool, ordered: &Ordered) -> Edn {
    match e {
        Edn::Set(items) => Edn::Set(sorted(
            items.iter().map(|x| canon_in(x, false, ordered)).collect(),
        )),
        Edn::Vector(items) | Edn::List(items) => {
            let items: Vec<Edn> = items.iter().map(|x| canon_in(x, false, ordered)).collect();
            Edn::Vector(if unordered { sorted(items) } else { items })
        }
        Edn::Map(pairs) => {
            let mut pairs: Vec<(Edn, Edn)> = pairs
                .iter()
                .map(|(k, v)| {
                    let card_many = !ordered.contains(&to_edn_string(k));
                    (canon_in(k, false, ordered), canon_in(v, card_many, ordered))
                })
                .collect();
            pairs.sort_by_cached_key(|(k, _)| to_edn_string(k));
            Edn::Map(pairs)
        }
        // Datomic's ratio, recorded as `#conformance/ratio [n d]`, as the ratio it is, so that
        // it sorts inside a set as Datalith's `n/d` does.
        Edn::Tagged(tag, body) if tag.to_symbol_text() == "conformance/ratio" => {
            let int = |e: &Edn| match e {
                Edn::Long(n) => Some(i128::from(*n)),
                Edn::BigInt(n) => Some(*n),
                _ => None,
            };
            match body.as_ref() {
                Edn::Vector(nd) if nd.len() == 2 => match (int(&nd[0]), int(&nd[1])) {
                    (Some(n), Some(d)) => match datalith::codec::Ratio::reduce(n, d) {
                        Some(datalith::codec::Reduced::Fraction(r)) => Edn::Ratio(r),
                        _ => e.clone(),
                    },
                    _ => e.clone(),
                },
                _ => e.clone(),
            }
        }
        other => other.clone(),
    }
}

fn sorted(mut items: Vec<Edn>) -> Vec<Edn> {
    items.sort_by_cached_key(to_edn_string);
    items
}

/// Structural equality of canonical values, doubles within 1e-9 and Datomic's ratios
/// (recorded as `#conformance/ratio [n d]`) equal to whatever prints as `n/d`.
fn same(want: &Edn, got: &Edn) -> bool {
    match (want, got) {
        (Edn::Double(a), Edn::Double(b)) => {
            a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
        }
        (Edn::Tagged(tag, body), other) if tag.to_symbol_text() == "conformance/ratio" => {
            match body.as_ref() {
                Edn::Vector(nd) if nd.len() == 2 => {
                    to_edn_string(other)
                        == format!("{}/{}", to_edn_string(&nd[0]), to_edn_string(&nd[1]))
                }
                _ => false,
            }
        }
        (Edn::Vector(a), Edn::Vector(b)) | (Edn::Set(a), Edn::Set(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Edn::Map(a), Edn::Map(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| same(ka, kb) && same(va, vb))
        }
        _ => want == got,
    }
}

/// Removes every `:db/id` entry from the maps in `e` (cases that pull with a wildcard, whose
/// entity ids differ between systems).
pub fn without_db_id(e: &Edn) -> Edn {
    match e {
        Edn::Map(pairs) => Edn::Map(
            pairs
                .iter()
                .filter(|(k, _)| to_edn_string(k) != ":db/id")
                .map(|(k, v)| (k.clone(), without_db_id(v)))
                .collect(),
        ),
        Edn::Vector(items) => Edn::Vector(items.iter().map(without_db_id).collect()),
        Edn::List(items) => Edn::List(items.iter().map(without_db_id).collect()),
        Edn::Set(items) => Edn::Set(items.iter().map(without_db_id).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datalith::edn::read_one;

    fn e(s: &str) -> Edn {
        read_one(s).unwrap()
    }

    #[test]
    fn shapes_and_equality_table() {
        // (query, want, got, same?)
        let cases: &[(&str, &str, &str, bool)] = &[
            ("[:find ?a :where]", "#{[1] [2]}", "#{[2] [1]}", true),
            ("[:find ?a :where]", "#{[1] [2]}", "#{[1] [1] [2]}", false),
            ("[:find ?a :with ?b :where]", "[[1] [1]]", "#{[1]}", false),
            ("[:find ?a :with ?b :where]", "[[1] [1]]", "[[1] [1]]", true),
            ("[:find [?a ...] :where]", "[1 2]", "[2 1]", true),
            ("[:find [?a ?b] :where]", "[1 2]", "[2 1]", false),
            ("[:find ?a . :where]", "1.0", "1.0000000000001", true),
            ("[:find ?a . :where]", "1.0", "1.001", false),
            ("[:find ?a . :where]", "1", "1.0", false),
            ("[:find ?a . :where]", "nil", "nil", true),
            (
                "[:find ?a . :where]",
                "#conformance/ratio [31 5]",
                "6.2",
                false,
            ),
            (
                "[:find ?a :where]",
                "#{[{:a [1 2]}]}",
                "#{[{:a [2 1]}]}",
                true,
            ),
            (
                "[:find ?a :where]",
                "#{[{:a 1 :b 2}]}",
                "#{[{:b 2 :a 1}]}",
                true,
            ),
            (
                "[:find ?a :where]",
                "#{[{:a 1}]}",
                "#{[{:a 1 :b 2}]}",
                false,
            ),
            ("[:find ?a . :where]", "{:t [1 2]}", "{:t [2 1]}", false),
            ("[:find ?a . :where]", "{:t [[1 2]]}", "{:t [[2 1]]}", false),
            (
                "[:find ?a . :where]",
                "{:m [[1 2] [3]]}",
                "{:m [[3] [1 2]]}",
                true,
            ),
        ];
        let ordered: Ordered = [":t".to_string()].into_iter().collect();
        for (q, want, got, expect) in cases {
            let shape = find_shape(&e(q));
            assert_eq!(
                same_answer(shape, &e(want), &e(got), &ordered),
                *expect,
                "{q}: want {want} got {got}"
            );
        }
    }
}
