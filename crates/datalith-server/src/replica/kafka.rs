//! The topic, through rskafka: a pure-Rust Kafka client (InfluxData's, used by InfluxDB IOx)
//! that speaks to one partition by offset, which is all a log needs: append a record and get
//! its offset, read from an offset. It needs no C library (rdkafka would build librdkafka)
//! and it produces with `acks=all`. Every call here blocks its thread on the server's runtime.

use std::time::Duration;

use rskafka::client::error::{Error as KafkaError, ProtocolError};
use rskafka::client::partition::{Compression, PartitionClient, UnknownTopicHandling};
use rskafka::client::ClientBuilder;
use rskafka::record::Record;
use rskafka::BackoffConfig;
use tokio::runtime::Handle;

use super::nodelay::NoDelay;
use super::url::LogUrl;
use crate::error::{codes, Result, ServerError};

/// How long one append or fetch keeps retrying a broker that does not answer (a leader
/// election takes seconds); past it the caller hears the log is unavailable.
const RETRY_DEADLINE: Duration = Duration::from_secs(15);
/// How long a topic creation may take on the brokers.
const CREATE_TIMEOUT_MS: i32 = 10_000;
/// The most bytes one fetch brings (Kafka still returns a first record larger than this).
/// Small on purpose: the applier queues a fetch's records at once, and a fetch of tens of MiB
/// kept that much tx data alive at a time, in fresh pages the kernel had to zero (a third of
/// a catch-up's profile).
pub const MAX_FETCH_BYTES: i32 = 1 << 20;
/// The largest record the client sends or reads.
const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// One record read back: its offset, value and the broker's timestamp (ms).
pub struct Fetched {
    /// The record's offset in the partition.
    pub offset: i64,
    /// Its value.
    pub value: Vec<u8>,
    /// When it was appended, ms since the epoch.
    pub timestamp_ms: i64,
}

/// Partition 0 of the log's topic.
pub struct Topic {
    /// Appends, on a connection of their own (see [`Topic::connect`]).
    producer: PartitionClient,
    /// Fetches.
    reader: PartitionClient,
    /// Nagle's algorithm off on the connections of both.
    nodelay: NoDelay,
    handle: Handle,
    /// Cuts a waiting fetch short: the broker does not answer a waiting fetch when a record
    /// arrives (rskafka reads committed records only, and Kafka 4.4 completes such a fetch at
    /// its timeout here), so a node that has just appended asks again at once instead.
    wake: tokio::sync::Notify,
    /// `host:port,...` and the topic, for messages.
    pub name: String,
}

/// The clock, ms since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn unavailable(what: &str, url: &str, e: impl std::fmt::Display) -> ServerError {
    ServerError::new(
        codes::LOG_UNAVAILABLE,
        format!("the transaction log {url}: {what}: {e}"),
    )
}

impl Topic {
    /// Connects, creating the topic (one partition) when it is missing.
    pub fn connect(url: &LogUrl, handle: &Handle) -> Result<Topic> {
        let name = format!("kafka://{}/{}", url.brokers.join(","), url.topic);
        let backoff = BackoffConfig {
            init_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(1),
            base: 2.0,
            deadline: Some(RETRY_DEADLINE),
        };
        let client = || async {
            ClientBuilder::new(url.brokers.clone())
                .client_id("datalith")
                .max_message_size(MAX_MESSAGE_BYTES)
                .backoff_config(backoff.clone())
                .build()
                .await
                .map_err(|e| unavailable("cannot reach a broker", &name, e))
        };
        let (producer, reader) = handle.block_on(async {
            let client_for_reads = client().await?;
            let client = client().await?;
            let controller = client
                .controller_client()
                .map_err(|e| unavailable("no controller", &name, e))?;
            match controller
                .create_topic(&url.topic, 1, url.replication, CREATE_TIMEOUT_MS)
                .await
            {
                Ok(()) => {}
                Err(KafkaError::ServerError {
                    protocol_error: ProtocolError::TopicAlreadyExists,
                    ..
                }) => {}
                Err(e) => return Err(unavailable("cannot create the topic", &name, e)),
            }
            // Two clients, so two connections to the leader: a fetch waits on the broker
            // (`FETCH_WAIT` of the applier) with its request not yet acknowledged by the
            // broker's TCP stack, and with Nagle's algorithm on (`nodelay`) an append sent on
            // the same connection sat in the send buffer until that fetch was answered (an
            // append took 10-25 ms, mostly waiting); and an append need not queue behind a
            // fetch's answer of up to `MAX_FETCH_BYTES`.
            let producer = client
                .partition_client(url.topic.clone(), 0, UnknownTopicHandling::Retry)
                .await
                .map_err(|e| unavailable("no leader for partition 0", &name, e))?;
            let reader = client_for_reads
                .partition_client(url.topic.clone(), 0, UnknownTopicHandling::Retry)
                .await
                .map_err(|e| unavailable("no leader for partition 0", &name, e))?;
            Ok::<_, ServerError>((producer, reader))
        })?;
        let nodelay = NoDelay::new(&url.brokers);
        nodelay.apply();
        Ok(Topic {
            producer,
            reader,
            nodelay,
            handle: handle.clone(),
            wake: tokio::sync::Notify::new(),
            name,
        })
    }

    /// Appends `value`; its offset once every in-sync replica has it (`acks=all`).
    pub fn append(&self, value: Vec<u8>) -> Result<i64> {
        self.nodelay.refresh();
        let record = Record {
            key: None,
            value: Some(value),
            headers: Default::default(),
            // rskafka's chrono has no clock: the time from the standard library.
            timestamp: rskafka::chrono::DateTime::from_timestamp_millis(now_ms())
                .unwrap_or_default(),
        };
        let offsets = self
            .handle
            .block_on(
                self.producer
                    .produce(vec![record], Compression::NoCompression),
            )
            .map_err(|e| unavailable("the append failed", &self.name, e))?;
        offsets.first().copied().ok_or_else(|| {
            unavailable(
                "the append failed",
                &self.name,
                "the broker named no offset",
            )
        })
    }

    /// The records from `offset` on (none if none came within `max_wait`, or [`Topic::wake`]
    /// cut the wait short), and the partition's high watermark (the offset the next record
    /// will get; `None` when cut short).
    pub fn fetch(&self, offset: i64, max_wait: Duration) -> Result<(Vec<Fetched>, Option<i64>)> {
        self.nodelay.refresh();
        let wait_ms = max_wait.as_millis().min(i32::MAX as u128) as i32;
        let fetch = self
            .reader
            .fetch_records(offset, 1..MAX_FETCH_BYTES, wait_ms);
        // rskafka's requests may be dropped while in flight (their answer is then discarded).
        let answered = self.handle.block_on(async {
            tokio::select! {
                answer = fetch => Some(answer),
                _ = self.wake.notified() => None,
            }
        });
        let Some(answer) = answered else {
            return Ok((Vec::new(), None));
        };
        let (records, high) = answer.map_err(|e| unavailable("a read failed", &self.name, e))?;
        let fetched = records
            .into_iter()
            .filter(|r| r.offset >= offset)
            .map(|r| Fetched {
                offset: r.offset,
                timestamp_ms: r.record.timestamp.timestamp_millis(),
                value: r.record.value.unwrap_or_default(),
            })
            .collect();
        Ok((fetched, Some(high)))
    }

    /// Ends the current (or the next) fetch's wait: a record was just appended.
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}
