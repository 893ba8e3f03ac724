//! The writer child: writes until killed, logging each acknowledged write.
//!
//! Keys are `<cycle>/<i>`. Write `i` by `i % 4`: 0 creates the Datalog entity `:torture/key`
//! with its first `:torture/text` (a `:db/fulltext` attribute) and `:torture/version` 1;
//! 1 puts the key in the KV table `torture`; 2 moves an existing entity to its next version
//! (a card-one update of its text, or every fourth version a retraction); 3 writes the KV
//! search index (`search_model`). Up to [`IN_FLIGHT`] writes are outstanding so that group
//! commits batch several of them (the case where one batch's acknowledgements could be mixed
//! up).
//!
//! Ack lines: `d <key>` (created), `k <key>` (KV put), `t <key> <version>` (entity at that
//! version), `s <n>` (the n-th logged search write).

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use datalith::edn::{read_one, Edn};
use datalith::kv::{CommitHandle, Durability, KvError, KvOp, TableKind};
use datalith::search::{AnalyzerConfig, DocChange, SearchError};
use datalith::tx::{TxError, TxReport};
use datalith::{Database, DbOptions};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use super::search_model::{self as model, Change};

/// Writes outstanding at once.
pub const IN_FLIGHT: usize = 32;
/// The KV table the writer puts into.
pub const KV_TABLE: &str = "torture";
/// The schema the writer installs (at open, idempotent).
pub const SCHEMA: &str = "{:torture/key {:db/valueType :db.type/string :db/unique :db.unique/identity} :torture/cycle {:db/valueType :db.type/long} :torture/text {:db/valueType :db.type/string :db/fulltext true} :torture/version {:db/valueType :db.type/long}}";

/// The value the writer puts for write `i`: varied lengths, some on overflow pages, so that a
/// torn or misplaced value shows.
pub fn kv_value(i: u64) -> Vec<u8> {
    vec![(i % 251) as u8; 16 + (i as usize * 37) % 6000]
}

/// A write in flight and the ack line (kind, rest) it earns.
enum Pending {
    Datalog(char, String, CommitHandle<TxReport, TxError>),
    Kv(String, CommitHandle<(), KvError>),
    Search(usize, CommitHandle<(), SearchError>),
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
        Pending::Datalog(kind, what, h) => {
            h.wait().map_err(|e| format!("transact {what}: {e}"))?;
            log.ack(kind, &what)
        }
        Pending::Search(n, h) => {
            h.wait().map_err(|e| format!("search write {n}: {e}"))?;
            log.ack('s', &n.to_string())
        }
        Pending::Kv(key, h) => {
            h.wait().map_err(|e| format!("kv put {key}: {e}"))?;
            log.ack('k', &key)
        }
    }
}

fn transact(db: &Database, text: &str) -> CommitHandle<TxReport, TxError> {
    let tx = datalith::TxData::from_edn(&read_one(text).expect("tx EDN")).expect("tx data");
    db.transact_async(tx)
}

/// Each entity's current version, as the reopened database holds it.
fn versions(db: &Database) -> Result<HashMap<String, u64>, String> {
    let q = "[:find ?k ?n :where [?e :torture/key ?k] [?e :torture/version ?n]]";
    let rows = db
        .db()
        .map_err(|e| e.to_string())
        .and_then(|s| s.q(q, &[]).map_err(|e| e.to_string()))
        .map_err(|e| format!("read versions: {e}"))?;
    let (Edn::Set(rows) | Edn::Vector(rows)) = rows else {
        return Err(format!("versions: {rows}"));
    };
    rows.into_iter()
        .map(|r| match r {
            Edn::Vector(kn) => match kn.as_slice() {
                [Edn::String(k), Edn::Long(n)] => Ok((k.clone(), *n as u64)),
                _ => Err(format!("version row {kn:?}")),
            },
            other => Err(format!("version row {other}")),
        })
        .collect()
}

/// The EDN of moving entity `key` to `version`.
fn version_tx(key: &str, version: u64) -> String {
    match model::text(key, version) {
        Some(t) => format!(
            "[{{:torture/key \"{key}\" :torture/text \"{t}\" :torture/version {version}}}]"
        ),
        None => format!(
            "[[:db/retract [:torture/key \"{key}\"] :torture/text] [:db/add [:torture/key \"{key}\"] :torture/version {version}]]"
        ),
    }
}

