//! Every hard limit of Datalith, in one place, each with the reason it exists.
//!
//! Other modules assert against these; change a number here and its reason together.

/// The longest key LMDB accepts (and the longest value of a list, i.e. dupsort, table).
/// LMDB's compile-time `MDB_MAXKEYSIZE` is 511 bytes with the default page size; a longer
/// key is a typed error before it reaches the committer.
pub const MAX_KEY_BYTES: usize = 511;

/// The largest single value we accept in a KV put. LMDB can hold values up to 4 GiB, but a
/// value of this size already spans 64K overflow pages; larger blobs belong in files.
pub const MAX_VALUE_BYTES: usize = 256 * 1024 * 1024;

/// Default initial size of the memory map under `MDB_WRITEMAP`, where LMDB sets the file's
/// length to the map's; the committer doubles it when the data grows.
pub const DEFAULT_INITIAL_MAP_BYTES: usize = 256 * 1024 * 1024;

/// The map reserved at open where LMDB maps the file read-only (every mode but
/// `MDB_WRITEMAP`): 256 GiB of address space. It costs no memory and no disk (the kernel
/// only notes the range; page tables appear for pages actually read), so the map
/// practically never has to grow, and a growth is what must wait for every open snapshot.
/// 256 GiB leaves room for hundreds of open databases in the 128 TiB of user address space
/// of x86-64 and aarch64 Linux (and macOS); where the process's address space is limited
/// (`ulimit -v`), open falls back to `DEFAULT_INITIAL_MAP_BYTES`.
pub const RESERVED_MAP_BYTES: usize = 1 << 38;

/// How long a map growth waits for open snapshots to close before the write that needed it
/// fails with a typed error (`KvError::SnapshotBlocksGrowth`) instead of waiting forever:
/// long enough for ordinary queries to finish, short enough that a writer behind a
/// snapshot held for a report hears of it.
pub const MAP_GROWTH_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// The map never grows past this (1 TiB): far beyond what a single-file embedded store should
/// hold, and well inside the 47-bit address space of x86-64 and aarch64 user processes.
pub const MAX_MAP_BYTES: usize = 1 << 40;

/// When a commit leaves less than this fraction of the map free, the committer grows the map
/// at the next moment no reader is open, so that a forced growth (which must wait for every
/// reader to finish) is rare.
pub const MAP_GROW_WHEN_FREE_BELOW: f64 = 0.25;

/// LMDB reader-table slots. A slot is 64 bytes of the lock file; 4096 slots cost 256 KiB and
/// let thousands of threads read at once. Our reader gate never hands out more than
/// `MAX_READERS - RESERVED_READER_SLOTS` at a time, so LMDB's `MDB_READERS_FULL` cannot happen.
pub const MAX_READERS: u32 = 4096;

/// Slots kept free for LMDB's own use and for other processes opening the same file.
pub const RESERVED_READER_SLOTS: u32 = 32;

/// Ended read-only transactions kept reset for the next snapshots to renew (each keeps its
/// reader slot: the gate hands out this many fewer). Beginning a snapshot otherwise allocates
/// and zeroes a handle and locks the reader table to find a slot, and ending one frees it:
/// ~10% of a point read's time in W's mixed phase.
pub const IDLE_READ_TXNS: usize = 8;

/// Named sub-databases (tables) an environment may hold. Each open table costs LMDB a few
/// hundred bytes per transaction; 128 is plenty for the store's tables and user KV tables.
pub const MAX_TABLES: u32 = 128;

/// Longest table name, in bytes. Table names are stored as LMDB keys in the main database.
pub const MAX_TABLE_NAME_BYTES: usize = 255;

/// The committer drains at most this many queued requests into one LMDB transaction. Beyond
/// ~1000 the fsync is already amortised to nothing and a longer batch only adds latency.
pub const MAX_BATCH_REQUESTS: usize = 4096;

/// ... and at most this many bytes by the requests' size hints, so a burst of large requests
/// does not build a transaction whose dirty pages exceed memory, and, in `Durable` mode, so a
/// group stays well inside the log: one whose hints reach a quarter of the log grown to its
/// largest (`LOG_FILE_BYTES`) takes the old path, a whole LMDB commit, and one whose writes
/// pass half of it skips the log for a checkpoint of the data file (a smaller log grows for
/// the group first). W async at batch 1000 (1000 calls of
/// 1000 entities in flight), 2 alternating 12 s runs: 217,169/186,791 writes/s with 16 MiB
/// (groups of up to 131 calls, 7 of 13 too large for the log), 371,451/455,362 with 8 MiB,
/// 404,219/411,766 with 4 MiB (commit p50 2.0-2.6 s -> 0.8-1.0 s); at batch 100 within the
/// noise (346,234-448,947 against 391,915-395,442); KV async durable at batch 1000
/// 1,640,027/1,651,854 against 1,933,634/1,768,357.
pub const MAX_BATCH_BYTES: usize = 4 * 1024 * 1024;

