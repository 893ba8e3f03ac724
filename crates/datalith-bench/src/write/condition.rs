//! Conditions of workload W: what a store under test must do, and the list of them.
//!
//! A condition is one store in one mode (e.g. Datalith KV, async calls, durable). The runner,
//! metrics, CSV, summary and plots only see the [`Condition`] trait and [`ConditionSpec`], so
//! the Datalog conditions (`dl-sync`, `dl-async`, `datalevin-default`, `datalevin-async`) plug
//! in as another list in [`Family::Datalog`] with their own `open`.

use datalith::kv::Durability;
use std::path::Path;

use super::stores;
use crate::common::BenchError;

/// One entity of the workload: the key (an even integer) and its value (a UUID string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub key: u64,
    pub value: String,
}

/// Called exactly once per write call, when its data is durable (as durable as the condition
/// promises) or failed. Sync conditions call it before returning; async ones from whatever
/// thread completes the write. It must be quick.
pub type Done = Box<dyn FnOnce(Result<(), String>) + Send + 'static>;

/// A store under test, opened on its own directory.
pub trait Condition {
    /// Writes `records` in one call (one transaction). Calls `done` exactly once, even on
    /// failure; an `Err` return additionally tells the runner to stop.
    fn write_batch(&mut self, records: Vec<Record>, done: Done) -> Result<(), BenchError>;
    /// The value of `key`, if present, read through the store's query API (Datalog for a
    /// Datalog store, SQL for SQLite, `get` for a KV store): the mixed phase's level.
    fn read(&mut self, key: u64) -> Result<Option<String>, BenchError>;
    /// The value of `key` through the store's raw index access, for a store that has one
    /// beside its query API (Datalith Datalog: AVE then EAV); `None` for the others.
    fn read_raw(&mut self, _key: u64) -> Option<Result<Option<String>, BenchError>> {
        None
    }
    /// Number of records in the store.
    fn count(&mut self) -> Result<u64, BenchError>;
    /// Store-specific counters for the summary (e.g. Datalith's commit batching).
    fn counters(&self) -> Option<serde_json::Value> {
        None
    }
}

/// Which list a condition belongs to: `write --kv`, `write` or `write --remote`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Kv,
    Datalog,
    /// The Datalog conditions over loopback (`--remote`) beside their embedded ones.
    Remote,
}

impl Family {
    /// Directory name of the workload's outputs.
    pub fn out_name(self) -> &'static str {
        match self {
            Family::Kv => "write-kv",
            Family::Datalog => "write-dl",
            Family::Remote => "write-remote",
        }
    }
}

/// Which store a condition drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// Datalith's KV API (`transact_kv` or `transact_kv_with_callback`).
    DatalithKv(Durability),
    /// SQLite through rusqlite, `synchronous=FULL`; `wal` picks `journal_mode=WAL` over DELETE.
    Sqlite { wal: bool },
    /// LMDB through heed, one write transaction per call, no group commit.
    LmdbRaw { nosync: bool },
    /// RocksDB, the WAL synced on every write batch (cargo feature `rocksdb`).
    RocksDb,
    /// The real Datalevin KV (`transact-kv`, `transact-kv-async`) in its JVM harness.
    DatalevinKv,
    /// Datalith's Datalog API (`transact` or `transact_with_callback`), on a database that
    /// keeps AVE entries as the second field says (`dl-sync`, `dl-async`: the default, only
    /// for declared attributes, Datomic's choice, so `:v` has none; `dl-all-*`: every datom,
    /// Datalevin's choice and Datalith's default before 2026-12-08).
    DatalithDl(Durability, datalith::ValueIndex),
    /// The real Datalevin Datalog (`transact!`, `transact-async`) in its JVM harness.
    DatalevinDl,
    /// Datalith's Datalog through the real `datalith serve` on loopback and `datalith-client`
    /// (`Connection::transact`).
    DatalithRemote,
    /// Datalith's Datalog through the bare server (`common::bare`): the least any server could
    /// add, the floor under `DatalithRemote`.
    DatalithBare,
    /// Datalevin's server (prepared outside the repository, `$DATALEVIN_SERVER_DIR`) through its
    /// own client.
    DatalevinRemote,
}

/// Where a condition runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// In a child process of this binary.
    InProcess,
    /// In a peer harness of `bench/peers/`.
    PeerHarness,
    /// Cannot run in this build, and why.
    Unavailable(String),
}

