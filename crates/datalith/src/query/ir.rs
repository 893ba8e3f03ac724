//! The query as the engine sees it: variables numbered, attributes resolved against the
//! schema, constants typed. The parser's AST is lowered to this (see `lower`).

use crate::codec::{Keyword, Value};
use crate::store::AttrId;

/// A variable, numbered in order of first appearance.
pub type Var = usize;

/// A position in a clause.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Term {
    /// A variable.
    Var(Var),
    /// A constant.
    Const(Value),
    /// `_`: matches anything, binds nothing.
    Blank,
}

impl Term {
    /// The variable, if this is one.
    pub fn var(&self) -> Option<Var> {
        match self {
            Term::Var(v) => Some(*v),
            _ => None,
        }
    }
}

/// The attribute position of a data pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AttrTerm {
    /// A known attribute.
    Attr(AttrId),
    /// A variable ranging over attributes (its values are attribute ids as `Value::Ref`).
    Var(Var),
    /// `_`.
    Blank,
    /// An attribute the schema does not have: matches nothing.
    Unknown(Keyword),
}

/// A data pattern `[e a v]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pattern {
    /// Entity.
    pub e: Term,
    /// Attribute.
    pub a: AttrTerm,
    /// Value.
    pub v: Term,
}

/// A data pattern that names the transaction or the `added` position,
/// `[e a v tx added]`: it reads the history index (`query::exec::time`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimedPattern {
    /// Entity, attribute and value.
    pub p: Pattern,
    /// Transaction.
    pub tx: Term,
    /// Assertion (`true`) or retraction.
    pub added: Term,
}

/// How a function's result binds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Binding {
    /// `?x`
    Scalar(Term),
    /// `[?a ?b]`
    Tuple(Vec<Term>),
    /// `[?x ...]`
    Collection(Term),
    /// `[[?a ?b]]`
    Relation(Vec<Term>),
}

impl Binding {
    /// Variables it binds.
    pub fn vars(&self) -> Vec<Var> {
        let terms: Vec<&Term> = match self {
            Binding::Scalar(t) | Binding::Collection(t) => vec![t],
            Binding::Tuple(ts) | Binding::Relation(ts) => ts.iter().collect(),
        };
        terms.into_iter().filter_map(Term::var).collect()
    }
}

/// One where-clause.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Clause {
    /// `[e a v]` against source `src` (0 is `$`).
    Pattern(usize, Pattern),
    /// `[e a v tx added]` against source `src`, naming the transaction or `added`.
    Timed(usize, TimedPattern),
    /// `[(pred args...)]`
    Pred {
        /// The predicate's name, as written (a built-in or a registered function).
        name: String,
        /// Its arguments.
        args: Vec<Term>,
    },
    /// `[(f args...) binding]`
    Fn {
        /// The function's name, as written (a built-in or a registered function).
        name: String,
        /// Its arguments.
        args: Vec<Term>,
        /// How its result binds variables.
        binding: Binding,
    },
    /// `(or ...)` / `(or-join [vars] ...)`: each branch is a conjunction; `vars` are the
    /// variables shared with the rest of the query.
    Or {
        /// The variables the `or` shares with the rest of the query (for `or-join`, those it
        /// names).
        vars: Vec<Var>,
        /// Those of `vars` that must be bound before the `or` runs (`(or-join [[?a] ?b] ...)`).
        required: Vec<Var>,
        /// The branches, each a conjunction of clauses; a row matches if any branch matches.
        branches: Vec<Vec<Clause>>,
    },
    /// `(not ...)` / `(not-join [vars] ...)`.
    Not {
        /// The variables the `not` shares with the rest of the query; they must be bound
        /// before it runs.
        vars: Vec<Var>,
        /// The clauses whose joint match removes a row.
        clauses: Vec<Clause>,
    },
    /// `(rule args...)`, or `($src rule args...)`: the body's `$` is source `src` (0: the
    /// caller's own `$`).
    Rule {
        /// The rule's name, as written.
        name: String,
        /// The arguments, one per head variable.
        args: Vec<Term>,
        /// The source the rule body's `$` stands for.
        src: usize,
    },
    /// `clause` read with `$` standing for source `src` (a database function called with
    /// a source other than `$`, as `[(get-else $x ?e :a 0) ?v]`).
    Dollar {
        /// The source `$` stands for inside `clause`.
        src: usize,
        /// The clause read against it.
        clause: Box<Clause>,
    },
    /// A pattern over an input relation (`$x` bound to a collection of tuples): its terms
    /// match a prefix of each tuple.
    Source {
        /// The input relation's source number.
        src: usize,
        /// The terms, matched against the first values of each tuple.
        terms: Vec<Term>,
    },
}

