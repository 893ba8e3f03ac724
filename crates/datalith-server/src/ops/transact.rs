//! `transact`: `{:tx-data DATA}`, DATA EDN text or EDN data. Answers with the report:
//! `{:tx T, :db-before {:basis-t B}, :db-after {:basis-t T}, :tempids {"ann" 17592186045418},
//! :tx-data [[e :attribute v tx added] ...]}`. The transaction is durable before the answer
//! is sent. It cannot be stopped once queued, so it takes no `:timeout`: a client that gives
//! up waiting does not know whether it committed (read it back by a unique attribute).
//! With `--log`, the transaction goes through the log, and the answer comes once this node
//! has applied it (`replica`).

use datalith::edn::{read_one, Edn};
use datalith::{Database, TxReport};

use super::datoms::datom_edn;
use super::{Request, Source};
use crate::error::{Result, ServerError};

pub const FIELDS: &[&str] = &["tx-data"];

pub fn run(source: &Source, request: &Request) -> Result<Edn> {
    let report = match request.required("tx-data")? {
        Edn::String(text) => {
            let data = read_one(text).map_err(|e| ServerError::read(":tx-data", &e))?;
            transact(source, &data)?
        }
        data => transact(source, data)?,
    };
    report_edn(&source.database, &report)
}

fn transact(source: &Source, data: &Edn) -> Result<TxReport> {
    match &source.replica {
        Some(replica) => replica.transact(data),
        None => Ok(source.database.transact(data)?),
    }
}

/// The report as the client reads it.
fn report_edn(database: &Database, report: &TxReport) -> Result<Edn> {
    // The report's own values, while the library still keeps them (it keeps the latest few
    // batches'); the latest value otherwise, which names every attribute the report does.
    let before = report.db_before().ok().and_then(|db| db.basis_t().ok());
    let after_db = match report.db_after() {
        Ok(db) => db,
        Err(_) => database.db()?,
    };
    let after = report.db_after().ok().and_then(|db| db.basis_t().ok());
    let mut tempids = report.tempids_edn();
    tempids.sort_by_key(|(k, _)| datalith::edn::to_edn_string(k));
    let tx_data = report
        .tx_data
        .iter()
        .map(|d| datom_edn(&after_db, d, true))
        .collect();
    let basis = |b: Option<u64>| {
        Edn::Map(vec![(
            Edn::kw(":basis-t"),
            b.map_or(Edn::Nil, |b| Edn::Long(b as i64)),
        )])
    };
    Ok(Edn::Map(vec![
        (Edn::kw(":tx"), Edn::Long(report.tx as i64)),
        (Edn::kw(":db-before"), basis(before)),
        (Edn::kw(":db-after"), basis(after.or(Some(report.tx)))),
        (Edn::kw(":tempids"), Edn::Map(tempids)),
        (Edn::kw(":tx-data"), Edn::Vector(tx_data)),
    ]))
}