/// A named condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionSpec {
    /// Label used in file names and the summary, e.g. `kv-async-durable`.
    pub name: String,
    pub store: Store,
    /// One call at a time (false), or up to [`crate::write::MAX_IN_FLIGHT`] calls in flight.
    pub asynchronous: bool,
    /// Durability label (`durable`, `nosync`, ...), as the summary prints it.
    pub durability: &'static str,
    /// A peer (not Datalith): a full run must not lack it.
    pub peer: bool,
}

impl ConditionSpec {
    fn new(name: String, store: Store, asynchronous: bool, durability: &'static str) -> Self {
        let peer = !matches!(
            store,
            Store::DatalithKv(_)
                | Store::DatalithDl(..)
                | Store::DatalithRemote
                | Store::DatalithBare
        );
        ConditionSpec {
            name,
            store,
            asynchronous,
            durability,
            peer,
        }
    }

    /// Where this condition can run in this build.
    pub fn runner(&self) -> Runner {
        match self.store {
            Store::DatalevinKv | Store::DatalevinDl | Store::DatalevinRemote => Runner::PeerHarness,
            Store::RocksDb if !cfg!(feature = "rocksdb") => Runner::Unavailable(
                "built without the `rocksdb` cargo feature (cargo run --release -p \
                 datalith-bench --features rocksdb -- ...)"
                    .into(),
            ),
            _ => Runner::InProcess,
        }
    }
}

/// Every condition of a family, in summary order.
pub fn all(family: Family) -> Vec<ConditionSpec> {
    match family {
        Family::Kv => kv_conditions(),
        Family::Datalog => datalog_conditions(),
        Family::Remote => remote_conditions(),
    }
}

/// `write --remote`: each synchronous durable Datalog condition embedded and over its
/// server; and Datalith's over the bare server, the floor under its real one.
fn remote_conditions() -> Vec<ConditionSpec> {
    vec![
        ConditionSpec::new(
            "dl-sync".into(),
            Store::DatalithDl(Durability::Durable, datalith::ValueIndex::default()),
            false,
            "durable",
        ),
        ConditionSpec::new("dl-remote".into(), Store::DatalithRemote, false, "durable"),
        ConditionSpec::new("dl-bare".into(), Store::DatalithBare, false, "durable"),
        ConditionSpec::new(
            "datalevin-default".into(),
            Store::DatalevinDl,
            false,
            "durable",
        ),
        ConditionSpec::new(
            "datalevin-remote".into(),
            Store::DatalevinRemote,
            false,
            "durable",
        ),
    ]
}

fn sqlite_conditions() -> [ConditionSpec; 2] {
    [
        ConditionSpec::new(
            "sqlite-default".into(),
            Store::Sqlite { wal: false },
            false,
            "durable",
        ),
        ConditionSpec::new(
            "sqlite-wal".into(),
            Store::Sqlite { wal: true },
            false,
            "durable",
        ),
    ]
}

fn datalog_conditions() -> Vec<ConditionSpec> {
    use datalith::ValueIndex;
    let durable = Durability::Durable;
    let mut v = vec![
        ConditionSpec::new(
            "dl-sync".into(),
            Store::DatalithDl(durable, ValueIndex::default()),
            false,
            "durable",
        ),
        ConditionSpec::new(
            "dl-async".into(),
            Store::DatalithDl(durable, ValueIndex::default()),
            true,
            "durable",
        ),
        ConditionSpec::new(
            "dl-all-sync".into(),
            Store::DatalithDl(durable, ValueIndex::All),
            false,
            "durable",
        ),
        ConditionSpec::new(
            "dl-all-async".into(),
            Store::DatalithDl(durable, ValueIndex::All),
            true,
            "durable",
        ),
    ];
    v.extend(sqlite_conditions());
    v.extend([
        ConditionSpec::new(
            "datalevin-default".into(),
            Store::DatalevinDl,
            false,
            "durable",
        ),
        ConditionSpec::new(
            "datalevin-async".into(),
            Store::DatalevinDl,
            true,
            "durable",
        ),
    ]);
    v
}

