//! How much a commit promises. Every benchmark names the mode it ran in.

use super::lmdb::EnvFlags;

/// What a crash can lose, chosen when the environment is opened.
///
/// Only `Durable` makes "the handle completed" mean "it survives power loss". The others trade
/// that for speed; each says exactly what it gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[non_exhaustive]
pub enum Durability {
    /// Every commit group is appended to the write-ahead log and made durable with one
    /// `fdatasync` before any request of it is completed (or seen by readers); LMDB's data file
    /// is synced by background checkpoints (`kv::wal`). A crash of the process or of the
    /// machine loses nothing that was reported done.
    #[default]
    Durable,
    /// Data pages are flushed at commit, the meta page is not (`MDB_NOMETASYNC`). A process
    /// crash loses nothing; a machine crash may lose the last committed transactions (the
    /// database stays consistent: LMDB falls back to the previous meta page).
    NoMetaSync,
    /// No flush at commit: each commit group is written to the write-ahead log, as with
    /// `Durable`, but not synced; LMDB's data file is synced by the same background
    /// checkpoints. A process crash loses nothing (the page cache survives it and the log is
    /// replayed); a machine crash may lose the commits since the last checkpoint the OS had
    /// not written back, and the database opens at a consistent earlier state (the records
    /// are flagged as unsynced, so a missing one is the end of the log, not damage:
    /// `kv::wal::survivor`).
    NoSync,
    /// Writes go straight into the shared memory map (`MDB_WRITEMAP`) and are flushed with an
    /// asynchronous `msync` (`MDB_MAPASYNC`). Fewest copies and system calls; a process crash
    /// loses nothing, a machine crash loses what the OS has not written back.
    WriteMapAsync,
}

impl Durability {
    /// Every mode, strongest first (benchmarks iterate over it).
    pub const ALL: [Durability; 4] = [
        Durability::Durable,
        Durability::NoMetaSync,
        Durability::NoSync,
        Durability::WriteMapAsync,
    ];

    /// LMDB flags for the mode.
    pub(crate) fn env_flags(self) -> EnvFlags {
        match self {
            Durability::Durable => EnvFlags::empty(),
            Durability::NoMetaSync => EnvFlags::NO_META_SYNC,
            Durability::NoSync => EnvFlags::NO_SYNC,
            Durability::WriteMapAsync => EnvFlags::WRITE_MAP | EnvFlags::MAP_ASYNC,
        }
    }

    /// Short label used in benchmark output (`durable`, `nometasync`, `nosync`,
    /// `writemap-mapasync`).
    pub fn label(self) -> &'static str {
        match self {
            Durability::Durable => "durable",
            Durability::NoMetaSync => "nometasync",
            Durability::NoSync => "nosync",
            Durability::WriteMapAsync => "writemap-mapasync",
        }
    }

    /// Parses a label as printed by [`Durability::label`].
    pub fn from_label(s: &str) -> Option<Durability> {
        Durability::ALL.into_iter().find(|d| d.label() == s)
    }

    /// Whether LMDB flushes data pages inside each commit (`fdatasync`), so starting their
    /// write-back early takes work off the committer.
    pub(crate) fn flushes_data_at_commit(self) -> bool {
        matches!(self, Durability::Durable | Durability::NoMetaSync)
    }

    /// Whether commits go through the write-ahead log (`kv::wal`): `Durable` and `NoSync`.
    /// A log record and LMDB commits gathered by the background applier cost less than an
    /// LMDB commit a group, synced or not (`docs/measurements.md`, "NoSync through the
    /// log"). `NoMetaSync` and `WriteMapAsync` keep LMDB's own commit, with its promise.
    pub(crate) fn uses_log(self) -> bool {
        matches!(self, Durability::Durable | Durability::NoSync)
    }

    /// Whether a log record is synced before its group is acknowledged: only `Durable`.
    pub(crate) fn syncs_log(self) -> bool {
        matches!(self, Durability::Durable)
    }

    /// Whether a completed write survives a machine crash.
    pub fn survives_power_loss(self) -> bool {
        matches!(self, Durability::Durable)
    }
}

