//! One transaction in the log: what the submitting node wrote to the topic, and what every
//! node reads back. The record's value is EDN text, so the log can be read with Kafka's own
//! tools:
//!
//! ```text
//! {:datalith.log/format 1, :request "000000000011.4711-18ee8a3c5d2e1f00", :instant #inst "2026-12-02T10:00:00.000-00:00",
//!  :tx-data [[:db/add "ann" :person/name "Ann"]]}
//! ```
//!
//! - `:request` names the submission: the submitting node waits for the record that carries
//!   it, and a record written twice (a producer that retried) is applied once, the second
//!   refused by the uniqueness of `:datalith.log/request`.
//! - `:instant` is the submitting node's clock; every node gives the transaction the later of
//!   it and the last transaction's instant, so time never goes back and every node agrees.
//! - `:tx-data` is the client's tx data as given (tempids, lookup refs, function calls):
//!   each node resolves it against its own copy of the same state, so all reach the same
//!   datoms.

use datalith::edn::{read_one, to_edn_string, Edn};

/// The format this code writes and reads.
const FORMAT: i64 = 1;

/// A transaction as the log carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    /// Names the submission, unique across nodes and restarts.
    pub request: String,
    /// The submitter's clock, ms since the epoch.
    pub instant: i64,
    /// The tx data, as the client gave it.
    pub tx_data: Edn,
}

/// Why bytes in the topic are not a record this code can apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotARecord(pub String);

impl LogRecord {
    /// The bytes of the record of `tx_data` (printed in place, not copied into a map first).
    pub fn encode(request: &str, instant: i64, tx_data: &Edn) -> Vec<u8> {
        format!(
            "{{:datalith.log/format {FORMAT}, :request {}, :instant {}, :tx-data {}}}",
            to_edn_string(&Edn::String(request.to_string())),
            to_edn_string(&Edn::Inst(instant)),
            to_edn_string(tx_data)
        )
        .into_bytes()
    }

    /// Reads a record; the bytes are another program's until proven otherwise.
    pub fn decode(bytes: &[u8]) -> Result<LogRecord, NotARecord> {
        let text =
            std::str::from_utf8(bytes).map_err(|_| NotARecord("not UTF-8 text".to_string()))?;
        let edn = read_one(text).map_err(|e| NotARecord(format!("not EDN: {e}")))?;
        let Edn::Map(mut entries) = edn else {
            return Err(NotARecord("not an EDN map".to_string()));
        };
        // Each value is moved out, not copied: a record's tx data may be large.
        let mut take = |key: &str| {
            let key = Edn::kw(key);
            let at = entries.iter().position(|(k, _)| *k == key)?;
            Some(entries.swap_remove(at).1)
        };
        match take(":datalith.log/format") {
            Some(Edn::Long(FORMAT)) => {}
            Some(other) => {
                return Err(NotARecord(format!(
                    "format {} (this node reads {FORMAT})",
                    to_edn_string(&other)
                )))
            }
            None => return Err(NotARecord("no :datalith.log/format".to_string())),
        }
        let request = match take(":request") {
            Some(Edn::String(s)) if !s.is_empty() => s,
            _ => return Err(NotARecord("no :request string".to_string())),
        };
        let instant = match take(":instant") {
            Some(Edn::Inst(ms)) => ms,
            _ => return Err(NotARecord("no :instant".to_string())),
        };
        let tx_data = match take(":tx-data") {
            Some(data @ (Edn::Vector(_) | Edn::List(_))) => data,
            _ => return Err(NotARecord("no :tx-data vector".to_string())),
        };
        Ok(LogRecord {
            request,
            instant,
            tx_data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let data = read_one(
            r#"[[:db/add "ann" :person/name "Ann"] {:db/id "bo" :person/born #inst "1990-01-02"
               :person/id #uuid "6f1b7a8e-3c1d-4d5e-9f00-0123456789ab" :person/height 1.82M}]"#,
        )
        .unwrap();
        let record = LogRecord {
            request: "node-1/7".into(),
            instant: 1_764_669_600_000,
            tx_data: data,
        };
        let bytes = LogRecord::encode(&record.request, record.instant, &record.tx_data);
        assert_eq!(LogRecord::decode(&bytes).unwrap(), record);
    }

    #[test]
    fn bytes_that_are_not_records() {
        let table: &[(&[u8], &str)] = &[
            (b"\xff\xfe", "not UTF-8"),
            (b"{:a", "not EDN"),
            (b"[1 2]", "not an EDN map"),
            (b"{:request \"r\"}", "no :datalith.log/format"),
            (b"{:datalith.log/format 2}", "format 2"),
            (
                b"{:datalith.log/format 1 :instant #inst \"2020-01-01\" :tx-data []}",
                "no :request",
            ),
            (
                b"{:datalith.log/format 1 :request \"r\" :tx-data []}",
                "no :instant",
            ),
            (
                b"{:datalith.log/format 1 :request \"r\" :instant #inst \"2020-01-01\" :tx-data 3}",
                "no :tx-data",
            ),
        ];
        for (bytes, want) in table {
            let e = LogRecord::decode(bytes).unwrap_err();
            assert!(
                e.0.contains(want),
                "{:?}: {}",
                String::from_utf8_lossy(bytes),
                e.0
            );
        }
    }
}