impl Clause {
    /// Every variable the clause mentions.
    pub fn vars(&self) -> Vec<Var> {
        let mut out = Vec::new();
        self.collect_vars(&mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    fn collect_vars(&self, out: &mut Vec<Var>) {
        let terms = |ts: &[Term], out: &mut Vec<Var>| out.extend(ts.iter().filter_map(Term::var));
        match self {
            Clause::Pattern(_, p) => {
                terms(&[p.e.clone(), p.v.clone()], out);
                if let AttrTerm::Var(v) = p.a {
                    out.push(v);
                }
            }
            Clause::Timed(_, t) => {
                terms(
                    &[t.p.e.clone(), t.p.v.clone(), t.tx.clone(), t.added.clone()],
                    out,
                );
                if let AttrTerm::Var(v) = t.p.a {
                    out.push(v);
                }
            }
            Clause::Pred { args, .. } | Clause::Rule { args, .. } => terms(args, out),
            Clause::Source { terms: ts, .. } => terms(ts, out),
            Clause::Fn { args, binding, .. } => {
                terms(args, out);
                out.extend(binding.vars());
            }
            Clause::Or { vars, .. } | Clause::Not { vars, .. } => out.extend(vars.iter().copied()),
            Clause::Dollar { clause, .. } => clause.collect_vars(out),
        }
    }
}

/// One rule body: `[(name head...) clauses...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleBody {
    /// Head variables (rule-local numbering: 0..head.len()).
    pub head: Vec<Var>,
    /// How many of the head variables must be bound by the caller (`[?a] ?b` syntax).
    pub required: usize,
    /// The body, in rule-local variable numbering.
    pub clauses: Vec<Clause>,
    /// Number of variables in rule-local numbering.
    pub var_count: usize,
    /// Variable names in rule-local numbering (for explain and errors).
    pub var_names: std::sync::Arc<[String]>,
}

/// Aggregates and plain variables in `:find`.
#[derive(Debug, Clone, PartialEq)]
pub enum FindElem {
    /// `?x`
    Var(Var),
    /// `(agg args... ?x)`
    Aggregate {
        /// The aggregate's name, as written (`count`, `max`, a registered one).
        name: String,
        /// Its constant arguments before the variable (the `n` of `(max n ?x)`).
        args: Vec<Value>,
        /// The variable aggregated.
        var: Var,
    },
    /// `(pull ?e pattern)` or `(pull $src ?e pattern)` (source number `src`, `$` is 0).
    Pull {
        /// The variable whose entity is pulled.
        var: Var,
        /// The pull pattern, already parsed.
        pattern: std::sync::Arc<crate::pull::PullPattern>,
        /// The source pulled from.
        src: usize,
    },
}

impl FindElem {
    /// The variable it reads.
    pub fn var(&self) -> Var {
        match self {
            FindElem::Var(v)
            | FindElem::Aggregate { var: v, .. }
            | FindElem::Pull { var: v, .. } => *v,
        }
    }
}

/// The shape of the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindShape {
    /// A set of tuples.
    Relation,
    /// `[?x ...]`
    Collection,
    /// `[?x ?y]`: one tuple.
    Tuple,
    /// `?x .`
    Scalar,
}

/// How an `:in` input binds.
#[derive(Debug, Clone, PartialEq)]
pub enum InBinding {
    /// `$` or `$name`: a data source, a database or a relation, by source number (`$` is
    /// 0, the others number from 1 in `:in` order).
    Source(usize),
    /// `%`: rules (given in the query's rule set).
    Rules,
    /// A binding form.
    Bind(Binding),
}

/// A lowered query.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Find elements.
    pub find: Vec<FindElem>,
    /// Result shape.
    pub shape: FindShape,
    /// `:keys` / `:strs` / `:syms` names, if any.
    pub keys: Option<(KeysKind, Vec<String>)>,
    /// `:with` variables.
    pub with: Vec<Var>,
    /// `:in` bindings (default `[$]`).
    pub inputs: Vec<InBinding>,
    /// Where clauses.
    pub clauses: Vec<Clause>,
    /// Rules by name (each with its bodies), lowered for `$` (source 0).
    pub rules: std::collections::BTreeMap<String, Vec<RuleBody>>,
    /// The same rules lowered for each other source a rule may be called with (attribute
    /// ids differ between databases).
    pub source_rules:
        std::collections::BTreeMap<usize, std::collections::BTreeMap<String, Vec<RuleBody>>>,
    /// Source names (`$`, `$name`), by source number.
    pub source_names: Vec<String>,
    /// Variable names, by number (for errors and explain).
    pub var_names: Vec<String>,
    /// Datalevin's `:order-by` (variable, descending).
    pub order_by: Vec<(Var, bool)>,
    /// `:limit`.
    pub limit: Option<usize>,
    /// `:offset`.
    pub offset: Option<usize>,
    /// `:timeout` in milliseconds.
    pub timeout_ms: Option<u64>,
    /// `:memory-limit` in bytes (see `query::budget`).
    pub memory_limit: Option<u64>,
}

/// Which map keys `:keys`/`:strs`/`:syms` make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeysKind {
    /// Keywords.
    Keys,
    /// Strings.
    Strs,
    /// Symbols.
    Syms,
}
