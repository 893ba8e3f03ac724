//! From EDN to the engine's query: the query form is split into its clauses (`:find`,
//! `:where`, ...), variables are numbered, attributes resolved against the schema, scalar
//! inputs plugged in as constants (so `qpred2` runs the plan of `qpred1`), and rules read.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::error::QueryError;
use super::ir::{
    AttrTerm, Binding, Clause, FindElem, FindShape, InBinding, KeysKind, Pattern, Query, RuleBody,
    Term, Var,
};
use crate::codec::{Keyword, Value};
use crate::edn::{to_edn_string, value_from_edn, Edn};
use crate::store::schema::Schema;

fn perr(msg: impl Into<String>) -> QueryError {
    QueryError::Parse(msg.into())
}

fn show(e: &Edn) -> String {
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
    Ok(s)
}

fn is_var(e: &Edn) -> Option<String> {
    match e {
        Edn::Symbol(s) if s.namespace().is_none() && s.name().starts_with('?') => {
            Some(s.name().to_string())
        }
        _ => None,
    }
}

fn sym(e: &Edn) -> Option<String> {
    e.as_symbol()
}

fn is_src(e: &Edn) -> Option<String> {
    sym(e).filter(|s| s.starts_with('$'))
}

/// Numbers variables within one scope (the query, or one rule body).
#[derive(Default)]
struct Vars {
    names: Vec<String>,
    by_name: HashMap<String, Var>,
}

