//! Rules: which rules a query reaches, and each lowered for the source it is called with
//! (its `$`), each body in its own variable scope.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::*;
use crate::edn::Edn;
use crate::query::error::QueryError;
use crate::query::ir::{Clause, RuleBody, Var};
use crate::query::parse::{clause_of, TermForm, WhereClause};

/// The rule names a rule set defines.
pub(super) fn rule_names(rules: &Edn) -> Vec<String> {
    let mut names = Vec::new();
    if let Edn::Vector(list) = rules {
        for r in list {
            if let Some(Edn::List(head)) = r.as_seq().and_then(|s| s.first()) {
                if let Some(n) = head.first().and_then(sym) {
                    names.push(n);
                }
            }
        }
    }
    names
}

/// The sources that rule calls among `clauses` read, besides `$`.
/// The rules that calls of `called` reach through the bodies' own calls (on the same `$`).
pub(super) fn reached_rules(
    rules: &BTreeMap<String, Vec<RuleBody>>,
    called: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut reached = BTreeSet::new();
    let mut todo: Vec<String> = called.iter().cloned().collect();
    while let Some(name) = todo.pop() {
        if !reached.insert(name.clone()) {
            continue;
        }
        for body in rules.get(&name).into_iter().flatten() {
            rules_called(&body.clauses, 0, &mut |n| todo.push(n.to_string()));
        }
    }
    reached
}

/// Calls each rule name a clause calls with source `src`.
pub(super) fn rules_called(clauses: &[Clause], src: usize, found: &mut dyn FnMut(&str)) {
    for c in clauses {
        match c {
            Clause::Rule { name, src: s, .. } if *s == src => found(name),
            Clause::Or { branches, .. } => {
                for b in branches {
                    rules_called(b, src, found);
                }
            }
            Clause::Not { clauses, .. } => rules_called(clauses, src, found),
            _ => {}
        }
    }
}

pub(super) fn rule_sources(clauses: &[Clause], out: &mut std::collections::BTreeSet<usize>) {
    for c in clauses {
        match c {
            Clause::Rule { src, .. } if *src != 0 => {
                out.insert(*src);
            }
            Clause::Or { branches, .. } => {
                for b in branches {
                    rule_sources(b, out);
                }
            }
            Clause::Not { clauses, .. } => rule_sources(clauses, out),
            _ => {}
        }
    }
}

/// Restricts `not` and `or` variables to those the enclosing scope shares (variables only
/// inside a `not` are local to it).
pub(super) fn scope_vars(clauses: &mut [Clause], outer: &[Var]) {
    for i in 0..clauses.len() {
        let mut visible: Vec<Var> = outer.to_vec();
        for (j, c) in clauses.iter().enumerate() {
            if j != i {
                visible.extend(c.vars());
            }
        }
        match &mut clauses[i] {
            Clause::Not {
                vars,
                clauses: inner,
            } => {
                vars.retain(|v| visible.contains(v));
                let keep = vars.clone();
                scope_vars(inner, &keep);
            }
            Clause::Or { vars, branches, .. } => {
                vars.retain(|v| visible.contains(v));
                let keep = vars.clone();
                for b in branches {
                    scope_vars(b, &keep);
                }
            }
            _ => {}
        }
    }
}

