//! `dl-remote`: workload W's Datalog writes through the real `datalith serve` (durable, its
//! own process, on 127.0.0.1:0, serving this condition's directory) and `datalith-client`:
//! each call is one `Connection::transact` of the records as EDN text (`[{:k 2 :v "..."}
//! ...]`, written in the timed part as a client must), answered once durable. The schema is
//! `dl-sync`'s. Reads go through a Datalog query on a value the server leases
//! (`Connection::db`, then `RemoteDb::q`); the count is `(count ?e)` of `:k`, asked of the
//! server.

use std::path::Path;

use datalith::edn::{to_edn_string, Edn};
use datalith_client::Connection;

use crate::common::serve::Server;
use crate::common::BenchError;
use crate::write::condition::{Condition, Done, Record};

const STORE: &str = "datalith-remote";

/// `dl-sync`'s schema, as tx data.
pub(super) const SCHEMA: &str = "[{:db/ident :k :db/valueType :db.type/long :db/cardinality \
                      :db.cardinality/one :db/unique :db.unique/identity}
                     {:db/ident :v :db/valueType :db.type/string :db/cardinality \
                      :db.cardinality/one}]";

/// The mixed phase's read: the text of `dl-sync` and Datalevin's harness.
const READ_QUERY: &str = "[:find ?v . :in $ ?k :where [?e :k ?k] [?e :v ?v]]";

pub struct DatalithRemote {
    /// Stopped (SIGTERM, then waited for) when the condition is dropped.
    server: Server,
    conn: Connection,
}

impl DatalithRemote {
    pub fn open(dir: &Path) -> Result<Self, BenchError> {
        let server = Server::start(dir)?;
        let conn = server.connection();
        conn.transact(SCHEMA)
            .map_err(BenchError::store(STORE, "schema"))?;
        Ok(DatalithRemote { server, conn })
    }
}

/// The records as one transaction's EDN text.
pub fn tx_text(records: &[Record]) -> String {
    let mut s = String::with_capacity(records.len() * 56 + 2);
    s.push('[');
    for r in records {
        s.push_str("{:k ");
        s.push_str(&r.key.to_string());
        s.push_str(" :v ");
        s.push_str(&to_edn_string(&Edn::String(r.value.clone())));
        s.push('}');
    }
    s.push(']');
    s
}

impl Condition for DatalithRemote {
    fn write_batch(&mut self, records: Vec<Record>, done: Done) -> Result<(), BenchError> {
        let result = self.conn.transact(tx_text(&records).as_str()).map(|_| ());
        done(result.as_ref().map(|_| ()).map_err(|e| e.to_string()));
        result.map_err(BenchError::store(STORE, "transact"))
    }

    fn read(&mut self, key: u64) -> Result<Option<String>, BenchError> {
        let found = self
            .conn
            .db()
            .and_then(|v| v.q(READ_QUERY, &[Edn::Long(key as i64)]))
            .map_err(BenchError::store(STORE, "query"))?;
        Ok(match found {
            Edn::String(s) => Some(s),
            _ => None,
        })
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        let n = self
            .conn
            .db()
            .and_then(|v| v.q("[:find (count ?e) . :where [?e :k]]", &[]))
            .map_err(BenchError::store(STORE, "count"))?;
        match n {
            Edn::Long(n) => Ok(n as u64),
            Edn::Nil => Ok(0),
            other => Err(BenchError::Store {
                store: STORE.into(),
                op: "count",
                message: format!("(count ?e) answered {other} ({})", self.server.url),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_become_one_vector_of_entity_maps() {
        let records = vec![
            Record {
                key: 2,
                value: "a\"b".into(),
            },
            Record {
                key: 4,
                value: "c".into(),
            },
        ];
        let text = tx_text(&records);
        assert_eq!(text, r#"[{:k 2 :v "a\"b"}{:k 4 :v "c"}]"#);
        let Ok(Edn::Vector(items)) = datalith::edn::read_one(&text) else {
            panic!("{text}")
        };
        assert_eq!(items.len(), 2);
        datalith::edn::read_one(SCHEMA).unwrap();
    }
}
