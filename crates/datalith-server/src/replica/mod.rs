//! A database whose transaction log is a Kafka topic (`datalith serve DIR --log
//! kafka://BROKERS/TOPIC`): any number of nodes serve the same database, each from its own
//! files, which are a view of the topic.
//!
//! - A transaction is appended to the topic's one partition (`acks=all`); its offset is its
//!   place in the database's order. It is acknowledged when the log has it *and* this node
//!   has applied it, with the report (tempids, tx-data, basis t) or the refusal every node
//!   reaches.
//! - Every node applies every record, in order, on its applier thread (`applier`); reads
//!   answer from the node's files, and a read that names a basis t this node has not reached
//!   waits for it (read-your-writes across nodes).
//! - The node's files keep their own write-ahead log; a node that stops, however it stops,
//!   recovers them and starts again from the offset they record.
//!
//! | module | what |
//! |---|---|
//! | `url` | the `--log` address |
//! | `record` | a transaction as the topic carries it |
//! | `kafka` | the topic, through rskafka |
//! | `nodelay` | Nagle's algorithm off on the connections to the brokers |
//! | `applier` | the thread that applies the topic to the files, and what waits on it |

mod applier;
mod kafka;
mod nodelay;
mod record;
mod url;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use datalith::edn::Edn;
use datalith::{Database, TxReport};
use tokio::runtime::Handle;

pub use url::LogUrl;

use crate::error::{codes, Result, ServerError};
use applier::Shared;
use kafka::{now_ms, Topic};
use record::LogRecord;

/// How long a transaction's submitter waits for its own node to apply it, once the log has
/// it; the applier is behind by that much only when it is catching up or in trouble.
const APPLY_PATIENCE: Duration = Duration::from_secs(60);

/// One replicated database's link to its log.
pub struct Replica {
    topic: Arc<Topic>,
    shared: Arc<Shared>,
    applier: Mutex<Option<JoinHandle<()>>>,
    /// Names this process's submissions: pid and start time, unique across restarts.
    node: String,
    submitted: AtomicU64,
    /// The largest basis t this node has answered a submitter with (its reads of the applied
    /// value wait for the data file to reach it: `Source::latest`).
    acknowledged: AtomicU64,
}

/// The id of this node's `n`th submission: `n` as 12 hex digits, then the node's name.
///
/// Every node checks a record's id against `:datalith.log/request`'s uniqueness, a read of
/// AVE while the ids of the records before it may still wait for the LMDB writer. The
/// committer tells such a read from one that may meet a waiting write by the keys' first
/// bytes, and by runs of ascending keys (`kv::pending`): with the counter first, in fixed
/// width, a node's ids ascend from their first bytes on, so checking a new id meets none of
/// the waiting ones. The earlier form, `node/n`, put the counter at the end and out of order
/// (`/10` before `/9`); while the committer kept 32 bytes of a key, every check met the
/// waiting ids, which made it write each large batch into LMDB itself (W batch-100 records, a
/// node catching up on 30,000: 1,304 transactions a second; see `scale/RESULTS.md`).
fn request_id(node: &str, n: u64) -> String {
    format!("{n:012x}.{node}")
}

impl Replica {
    /// Connects `database` to its log and starts applying the log from where the files
    /// stand. Blocks (call it off the runtime's threads).
    pub fn start(database: &Database, url: &LogUrl, handle: &Handle) -> Result<Replica> {
        let (next, basis) = applier::prepare(database).map_err(|e| {
            ServerError::invalid(format!("{}: {e}", database.env().path().display()))
        })?;
        let topic = Arc::new(Topic::connect(url, handle)?);
        let shared = Arc::new(Shared::default());
        applier::start_at(&shared, next, basis);
        let thread = {
            let (database, topic, shared) = (database.clone(), topic.clone(), shared.clone());
            std::thread::Builder::new()
                .name("datalith-log-apply".into())
                .spawn(move || applier::run(database, topic, shared))?
        };
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Ok(Replica {
            topic,
            shared,
            applier: Mutex::new(Some(thread)),
            node: format!("{}-{started:x}", std::process::id()),
            submitted: AtomicU64::new(0),
            acknowledged: AtomicU64::new(0),
        })
    }

