//! `dl-bare`: workload W's Datalog writes through the bare server (`common::bare`): the
//! records as the EDN text `dl-remote` sends, in a frame over one loopback connection, the
//! embedded `transact` in the server's process, a few bytes back once durable. The floor
//! under `dl-remote`: no HTTP, no body format, no report. The schema is `dl-sync`'s.

use std::path::Path;

use crate::common::bare::{BareServer, COUNT, NONE, READ, TRANSACT};
use crate::common::BenchError;
use crate::write::condition::{Condition, Done, Record};

use super::datalith_remote::{tx_text, SCHEMA};

const STORE: &str = "datalith-bare";

pub struct DatalithBare {
    server: BareServer,
}

impl DatalithBare {
    pub fn open(dir: &Path) -> Result<Self, BenchError> {
        let mut server = BareServer::start(dir)?;
        server
            .call(TRANSACT, SCHEMA.as_bytes())
            .map_err(BenchError::store(STORE, "schema"))?;
        Ok(DatalithBare { server })
    }
}

impl Condition for DatalithBare {
    fn write_batch(&mut self, records: Vec<Record>, done: Done) -> Result<(), BenchError> {
        let result = self
            .server
            .call(TRANSACT, tx_text(&records).as_bytes())
            .map(|_| ());
        done(result.clone());
        result.map_err(BenchError::store(STORE, "transact"))
    }

    fn read(&mut self, key: u64) -> Result<Option<String>, BenchError> {
        let (status, value) = self
            .server
            .call(READ, &(key as i64).to_le_bytes())
            .map_err(BenchError::store(STORE, "query"))?;
        Ok((status != NONE).then(|| String::from_utf8_lossy(value).into_owned()))
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        let (status, n) = self
            .server
            .call(COUNT, &[])
            .map_err(BenchError::store(STORE, "count"))?;
        match (status, <[u8; 8]>::try_from(n)) {
            (NONE, _) => Ok(0),
            (_, Ok(n)) => Ok(u64::from_le_bytes(n)),
            _ => Err(BenchError::Store {
                store: STORE.into(),
                op: "count",
                message: format!("a count of {} bytes", n.len()),
            }),
        }
    }
}