/// How often the applier looks for readers in other processes (LMDB's reader table) while
/// groups wait: while there are any, it applies as in a hurry (`UNAPPLIED_HURRY_AGE`), since
/// they read the waiting groups back from the log for every snapshot (`kv::wal::tail`).
/// A look costs a walk of the lock file's reader slots (126), a few microseconds.
pub const OTHER_READERS_LOOK: std::time::Duration = std::time::Duration::from_millis(10);

/// How long an open for writing waits for another process's hold on the log before it fails
/// as busy (`EnvOptions::busy_timeout`): a few seconds, as SQLite's usual `busy_timeout`,
/// long enough for a short-lived writer (a `datalith transact`) to finish, short enough that
/// a second long-lived writer learns at once that it must share through a server.
pub const WRITER_BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How often a waiting open tries the log's lock again (`WRITER_BUSY_TIMEOUT`).
pub const WRITER_BUSY_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Bytes the write-ahead log file of a `Durable` environment (`kv::wal`), a ring, grows to
/// (`EnvOptions::log_file_bytes`). A group larger than half of it skips the log and is
/// checkpointed directly. Big enough that a checkpoint every `LOG_CHECKPOINT_BYTES` leaves
/// the ring room for the records written while the data file syncs; logs made before the
/// log could grow have this length from the start.
pub const LOG_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// A log record of at least this many bytes is written around the page cache (`O_DIRECT`,
/// `kv::wal::direct`); smaller ones buffered. Measured in W sync (alternating pairs of one
/// build, 2026-12-04): at batch 100 (~8 KB records) direct was ahead in 3 of 3 pairs (+8-9%,
/// the log's write and sync 214-249 us buffered against 186-229 direct); at batch 10 (~900
/// bytes, records sharing a block) behind in 2 of 3 (51,303/40,039, 54,381/42,655, 47,248/48,121
/// writes/s); at batch 1 within the noise.
pub const LOG_DIRECT_MIN_BYTES: usize = 4096;

/// A group of at least this many staged bytes whose ops average `LOG_DIRECT_BLOB_MEAN_BYTES`
/// or more (blobs: values on LMDB's overflow pages) skips the log: LMDB commits it and a
/// checkpoint makes it durable before it is acknowledged (`kv::wal`, the direct path of a group
/// too large for the log). Logged, a blob reaches the device twice (the record, then the data
/// file at the next checkpoint): workload B at 1,000 blobs/s wrote 2.9x its logical bytes,
/// where jelly writes 1.7x. The checkpoint costs a data-file sync and two slot syncs where a
/// record costs one sync, which a group this large (it takes milliseconds to write) hides;
/// groups of small values (Datalog transactions, KV batches of small values) never qualify.
pub const LOG_DIRECT_BLOB_BYTES: usize = 512 * 1024;
/// ... see `LOG_DIRECT_BLOB_BYTES`: a value past one 4 KiB page goes to overflow pages.
pub const LOG_DIRECT_BLOB_MEAN_BYTES: usize = 4096;

/// Bytes of the log file a new `Durable` environment gets (`EnvOptions::log_initial_bytes`):
/// an empty database (data file ~60 KB, lock file ~270 KB) then takes ~600 KB on disk, where
/// a log created at `LOG_FILE_BYTES` made it 65 MB. The log doubles, up to
/// `LOG_FILE_BYTES`, when records would otherwise wait for a checkpoint (`kv::wal::file`), so
/// a busy database reaches the full ring within its first seconds (eight doublings), each
/// costing one preallocation and one sync of the log.
pub const LOG_INITIAL_BYTES: u64 = 256 * 1024;

