//! `q`: `{:query QUERY :args [INPUT...] :timeout MS :memory-limit BYTES :basis-t T
//! :lease-ms MS :explain BOOL}`; with `:explain true` the answer carries the plan as `:plan`
//! (`explain`). QUERY is EDN text or EDN data; the inputs bind to `:in` after `$` (the
//! database in the path). An input `#datalith/db "films"` is another served database (its
//! latest value; the token must be able to read it), `#datalith/db ["films" T]` its value at
//! basis T (leased, or still the latest): the query then takes every input explicitly, the
//! path's database first (`:in $ $films ...`), as Datomic's `q` does with several
//! databases.
//!
//! `:limit N :offset M` answer one page of a collection result (a relation, a vector of
//! values), with `:next-offset` when more follow: ask again with that `:offset` and the
//! first page's `:basis-t` (leased with `:lease-ms`) for the next page of the same value. The
//! engine's order is the same for one value and one query (no random hashing, one thread),
//! so the pages of one value add up to its result. The engine has no cursor: the first page
//! runs the query whole, and its result is kept (`pages`, within `--page-cache-bytes`) so
//! that the next pages, asked with its `:basis-t`, are slices of it, answered without running
//! the query again (and while it is kept, also after the value's lease ended). A page that
//! finds no kept result runs the query whole, as the first did.

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::query::{Answer, QueryOptions};
use datalith::Input;

use super::pages::Kept;
use super::{answer, basis, Context, QueryLimits, Reply, Request, Source};
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
    "explain",
];

pub fn run(source: &Source, request: &Request, cx: &Context<'_>) -> Result<Reply> {
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
    if let Some(ask) = cx.stop_early {
        options = options.interrupt(ask);
    }
    let explain = match request.get("explain") {
        None | Some(Edn::Bool(false)) => false,
        Some(Edn::Bool(true)) => true,
        Some(other) => {
            return Err(ServerError::invalid(format!(
                ":explain must be true or false, got {}",
                super::request::short(other)
            )))
        }
    };
    if explain {
        options = options.explain(true);
    }
    let limit = request.count("limit")?;
    let offset = request.count("offset")?;
    let paged = limit.is_some() || offset.is_some();
    let named = args
        .iter()
        .map(database_named)
        .collect::<Result<Vec<_>>>()?;
    // A query that reads another database's latest value: no basis decides its result. An
    // explained one asks for the run itself.
    let keepable = paged && !explain && named.iter().flatten().all(|(_, basis)| basis.is_some());
    // The inputs as text, printed once (a large input relation is not copied for it).
    let args_text = match keepable {
        true => args.iter().map(to_edn_string).collect::<Vec<_>>().join(" "),
        false => String::new(),
    };
    if let (true, Some(basis)) = (keepable, request.count("basis-t")?) {
        if let Some(kept) = source
            .pages
            .get(&page_key(&text, &args_text, basis, request))
        {
            // The other databases a kept result read are still this token's to read.
            for (name, _) in named.iter().flatten() {
                cx.databases.source(name)?;
            }
            // A lease asked for is renewed while the value is still leased.
            if let (Some(ms), Some(db)) = (request.count("lease-ms")?, source.leases.get(basis)) {
                source.leases.lease(basis, &db, ms)?;
            }
            return Ok(Reply::Value(page(&kept, limit, offset.unwrap_or(0), basis)));
        }
    }
    let (db, basis) = basis::snapshot(source, request)?;
    let key = keepable.then(|| page_key(&text, &args_text, basis, request));
    // A whole answer is written as it is read: its rows are made into EDN then, not here.
    let rows = !paged && !explain;
    let several = named.iter().any(Option::is_some);
    let inputs = match several {
        false => Vec::new(),
        true => {
            let mut inputs = vec![Input::Db(db.clone())];
            for (arg, named) in args.iter().zip(&named) {
                inputs.push(match named {
                    Some((name, None)) => Input::Db(cx.databases.source(name)?.latest()?),
                    Some((name, Some(basis))) => {
                        Input::Db(basis::value_at(&*cx.databases.source(name)?, *basis)?)
                    }
                    None => Input::Value(arg.clone()),
                });
            }
            inputs
        }
    };
    // On a blocking thread the answer is written while the query runs (`Outlet`); in place
    // (a query expected to be short) its rows are written once made.
    let outlet = cx.outlet.filter(|_| rows && cx.stop_early.is_none());
    let out = match (outlet, several) {
        (Some(outlet), _) => {
            // The request's cancel flag is set once the answer is sent: the outlet says when
            // its client is gone instead.
            let gone = || outlet.gone();
            let mut options = options.interrupt(&gone);
            options.cancel = None;
            let mut out = outlet.answer(basis);
            let ran = match several {
                false => db.q_each(&text, &args, &options, &mut *out),
                true => datalith::q_each(&text, &inputs, &options, &mut *out),
            };
            match ran {
                Ok(None) => return out.end(Ok(())),
                Ok(Some(whole)) => Answer::Whole(whole),
                Err(e) => return out.end(Err(e.into())),
            }
        }
        (None, false) => match rows {
            true => db.q_rows(&text, &args, &options)?,
            false => Answer::Whole(db.q_with(&text, &args, &options)?),
        },
        (None, true) => match rows {
            true => datalith::q_rows(&text, &inputs, &options)?,
            false => Answer::Whole(datalith::q_with(&text, &inputs, &options)?),
        },
    };
    let out = match out {
        Answer::Rows(rows) => return Ok(Reply::Rows { rows, basis }),
        Answer::Whole(out) => out,
    };
    let plan = out.plan.as_ref().map(super::explain::plan_edn);
    let with_plan = |answer: Edn| match (answer, plan) {
        (Edn::Map(mut pairs), Some(plan)) => {
            pairs.push((Edn::kw(":plan"), plan));
            Edn::Map(pairs)
        }
        (answer, _) => answer,
    };
    if !paged {
        return Ok(Reply::Value(with_plan(answer(out.result, basis))));
    }
    let (rows, rebuild) = collection(out.result)?;
    let offset = offset.unwrap_or(0);
    let more = limit.is_some_and(|limit| offset.saturating_add(limit) < rows.len() as u64);
    let kept = match key.filter(|_| more) {
        Some(key) => source.pages.keep(key, rows, rebuild),
        None => Kept {
            rows: std::sync::Arc::new(rows),
            rebuild,
        },
    };
    Ok(Reply::Value(with_plan(page(&kept, limit, offset, basis))))
}

