//! The history of workload H: `entities` items, each updated `updates` times, in rounds (each
//! round updates every item once, `batch` items a transaction, items in id order), generated
//! from a seed and written to one JSON-lines file every peer loads:
//!
//! - line 1, the spec: sizes, the schema and query texts ([`super::rows`]), the
//!   checkpoints, the entity of `entity-history` and the ids of the lookup rows;
//! - then one line per transaction, `{"i":1,"instant":1577836801000,"items":[[1,523],...]}`:
//!   its number (1-based), its `:db/txInstant` (ms; one second apart, from 2020-01-01, the
//!   schema transaction at 2020-01-01 itself) and its `[id value]` pairs.
//!
//! Values are longs below [`VALUE_RANGE`] drawn from SplitMix64(seed); an update never
//! repeats the item's value (a repeated value would be no datom in Datomic), so every update
//! is one retraction and one assertion. The expected answer of every row (a count and a sum
//! of values) is computed here from the same transactions, and every peer must give it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::rows::{self, Basis, Kind, Query, Row};
use crate::common::BenchError;
use datalith_testdata::SplitMix64;

/// Values are in `0..VALUE_RANGE`.
pub const VALUE_RANGE: u64 = 1_000_000;
/// 2020-01-01T00:00:00Z in ms: the schema transaction's instant; transaction `i` is `i`
/// seconds later.
pub const BASE_INSTANT_MS: i64 = 1_577_836_800_000;
/// Items the lookup rows ask for (fewer when there are fewer items).
pub const LOOKUP_IDS: u64 = 100;

/// One checkpoint: the as-of rows of `percent` read the database after `after` data
/// transactions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub percent: u8,
    pub after: u64,
}

/// The first line of the data file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    pub workload: String,
    pub entities: u64,
    pub updates: u64,
    pub batch: u64,
    pub seed: u64,
    /// Data transactions (lines after this one).
    pub transactions: u64,
    /// The schema transaction (EDN) and its instant.
    pub schema: String,
    pub schema_instant: i64,
    pub checkpoints: Vec<Checkpoint>,
    /// The `:item/id` of the entity whose history `entity-history` reads.
    pub history_id: i64,
    /// The `:item/id`s of the lookup rows.
    pub lookup_ids: Vec<i64>,
    /// Query texts by name: agg, lookup, entity-history, tx-data-q.
    pub queries: BTreeMap<String, String>,
}

impl Spec {
    /// The data transactions after which the as-of rows of `percent` read.
    pub fn after(&self, percent: u8) -> Option<u64> {
        self.checkpoints
            .iter()
            .find(|c| c.percent == percent)
            .map(|c| c.after)
    }
}

/// One data transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tx {
    /// 1-based.
    pub i: u64,
    pub instant: i64,
    /// `(:item/id, :item/value)` pairs.
    pub items: Vec<(i64, i64)>,
}

/// The sizes of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub entities: u64,
    pub updates: u64,
    pub batch: u64,
}

