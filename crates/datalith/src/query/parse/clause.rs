//! What one `:where` clause says, read once from its form: its source, its terms (variables,
//! blanks, constants already converted to values), its call and binding, its join
//! variables. Planning (`query::lower`) reads these, never the clause's EDN again; it keeps
//! the form only to print it in messages.
//!
//! Invariant: nothing here needs a schema, an input or a rule set, so the result is cached
//! with the parsed query. A form that cannot be read is kept as [`ClauseForm::Malformed`]
//! (or a [`TermForm::Bad`] term) with its message and reported when the query is planned,
//! at the point the planner reaches it: errors come in the same order as when every run
//! read the EDN.

use crate::codec::Value;
use crate::edn::{to_edn_string, value_from_edn, Edn};

/// A term of a clause as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TermForm {
    /// `?x`, by name (a scalar input of that name is plugged in when planning).
    Var(String),
    /// `_`.
    Blank,
    /// A constant.
    Const(Value),
    /// Not a term; the message says why.
    Bad(String),
}

/// What `nil` as a bound of `tx-ids` becomes (`exec::time` reads it as an open end).
pub(crate) const OPEN_LOG_BOUND: &str = ":datalith/open-log-bound";

impl TermForm {
    /// The term `e` is.
    pub(crate) fn of(e: &Edn) -> TermForm {
        if let Some(name) = var_name(e) {
            return TermForm::Var(name.to_string());
        }
        if symbol(e).as_deref() == Some("_") {
            return TermForm::Blank;
        }
        if *e == Edn::Nil {
            return TermForm::Bad("nil is not a valid value in a clause".into());
        }
        if let Edn::Regex(source) = e {
            // Say why a pattern literal is refused (e.g. a backreference), not just that it is.
            return match crate::codec::Regex::parse(source) {
                Ok(r) => TermForm::Const(Value::Regex(r)),
                Err(err) => TermForm::Bad(format!("{}: {err}", to_edn_string(e))),
            };
        }
        match value_from_edn(e) {
            Some(v) => TermForm::Const(v),
            None => TermForm::Bad(format!(
                "{} is not a variable or a constant",
                to_edn_string(e)
            )),
        }
    }

    fn all(items: &[Edn]) -> Vec<TermForm> {
        items.iter().map(TermForm::of).collect()
    }
}

/// A variable of a `-join` vector or a rule head, with its text for messages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JoinVar {
    pub(crate) term: TermForm,
    pub(crate) written: String,
    /// Written inside the nested vector of variables that must be bound on entry.
    pub(crate) required: bool,
}

impl JoinVar {
    /// The variables of `spec` (`[?a [?b ?c]]`: `?b` and `?c` required).
    pub(crate) fn list(spec: &[Edn]) -> Vec<JoinVar> {
        let one = |e: &Edn, required| JoinVar {
            term: TermForm::of(e),
            written: to_edn_string(e),
            required,
        };
        let mut out = Vec::new();
        for s in spec {
            match s {
                Edn::Vector(req) => out.extend(req.iter().map(|r| one(r, true))),
                other => out.push(one(other, false)),
            }
        }
        out
    }
}

/// A binding form (of a function clause or an `:in` input).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BindingForm {
    /// `?x`.
    Scalar(TermForm),
    /// `[?a ?b]`.
    Tuple(Vec<TermForm>),
    /// `[?x ...]`.
    Collection(TermForm),
    /// `[[?a ?b]]`.
    Relation(Vec<TermForm>),
}

impl BindingForm {
    /// The binding `e` is.
    pub(crate) fn of(e: &Edn) -> BindingForm {
        match e {
            Edn::Vector(items) => match items.as_slice() {
                [Edn::Vector(inner)] => BindingForm::Relation(TermForm::all(inner)),
                [x, dots] if symbol(dots).as_deref() == Some("...") => {
                    BindingForm::Collection(TermForm::of(x))
                }
                items => BindingForm::Tuple(TermForm::all(items)),
            },
            other => BindingForm::Scalar(TermForm::of(other)),
        }
    }
}