fn kv_conditions() -> Vec<ConditionSpec> {
    let mut v = Vec::new();
    for d in Durability::ALL {
        for (mode, asynchronous) in [("sync", false), ("async", true)] {
            v.push(ConditionSpec::new(
                format!("kv-{mode}-{}", d.label()),
                Store::DatalithKv(d),
                asynchronous,
                d.label(),
            ));
        }
    }
    v.extend(sqlite_conditions());
    v.extend([
        ConditionSpec::new(
            "lmdb-raw-durable".into(),
            Store::LmdbRaw { nosync: false },
            false,
            "durable",
        ),
        ConditionSpec::new(
            "lmdb-raw-nosync".into(),
            Store::LmdbRaw { nosync: true },
            false,
            "nosync",
        ),
        ConditionSpec::new("rocksdb".into(), Store::RocksDb, false, "durable"),
        ConditionSpec::new("datalevin-kv".into(), Store::DatalevinKv, false, "durable"),
        ConditionSpec::new(
            "datalevin-kv-async".into(),
            Store::DatalevinKv,
            true,
            "durable",
        ),
    ]);
    v
}

/// The condition called `name`.
pub fn find(name: &str) -> Result<ConditionSpec, BenchError> {
    [Family::Kv, Family::Datalog, Family::Remote]
        .into_iter()
        .flat_map(all)
        .find(|c| c.name == name)
        .ok_or_else(|| BenchError::Arg {
            arg: "--condition",
            message: format!("no condition named {name}"),
        })
}

/// Picks conditions by name: an exact name, or a prefix ending at a dash (`kv-async` selects
/// every `kv-async-*`). An empty selection means all.
pub fn select(family: Family, wanted: &[String]) -> Result<Vec<ConditionSpec>, BenchError> {
    let all = all(family);
    if wanted.is_empty() {
        return Ok(all);
    }
    let matches = |c: &ConditionSpec, w: &str| {
        c.name == w || c.name.strip_prefix(w).is_some_and(|r| r.starts_with('-'))
    };
    for w in wanted {
        if !all.iter().any(|c| matches(c, w)) {
            let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
            return Err(BenchError::Arg {
                arg: "--conditions",
                message: format!("{w} matches no condition; known: {}", names.join(", ")),
            });
        }
    }
    Ok(all
        .into_iter()
        .filter(|c| wanted.iter().any(|w| matches(c, w)))
        .collect())
}

/// Opens the store of an in-process condition on an empty directory `dir`.
pub fn open(spec: &ConditionSpec, dir: &Path) -> Result<Box<dyn Condition>, BenchError> {
    std::fs::create_dir_all(dir).map_err(BenchError::io(dir))?;
    stores::open(spec, dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_condition_names() {
        let names: Vec<String> = all(Family::Kv).into_iter().map(|c| c.name).collect();
        for expected in [
            "kv-sync-durable",
            "kv-async-durable",
            "kv-async-nometasync",
            "kv-sync-nosync",
            "kv-async-writemap-mapasync",
            "sqlite-default",
            "sqlite-wal",
            "lmdb-raw-durable",
            "lmdb-raw-nosync",
            "rocksdb",
            "datalevin-kv",
            "datalevin-kv-async",
        ] {
            assert!(names.iter().any(|n| n == expected), "{expected}");
        }
        assert_eq!(names.len(), 15);
    }

    #[test]
    fn selection_by_name_and_prefix() {
        let cases: &[(&[&str], usize)] = &[
            (&[], 15),
            (&["sqlite-wal"], 1),
            (&["kv-async"], 4),
            (&["kv"], 8),
            (&["kv-async-durable", "sqlite"], 3),
        ];
        for (wanted, n) in cases {
            let wanted: Vec<String> = wanted.iter().map(|s| s.to_string()).collect();
            assert_eq!(select(Family::Kv, &wanted).unwrap().len(), *n, "{wanted:?}");
        }
        assert!(select(Family::Kv, &["nope".into()]).is_err());
        assert!(select(Family::Kv, &["kv-as".into()]).is_err());
        assert_eq!(select(Family::Datalog, &["dl".into()]).unwrap().len(), 4);
        assert_eq!(
            select(Family::Datalog, &["dl-all".into()]).unwrap().len(),
            2
        );
        assert_eq!(
            select(Family::Datalog, &["dl-sync".into()]).unwrap().len(),
            1
        );
        assert_eq!(select(Family::Datalog, &[]).unwrap().len(), 8);
        assert!(!find("dl-all-sync").unwrap().peer);
        assert_eq!(select(Family::Remote, &[]).unwrap().len(), 5);
        assert_eq!(select(Family::Remote, &["dl".into()]).unwrap().len(), 3);
        assert!(!find("dl-bare").unwrap().peer);
        assert!(select(Family::Datalog, &["dl-remote".into()]).is_err());
        assert!(!find("dl-remote").unwrap().peer);
        assert!(find("datalevin-remote").unwrap().peer);
    }
}