/// The checkpointer syncs LMDB's data file at least this often while commits arrive.
///
/// Between checkpoints the data file's pages should stay in the page cache: a data page that
/// reaches the disk between two syncs of the log makes the second one slower (the disk's cache
/// flush carries it). Measured and dropped (2026-11-29, W sync at batch 10, alternating pairs
/// of 12 s): starting write-back of the data file after every apply
/// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`), behind in 4 of 4 (51,885/46,096,
/// 45,488/40,906, 53,018/46,921, 48,934/45,027 writes/s). Checkpoints every 4 s or 48 MiB
/// instead: ahead in 6 of 10 at batch 10 (means 50,280 and 52,250 writes/s), 2 of 4 at batch
/// 1 and 2 of 3 at batch 1000: not enough to trade for a file that may grow for 8 times as long
/// between checkpoints (each apply writes fresh pages while the checkpoint's reader holds the
/// old ones).
pub const LOG_CHECKPOINT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

/// ... or as soon as this many bytes of log were written since the last checkpoint.
///
/// Measured and dropped (2026-11-29): checkpoints every 2 s or 96 MiB with a 256 MiB log, W
/// sync at batch 1000 (both sides with the range-synced record write of `kv::wal`'s docs), 3
/// alternating pairs: 413,862/409,786, 413,063/404,429, 408,795/416,824 writes/s, disk bytes a
/// run 702/811, 798/960, 866/774 MB; and no checkpoint at all during a run at batch 1 (60 s,
/// 48 MiB), 4 pairs summing to 15,927 (checkpoints as above) against 15,896 writes/s.
/// Fewer checkpoints do not write fewer bytes there: a run at batch 1000 on a new database
/// writes ~915 MB, and its data file ends at 583 MB (372 MB of pages in use: AVE 168, EAV
/// 118, the transaction log's table 86), so most pages reach the disk about once, as the
/// file grows.
pub const LOG_CHECKPOINT_BYTES: u64 = 16 * 1024 * 1024;

/// ... or as soon as the LMDB commits since the last checkpoint freed more than this many
/// bytes of pages (counted on LMDB's free list after each commit, `kv::wal::checkpoint`), or a
/// `LOG_CHECKPOINT_DATA_SHARE` of the file as it was at that checkpoint, whichever is more.
///
/// The checkpointer's reader holds the checkpointed snapshot until the next checkpoint, so
/// every page an LMDB commit copies meanwhile is fresh and the page it frees waits for that
/// checkpoint: the data file can grow by everything copied between two checkpoints, however
/// small the live data. Measured (`examples/churn.rs`, 10,000 entities, 3M cardinality-one
/// updates in transactions of 100, each group applied at once, `APPLY_MS=0`): 509 MB before
/// this bound, 30.8 MB with it (~5 MB live; with the default apply delay 9.2 and 8.8 MB).
/// Bounding the pages freed per checkpoint bounds the file at about the live data plus twice
/// this (the window being written, and the one whose pages the last checkpoint freed), plus
/// what commits add while a checkpoint syncs: 8 MiB keeps that churn under 32 MB, and it is half
/// of `LOG_CHECKPOINT_BYTES`, the log a checkpoint already waits for, so a checkpoint syncs
/// about as much of the data file at once as before. Its cost there: 233,000 updates/s before,
/// 167,000 after (one run each, on a shared machine), the price of the more frequent syncs.
pub const LOG_CHECKPOINT_DATA_BYTES: u64 = 8 * 1024 * 1024;

/// See `LOG_CHECKPOINT_DATA_BYTES`: a window of commits may free up to a quarter of the file
/// before it must end, so that a large file growing with its data (a bulk load: W at batch
/// 1000 writes ~82 MB of log and grows its file to ~580 MB, copying pages as it goes) is not
/// checkpointed many times as often as its log asks, while the space a file may hold unused
/// stays a share of it.
pub const LOG_CHECKPOINT_DATA_SHARE: u64 = 4;

/// With the log (`kv::unapplied`), logged groups wait at most this long before they are
/// written into LMDB in one transaction, while few ops arrive (below). Short keeps the
/// overlay a reader builds small, another process's view of LMDB close behind, and LMDB's
/// page writes spread out; small groups touch different pages whatever the wait, so a longer
/// one gains them nothing (W sync at batch 1, 18 alternating pairs of runs: 20 ms ahead of
/// 250 ms in 12, by less than this machine's noise; at batch 100, 3 pairs with this rule
/// against 250 ms throughout: 3 ahead, by ~3%).
pub const UNAPPLIED_MAX_AGE: std::time::Duration = std::time::Duration::from_millis(20);

