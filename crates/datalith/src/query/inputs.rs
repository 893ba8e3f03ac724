//! Input values as relations: binding forms (`?x`, `[?x ...]`, `[?a ?b]`, `[[?a ?b]]`) and
//! relation sources (`$x` bound to a collection of tuples).

use std::collections::HashMap;

use super::error::QueryError;
use super::ir::{Binding, Clause, Term, Var};
use super::relation::Relation;
use crate::codec::Value;
use crate::edn::{value_from_edn, value_from_input, Edn};

/// A relation source's tuples.
pub(super) fn tuples(name: &str, value: &Edn) -> Result<Relation, QueryError> {
    let bad = |got: &Edn| QueryError::InputKind {
        input: name.to_string(),
        expected: "a database or a collection of tuples".to_string(),
        got: crate::edn::to_edn_string(got),
    };
    let rows = match value {
        Edn::Vector(rows) | Edn::List(rows) | Edn::Set(rows) => rows,
        other => return Err(bad(other)),
    };
    let mut out = Relation::empty(Vec::new());
    for r in rows {
        let items = match r {
            Edn::Vector(items) | Edn::List(items) => items,
            other => return Err(bad(other)),
        };
        out.rows.push(
            items
                .iter()
                .map(|i| value_from_edn(i).ok_or_else(|| bad(i)))
                .collect::<Result<_, _>>()?,
        );
    }
    Ok(out)
}

/// The terms of a clause on a relation source that read a tuple: up to its last variable or
/// constant (Datomic reads no position a trailing `_` names, so `[$r ?a _ _]` matches a
/// tuple of one value; a variable or constant past a tuple's end fails there).
pub(super) fn read_terms(terms: &[Term]) -> &[Term] {
    let n = terms
        .iter()
        .rposition(|t| !matches!(t, Term::Blank))
        .map_or(0, |i| i + 1);
    &terms[..n]
}

/// Fails when a clause on a relation source reads past the end of one of its tuples (a
/// shorter clause matches each tuple's prefix; trailing `_`s read nothing, see
/// [`read_terms`]; a tuple a constant rejects before its end is not read further). `dollar`
/// is the source `$` stands for.
pub(super) fn check_arity(
    clauses: &[Clause],
    dollar: usize,
    relations: &HashMap<usize, Relation>,
    names: &[String],
    var_names: &[String],
) -> Result<(), QueryError> {
    for c in clauses {
        match c {
            Clause::Source { src, terms } => {
                let src = if *src == 0 { dollar } else { *src };
                let Some(rel) = relations.get(&src) else {
                    continue;
                };
                let read = read_terms(terms);
                // Datomic reads a tuple from its first position on and stops at a constant it
                // does not hold: only a tuple that gets past its end that way fails.
                let reaches_end = |r: &&Vec<Value>| {
                    r.len() < read.len()
                        && read.iter().zip(r.iter()).all(|(t, v)| match t {
                            Term::Const(c) => super::builtins::equal(c, v),
                            _ => true,
                        })
                };
                if let Some(short) = rel.rows.iter().find(reaches_end) {
                    let edn = |v: &Value| crate::edn::edn_from_value(v);
                    let show_terms: Vec<Edn> = terms
                        .iter()
                        .map(|t| match t {
                            Term::Const(v) => edn(v),
                            Term::Var(v) => Edn::Symbol(crate::codec::Keyword::new(
                                None,
                                &var_names
                                    .get(*v)
                                    .cloned()
                                    .unwrap_or_else(|| format!("?{v}")),
                            )),
                            Term::Blank => Edn::Symbol(crate::codec::Keyword::new(None, "_")),
                        })
                        .collect();
                    return Err(QueryError::SourceArity {
                        source_name: names.get(src).cloned().unwrap_or_else(|| "$".into()),
                        clause: crate::edn::to_edn_string(&Edn::Vector(show_terms)),
                        terms: terms.len(),
                        tuple: crate::edn::to_edn_string(&Edn::Vector(
                            short.iter().map(edn).collect(),
                        )),
                        width: short.len(),
                    });
                }
            }
            Clause::Or { branches, .. } => {
                for b in branches {
                    check_arity(b, dollar, relations, names, var_names)?;
                }
            }
            Clause::Not { clauses, .. } => {
                check_arity(clauses, dollar, relations, names, var_names)?
            }
            _ => {}
        }
    }
    Ok(())
}

