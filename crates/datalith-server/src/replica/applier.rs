//! The applier: one thread per replicated database that reads the topic from the offset after
//! the last one its files hold and applies each record, in offset order, as one transaction.
//! The records of one fetch are queued to the committer together, in order, so that it
//! commits many in one LMDB transaction (each still accepted or refused alone, against the
//! state its predecessors left), then their outcomes are taken in order.
//!
//! What makes every node reach the same datoms:
//! - the same start: a new database installs the log's two attributes with the instant of
//!   the epoch before anything else (`LOG_SCHEMA`), the same transaction on every node;
//! - the same inputs in the same order: a record's tx data as the client gave it, plus two
//!   datoms on the transaction entity, `:datalith.log/offset` and `:datalith.log/request`;
//!   its instant is the record's clock raised to the last transaction's
//!   (`TxClock::AtLeast`, decided in the committer against the state it commits on);
//! - the same pipeline: tempids, fresh ids, upserts, `:db/cas` and transaction functions
//!   resolve against the node's state, which is the same state.
//!
//! A record refused for what it says (its blame is the caller's: a uniqueness conflict, a
//! failed `:db/cas`, a duplicate of a request already applied) is refused on every node and
//! changes nothing. An error of the machine (disk full, a poisoned environment) is not the
//! record's: the applier tries that record again until it goes in, never skipping it. If a
//! record queued after it went in meanwhile, this node's order is no longer the log's: it
//! stops applying, says so (`:trouble`), and refuses writes until it is rebuilt from a copy of
//! another node. The offset is written in the transaction itself, so a node that stops at any
//! point starts again after the last record its files hold; refused records after it are
//! refused again.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use datalith::edn::Edn;
use datalith::error::Blame;
use datalith::kv::CommitHandle;
use datalith::{Database, TxClock, TxError, TxReport};

use super::kafka::Topic;
use super::record::LogRecord;

/// How long one fetch waits for a record before asking again. The broker answers a waiting
/// fetch only at this timeout (see `kafka::Topic`), so it is also how late this node may
/// learn of another node's records; the submitting node cuts its own wait short.
const FETCH_WAIT: Duration = Duration::from_millis(20);
/// The pause before trying again after the log or the machine failed.
const RETRY_PAUSE: Duration = Duration::from_millis(500);

/// What a submitter hears about its record.
pub type Outcome = Result<TxReport, datalith::Error>;

/// Where the applier is, for waiters and `stat`.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// The offset of the next record to apply.
    pub next_offset: i64,
    /// The database's basis t after the last applied record.
    pub basis_t: u64,
    /// The partition's end at the last fetch (the next record's offset).
    pub high_watermark: i64,
    /// When the last applied record was appended (the broker's clock, ms since the epoch).
    pub last_record_ms: Option<i64>,
    /// Records applied, refused (for what they say) and skipped (not records) since start.
    pub applied: u64,
    /// See `applied`.
    pub refused: u64,
    /// See `applied`.
    pub skipped: u64,
    /// The log's or the machine's error the applier is waiting out, if any.
    pub trouble: Option<String>,
    /// This node applied a record out of the log's order and stopped for good.
    pub diverged: bool,
    /// When this process first fetched records to apply.
    pub began: Option<Instant>,
    /// The first catch-up: records applied from `began` until the node first reached the
    /// log's end, and how long that took.
    pub caught_up: Option<(u64, Duration)>,
}

/// The state the applier thread and the request threads share.
#[derive(Default)]
pub struct Shared {
    progress: Mutex<Progress>,
    changed: Condvar,
    waiters: Mutex<HashMap<String, SyncSender<Outcome>>>,
    stop: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves whole values: go on with them.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// A copy of the progress.
    pub fn progress(&self) -> Progress {
        lock(&self.progress).clone()
    }

    /// Registers the submitter of `request`.
    pub fn expect(&self, request: &str, tell: SyncSender<Outcome>) {
        lock(&self.waiters).insert(request.to_string(), tell);
    }

    /// Forgets the submitter of `request` (it gave up).
    pub fn forget(&self, request: &str) {
        lock(&self.waiters).remove(request);
    }