/// What a function clause binds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallBinding {
    /// Nothing: a predicate.
    None,
    /// One binding form.
    One(BindingForm),
    /// More than one form after the call (an error when planned).
    TooMany,
}

/// A `-join` clause's variables: none written (`or`, `not`), or the vector, or the message
/// for a `-join` without one.
pub(crate) type JoinSpec = Result<Option<Vec<JoinVar>>, String>;

/// What a `:where` clause says. The clauses inside a `not`, an `or` or an `and` are the
/// enclosing [`super::WhereClause`]'s `inner`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClauseForm {
    /// `[$src? e a v tx? added?]`, a data pattern, or a pattern over an input relation.
    Pattern {
        src: Option<String>,
        terms: Vec<TermForm>,
    },
    /// `[(f args...) binding?]`; `src` is a `$` symbol among the arguments (a database
    /// function's source), taken out of `args`.
    Call {
        name: String,
        src: Option<String>,
        args: Vec<TermForm>,
        binding: CallBinding,
    },
    /// `($src? rule args...)`.
    Rule {
        src: Option<String>,
        name: String,
        args: Vec<TermForm>,
    },
    /// `($src? not ...)`, `($src? not-join [vars] ...)`.
    Not { src: Option<String>, join: JoinSpec },
    /// `($src? or ...)`, `($src? or-join [vars] ...)`; each inner clause is a branch.
    Or { src: Option<String>, join: JoinSpec },
    /// `(and ...)`, as a branch of an `or`.
    And,
    /// Not a clause; the message says why.
    Malformed(String),
}

impl ClauseForm {
    /// What `e` says; `in_or` when it is a branch of an `or` (where `(and ...)` is allowed).
    pub(crate) fn of(e: &Edn, in_or: bool) -> ClauseForm {
        let show = || to_edn_string(e);
        match e {
            Edn::Vector(items) => match items.first() {
                Some(Edn::List(call)) => {
                    let Some(name) = call.first().and_then(symbol) else {
                        return ClauseForm::Malformed(format!(
                            "expected a function name in {}",
                            show()
                        ));
                    };
                    let rest = &call[1..];
                    // `nil` as a bound of `tx-ids` leaves that end open, as in Datomic; a
                    // query value is never nil otherwise.
                    let open_bound = name == "tx-ids";
                    ClauseForm::Call {
                        name,
                        src: rest.iter().find_map(source_name),
                        args: rest
                            .iter()
                            .filter(|a| source_name(a).is_none())
                            .map(|a| match a {
                                Edn::Nil if open_bound => TermForm::Const(Value::Keyword(
                                    crate::codec::Keyword::parse(OPEN_LOG_BOUND),
                                )),
                                a => TermForm::of(a),
                            })
                            .collect(),
                        binding: match items.len() {
                            1 => CallBinding::None,
                            2 => CallBinding::One(BindingForm::of(&items[1])),
                            _ => CallBinding::TooMany,
                        },
                    }
                }
                _ => {
                    let (src, rest) = match items.first().and_then(source_name) {
                        Some(s) => (Some(s), &items[1..]),
                        None => (None, &items[..]),
                    };
                    ClauseForm::Pattern {
                        src,
                        terms: TermForm::all(rest),
                    }
                }
            },
            Edn::List(items) => {
                let Some(head) = items.first().and_then(symbol) else {
                    return ClauseForm::Malformed(format!("expected or/not/rule: {}", show()));
                };
                if in_or && head == "and" {
                    return ClauseForm::And;
                }
                let (src, rest) = if head.starts_with('$') {
                    (Some(head), &items[1..])
                } else {
                    (None, &items[..])
                };
                let Some(name) = rest.first().and_then(symbol) else {
                    return ClauseForm::Malformed(format!("expected a rule name: {}", show()));
                };
                // A sourced `or`/`not` reads its own form without the source in messages.
                let own = || to_edn_string(&Edn::List(rest.to_vec()));
                let join = |what: &str| match rest.get(1) {
                    Some(Edn::Vector(spec)) => Ok(Some(JoinVar::list(spec))),
                    _ => Err(format!("{what} needs a vector of variables: {}", own())),
                };
                match name.as_str() {
                    "or" => ClauseForm::Or {
                        src,
                        join: Ok(None),
                    },
                    "or-join" => ClauseForm::Or {
                        src,
                        join: join("or-join"),
                    },
                    "not" => ClauseForm::Not {
                        src,
                        join: Ok(None),
                    },
                    "not-join" => ClauseForm::Not {
                        src,
                        join: join("not-join"),
                    },
                    _ => ClauseForm::Rule {
                        src,
                        name,
                        args: TermForm::all(&rest[1..]),
                    },
                }
            }
            other => ClauseForm::Malformed(format!("not a clause: {}", to_edn_string(other))),
        }
    }
}

