//! What a transaction reports, as `datalith::TxReport` does in a process.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use datalith::edn::Edn;

use crate::error::ClientError;
use crate::http::{take_field, take_fields, Unread};

/// A committed transaction: its id, the bases around it, its tempids and datoms.
///
/// The datoms are read from the answer when [`Report::tx_data`] first asks for them: they
/// are most of a report, and many writers never look at them (a 100-entity transaction's
/// 201 datoms took ~39 us to read, of a ~570 us call over loopback).
#[derive(Debug, Clone)]
pub struct Report {
    /// The transaction's entity id.
    pub tx: u64,
    /// The basis just before it (`None` when the server no longer knew it).
    pub basis_before: Option<u64>,
    /// The basis just after it.
    pub basis_after: u64,
    /// String tempids and the ids they resolved to.
    pub tempids: BTreeMap<String, u64>,
    /// Its datoms, `[e :attr v tx added]`, unread or read.
    datoms: Datoms,
}

/// A report's datoms: the answer's bytes holding them until they are first asked for.
#[derive(Debug, Clone, Default)]
struct Datoms {
    unread: Option<Unread>,
    read: OnceLock<Result<Vec<Edn>, String>>,
}

impl Report {
    /// The id a string tempid resolved to (as `TxReport::tempid`).
    pub fn tempid(&self, name: &str) -> Option<u64> {
        self.tempids.get(name).copied()
    }

    /// Its datoms, `[e :attr v tx added]` (as `TxReport::tx_data`), read from the answer
    /// the first time; an error when the server's answer holds something else there.
    pub fn tx_data(&self) -> Result<&[Edn], ClientError> {
        let read = self.datoms.read.get_or_init(|| match &self.datoms.unread {
            None => Ok(Vec::new()),
            Some(unread) => match unread.read()? {
                Edn::Vector(items) => Ok(items),
                other => Err(format!(
                    "{} where a vector belongs",
                    datalith::edn::to_edn_string(&other)
                )),
            },
        });
        read.as_deref().map_err(|e| {
            ClientError::transport(format!("a report whose :tx-data does not read: {e}"))
        })
    }

    /// A report from an answer: its `:tx-data` read with it, or left `unread`.
    pub(crate) fn from_answer(answer: Edn, unread: Option<Unread>) -> Result<Report, ClientError> {
        let long = |e: Option<Edn>| match e {
            Some(Edn::Long(n)) => Some(n as u64),
            _ => None,
        };
        let basis = |m: Option<Edn>| long(m.and_then(|m| take_field(m, ":basis-t")));
        // Moved out of the answer, not copied: the datoms are most of it.
        let [tx, before, after, tempids, tx_data] = take_fields(
            answer,
            [":tx", ":db-before", ":db-after", ":tempids", ":tx-data"],
        );
        let tx = long(tx).ok_or_else(|| ClientError::transport("a report without :tx"))?;
        let tempids = match tempids {
            Some(Edn::Map(pairs)) => pairs
                .into_iter()
                .filter_map(|(k, v)| match (k, v) {
                    (Edn::String(k), Edn::Long(id)) => Some((k, id as u64)),
                    _ => None,
                })
                .collect(),
            _ => BTreeMap::new(),
        };
        let datoms = match (tx_data, unread) {
            (Some(Edn::Vector(items)), _) => Datoms {
                unread: None,
                read: OnceLock::from(Ok(items)),
            },
            (_, unread) => Datoms {
                unread,
                read: OnceLock::new(),
            },
        };
        Ok(Report {
            tx,
            basis_before: basis(before),
            basis_after: basis(after).unwrap_or(tx),
            tempids,
            datoms,
        })
    }
}
