//! From the query form (vector or map form) to [`QueryAst`]: the sections told apart, the
//! `:find` shape read, each clause classified, the pull patterns of `:find` parsed. A section
//! that cannot be read is an error at its position.

use std::sync::Arc;

use super::ast::{ClauseKind, FindSpec, InputForm, QueryAst, WhereClause};
use super::clause::{ClauseForm, FindForm, OutVar};
use super::span::{Form, Span, Spans};
use crate::codec::Keyword;
use crate::edn::{to_edn_string, Edn};
use crate::limits::MAX_CLAUSE_DEPTH;
use crate::query::error::QueryError;
use crate::query::ir::{FindShape, KeysKind};

/// Builds the AST of `q`, whose forms' spans `spans` walks; `text` is what it was read from.
pub(super) fn build(
    q: &Edn,
    spans: Spans<'_>,
    text: Option<Arc<str>>,
) -> Result<QueryAst, QueryError> {
    let err = |span: Option<Span>, message: String| match (&text, span) {
        (Some(text), Some(span)) => QueryError::Syntax {
            position: span.position(text),
            message,
        },
        _ => QueryError::Parse(message),
    };
    let whole = spans.span();
    let form = |edn: &Edn, s: &Spans<'_>| Form {
        edn: edn.clone(),
        span: s.span(),
    };
    // (section name, where its keyword is, its forms with their subtrees' spans)
    let mut parts: Vec<(String, Option<Span>, Vec<(Form, Spans<'_>)>)> = Vec::new();
    match q {
        Edn::Vector(items) => {
            for (it, s) in items.iter().zip(spans.children(q)) {
                match it {
                    Edn::Keyword(k) if k.namespace().is_none() => {
                        parts.push((k.name().to_string(), s.span(), Vec::new()))
                    }
                    other => match parts.last_mut() {
                        Some((_, _, v)) => {
                            let f = form(other, &s);
                            v.push((f, s))
                        }
                        None => {
                            return Err(err(
                                s.span(),
                                format!(
                                    "query must start with a keyword such as :find, not {}",
                                    to_edn_string(other)
                                ),
                            ))
                        }
                    },
                }
            }
        }
        Edn::Map(pairs) => {
            let mut children = spans.children(q).into_iter();
            for (k, v) in pairs {
                let (Some(key_at), Some(value_at)) = (children.next(), children.next()) else {
                    break;
                };
                let Edn::Keyword(name) = k else {
                    return Err(err(
                        key_at.span(),
                        format!("query map key {} is not a keyword", to_edn_string(k)),
                    ));
                };
                let items = match v {
                    Edn::Vector(items) | Edn::List(items) => items
                        .iter()
                        .zip(value_at.children(v))
                        .map(|(i, s)| (form(i, &s), s))
                        .collect(),
                    other => vec![(form(other, &value_at), value_at)],
                };
                parts.push((name.name().to_string(), key_at.span(), items));
            }
        }
        other => {
            return Err(err(
                whole,
                format!("a query is a vector or a map, not {}", to_edn_string(other)),
            ))
        }
    }
    let mut ast = QueryAst {
        text: text.clone(),
        find: FindSpec {
            shape: FindShape::Relation,
            elements: Vec::new(),
            forms: Vec::new(),
        },
        keys: None,
        with: Vec::new(),
        with_vars: Vec::new(),
        inputs: vec![InputForm::of(Form {
            edn: Edn::Symbol(Keyword::new(None, "$")),
            span: None,
        })],
        inputs_written: false,
        clauses: Vec::new(),
        order_by: Vec::new(),
        limit: None,
        offset: None,
        timeout: None,
        memory_limit: None,
        pulls: Vec::new(),
    };
    let mut find_at = None;
    let one_num = |name: &str, at: Option<Span>, items: &[Form]| -> Result<u64, QueryError> {
        match items {
            [Form {
                edn: Edn::Long(n), ..
            }] if *n >= 0 => Ok(*n as u64),
            _ => Err(err(
                items.first().and_then(|f| f.span).or(at),
                format!(":{name} takes one non-negative number"),
            )),
        }
    };
    for (name, at, items) in parts {
        if name == "find" {
            find_at = Some(items);
            continue;
        }
        if name == "where" {
            ast.clauses = items
                .into_iter()
                .map(|(form, spans)| where_clause(form, &spans, false, 1))
                .collect();
            continue;
        }
        let items: Vec<Form> = items.into_iter().map(|(f, _)| f).collect();
        match name.as_str() {
            "keys" => ast.keys = Some((KeysKind::Keys, items)),
            "strs" => ast.keys = Some((KeysKind::Strs, items)),
            "syms" => ast.keys = Some((KeysKind::Syms, items)),
            "with" => {
                ast.with_vars = items.iter().map(|f| OutVar::of(&f.edn)).collect();
                ast.with = items;
            }
            "in" => {
                ast.inputs = items.into_iter().map(InputForm::of).collect();
                ast.inputs_written = true;
            }
            "order-by" => ast.order_by = items,
            "limit" => ast.limit = Some(one_num("limit", at, &items)? as usize),
            "offset" => ast.offset = Some(one_num("offset", at, &items)? as usize),
            "timeout" => ast.timeout = Some(one_num("timeout", at, &items)?),
            "memory-limit" => ast.memory_limit = Some(one_num("memory-limit", at, &items)?),
            other => return Err(err(at, format!("unknown query section :{other}"))),
        }
    }
    let find = match find_at {
        Some(items) if !items.is_empty() => items,
        _ => return Err(err(whole, "query has no :find".to_string())),
    };
    ast.find = find_spec(find);
    for f in &ast.find.elements {
        if let Edn::List(items) = &f.edn {
            let is_pull = items.first().and_then(Edn::as_symbol).as_deref() == Some("pull");
            if let (true, Some(pattern @ Edn::Vector(_))) = (is_pull, items.last()) {
                if let Ok(p) = crate::pull::parse_pattern(pattern) {
                    ast.pulls.push((pattern.clone(), Arc::new(p)));
                }
            }
        }
    }
    Ok(ast)
}

/// A `:where` clause with the clauses inside it (a `not`'s, an `or`'s branches and their
/// `and`s), each with its span and what it says; `in_or` when it is a branch of an `or`
/// (where it may be an `and`); `depth` the clauses it is inside, itself included (1 for a
/// `:where` clause or a rule body's). A clause at `MAX_CLAUSE_DEPTH` that holds clauses is
/// malformed, and its inner ones are not read: every later walk of the clauses recurses on
/// their nesting.
pub(super) fn where_clause(
    form: Form,
    spans: &Spans<'_>,
    in_or: bool,
    depth: usize,
) -> WhereClause {
    let kind = if in_or {
        or_branch_kind(&form.edn)
    } else {
        ClauseKind::of(&form.edn)
    };
    let mut parsed = ClauseForm::of(&form.edn, in_or);
    let nests = matches!(
        kind,
        ClauseKind::Not
            | ClauseKind::Or
            | ClauseKind::And
            | ClauseKind::NotJoin
            | ClauseKind::OrJoin
    );
    if nests && depth >= MAX_CLAUSE_DEPTH {
        parsed = ClauseForm::Malformed(format!(
            "clauses nested deeper than {MAX_CLAUSE_DEPTH} (or, and, not, or-join, not-join): {}",
            to_edn_string(&form.edn)
        ));
        return WhereClause {
            kind,
            form,
            inner: Vec::new(),
            parsed,
        };
    }
    let Edn::List(items) = &form.edn else {
        return WhereClause {
            kind,
            form,
            inner: Vec::new(),
            parsed,
        };
    };
    // The body starts after the head, a leading `$src` and a `-join`'s vector.
    let skip = match kind {
        ClauseKind::Not | ClauseKind::Or | ClauseKind::And => 1,
        ClauseKind::NotJoin | ClauseKind::OrJoin => 2,
        _ => items.len(),
    };
    let sourced = items
        .first()
        .and_then(Edn::as_symbol)
        .is_some_and(|s| s.starts_with('$'));
    let skip = skip + usize::from(sourced && skip < items.len());
    let branches = matches!(kind, ClauseKind::Or | ClauseKind::OrJoin);
    let inner = items
        .iter()
        .zip(spans.children(&form.edn))
        .skip(skip)
        .map(|(edn, s)| {
            let child = Form {
                edn: edn.clone(),
                span: s.span(),
            };
            where_clause(child, &s, branches, depth + 1)
        })
        .collect();
    WhereClause {
        kind,
        form,
        inner,
        parsed,
    }
}

/// The kind of an `or` branch: an `(and ...)`, or a clause.
fn or_branch_kind(e: &Edn) -> ClauseKind {
    match e {
        Edn::List(items) if items.first().and_then(Edn::as_symbol).as_deref() == Some("and") => {
            ClauseKind::And
        }
        other => ClauseKind::of(other),
    }
}

/// The shape of `:find` and its elements, without the shape's brackets and dots.
fn find_spec(mut items: Vec<(Form, Spans<'_>)>) -> FindSpec {
    let is = |e: &Edn, name: &str| e.as_symbol().as_deref() == Some(name);
    let inside = |f: &Form, s: &Spans<'_>| -> Vec<Form> {
        let Edn::Vector(inner) = &f.edn else {
            return Vec::new();
        };
        inner
            .iter()
            .zip(s.children(&f.edn))
            .map(|(edn, s)| Form {
                edn: edn.clone(),
                span: s.span(),
            })
            .collect()
    };
    let (shape, elements) = match items.as_slice() {
        [(f, s)] if matches!(&f.edn, Edn::Vector(v) if v.len() == 2 && is(&v[1], "...")) => {
            let mut elements = inside(f, s);
            elements.truncate(1);
            (FindShape::Collection, elements)
        }
        [(f, s)] if matches!(f.edn, Edn::Vector(_)) => (FindShape::Tuple, inside(f, s)),
        [_, (dot, _)] if is(&dot.edn, ".") => {
            items.truncate(1);
            (
                FindShape::Scalar,
                items.into_iter().map(|(f, _)| f).collect(),
            )
        }
        _ => (
            FindShape::Relation,
            items.into_iter().map(|(f, _)| f).collect(),
        ),
    };
    let forms = elements.iter().map(|f| FindForm::of(&f.edn)).collect();
    FindSpec {
        shape,
        elements,
        forms,
    }
}
