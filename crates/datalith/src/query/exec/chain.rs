//! Row-wise clauses run one after another as one pass over the rows: a chain.
//!
//! A test (`[(< ?d #inst "...")]`) keeps or drops each row; a function with a scalar binding
//! to a new variable (`[(* ?ep ?keep) ?rev]`) adds one value to each row, or drops it on nil.
//! Neither reads an index, and each row's outcome depends on that row alone, so a sequence of
//! them gives the same rows whether it runs clause by clause or row by row. Clause by clause,
//! each step walks every row once more, and on a relation larger than the cache each walk
//! meets every row's own allocation again (TPC-H Q1 at SF 1: four functions over 5.9M line
//! items, 340-460 ms each on one thread). As a chain each row is fetched once and all its
//! clauses run while it is in the cache.
//!
//! A chain of one clause is a step too: its rows take the same path (the arithmetic of
//! plain numbers computed in place, not through a call that clones its arguments and returns
//! a result that may be an error).
//!
//! The chain starts with the clause the conjunction chose and takes the other links that
//! are ready then or once an earlier link has bound their inputs: tests first (they drop rows
//! before the functions compute on them), then functions, each in the conjunction's canonical
//! order. `explain` keeps one step a clause, so that it shows each one's estimate and actual.

use super::clauses::READING_CALLS;
use super::*;
use crate::codec::Value;
use crate::query::budget::row_bytes;
use crate::query::builtins;
use crate::query::error::QueryError;
use crate::query::ir::{Binding, Clause, Term, Var};
use crate::query::relation::Relation;

/// Where one argument of a link comes from in the row being extended.
#[derive(Clone, Copy)]
enum Arg<'c> {
    Col(usize),
    Const(&'c Value),
}

/// One clause of a chain, resolved for every row.
enum Link<'c> {
    /// A predicate: the row stays when it holds.
    Test {
        name: &'c str,
        args: Vec<Arg<'c>>,
        /// The built-in test resolved once; `None` for a user's function.
        test: Option<builtins::Test<'c>>,
    },
    /// `+`, `-` or `*` of two arguments: computed in place when both are plain numbers
    /// (`builtins::plain_value`), else called as a `Compute`.
    Arith {
        name: &'c str,
        op: builtins::ArithOp,
        args: [Arg<'c>; 2],
        callee: builtins::Builtin,
    },
    /// A function: its value is added to the row; nil drops the row.
    Compute {
        name: &'c str,
        args: Vec<Arg<'c>>,
        /// The built-in resolved once; `None` for a user's function.
        callee: Option<builtins::Builtin>,
    },
}

/// Where each of `args` is found in rows of the variables `vars`.
fn resolve<'c>(args: &'c [Term], vars: &[Var]) -> Vec<Arg<'c>> {
    args.iter()
        .map(|t| match t {
            Term::Var(v) => Arg::Col(
                vars.iter()
                    .position(|x| x == v)
                    .expect("a link's arguments are bound (chain_from)"),
            ),
            Term::Const(k) => Arg::Const(k),
            Term::Blank => unreachable!("a link has no blank argument"),
        })
        .collect()
}

/// Whether `c` can be a link of a chain on rows that bind the variables `bound` accepts: a
/// test or a function that reads no database, every argument bound or constant, a function's
/// result bound to a new variable.
fn is_link(c: &Clause, bound: &dyn Fn(Var) -> bool) -> bool {
    let ready = |args: &[Term]| {
        args.iter().all(|t| match t {
            Term::Var(v) => bound(*v),
            Term::Const(_) => true,
            Term::Blank => false,
        })
    };
    match c {
        Clause::Pred { name, args } => !READING_CALLS.contains(&name.as_str()) && ready(args),
        Clause::Fn {
            name,
            args,
            binding: Binding::Scalar(Term::Var(v)),
        } => !READING_CALLS.contains(&name.as_str()) && ready(args) && !bound(*v),
        _ => false,
    }
}

/// The variable a link binds (a function's), if any.
fn binds(c: &Clause) -> Option<Var> {
    match c {
        Clause::Fn {
            binding: Binding::Scalar(Term::Var(v)),
            ..
        } => Some(*v),
        _ => None,
    }
}