/// ... but when at least `UNAPPLIED_BUSY_OPS` ops are waiting by then, they wait up to this
/// long (`kv::unapplied::signal::due`; `UNAPPLIED_MAX_OPS` still bounds them): at that rate fewer,
/// larger transactions copy each touched page fewer times, and the checkpoints that follow
/// have fewer pages to send to the disk while the log's syncs wait behind them (W, Datalog,
/// async at batch 100: 230,000 writes/s with 250 ms and 256K ops, 205,000 with 20 ms and 64K).
/// W sync at batch 10 (~3,000 ops in 20 ms), 6 alternating pairs of runs, 8K ops and 250 ms
/// against 2K ops and 1 s: commit p99 4.70/3.47, 5.60/1.76, 4.57/0.57, 6.82/2.37,
/// 2.06/1.85, 4.64/0.94 ms (lower in all six), writes/s 22,491/21,403, 22,696/33,855,
/// 24,811/40,932, 18,148/29,557, 35,184/33,775, 23,858/38,454 (ahead in four); with a 1 s
/// wait for every group, 7 more pairs: p99 lower in all seven, writes/s ahead in five. At
/// batch 100 (already waiting for 256K ops), 2 pairs: 120,804/112,757 and 94,517/101,594
/// writes/s, p99 5.32/4.30 and 8.34/4.89 ms. Disk bytes written a write at batch 10 (10 s,
/// `/sys/block/vda/stat`): 5,578 and 5,675 before, 1,892 and 1,903 after.
pub const UNAPPLIED_BUSY_AGE: std::time::Duration = std::time::Duration::from_secs(1);

/// See `UNAPPLIED_BUSY_AGE`: 2K ops in 20 ms is 100,000 staged ops a second (W sync at
/// batch 10 stages ~150,000, at batch 1 ~65,000, async at batch 100 ~850,000). Batch 1 stays
/// below it: with every group waiting 1 s, 7 alternating pairs cut the disk bytes a write
/// from ~12,000 to ~7,400 but were ahead in writes/s in only 3 (the flush, not the data
/// file's traffic, limits a commit of one write).
pub const UNAPPLIED_BUSY_OPS: usize = 2 * 1024;

/// The longest a batch waits for the LMDB writer to shrink a backlog over
/// `EnvOptions::log_apply_backlog_ops` (where one is set): long enough for the writer to
/// write a few large groups, short enough that a writer that cannot go on (a full map that
/// waits for readers, a poisoned environment) holds up each batch for no longer.
pub const UNAPPLIED_BACKLOG_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// ... or until they hold this many staged ops: bounds their memory and the overlay the first
/// reader of a version builds (~1 us per op here, building and dropping). Measured and
/// dropped (2026-11-29): 1M ops, W sync at batch 1000, 3 alternating pairs (256K / 1M):
/// 554,986/573,668, 570,319/539,855, 583,230/557,101 writes/s.
pub const UNAPPLIED_MAX_OPS: usize = 256 * 1024;

/// Recovery applies log records in LMDB transactions of up to this many record bytes
/// (`kv::wal::recovery`): it guards the checkpoint's pages while it replays, so every
/// transaction copies the pages it touches to fresh ones, and one transaction per record grew
/// the file by every page each record touched. A batch that dirties more pages than LMDB
/// allows one transaction is split in halves until it fits.
pub const REPLAY_BATCH_BYTES: usize = 4 * 1024 * 1024;

/// ... or until this many groups wait (each holds its stage; publishing one is O(1), since
/// versions share their list of groups).
pub const UNAPPLIED_MAX_GROUPS: usize = 16 * 1024;

/// ... or at once after a reader met at least this many waiting ops: any. A workload that
/// reads between writes pays for merging the waiting groups into every read (building their
/// overlay, then merging it into each index read), so the applier is hurried as soon as a
/// reader meets one; under a heavy write load the backlog is always large, so a higher
/// threshold would not spare the applier there. W mixed phase (one write then one read per
/// iteration, 40,000 iterations, 3 runs each), raw reads: 0.045-0.052 ms a read at 64 ops,
/// 0.012 at 8, 0.011-0.013 at 1 (0.010 before the log); iterations/s within the noise.
/// Since 2026-11-29 a reader asks this once per `UNAPPLIED_HURRY`; the publishes in between
/// wake the applier, which then applies at once.
pub const UNAPPLIED_READER_OPS: usize = 1;

