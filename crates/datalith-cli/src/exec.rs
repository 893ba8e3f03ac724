//! What the shell and the subcommands share: telling a query from tx data, running each, and
//! describing a transaction's report.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use datalith::edn::{read_all, to_edn_string, Edn};
use datalith::tx::TxReport;
use datalith::{Database, Db};

use crate::error::{CliError, Result};

/// Whether `form` is a query: a vector starting with `:find`, a map with a `:find` key, or
/// `{:query QUERY :args [INPUT...]}` (the shell's way to give inputs; they bind to `:in`
/// after `$`).
pub fn is_query(form: &Edn) -> bool {
    if query_with_args(form).is_some() {
        return true;
    }
    match form {
        Edn::Vector(items) => items
            .first()
            .and_then(Edn::as_keyword)
            .is_some_and(|k| k.namespace().is_none() && k.name() == "find"),
        Edn::Map(pairs) => pairs.iter().any(|(k, _)| {
            k.as_keyword()
                .is_some_and(|k| k.namespace().is_none() && k.name() == "find")
        }),
        _ => false,
    }
}

fn key<'a>(pairs: &'a [(Edn, Edn)], name: &str) -> Option<&'a Edn> {
    pairs
        .iter()
        .find(|(k, _)| {
            k.as_keyword()
                .is_some_and(|k| k.namespace().is_none() && k.name() == name)
        })
        .map(|(_, v)| v)
}

/// `{:query Q :args [...]}` split into the query and its inputs.
pub fn query_with_args(form: &Edn) -> Option<(&Edn, Vec<Edn>)> {
    let Edn::Map(pairs) = form else {
        return None;
    };
    let q = key(pairs, "query")?;
    let args = match key(pairs, "args") {
        None => Vec::new(),
        Some(a) => a.as_seq()?.to_vec(),
    };
    Some((q, args))
}

/// A query result with its column headers and how long it took.
pub struct QueryOutcome {
    /// The result, as the query shaped it.
    pub result: Edn,
    /// The printed `:find` elements.
    pub headers: Vec<String>,
    /// Wall time of the query.
    pub elapsed: Duration,
}

/// Runs query `form` (already read) on `db`, cancellable.
pub fn query(db: &Db, form: &Edn, inputs: &[Edn], cancel: &AtomicBool) -> Result<QueryOutcome> {
    if let Some((q, args)) = query_with_args(form) {
        let mut all = args;
        all.extend_from_slice(inputs);
        return query(db, q, &all, cancel);
    }
    let text = to_edn_string(form);
    let start = Instant::now();
    let result = db.q_cancellable(&text, inputs, cancel)?;
    Ok(QueryOutcome {
        result,
        headers: crate::render::find_headers(form),
        elapsed: start.elapsed(),
    })
}

/// Transacts tx data `form`.
pub fn transact(db: &Database, form: &Edn) -> Result<(TxReport, Duration)> {
    let data = datalith::TxData::from_edn(form)?;
    let start = Instant::now();
    let report = db.transact(data)?;
    Ok((report, start.elapsed()))
}

/// A report as EDN: `{:tx id :datoms n :tempids {"a" 1048576 ...}}`.
pub fn report_edn(report: &TxReport) -> Edn {
    let mut tempids = report.tempids_edn();
    tempids.sort_by(|a, b| crate::render::compare(&a.0, &b.0));
    Edn::Map(vec![
        (Edn::kw(":tx"), Edn::Long(report.tx as i64)),
        (Edn::kw(":datoms"), Edn::Long(report.tx_data.len() as i64)),
        (Edn::kw(":tempids"), Edn::Map(tempids)),
    ])
}

/// Like [`report_edn`], but a report with more than `max` tempids gives their count
/// (`:tempid-count`) instead of the map: loading a dump must not print 20,000 of them.
pub fn report_edn_short(report: &TxReport, max: usize) -> Edn {
    let full = report_edn(report);
    match full {
        Edn::Map(mut pairs) => {
            if let Some((_, Edn::Map(t))) = pairs.last() {
                if t.len() > max {
                    let n = t.len() as i64;
                    pairs.pop();
                    pairs.push((Edn::kw(":tempid-count"), Edn::Long(n)));
                }
            }
            Edn::Map(pairs)
        }
        other => other,
    }
}

/// Reads every form of `text` (`source` names it in errors).
pub fn forms(source: &str, text: &str) -> Result<Vec<Edn>> {
    read_all(text).map_err(|e| CliError::read(source, &e))
}
