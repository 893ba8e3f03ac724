//! The writer child: writes until killed, logging each acknowledged write.
//!
//! Keys are `<cycle>/<i>`; Datalog writes assert `:torture/key`, KV writes put the key in the
//! table `torture`. Up to [`IN_FLIGHT`] writes are outstanding so that group commits batch
//! several of them (the case where one batch's acknowledgements could be mixed up).

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use datalith::edn::read_one;
use datalith::kv::{CommitHandle, KvError, KvOp, TableKind};
use datalith::tx::{TxError, TxReport};
use datalith::{Database, DbOptions};

/// Writes outstanding at once.
pub const IN_FLIGHT: usize = 32;
/// The KV table the writer puts into.
pub const KV_TABLE: &str = "torture";
/// The schema the writer installs (at open, idempotent).
pub const SCHEMA: &str = "{:torture/key {:db/valueType :db.type/string :db/unique :db.unique/identity} :torture/cycle {:db/valueType :db.type/long}}";

/// The value the writer puts for write `i`: varied lengths, some on overflow pages, so that a
/// torn or misplaced value shows.
pub fn kv_value(i: u64) -> Vec<u8> {
    vec![(i % 251) as u8; 16 + (i as usize * 37) % 6000]
}

enum Pending {
    Datalog(String, CommitHandle<TxReport, TxError>),
    Kv(String, CommitHandle<(), KvError>),
}

/// The acknowledgement log: one line per acknowledged write, on disk before the next write
/// is acknowledged.
struct AckLog(File);

impl AckLog {
    /// Opens the log for appending, first cutting a line the previous writer's kill left
    /// without its newline (it was never acknowledged; appended to, it would merge with the
    /// next line).
    fn open(path: &Path) -> Result<AckLog, String> {
        let name = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(path)
            .map_err(name)?;
        let text = std::fs::read(path).map_err(name)?;
        let complete = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        file.set_len(complete as u64).map_err(name)?;
        file.seek(SeekFrom::End(0)).map_err(name)?;
        Ok(AckLog(file))
    }

    fn ack(&mut self, kind: char, key: &str) -> Result<(), String> {
        // One write call per line, so that a kill leaves at most one torn line at the end.
        let line = format!("{kind} {key}\n");
        self.0
            .write_all(line.as_bytes())
            .map_err(|e| format!("ack log: {e}"))?;
        self.0
            .sync_data()
            .map_err(|e| format!("ack log fsync: {e}"))
    }
}

fn settle(p: Pending, log: &mut AckLog) -> Result<(), String> {
    match p {
        Pending::Datalog(key, h) => {
            h.wait().map_err(|e| format!("transact {key}: {e}"))?;
            log.ack('d', &key)
        }
        Pending::Kv(key, h) => {
            h.wait().map_err(|e| format!("kv put {key}: {e}"))?;
            log.ack('k', &key)
        }
    }
}

/// Writes until killed (returns only on an error).
pub fn run(dir: &Path, ack_log: &Path, cycle: u64) -> Result<bool, String> {
    let mut options = DbOptions::default();
    options.schema = Some(read_one(SCHEMA).expect("schema EDN"));
    let db = Database::open(dir, options).map_err(|e| format!("open: {e}"))?;
    let table = db
        .env()
        .table(KV_TABLE, TableKind::Plain)
        .map_err(|e| format!("table: {e}"))?;
    let mut log = AckLog::open(ack_log)?;
    let mut pending = VecDeque::new();
    for i in 0u64.. {
        let key = format!("{cycle}/{i}");
        let p = if i % 2 == 0 {
            let text = format!("[{{:torture/key \"{key}\" :torture/cycle {cycle}}}]");
            let tx =
                datalith::TxData::from_edn(&read_one(&text).expect("tx EDN")).expect("tx data");
            Pending::Datalog(key, db.transact_async(tx))
        } else {
            let op = KvOp::put(&table, key.clone(), kv_value(i));
            Pending::Kv(key, db.env().transact_kv_async(vec![op]))
        };
        pending.push_back(p);
        if pending.len() >= IN_FLIGHT {
            settle(pending.pop_front().expect("pending"), &mut log)?;
        }
    }
    unreachable!("the writer loops until killed")
}