/// With the log, batches whose requests' size hints add up to more than this are written into
/// LMDB at once, as their own commit, instead of later (`kv::committer::later`). Large
/// batches are CPU-bound: merging their writes into the committer's overlay (~0.7 us per
/// staged op) then costs more than their own LMDB commit; smaller ones gain from leaving LMDB
/// to the applier thread. W, Datalog, alternating runs against 64 KiB: sync batch 1000 (one
/// request, ~100 KiB) 82,329/104,817 -> 168,701/167,962 writes/s; async batch 1 (~1000
/// requests a batch) 57,449/63,326 -> 70,974/73,073; async batch 10 133,089/128,107 ->
/// 148,386/120,106; with 64 MiB (every batch later) async batch 100 fell from
/// 253,174/242,685 to 169,543/116,784.
///
/// A batch whose requests all let the committer defer their list-table writes (Datalog
/// transactions, `committer::later::Working`: only their keys' bounds are recorded) is
/// written later whatever its size: W, Datalog, async, 12 s alternating runs, 1 MiB against
/// no bound: batch 100 256,880/335,483 and 251,410/321,676 writes/s; batch 1000
/// 200,999/218,791 and 180,816/190,350; batch 10 195,655/243,600. As built (this rule against
/// 539b552): batch 100 219,639/278,955 and 205,671/281,453, commit p50 408/228 and 434/209 ms,
/// p99 530/782 and 538/812 ms; batch 1000 201,206/232,362.
pub const LATER_MAX_BATCH_BYTES: usize = 1024 * 1024;

/// A batch's stage above this many bytes goes to its unapplied group as it is, where a
/// smaller one is copied (`kv::committer::later`: the committer keeps its own stage, grown to
/// its largest batch, which spares small batches an allocation each). Copying a bulk load of
/// 100K datoms (workload Q's `init`, ~10 MB of ops) was 7% of its samples.
pub const STAGE_HAND_OVER_BYTES: usize = 1024 * 1024;

/// After a reader met waiting groups, the groups published within this long are applied
/// soon (`UNAPPLIED_HURRY_AGE`, `kv::unapplied::signal::Signal::nudge`), without the reader
/// waking the applier each time: a workload that reads between writes keeps its snapshots
/// close to LMDB's state for the price of the one wake each publish already makes.
pub const UNAPPLIED_HURRY: std::time::Duration = std::time::Duration::from_millis(20);

/// While a hurry is on, waiting groups are applied once the oldest has waited this long, or
/// as soon as they hold `UNAPPLIED_HURRY_OPS` ops. Each LMDB transaction rewrites the pages
/// from the root to every leaf it touches, on the applier's core; a reader on the other core
/// then reads those pages from memory, not from its cache. Applying every group at once (W's
/// mixed phase: one transaction per write) did so before nearly every read; a few writes a
/// transaction let several reads share the pages, at the cost of scanning a few small
/// groups. W mixed phase (`write --writes 30000 --mixed 40000 --batches 1`, dl-sync),
/// alternating runs at once / 2 ms / 5 ms, raw read us: 9.89/9.35/42.19, 9.76/9.74/44.57,
/// 9.10/9.42/41.11; query read us 21.85/20.24/50.40, 23.58/21.07/51.76, 23.97/21.94/51.77;
/// iterations/s 3,507/5,001/4,400, 3,228/4,569/4,039, 3,817/4,597/4,561. At ~4,500 writes/s
/// of at least 13 ops each (a W write at batch 1 stages 13), 5 ms of groups hold ~290 ops or
/// more, above `UNAPPLIED_READER_MERGE_OPS`, past which a reader writes them into LMDB itself.
pub const UNAPPLIED_HURRY_AGE: std::time::Duration = std::time::Duration::from_millis(2);

/// See `UNAPPLIED_HURRY_AGE`: half of what a reader merges, so that a faster writer does not
/// push the groups past `UNAPPLIED_READER_MERGE_OPS` before their age is up.
pub const UNAPPLIED_HURRY_OPS: usize = UNAPPLIED_READER_MERGE_OPS / 2;

/// A reader merges up to this many waiting ops into its reads: building their overlay costs a
/// few microseconds, where writing them into LMDB first would cost an LMDB commit (~50 us)
/// on the read's path.
///
/// More than that it writes into LMDB itself before its snapshot begins (or waits for the
/// applier writing them), however many, so the snapshot reads LMDB alone: a `Db` taken right
/// after writes is often kept for many reads, each of which would merge the overlay, and
/// writing the groups costs less than building their overlay, work the applier then saves.
/// Until 2026-11-29 a backlog over 256K ops (a burst's, up to the log ring) was merged
/// instead; the first read after W's 1M writes at batch 1000 (its count check, 2 runs each)
/// took 356 and 1,340 ms (sync) and 1,815 and 1,492 ms (async) merging, 282 and 394 ms and
/// 380 and 676 ms writing.
pub const UNAPPLIED_READER_MERGE_OPS: usize = 256;

