//! Verification after a kill: every write the ack log names is in the database.

use std::collections::HashSet;
use std::path::Path;

use datalith::edn::Edn;
use datalith::kv::TableKind;
use datalith::{Database, DbOptions};

/// What a verification found.
pub struct Verified {
    /// Acknowledged writes in the log.
    pub acks: usize,
    /// Acknowledged writes missing from the database, or (KV) with another value: `d key`
    /// or `k key`.
    pub lost: Vec<String>,
}

/// The complete lines of the ack log (a line cut by the kill has no newline and was never
/// acknowledged: the fsync that acknowledges it follows the whole line).
fn acknowledged(ack_log: &Path) -> Result<Vec<(char, String)>, String> {
    let text = match std::fs::read_to_string(ack_log) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("{}: {e}", ack_log.display())),
    };
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete
        .lines()
        .map(|l| match l.split_once(' ') {
            Some((kind @ ("d" | "k"), key)) => Ok((kind.chars().next().unwrap(), key.to_string())),
            _ => Err(format!("malformed ack line {l:?}")),
        })
        .collect()
}

/// Reopens the database in `dir` (read-write, as a user after a crash) and looks up every
/// write `ack_log` names.
pub fn verify(dir: &Path, ack_log: &Path) -> Result<Verified, String> {
    let acks = acknowledged(ack_log)?;
    let db = Database::open(dir, DbOptions::default()).map_err(|e| format!("reopen: {e}"))?;
    let snapshot = db.db().map_err(|e| format!("snapshot: {e}"))?;
    let keys: HashSet<String> = match snapshot.q("[:find [?k ...] :where [_ :torture/key ?k]]", &[])
    {
        Ok(Edn::Vector(ks)) => ks
            .into_iter()
            .filter_map(|k| match k {
                Edn::String(s) => Some(s),
                _ => None,
            })
            .collect(),
        Ok(_) => HashSet::new(),
        // Before the first commit the attribute does not exist yet.
        Err(_) => HashSet::new(),
    };
    let table = db
        .env()
        .table(super::writer::KV_TABLE, TableKind::Plain)
        .map_err(|e| format!("table: {e}"))?;
    let txn = db.env().read().map_err(|e| format!("read: {e}"))?;
    let view = txn.view();
    let mut lost = Vec::new();
    for (kind, key) in &acks {
        let present = match kind {
            'd' => keys.contains(key),
            _ => {
                let i: u64 = key
                    .rsplit('/')
                    .next()
                    .and_then(|i| i.parse().ok())
                    .ok_or_else(|| format!("malformed key {key}"))?;
                view.get(&table, key.as_bytes())
                    .map_err(|e| format!("kv get {key}: {e}"))?
                    .is_some_and(|v| v == super::writer::kv_value(i).as_slice())
            }
        };
        if !present {
            lost.push(format!("{kind} {key}"));
        }
    }
    Ok(Verified {
        acks: acks.len(),
        lost,
    })
}