/// Opens the search intent log after cutting it to the writes the index holds (the others
/// were never committed and never will be), returning it, how many it holds and the model.
fn search_log(
    dir: &Path,
    ix: &datalith::search::SearchIndex,
) -> Result<(File, usize, model::Model), String> {
    let intents = model::read_intents(dir)?;
    let (held, state) = model::resolve(ix, &intents, 0)?;
    let path = dir.join(model::INTENTS);
    let mut text = String::new();
    for w in &intents[..held] {
        text.push_str(&model::line(w));
        text.push('\n');
    }
    let name = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .map_err(name)?;
    file.set_len(text.len() as u64).map_err(name)?;
    file.seek(SeekFrom::End(0)).map_err(name)?;
    Ok((file, held, state))
}

/// Writes until killed (returns only on an error).
pub fn run(dir: &Path, ack_log: &Path, cycle: u64, durability: Durability) -> Result<bool, String> {
    let mut options = DbOptions::with_durability(durability);
    options.schema = Some(read_one(SCHEMA).expect("schema EDN"));
    let db = Database::open(dir, options).map_err(|e| format!("open: {e}"))?;
    let table = db
        .env()
        .table(KV_TABLE, TableKind::Plain)
        .map_err(|e| format!("table: {e}"))?;
    let ix = db
        .env()
        .search_index(model::INDEX, AnalyzerConfig::default())
        .map_err(|e| format!("search index: {e}"))?;
    let (mut intents, mut next_write, mut docs) = search_log(dir, &ix)?;
    // The next version of each document (a put always changes the document).
    let mut doc_version: HashMap<u64, u64> = docs.iter().map(|(id, v)| (*id, *v)).collect();
    for w in model::read_intents(dir)? {
        for c in w {
            if let Some(v) = c.version {
                let e = doc_version.entry(c.id).or_insert(0);
                *e = (*e).max(v);
            }
        }
    }
    let mut version = versions(&db)?;
    let mut keys: Vec<String> = version.keys().cloned().collect();
    keys.sort();
    let mut rng = StdRng::seed_from_u64(cycle);
    let mut log = AckLog::open(ack_log)?;
    let mut pending = VecDeque::new();
    for i in 0u64.. {
        let key = format!("{cycle}/{i}");
        let p = match i % 4 {
            1 => {
                let op = KvOp::put(&table, key.clone(), kv_value(i));
                Pending::Kv(key, db.env().transact_kv_async(vec![op]))
            }
            2 if !keys.is_empty() => {
                let key = keys[rng.random_range(0..keys.len())].clone();
                let v = version.get(&key).copied().unwrap_or(1) + 1;
                version.insert(key.clone(), v);
                let h = transact(&db, &version_tx(&key, v));
                Pending::Datalog('t', format!("{key} {v}"), h)
            }
            3 => {
                // 1 to 3 changes to distinct documents; a removal only of a present one.
                let mut ids: Vec<u64> = (0..rng.random_range(1..4))
                    .map(|_| rng.random_range(0..model::DOC_IDS))
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                let changes: Vec<Change> = ids
                    .into_iter()
                    .map(|id| {
                        if docs.contains_key(&id) && rng.random_range(0..4) == 0 {
                            Change { id, version: None }
                        } else {
                            let v = doc_version.entry(id).or_insert(0);
                            *v += 1;
                            Change {
                                id,
                                version: Some(*v),
                            }
                        }
                    })
                    .collect();
                model::apply(&mut docs, &changes);
                // Logged before it is submitted: a kill after the submission leaves the line.
                intents
                    .write_all(format!("{}\n", model::line(&changes)).as_bytes())
                    .map_err(|e| format!("search intents: {e}"))?;
                let doc_changes = changes
                    .iter()
                    .map(|c| match c.version {
                        Some(v) => DocChange::Put {
                            id: c.id,
                            text: model::doc_text(c.id, v),
                        },
                        None => DocChange::Remove { id: c.id },
                    })
                    .collect();
                next_write += 1;
                Pending::Search(next_write - 1, ix.write_async(doc_changes))
            }
            _ => {
                let t = model::text(&key, 1).expect("version 1 has a text");
                let text = format!(
                    "[{{:torture/key \"{key}\" :torture/cycle {cycle} :torture/text \"{t}\" :torture/version 1}}]"
                );
                version.insert(key.clone(), 1);
                keys.push(key.clone());
                Pending::Datalog('d', key, transact(&db, &text))
            }
        };
        pending.push_back(p);
        if pending.len() >= IN_FLIGHT {
            settle(pending.pop_front().expect("pending"), &mut log)?;
        }
    }
    unreachable!("the writer loops until killed")
}