/// A snapshot that carries at most this many ops of waiting groups looks up the keys each
/// group writes (listed and sorted once per group) and builds their overlay only for a read
/// that meets one (`kv::overlay::touched`): listing costs a copy of each key and one sort,
/// where the overlay costs allocations per op (~1 us an op, building and dropping). Above it
/// (a reader that waited out `UNAPPLIED_READER_WAIT`), a scan is likely to meet one anyway
/// and every read would search many groups' lists, so the overlay is built up front.
/// W's mixed phase (a write then a read per iteration, 3 alternating pairs of runs), raw
/// reads 0.013/0.014/0.015 ms before, 0.010/0.010/0.011 after; query reads 0.022/0.024/0.038
/// and 0.022/0.023/0.030.
pub const UNAPPLIED_TOUCHED_MAX_OPS: usize = 4 * 1024;

/// A waiting group of at most this many ops is searched op by op instead of listing its
/// keys (`kv::overlay::touched::scan_meets`): a sorted list costs two allocations and a sort
/// on a reader's path, where a few comparisons answer as fast (W's pure write stages ~5 ops a
/// record: 3,547,038 ops in 72,389 groups of 10 records, by its commit timing).
pub const UNAPPLIED_SCAN_OPS: usize = 16;

/// How long a reader waits for the applier to write the groups it would otherwise write
/// itself (above `UNAPPLIED_READER_MERGE_OPS`) before it merges them instead: the applier may
/// be held up by a map growth that waits for snapshots, or be writing a much larger backlog.
pub const UNAPPLIED_READER_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// The CPU priority (a nice value) of the helper thread that sorts a large LMDB apply's later
/// tables (`kv::stage`, the applier's transactions of 32K ops or more). The applier then runs
/// two CPU-bound threads beside the committer on its path; at normal priority a committer
/// woken by its log sync could find both cores taken. The helper is short-lived, so the lower
/// priority only delays the apply a little when the cores are busy. W, Datalog, alternating
/// runs of the same build at nice 0 / 10 (writes/s, commit p99 ms): sync batch 100
/// 297,350/326,154 (1.69/0.78), 263,592/272,296 (1.95/1.01), 277,229/244,269 (1.49/1.19);
/// sync batch 1000 422,726/425,814, 458,204/527,651, 495,527/529,807; async batch 1000
/// 514,141/613,895, 546,619/604,011, 514,207/547,851; sync batch 10 45,536/50,316,
/// 54,302/55,062, 51,835/50,497 (batch 1 never splits its applies). Measured and dropped
/// (2026-11-29): the applier and the checkpointer themselves at nice 10, W sync at batch 100,
/// 3 alternating pairs (nice 0 / 10): 264,626/232,561, 242,928/223,844, 237,360/243,611
/// writes/s.
pub const SORT_HELPER_NICE: i32 = 10;

/// Requests that may wait in the committer's queue. A full queue blocks the caller
/// (back-pressure) instead of letting memory grow without bound.
pub const WRITE_QUEUE_CAPACITY: usize = 16 * 1024;

/// Stack a recursive step of the query engine or pull may start with (`stack::deep`): one
/// level of nested clauses took ~36 KiB in an unoptimized build (the executor's `clause` and
/// `run_steps` frames), so this leaves room for several levels between checks.
pub const STACK_RED_ZONE_BYTES: usize = 256 * 1024;

/// The size of each extra stack segment `stack::deep` switches to when a thread's own runs
/// low: big enough that a deep recursion switches rarely (each switch maps a segment), small
/// enough that one costs little.
pub const STACK_SEGMENT_BYTES: usize = 4 * 1024 * 1024;

/// EDN forms nest at most this deep where Datalith reads them (text, and so every query,
/// transaction and request body); printing, comparing and dropping a value recurse on its
/// nesting, so what Datalith makes (a pulled entity) stays within it too.
pub const MAX_EDN_DEPTH: usize = 512;

/// Clauses nest in clauses (`or`, `and`, `not`, `or-join`, `not-join`) at most this deep, a
/// `:where` clause or a rule body's being depth 1; deeper is a malformed clause. Every pass
/// over a query (lowering, checking, planning, running, printing a plan) recurses on this
/// nesting, so it bounds the stack they take; queries written by people or generated by
/// programs nest a few levels, and 64 levels of the checker took ~300 KiB of stack in an
/// unoptimized build (the runner and the lowering take theirs through `stack::deep`).
pub const MAX_CLAUSE_DEPTH: usize = 64;

