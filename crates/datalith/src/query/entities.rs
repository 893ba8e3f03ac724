//! Entities named by constants and inputs, resolved in the database of the clause that uses
//! them: entity ids, idents and lookup refs become entity ids.

use std::collections::BTreeMap;

use super::error::QueryError;
use super::ir::{AttrTerm, Clause, Pattern, RuleBody, Term, Var};
use super::relation::Relation;
use crate::codec::{Keyword, Value, ValueType};
use crate::store::reader::IndexReader;
use crate::store::schema::Schema;

/// The databases a query reads, by source number, with their readers and schemas.
pub(super) type Readers<'a> = BTreeMap<usize, (IndexReader<'a>, &'a Schema)>;

/// The entity `v` names in a database: an entity id (a ref or a non-negative number), an
/// ident, or a lookup ref `[unique-attr value]`. Anything else, or an ident or lookup ref that
/// names no entity, is an error (as in Datomic; an entity id need not exist).
fn entity(r: &IndexReader<'_>, schema: &Schema, v: &Value) -> Result<Value, QueryError> {
    let shown = || crate::edn::to_edn_string(&crate::edn::edn_from_value(v));
    // Datomic: "Cannot resolve key" for an ident or lookup ref that names nothing.
    let no_key = || QueryError::UnresolvedKey { key: shown() };
    // Datomic reads a string here as a keyword (an ident), which needs its leading colon.
    let read_keyword;
    let v = match v {
        Value::String(s) => {
            read_keyword = Value::Keyword(keyword_of_string(s, shown)?);
            &read_keyword
        }
        v => v,
    };
    let found = match v {
        Value::Ref(e) => Some(*e),
        Value::Long(n) => u64::try_from(*n).ok(),
        Value::Keyword(k) => match schema.by_ident(k) {
            Some(a) => Some(a.id as u64),
            None => Some(crate::store::load::entity_of_ident(r, k)?.ok_or_else(no_key)?),
        },
        Value::Tuple(items) => match items.as_slice() {
            [Some(Value::Keyword(k)), Some(val)] => match schema.by_ident(k) {
                Some(a) if a.unique.is_some() => Some(
                    r.first_entity_with(a.id, &value_constant(schema, a.id, val)?)?
                        .ok_or_else(no_key)?,
                ),
                Some(_) => {
                    return Err(QueryError::LookupRefNotUnique {
                        attr: k.to_string(),
                        lookup_ref: shown(),
                    })
                }
                // Datomic: "Unable to resolve entity: <attr>".
                None => {
                    return Err(QueryError::UnknownAttribute {
                        attr: k.to_string(),
                        clause: shown(),
                    })
                }
            },
            _ => None,
        },
        _ => None,
    };
    found
        .map(Value::Ref)
        .ok_or_else(|| QueryError::UnresolvedEntity { value: shown() })
}

/// The keyword a string spells where a keyword is due (`Keyword::from_colon_text`); a string
/// without the leading colon is refused.
fn keyword_of_string(s: &str, shown: impl Fn() -> String) -> Result<Keyword, QueryError> {
    Keyword::from_colon_text(s).ok_or_else(|| QueryError::NotAKeyword { value: shown() })
}

/// A value constant of attribute `a` (not a ref; constants and scalar inputs, before
/// planning) in the type the attribute holds, as Datomic reads one: a string or a symbol for a
/// keyword attribute is a keyword (`":dev"`, `dev`; a string without the colon is an error),
/// and a long for a bigint attribute is that bigint. Anything else is left as it is (and
/// matches only a value of its own type). Values bound while the query runs are compared as
/// they are (`exec::coerce`).
fn value_constant(
    schema: &Schema,
    a: crate::store::AttrId,
    v: &Value,
) -> Result<Value, QueryError> {
    match (schema.get(a).map(|x| x.value_type), v) {
        (Some(ValueType::Keyword), Value::String(s)) => {
            Ok(Value::Keyword(keyword_of_string(s, || {
                crate::edn::to_edn_string(&crate::edn::edn_from_value(v))
            })?))
        }
        (Some(ValueType::Keyword), Value::Symbol(k)) => Ok(Value::Keyword(k.clone())),
        (Some(ValueType::Tuple), Value::Tuple(items)) => {
            let attr = schema.get(a).expect("the attribute's type was read");
            let type_of = |k: &Keyword| schema.by_ident(k).map(|x| x.value_type);
            Ok(Value::Tuple(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let t = attr.tuple_element_type(i, type_of);
                        item.as_ref().map(|x| integer_as(t, x))
                    })
                    .collect(),
            ))
        }
        (t @ Some(ValueType::Long | ValueType::BigInt), Value::Long(_) | Value::BigInt(_)) => {
            Ok(integer_as(t, v))
        }
        _ => Ok(super::exec::coerce(schema, a, v)),
    }
}

