//! The query as a value: what the text says, before any schema is read. Every section keeps
//! its forms as written, each with its span, so a message can point at the text; the
//! `:find` shape and elements, the `:in` list (with the implicit `[$]`) and each clause's kind
//! and contents (`parse::clause`) are read here once, not on every run.
//!
//! Invariant: nothing here depends on a database, so a parsed query is right for every
//! database and is cached by its text for the life of the process.

use std::sync::Arc;

use super::clause::{BindingForm, ClauseForm, FindForm, OutVar};
use super::span::{Form, Position, Span};
use crate::edn::{to_edn_string, Edn};
use crate::query::error::QueryError;
use crate::query::ir::{FindShape, KeysKind};

/// A parsed query: its sections, schema-free.
#[derive(Debug, Clone)]
pub struct QueryAst {
    /// The text it was read from (`None` for a query given as data).
    pub(crate) text: Option<Arc<str>>,
    /// `:find`: the result's shape and its elements.
    pub find: FindSpec,
    /// `:keys` / `:strs` / `:syms`.
    pub keys: Option<(KeysKind, Vec<Form>)>,
    /// `:with`.
    pub with: Vec<Form>,
    /// The variables of `:with`, read once.
    pub(crate) with_vars: Vec<OutVar>,
    /// `:in`, or `[$]` when the query has none (see [`QueryAst::inputs_written`]).
    pub inputs: Vec<InputForm>,
    /// Whether the query wrote `:in` itself.
    pub inputs_written: bool,
    /// `:where`.
    pub clauses: Vec<WhereClause>,
    /// `:order-by`.
    pub order_by: Vec<Form>,
    /// `:limit`.
    pub limit: Option<usize>,
    /// `:offset`.
    pub offset: Option<usize>,
    /// `:timeout` (milliseconds).
    pub timeout: Option<u64>,
    /// `:memory-limit` (bytes).
    pub memory_limit: Option<u64>,
    /// The pull patterns written in `:find`, parsed once with the text (a pattern that does
    /// not parse is left out, and reported when the query is planned, in its place).
    pub(crate) pulls: Vec<(Edn, Arc<crate::pull::PullPattern>)>,
}

/// `:find`: the elements and the shape of the result they make.
#[derive(Debug, Clone, PartialEq)]
pub struct FindSpec {
    /// A relation, a collection (`[?x ...]`), a tuple (`[?x ?y]`) or a scalar (`?x .`).
    pub shape: FindShape,
    /// The elements (variables, aggregates, pulls), without the shape's brackets and dots.
    pub elements: Vec<Form>,
    /// What each element says, read once.
    pub(crate) forms: Vec<FindForm>,
}

/// One `:in` form as written, and what kind of input it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct InputForm {
    /// What the form takes, read from its shape alone.
    pub kind: InputKind,
    /// The form as written.
    pub form: Form,
    /// What a binding form binds, read once (`None` for other kinds).
    pub(crate) binding: Option<BindingForm>,
}

impl InputForm {
    /// The input `form` takes.
    pub(crate) fn of(form: Form) -> InputForm {
        let kind = InputKind::of(&form.edn);
        let binding = (kind == InputKind::Binding).then(|| BindingForm::of(&form.edn));
        InputForm {
            kind,
            form,
            binding,
        }
    }
}

/// The kinds of `:in` form.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputKind {
    /// `$`, `$name`: a data source (a database, or a relation), by name.
    Source(String),
    /// `%`: rules.
    Rules,
    /// `?x`: one value, by variable name.
    Scalar(String),
    /// A plain symbol: a pull pattern that `(pull ?e name)` in `:find` names.
    PullPattern(String),
    /// A binding form (`[?x ...]`, `[?a ?b]`, `[[?a ?b]]`, `_`).
    Binding,
}

impl InputKind {
    /// The kind of `:in` form `form`.
    pub fn of(form: &Edn) -> InputKind {
        let Edn::Symbol(s) = form else {
            return InputKind::Binding;
        };
        let text = form.as_symbol().unwrap_or_default();
        if text.starts_with('$') {
            InputKind::Source(text)
        } else if text == "%" {
            InputKind::Rules
        } else if s.namespace().is_none() && s.name().starts_with('?') {
            InputKind::Scalar(s.name().to_string())
        } else if text != "_" {
            InputKind::PullPattern(text)
        } else {
            InputKind::Binding
        }
    }
}

/// One `:where` clause as written, and what kind of clause it is.
#[derive(Debug, Clone, PartialEq)]
pub struct WhereClause {
    /// What the clause is, read from its shape alone.
    pub kind: ClauseKind,
    /// The clause as written.
    pub form: Form,
    /// The clauses inside it: a `not`'s body, an `or`'s branches (an `and` holding its own).
    pub inner: Vec<WhereClause>,
    /// What it says, read once (planning reads this, not the form).
    pub(crate) parsed: ClauseForm,
}

/// The kinds of `:where` clause, told apart by shape (no schema, no rule set needed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClauseKind {
    /// `[e a v]`, `[$src e a v]`: a data pattern (or a pattern over an input relation).
    DataPattern,
    /// `[(pred args...)]`.
    Predicate,
    /// `[(f args...) binding]`.
    Function,
    /// `(rule args...)`, `($src rule args...)`.
    RuleCall,
    /// `(not ...)`, `($src not ...)`.
    Not,
    /// `(not-join [vars] ...)`.
    NotJoin,
    /// `(or ...)`.
    Or,
    /// `(or-join [vars] ...)`.
    OrJoin,
    /// `(and ...)`: an `or` branch of several clauses.
    And,
    /// Anything else: reported when the query is planned, as Datomic reports it.
    Invalid,
}

