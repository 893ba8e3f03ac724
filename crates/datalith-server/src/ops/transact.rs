//! `transact`: `{:tx-data DATA}`, DATA EDN text or EDN data. Answers with the report:
//! `{:tx T, :db-before {:basis-t B}, :db-after {:basis-t T}, :tempids {"ann" 17592186045418},
//! :tx-data [[e :attribute v tx added] ...]}`. The transaction is durable before the answer
//! is sent. It cannot be stopped once queued, so it takes no `:timeout`: a client that gives
//! up waiting does not know whether it committed (read it back by a unique attribute).
//! With `--log`, the transaction goes through the log, and the answer comes once this node
//! has applied it (`replica`).

use datalith::codec::Value;
use datalith::edn::cbor::CborWriter;
use datalith::edn::{edn_from_value, read_one, Edn};
use datalith::store::Schema;
use datalith::{Database, Datom, TxReport};

use super::datoms::attr_edn;
use super::{Reply, Request, Source};
use crate::error::{Result, ServerError};
use crate::format::{Collection, Format};

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
    let datoms = Some(report.tx_data.len());
    format.collection_open(Collection::Vector, datoms, &mut out);
    match format {
        Format::Cbor => cbor_datoms(schema, &report.tx_data, &mut out),
        _ => text_datoms(schema, &report.tx_data, format, &mut out),
    }
    format.collection_close(Collection::Vector, datoms, &mut out);
    format.map_close(&mut out);
    Ok(out)
}

/// The report's datoms as text, each `[e :attribute v tx added]` written through one reused
/// tuple; the attribute's ident made once.
fn text_datoms(schema: &Schema, datoms: &[Datom], format: Format, out: &mut Vec<u8>) {
    let mut idents: Vec<(u32, Edn)> = Vec::new();
    let mut tuple = Vec::with_capacity(5);
    for (i, d) in datoms.iter().enumerate() {
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
        format.write_into(&datom, out);
        let Edn::Vector(reused) = datom else {
            unreachable!("made a vector above")
        };
        tuple = reused;
    }
}

/// The report's datoms in CBOR, each `[e :attribute v tx added]` written from the datom's
/// own value (`CborWriter::stored`, what `edn_from_value` makes of it, as `text_datoms`
/// writes), the attribute's ident encoded once and copied.
fn cbor_datoms(schema: &Schema, datoms: &[Datom], out: &mut Vec<u8>) {
    let mut idents: Vec<(u32, Vec<u8>)> = Vec::new();
    for d in datoms {
        CborWriter(out).array_head(5);
        CborWriter(out).stored(&Value::Long(d.e as i64));
        match idents.iter().find(|(a, _)| *a == d.a) {
            Some((_, bytes)) => out.extend_from_slice(bytes),
            None => {
                let mut bytes = Vec::new();
                CborWriter(&mut bytes).value(&attr_edn(schema, d.a));
                out.extend_from_slice(&bytes);
                idents.push((d.a, bytes));
            }
        }
        let mut w = CborWriter(out);
        w.stored(&d.v);
        w.stored(&Value::Long(d.tx as i64));
        w.stored(&Value::Boolean(d.added));
    }
}
