//! Lowering a whole query: the `:in` bindings, the `:where` clauses, rules, `:find` (with
//! aggregates and pull), `:with`, `:keys` and `:order-by`, into the engine's [`Query`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::*;
use crate::codec::Value;
use crate::edn::{value_from_input, Edn};
use crate::query::error::QueryError;
use crate::query::ir::{Binding, Clause, FindElem, InBinding, Query, Term, Var};
use crate::query::parse::{self as ast, Form, QueryAst};
use crate::store::schema::Schema;

/// Lowers a query. `inputs` are all the inputs `:in` names, in order; `implicit` is the
/// schema of a database that is `$` when `:in` does not name `$` (the receiver of
/// [`crate::api::Db::q`]). Returns the query and, for each input that binds (a source, rules
/// or a binding form), how it binds and its position in `inputs`.
pub fn lower(
    s: &QueryAst,
    inputs: &[InputKind<'_>],
    implicit: Option<&Schema>,
) -> Result<(Query, Vec<(InBinding, usize)>), QueryError> {
    let in_forms = &s.inputs;
    if in_forms.len() != inputs.len() {
        return Err(QueryError::InputCount {
            inputs: show(&Edn::Vector(
                in_forms.iter().map(|i| i.form.edn.clone()).collect(),
            )),
            expected: in_forms.len(),
            got: inputs.len(),
        });
    }
    let mut sources: HashMap<String, (usize, SourceKind<'_>)> = HashMap::new();
    let mut source_names = vec!["$".to_string()];
    let mut constants: HashMap<String, Value> = HashMap::new();
    let mut unequal_inputs: Vec<(Value, Value)> = Vec::new();
    let mut rules_edn: Option<&Edn> = None;
    let mut pull_patterns: HashMap<String, &Edn> = HashMap::new();
    // (form, position) of every input that binds at run time.
    let mut others: Vec<(&ast::InputForm, usize)> = Vec::new();
    for (i, (in_form, input)) in in_forms.iter().zip(inputs).enumerate() {
        let form = &in_form.form.edn;
        let kind_error = |expected: &str, got: String| QueryError::InputKind {
            input: show(form),
            expected: expected.to_string(),
            got,
        };
        let a_db = || "a database".to_string();
        if let ast::InputKind::Source(name) = &in_form.kind {
            let kind = match input {
                InputKind::Db(schema) => SourceKind::Db(schema),
                InputKind::Value(Edn::Vector(_) | Edn::List(_) | Edn::Set(_)) => {
                    SourceKind::Relation
                }
                InputKind::Value(v) => {
                    return Err(kind_error("a database or a collection of tuples", show(v)))
                }
            };
            let n = if name == "$" {
                0
            } else {
                source_names.push(name.clone());
                source_names.len() - 1
            };
            if sources.insert(name.clone(), (n, kind)).is_some() {
                return Err(perr(format!("data source {name} appears twice in :in")));
            }
            others.push((in_form, i));
            continue;
        }
        let InputKind::Value(value) = *input else {
            let expected = match &in_form.kind {
                ast::InputKind::Rules => "rules",
                ast::InputKind::Scalar(_) => "a value",
                ast::InputKind::PullPattern(_) => "a pull pattern",
                _ => "a collection",
            };
            return Err(kind_error(expected, a_db()));
        };
        match &in_form.kind {
            ast::InputKind::Rules => {
                rules_edn = Some(value);
                others.push((in_form, i));
            }
            ast::InputKind::Scalar(name) => {
                let v = value_from_input(value)
                    .ok_or_else(|| kind_error("a scalar value", show(value)))?;
                // A variable bound by two inputs takes a value both give (Datomic unifies
                // them): two different values leave no row.
                if let Some(first) = constants.get(name) {
                    if *first != v {
                        unequal_inputs.push((first.clone(), v));
                    }
                    continue;
                }
                constants.insert(name.clone(), v);
            }
            // A plain symbol names a pull pattern given as an input (`(pull ?e pattern)`).
            ast::InputKind::PullPattern(name) => {
                pull_patterns.insert(name.clone(), value);
            }
            _ => others.push((in_form, i)),
        }
    }
    if let (None, Some(schema)) = (sources.get("$"), implicit) {
        sources.insert("$".to_string(), (0, SourceKind::Db(schema)));
    }
    let cx = LowerCtx { constants, sources };
    let mut l = Lowerer {
        cx: &cx,
        vars: Vars::default(),
        rule_names: rules_edn.map(rule_names).unwrap_or_default(),
        default_src: "$".to_string(),
        plugged: Vec::new(),
        unknown_attrs: None,
    };

    // :find
    let shape = s.find.shape;
    let mut find = Vec::new();
    for (form, f) in s.find.forms.iter().zip(&s.find.elements) {
        let f = &f.edn;
        find.push(match form {
            ast::FindForm::Malformed(message) => return Err(perr(message.clone())),
            ast::FindForm::Pull { src, var, pattern } => {
                let src = match src {
                    Some(name) => l.source(name, f)?.0,
                    None => 0,
                };
                // A pattern named by a plain symbol is the input of that name.
                let pattern = match sym(pattern).and_then(|n| pull_patterns.get(&n)) {
                    Some(given) => given,
                    None => pattern,
                };
                FindElem::Pull {
                    var: l.out_var(var)?,
                    pattern: match s.pulls.iter().find(|(text, _)| text == pattern) {
                        Some((_, parsed)) => parsed.clone(),
                        None => Arc::new(crate::pull::parse_pattern(pattern)?),
                    },
                    src,
                }
            }
            ast::FindForm::Aggregate { name, args, var } => FindElem::Aggregate {
                name: name.clone(),
                args: args.clone().map_err(perr)?,
                var: l.out_var(var)?,
            },
            ast::FindForm::Var(var) => FindElem::Var(l.out_var(var)?),
        });
    }
    let keys = match &s.keys {
        None => None,
        Some((kind, names)) => {
            if names.len() != find.len() {
                return Err(perr(format!(
                    "{} keys for {} find elements",
                    names.len(),
                    find.len()
                )));
            }
            Some((
                *kind,
                names
                    .iter()
                    .map(|n| sym(&n.edn).unwrap_or_else(|| show(&n.edn)))
                    .collect(),
            ))
        }
    };
    let with = s
        .with_vars
        .iter()
        .map(|w| l.out_var(w))
        .collect::<Result<Vec<_>, _>>()?;
    let mut clauses = l.clauses(&s.clauses)?;
    // A variable two inputs gave different values: a test that fails on every row.
    for (a, b) in unequal_inputs {
        clauses.push(Clause::Pred {
            name: "=".into(),
            args: vec![Term::Const(a), Term::Const(b)],
        });
    }
    let mut outer: Vec<Var> = find.iter().map(FindElem::var).collect();
    outer.extend(&with);
    // Input binding variables are outer too.
    let mut in_bindings = Vec::new();
    for (in_form, pos) in others {
        let b = match &in_form.kind {
            ast::InputKind::Source(name) => InBinding::Source(cx.sources[name].0),
            ast::InputKind::Rules => InBinding::Rules,
            _ => {
                // Only a binding form is left here (scalars and pull patterns were taken
                // above), and `InputForm::of` reads every binding form.
                let form = in_form
                    .binding
                    .as_ref()
                    .expect("a binding input's form is read");
                InBinding::Bind(l.binding(form)?)
            }
        };
        if let InBinding::Bind(b) = &b {
            outer.extend(b.vars());
        }
        in_bindings.push((b, pos));
    }
    let order_by = parse_order(&s.order_by, &mut l)?;
    // Scalar inputs the result reads: bound to their input as well.
    for (v, name) in std::mem::take(&mut l.plugged) {
        let pos = in_forms
            .iter()
            .position(|i| matches!(&i.kind, ast::InputKind::Scalar(n) if *n == name))
            .expect("a plugged variable is an input");
        in_bindings.push((InBinding::Bind(Binding::Scalar(Term::Var(v))), pos));
    }
    let input_vars: Vec<Var> = in_bindings
        .iter()
        .flat_map(|(b, _)| match b {
            InBinding::Bind(b) => b.vars(),
            _ => Vec::new(),
        })
        .collect();
    let mut wanted: Vec<Var> = find.iter().map(FindElem::var).collect();
    wanted.extend(&with);
    // Rules, lowered for `$` and for each other source a call reads.
    let mut rules = BTreeMap::new();
    let mut source_rules = BTreeMap::new();
    if let Some(edn) = rules_edn {
        if let Some((_, kind)) = cx.sources.get("$") {
            let mut called = BTreeSet::new();
            rules_called(&clauses, 0, &mut |n| {
                called.insert(n.to_string());
            });
            rules = lower_rules_for(edn, *kind, Some(&called))?;
        }
        let mut called = std::collections::BTreeSet::new();
        rule_sources(&clauses, &mut called);
        for (_, (n, kind)) in cx.sources.iter().filter(|(_, (n, _))| called.contains(n)) {
            let mut names = BTreeSet::new();
            rules_called(&clauses, *n, &mut |name| {
                names.insert(name.to_string());
            });
            source_rules.insert(*n, lower_rules_for(edn, *kind, Some(&names))?);
        }
    }
    let scope = crate::query::validate::Scope {
        schema: match cx.sources.get("$") {
            Some((_, SourceKind::Db(schema))) => Some(*schema),
            _ => None,
        },
        rules: &rules,
        names: &l.vars.names,
    };
    crate::query::validate::check_where(&scope, &s.clauses, &clauses, &input_vars)?;
    // After the clauses: Datomic reports a clause's insufficient binding first.
    crate::query::validate::check_find(&wanted, &clauses, &input_vars, &l.vars.names)?;
    scope_vars(&mut clauses, &outer);
    let q = Query {
        find,
        shape,
        keys,
        with,
        inputs: in_bindings.iter().map(|(b, _)| b.clone()).collect(),
        clauses,
        rules,
        source_rules,
        source_names,
        var_names: l.vars.names,
        order_by,
        limit: s.limit,
        offset: s.offset,
        timeout_ms: s.timeout,
        memory_limit: s.memory_limit,
    };
    Ok((q, in_bindings))
}

pub(super) fn parse_order(
    items: &[Form],
    l: &mut Lowerer<'_, '_>,
) -> Result<Vec<(Var, bool)>, QueryError> {
    let items: Vec<Edn> = match items {
        [Form {
            edn: Edn::Vector(inner),
            ..
        }] => inner.clone(),
        other => other.iter().map(|f| f.edn.clone()).collect(),
    };
    let mut out: Vec<(Var, bool)> = Vec::new();
    for it in items {
        match &it {
            Edn::Keyword(k) if k.name() == "desc" || k.name() == "asc" => match out.last_mut() {
                Some(last) => last.1 = k.name() == "desc",
                None => return Err(perr(":order-by starts with a variable")),
            },
            other => out.push((l.out_var(&ast::OutVar::of(other))?, false)),
        }
    }
    Ok(out)
}