    /// Appends `tx_data` to the log and waits for this node to apply it: its report, or the
    /// refusal every node reaches.
    pub fn transact(&self, tx_data: &Edn) -> Result<TxReport> {
        if tx_data.as_seq().is_none() {
            return Err(ServerError::invalid(
                ":tx-data must be a vector (or list) of forms",
            ));
        }
        if self.shared.progress().diverged {
            return Err(ServerError::new(
                codes::NOT_APPLIED_YET,
                "this node stopped following the log (see stat's :trouble): send the \
                 transaction to another node",
            ));
        }
        let request = request_id(&self.node, self.submitted.fetch_add(1, Ordering::Relaxed));
        let (tell, told) = std::sync::mpsc::sync_channel(1);
        self.shared.expect(&request, tell);
        let record = LogRecord::encode(&request, now_ms(), tx_data);
        let offset = match self.topic.append(record) {
            Ok(offset) => {
                self.topic.wake();
                offset
            }
            Err(e) => {
                self.shared.forget(&request);
                return Err(e);
            }
        };
        match told.recv_timeout(APPLY_PATIENCE) {
            Ok(outcome) => {
                let report = outcome.map_err(ServerError::from)?;
                self.acknowledged
                    .fetch_max(report.basis_t_after(), Ordering::AcqRel);
                Ok(report)
            }
            Err(_) => {
                self.shared.forget(&request);
                let p = self.shared.progress();
                Err(ServerError::new(
                    codes::NOT_APPLIED_YET,
                    format!(
                        "the transaction is in the log at offset {offset}, but this node has \
                         not applied it within {} s (it is at offset {}{}): every node will \
                         apply it; read it back later",
                        APPLY_PATIENCE.as_secs(),
                        p.next_offset,
                        p.trouble
                            .map(|t| format!(", waiting out: {t}"))
                            .unwrap_or_default()
                    ),
                )
                .with("offset", Edn::Long(offset)))
            }
        }
    }

    /// The largest basis t this node has acknowledged a transaction with.
    pub fn acknowledged_basis(&self) -> u64 {
        self.acknowledged.load(Ordering::Acquire)
    }

    /// Waits until this node's files hold basis `t`, at most `patience`; false if they do not.
    pub fn wait_for_basis(&self, t: u64, patience: Duration) -> bool {
        self.shared.wait_for_basis(t, patience).basis_t >= t
    }

    /// The log's part of `stat`: where this node is and how far behind.
    pub fn stat(&self) -> Edn {
        let p = self.shared.progress();
        let n = |x: i64| Edn::Long(x);
        let lag_tx = (p.high_watermark - p.next_offset).max(0);
        let lag_ms = match (lag_tx, p.last_record_ms) {
            (0, _) => 0,
            (_, Some(ms)) => (now_ms() - ms).max(0),
            (_, None) => -1,
        };
        let mut m = vec![
            (Edn::kw(":log"), Edn::String(self.topic.name.clone())),
            (Edn::kw(":next-offset"), n(p.next_offset)),
            (Edn::kw(":high-watermark"), n(p.high_watermark)),
            (Edn::kw(":lag-tx"), n(lag_tx)),
            (Edn::kw(":lag-ms"), n(lag_ms)),
            (Edn::kw(":applied"), n(p.applied as i64)),
            (Edn::kw(":refused"), n(p.refused as i64)),
            (Edn::kw(":skipped"), n(p.skipped as i64)),
        ];
        if let Some(t) = p.trouble {
            m.push((Edn::kw(":trouble"), Edn::String(t)));
        }
        if let Some((records, took)) = p.caught_up {
            m.push((
                Edn::kw(":catch-up"),
                Edn::Map(vec![
                    (Edn::kw(":records"), n(records as i64)),
                    (Edn::kw(":ms"), n(took.as_millis() as i64)),
                ]),
            ));
        }
        if p.diverged {
            m.push((Edn::kw(":diverged"), Edn::Bool(true)));
        }
        Edn::Map(m)
    }

    /// Stops the applier after the record it is on, and waits for it.
    pub fn stop(&self) {
        self.shared.stop();
        let thread = self
            .applier
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::request_id;

    /// A node's ids ascend as byte strings (across every change in the number of decimal
    /// digits) and differ within their first 27 bytes: within an AVE key's first 32 (the
    /// attribute, 4, the value's type, 1, then the string), however long the node's name.
    #[test]
    fn a_nodes_request_ids_ascend_within_the_bytes_the_committer_compares() {
        let node = "4194303-18ee8a3c5d2e1f00";
        let ns = [0u64, 9, 10, 15, 16, 100, 255, 256, 1000, 65_535, 1 << 40];
        for pair in ns.windows(2) {
            let (a, b) = (request_id(node, pair[0]), request_id(node, pair[1]));
            assert!(a < b, "{a} then {b}");
            assert_ne!(a.as_bytes()[..27], b.as_bytes()[..27], "{a} and {b}");
        }
        assert_eq!(
            request_id(node, 17),
            "000000000011.4194303-18ee8a3c5d2e1f00"
        );
    }
}
