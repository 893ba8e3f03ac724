//! Verification after a kill: every write the ack log names is in the database, and the
//! full-text indexes answer as the data says.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use datalith::edn::Edn;
use datalith::kv::TableKind;
use datalith::search::AnalyzerConfig;
use datalith::{Database, DbOptions};

use super::search_model as model;

/// What a verification found.
pub struct Verified {
    /// Acknowledged writes in the log.
    pub acks: usize,
    /// Of those, by kind: `d`, `t`, `k`, `s`.
    pub by_kind: [usize; 4],
    /// Acknowledged writes missing from the database, or (KV) with another value, or (`t`)
    /// at an older version: the ack line.
    pub lost: Vec<String>,
    /// Answers that disagree with the data: a text that is not its version's, a `fulltext`
    /// query that does not find exactly the entities whose text holds its words, a search
    /// index that does not hold the documents of its writes, or fails its check.
    pub wrong: Vec<String>,
    /// Logged search writes the index holds beyond the last acknowledged one (committed, the
    /// writer killed before their acknowledgement).
    pub search_unacknowledged: usize,
}

const KINDS: [char; 4] = ['d', 't', 'k', 's'];

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
            Some((kind @ ("d" | "k" | "t" | "s"), key)) => {
                Ok((kind.chars().next().unwrap(), key.to_string()))
            }
            _ => Err(format!("malformed ack line {l:?}")),
        })
        .collect()
}

/// The rows of a two-column query as pairs (none before the attributes exist).
fn pairs(snapshot: &datalith::Db, q: &str) -> Vec<(Edn, Edn)> {
    match snapshot.q(q, &[]) {
        Ok(Edn::Set(rows) | Edn::Vector(rows)) => rows
            .into_iter()
            .filter_map(|r| match r {
                Edn::Vector(mut kv) if kv.len() == 2 => {
                    let v = kv.pop()?;
                    Some((kv.pop()?, v))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Reopens the database in `dir` (read-write, as a user after a crash) and looks up every
/// write `ack_log` names.
pub fn verify(dir: &Path, ack_log: &Path) -> Result<Verified, String> {
    let acks = acknowledged(ack_log)?;
    let db = Database::open(dir, DbOptions::default()).map_err(|e| format!("reopen: {e}"))?;
    let snapshot = db.db().map_err(|e| format!("snapshot: {e}"))?;
    let string = |e: Edn| match e {
        Edn::String(s) => Some(s),
        _ => None,
    };
    let version: HashMap<String, u64> = pairs(
        &snapshot,
        "[:find ?k ?n :where [?e :torture/key ?k] [?e :torture/version ?n]]",
    )
    .into_iter()
    .filter_map(|(k, n)| match n {
        Edn::Long(n) => Some((string(k)?, n as u64)),
        _ => None,
    })
    .collect();
    let text: HashMap<String, String> = pairs(
        &snapshot,
        "[:find ?k ?t :where [?e :torture/key ?k] [?e :torture/text ?t]]",
    )
    .into_iter()
    .filter_map(|(k, t)| Some((string(k)?, string(t)?)))
    .collect();
    let table = db
        .env()
        .table(super::writer::KV_TABLE, TableKind::Plain)
        .map_err(|e| format!("table: {e}"))?;
    let txn = db.env().read().map_err(|e| format!("read: {e}"))?;
    let view = txn.view();
    let mut lost = Vec::new();
    let mut by_kind = [0; 4];
    let mut search_acked = 0;
    for (kind, key) in &acks {
        by_kind[KINDS.iter().position(|k| k == kind).expect("a known kind")] += 1;
        let present = match kind {
            'd' => version.contains_key(key),
            't' => {
                let (key, v) = key
                    .split_once(' ')
                    .and_then(|(k, v)| Some((k, v.parse::<u64>().ok()?)))
                    .ok_or_else(|| format!("malformed ack t {key}"))?;
                version.get(key).is_some_and(|now| *now >= v)
            }
            's' => {
                let n: usize = key.parse().map_err(|_| format!("malformed ack s {key}"))?;
                search_acked = search_acked.max(n + 1);
                // Checked below, against the logged writes.
                true
            }
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
    drop(txn);

    // Each entity holds its version's text, and each query finds exactly the entities whose
    // text matches it.
    let mut wrong = Vec::new();
    for (key, v) in &version {
        let want = model::text(key, *v);
        if text.get(key) != want.as_ref() {
            wrong.push(format!(
                "entity {key} at version {v} holds text {:?}, not {want:?}",
                text.get(key)
            ));
        }
    }
    if !version.is_empty() {
        for (q, matches) in model::queries() {
            let query = format!(
                "[:find ?k ?v :where [(fulltext $ :torture/text \"{}\") [[?e ?v]]] [?e :torture/key ?k]]",
                q.replace('"', "\\\"")
            );
            let rows = pairs(&snapshot, &query);
            let mut found = HashSet::new();
            for (k, v) in rows {
                let (k, v) = (string(k), string(v));
                // A value that is not the entity's current text is never an answer.
                match k.filter(|k| text.get(k) == v.as_ref()) {
                    Some(k) => found.insert(k),
                    None => found.insert(format!("(not a current text: {v:?})")),
                };
            }
            let want: HashSet<String> = text
                .iter()
                .filter(|(_, t)| matches(&model::terms(t)))
                .map(|(k, _)| k.clone())
                .collect();
            if found != want {
                wrong.push(format!(
                    "fulltext {q:?}: finds {} entities, the texts hold {} (e.g. missing {:?}, extra {:?})",
                    found.len(),
                    want.len(),
                    want.difference(&found).next(),
                    found.difference(&want).next()
                ));
            }
        }
    }

    // The search index holds a prefix of the logged writes covering the acknowledged ones.
    let ix = db
        .env()
        .search_index(model::INDEX, AnalyzerConfig::default())
        .map_err(|e| format!("search index: {e}"))?;
    let intents = model::read_intents(dir)?;
    let mut search_unacknowledged = 0;
    match model::resolve(&ix, &intents, search_acked) {
        Ok((held, state)) => {
            search_unacknowledged = held - search_acked;
            wrong.extend(model::wrong_answers(&ix, &state)?);
        }
        Err(e) => lost.push(format!("s {}: {e}", search_acked.saturating_sub(1))),
    }
    Ok(Verified {
        acks: acks.len(),
        by_kind,
        lost,
        wrong,
        search_unacknowledged,
    })
}