/// The spec and transactions of `size` from `seed`.
pub fn generate(size: Size, seed: u64) -> (Spec, Vec<Tx>) {
    let Size {
        entities,
        updates,
        batch,
    } = size;
    let mut rng = SplitMix64::new(seed);
    let mut current: Vec<Option<i64>> = vec![None; entities as usize + 1];
    let mut txs = Vec::new();
    for _round in 0..updates {
        let mut id = 1;
        while id <= entities {
            let end = (id + batch).min(entities + 1);
            let mut items = Vec::with_capacity((end - id) as usize);
            for e in id..end {
                let mut v = rng.below(VALUE_RANGE) as i64;
                if current[e as usize] == Some(v) {
                    v = (v + 1) % VALUE_RANGE as i64;
                }
                current[e as usize] = Some(v);
                items.push((e as i64, v));
            }
            let i = txs.len() as u64 + 1;
            txs.push(Tx {
                i,
                instant: BASE_INSTANT_MS + 1000 * i as i64,
                items,
            });
            id = end;
        }
    }
    let t = txs.len() as u64;
    let checkpoints = rows::CHECKPOINTS
        .iter()
        .map(|&percent| Checkpoint {
            percent,
            after: ((t * percent as u64 + 50) / 100).max(1),
        })
        .collect();
    let n_lookup = LOOKUP_IDS.min(entities).max(1);
    let lookup_ids = (0..n_lookup)
        .map(|k| (1 + k * entities / n_lookup) as i64)
        .collect();
    let queries = [
        ("agg", rows::AGG),
        ("lookup", rows::LOOKUP),
        ("entity-history", rows::ENTITY_HISTORY),
        ("tx-data-q", rows::TX_DATA_Q),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let spec = Spec {
        workload: "history".into(),
        entities,
        updates,
        batch,
        seed,
        transactions: t,
        schema: rows::SCHEMA.into(),
        schema_instant: BASE_INSTANT_MS,
        checkpoints,
        history_id: (entities / 2 + 1) as i64,
        lookup_ids,
        queries,
    };
    (spec, txs)
}

/// Writes the spec line and one line per transaction.
pub fn write(path: &Path, spec: &Spec, txs: &[Tx]) -> Result<(), BenchError> {
    let file = std::fs::File::create(path).map_err(BenchError::io(path))?;
    let mut w = BufWriter::new(file);
    serde_json::to_writer(&mut w, spec)?;
    w.write_all(b"\n").map_err(BenchError::io(path))?;
    for tx in txs {
        serde_json::to_writer(&mut w, tx)?;
        w.write_all(b"\n").map_err(BenchError::io(path))?;
    }
    w.flush().map_err(BenchError::io(path))
}

/// Reads the file back (Datalith loads the same file as the Datomic harness).
pub fn read(path: &Path) -> Result<(Spec, Vec<Tx>), BenchError> {
    let file = std::fs::File::open(path).map_err(BenchError::io(path))?;
    let mut lines = std::io::BufReader::new(file).lines();
    let bad = |message: &str| BenchError::Store {
        store: path.display().to_string(),
        op: "read",
        message: message.to_string(),
    };
    let first = lines
        .next()
        .ok_or_else(|| bad("empty file"))?
        .map_err(BenchError::io(path))?;
    let spec: Spec = serde_json::from_str(&first)?;
    let mut txs = Vec::with_capacity(spec.transactions as usize);
    for line in lines {
        let line = line.map_err(BenchError::io(path))?;
        if !line.trim().is_empty() {
            txs.push(serde_json::from_str(&line)?);
        }
    }
    if txs.len() as u64 != spec.transactions {
        return Err(bad(&format!(
            "{} transactions, the spec says {}",
            txs.len(),
            spec.transactions
        )));
    }
    Ok((spec, txs))
}

/// What a row must answer: a count and a sum of values (see each row in `README`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Answer {
    pub count: u64,
    pub checksum: i64,
}