/// Reads rules for a call whose `$` is a source of `kind` (a rule body reads only its `$`).
/// With `called`, only the rules those calls reach are checked against the source: as in
/// Datomic, a rule never called with it may name attributes it lacks.
pub fn lower_rules_for(
    rules: &Edn,
    kind: SourceKind<'_>,
    called: Option<&BTreeSet<String>>,
) -> Result<BTreeMap<String, Vec<RuleBody>>, QueryError> {
    let Edn::Vector(list) = rules else {
        return Err(perr("rules are a vector of rule vectors"));
    };
    let names = rule_names(rules);
    let cx = LowerCtx {
        constants: HashMap::new(),
        sources: HashMap::from([("$".to_string(), (0, kind))]),
    };
    let mut out: BTreeMap<String, Vec<RuleBody>> = BTreeMap::new();
    let mut unchecked = Vec::new();
    for r in list {
        let Some([Edn::List(head), body @ ..]) = r.as_seq() else {
            return Err(perr(format!(
                "a rule is [(name args...) clauses...], not {}",
                show(r)
            )));
        };
        let name = head
            .first()
            .and_then(sym)
            .ok_or_else(|| perr("a rule head starts with its name"))?;
        let mut l = Lowerer {
            cx: &cx,
            vars: Vars::default(),
            rule_names: names.clone(),
            default_src: "$".to_string(),
            plugged: Vec::new(),
            unknown_attrs: Some(Vec::new()),
        };
        let mut head_vars = Vec::new();
        let mut required = 0;
        for (i, h) in head[1..].iter().enumerate() {
            match h {
                Edn::Vector(req) if i == 0 => {
                    for r in req {
                        head_vars.push(l.var_of(&TermForm::of(r), &show(r))?);
                        required += 1;
                    }
                }
                other => head_vars.push(l.var_of(&TermForm::of(other), &show(other))?),
            }
        }
        let body: Vec<WhereClause> = body.iter().map(clause_of).collect();
        let mut clauses = l.clauses(&body)?;
        // Checked once every rule is known (a body may call any of them).
        unchecked.push((
            name.clone(),
            l.unknown_attrs.take().unwrap_or_default(),
            body,
            clauses.clone(),
            head_vars.clone(),
            l.vars.names.clone(),
        ));
        scope_vars(&mut clauses, &head_vars);
        if let Some(prev) = out.get(&name).and_then(|b| b.first()) {
            if prev.head.len() != head_vars.len() {
                return Err(perr(format!("rule {name} has bodies of different arity")));
            }
        }
        out.entry(name).or_default().push(RuleBody {
            head: head_vars,
            required,
            clauses,
            var_count: l.vars.names.len(),
            var_names: l.vars.names.into(),
        });
    }
    check_call_arity(&out)?;
    let reached = called.map(|c| reached_rules(&out, c));
    for (name, unknown_attrs, body, clauses, head, names) in unchecked {
        if reached.as_ref().is_some_and(|r| !r.contains(&name)) {
            continue;
        }
        if let Some(err) = unknown_attrs.into_iter().next() {
            return Err(err);
        }
        let scope = crate::query::validate::Scope {
            schema: match kind {
                SourceKind::Db(schema) => Some(schema),
                SourceKind::Relation => None,
            },
            rules: &out,
            names: &names,
        };
        crate::query::validate::check_where(&scope, &body, &clauses, &head)?;
    }
    Ok(out)
}

/// Every call of a known rule inside a rule body has that rule's arity: the evaluator reads a
/// call's arguments by the callee's head positions (a mismatch was an index out of bounds,
/// found by the query fuzz target). The error is the one a top-level call with the wrong arity
/// gets when it runs.
fn check_call_arity(rules: &BTreeMap<String, Vec<RuleBody>>) -> Result<(), QueryError> {
    fn visit(c: &Clause, rules: &BTreeMap<String, Vec<RuleBody>>) -> Result<(), QueryError> {
        match c {
            Clause::Rule { name, args, .. } => {
                let arity = rules
                    .get(name)
                    .and_then(|b| b.first())
                    .map(|b| b.head.len());
                match arity {
                    Some(arity) if arity != args.len() => Err(QueryError::BadArguments {
                        name: name.clone(),
                        message: format!("rule takes {arity} arguments, got {}", args.len()),
                    }),
                    _ => Ok(()),
                }
            }
            Clause::Or { branches, .. } => {
                branches.iter().flatten().try_for_each(|c| visit(c, rules))
            }
            Clause::Not { clauses, .. } => clauses.iter().try_for_each(|c| visit(c, rules)),
            Clause::Dollar { clause, .. } => visit(clause, rules),
            _ => Ok(()),
        }
    }
    rules
        .values()
        .flatten()
        .flat_map(|b| &b.clauses)
        .try_for_each(|c| visit(c, rules))
}
