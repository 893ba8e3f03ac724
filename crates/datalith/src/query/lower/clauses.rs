//! Lowering one clause: variables numbered within their scope, attributes resolved against
//! the schema of the source the clause reads, scalar inputs plugged in as constants, binding
//! forms and `or`/`not` join variables checked.

use std::collections::HashMap;

use super::*;
use crate::codec::Value;
use crate::edn::Edn;
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Binding, Clause, Pattern, Term, TimedPattern, Var};
use crate::query::parse::{
    BindingForm, CallBinding, ClauseForm, JoinSpec, JoinVar, OutVar, TermForm, WhereClause,
};
use crate::store::schema::Schema;

/// Numbers variables within one scope (the query, or one rule body).
#[derive(Default)]
pub(super) struct Vars {
    pub(super) names: Vec<String>,
    pub(super) by_name: HashMap<String, Var>,
}

impl Vars {
    pub(super) fn get(&mut self, name: &str) -> Var {
        if let Some(v) = self.by_name.get(name) {
            return *v;
        }
        let v = self.names.len();
        self.names.push(name.to_string());
        self.by_name.insert(name.to_string(), v);
        v
    }
}

/// What a data source is, as lowering needs to know it.
#[derive(Clone, Copy)]
pub enum SourceKind<'a> {
    /// A database: attributes resolve against its schema.
    Db(&'a Schema),
    /// A collection of tuples: a clause's terms match a prefix of each tuple.
    Relation,
}

