//! `q`: `{:query QUERY :args [INPUT...] :timeout MS :memory-limit BYTES :basis-t T
//! :lease-ms MS}`. QUERY is EDN text or EDN data; the inputs bind to `:in` after `$` (the
//! database in the path). An input `#datalith/db "films"` is another served database (its
//! latest value; the token must be able to read it): the query then takes every input
//! explicitly, the path's database first (`:in $ $films ...`), as Datomic's `q` does with
//! several databases.
//!
//! `:limit N :offset M` answer one page of a collection result (a relation, a vector of
//! values), with `:next-offset` when more follow: ask again with that `:offset` and the
//! first page's `:basis-t` (leased with `:lease-ms`) for the next page of the same value. The
//! engine's order is the same for one value and one query (no random hashing, one thread),
//! so the pages of one value add up to its result. Each page runs the query whole: the
//! engine has no cursor, so a page costs the query's time and memory, and saves only the
//! sending of the rest (see the streaming of large answers in `http/stream.rs`).

use datalith::edn::{read_one, Edn};
use datalith::query::QueryOptions;
use datalith::Input;

use super::{answer, basis, Context, QueryLimits, Request, Source};
use crate::error::{Result, ServerError};

pub const FIELDS: &[&str] = &[
    "query",
    "args",
    "timeout",
    "memory-limit",
    "basis-t",
    "lease-ms",
    "limit",
    "offset",
    "as-of",
    "since",
    "history",
];

pub fn run(source: &Source, request: &Request, cx: &Context<'_>) -> Result<Edn> {
    let text = request.text("query")?;
    let args = request.seq("args")?;
    refuse_limits_past_the_servers(&text, cx.limits)?;
    let timeout = match request.count("timeout")? {
        Some(ms) => ms.min(cx.limits.timeout_ms),
        None => cx.limits.timeout_ms,
    };
    let mut options = QueryOptions::default()
        .timeout_ms(timeout)
        .cancel(cx.cancel);
    let memory = match (request.count("memory-limit")?, cx.limits.memory_limit) {
        (Some(asked), Some(max)) => Some(asked.min(max)),
        (asked, max) => asked.or(max),
    };
    if let Some(bytes) = memory {
        options = options.memory_limit(bytes);
    }
    if let Some(threads) = cx.limits.threads {
        options = options.threads(threads);
    }
    let limit = request.count("limit")?;
    let offset = request.count("offset")?;
    let (db, basis) = basis::snapshot(source, request)?;
    let out = match args.iter().any(|a| database_named(a).is_some()) {
        false => db.q_with(&text, &args, &options)?,
        true => {
            let mut inputs = vec![Input::Db(db)];
            for arg in args {
                inputs.push(match database_named(&arg) {
                    Some(name) => Input::Db(cx.databases.source(name)?.database.db()?),
                    None => Input::Value(arg),
                });
            }
            datalith::q_with(&text, &inputs, &options)?
        }
    };
    match (limit, offset) {
        (None, None) => Ok(answer(out.result, basis)),
        (limit, offset) => page(out.result, limit, offset.unwrap_or(0), basis),
    }
}

/// The rows `offset..offset + limit` of a collection result, with `:next-offset` when more
/// follow; the collection keeps its kind (a page of a set is a set).
fn page(result: Edn, limit: Option<u64>, offset: u64, basis: u64) -> Result<Edn> {
    let (rows, rebuild): (Vec<Edn>, fn(Vec<Edn>) -> Edn) = match result {
        Edn::Set(rows) => (rows, Edn::Set),
        Edn::Vector(rows) => (rows, Edn::Vector),
        Edn::List(rows) => (rows, Edn::List),
        other => {
            return Err(ServerError::invalid(format!(
                ":limit and :offset page a collection result (:find ?a ?b, :find [?a ...]); \
                 this query answers one value, {}",
                super::request::short(&other)
            )))
        }
    };
    let total = rows.len() as u64;
    let start = offset.min(total) as usize;
    let end = match limit {
        Some(limit) => offset.saturating_add(limit).min(total) as usize,
        None => total as usize,
    };
    let page: Vec<Edn> = rows.into_iter().skip(start).take(end - start).collect();
    let mut pairs = vec![
        (Edn::kw(":result"), rebuild(page)),
        (Edn::kw(":basis-t"), Edn::Long(basis as i64)),
    ];
    if (end as u64) < total {
        pairs.push((Edn::kw(":next-offset"), Edn::Long(end as i64)));
    }
    Ok(Edn::Map(pairs))
}

/// The name in `#datalith/db "name"`.
fn database_named(arg: &Edn) -> Option<&str> {
    match arg {
        Edn::Tagged(tag, name) if tag.to_symbol_text() == "datalith/db" => match &**name {
            Edn::String(name) => Some(name),
            _ => None,
        },
        _ => None,
    }
}

/// A query's own `:timeout` and `:memory-limit` take precedence over the options the server
/// passes, so one above the server's limit is refused here rather than obeyed. Text that
/// does not read is left for the query engine to report.
fn refuse_limits_past_the_servers(text: &str, limits: QueryLimits) -> Result<()> {
    let Ok(form) = read_one(text) else {
        return Ok(());
    };
    let checks = [
        ("timeout", Some(limits.timeout_ms), "ms"),
        ("memory-limit", limits.memory_limit, "bytes"),
    ];
    for (section, max, unit) in checks {
        let (Some(max), Some(asked)) = (max, section_number(&form, section)) else {
            continue;
        };
        if asked > max as f64 {
            return Err(ServerError::invalid(format!(
                "the query's :{section} {asked} is over this server's limit of {max} {unit}"
            )));
        }
    }
    Ok(())
}

/// The number after `:section` in a query vector, or under it in a query map (alone or in a
/// vector).
fn section_number(form: &Edn, section: &str) -> Option<f64> {
    let is_section = |e: &Edn| {
        e.as_keyword()
            .is_some_and(|k| k.namespace().is_none() && k.name() == section)
    };
    let value = match form {
        Edn::Vector(items) => items
            .iter()
            .position(is_section)
            .and_then(|i| items.get(i + 1)),
        Edn::Map(pairs) => pairs.iter().find(|(k, _)| is_section(k)).map(|(_, v)| v),
        _ => None,
    }?;
    let value = match value {
        Edn::Vector(items) if items.len() == 1 => &items[0],
        v => v,
    };
    match value {
        Edn::Long(n) => Some(*n as f64),
        Edn::Double(x) => Some(*x),
        Edn::BigInt(n) => Some(*n as f64),
        _ => None,
    }
}
