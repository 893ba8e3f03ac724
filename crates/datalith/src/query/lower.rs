//! From EDN to the engine's query: the query form is split into its clauses (`:find`,
//! `:where`, ...), variables are numbered, attributes resolved against the schema, scalar
//! inputs plugged in as constants (so `qpred2` runs the plan of `qpred1`), and rules read.

use std::collections::{BTreeMap, HashMap};
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

/// What lowering needs besides the form.
pub struct LowerCtx<'a> {
    /// The schema.
    pub schema: &'a Schema,
    /// Scalar inputs to plug in, by variable name.
    pub constants: HashMap<String, Value>,
    /// Source names (`$`, `$2`, ...) to source numbers.
    pub sources: HashMap<String, usize>,
}

struct Lowerer<'a, 'b> {
    cx: &'b LowerCtx<'a>,
    vars: Vars,
    rule_names: Vec<String>,
}

impl Lowerer<'_, '_> {
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

    fn attr(&mut self, e: &Edn) -> Result<AttrTerm, QueryError> {
        match e {
            Edn::Keyword(k) => Ok(match self.cx.schema.by_ident(k) {
                Some(a) => AttrTerm::Attr(a.id),
                None => AttrTerm::Unknown(k.clone()),
            }),
            _ => match self.term(e)? {
                Term::Var(v) => Ok(AttrTerm::Var(v)),
                Term::Blank => Ok(AttrTerm::Blank),
                Term::Const(Value::Long(n)) if n >= 0 => Ok(AttrTerm::Attr(n as u32)),
                Term::Const(c) => Err(perr(format!("{c:?} is not an attribute"))),
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
                    // Database functions take `$` first; the engine knows its one database.
                    let args_edn: Vec<&Edn> =
                        call[1..].iter().filter(|a| is_src(a).is_none()).collect();
                    let args = args_edn
                        .into_iter()
                        .map(|a| self.term(a))
                        .collect::<Result<Vec<_>, _>>()?;
                    return match items.len() {
                        1 => Ok(Clause::Pred { name, args }),
                        2 => Ok(Clause::Fn {
                            name,
                            args,
                            binding: self.binding(&items[1])?,
                        }),
                        _ => Err(perr(format!(
                            "a function clause has one binding at most: {}",
                            show(e)
                        ))),
                    };
                }
                let (src, rest) = match items.first().and_then(is_src) {
                    Some(s) => (self.source(&s)?, &items[1..]),
                    None => (0, &items[..]),
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
                    a: self.attr(&get(1))?,
                    v: self.term(&get(2))?,
                };
                Ok(Clause::Pattern(src, p))
            }
            Edn::List(items) => {
                let head = items
                    .first()
                    .and_then(sym)
                    .ok_or_else(|| perr(format!("expected or/not/rule: {}", show(e))))?;
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
                        let (name, args) = if head.starts_with('$') {
                            let n = items.get(1).and_then(sym).ok_or_else(|| {
                                perr(format!("expected a rule name: {}", show(e)))
                            })?;
                            (n, &items[2..])
                        } else {
                            (head, &items[1..])
                        };
                        if !self.rule_names.contains(&name) {
                            return Err(QueryError::UnknownRule { name });
                        }
                        let args = args
                            .iter()
                            .map(|a| self.term(a))
                            .collect::<Result<_, _>>()?;
                        Ok(Clause::Rule { name, args })
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

    fn source(&self, name: &str) -> Result<usize, QueryError> {
        self.cx
            .sources
            .get(name)
            .copied()
            .ok_or_else(|| perr(format!("unknown source {name}")))
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

/// Reads rules: `[[(name ?a [?b]) clauses...] ...]`.
pub fn lower_rules(
    rules: &Edn,
    schema: &Schema,
) -> Result<BTreeMap<String, Vec<RuleBody>>, QueryError> {
    let Edn::Vector(list) = rules else {
        return Err(perr("rules are a vector of rule vectors"));
    };
    let mut names = Vec::new();
    for r in list {
        if let Some(Edn::List(head)) = r.as_seq().and_then(|s| s.first()) {
            if let Some(n) = head.first().and_then(sym) {
                names.push(n);
            }
        }
    }
    let cx = LowerCtx {
        schema,
        constants: HashMap::new(),
        sources: HashMap::from([("$".to_string(), 0)]),
    };
    let mut out: BTreeMap<String, Vec<RuleBody>> = BTreeMap::new();
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
        });
    }
    Ok(out)
}

/// Lowers a query. `inputs` are the values given for `:in` after the first `$`, in order.
pub fn lower(
    s: &Sections,
    schema: &Schema,
    inputs: &[Edn],
) -> Result<(Query, Vec<(InBinding, Edn)>), QueryError> {
    let in_forms: Vec<Edn> = s
        .inputs
        .clone()
        .unwrap_or_else(|| vec![Edn::Symbol(Keyword::new(None, "$"))]);
    let skip = usize::from(in_forms.first().and_then(is_src).as_deref() == Some("$"));
    if in_forms.len() - skip != inputs.len() {
        return Err(QueryError::Inputs(format!(
            "the query takes {} inputs besides the database, got {}",
            in_forms.len() - skip,
            inputs.len()
        )));
    }
    // The first `$` is the database itself; other inputs are paired with values in order.
    let mut sources = HashMap::from([("$".to_string(), 0usize)]);
    let mut constants = HashMap::new();
    let mut rules = BTreeMap::new();
    let mut others: Vec<(Edn, Edn)> = Vec::new();
    let mut values = inputs.iter();
    for (i, form) in in_forms.iter().enumerate() {
        if i == 0 && is_src(form).as_deref() == Some("$") {
            continue;
        }
        let value = values
            .next()
            .ok_or_else(|| QueryError::Inputs(format!("no value for input {}", show(form))))?;
        match (sym(form).as_deref(), is_var(form)) {
            (Some("%"), _) => rules = lower_rules(value, schema)?,
            (Some(src), _) if src.starts_with('$') => {
                let n = sources.len();
                sources.insert(src.to_string(), n);
                others.push((form.clone(), value.clone()));
            }
            (_, Some(name)) => {
                let v = value_from_edn(value).ok_or_else(|| {
                    QueryError::Inputs(format!("{} is not a scalar value for {name}", show(value)))
                })?;
                constants.insert(name, v);
            }
            _ => others.push((form.clone(), value.clone())),
        }
    }
    let cx = LowerCtx {
        schema,
        constants,
        sources,
    };
    let mut l = Lowerer {
        cx: &cx,
        vars: Vars::default(),
        rule_names: rules.keys().cloned().collect(),
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
                    let [_, var, pattern] = items.as_slice() else {
                        return Err(perr(format!("(pull ?e pattern) expected: {}", show(f))));
                    };
                    FindElem::Pull {
                        var: l.var_of(var)?,
                        pattern: Arc::new(crate::pull::parse_pattern(pattern)?),
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
                        var: l.var_of(last)?,
                    }
                }
            }
            other => FindElem::Var(l.var_of(other)?),
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
        .map(|w| l.var_of(w))
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
    for (form, value) in others {
        let b = if is_src(&form).is_some() {
            InBinding::Source
        } else {
            InBinding::Bind(l.binding(&form)?)
        };
        if let InBinding::Bind(b) = &b {
            outer.extend(b.vars());
        }
        in_bindings.push((b, value));
    }
    scope_vars(&mut clauses, &outer);
    let order_by = parse_order(&s.order_by, &mut l)?;
    // Every find variable must be bound somewhere.
    let mut bound: Vec<Var> = clauses.iter().flat_map(|c| c.vars()).collect();
    for (b, _) in &in_bindings {
        if let InBinding::Bind(b) = b {
            bound.extend(b.vars());
        }
    }
    for f in &find {
        if !bound.contains(&f.var()) {
            return Err(QueryError::UnboundFind {
                var: l.vars.names[f.var()].clone(),
            });
        }
    }
    let q = Query {
        find,
        shape,
        keys,
        with,
        inputs: in_bindings.iter().map(|(b, _)| b.clone()).collect(),
        clauses,
        rules,
        var_names: l.vars.names,
        order_by,
        limit: s.limit,
        offset: s.offset,
        timeout_ms: s.timeout,
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
            other => out.push((l.var_of(other)?, false)),
        }
    }
    Ok(out)
}