/// What decides a paged query's result besides its database value: the key its result is
/// kept under.
fn page_key(text: &str, args_text: &str, basis: u64, request: &Request) -> String {
    let field = |name: &str| request.get(name).map(to_edn_string).unwrap_or_default();
    format!(
        "{basis}\u{0}{text}\u{0}{args_text}\u{0}{}\u{0}{}\u{0}{}",
        field("as-of"),
        field("since"),
        field("history"),
    )
}

/// The rows of a collection result, and how to make a page of them that collection's kind.
fn collection(result: Edn) -> Result<(Vec<Edn>, fn(Vec<Edn>) -> Edn)> {
    Ok(match result {
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
    })
}

/// The rows `offset..offset + limit` of a result, with `:next-offset` when more follow; the
/// collection keeps its kind (a page of a set is a set).
fn page(kept: &Kept, limit: Option<u64>, offset: u64, basis: u64) -> Edn {
    let total = kept.rows.len() as u64;
    let start = offset.min(total) as usize;
    let end = match limit {
        Some(limit) => offset.saturating_add(limit).min(total) as usize,
        None => total as usize,
    };
    let page = kept.rows[start..end].to_vec();
    let mut pairs = vec![
        (Edn::kw(":result"), (kept.rebuild)(page)),
        (Edn::kw(":basis-t"), Edn::Long(basis as i64)),
    ];
    if (end as u64) < total {
        pairs.push((Edn::kw(":next-offset"), Edn::Long(end as i64)));
    }
    Edn::Map(pairs)
}

/// What an input `#datalith/db "name"` (that database's latest value) or `#datalith/db
/// ["name" T]` (its value at basis T, leased or still the latest) names; `None` for any other
/// input.
fn database_named(arg: &Edn) -> Result<Option<(&str, Option<u64>)>> {
    let Edn::Tagged(tag, named) = arg else {
        return Ok(None);
    };
    if tag.to_symbol_text() != "datalith/db" {
        return Ok(None);
    }
    match &**named {
        Edn::String(name) => Ok(Some((name, None))),
        Edn::Vector(pair) => match pair.as_slice() {
            [Edn::String(name), Edn::Long(basis)] if *basis >= 0 => {
                Ok(Some((name, Some(*basis as u64))))
            }
            _ => Err(malformed_db_input(arg)),
        },
        _ => Err(malformed_db_input(arg)),
    }
}

fn malformed_db_input(arg: &Edn) -> ServerError {
    ServerError::invalid(format!(
        "#datalith/db takes a served database's name (its latest value) or [name basis-t] \
         (its value at that basis), got {}",
        super::request::short(arg)
    ))
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
