//! Lowering one clause: variables numbered within their scope, attributes resolved against
//! the schema of the source the clause reads, scalar inputs plugged in as constants, binding
//! forms and `or`/`not` join variables checked.

use std::collections::HashMap;

use super::*;
use crate::codec::{Keyword, Value};
use crate::edn::{value_from_edn, Edn};
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Binding, Clause, Pattern, Term, Var};
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
    pub(super) fn term(&mut self, e: &Edn) -> Result<Term, QueryError> {
        if let Some(name) = is_var(e) {
            if let Some(c) = self.cx.constants.get(&name) {
                return Ok(Term::Const(c.clone()));
            }
            return Ok(Term::Var(self.vars.get(&name)));
        }
        if sym(e).as_deref() == Some("_") {
            return Ok(Term::Blank);
        }
        if *e == Edn::Nil {
            return Err(perr("nil is not a valid value in a clause"));
        }
        if let Edn::Regex(source) = e {
            // Say why a pattern literal is refused (e.g. a backreference), not just that it is.
            return crate::codec::Regex::parse(source)
                .map(|r| Term::Const(Value::Regex(r)))
                .map_err(|err| perr(format!("{}: {err}", show(e))));
        }
        match value_from_edn(e) {
            Some(v) => Ok(Term::Const(v)),
            None => Err(perr(format!("{} is not a variable or a constant", show(e)))),
        }
    }

    pub(super) fn attr(&mut self, e: &Edn, schema: &Schema) -> Result<AttrTerm, QueryError> {
        match e {
            Edn::Keyword(k) => Ok(match schema.by_ident(k) {
                Some(a) => AttrTerm::Attr(a.id),
                None => AttrTerm::Unknown(k.clone()),
            }),
            _ => match self.term(e)? {
                Term::Var(v) => Ok(AttrTerm::Var(v)),
                Term::Blank => Ok(AttrTerm::Blank),
                Term::Const(Value::Long(n)) if n >= 0 => Ok(AttrTerm::Attr(n as u32)),
                // A scalar input naming the attribute.
                Term::Const(Value::Keyword(k)) => Ok(match schema.by_ident(&k) {
                    Some(a) => AttrTerm::Attr(a.id),
                    None => AttrTerm::Unknown(k),
                }),
                Term::Const(c) => Err(perr(format!(
                    "{} is not an attribute",
                    show(&crate::edn::edn_from_value(&c))
                ))),
            },
        }
    }

    pub(super) fn binding(&mut self, e: &Edn) -> Result<Binding, QueryError> {
        match e {
            Edn::Vector(items) => match items.as_slice() {
                [Edn::Vector(inner)] => Ok(Binding::Relation(
                    inner
                        .iter()
                        .map(|i| self.term(i))
                        .collect::<Result<_, _>>()?,
                )),
                [x, dots] if sym(dots).as_deref() == Some("...") => {
                    Ok(Binding::Collection(self.term(x)?))
                }
                items => Ok(Binding::Tuple(
                    items
                        .iter()
                        .map(|i| self.term(i))
                        .collect::<Result<_, _>>()?,
                )),
            },
            other => Ok(Binding::Scalar(self.term(other)?)),
        }
    }

    pub(super) fn clause(&mut self, e: &Edn) -> Result<Clause, QueryError> {
        match e {
            Edn::Vector(items) => {
                if let Some(Edn::List(call)) = items.first() {
                    let Some(name) = call.first().and_then(sym) else {
                        return Err(perr(format!("expected a function name in {}", show(e))));
                    };
                    // Database functions take their source first (`$` inside `($x or ...)` is
                    // `$x`); the call reads it as its `$`.
                    let src = match call[1..].iter().find_map(is_src) {
                        Some(name) if name == "$" => self.source(&self.default_src.clone(), e)?.0,
                        Some(name) => self.source(&name, e)?.0,
                        None => 0,
                    };
                    let args_edn: Vec<&Edn> =
                        call[1..].iter().filter(|a| is_src(a).is_none()).collect();
                    let args = args_edn
                        .into_iter()
                        .map(|a| self.term(a))
                        .collect::<Result<Vec<_>, _>>()?;
                    let c = match items.len() {
                        1 => Clause::Pred { name, args },
                        2 => Clause::Fn {
                            name,
                            args,
                            binding: self.binding(&items[1])?,
                        },
                        _ => {
                            return Err(perr(format!(
                                "a function clause has one binding at most: {}",
                                show(e)
                            )))
                        }
                    };
                    return Ok(match src {
                        0 => c,
                        src => Clause::Dollar {
                            src,
                            clause: Box::new(c),
                        },
                    });
                }
                let (src_name, rest) = match items.first().and_then(is_src) {
                    Some(s) => (s, &items[1..]),
                    None => (self.default_src.clone(), &items[..]),
                };
                let (src, kind) = self.source(&src_name, e)?;
                let schema = match kind {
                    SourceKind::Db(schema) => schema,
                    SourceKind::Relation => {
                        if rest.is_empty() {
                            return Err(perr(format!("an empty clause: {}", show(e))));
                        }
                        let terms = rest
                            .iter()
                            .map(|t| self.term(t))
                            .collect::<Result<_, _>>()?;
                        return Ok(Clause::Source { src, terms });
                    }
                };
                if rest.is_empty() || rest.len() > 5 {
                    return Err(perr(format!(
                        "a data pattern has 1 to 5 elements: {}",
                        show(e)
                    )));
                }
                if rest.len() > 3 && !matches!(self.term(&rest[3])?, Term::Blank) {
                    return Err(perr(format!(
                        "the transaction position is not supported (no history is kept): {}",
                        show(e)
                    )));
                }
                let blank = Edn::Symbol(Keyword::new(None, "_"));
                let get = |i: usize| rest.get(i).unwrap_or(&blank).clone();
                let p = Pattern {
                    e: self.term(&get(0))?,
                    a: self.attr(&get(1), schema)?,
                    v: self.term(&get(2))?,
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
                Ok(Clause::Pattern(src, p))
            }
            Edn::List(items) => {
                let head = items
                    .first()
                    .and_then(sym)
                    .ok_or_else(|| perr(format!("expected or/not/rule: {}", show(e))))?;
                // `($x or ...)`, `($x not ...)`: the inner clauses read `$x` by default.
                if head.starts_with('$') {
                    let inner = items.get(1).and_then(sym);
                    if matches!(
                        inner.as_deref(),
                        Some("or" | "or-join" | "not" | "not-join")
                    ) {
                        self.source(&head, e)?;
                        let saved = std::mem::replace(&mut self.default_src, head);
                        let lowered = self.clause(&Edn::List(items[1..].to_vec()));
                        self.default_src = saved;
                        return lowered;
                    }
                }
                match head.as_str() {
                    "or" | "or-join" => {
                        let (vars, required, body) = if head == "or-join" {
                            let Some(Edn::Vector(spec)) = items.get(1) else {
                                return Err(perr(format!(
                                    "or-join needs a vector of variables: {}",
                                    show(e)
                                )));
                            };
                            let (vars, req) = self.join_vars(spec)?;
                            (Some(vars), req, &items[2..])
                        } else {
                            (None, Vec::new(), &items[1..])
                        };
                        let mut branches = Vec::new();
                        for b in body {
                            branches.push(match b {
                                Edn::List(inner)
                                    if inner.first().and_then(sym).as_deref() == Some("and") =>
                                {
                                    inner[1..]
                                        .iter()
                                        .map(|c| self.clause(c))
                                        .collect::<Result<Vec<_>, _>>()?
                                }
                                other => vec![self.clause(other)?],
                            });
                        }
                        let vars = vars.unwrap_or_else(|| {
                            let mut v: Vec<Var> =
                                branches.iter().flatten().flat_map(|c| c.vars()).collect();
                            v.sort_unstable();
                            v.dedup();
                            v
                        });
                        Ok(Clause::Or {
                            vars,
                            required,
                            branches,
                        })
                    }
                    "not" | "not-join" => {
                        let (vars, body) = if head == "not-join" {
                            let Some(Edn::Vector(spec)) = items.get(1) else {
                                return Err(perr(format!(
                                    "not-join needs a vector of variables: {}",
                                    show(e)
                                )));
                            };
                            (Some(self.join_vars(spec)?.0), &items[2..])
                        } else {
                            (None, &items[1..])
                        };
                        let clauses = body
                            .iter()
                            .map(|c| self.clause(c))
                            .collect::<Result<Vec<_>, _>>()?;
                        let vars = vars.unwrap_or_else(|| {
                            let mut v: Vec<Var> = clauses.iter().flat_map(|c| c.vars()).collect();
                            v.sort_unstable();
                            v.dedup();
                            v
                        });
                        Ok(Clause::Not { vars, clauses })
                    }
                    _ => {
                        let (src_name, name, args) = if head.starts_with('$') {
                            let n = items.get(1).and_then(sym).ok_or_else(|| {
                                perr(format!("expected a rule name: {}", show(e)))
                            })?;
                            (head, n, &items[2..])
                        } else {
                            (self.default_src.clone(), head, &items[1..])
                        };
                        if !self.rule_names.contains(&name) {
                            return Err(QueryError::UnknownRule { name });
                        }
                        let (src, _) = self.source(&src_name, e)?;
                        let args = args
                            .iter()
                            .map(|a| self.term(a))
                            .collect::<Result<_, _>>()?;
                        Ok(Clause::Rule { name, args, src })
                    }
                }
            }
            other => Err(perr(format!("not a clause: {}", show(other)))),
        }
    }

    pub(super) fn join_vars(&mut self, spec: &[Edn]) -> Result<(Vec<Var>, Vec<Var>), QueryError> {
        let mut vars = Vec::new();
        let mut required = Vec::new();
        for s in spec {
            match s {
                Edn::Vector(req) => {
                    for r in req {
                        let v = self.var_of(r)?;
                        required.push(v);
                        vars.push(v);
                    }
                }
                other => vars.push(self.var_of(other)?),
            }
        }
        Ok((vars, required))
    }

    pub(super) fn var_of(&mut self, e: &Edn) -> Result<Var, QueryError> {
        match self.term(e)? {
            Term::Var(v) => Ok(v),
            _ => Err(perr(format!("expected a variable, got {}", show(e)))),
        }
    }

    /// A variable the result reads: a scalar input plugged into the clauses as a constant
    /// is still a variable here, bound to the input.
    pub(super) fn out_var(&mut self, e: &Edn) -> Result<Var, QueryError> {
        if let Some(name) = is_var(e) {
            if self.cx.constants.contains_key(&name) {
                let v = self.vars.get(&name);
                if !self.plugged.iter().any(|(p, _)| *p == v) {
                    self.plugged.push((v, name));
                }
                return Ok(v);
            }
        }
        self.var_of(e)
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