    /// Waits until the database's basis is at least `t`, at most `patience`; the progress
    /// then.
    pub fn wait_for_basis(&self, t: u64, patience: Duration) -> Progress {
        let deadline = Instant::now() + patience;
        let mut p = lock(&self.progress);
        while p.basis_t < t {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.stop.load(Ordering::Relaxed) {
                break;
            }
            p = self
                .changed
                .wait_timeout(p, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        p.clone()
    }

    /// Asks the applier to stop after the record it is on.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.changed.notify_all();
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn update(&self, f: impl FnOnce(&mut Progress)) {
        f(&mut lock(&self.progress));
        self.changed.notify_all();
    }

    fn tell(&self, request: &str, outcome: Outcome) {
        if let Some(tell) = lock(&self.waiters).remove(request) {
            let _ = tell.try_send(outcome);
        }
    }
}

/// The schema every replicated database starts with, in its first transaction.
const LOG_SCHEMA: &str = r#"[{:db/ident :datalith.log/offset
   :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
  {:db/ident :datalith.log/request
   :db/valueType :db.type/string :db/cardinality :db.cardinality/one
   :db/unique :db.unique/value}
  [:db/add "datomic.tx" :db/txInstant #inst "1970-01-01T00:00:00.000-00:00"]]"#;

/// Where a database served with a log starts: the next offset and its basis t. A new
/// database gets the log's schema first; one that holds transactions but not that schema was
/// never a replica, and is refused.
pub fn prepare(database: &Database) -> Result<(i64, u64), String> {
    let db = database.db().map_err(|e| e.to_string())?;
    let scalar = |query: &str| -> Result<Option<i64>, String> {
        match db.q(query, &[]).map_err(|e| e.to_string())? {
            Edn::Long(n) => Ok(Some(n)),
            Edn::Inst(ms) => Ok(Some(ms)),
            _ => Ok(None),
        }
    };
    let has_schema = scalar("[:find ?e . :where [?e :db/ident :datalith.log/offset]]")?.is_some();
    let any_tx = scalar("[:find ?tx . :where [?tx :db/txInstant]]")?.is_some();
    if !has_schema {
        if any_tx {
            return Err(
                "this database has transactions of its own and was never served with a log: \
                 a database served with --log starts empty (or from a copy of a node's \
                 files), so that every node holds the same datoms"
                    .to_string(),
            );
        }
        database
            .transact(LOG_SCHEMA)
            .map_err(|e| format!("installing the log's schema: {e}"))?;
        return prepare(database);
    }
    let basis = db.basis_t().map_err(|e| e.to_string())?;
    let next =
        scalar("[:find (max ?o) . :where [_ :datalith.log/offset ?o]]")?.map_or(0, |o| o + 1);
    Ok((next, basis))
}

/// The transaction a record becomes on every node: its tx data (moved, not copied) and the
/// two datoms on the transaction entity.
fn transaction(tx_data: Edn, request: &str, offset: i64) -> Edn {
    let mut forms = match tx_data {
        Edn::Vector(forms) | Edn::List(forms) => forms,
        _ => Vec::new(),
    };
    let current = || Edn::String("datomic.tx".into());
    forms.push(Edn::Vector(vec![
        Edn::kw(":db/add"),
        current(),
        Edn::kw(":datalith.log/offset"),
        Edn::Long(offset),
    ]));
    forms.push(Edn::Vector(vec![
        Edn::kw(":db/add"),
        current(),
        Edn::kw(":datalith.log/request"),
        Edn::String(request.to_string()),
    ]));
    Edn::Vector(forms)
}

/// A record on its way through the committer.
enum InFlight {
    /// Queued: its request id, the broker's timestamp and the committer's handle.
    Queued(i64, String, i64, CommitHandle<TxReport, TxError>),
    /// Not a Datalith record (the reason already logged).
    Skipped(i64),
}

/// What taking the outcomes of queued records came to.
#[derive(PartialEq, Eq)]
enum Settled {
    /// Every outcome taken was the record's own (applied or refused).
    Fine,
    /// The machine failed a record: fetch again from it after a pause.
    Retry,
    /// A record went in after one before it failed: this node stops for good.
    Diverged,
}

/// The applier's state between fetches.
struct Applier {
    database: Database,
    topic: Arc<Topic>,
    shared: Arc<Shared>,
    /// Records queued to the committer whose outcomes are not taken yet, in offset order.
    queue: VecDeque<InFlight>,
    /// The offset of the next record to fetch: past every queued one.
    fetch_at: i64,
}

/// Reads and applies records until asked to stop.
///
/// While the log holds records past those fetched, a fetch's records stay queued in the
/// committer while the next fetch is on its way and being decoded, so the committer's thread
/// and this one work at once; at the log's end every outcome is taken at once, since
/// submitters wait on them.
pub fn run(database: Database, topic: Arc<Topic>, shared: Arc<Shared>) {
    let fetch_at = shared.progress().next_offset;
    let mut applier = Applier {
        database,
        topic,
        shared,
        queue: VecDeque::new(),
        fetch_at,
    };
    while !applier.shared.stopping() {
        // Records queued means the log had more: ask for them without waiting.
        let wait = if applier.queue.is_empty() {
            FETCH_WAIT
        } else {
            Duration::ZERO
        };
        let (records, high) = match applier.topic.fetch(applier.fetch_at, wait) {
            Ok(x) => x,
            Err(e) => {
                if applier.settle(applier.queue.len()) == Settled::Diverged {
                    return;
                }
                applier
                    .shared
                    .update(|p| p.trouble = Some(e.message.clone()));
                std::thread::sleep(RETRY_PAUSE);
                continue;
            }
        };
        if let Some(high) = high {
            applier.shared.update(|p| p.high_watermark = high);
        }
        if !records.is_empty() {
            applier.shared.update(|p| {
                p.began.get_or_insert_with(Instant::now);
            });
        }
        let earlier = applier.queue.len();
        let whole = applier.queue_records(records);
        let more = whole && high.is_some_and(|h| applier.fetch_at < h);
        let count = if more { earlier } else { applier.queue.len() };
        match applier.settle(count) {
            Settled::Diverged => return,
            Settled::Retry => std::thread::sleep(RETRY_PAUSE),
            Settled::Fine if !whole => std::thread::sleep(RETRY_PAUSE),
            Settled::Fine => {}
        }
        applier.shared.update(|p| {
            if let (None, Some(began)) = (p.caught_up, p.began) {
                if p.next_offset >= p.high_watermark {
                    p.caught_up = Some((p.applied + p.refused, began.elapsed()));
                }
            }
        });
    }
    // Asked to stop: the queued records' submitters still hear.
    applier.settle(applier.queue.len());
}

impl Applier {
    /// Decodes fetched records and queues them to the committer, in order. False when the
    /// log skips an offset (the rest are dropped: no node can follow such a log).
    fn queue_records(&mut self, records: Vec<super::kafka::Fetched>) -> bool {
        for fetched in records {
            let expected = self.fetch_at;
            if fetched.offset != expected {
                self.shared.update(|p| {
                    p.trouble = Some(format!(
                        "the log jumps from offset {expected} to {}: records were deleted \
                         (its retention must keep every record; see the docs)",
                        fetched.offset
                    ))
                });
                return false;
            }
            self.fetch_at = expected + 1;
            match LogRecord::decode(&fetched.value) {
                Ok(record) => {
                    let tx = transaction(record.tx_data, &record.request, fetched.offset);
                    let handle = self
                        .database
                        .transact_async_clocked(tx, TxClock::AtLeast(record.instant));
                    self.queue.push_back(InFlight::Queued(
                        fetched.offset,
                        record.request,
                        fetched.timestamp_ms,
                        handle,
                    ));
                }
                Err(why) => {
                    crate::run::log(&format!(
                        "{}: offset {}: skipped, not a Datalith record: {}",
                        self.topic.name, fetched.offset, why.0
                    ));
                    self.queue.push_back(InFlight::Skipped(fetched.offset));
                }
            }
        }
        true
    }

    /// Takes the outcomes of the first `count` queued records, in order: records the
    /// progress and tells each submitter.
    fn settle(&mut self, count: usize) -> Settled {
        for _ in 0..count {
            let Some(item) = self.queue.pop_front() else {
                break;
            };
            let (offset, request, timestamp, handle) = match item {
                InFlight::Skipped(offset) => {
                    self.shared.update(|p| {
                        p.next_offset = offset + 1;
                        p.skipped += 1;
                    });
                    continue;
                }
                InFlight::Queued(o, r, ts, h) => (o, r, ts, h),
            };
            let outcome = handle.wait().map_err(datalith::Error::from);
            if let Err(e) = &outcome {
                if e.category().blame != Blame::Caller {
                    return self.machine_failed(offset, e);
                }
            }
            match &outcome {
                Ok(report) => {
                    let t = report.tx;
                    self.shared.update(|p| {
                        p.next_offset = offset + 1;
                        p.basis_t = t;
                        p.applied += 1;
                        p.last_record_ms = Some(timestamp);
                        p.trouble = None;
                    });
                }
                Err(_) => self.shared.update(|p| {
                    p.next_offset = offset + 1;
                    p.refused += 1;
                    p.last_record_ms = Some(timestamp);
                    p.trouble = None;
                }),
            }
            self.shared.tell(&request, outcome);
        }
        Settled::Fine
    }

    /// The record at `offset` failed for the machine's fault, not its own: it must go in
    /// before anything after it, so every record queued behind it must have failed too.
    fn machine_failed(&mut self, offset: i64, e: &datalith::Error) -> Settled {
        let overtaken = self.queue.drain(..).any(|later| match later {
            InFlight::Queued(_, _, _, h) => h.wait().is_ok(),
            InFlight::Skipped(_) => false,
        });
        if overtaken {
            self.shared.update(|p| {
                p.diverged = true;
                p.trouble = Some(format!(
                    "offset {offset} failed ({e}) while a record after it went in: this node \
                     no longer follows the log's order; rebuild it from a copy of another \
                     node's files"
                ))
            });
            return Settled::Diverged;
        }
        self.shared.update(|p| p.trouble = Some(e.to_string()));
        self.fetch_at = offset;
        Settled::Retry
    }
}

/// Seeds the progress before the thread starts.
pub fn start_at(shared: &Shared, next_offset: i64, basis_t: u64) {
    shared.update(|p| {
        p.next_offset = next_offset;
        p.basis_t = basis_t;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use datalith::edn::read_one;

    #[test]
    fn the_transaction_a_record_becomes() {
        let table: &[(&str, &str)] = &[
            (
                r#"[[:db/add "a" :name "Ann"]]"#,
                r#"[[:db/add "a" :name "Ann"] [:db/add "datomic.tx" :datalith.log/offset 7] [:db/add "datomic.tx" :datalith.log/request "n/1"]]"#,
            ),
            (
                r#"[{:name "Bo"} [:db/add "datomic.tx" :db/txInstant #inst "2020-01-01"]]"#,
                r#"[{:name "Bo"} [:db/add "datomic.tx" :db/txInstant #inst "2020-01-01"] [:db/add "datomic.tx" :datalith.log/offset 7] [:db/add "datomic.tx" :datalith.log/request "n/1"]]"#,
            ),
        ];
        for (data, want) in table {
            let record = LogRecord {
                request: "n/1".into(),
                instant: 1_000,
                tx_data: read_one(data).unwrap(),
            };
            assert_eq!(
                transaction(record.tx_data, &record.request, 7),
                read_one(want).unwrap(),
                "{data}"
            );
        }
    }

    /// A node catching up queues many records at once, each checking its request id against
    /// the uniqueness of `:datalith.log/request` while the ids before it wait for the LMDB
    /// writer. Those checks must meet none of them: one that did made the committer write
    /// its large batches into LMDB itself (`CommitCounters::direct_batches`), on its own
    /// thread, which halved a long catch-up's rate (`scale/RESULTS.md`, 2026-12-06).
    #[test]
    fn records_queued_at_once_leave_every_batch_to_the_lmdb_writer() {
        let dir = tempfile::tempdir().unwrap();
        let database = Database::open(dir.path(), datalith::DbOptions::default()).unwrap();
        prepare(&database).unwrap();
        database
            .transact(
                r#"[{:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one
                     :db/unique :db.unique/identity}
                    {:db/ident :v :db/valueType :db.type/string
                     :db/cardinality :db.cardinality/one}]"#,
            )
            .unwrap();
        let node = "4194303-18ee8a3c5d2e1f00";
        let records = 200;
        let handles: Vec<_> = (0..records)
            .map(|i| {
                let maps: Vec<String> = (0..100)
                    .map(|j| format!(r#"{{:k {} :v "value-{i}-{j}"}}"#, i * 100 + j))
                    .collect();
                let data = read_one(&format!("[{}]", maps.join(" "))).unwrap();
                let request = super::super::request_id(node, i as u64);
                let tx = transaction(data, &request, i as i64);
                database.transact_async_clocked(tx, TxClock::AtLeast(1_000))
            })
            .collect();
        for h in handles {
            h.wait().unwrap();
        }
        let c = database.env().commit_counters();
        assert!(c.largest_batch > 10, "{c:?}");
        assert_eq!(c.direct_batches, 0, "{c:?}");
    }
}