impl Ctx<'_> {
    /// When `first` is a link, the chain it starts (module doc): `first`, then the clauses
    /// of `todo` that follow it, taken out of `todo` in the order they run (none under
    /// `explain`). `None` when `first` is not a link.
    pub(super) fn chain_from(
        &self,
        first: &Clause,
        todo: &mut Vec<Clause>,
        rel: &Relation,
    ) -> Option<Vec<Clause>> {
        if !is_link(first, &|v| rel.binds(v)) {
            return None;
        }
        let mut chain = vec![first.clone()];
        if self.trace.is_some() {
            return Some(chain);
        }
        let mut bound: Vec<Var> = rel.vars.clone();
        bound.extend(binds(first));
        loop {
            let ready = |c: &Clause| is_link(c, &|v| bound.contains(&v));
            let next = todo
                .iter()
                .position(|c| matches!(c, Clause::Pred { .. }) && ready(c))
                .or_else(|| todo.iter().position(ready));
            let Some(i) = next else { break };
            let c = todo.remove(i);
            bound.extend(binds(&c));
            chain.push(c);
        }
        Some(chain)
    }

    /// Runs the links `chain` (what [`Self::chain_from`] gave) on every row of `rel`, one row
    /// at a time.
    pub(super) fn run_chain(
        &mut self,
        chain: &[Clause],
        rel: Relation,
    ) -> Result<Relation, QueryError> {
        let mut vars = rel.vars.clone();
        let mut links: Vec<Link<'_>> = Vec::with_capacity(chain.len());
        for c in chain {
            match c {
                Clause::Pred { name, args } => {
                    let first = match args.first() {
                        Some(Term::Const(k)) => Some(k),
                        _ => None,
                    };
                    links.push(Link::Test {
                        name,
                        args: resolve(args, &vars),
                        test: (!self.functions.contains_key(name.as_str()))
                            .then(|| builtins::Test::new(name, first)),
                    });
                }
                Clause::Fn { name, args, .. } => {
                    let callee = self.builtin_callee(name);
                    let arith = callee.zip(builtins::plain_op(name));
                    links.push(match (arith, resolve(args, &vars).as_slice()) {
                        (Some((callee, op)), &[a, b]) => Link::Arith {
                            name,
                            op,
                            args: [a, b],
                            callee,
                        },
                        (_, args) => Link::Compute {
                            name,
                            args: args.to_vec(),
                            callee,
                        },
                    });
                    vars.push(binds(c).expect("a function link binds a variable"));
                }
                _ => unreachable!("only tests and functions are links"),
            }
        }
        let given = row_bytes(rel.vars.len());
        let bytes = row_bytes(vars.len());
        let mut out = Relation {
            vars,
            rows: Vec::with_capacity(rel.rows.len()),
        };
        let mut vals: smallvec::SmallVec<[Value; 4]> = smallvec::SmallVec::new();
        'rows: for mut row in rel.into_rows() {
            self.budget.tick()?;
            self.budget.release(given);
            for link in &links {
                match link {
                    Link::Test { name, args, test } => {
                        let refs: smallvec::SmallVec<[&Value; 4]> = args
                            .iter()
                            .map(|a| match *a {
                                Arg::Col(c) => &row[c],
                                Arg::Const(k) => k,
                            })
                            .collect();
                        let pass = match test.as_ref().and_then(|t| t.holds(&refs)) {
                            Some(b) => b,
                            None => {
                                vals.clear();
                                vals.extend(refs.iter().map(|v| (*v).clone()));
                                builtins::truthy(self.call(name, &vals)?.as_ref())
                            }
                        };
                        if !pass {
                            continue 'rows;
                        }
                    }
                    Link::Arith {
                        name,
                        op,
                        args,
                        callee,
                    } => {
                        let [a, b] = args.map(|a| match a {
                            Arg::Col(c) => &row[c],
                            Arg::Const(k) => k,
                        });
                        let value = match builtins::plain_value(*op, a, b) {
                            Some(v) => v,
                            None => {
                                vals.clear();
                                vals.extend([a.clone(), b.clone()]);
                                match callee(&builtins::Call { name, args: &vals })? {
                                    Some(v) => v,
                                    None => continue 'rows,
                                }
                            }
                        };
                        row.push(value);
                    }
                    Link::Compute { name, args, callee } => {
                        vals.clear();
                        vals.extend(args.iter().map(|a| match *a {
                            Arg::Col(c) => row[c].clone(),
                            Arg::Const(k) => k.clone(),
                        }));
                        let value = match callee {
                            Some(f) => f(&builtins::Call { name, args: &vals })?,
                            None => self.call(name, &vals)?,
                        };
                        match value {
                            Some(v) => row.push(v),
                            // A nil result binds nothing (Datomic drops the row).
                            None => continue 'rows,
                        }
                    }
                }
            }
            self.budget.charge(bytes)?;
            out.rows.push(row);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::ir::Term;

    fn pred(name: &str, args: Vec<Term>) -> Clause {
        Clause::Pred {
            name: name.into(),
            args,
        }
    }

    fn func(name: &str, args: Vec<Term>, to: Var) -> Clause {
        Clause::Fn {
            name: name.into(),
            args,
            binding: Binding::Scalar(Term::Var(to)),
        }
    }

    /// Which clauses can be links on rows binding variables 0 and 1.
    #[test]
    fn links_are_tests_and_scalar_functions_of_bound_variables() {
        let bound = |v: Var| v < 2;
        let cases: Vec<(Clause, bool)> = vec![
            (
                pred("<", vec![Term::Var(0), Term::Const(Value::Long(3))]),
                true,
            ),
            (pred("<", vec![Term::Var(0), Term::Var(5)]), false),
            (pred("missing?", vec![Term::Var(0)]), false),
            (func("*", vec![Term::Var(0), Term::Var(1)], 2), true),
            (func("*", vec![Term::Var(0), Term::Var(1)], 1), false),
            (func("get-else", vec![Term::Var(0)], 2), false),
            (func("inc", vec![Term::Var(2)], 2), false),
            (
                Clause::Fn {
                    name: "vector".into(),
                    args: vec![Term::Var(0)],
                    binding: Binding::Collection(Term::Var(2)),
                },
                false,
            ),
        ];
        for (c, want) in cases {
            assert_eq!(is_link(&c, &bound), want, "{c:?}");
        }
    }
}
