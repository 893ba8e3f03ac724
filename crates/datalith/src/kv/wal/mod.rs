//! The write-ahead transaction log: how a `Durable` commit reaches the disk with **one**
//! sequential sync.
//!
//! - `frame`: a record's header and checksum.
//! - [`body`]: a group's writes as a record body.
//! - [`derive`](mod@derive): writes a record leaves out because replay rebuilds them from its other writes
//!   (the Datalog store's index entries, from its transaction log).
//! - `slot`: a checkpoint (what the last durable LMDB sync covered).
//! - [`file`](mod@file): the log file, its checkpoint slots and its ring of records.
//! - `fill`: writing the record area once, ahead of the committer, so its syncs carry no
//!   file-system metadata.
//! - `checkpoint`: the checkpointer (background LMDB syncs) and the page-reuse guard.
//! - `failure`: a checkpoint that failed to reach the disk stops checkpoints (and writes)
//!   for good, never retried.
//! - `recovery`: rolling the data file back to the checkpoint and replaying the log.
//! - `check`: a read-only look at a log (what the next open would replay, damage inside).
//! - `survivor`: telling the log's end from damage inside it (a whole record past the stop).
//! - `tail`: the groups a writer acknowledged but LMDB does not hold yet, read back from the
//!   log by a read-only process, so that its snapshots see every acknowledged commit.
//!
//! # The write path (one commit group)
//!
//! 1. The committer prepares the group's requests against a snapshot plus the overlay of the
//!    groups LMDB does not hold yet (`kv::unapplied`; with `EnvOptions::log_apply_later` off,
//!    or for a large batch, inside one LMDB write transaction that also gets the group's
//!    sequence number, `log_seq` in the meta table).
//! 2. The group's staged writes are encoded as one record and written to the log at the ring's
//!    write position, then made durable with one `fdatasync` of the log file. Writes that a
//!    [`Derivation`] rebuilds exactly from the group's other writes are left out (`derive`).
//! 3. The group is published to readers (or its LMDB transaction commits **without** a sync,
//!    `MDB_NOSYNC`). Only now can readers see it: **a commit is visible only after it is
//!    durable**.
//! 4. The group's requests are acknowledged. "Acknowledged means durable" holds, since the log
//!    record alone can rebuild the group.
//! 5. Published groups are written into LMDB later by the applier, many in one unsynced
//!    transaction stamped with the last one's `log_seq`.
//!
//! The log starts small (`limits::LOG_INITIAL_BYTES`) and grows, doubling, up to
//! `EnvOptions::log_file_bytes`, at the ring's end when it is not wrapped and wrapping would
//! soon wait for a checkpoint (`file`: the file is preallocated and synced longer before a
//! record goes past its old end, so no crash strands a record).
//!
//! A group larger than half the ring grown to its largest (a bulk load) is not logged: LMDB commits it unsynced
//! (readers see it from here, before it is durable), a checkpoint then syncs it, and only then
//! are its requests acknowledged. A failure after the record was written poisons the
//! environment; the record is replayed at the next open, so a request reported failed may
//! turn out committed, never the reverse.
//!
//! Records of at least `LOG_DIRECT_MIN_BYTES` (4 KiB: W's batch 100 and up) are written
//! around the page cache in whole blocks, then synced with `fdatasync` (`direct`, 2026-12-04:
//! the sync is then the device flush alone; ahead at batch 100 in every measured pair). The
//! smaller ones stay buffered, for the reasons below (`DATALITH_LOG_BUFFERED=1` writes every
//! record buffered, to measure the two side by side).
//!
//! Why `fdatasync` (not `O_DSYNC`, not `O_DIRECT`) for small records: the file is preallocated and its record area
//! written once ahead of the committer (`fill`), so the sync writes the data and, as a rule, no
//! metadata (block traces of W sync at batch 10, 2026-11-29: one data write and one flush per
//! sync, and an inode write in 5% of syncs, where SQLite WAL's `fsync` wrote one in 11%), and
//! one call covers a record and its wrap marker. `O_DSYNC` would
//! cost the same per write but a sync per `write` call, and `O_DIRECT` needs aligned buffers
//! and pads every small record to a sector. Measured and dropped (2026-11-29): records written
//! with `O_DIRECT`, whole 4 KiB blocks (the block's earlier records kept in memory, zeros
//! after the record), then `fdatasync`. A bare loop of 400-byte appends, the two ways
//! interleaved call by call, was ~20 us faster a sync direct (157 / 178 us p50), but in W
//! sync the direct write waited for the device and the sync then waited for the flush: 6
//! alternating pairs at batch 1, means 4,430 (buffered) / 4,229 writes/s; at batch 10, 4
//! pairs, 37,500 / 39,000 (noise). Measured and dropped again (2026-11-29, stop 47): the
//! same whole-block direct writes made durable by one `pwritev2(RWF_DSYNC)` call. A bare
//! loop of 500-byte appends, interleaved with buffered write + `fdatasync`, was 8-10 us
//! faster at p50 (direct / buffered 200.3 / 208.3 and 157.5 / 167.7 us, two runs), but W
//! sync at batch 1, 8 alternating pairs, summed to 38,740 writes/s direct against 38,865
//! buffered. And the buffered write made durable by `pwritev2(RWF_DSYNC)`, which syncs only
//! the written range (a whole-file `fdatasync` also waits for zeros the filler is sending to
//! the disk): in a bare loop it cost the same (p50 195.8 against 193.6 us); in W sync at
//! batch 1000 it was ahead in 5 of 7 pairs by the machine's noise while the log's write and
//! sync did not get shorter (`DATALITH_COMMIT_TIMING`, `fdatasync` / range sync: 696 / 814
//! and 632 / 649 us a group), and at batch 1 it was behind in 4 of 6 pairs.
//! Measured and dropped (2026-11-29, stop 48): starting the record's write-back
//! (`sync_file_range(SYNC_FILE_RANGE_WRITE)`) right after the write, then doing the
//! committer's work that need not precede the record (the last request's deferred keys'
//! bounds, the group's compact copy of its stage) before the `fdatasync`, so that the work
//! overlaps the device. A bare Python loop promised it (write, start, N us of CPU, sync
//! against N us of CPU, write, sync; p50 of 1,500 each: 600 bytes and 10 us 184.2 / 200.1
//! us, 8 KiB and 30 us 172.7 / 221.2 us), but the work moved is small (W sync,
//! `DATALITH_COMMIT_TIMING`: 7.2 us a group at batch 100, 70.6 at batch 1000) and the sync
//! did not shorten (write and sync with / without the change: 250.9 / 255.0 us a group at
//! batch 100, 689.5 / 634.9 at batch 1000): W sync, alternating pairs of 8 s, at batch 100
//! behind in 2 of 3 (272,997 / 242,204, 244,112 / 221,263, 243,832 / 262,436 writes/s,
//! before / after), at batch 10 behind in 2 of 3 (33,953 / 37,015, 37,022 / 36,029, 36,614 /
//! 36,031).
//!
//! # Checkpoints
//!
//! A checkpoint makes LMDB's state durable (one `mdb_env_sync` covering many groups) and then
//! records, in a checkpoint slot of the log, the last sequence number that state holds, its
//! LMDB transaction id, where the next record begins, and a copy of the data file's two meta
//! pages. The log space before that point is free again. The checkpointer runs in the
//! background every `EnvOptions::log_checkpoint_interval` or `log_checkpoint_bytes` of log, or
//! as soon as the commits since the last checkpoint freed more pages than
//! `limits::LOG_CHECKPOINT_DATA_BYTES` (or a quarter of the file), which the page-reuse guard
//! below keeps from reuse: the data file then stays about its live data plus twice that. The
//! committer runs one itself when the ring is full or a group is too large to log.
//!
//! **Page reuse.** LMDB reuses pages freed by old transactions once no reader needs them. An
//! unsynced commit that reused a page of the checkpointed tree would leave, after a power cut,
//! a checkpoint that is no longer whole. So the checkpointer holds a read transaction on the
//! checkpointed snapshot until the next checkpoint is durable: unsynced commits then only
//! write pages the checkpoint does not use. That reader is outside the reader gate; a map
//! growth (which needs every transaction closed) first takes a full checkpoint, drops the
//! reader, resizes, and takes the reader again on the same (now durable) state.
//!
//! # Recovery (on open for writing)
//!
//! First, touching nothing, the records after the checkpoint are read: a whole record past
//! the point where they stop means the log was damaged after it was acknowledged, and the
//! open is refused (`survivor`; `EnvOptions::log_accept_damage` keeps what precedes the
//! damage of one record). Then the data file's meta pages are overwritten with the checkpoint's copy when they differ
//! (whatever LMDB committed after the checkpoint is unsynced, so it is dropped as a whole),
//! then the records after the checkpoint are applied in order (a derived record's left-out
//! writes rebuilt after the write they come from), many in one LMDB transaction that also sets
//! `log_seq` to its last, up to the first missing, torn or out-of-sequence record. A record
//! whose sequence number is not above `log_seq` is skipped, so replay applies each group
//! exactly once. Replay's commits are unsynced and the log's slot still names the old
//! checkpoint until the replayed state is checkpointed (before the environment opens), so
//! replay holds the page-reuse guard on the old checkpoint throughout: a power cut during
//! recovery finds that checkpoint whole. A map that must grow meanwhile is grown after a
//! checkpoint of what was replayed so far. A checkpoint whose sync or slot write fails is never
//! retried (`failure`): the environment refuses writes until it is reopened and recovers.
//!
//! # Durability modes
//!
//! `Durable` uses the log as above. `NoMetaSync`, `NoSync` and `WriteMapAsync` keep LMDB's own
//! commit (they promise nothing on power loss beyond what LMDB gives) and write no log.
//!
//! # Invariants
//!
//! - A group's record is durable before its LMDB commit (so before it is visible and before it
//!   is acknowledged).
//! - Sequence numbers grow by one per logged group; `log_seq` in LMDB is always the last group
//!   that state holds.
//! - The pages of the durable checkpoint are never rewritten before the next checkpoint is
//!   durable (the held reader).
//! - The ring never overwrites a record after the durable checkpoint.

pub mod body;
mod check;
mod checkpoint;
pub mod derive;
mod direct;
mod failure;
pub mod file;
mod fill;
mod frame;
mod recovery;
mod slot;
mod survivor;
mod sync_times;
mod tail;

pub use body::{LoggedOp, LoggedOpKind};
pub use check::{check_log, LogCheck};
pub(crate) use checkpoint::{Logged, Wal, WalSettings};
pub use derive::{Derivation, DerivedOp};
pub use file::LOG_FILE;
pub(crate) use recovery::seq_of;
pub(crate) use sync_times::SyncTimes;
pub use sync_times::LOG_SYNC_BUCKET_NANOS;
pub(crate) use tail::{LogTail, Tail, TailGroup};

/// The key in the meta table holding the last log sequence number the LMDB state holds.
pub(crate) const LOG_SEQ_KEY: &[u8] = b"log_seq";