/// The answer of `row` on this history: the state after the checkpoint's transactions for the
/// query rows; the entity's every event for `entity-history`; every `:item/value` datom of
/// the data transactions (assertions and retractions) for the log rows.
pub fn expected(spec: &Spec, txs: &[Tx], row: &Row) -> Option<Answer> {
    match row.kind {
        Kind::Query(basis, q) => {
            let after = match basis {
                Basis::Current => spec.transactions,
                Basis::AsOf(p) => spec.after(p)?,
            };
            let mut state: Vec<Option<i64>> = vec![None; spec.entities as usize + 1];
            for tx in txs.iter().take(after as usize) {
                for &(id, v) in &tx.items {
                    state[id as usize] = Some(v);
                }
            }
            let values: Vec<i64> = match q {
                Query::Agg => state.iter().flatten().copied().collect(),
                Query::Lookup => spec
                    .lookup_ids
                    .iter()
                    .filter_map(|&id| state.get(id as usize).copied().flatten())
                    .collect(),
            };
            Some(Answer {
                count: values.len() as u64,
                checksum: values.iter().sum(),
            })
        }
        Kind::EntityHistory => {
            let (mut count, mut checksum, mut last) = (0, 0, None);
            for tx in txs {
                for &(id, v) in &tx.items {
                    if id == spec.history_id {
                        if let Some(old) = last {
                            count += 1;
                            checksum += old;
                        }
                        count += 1;
                        checksum += v;
                        last = Some(v);
                    }
                }
            }
            Some(Answer { count, checksum })
        }
        Kind::TxRange | Kind::TxDataQ => {
            let mut seen = vec![false; spec.entities as usize + 1];
            let mut state = vec![0i64; spec.entities as usize + 1];
            let (mut count, mut checksum) = (0, 0);
            for tx in txs {
                for &(id, v) in &tx.items {
                    let i = id as usize;
                    if seen[i] {
                        count += 1;
                        checksum += state[i];
                    }
                    count += 1;
                    checksum += v;
                    seen[i] = true;
                    state[i] = v;
                }
            }
            Some(Answer { count, checksum })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Size = Size {
        entities: 10,
        updates: 4,
        batch: 3,
    };

    #[test]
    fn rounds_batches_and_no_repeated_value() {
        let (spec, txs) = generate(SMALL, 7);
        // 4 rounds of 10 items in transactions of 3, 3, 3, 1.
        assert_eq!(spec.transactions, 16);
        assert_eq!(txs.len(), 16);
        assert_eq!(txs[3].items.len(), 1);
        assert_eq!(txs[4].items[0].0, 1);
        let mut last = [None; 11];
        for (k, tx) in txs.iter().enumerate() {
            assert_eq!(tx.i, k as u64 + 1);
            assert_eq!(tx.instant, BASE_INSTANT_MS + 1000 * (k as i64 + 1));
            for &(id, v) in &tx.items {
                assert!((0..VALUE_RANGE as i64).contains(&v));
                assert_ne!(last[id as usize], Some(v), "an update repeats a value");
                last[id as usize] = Some(v);
            }
        }
        assert_eq!(generate(SMALL, 7), (spec.clone(), txs.clone()));
        assert_ne!(generate(SMALL, 8).1, txs);
        assert_eq!(
            spec.checkpoints,
            [(25, 4), (50, 8), (75, 12)]
                .map(|(percent, after)| Checkpoint { percent, after })
                .to_vec()
        );
        assert_eq!(spec.lookup_ids, (1..=10).collect::<Vec<i64>>());
        assert_eq!(spec.history_id, 6);
    }

    #[test]
    fn expected_answers() {
        let (spec, txs) = generate(SMALL, 7);
        let row = |n: &str| rows::by_name(n).unwrap();
        let last = |upto: usize, id: i64| {
            txs[..upto]
                .iter()
                .flat_map(|t| &t.items)
                .rfind(|(i, _)| *i == id)
                .map(|(_, v)| *v)
        };
        let sum = |upto: usize| (1..=10).filter_map(|id| last(upto, id)).sum::<i64>();
        let cur = expected(&spec, &txs, &row("current-agg")).unwrap();
        assert_eq!((cur.count, cur.checksum), (10, sum(16)));
        // After 4 transactions every item exists once.
        let a25 = expected(&spec, &txs, &row("asof25-agg")).unwrap();
        assert_eq!((a25.count, a25.checksum), (10, sum(4)));
        let l50 = expected(&spec, &txs, &row("asof50-lookup")).unwrap();
        assert_eq!((l50.count, l50.checksum), (10, sum(8)));
        // 4 versions: 4 assertions and 3 retractions.
        let h = expected(&spec, &txs, &row("entity-history")).unwrap();
        let vs: Vec<i64> = txs
            .iter()
            .flat_map(|t| &t.items)
            .filter(|(i, _)| *i == 6)
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(h.count, 7);
        assert_eq!(h.checksum, vs.iter().sum::<i64>() * 2 - vs[3]);
        // 40 assertions, 30 retractions; the sum telescopes to twice all values less the last.
        let log = expected(&spec, &txs, &row("tx-range")).unwrap();
        let all: i64 = txs.iter().flat_map(|t| &t.items).map(|(_, v)| *v).sum();
        assert_eq!((log.count, log.checksum), (70, 2 * all - sum(16)));
        assert_eq!(expected(&spec, &txs, &row("tx-data-q")), Some(log));
    }

    #[test]
    fn file_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let (spec, txs) = generate(SMALL, 3);
        write(&path, &spec, &txs).unwrap();
        assert_eq!(read(&path).unwrap(), (spec, txs));
        let text = std::fs::read_to_string(&path).unwrap();
        let second = text.lines().nth(1).unwrap();
        assert!(second.starts_with("{\"i\":1,\"instant\":1577836801000,\"items\":[["));
    }
}
