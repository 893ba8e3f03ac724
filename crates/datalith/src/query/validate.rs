//! Queries Datomic rejects before running them, rejected the same way: an attribute `get-else`
//! names that the schema lacks, variables a `not`, a
//! predicate, a function, an `or-join`'s required (`[[?e] ...]`) variables or a rule head
//! variable its body never binds need but nothing outside binds, `or` branches over different
//! variables, `:find`/`:with` variables nothing binds. Each error names the offending form as
//! written.
//!
//! Checks are static: a variable counts as bound when any binding clause of the same
//! conjunction (a pattern, a function's binding, a rule call, an `or`) or the enclosing scope
//! (inputs, a rule's head, the variables a `not` or `or` joins on) binds it. The engine then
//! picks an order in which it is bound before use, so clause order never matters (Datomic
//! also accepts `(not [?e :a 1])` written before the clause binding `?e`).

use super::error::QueryError;
use std::collections::BTreeMap;

use super::ir::{AttrTerm, Clause, RuleBody, Term, Var};
use crate::codec::Value;
use crate::edn::{to_edn_string, Edn};
use crate::query::parse::{ClauseForm, WhereClause};
use crate::store::schema::Schema;

/// What the checks of one scope (the query, or one rule body) need.
pub struct Scope<'a> {
    /// The schema of `$`, when `$` is a database (not a relation, not absent).
    pub schema: Option<&'a Schema>,
    /// The rules calls may name (those not yet lowered are not checked).
    pub rules: &'a BTreeMap<String, Vec<RuleBody>>,
    /// Variable names, by number.
    pub names: &'a [String],
}