/// Entities a pull may follow references through, one inside another (the top one
/// included). Each is a map in the pulled value and, below a cardinality-many attribute, in a
/// vector too, so a pulled value nests at most about twice this deep: within
/// `MAX_EDN_DEPTH`, with room for the query's result around it, so that an answer Datalith
/// gives reads back (a server's client reads it). Deeper is `PullError::TooDeep`. Datomic's
/// peer (1.0.7075) pulled 300 levels of a chain and failed at 400 (`StackOverflowError`).
pub const MAX_PULL_DEPTH: u32 = 250;

/// Rules calling rules, one inside another, through calls that are not the recursion of one
/// rule on itself (which is evaluated to its fixpoint without nesting): past it a query is
/// refused (`rules nested too deeply`) instead of expanding calls without end.
pub const MAX_RULE_DEPTH: u32 = 64;

/// The longest string a query function builds from pieces its arguments multiply
/// (`clojure.string/join`'s separator between items, `replace`'s replacement at every
/// match): a function call runs to its end whatever the query's timeout, so `(replace s #""
/// s)` on a megabyte would otherwise ask for a terabyte. 256 MiB, as a key-value value.
pub const MAX_BUILT_STRING_BYTES: usize = MAX_VALUE_BYTES;

/// Tuples may nest at most this deep (`Value::tuple_depth`; 1 is a tuple of scalars); decoding
/// deeper bytes is refused rather than recursing without bound on untrusted input.
pub const MAX_TUPLE_DEPTH: u32 = 8;

/// Bytes of an attribute id at the front of an AVE key and of an EAV list value (the store's
/// `keys::ATTR_BYTES` must equal this).
pub const ATTR_ID_BYTES: usize = 4;

/// The longest index form of a value. The AVE key is `attribute id ++ value form` and the EAV
/// list (dupsort) value is the same bytes; both must fit in `MAX_KEY_BYTES`.
pub const MAX_INDEXED_VALUE_BYTES: usize = MAX_KEY_BYTES - ATTR_ID_BYTES;

/// Bytes of the hash that names a giant value (a value too long to index inline). 128 bits of
/// BLAKE3: an accidental collision needs ~2^64 giants, and the store checks for one on write.
pub const GIANT_HASH_BYTES: usize = 16;

/// Bytes of a giant's encoding kept, as an order-preserving prefix, in its index key
/// (`prefix ++ hash` fills `MAX_INDEXED_VALUE_BYTES` exactly).
pub const GIANT_PREFIX_BYTES: usize = MAX_INDEXED_VALUE_BYTES - GIANT_HASH_BYTES;

/// The longest encoding indexed inline; longer ones are giants. It must not exceed
/// `GIANT_PREFIX_BYTES`: then an inline encoding and a giant's prefix always differ within the
/// prefix (encodings are prefix-free), so inline values and giants compare exactly, and an
/// index key's length alone says which kind it is.
pub const MAX_INLINE_VALUE_BYTES: usize = GIANT_PREFIX_BYTES;

/// Bytes of a history event before its value: attribute id, transaction id, added flag
/// (`store::history`).
pub const HISTORY_EVENT_HEAD_BYTES: usize = ATTR_ID_BYTES + 8 + 1;

/// The longest value form in a history event: the event is an LMDB list (dupsort) value, so
/// head and value must fit in `MAX_KEY_BYTES`.
pub const HISTORY_MAX_VALUE_BYTES: usize = MAX_KEY_BYTES - HISTORY_EVENT_HEAD_BYTES;

/// The longest encoding a history event holds inline; a longer one keeps this many bytes of
/// its encoding and a `GIANT_HASH_BYTES` hash (exactly `HISTORY_MAX_VALUE_BYTES`), and its
/// whole encoding is read from the transaction log entry of the event's transaction.
pub const HISTORY_INLINE_VALUE_BYTES: usize = HISTORY_MAX_VALUE_BYTES - GIANT_HASH_BYTES;

/// Group commits whose snapshot (the state before the batch, for the reports' `db_before` /
/// `db_after`) stays available. Each pins LMDB pages and a reader slot while any report of
/// its batch lives; keeping only the latest few bounds both, and a map growth releases all.
pub const MAX_RETAINED_BATCH_SNAPSHOTS: usize = 8;