/// The values `input` (its `:in` form, printed) binds: one row of one value, one tuple, a
/// collection of values or of tuples. A tuple may be longer than the form (the rest is
/// ignored), not shorter. Rows that `tests` reject on this binding's variables alone are left
/// out as they are read; the result may hold a row twice (the caller deduplicates).
pub(super) fn bind_input(
    input: &str,
    b: &Binding,
    value: &Edn,
    tests: &InputTests<'_>,
    budget: &super::budget::Budget<'_>,
) -> Result<Relation, QueryError> {
    let kind = |expected: String, got: &Edn| QueryError::InputKind {
        input: input.to_string(),
        expected,
        got: crate::edn::to_edn_string(got),
    };
    let terms: Vec<Term> = match b {
        Binding::Scalar(t) | Binding::Collection(t) => vec![t.clone()],
        Binding::Tuple(ts) | Binding::Relation(ts) => ts.clone(),
    };
    // Tests only where each column is its own variable (constants and repeated variables
    // are matched by `match_terms` afterwards).
    let vars: Vec<Var> = terms.iter().filter_map(|t| t.var()).collect();
    let distinct =
        vars.len() == terms.len() && vars.iter().enumerate().all(|(i, v)| !vars[..i].contains(v));
    let tests = if distinct {
        tests.on(&vars)
    } else {
        Compiled::default()
    };
    // The input is read where it lies: a relation of a million tuples is copied once, into
    // its rows of values, and a rejected row's vector is reused for the next.
    fn seq(e: &Edn) -> Option<&[Edn]> {
        match e {
            Edn::Vector(v) | Edn::List(v) | Edn::Set(v) => Some(v),
            _ => None,
        }
    }
    let collection = |e| seq(e).ok_or_else(|| kind("a collection".to_string(), e));
    let scalar = |e: &Edn| value_from_input(e).ok_or_else(|| kind("values".to_string(), e));
    let width = terms.len();
    let read_row = |e: &Edn, into: &mut Vec<Value>| -> Result<(), QueryError> {
        match seq(e) {
            Some(t) if t.len() >= width => {
                for x in &t[..width] {
                    into.push(scalar(x)?);
                }
                Ok(())
            }
            _ => Err(kind(format!("tuples of {width} values"), e)),
        }
    };
    let mut rows: Vec<Vec<Value>> = Vec::new();
    let mut spare: Vec<Value> = Vec::with_capacity(width);
    let mut keep = |row: &mut Vec<Value>| {
        if tests.passes(row) {
            rows.push(std::mem::replace(row, Vec::with_capacity(width)));
        } else {
            row.clear();
        }
    };
    match b {
        Binding::Scalar(_) => {
            spare.push(scalar(value)?);
            keep(&mut spare);
        }
        Binding::Tuple(_) => {
            read_row(value, &mut spare)?;
            keep(&mut spare);
        }
        Binding::Collection(_) => {
            for x in collection(value)? {
                spare.push(scalar(x)?);
                keep(&mut spare);
            }
        }
        Binding::Relation(_) => {
            for x in collection(value)? {
                read_row(x, &mut spare)?;
                keep(&mut spare);
            }
        }
    }
    let raw = Relation {
        vars: (0..terms.len()).map(|i| usize::MAX - i).collect(),
        rows,
    };
    super::exec::match_terms_owned(raw, &terms, budget)
}

/// The tests of a query's top level that input values alone can answer: built-in tests
/// (not a name a user's function takes) whose arguments are variables and constants. Run on
/// the inputs before they are deduplicated and resolved as entities, they let those passes
/// see only the rows that can reach the answer: an input of a million tuples of which a test
/// keeps a few (TPC-H Q18's orders over 300 units, from a first query) is then hashed and
/// resolved a few rows at a time. The tests stay in the query (every kept row passes them
/// again, so the answer cannot change). They run as `Ctx::passes` runs them, through
/// `holds`; arguments `holds` leaves to the full call keep the row for the query to judge.
pub(super) struct InputTests<'c> {
    tests: Vec<(&'c str, &'c [Term])>,
}

impl<'c> InputTests<'c> {
    pub(super) fn new(clauses: &'c [Clause], user: impl Fn(&str) -> bool) -> Self {
        let tests = clauses
            .iter()
            .filter_map(|c| match c {
                Clause::Pred { name, args } if !user(name) && !args.contains(&Term::Blank) => {
                    Some((name.as_str(), args.as_slice()))
                }
                _ => None,
            })
            .collect();
        InputTests { tests }
    }

    /// The tests whose variables all lie in `vars`, their arguments as columns of a row of
    /// `vars`.
    fn on(&self, vars: &[Var]) -> Compiled<'c> {
        let tests = self
            .tests
            .iter()
            .filter_map(|(name, args)| {
                let args = args
                    .iter()
                    .map(|t| match t {
                        Term::Var(v) => vars.iter().position(|x| x == v).map(Arg::Column),
                        Term::Const(c) => Some(Arg::Const(c)),
                        Term::Blank => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some((*name, args))
            })
            .collect();
        Compiled { tests }
    }
}

/// An argument of a test on rows: a column of the row or a constant.
enum Arg<'c> {
    Column(usize),
    Const(&'c Value),
}

/// [`InputTests`] on the columns of one relation.
#[derive(Default)]
struct Compiled<'c> {
    tests: Vec<(&'c str, Vec<Arg<'c>>)>,
}

impl Compiled<'_> {
    /// Whether no test rejects `row` (a test `holds` cannot answer does not).
    fn passes(&self, row: &[Value]) -> bool {
        self.tests.iter().all(|(name, args)| {
            let refs: smallvec::SmallVec<[&Value; 4]> = args
                .iter()
                .map(|a| match a {
                    Arg::Column(c) => &row[*c],
                    Arg::Const(v) => *v,
                })
                .collect();
            super::builtins::holds(name, &refs).unwrap_or(true)
        })
    }
}

/// Removes the rows of the joined inputs that `tests` reject (those on variables of
/// several bindings; each binding's own were applied as it was read).
pub(super) fn drop_rejected_rows(
    input: &mut Relation,
    tests: &InputTests<'_>,
    budget: &super::budget::Budget<'_>,
) -> Result<(), QueryError> {
    let tests = tests.on(&input.vars);
    if tests.tests.is_empty() || input.rows.len() < 2 {
        return Ok(());
    }
    let mut stopped = false;
    input.rows.retain(|row| {
        if stopped || !budget.step() {
            stopped = true;
            return true;
        }
        tests.passes(row)
    });
    if stopped {
        budget.check()?;
    }
    Ok(())
}