/// Checks one conjunction: `written` as parsed, `clauses` lowered from them one to one (before
/// `not`/`or` variables are scoped), `given` bound by the enclosing scope. The clauses inside a
/// `not` or an `or` are the parsed clause's `inner` ones; its form is read only to print it.
pub fn check_where(
    scope: &Scope<'_>,
    written: &[WhereClause],
    clauses: &[Clause],
    given: &[Var],
) -> Result<(), QueryError> {
    let (schema, names) = (scope.schema, scope.names);
    for (i, (w, c)) in written.iter().zip(clauses).enumerate() {
        let form = &w.form.edn;
        // Data patterns and source patterns need nothing bound (the common query checks in
        // one pass over its clauses).
        let unanchored = match c {
            Clause::Pattern(_, p) => is_unanchored(p),
            Clause::Timed(_, t) => {
                is_unanchored(&t.p) && matches!(t.tx, Term::Var(_) | Term::Blank)
            }
            _ => false,
        };
        if !unanchored
            && matches!(
                c,
                Clause::Pattern(..) | Clause::Timed(..) | Clause::Source { .. }
            )
        {
            continue;
        }
        // Bound around this clause: the scope and every other clause.
        let mut bound: Vec<Var> = given.to_vec();
        for (j, other) in clauses.iter().enumerate() {
            if j != i {
                bound.extend(binds(other));
            }
        }
        if unanchored {
            // `[?e]`, `[?e ?a ?v]`: nothing names what to read, and nothing else in the
            // conjunction binds its variables: every datom of the database. Datomic refuses
            // it ("would cause full scan"); so does Datalith.
            if !binds(c).iter().any(|v| bound.contains(v)) {
                return Err(QueryError::InsufficientBinding {
                    vars: binds(c).iter().map(|v| names[*v].clone()).collect(),
                    clause: to_edn_string(form),
                });
            }
            continue;
        }
        let missing = |vars: Vec<Var>| -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for v in vars {
                let name = names[v].clone();
                if !bound.contains(&v) && !out.contains(&name) {
                    out.push(name);
                }
            }
            out
        };
        let insufficient = |vars: Vec<String>| QueryError::InsufficientBinding {
            vars,
            clause: to_edn_string(form),
        };
        match c {
            Clause::Pred { name, args } | Clause::Fn { name, args, .. } => {
                let unbound = missing(args.iter().filter_map(Term::var).collect());
                if !unbound.is_empty() {
                    return Err(insufficient(unbound));
                }
                if let Some(schema) = schema {
                    check_attribute_args(schema, name, args, form)?;
                }
            }
            Clause::Not { vars, clauses } => {
                let unbound = missing(vars.clone());
                if !unbound.is_empty() {
                    return Err(insufficient(unbound));
                }
                check_where(scope, &w.inner, clauses, vars)?;
            }
            Clause::Or {
                vars,
                required,
                branches,
            } => {
                // `(or-join [[?e] ?x] ...)`: `?e` must come bound from outside.
                let unbound = missing(required.clone());
                if !unbound.is_empty() {
                    return Err(insufficient(unbound));
                }
                let join = matches!(
                    w.parsed,
                    ClauseForm::Or {
                        join: Ok(Some(_)),
                        ..
                    }
                );
                if vars.is_empty() {
                    return Err(QueryError::OrBindingEmpty {
                        clause: to_edn_string(&as_or_join(form, join, &w.inner)),
                    });
                }
                if !join {
                    let sets: Vec<Vec<Var>> = branches.iter().map(|b| branch_vars(b)).collect();
                    if sets.iter().any(|s| *s != sets[0]) {
                        return Err(QueryError::OrBranchVars {
                            branches: sets
                                .iter()
                                .map(|s| {
                                    let names: Vec<&str> =
                                        s.iter().map(|v| names[*v].as_str()).collect();
                                    format!("#{{{}}}", names.join(" "))
                                })
                                .collect(),
                            clause: to_edn_string(form),
                        });
                    }
                }
                let outer: Vec<Var> = vars.iter().copied().filter(|v| bound.contains(v)).collect();
                for (branch_written, branch) in w.inner.iter().zip(branches) {
                    let inner = match branch_written.parsed {
                        ClauseForm::And => &branch_written.inner[..],
                        _ => std::slice::from_ref(branch_written),
                    };
                    check_where(scope, inner, branch, &outer)?;
                }
            }
            Clause::Rule { name, args, .. } => {
                // A head variable some body never binds must come bound from the call.
                let Some(bodies) = scope.rules.get(name) else {
                    continue;
                };
                let mut unbound: Vec<String> = Vec::new();
                for i in given_by_caller(bodies) {
                    match args.get(i) {
                        Some(Term::Var(v)) if !bound.contains(v) => unbound.push(names[*v].clone()),
                        Some(Term::Blank) => unbound.push("_".to_string()),
                        _ => {}
                    }
                }
                if !unbound.is_empty() {
                    return Err(insufficient(unbound));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The head positions of a rule that some body does not bind.
fn given_by_caller(bodies: &[RuleBody]) -> Vec<usize> {
    let arity = bodies.first().map_or(0, |b| b.head.len());
    (0..arity)
        .filter(|&i| {
            bodies.iter().any(|b| {
                let head = b.head[i];
                !b.clauses.iter().any(|c| binds(c).contains(&head))
            })
        })
        .collect()
}

/// The attribute `get-else` names must exist, as in a data pattern (its arguments come without the `$`: the attributes from the second).
fn check_attribute_args(
    schema: &Schema,
    name: &str,
    args: &[Term],
    form: &Edn,
) -> Result<(), QueryError> {
    let attrs = match name {
        // `missing?` of an unknown attribute is true (Datomic).
        "get-else" => args.get(1..2).unwrap_or(&[]),
        // `get-some` resolves its attributes in turn, stopping at the first value (Datomic):
        // the engine rejects an unknown one when it reaches it.
        _ => &[],
    };
    for a in attrs {
        if let Term::Const(Value::Keyword(k)) = a {
            if schema.by_ident(k).is_none() {
                return Err(QueryError::UnknownAttribute {
                    attr: k.to_string(),
                    clause: to_edn_string(form),
                });
            }
        }
    }
    Ok(())
}

/// Checks that every `:find` and `:with` variable is bound by a clause or an input.
pub fn check_find(
    wanted: &[Var],
    clauses: &[Clause],
    given: &[Var],
    names: &[String],
) -> Result<(), QueryError> {
    let mut bound: Vec<Var> = given.to_vec();
    for c in clauses {
        bound.extend(binds(c));
    }
    let mut unbound: Vec<String> = Vec::new();
    for v in wanted {
        if !bound.contains(v) && !unbound.contains(&names[*v]) {
            unbound.push(names[*v].clone());
        }
    }
    if unbound.is_empty() {
        Ok(())
    } else {
        Err(QueryError::UnboundVariables { vars: unbound })
    }
}

/// Whether a data pattern names no entity, attribute or value (each a variable or `_`).
fn is_unanchored(p: &super::ir::Pattern) -> bool {
    let open = |t: &Term| matches!(t, Term::Var(_) | Term::Blank);
    open(&p.e) && matches!(p.a, AttrTerm::Var(_) | AttrTerm::Blank) && open(&p.v)
}

/// The variables a clause binds for the clauses around it.
fn binds(c: &Clause) -> Vec<Var> {
    match c {
        Clause::Pattern(..)
        | Clause::Timed(..)
        | Clause::Rule { .. }
        | Clause::Source { .. }
        | Clause::Or { .. } => c.vars(),
        Clause::Fn { binding, .. } => binding.vars(),
        Clause::Pred { .. } | Clause::Not { .. } => Vec::new(),
        Clause::Dollar { clause, .. } => binds(clause),
    }
}

/// Every variable a branch of an `or` mentions, sorted.
fn branch_vars(branch: &[Clause]) -> Vec<Var> {
    let mut vars: Vec<Var> = branch.iter().flat_map(Clause::vars).collect();
    vars.sort_unstable();
    vars.dedup();
    vars
}

/// An `or` with no join variables as Datomic reads it: `(or-join [] branches...)`.
fn as_or_join(form: &Edn, join: bool, branches: &[WhereClause]) -> Edn {
    if join {
        return form.clone();
    }
    let mut items = vec![
        Edn::Symbol(crate::codec::Keyword::new(None, "or-join")),
        Edn::Vector(Vec::new()),
    ];
    items.extend(branches.iter().map(|b| b.form.edn.clone()));
    Edn::List(items)
}