/// Options for opening an environment.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EnvOptions {
    /// What a crash can lose.
    pub durability: Durability,
    /// Initial size of the memory map in bytes (rounded up to the page size); 0 (the
    /// default) lets Datalith choose: a large reservation of address space where the file
    /// is mapped read-only, 256 MiB under `MDB_WRITEMAP` (see `limits::RESERVED_MAP_BYTES`).
    /// The map grows by itself when the data needs more.
    pub initial_map_bytes: usize,
    /// How long a map growth waits for open snapshots to close before the write that needed
    /// it fails with `KvError::SnapshotBlocksGrowth` (LMDB resizes only while no snapshot of
    /// the process is open).
    pub growth_patience: std::time::Duration,
    /// With a log (`Durable`, `NoSync`): how long an open for writing waits while another process
    /// holds the database for writing (its log) before it fails with `KvError::Busy` naming that
    /// process, as SQLite's `busy_timeout`. Read-only opens never wait.
    pub busy_timeout: std::time::Duration,
    /// Turn off OS read-ahead on the data file (`MDB_NORDAHEAD`): better for random access to a
    /// database larger than memory.
    pub no_read_ahead: bool,
    /// How much of an existing data file is validated (with plain reads) before LMDB reads
    /// it: the catalog of tables (default, a few pages) or every page.
    pub verify: super::file::Verify,
    /// With a log (`Durable`, `NoSync`): the length the write-ahead log file grows to (records wrap
    /// around in it); a log made longer before keeps its length.
    pub log_file_bytes: u64,
    /// With a log (`Durable`, `NoSync`): the length of the log file a new environment gets
    /// (preallocated); it grows, doubling, up to `log_file_bytes` when records would otherwise wait
    /// for a checkpoint to free room (`kv::wal::file`).
    pub log_initial_bytes: u64,
    /// With a log (`Durable`, `NoSync`): the checkpointer syncs the data file at least this often
    /// while commits arrive (a longer interval means fewer syncs and more log to replay after a
    /// crash).
    ///
    /// It also trades the data file's size for commit tail latency: pages copied since the
    /// last checkpoint cannot be reused before the next one, and each data sync slows the log
    /// syncs that meet it. W (Datalog, sync, batch 10, 10-25 s runs), 2 s with 28-40 MiB of
    /// log against the defaults (500 ms, 16 MiB): commit p99 0.39-0.87 ms in 10 runs against
    /// 1.31-2.85 in 7, throughput and mean latency within this machine's noise; one 20 s pair
    /// kept its files: a 776 MB data file (721,220 writes) against 489 MB (760,400).
    pub log_checkpoint_interval: std::time::Duration,
    /// With a log (`Durable`, `NoSync`): ... and as soon as this many bytes of log were written
    /// since the last checkpoint.
    pub log_checkpoint_bytes: u64,
    /// With a log (`Durable`, `NoSync`): ... and as soon as the LMDB commits since the last
    /// checkpoint freed more than this many bytes of pages (or a quarter of the data file), which
    /// the checkpoint's page-reuse guard keeps from reuse until the next one: bounds the data
    /// file's growth under churn (`limits::LOG_CHECKPOINT_DATA_BYTES`). `u64::MAX` turns it off.
    pub log_checkpoint_freed_bytes: u64,
    /// With a log (`Durable`, `NoSync`): a commit is its log record; LMDB is written later, many
    /// groups in one transaction, and readers see the groups not yet written through an overlay
    /// (`kv::unapplied`). Off: every group is also an LMDB commit of its own.
    pub log_apply_later: bool,
    /// With a log and `log_apply_later`: how long committed groups wait before LMDB is
    /// written (they are applied sooner when many have gathered, or as soon as a reader
    /// meets one). Zero writes LMDB after every group, in the background.
    pub log_apply_delay: std::time::Duration,
    /// With a log and `log_apply_later`: how many staged ops may wait for the LMDB
    /// writer before a batch waits for it to write some (at most
    /// `limits::UNAPPLIED_BACKLOG_WAIT`). `usize::MAX`, the default, bounds nothing: an
    /// acknowledged write is durable in the log however far LMDB lags, and a writer that
    /// runs ahead is acknowledged sooner (W async at batch 100 and 1000, 300,000 writes: a
    /// bound of 1M ops cut its rate by a quarter). A bound keeps that backlog's memory small
    /// and the data file close behind: for a process whose readers read the file's state
    /// (`Environment::read_applied`), as a node applying a shared log does.
    pub log_apply_backlog_ops: usize,
    /// Test hook: off, readers never write waiting groups into LMDB themselves, so every read
    /// made while groups wait merges their overlay.
    #[doc(hidden)]
    pub log_readers_apply: bool,
    /// With a log (`Durable`, `NoSync`): when a damaged record of the log is followed by whole ones
    /// (the log was damaged after those transactions were acknowledged), open anyway, keeping the
    /// transactions before the damaged record and dropping it and every one after. Off (the
    /// default), such a log is refused with `KvError::Corrupt`, which names the records. A log
    /// missing more than one record before a whole one is refused either way: the ring may have
    /// moved past the checkpoint in use, whose pages may then hold other data.
    pub log_accept_damage: bool,
    /// Test hook: without the checkpointer's reader, unsynced commits may overwrite pages of
    /// the durable checkpoint (the power-cut test shows the damage).
    #[doc(hidden)]
    pub log_guard_pages: bool,
    /// With a log (`Durable`, `NoSync`): writes that log records leave out because replay rebuilds
    /// them (`kv::wal::derive`; the Datalog store sets its own). A log written with one needs the
    /// same one to be replayed.
    pub log_derivation: Option<std::sync::Arc<dyn super::wal::Derivation>>,
}

