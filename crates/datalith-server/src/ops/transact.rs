//! `transact`: `{:tx-data DATA}`, DATA EDN text or EDN data. Answers with the report:
//! `{:tx T, :db-before {:basis-t B}, :db-after {:basis-t T}, :tempids {"ann" 17592186045418},
//! :tx-data [[e :attribute v tx added] ...]}`. The transaction is durable before the answer
//! is sent. It cannot be stopped once queued, so it takes no `:timeout`: a client that gives
//! up waiting does not know whether it committed (read it back by a unique attribute).
//! With `--log`, the transaction goes through the log, and the answer comes once this node
//! has applied it (`replica`).

use datalith::edn::{edn_from_value, read_one, Edn};
use datalith::{Database, TxReport};

use super::datoms::attr_edn;
use super::{Reply, Request, Source};
use crate::error::{Result, ServerError};
use crate::format::Format;

pub const FIELDS: &[&str] = &["tx-data"];

pub fn run(source: &Source, request: &Request, format: Format) -> Result<Reply> {
    let report = match request.required("tx-data")? {
        Edn::String(text) => {
            let data = read_one(text).map_err(|e| ServerError::read(":tx-data", &e))?;
            transact(source, &data)?
        }
        data => transact(source, data)?,
    };
    report_text(&source.database, &report, format).map(|bytes| Reply::Written(bytes, format))
}

fn transact(source: &Source, data: &Edn) -> Result<TxReport> {
    match &source.replica {
        Some(replica) => replica.transact(data),
        None => Ok(source.database.transact(data)?),
    }
}

/// The report as the client reads it, written straight into its text: its datoms are most
/// of it, and each is written from the report's datom through one reused tuple, not first
/// made into a value of its own (a 100-entity transaction's 201 datoms made into EDN values
/// and dropped again cost more than writing them).
fn report_text(database: &Database, report: &TxReport, format: Format) -> Result<Vec<u8>> {
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
    tempids.sort_by_cached_key(|(k, _)| datalith::edn::to_edn_string(k));
    let basis = |b: u64| Edn::Map(vec![(Edn::kw(":basis-t"), Edn::Long(b as i64))]);
    let head = [
        (Edn::kw(":tx"), Edn::Long(report.tx as i64)),
        (Edn::kw(":db-before"), basis(report.basis_t_before())),
        (Edn::kw(":db-after"), basis(report.basis_t_after())),
        (Edn::kw(":tempids"), Edn::Map(tempids)),
    ];
    let mut out = Vec::with_capacity(256 + 64 * report.tx_data.len());
    format.map_open(head.len() + 1, &mut out);
    for (k, v) in &head {
        format.entry_key(k, &mut out);
        format.write_into(v, &mut out);
        out.extend_from_slice(format.entry_separator());
    }
    format.entry_key(&Edn::kw(":tx-data"), &mut out);
    format.vector_open(report.tx_data.len(), &mut out);
    // Each datom `[e :attribute v tx added]`; the attribute's ident made once.
    let mut idents: Vec<(u32, Edn)> = Vec::new();
    let mut tuple = Vec::with_capacity(5);
    for (i, d) in report.tx_data.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(format.item_separator());
        }
        let attr = match idents.iter().find(|(a, _)| *a == d.a) {
            Some((_, ident)) => ident.clone(),
            None => {
                let ident = attr_edn(schema, d.a);
                idents.push((d.a, ident.clone()));
                ident
            }
        };
        tuple.clear();
        tuple.extend([
            Edn::Long(d.e as i64),
            attr,
            edn_from_value(&d.v),
            Edn::Long(d.tx as i64),
            Edn::Bool(d.added),
        ]);
        let datom = Edn::Vector(tuple);
        format.write_into(&datom, &mut out);
        let Edn::Vector(reused) = datom else {
            unreachable!("made a vector above")
        };
        tuple = reused;
    }
    format.vector_close(&mut out);
    format.map_close(&mut out);
    Ok(out)
}