impl ClauseKind {
    /// The kind of `clause`.
    pub fn of(clause: &Edn) -> ClauseKind {
        let head = |e: Option<&Edn>| e.and_then(Edn::as_symbol);
        match clause {
            Edn::Vector(items) => match (items.first(), items.len()) {
                (Some(Edn::List(_)), 1) => ClauseKind::Predicate,
                (Some(Edn::List(_)), 2) => ClauseKind::Function,
                (Some(Edn::List(_)), _) => ClauseKind::Invalid,
                _ => ClauseKind::DataPattern,
            },
            Edn::List(items) => {
                let first = head(items.first());
                let name = match first.as_deref() {
                    Some(s) if s.starts_with('$') => head(items.get(1)),
                    _ => first,
                };
                match name.as_deref() {
                    None => ClauseKind::Invalid,
                    Some("not") => ClauseKind::Not,
                    Some("not-join") => ClauseKind::NotJoin,
                    Some("or") => ClauseKind::Or,
                    Some("or-join") => ClauseKind::OrJoin,
                    Some(_) => ClauseKind::RuleCall,
                }
            }
            _ => ClauseKind::Invalid,
        }
    }
}

impl QueryAst {
    /// Whether the result is a collection of the engine's rows, which `Db::q_rows` and
    /// `Db::q_each` give an item at a time: a relation or `[?x ...]`, no aggregate, no
    /// `:order-by`, `:limit`, `:offset` or `:keys` (the `ResultRows::fit` of the query as
    /// written, for a client that must know it before the answer comes).
    pub fn comes_in_rows(&self) -> bool {
        matches!(self.find.shape, FindShape::Relation | FindShape::Collection)
            && !self
                .find
                .forms
                .iter()
                .any(|f| matches!(f, FindForm::Aggregate { .. }))
            && self.order_by.is_empty()
            && self.limit.is_none()
            && self.offset.is_none()
            && self.keys.is_none()
    }

    /// The text the query was read from, when it was read from text.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Where `span` starts in the query's text (`None` for a query given as data).
    pub fn position(&self, span: Option<Span>) -> Option<Position> {
        Some(span?.position(self.text.as_deref()?))
    }

    /// Where the clause an error names was written: the innermost `:where` clause that is,
    /// or holds, the form the error prints (`None` when the error names no clause, or the
    /// query was given as data).
    ///
    /// ```
    /// use datalith::query::parse;
    /// use datalith::{Database, DbOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// let text = "[:find ?e\n :where [?e :db/ident]\n        [?e :no/such-attribute]]";
    /// let err = db.db().unwrap().q(text, &[]).unwrap_err();
    /// let at = parse(text).unwrap().locate(&err).unwrap();
    /// assert_eq!(at.to_string(), "line 3, column 9");
    /// ```
    pub fn locate(&self, err: &QueryError) -> Option<Position> {
        let (_, named) = err.fields().into_iter().find(|(k, _)| *k == "clause")?;
        let clause = innermost(&self.clauses, &named)?;
        self.position(clause.form.span)
    }
}

/// The innermost of `clauses` (or the clauses inside them) that is `named`, or else holds
/// it among its subforms.
fn innermost<'a>(clauses: &'a [WhereClause], named: &Edn) -> Option<&'a WhereClause> {
    clauses
        .iter()
        .find(|c| c.form.edn == *named || holds(&c.form.edn, named))
        .map(|c| innermost(&c.inner, named).unwrap_or(c))
}

/// Whether `form` has `part` among its subforms.
fn holds(form: &Edn, part: &Edn) -> bool {
    match form {
        Edn::List(v) | Edn::Vector(v) | Edn::Set(v) => {
            v.iter().any(|f| f == part || holds(f, part))
        }
        _ => false,
    }
}

impl std::fmt::Display for QueryAst {
    /// The query as a vector, one section after another (spans are not printed).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let forms = |fs: &[Form]| {
            fs.iter()
                .map(|f| to_edn_string(&f.edn))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let find = forms(&self.find.elements);
        let find = match self.find.shape {
            FindShape::Relation => find,
            FindShape::Collection => format!("[{find} ...]"),
            FindShape::Tuple => format!("[{find}]"),
            FindShape::Scalar => format!("{find} ."),
        };
        write!(f, "[:find {find}")?;
        if let Some((kind, names)) = &self.keys {
            let section = match kind {
                KeysKind::Keys => "keys",
                KeysKind::Strs => "strs",
                KeysKind::Syms => "syms",
            };
            write!(f, " :{section} {}", forms(names))?;
        }
        if !self.with.is_empty() {
            write!(f, " :with {}", forms(&self.with))?;
        }
        if self.inputs_written {
            let inputs: Vec<Form> = self.inputs.iter().map(|i| i.form.clone()).collect();
            write!(f, " :in {}", forms(&inputs))?;
        }
        if !self.clauses.is_empty() {
            let clauses: Vec<Form> = self.clauses.iter().map(|c| c.form.clone()).collect();
            write!(f, " :where {}", forms(&clauses))?;
        }
        if !self.order_by.is_empty() {
            write!(f, " :order-by {}", forms(&self.order_by))?;
        }
        for (name, n) in [
            ("limit", self.limit.map(|n| n as u64)),
            ("offset", self.offset.map(|n| n as u64)),
            ("timeout", self.timeout),
            ("memory-limit", self.memory_limit),
        ] {
            if let Some(n) = n {
                write!(f, " :{name} {n}")?;
            }
        }
        write!(f, "]")
    }
}