/// One `:in` input as lowering sees it.
#[derive(Clone, Copy)]
pub enum InputKind<'a> {
    /// A database, with its schema.
    Db(&'a Schema),
    /// A value: a scalar, a collection, a relation, or rules.
    Value(&'a Edn),
}

/// What lowering needs besides the form.
pub struct LowerCtx<'a> {
    /// Scalar inputs to plug in, by variable name.
    pub constants: HashMap<String, Value>,
    /// Source names (`$`, `$name`) to source numbers and kinds.
    pub sources: HashMap<String, (usize, SourceKind<'a>)>,
}

pub(super) struct Lowerer<'a, 'b> {
    pub(super) cx: &'b LowerCtx<'a>,
    pub(super) vars: Vars,
    pub(super) rule_names: Vec<String>,
    /// The source of clauses without one: `$`, or `$x` inside `($x or ...)`.
    pub(super) default_src: String,
    /// Variables of scalar inputs that the result reads (`:find`, `:with`, `:order-by`):
    /// clauses see the input as a constant, the result sees the variable bound to it.
    pub(super) plugged: Vec<(Var, String)>,
    /// In a rule body: unknown attributes, reported only if the rule is called (Datomic).
    pub(super) unknown_attrs: Option<Vec<QueryError>>,
}

impl<'a> Lowerer<'a, '_> {
    pub(super) fn term(&mut self, t: &TermForm) -> Result<Term, QueryError> {
        match t {
            TermForm::Var(name) => Ok(match self.cx.constants.get(name) {
                Some(c) => Term::Const(c.clone()),
                None => Term::Var(self.vars.get(name)),
            }),
            TermForm::Blank => Ok(Term::Blank),
            TermForm::Const(v) => Ok(Term::Const(v.clone())),
            TermForm::Bad(message) => Err(perr(message.clone())),
        }
    }

    fn terms(&mut self, ts: &[TermForm]) -> Result<Vec<Term>, QueryError> {
        ts.iter().map(|t| self.term(t)).collect()
    }

    pub(super) fn attr(&mut self, t: &TermForm, schema: &Schema) -> Result<AttrTerm, QueryError> {
        match self.term(t)? {
            Term::Var(v) => Ok(AttrTerm::Var(v)),
            Term::Blank => Ok(AttrTerm::Blank),
            Term::Const(Value::Long(n)) if n >= 0 => Ok(AttrTerm::Attr(n as u32)),
            // A keyword, written or a scalar input naming the attribute.
            Term::Const(Value::Keyword(k)) => Ok(match schema.by_ident(&k) {
                Some(a) => AttrTerm::Attr(a.id),
                None => AttrTerm::Unknown(k),
            }),
            Term::Const(c) => Err(perr(format!(
                "{} is not an attribute",
                show(&crate::edn::edn_from_value(&c))
            ))),
        }
    }

    pub(super) fn binding(&mut self, b: &BindingForm) -> Result<Binding, QueryError> {
        Ok(match b {
            BindingForm::Relation(ts) => Binding::Relation(self.terms(ts)?),
            BindingForm::Collection(t) => Binding::Collection(self.term(t)?),
            BindingForm::Tuple(ts) => Binding::Tuple(self.terms(ts)?),
            BindingForm::Scalar(t) => Binding::Scalar(self.term(t)?),
        })
    }

    /// Lowers clause `c`; its form is read only to print it in messages. A clause nests
    /// clauses (`or`, `not`) as deep as the text does: each level a stack step.
    pub(super) fn clause(&mut self, c: &WhereClause) -> Result<Clause, QueryError> {
        crate::stack::deep(|| self.clause_here(c))
    }

    fn clause_here(&mut self, c: &WhereClause) -> Result<Clause, QueryError> {
        let e = &c.form.edn;
        match &c.parsed {
            ClauseForm::Call {
                name,
                src,
                args,
                binding,
            } => {
                // Database functions take their source first (`$` inside `($x or ...)` is
                // `$x`); the call reads it as its `$`.
                let (src, reads_db) = match src.as_deref() {
                    Some("$") => {
                        let (s, k) = self.source(&self.default_src.clone(), e)?;
                        (s, matches!(k, SourceKind::Db(_)))
                    }
                    Some(name) => {
                        let (s, k) = self.source(name, e)?;
                        (s, matches!(k, SourceKind::Db(_)))
                    }
                    None => (0, false),
                };
                if name == "fulltext" {
                    check_fulltext_call(reads_db, args.len(), binding, e)?;
                }
                let args = self.terms(args)?;
                let name = name.clone();
                let c = match binding {
                    CallBinding::None => Clause::Pred { name, args },
                    CallBinding::One(b) => Clause::Fn {
                        name,
                        args,
                        binding: self.binding(b)?,
                    },
                    CallBinding::TooMany => {
                        return Err(perr(format!(
                            "a function clause has one binding at most: {}",
                            show(e)
                        )))
                    }
                };
                Ok(match src {
                    0 => c,
                    src => Clause::Dollar {
                        src,
                        clause: Box::new(c),
                    },
                })
            }
            ClauseForm::Pattern { src, terms } => {
                let (src, kind) = self.source(src.as_deref().unwrap_or(&self.default_src), e)?;
                let schema = match kind {
                    SourceKind::Db(schema) => schema,
                    SourceKind::Relation => {
                        if terms.is_empty() {
                            return Err(perr(format!("an empty clause: {}", show(e))));
                        }
                        let terms = self.terms(terms)?;
                        return Ok(Clause::Source { src, terms });
                    }
                };
                // Datomic reads the first five elements and ignores any after them.
                if terms.is_empty() {
                    return Err(perr(format!("an empty data pattern: {}", show(e))));
                }
                let get = |i: usize| terms.get(i).unwrap_or(&TermForm::Blank);
                let (tx, added) = (self.term(get(3))?, self.term(get(4))?);
                let p = Pattern {
                    e: self.term(get(0))?,
                    a: self.attr(get(1), schema)?,
                    v: self.term(get(2))?,
                };
                // The database's attributes are known: a name it lacks is a mistake (an input
                // relation's attribute column may hold any keyword).
                if let (0, AttrTerm::Unknown(k)) = (src, &p.a) {
                    let err = QueryError::UnknownAttribute {
                        attr: k.to_string(),
                        clause: show(e),
                    };
                    match &mut self.unknown_attrs {
                        Some(deferred) => deferred.push(err),
                        None => return Err(err),
                    }
                }
                if tx != Term::Blank || added != Term::Blank {
                    return Ok(Clause::Timed(src, TimedPattern { p, tx, added }));
                }
                Ok(Clause::Pattern(src, p))
            }
            ClauseForm::Or { src, join } | ClauseForm::Not { src, join } => {
                // `($x or ...)`, `($x not ...)`: the inner clauses read `$x` by default.
                let saved = match src {
                    Some(src) => {
                        self.source(src, e)?;
                        Some(std::mem::replace(&mut self.default_src, src.clone()))
                    }
                    None => None,
                };
                let lowered = self.junction(c, join);
                if let Some(saved) = saved {
                    self.default_src = saved;
                }
                lowered
            }
            ClauseForm::Rule { src, name, args } => {
                if !self.rule_names.contains(name) {
                    if name == "and" {
                        return Err(QueryError::AndOutsideOr { clause: show(e) });
                    }
                    return Err(QueryError::UnknownRule { name: name.clone() });
                }
                let (src, _) = self.source(src.as_deref().unwrap_or(&self.default_src), e)?;
                let args = self.terms(args)?;
                Ok(Clause::Rule {
                    name: name.clone(),
                    args,
                    src,
                })
            }
            // Only an `or` branch is an `and`, and the `or` reads its clauses.
            ClauseForm::And => Err(QueryError::AndOutsideOr { clause: show(e) }),
            ClauseForm::Malformed(message) => Err(perr(message.clone())),
        }
    }

    /// An `or`/`or-join` (each inner clause a branch) or a `not`/`not-join` (the inner
    /// clauses its body).
    fn junction(&mut self, c: &WhereClause, join: &JoinSpec) -> Result<Clause, QueryError> {
        let (vars, required) = match join {
            Err(message) => return Err(perr(message.clone())),
            Ok(Some(spec)) => {
                let (vars, req) = self.join_vars(spec)?;
                (Some(vars), req)
            }
            Ok(None) => (None, Vec::new()),
        };
        let mut bodies = Vec::new();
        if matches!(c.parsed, ClauseForm::Or { .. }) {
            for b in &c.inner {
                bodies.push(match b.parsed {
                    ClauseForm::And => self.clauses(&b.inner)?,
                    _ => vec![self.clause(b)?],
                });
            }
        } else {
            bodies.push(self.clauses(&c.inner)?);
        }
        let vars = vars.unwrap_or_else(|| {
            let mut v: Vec<Var> = bodies.iter().flatten().flat_map(|c| c.vars()).collect();
            v.sort_unstable();
            v.dedup();
            v
        });
        Ok(match c.parsed {
            ClauseForm::Or { .. } => Clause::Or {
                vars,
                required,
                branches: bodies,
            },
            _ => Clause::Not {
                vars,
                clauses: bodies.pop().unwrap_or_default(),
            },
        })
    }

    pub(super) fn clauses(&mut self, cs: &[WhereClause]) -> Result<Vec<Clause>, QueryError> {
        cs.iter()
            // `(not)` with nothing inside removes nothing (Datomic keeps every row).
            .filter(|c| !(matches!(c.parsed, ClauseForm::Not { .. }) && c.inner.is_empty()))
            .map(|c| self.clause(c))
            .collect()
    }

    pub(super) fn join_vars(
        &mut self,
        spec: &[JoinVar],
    ) -> Result<(Vec<Var>, Vec<Var>), QueryError> {
        let mut vars = Vec::new();
        let mut required = Vec::new();
        for s in spec {
            let v = self.var_of(&s.term, &s.written)?;
            if s.required {
                required.push(v);
            }
            vars.push(v);
        }
        Ok((vars, required))
    }

    pub(super) fn var_of(&mut self, t: &TermForm, written: &str) -> Result<Var, QueryError> {
        match self.term(t)? {
            Term::Var(v) => Ok(v),
            _ => Err(perr(format!("expected a variable, got {written}"))),
        }
    }

    /// A variable the result reads: a scalar input plugged into the clauses as a constant
    /// is still a variable here, bound to the input.
    pub(super) fn out_var(&mut self, o: &OutVar) -> Result<Var, QueryError> {
        if let TermForm::Var(name) = &o.term {
            if self.cx.constants.contains_key(name) {
                let v = self.vars.get(name);
                if !self.plugged.iter().any(|(p, _)| *p == v) {
                    self.plugged.push((v, name.clone()));
                }
                return Ok(v);
            }
        }
        self.var_of(&o.term, &o.written)
    }

    pub(super) fn source(
        &self,
        name: &str,
        clause: &Edn,
    ) -> Result<(usize, SourceKind<'a>), QueryError> {
        self.cx
            .sources
            .get(name)
            .copied()
            .ok_or_else(|| QueryError::UnknownSource {
                name: name.to_string(),
                clause: show(clause),
            })
    }
}

/// Datomic's shape of a `fulltext` call: a database, an attribute and a query, bound to a
/// relation of at most `[?e ?value ?tx ?score]` (or a collection, or nothing).
fn check_fulltext_call(
    reads_db: bool,
    args: usize,
    binding: &CallBinding,
    e: &crate::edn::Edn,
) -> Result<(), QueryError> {
    let refuse = |why: &str| Err(perr(format!("{why}: {}", show(e))));
    if !reads_db {
        return refuse("fulltext takes a database first");
    }
    if args != 2 {
        return refuse("fulltext takes a database, an attribute and a query");
    }
    match binding {
        CallBinding::One(BindingForm::Tuple(_)) => refuse(
            "fulltext binds a relation ([[?e ?value ?tx ?score]]) or a collection, not a tuple",
        ),
        CallBinding::One(BindingForm::Relation(ts)) if ts.len() > 4 => {
            refuse("fulltext's relation has 4 columns at most ([[?e ?value ?tx ?score]])")
        }
        _ => Ok(()),
    }
}