/// The name of a variable form (`?x`).
pub(crate) fn var_name(e: &Edn) -> Option<&str> {
    match e {
        Edn::Symbol(s) if s.namespace().is_none() && s.name().starts_with('?') => Some(s.name()),
        _ => None,
    }
}

fn symbol(e: &Edn) -> Option<String> {
    e.as_symbol()
}

/// The name of a source form (`$`, `$name`).
pub(crate) fn source_name(e: &Edn) -> Option<String> {
    symbol(e).filter(|s| s.starts_with('$'))
}

/// A variable the result reads (in `:find`, `:with`, `:order-by`), with its text for messages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OutVar {
    pub(crate) term: TermForm,
    pub(crate) written: String,
}

impl OutVar {
    pub(crate) fn of(e: &Edn) -> OutVar {
        OutVar {
            term: TermForm::of(e),
            written: to_edn_string(e),
        }
    }
}

/// What a `:find` element says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FindForm {
    /// `?x`.
    Var(OutVar),
    /// `(pull $src? ?e pattern)`: the pattern as written, or the symbol of a pattern input.
    Pull {
        src: Option<String>,
        var: OutVar,
        pattern: Edn,
    },
    /// `(name const-args... ?x)`: the constant arguments, or the message for the first one
    /// that is not a constant.
    Aggregate {
        name: String,
        args: Result<Vec<Value>, String>,
        var: OutVar,
    },
    /// Not a find element; the message says why.
    Malformed(String),
}

impl FindForm {
    /// What `:find` element `f` says.
    pub(crate) fn of(f: &Edn) -> FindForm {
        let Edn::List(items) = f else {
            return FindForm::Var(OutVar::of(f));
        };
        let Some(name) = items.first().and_then(symbol) else {
            return FindForm::Malformed(format!("bad find element {}", to_edn_string(f)));
        };
        if name == "pull" {
            // `(pull ?e pattern)`, or `(pull $src ?e pattern)`.
            let (src, rest) = match items.get(1).and_then(source_name) {
                Some(src) if items.len() == 4 => (Some(src), &items[2..]),
                _ => (None, &items[1..]),
            };
            return match rest {
                [var, pattern] => FindForm::Pull {
                    src,
                    var: OutVar::of(var),
                    pattern: pattern.clone(),
                },
                _ => FindForm::Malformed(format!(
                    "(pull ?e pattern) or (pull $src ?e pattern) expected: {}",
                    to_edn_string(f)
                )),
            };
        }
        let Some(last) = items.last().filter(|_| items.len() >= 2) else {
            return FindForm::Malformed(format!(
                "aggregate needs a variable: {}",
                to_edn_string(f)
            ));
        };
        let args = items[1..items.len() - 1]
            .iter()
            .map(|a| {
                value_from_edn(a).ok_or_else(|| {
                    format!("aggregate argument {} must be a constant", to_edn_string(a))
                })
            })
            .collect();
        FindForm::Aggregate {
            name,
            args,
            var: OutVar::of(last),
        }
    }
}