/// `IndexReader::values_of_each` scans the attribute's AVE entries instead of looking up each
/// entity when the entities number at least 1/this of the attribute's datoms: a sequential
/// AVE entry (entity ids read a page at a time) costs about this many times less than an EAV
/// lookup.
pub const VALUES_SCAN_SHARE: u64 = 12;

/// Under `MDB_WRITEMAP` the warmer (`kv::warm`) faults in the file region a batch will likely
/// grow into, this many bytes per byte of the batch's size hint (what `EnvCore::ensure_room`
/// also assumes: LMDB needs about twice the payload in pages while copying on write, plus
/// branch pages) ...
pub const WARM_AHEAD_PER_BATCH_BYTE: usize = 3;
/// ... at least this much (a batch of small transactions still grows the file a little, and
/// one `madvise` per megabyte is cheaper than one per batch) ...
pub const WARM_AHEAD_MIN_BYTES: usize = 1 << 20;
/// ... and at most this much: the pages it faults in are written back as zeros if LMDB never
/// uses them, so a wild size hint must not dirty gigabytes.
pub const WARM_AHEAD_MAX_BYTES: usize = 64 << 20;

/// Where commits flush their data pages (`Durable`, `NoMetaSync`), a commit whose batch staged at
/// least this many operations has the flusher (`kv::flush`) start write-back of its pages while
/// LMDB is still writing them. Below it a commit dirties a few pages, which its own `fdatasync`
/// writes back sooner than a helper thread could be woken.
pub const FLUSH_AHEAD_MIN_OPS: usize = 256;
/// How often the flusher asks the kernel to start write-back during such a commit. Measured on
/// workload W at batch 1 (~1,300 dirty pages a commit): 30 us to 1 ms all took the same share
/// of write-back off the committer; 200 us keeps the helper's own CPU small.
pub const FLUSH_AHEAD_INTERVAL_MICROS: u64 = 200;

/// A transaction that defers its writes (`kv::pending`) and staged fewer ops than this waits
/// for the batch's one sorted pass; a larger one is written at once (with whatever is
/// pending), its own sort already giving its keys locality, so its key bounds need not be
/// kept. W: batch 100 (~400 ops a transaction) gains from the shared pass, batch 1000 (~4,000)
/// does not.
pub const DEFER_MAX_OPS: usize = 2048;

/// The longest term a full-text index keeps (bytes of UTF-8); a longer word is not indexed.
/// Real words are far shorter; what is longer is a hash, a URL or base64, which nobody
/// searches for by word, and a bound keeps every postings key well inside `MAX_KEY_BYTES`.
pub const MAX_SEARCH_TERM_BYTES: usize = 120;

/// Postings of one term are stored in blocks of at most this many documents (one LMDB value
/// each, `search::block`): small enough that adding a document to a term rewrites little,
/// large enough that a block's header (its last document and its best score) lets a top-k
/// search skip 128 documents at a time.
pub const SEARCH_BLOCK_DOCS: usize = 128;

/// A prefix query (`hik*`) expands to at most this many terms; a shorter prefix that
/// matches more is refused with a typed error (Lucene's `maxClauseCount` serves the same
/// purpose) rather than reading a large part of the dictionary.
pub const MAX_PREFIX_TERMS: usize = 4096;

/// The longest search query text accepted (bytes).
pub const MAX_SEARCH_QUERY_BYTES: usize = 64 * 1024;

/// The most threads one query runs on by default (`QueryOptions::threads`): its parts share
/// one snapshot and each takes a copy of the clauses, so more threads than this gain little
/// on the large steps spreading is for, and a server's concurrent queries need cores too.
pub const MAX_QUERY_THREADS: usize = 4;

/// Datoms of a first step's scan read in one part when a query's items are handed on as they
/// are made (`Db::q_each`, `query::exec::parts`): each part's rows, and what the later steps
/// make of them, are held until handed on, so this bounds the answer's memory (a few MiB of
/// rows a part for a few columns). Twice `SPREAD_FROM_ROWS`: a part's later steps are then
/// large enough to be spread over two threads, as the whole plan's are (with parts of 8,192
/// datoms, a scan of 333,340 rows and a lookup each took 284 ms on one core against 204 ms
/// whole).
pub const QUERY_PART_ROWS: usize = 32_768;

/// The threads a query runs on when its options do not say: the machine's cores, at most
/// [`MAX_QUERY_THREADS`] (1 when the count cannot be read).
pub fn query_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .min(MAX_QUERY_THREADS)
    })
}
