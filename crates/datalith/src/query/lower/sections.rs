//! The query form split into its sections (`:find`, `:in`, `:where`, `:timeout`, ...), in
//! vector or map form, before anything is resolved: no schema is read, so the sections of a
//! text can be cached by that text forever.

use std::sync::Arc;

use crate::codec::Keyword;
use crate::edn::{to_edn_string, Edn};
use crate::query::error::QueryError;
use crate::query::ir::KeysKind;

pub(super) fn perr(msg: impl Into<String>) -> QueryError {
    QueryError::Parse(msg.into())
}

pub(super) fn show(e: &Edn) -> String {
    to_edn_string(e)
}

/// The sections of a query form.
#[derive(Debug, Default, Clone)]
pub struct Sections {
    /// `:find`
    pub find: Vec<Edn>,
    /// `:keys` / `:strs` / `:syms`
    pub keys: Option<(KeysKind, Vec<Edn>)>,
    /// `:with`
    pub with: Vec<Edn>,
    /// `:in`
    pub inputs: Option<Vec<Edn>>,
    /// `:where`
    pub clauses: Vec<Edn>,
    /// `:order-by`
    pub order_by: Vec<Edn>,
    /// `:limit`
    pub limit: Option<usize>,
    /// `:offset`
    pub offset: Option<usize>,
    /// `:timeout`
    pub timeout: Option<u64>,
    /// `:memory-limit` (bytes)
    pub memory_limit: Option<u64>,
    /// The pull patterns written in `:find`, parsed once with the text (a pattern that does
    /// not parse is left out, and reported when the query is lowered, in its place).
    pub pulls: Vec<(Edn, Arc<crate::pull::PullPattern>)>,
}

/// Splits a query (vector or map form) into its sections.
pub fn sections(q: &Edn) -> Result<Sections, QueryError> {
    let mut parts: Vec<(String, Vec<Edn>)> = Vec::new();
    match q {
        Edn::Vector(items) => {
            for it in items {
                match it {
                    Edn::Keyword(k) if k.namespace().is_none() => {
                        parts.push((k.name().to_string(), Vec::new()))
                    }
                    other => match parts.last_mut() {
                        Some((_, v)) => v.push(other.clone()),
                        None => {
                            return Err(perr(format!(
                                "query must start with a keyword such as :find, not {}",
                                show(other)
                            )))
                        }
                    },
                }
            }
        }
        Edn::Map(pairs) => {
            for (k, v) in pairs {
                let Edn::Keyword(k) = k else {
                    return Err(perr(format!("query map key {} is not a keyword", show(k))));
                };
                let items = match v {
                    Edn::Vector(items) | Edn::List(items) => items.clone(),
                    other => vec![other.clone()],
                };
                parts.push((k.name().to_string(), items));
            }
        }
        other => {
            return Err(perr(format!(
                "a query is a vector or a map, not {}",
                show(other)
            )))
        }
    }
    let mut s = Sections::default();
    let one_num = |name: &str, items: &[Edn]| -> Result<u64, QueryError> {
        match items {
            [Edn::Long(n)] if *n >= 0 => Ok(*n as u64),
            _ => Err(perr(format!(":{name} takes one non-negative number"))),
        }
    };
    for (name, items) in parts {
        match name.as_str() {
            "find" => s.find = items,
            "keys" => s.keys = Some((KeysKind::Keys, items)),
            "strs" => s.keys = Some((KeysKind::Strs, items)),
            "syms" => s.keys = Some((KeysKind::Syms, items)),
            "with" => s.with = items,
            "in" => s.inputs = Some(items),
            "where" => s.clauses = items,
            "order-by" => s.order_by = items,
            "limit" => s.limit = Some(one_num("limit", &items)? as usize),
            "offset" => s.offset = Some(one_num("offset", &items)? as usize),
            "timeout" => s.timeout = Some(one_num("timeout", &items)?),
            "memory-limit" => s.memory_limit = Some(one_num("memory-limit", &items)?),
            other => return Err(perr(format!("unknown query section :{other}"))),
        }
    }
    if s.find.is_empty() {
        return Err(perr("query has no :find"));
    }
    for f in &s.find {
        if let Edn::List(items) = f {
            let is_pull = items.first().and_then(sym).is_some_and(|n| n == "pull");
            if let (true, Some(pattern @ Edn::Vector(_))) = (is_pull, items.last()) {
                if let Ok(p) = crate::pull::parse_pattern(pattern) {
                    s.pulls.push((pattern.clone(), Arc::new(p)));
                }
            }
        }
    }
    Ok(s)
}

pub(super) fn is_var(e: &Edn) -> Option<String> {
    match e {
        Edn::Symbol(s) if s.namespace().is_none() && s.name().starts_with('?') => {
            Some(s.name().to_string())
        }
        _ => None,
    }
}

pub(super) fn sym(e: &Edn) -> Option<String> {
    e.as_symbol()
}

pub(super) fn is_src(e: &Edn) -> Option<String> {
    sym(e).filter(|s| s.starts_with('$'))
}

/// The `:in` forms (`[$]` when the query has none).
pub fn in_forms(s: &Sections) -> Vec<Edn> {
    s.inputs
        .clone()
        .unwrap_or_else(|| vec![Edn::Symbol(Keyword::new(None, "$"))])
}

/// Whether the receiver of [`crate::api::Db::q`] (given `given` more inputs) is the first
/// `:in` input rather than an implicit `$`: the first form is `$`, or a named source with
/// no input of its own.
pub fn receiver_is_first_input(s: &Sections, given: usize) -> bool {
    let forms = in_forms(s);
    match forms.first().and_then(is_src) {
        Some(name) => name == "$" || forms.len() == given + 1,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edn::read_one;

    #[test]
    fn pull_patterns_written_in_find_are_parsed_with_the_text() {
        // (query, patterns parsed with the sections)
        let cases: &[(&str, &[&str])] = &[
            ("[:find ?e :where [?e :a]]", &[]),
            ("[:find (pull ?e [:a :b]) :where [?e :a]]", &["[:a :b]"]),
            (
                "[:find (pull ?e [*]) (pull $ ?f [:a]) :where [?e :a ?f]]",
                &["[*]", "[:a]"],
            ),
            // A pattern given as an input is parsed when it arrives.
            (
                "[:find (pull ?e pattern) :in $ pattern :where [?e :a]]",
                &[],
            ),
            // One that does not parse is reported when the query is lowered.
            ("[:find (pull ?e [42]) :where [?e :a]]", &[]),
        ];
        for (query, want) in cases {
            let s = sections(&read_one(query).unwrap()).unwrap();
            let got: Vec<String> = s.pulls.iter().map(|(e, _)| to_edn_string(e)).collect();
            assert_eq!(got, *want, "{query}");
        }
    }
}