/// An integer constant in the integer type `t` holds (a long for a bigint attribute, a
/// bigint within a long's range for a long attribute, as Datomic reads `31N` or a tuple's
/// `[1N "one"]`); any other value as it is.
fn integer_as(t: Option<ValueType>, v: &Value) -> Value {
    match (t, v) {
        (Some(ValueType::BigInt), Value::Long(n)) => Value::BigInt(Box::new(i128::from(*n))),
        (Some(ValueType::Long), Value::BigInt(n)) => match i64::try_from(**n) {
            Ok(n) => Value::Long(n),
            Err(_) => v.clone(),
        },
        _ => v.clone(),
    }
}

/// `input` with column `shadow`: column `v`'s values resolved to entity ids in one database.
/// A `lenient` column (a database function's entity) keeps an ident or lookup ref that names
/// nothing as it is, for the function to read as an entity without datoms (Datomic's
/// `get-else` gives its default there, where a pattern refuses it).
pub(super) fn add_resolved_column(
    mut input: Relation,
    v: Var,
    shadow: Var,
    lenient: bool,
    (r, schema): &(IndexReader<'_>, &Schema),
) -> Result<Relation, QueryError> {
    let c = input.col(v).expect("an input variable");
    for row in &mut input.rows {
        let e = match entity(r, schema, &row[c]) {
            Err(QueryError::UnresolvedKey { .. }) if lenient => row[c].clone(),
            other => other?,
        };
        row.push(e);
    }
    input.vars.push(shadow);
    Ok(input)
}

/// Rewrites the clauses so that variables bound by inputs read, where a clause uses them as
/// an entity (entity or attribute position, the value of a ref attribute, a rule argument
/// the rule uses so), a shadow variable holding the entity id the input names in that
/// clause's database. The variable itself keeps the input (Datomic returns a lookup ref
/// given as input as the lookup ref).
pub(super) struct Shadows<'r, 'a> {
    readers: &'r Readers<'a>,
    rules: &'r BTreeMap<usize, BTreeMap<String, Vec<RuleBody>>>,
    input_vars: &'r [Var],
    next_var: Var,
    /// (input variable, source, lenient, shadow variable): a lenient shadow is a database
    /// function's entity (`add_resolved_column`).
    made: Vec<(Var, usize, bool, Var)>,
}

impl<'r, 'a> Shadows<'r, 'a> {
    /// Shadows for `input_vars` in the databases of `readers` (rules by the source they are
    /// lowered for); new variables are numbered from `next_var`.
    pub(super) fn new(
        readers: &'r Readers<'a>,
        rules: &'r BTreeMap<usize, BTreeMap<String, Vec<RuleBody>>>,
        input_vars: &'r [Var],
        next_var: Var,
    ) -> Self {
        Shadows {
            readers,
            rules,
            input_vars,
            next_var,
            made: Vec::new(),
        }
    }

    /// Rewrites the query's `clauses`; returns (input variable, source, lenient, shadow
    /// variable) for each shadow made.
    pub(super) fn rewrite(
        mut self,
        clauses: &mut [Clause],
    ) -> Result<Vec<(Var, usize, bool, Var)>, QueryError> {
        self.clauses(clauses, 0)?;
        Ok(self.made)
    }

    fn shadow(&mut self, v: Var, src: usize, lenient: bool) -> Var {
        if let Some((.., s)) = self
            .made
            .iter()
            .find(|(x, y, l, _)| *x == v && *y == src && *l == lenient)
        {
            return *s;
        }
        let s = self.next_var;
        self.next_var += 1;
        self.made.push((v, src, lenient, s));
        s
    }

    fn term(&mut self, t: &mut Term, src: usize) {
        self.term_as(t, src, false);
    }

    fn term_as(&mut self, t: &mut Term, src: usize, lenient: bool) {
        if let Term::Var(v) = t {
            if self.input_vars.contains(v) {
                *v = self.shadow(*v, src, lenient);
            }
        }
    }

    /// `dollar`: the source `$` stands for at top level (the clauses are the query's).
    fn clauses(&mut self, clauses: &mut [Clause], dollar: usize) -> Result<(), QueryError> {
        for c in clauses {
            match c {
                Clause::Pattern(src, p) => {
                    let src = if *src == 0 { dollar } else { *src };
                    let Some((_, schema)) = self.readers.get(&src) else {
                        continue;
                    };
                    let is_ref = matches!(p.a, AttrTerm::Attr(a) if schema.get(a).is_some_and(|x| x.is_ref()));
                    self.term(&mut p.e, src);
                    if let AttrTerm::Var(v) = &mut p.a {
                        let mut t = Term::Var(*v);
                        self.term(&mut t, src);
                        p.a = AttrTerm::Var(t.var().expect("a variable"));
                    }
                    if is_ref {
                        self.term(&mut p.v, src);
                    }
                }
                Clause::Timed(src, t) => {
                    let mut one = [Clause::Pattern(*src, t.p.clone())];
                    self.clauses(&mut one, dollar)?;
                    if let [Clause::Pattern(_, p)] = one {
                        t.p = p;
                    }
                    let src = if *src == 0 { dollar } else { *src };
                    if self.readers.contains_key(&src) {
                        self.term(&mut t.tx, src);
                    }
                }
                Clause::Rule { name, args, src } => {
                    let src = if *src == 0 { dollar } else { *src };
                    let Some((r, schema)) = self.readers.get(&src) else {
                        continue;
                    };
                    let Some(bodies) = self.rules.get(&src).and_then(|r| r.get(name.as_str()))
                    else {
                        continue;
                    };
                    for (i, a) in args.iter_mut().enumerate() {
                        let entity_arg = bodies.iter().any(|b| {
                            b.head
                                .get(i)
                                .is_some_and(|h| uses_as_entity(&b.clauses, *h, schema))
                        });
                        if entity_arg {
                            // A constant argument (a scalar input) names its entity too.
                            if let Term::Const(c) = a {
                                *c = entity(r, schema, c)?;
                            }
                            self.term(a, src);
                        }
                    }
                }
                Clause::Or {
                    vars,
                    required,
                    branches,
                } => {
                    for b in branches.iter_mut() {
                        self.clauses(b, dollar)?;
                    }
                    let inner: Vec<Var> =
                        branches.iter().flatten().flat_map(Clause::vars).collect();
                    self.share(vars, Some(required), &inner);
                }
                Clause::Not { vars, clauses } => {
                    self.clauses(clauses, dollar)?;
                    let inner: Vec<Var> = clauses.iter().flat_map(Clause::vars).collect();
                    self.share(vars, None, &inner);
                }
                // Database functions take the entity first.
                Clause::Pred { name, args } | Clause::Fn { name, args, .. }
                    if matches!(name.as_str(), "get-else" | "get-some" | "missing?") =>
                {
                    let (Some(a), Some((r, schema))) =
                        (args.first_mut(), self.readers.get(&dollar))
                    else {
                        continue;
                    };
                    // An ident or lookup ref that names nothing is an entity without datoms
                    // here (Datomic), kept as written for the function to read so.
                    if let Term::Const(c) = a {
                        match entity(r, schema, c) {
                            Ok(e) => *c = e,
                            Err(QueryError::UnresolvedKey { .. }) => {}
                            Err(e) => return Err(e),
                        }
                    }
                    self.term_as(a, dollar, true);
                }
                Clause::Dollar { src, clause } => {
                    let src = if *src == 0 { dollar } else { *src };
                    self.clauses(std::slice::from_mut(&mut **clause), src)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// An `or`/`not` shares the shadows of the variables it shares, when its clauses use them.
    fn share(&self, vars: &mut Vec<Var>, required: Option<&mut Vec<Var>>, inner: &[Var]) {
        let mut req = required;
        for (v, _, _, s) in &self.made {
            if vars.contains(v) && inner.contains(s) && !vars.contains(s) {
                vars.push(*s);
                if let Some(r) = req.as_deref_mut() {
                    if r.contains(v) {
                        r.push(*s);
                    }
                }
            }
        }
    }
}

/// Whether `v` is an entity in one of `clauses` (directly, or in `or`/`not`).
fn uses_as_entity(clauses: &[Clause], v: Var, schema: &Schema) -> bool {
    clauses.iter().any(|c| match c {
        Clause::Timed(0, t) if t.tx == Term::Var(v) => true,
        Clause::Timed(0, t) => uses_as_entity(&[Clause::Pattern(0, t.p.clone())], v, schema),
        Clause::Pattern(0, p) => {
            p.e == Term::Var(v)
                || p.a == AttrTerm::Var(v)
                || (p.v == Term::Var(v)
                    && matches!(p.a, AttrTerm::Attr(a) if schema.get(a).is_some_and(|x| x.is_ref())))
        }
        Clause::Or { branches, .. } => branches.iter().any(|b| uses_as_entity(b, v, schema)),
        Clause::Not { clauses, .. } => uses_as_entity(clauses, v, schema),
        _ => false,
    })
}

/// Entity constants (idents, lookup refs `[attr value]`, numbers) become entity ids in the
/// database of their clause; value constants of ref attributes too. A constant that names no
/// entity matches nothing. `dollar` is the source `$` stands for.
pub(super) fn resolve_constants(
    readers: &Readers<'_>,
    dollar: usize,
    clauses: &[Clause],
) -> Result<Vec<Clause>, QueryError> {
    clauses
        .iter()
        .map(|c| {
            Ok(match c {
                Clause::Pattern(src, p) => {
                    let Some((r, schema)) = readers.get(&if *src == 0 { dollar } else { *src }) else {
                        return Ok(c.clone());
                    };
                    let e = match &p.e {
                        Term::Const(v) => Term::Const(entity(r, schema, v)?),
                        t => t.clone(),
                    };
                    let is_ref = matches!(p.a, AttrTerm::Attr(a) if schema.get(a).is_some_and(|x| x.is_ref()));
                    let v = match (&p.v, &p.a) {
                        (Term::Const(v), _) if is_ref => Term::Const(entity(r, schema, v)?),
                        (Term::Const(v), AttrTerm::Attr(a)) => Term::Const(value_constant(schema, *a, v)?),
                        (t, _) => t.clone(),
                    };
                    Clause::Pattern(*src, Pattern { e, a: p.a.clone(), v })
                }
                Clause::Timed(src, t) => {
                    let Some((r, _)) = readers.get(&if *src == 0 { dollar } else { *src }) else {
                        return Ok(c.clone());
                    };
                    let Clause::Pattern(_, p) = resolve_constants(readers, dollar, &[Clause::Pattern(*src, t.p.clone())])?.remove(0) else {
                        unreachable!("a pattern resolves to a pattern")
                    };
                    let tx = match &t.tx {
                        Term::Const(v) => Term::Const(entity(r, &Schema::default(), v)?),
                        other => other.clone(),
                    };
                    Clause::Timed(*src, crate::query::ir::TimedPattern { p, tx, added: t.added.clone() })
                }
                Clause::Or { vars, required, branches } => Clause::Or {
                    vars: vars.clone(),
                    required: required.clone(),
                    branches: branches.iter().map(|b| resolve_constants(readers, dollar, b)).collect::<Result<_, _>>()?,
                },
                Clause::Not { vars, clauses } => Clause::Not { vars: vars.clone(), clauses: resolve_constants(readers, dollar, clauses)? },
                other => other.clone(),
            })
        })
        .collect()
}
