//! Datalith KV as a blob store, in the ways of making each 500 ms of puts durable that the
//! existing API allows. The puts of a window wait in memory (as every store's do until its
//! flush) and go to the committer as one request: one LMDB transaction, one commit.

use std::fs::File;
use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Instant;

use datalith::kv::{Durability, EnvOptions, Environment, KvOp, Table, TableKind};

use super::{fingerprint, BlobStore};
use crate::common::BenchError;

/// Address space reserved at open: the data of a full run (~250 MB live plus the pages of the
/// last two commits) fits without a map growth, and address space costs nothing.
const INITIAL_MAP_BYTES: usize = 1 << 30;

/// How the puts of a window are made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Durable mode, one request per window queued with a callback: the writer thread goes on
    /// while the committer thread writes and fsyncs; a put counts once the callback fires.
    Pipelined { no_read_ahead: bool },
    /// Durable mode, one blocking `transact_kv` per window: the writer waits for the fsync.
    Blocking,
    /// A non-durable mode (`WriteMapAsync` or `NoSync`): one blocking commit per window, then
    /// the benchmark calls `fdatasync` on `data.mdb` itself. Cheaper, but not power-safe:
    /// LMDB's meta page may reach the disk before the data pages it points to.
    CommitThenFsync(Durability),
}

impl Variant {
    /// The variant behind a `--stores` name.
    pub fn from_name(name: &str) -> Option<Variant> {
        Some(match name {
            "datalith" => Variant::Pipelined {
                no_read_ahead: false,
            },
            "datalith-nordahead" => Variant::Pipelined {
                no_read_ahead: true,
            },
            "datalith-blocking" => Variant::Blocking,
            "datalith-writemap-fsync" => Variant::CommitThenFsync(Durability::WriteMapAsync),
            "datalith-nosync-fsync" => Variant::CommitThenFsync(Durability::NoSync),
            _ => return None,
        })
    }

    fn durability(self) -> Durability {
        match self {
            Variant::Pipelined { .. } | Variant::Blocking => Durability::Durable,
            Variant::CommitThenFsync(d) => d,
        }
    }
}

/// A completed commit of the pipelined variant, sent by the committer thread's callback.
struct Done {
    puts: u64,
    latency_s: f64,
    result: Result<(), String>,
}

/// Datalith KV holding blobs in one plain table, 8-byte big-endian keys.
pub struct DatalithKv {
    env: Environment,
    table: Table,
    variant: Variant,
    window: Vec<KvOp>,
    /// `data.mdb`, for the variants where the benchmark makes the commit durable itself.
    data_file: Option<File>,
    done_tx: Sender<Done>,
    done_rx: Receiver<Done>,
    in_flight: usize,
    durable: u64,
    latencies: Vec<f64>,
}

const NAME: &str = "datalith";

impl DatalithKv {
    /// Opens (creating) the environment in `dir`.
    pub fn open(dir: &Path, variant: Variant) -> Result<DatalithKv, BenchError> {
        let mut opts = EnvOptions::with_durability(variant.durability());
        opts.initial_map_bytes = INITIAL_MAP_BYTES;
        opts.no_read_ahead = matches!(
            variant,
            Variant::Pipelined {
                no_read_ahead: true
            }
        );
        let env = Environment::open(dir, opts).map_err(BenchError::store(NAME, "open"))?;
        let table = env
            .table("blobs", TableKind::Plain)
            .map_err(BenchError::store(NAME, "create table"))?;
        let data_file = match variant {
            Variant::CommitThenFsync(_) => {
                let path = dir.join("data.mdb");
                Some(File::open(&path).map_err(BenchError::io(&path))?)
            }
            _ => None,
        };
        let (done_tx, done_rx) = channel();
        Ok(DatalithKv {
            env,
            table,
            variant,
            window: Vec::new(),
            data_file,
            done_tx,
            done_rx,
            in_flight: 0,
            durable: 0,
            latencies: Vec::new(),
        })
    }

    fn record(&mut self, done: Done) -> Result<(), BenchError> {
        self.in_flight -= 1;
        done.result.map_err(BenchError::store(NAME, "commit"))?;
        self.durable += done.puts;
        self.latencies.push(done.latency_s);
        Ok(())
    }

    /// Takes every completion the committer has sent so far, without blocking.
    fn drain(&mut self) -> Result<(), BenchError> {
        while let Ok(done) = self.done_rx.try_recv() {
            self.record(done)?;
        }
        Ok(())
    }
}

fn key_bytes(key: u32) -> [u8; 8] {
    u64::from(key).to_be_bytes()
}

impl BlobStore for DatalithKv {
    fn put(&mut self, key: u32, blob: Vec<u8>) -> Result<(), BenchError> {
        self.window
            .push(KvOp::put(&self.table, key_bytes(key).to_vec(), blob));
        Ok(())
    }

    fn flush(&mut self) -> Result<(), BenchError> {
        self.drain()?;
        if self.window.is_empty() {
            return Ok(());
        }
        let ops = std::mem::take(&mut self.window);
        let puts = ops.len() as u64;
        let started = Instant::now();
        match self.variant {
            Variant::Pipelined { .. } => {
                let tx = self.done_tx.clone();
                self.in_flight += 1;
                self.env.transact_kv_with_callback(ops, move |result| {
                    // The receiver outlives every commit (finish drains them all); a send
                    // failing means the run is over anyway.
                    let _ = tx.send(Done {
                        puts,
                        latency_s: started.elapsed().as_secs_f64(),
                        result: result.map_err(|e| e.to_string()),
                    });
                });
            }
            Variant::Blocking | Variant::CommitThenFsync(_) => {
                self.env
                    .transact_kv(ops)
                    .map_err(BenchError::store(NAME, "commit"))?;
                if let Some(f) = &self.data_file {
                    f.sync_data()
                        .map_err(BenchError::io(&self.env.path().join("data.mdb")))?;
                }
                self.durable += puts;
                self.latencies.push(started.elapsed().as_secs_f64());
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), BenchError> {
        self.flush()?;
        while self.in_flight > 0 {
            let done = self.done_rx.recv().map_err(|_| BenchError::Store {
                store: NAME.into(),
                op: "commit",
                message: "committer went away".into(),
            })?;
            self.record(done)?;
        }
        Ok(())
    }

    fn durable_puts(&mut self) -> u64 {
        // Errors surface at the next flush or finish; here only the count matters.
        let _ = self.drain();
        self.durable
    }

    fn flush_latencies(&self) -> Vec<f64> {
        self.latencies.clone()
    }

    fn read_back(&mut self, key: u32) -> Result<Option<(usize, u64)>, BenchError> {
        let txn = self.env.read().map_err(BenchError::store(NAME, "read"))?;
        let value = txn
            .view()
            .get(&self.table, &key_bytes(key))
            .map_err(BenchError::store(NAME, "get"))?;
        Ok(value.map(|v| (v.len(), fingerprint(v))))
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        let txn = self.env.read().map_err(BenchError::store(NAME, "read"))?;
        let n = txn
            .view()
            .len(&self.table)
            .map_err(BenchError::store(NAME, "count"))?;
        Ok(n)
    }
}
