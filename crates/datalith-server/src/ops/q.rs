//! `q`: `{:query QUERY :args [INPUT...] :timeout MS :memory-limit BYTES :basis-t T
//! :lease-ms MS}`. QUERY is EDN text or EDN data; the inputs bind to `:in` after `$` (the
//! database in the path). An input `#datalith/db "films"` is another served database (its
//! latest value; the token must be able to read it): the query then takes every input
//! explicitly, the path's database first (`:in $ $films ...`), as Datomic's `q` does with
//! several databases.

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
    Ok(answer(out.result, basis))
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
