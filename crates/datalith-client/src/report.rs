//! What a transaction reports, as `datalith::TxReport` does in a process.

use std::collections::BTreeMap;

use datalith::edn::Edn;

use crate::error::ClientError;
use crate::http::{take_field, take_fields};

/// A committed transaction: its id, the bases around it, its tempids and datoms.
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
    /// Its datoms, `[e :attr v tx added]`.
    pub tx_data: Vec<Edn>,
}

impl Report {
    /// The id a string tempid resolved to (as `TxReport::tempid`).
    pub fn tempid(&self, name: &str) -> Option<u64> {
        self.tempids.get(name).copied()
    }

    pub(crate) fn from_answer(answer: Edn) -> Result<Report, ClientError> {
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
        let tx_data = match tx_data {
            Some(Edn::Vector(items)) => items,
            _ => Vec::new(),
        };
        Ok(Report {
            tx,
            basis_before: basis(before),
            basis_after: basis(after).unwrap_or(tx),
            tempids,
            tx_data,
        })
    }
}