impl Default for EnvOptions {
    fn default() -> Self {
        EnvOptions {
            durability: Durability::Durable,
            initial_map_bytes: 0,
            growth_patience: crate::limits::MAP_GROWTH_PATIENCE,
            busy_timeout: crate::limits::WRITER_BUSY_TIMEOUT,
            no_read_ahead: false,
            verify: super::file::Verify::Catalog,
            log_file_bytes: crate::limits::LOG_FILE_BYTES,
            log_initial_bytes: crate::limits::LOG_INITIAL_BYTES,
            log_checkpoint_interval: crate::limits::LOG_CHECKPOINT_INTERVAL,
            log_checkpoint_bytes: crate::limits::LOG_CHECKPOINT_BYTES,
            log_checkpoint_freed_bytes: crate::limits::LOG_CHECKPOINT_DATA_BYTES,
            log_apply_later: true,
            log_apply_delay: crate::limits::UNAPPLIED_MAX_AGE,
            log_apply_backlog_ops: usize::MAX,
            log_readers_apply: true,
            log_guard_pages: true,
            log_accept_damage: false,
            log_derivation: None,
        }
    }
}

impl EnvOptions {
    pub(crate) fn wal_settings(&self) -> super::wal::WalSettings {
        super::wal::WalSettings {
            initial_bytes: self.log_initial_bytes,
            max_bytes: self.log_file_bytes,
            interval: self.log_checkpoint_interval,
            trigger_bytes: self.log_checkpoint_bytes.max(1),
            freed_bytes: self.log_checkpoint_freed_bytes,
            guard_pages: self.log_guard_pages,
            accept_damage: self.log_accept_damage,
            derivation: self.log_derivation.clone(),
            sync_records: self.durability.syncs_log(),
        }
    }

    /// Options with the given durability and defaults for the rest.
    pub fn with_durability(durability: Durability) -> Self {
        EnvOptions {
            durability,
            ..EnvOptions::default()
        }
    }
}