impl Vars {
    fn get(&mut self, name: &str) -> Var {
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

struct Lowerer<'a, 'b> {
    cx: &'b LowerCtx<'a>,
    vars: Vars,
    rule_names: Vec<String>,
    /// The source of clauses without one: `$`, or `$x` inside `($x or ...)`.
    default_src: String,
    /// Variables of scalar inputs that the result reads (`:find`, `:with`, `:order-by`):
    /// clauses see the input as a constant, the result sees the variable bound to it.
    plugged: Vec<(Var, String)>,
    /// In a rule body: unknown attributes, reported only if the rule is called (Datomic).
    unknown_attrs: Option<Vec<QueryError>>,
}

impl<'a> Lowerer<'a, '_> {
    fn term(&mut self, e: &Edn) -> Result<Term, QueryError> {
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

    fn attr(&mut self, e: &Edn, schema: &Schema) -> Result<AttrTerm, QueryError> {
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

    fn binding(&mut self, e: &Edn) -> Result<Binding, QueryError> {
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

    fn clause(&mut self, e: &Edn) -> Result<Clause, QueryError> {
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

    fn join_vars(&mut self, spec: &[Edn]) -> Result<(Vec<Var>, Vec<Var>), QueryError> {
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

    fn var_of(&mut self, e: &Edn) -> Result<Var, QueryError> {
        match self.term(e)? {
            Term::Var(v) => Ok(v),
            _ => Err(perr(format!("expected a variable, got {}", show(e)))),
        }
    }

    /// A variable the result reads: a scalar input plugged into the clauses as a constant
    /// is still a variable here, bound to the input.
    fn out_var(&mut self, e: &Edn) -> Result<Var, QueryError> {
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

    fn source(&self, name: &str, clause: &Edn) -> Result<(usize, SourceKind<'a>), QueryError> {
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

/// The rule names a rule set defines.
fn rule_names(rules: &Edn) -> Vec<String> {
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
fn reached_rules(
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
fn rules_called(clauses: &[Clause], src: usize, found: &mut dyn FnMut(&str)) {
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

fn rule_sources(clauses: &[Clause], out: &mut std::collections::BTreeSet<usize>) {
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

/// Restricts `not` and `or` variables to those the enclosing scope shares (variables only
/// inside a `not` are local to it).
fn scope_vars(clauses: &mut [Clause], outer: &[Var]) {
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

/// Reads rules: `[[(name ?a [?b]) clauses...] ...]`, for a database with `schema`.
pub fn lower_rules(
    rules: &Edn,
    schema: &Schema,
) -> Result<BTreeMap<String, Vec<RuleBody>>, QueryError> {
    lower_rules_for(rules, SourceKind::Db(schema), None)
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
                        head_vars.push(l.var_of(r)?);
                        required += 1;
                    }
                }
                other => head_vars.push(l.var_of(other)?),
            }
        }
        let mut clauses = body
            .iter()
            .map(|c| l.clause(c))
            .collect::<Result<Vec<_>, _>>()?;
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
    let reached = called.map(|c| reached_rules(&out, c));
    for (name, unknown_attrs, body, clauses, head, names) in unchecked {
        if reached.as_ref().is_some_and(|r| !r.contains(&name)) {
            continue;
        }
        if let Some(err) = unknown_attrs.into_iter().next() {
            return Err(err);
        }
        let scope = super::validate::Scope {
            schema: match kind {
                SourceKind::Db(schema) => Some(schema),
                SourceKind::Relation => None,
            },
            rules: &out,
            names: &names,
        };
        super::validate::check_where(&scope, body, &clauses, &head)?;
    }
    Ok(out)
}

/// The `:in` forms (`[$]` when the query has none).
pub fn in_forms(s: &Sections) -> Vec<Edn> {
    s.inputs
        .clone()
        .unwrap_or_else(|| vec![Edn::Symbol(Keyword::new(None, "$"))])
}

/// Lowers a query. `inputs` are all the inputs `:in` names, in order; `implicit` is the
/// schema of a database that is `$` when `:in` does not name `$` (the receiver of
/// [`crate::api::Db::q`]). Returns the query and, for each input that binds (a source, rules
/// or a binding form), how it binds and its position in `inputs`.
pub fn lower(
    s: &Sections,
    inputs: &[InputKind<'_>],
    implicit: Option<&Schema>,
) -> Result<(Query, Vec<(InBinding, usize)>), QueryError> {
    let in_forms = in_forms(s);
    if in_forms.len() != inputs.len() {
        return Err(QueryError::InputCount {
            inputs: show(&Edn::Vector(in_forms.clone())),
            expected: in_forms.len(),
            got: inputs.len(),
        });
    }
    let mut sources: HashMap<String, (usize, SourceKind<'_>)> = HashMap::new();
    let mut source_names = vec!["$".to_string()];
    let mut constants = HashMap::new();
    let mut rules_edn: Option<&Edn> = None;
    let mut pull_patterns: HashMap<String, &Edn> = HashMap::new();
    // (form, position) of every input that binds at run time.
    let mut others: Vec<(Edn, usize)> = Vec::new();
    for (i, (form, input)) in in_forms.iter().zip(inputs).enumerate() {
        let kind_error = |expected: &str, got: String| QueryError::InputKind {
            input: show(form),
            expected: expected.to_string(),
            got,
        };
        let a_db = || "a database".to_string();
        if let Some(name) = is_src(form) {
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
            others.push((form.clone(), i));
            continue;
        }
        let InputKind::Value(value) = *input else {
            let expected = match (sym(form).as_deref(), is_var(form)) {
                (Some("%"), _) => "rules",
                (_, Some(_)) => "a value",
                (Some(s), None) if s != "_" => "a pull pattern",
                _ => "a collection",
            };
            return Err(kind_error(expected, a_db()));
        };
        match (sym(form).as_deref(), is_var(form)) {
            (Some("%"), _) => {
                rules_edn = Some(value);
                others.push((form.clone(), i));
            }
            (_, Some(name)) => {
                let v = value_from_edn(value)
                    .ok_or_else(|| kind_error("a scalar value", show(value)))?;
                constants.insert(name, v);
            }
            // A plain symbol names a pull pattern given as an input (`(pull ?e pattern)`).
            (Some(name), None) if name != "_" => {
                pull_patterns.insert(name.to_string(), value);
            }
            _ => others.push((form.clone(), i)),
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
    let (shape, find_forms): (FindShape, Vec<Edn>) = match s.find.as_slice() {
        [Edn::Vector(inner)] if inner.len() == 2 && sym(&inner[1]).as_deref() == Some("...") => {
            (FindShape::Collection, vec![inner[0].clone()])
        }
        [Edn::Vector(inner)] => (FindShape::Tuple, inner.clone()),
        [x, dot] if sym(dot).as_deref() == Some(".") => (FindShape::Scalar, vec![x.clone()]),
        items => (FindShape::Relation, items.to_vec()),
    };
    let mut find = Vec::new();
    for f in &find_forms {
        find.push(match f {
            Edn::List(items) => {
                let name = items
                    .first()
                    .and_then(sym)
                    .ok_or_else(|| perr(format!("bad find element {}", show(f))))?;
                if name == "pull" {
                    let (src, var, pattern) = match items.as_slice() {
                        [_, var, pattern] => (0, var, pattern),
                        [_, src, var, pattern] if is_src(src).is_some() => {
                            let name = is_src(src).expect("checked");
                            (l.source(&name, f)?.0, var, pattern)
                        }
                        _ => {
                            return Err(perr(format!(
                                "(pull ?e pattern) or (pull $src ?e pattern) expected: {}",
                                show(f)
                            )))
                        }
                    };
                    // A pattern named by a plain symbol is the input of that name.
                    let pattern = match sym(pattern).and_then(|n| pull_patterns.get(&n)) {
                        Some(given) => given,
                        None => pattern,
                    };
                    FindElem::Pull {
                        var: l.out_var(var)?,
                        pattern: Arc::new(crate::pull::parse_pattern(pattern)?),
                        src,
                    }
                } else {
                    let Some(last) = items.last().filter(|_| items.len() >= 2) else {
                        return Err(perr(format!("aggregate needs a variable: {}", show(f))));
                    };
                    let args = items[1..items.len() - 1]
                        .iter()
                        .map(|a| {
                            value_from_edn(a).ok_or_else(|| {
                                perr(format!("aggregate argument {} must be a constant", show(a)))
                            })
                        })
                        .collect::<Result<_, _>>()?;
                    FindElem::Aggregate {
                        name,
                        args,
                        var: l.out_var(last)?,
                    }
                }
            }
            other => FindElem::Var(l.out_var(other)?),
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
                    .map(|n| sym(n).unwrap_or_else(|| show(n)))
                    .collect(),
            ))
        }
    };
    let with = s
        .with
        .iter()
        .map(|w| l.out_var(w))
        .collect::<Result<Vec<_>, _>>()?;
    let mut clauses = s
        .clauses
        .iter()
        .map(|c| l.clause(c))
        .collect::<Result<Vec<_>, _>>()?;
    let mut outer: Vec<Var> = find.iter().map(FindElem::var).collect();
    outer.extend(&with);
    // Input binding variables are outer too.
    let mut in_bindings = Vec::new();
    for (form, pos) in others {
        let b = match (is_src(&form), sym(&form).as_deref()) {
            (Some(name), _) => InBinding::Source(cx.sources[&name].0),
            (None, Some("%")) => InBinding::Rules,
            _ => InBinding::Bind(l.binding(&form)?),
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
            .position(|f| is_var(f).as_deref() == Some(name.as_str()))
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
    let scope = super::validate::Scope {
        schema: match cx.sources.get("$") {
            Some((_, SourceKind::Db(schema))) => Some(*schema),
            _ => None,
        },
        rules: &rules,
        names: &l.vars.names,
    };
    super::validate::check_where(&scope, &s.clauses, &clauses, &input_vars)?;
    // After the clauses: Datomic reports a clause's insufficient binding first.
    super::validate::check_find(&wanted, &clauses, &input_vars, &l.vars.names)?;
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

fn parse_order(items: &[Edn], l: &mut Lowerer<'_, '_>) -> Result<Vec<(Var, bool)>, QueryError> {
    let items: Vec<Edn> = match items {
        [Edn::Vector(inner)] => inner.clone(),
        other => other.to_vec(),
    };
    let mut out: Vec<(Var, bool)> = Vec::new();
    for it in items {
        match &it {
            Edn::Keyword(k) if k.name() == "desc" || k.name() == "asc" => match out.last_mut() {
                Some(last) => last.1 = k.name() == "desc",
                None => return Err(perr(":order-by starts with a variable")),
            },
            other => out.push((l.out_var(other)?, false)),
        }
    }
    Ok(out)
}
