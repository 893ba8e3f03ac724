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
    // The bases and the schema come from the report itself: building its `db_before` and
    // `db_after` values would replay the batch's writes over a snapshot (about half a
    // millisecond for a 100-entity transaction, and it hurries the applier along), only
    // to read back three numbers and the attribute idents. Without values (never, for a
    // committed transaction), the latest schema names every attribute the report does.
    let latest;
    let schema = match report.schema_after() {
        Some(schema) => schema,
        None => {
            latest = database.db()?;
            latest.schema()
        }
    };
    let mut tempids = report.tempids_edn();
    tempids.sort_by_key(|(k, _)| datalith::edn::to_edn_string(k));
    let tx_data = report
        .tx_data
        .iter()
        .map(|d| datom_edn(schema, d, true))
        .collect();
    let basis = |b: u64| Edn::Map(vec![(Edn::kw(":basis-t"), Edn::Long(b as i64))]);
    Ok(Edn::Map(vec![
        (Edn::kw(":tx"), Edn::Long(report.tx as i64)),
        (Edn::kw(":db-before"), basis(report.basis_t_before())),
        (Edn::kw(":db-after"), basis(report.basis_t_after())),
        (Edn::kw(":tempids"), Edn::Map(tempids)),
        (Edn::kw(":tx-data"), Edn::Vector(tx_data)),
    ]))
}
