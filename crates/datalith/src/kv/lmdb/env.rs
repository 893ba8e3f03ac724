//! The LMDB environment: one memory-mapped file, opened once per process.

use lmdb_master_sys as ffi;
use std::collections::HashSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex};

use super::error::{check, LmdbError};
use super::map_guard::MapGuard;
use super::txn::{RoTxn, RwTxn};

/// Environment flags (a subset of LMDB's `mdb_env_open` flags that Datalith uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct EnvFlags(pub(crate) u32);

impl EnvFlags {
    pub(crate) const NO_SYNC: EnvFlags = EnvFlags(ffi::MDB_NOSYNC);
    pub(crate) const NO_META_SYNC: EnvFlags = EnvFlags(ffi::MDB_NOMETASYNC);
    pub(crate) const WRITE_MAP: EnvFlags = EnvFlags(ffi::MDB_WRITEMAP);
    pub(crate) const MAP_ASYNC: EnvFlags = EnvFlags(ffi::MDB_MAPASYNC);
    pub(crate) const NO_READ_AHEAD: EnvFlags = EnvFlags(ffi::MDB_NORDAHEAD);
    pub(crate) const READ_ONLY: EnvFlags = EnvFlags(ffi::MDB_RDONLY);
    pub(crate) const NO_LOCK: EnvFlags = EnvFlags(ffi::MDB_NOLOCK);

    pub(crate) fn empty() -> EnvFlags {
        EnvFlags(0)
    }

    pub(crate) fn contains(self, other: EnvFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for EnvFlags {
    type Output = EnvFlags;
    fn bitor(self, o: EnvFlags) -> EnvFlags {
        EnvFlags(self.0 | o.0)
    }
}

impl std::ops::BitOrAssign for EnvFlags {
    fn bitor_assign(&mut self, o: EnvFlags) {
        self.0 |= o.0;
    }
}

/// Sizes the environment is opened with.
pub(crate) struct EnvLimits {
    pub(crate) map_bytes: usize,
    pub(crate) max_readers: u32,
    pub(crate) max_dbs: u32,
}

/// What `mdb_env_info` reports that we use.
pub(crate) struct EnvInfo {
    pub(crate) map_size: usize,
    pub(crate) last_page_number: usize,
}

struct EnvInner {
    ptr: NonNull<ffi::MDB_env>,
    /// The canonical path, registered in `OPEN` while this environment lives.
    path: PathBuf,
    /// The map's `SIGBUS` guard (set once the map exists).
    guard: std::sync::OnceLock<MapGuard>,
    /// Read-only transactions ended with `mdb_txn_reset`, for the next snapshots to renew:
    /// beginning one allocates and zeroes its handle and takes the reader table's lock to find
    /// a slot, where a renewal keeps both (at most `limits::IDLE_READ_TXNS`).
    idle: Mutex<Vec<IdleTxn>>,
}

/// A reset read-only transaction of the environment that holds it (see `EnvInner::idle`).
pub(crate) struct IdleTxn(pub(crate) NonNull<ffi::MDB_txn>);

// SAFETY: with MDB_NOTLS a read-only transaction belongs to no thread; an idle one is only
// renewed or aborted, by whoever takes it out of the pool.
unsafe impl Send for IdleTxn {}

// SAFETY: an LMDB environment handle may be used from any thread (LMDB locks internally);
// with MDB_NOTLS read transactions are not tied to threads either.
unsafe impl Send for EnvInner {}
// SAFETY: as above: every LMDB call on an environment is thread-safe, except
// `mdb_env_set_mapsize`, whose caller must guarantee no transaction is open (`Env::resize`
// is unsafe for that reason).
unsafe impl Sync for EnvInner {}

impl Drop for EnvInner {
    fn drop(&mut self) {
        abort_idle(&self.idle);
        // The map stops being ours before it is unmapped.
        drop(self.guard.take());
        // SAFETY: the last holder is gone: every transaction holds an `Env` clone, so none is
        // open; the handle is closed exactly once.
        unsafe { ffi::mdb_env_close(self.ptr.as_ptr()) };
        open_paths()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.path);
    }
}

/// Ends every idle transaction in `idle`.
fn abort_idle(idle: &Mutex<Vec<IdleTxn>>) {
    let txns = std::mem::take(&mut *idle.lock().unwrap_or_else(|p| p.into_inner()));
    for t in txns {
        // SAFETY: a reset transaction of this environment, owned by the pool and ended once.
        unsafe { ffi::mdb_txn_abort(t.0.as_ptr()) };
    }
}

/// Directories with an environment open in this process. LMDB must not open one file twice in
/// a process (closing either handle would drop the other's POSIX locks).
fn open_paths() -> &'static Mutex<HashSet<PathBuf>> {
    static OPEN: std::sync::OnceLock<Mutex<HashSet<PathBuf>>> = std::sync::OnceLock::new();
    OPEN.get_or_init(Default::default)
}

/// Why an environment could not be opened.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// LMDB refused.
    Lmdb(LmdbError),
    /// This process already has the directory open.
    AlreadyOpen,
    /// The path could not be resolved or named.
    Io(std::io::Error),
}

/// A shared handle to an open environment; it closes when the last clone (and so the last
/// transaction) is gone.
#[derive(Clone)]
pub(crate) struct Env {
    inner: Arc<EnvInner>,
}

impl Env {
    /// Opens the environment in directory `path` (which must exist), with `MDB_NOTLS`.
    pub(crate) fn open(path: &Path, flags: EnvFlags, limits: EnvLimits) -> Result<Env, OpenError> {
        let canonical = path.canonicalize().map_err(OpenError::Io)?;
        let c_path = CString::new(canonical.as_os_str().as_bytes()).map_err(|_| {
            OpenError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "path contains a NUL byte",
            ))
        })?;
        let mut open = open_paths().lock().unwrap_or_else(|p| p.into_inner());
        if open.contains(&canonical) {
            return Err(OpenError::AlreadyOpen);
        }
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a valid out pointer.
        check(unsafe { ffi::mdb_env_create(&mut raw) }).map_err(OpenError::Lmdb)?;
        let ptr = NonNull::new(raw).ok_or(OpenError::Lmdb(LmdbError { code: libc::ENOMEM }))?;
        // From here the handle is closed by `EnvInner::drop` on every path.
        let env = Env {
            inner: Arc::new(EnvInner {
                ptr,
                path: canonical.clone(),
                guard: std::sync::OnceLock::new(),
                idle: Mutex::new(Vec::new()),
            }),
        };
        // SAFETY: a freshly created, not yet opened environment: these setters are allowed
        // before `mdb_env_open`; the path is a valid NUL-terminated string.
        let rc = unsafe {
            check(ffi::mdb_env_set_mapsize(raw, limits.map_bytes))
                .and_then(|()| check(ffi::mdb_env_set_maxreaders(raw, limits.max_readers)))
                .and_then(|()| check(ffi::mdb_env_set_maxdbs(raw, limits.max_dbs)))
                .and_then(|()| {
                    check(ffi::mdb_env_open(
                        raw,
                        c_path.as_ptr(),
                        flags.0 | ffi::MDB_NOTLS,
                        0o600,
                    ))
                })
        };
        match rc {
            Ok(()) => {
                let _ = env
                    .inner
                    .guard
                    .set(MapGuard::register(&canonical.join("data.mdb")));
                open.insert(canonical);
                Ok(env)
            }
            Err(e) => {
                // Closes the handle; the path was never registered (removing is a no-op).
                drop(open);
                drop(env);
                Err(OpenError::Lmdb(e))
            }
        }
    }

    pub(crate) fn as_ptr(&self) -> *mut ffi::MDB_env {
        self.inner.ptr.as_ptr()
    }

    /// The descriptor LMDB writes the data file through (owned by LMDB: duplicate it to keep it).
    pub(crate) fn data_fd(&self) -> Result<std::os::fd::RawFd, LmdbError> {
        let mut fd: ffi::mdb_filehandle_t = -1;
        // SAFETY: valid environment and out pointer.
        check(unsafe { ffi::mdb_env_get_fd(self.as_ptr(), &mut fd) })?;
        Ok(fd)
    }

    /// Map size and last used page.
    pub(crate) fn info(&self) -> EnvInfo {
        // SAFETY: MDB_envinfo is plain data; the environment is open.
        let mut info: ffi::MDB_envinfo = unsafe { std::mem::zeroed() };
        // SAFETY: valid environment and out pointer; `mdb_env_info` cannot fail on them.
        unsafe { ffi::mdb_env_info(self.as_ptr(), &mut info) };
        EnvInfo {
            map_size: info.me_mapsize,
            last_page_number: info.me_last_pgno,
        }
    }

    /// Entries of the unnamed (main) database: the named tables, and anything else.
    pub(crate) fn main_entries(&self) -> Result<u64, LmdbError> {
        // SAFETY: MDB_stat is plain data.
        let mut stat: ffi::MDB_stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid environment and out pointer.
        check(unsafe { ffi::mdb_env_stat(self.as_ptr(), &mut stat) })?;
        Ok(stat.ms_entries as u64)
    }

    /// The data file's page size (LMDB's `ms_psize`).
    pub(crate) fn page_bytes(&self) -> Result<usize, LmdbError> {
        // SAFETY: MDB_stat is plain data.
        let mut stat: ffi::MDB_stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid environment and out pointer.
        check(unsafe { ffi::mdb_env_stat(self.as_ptr(), &mut stat) })?;
        Ok(stat.ms_psize as usize)
    }

    /// Sets the map size.
    ///
    /// # Safety
    /// No transaction of this process may be open on the environment (LMDB's rule for
    /// `mdb_env_set_mapsize`).
    pub(crate) unsafe fn resize(&self, bytes: usize) -> Result<(), LmdbError> {
        // Idle transactions hold no snapshot, but none is kept across a new map, to be sure.
        abort_idle(&self.inner.idle);
        // SAFETY: the caller guarantees no open transaction.
        check(unsafe { ffi::mdb_env_set_mapsize(self.as_ptr(), bytes) })?;
        if let Some(g) = self.inner.guard.get() {
            g.refresh(&self.inner.path.join("data.mdb"));
        }
        Ok(())
    }

    /// Whether a read met the end of a data file that shrank while mapped (see `map_guard`).
    pub(crate) fn shrunk(&self) -> bool {
        self.inner.guard.get().is_some_and(MapGuard::shrunk)
    }

    /// Whether another process has a reader slot in the lock file (it opened the environment
    /// and read; the slot stays while it has it open). Slots of processes that died are
    /// cleared first.
    pub(crate) fn other_process_reads(&self) -> bool {
        extern "C" fn each(msg: *const libc::c_char, ctx: *mut libc::c_void) -> libc::c_int {
            // SAFETY: LMDB passes a NUL-terminated line and our `ctx`, a `*mut Found`.
            let (line, found) =
                unsafe { (std::ffi::CStr::from_ptr(msg), &mut *(ctx as *mut Found)) };
            // "       pid     thread txnid": the first word of a slot's line is its pid
            // (the header's first word is "pid", which does not parse).
            let pid = line
                .to_str()
                .ok()
                .and_then(|l| l.split_whitespace().next())
                .and_then(|w| w.parse::<u32>().ok());
            if pid.is_some_and(|p| p != found.own) {
                found.other = true;
            }
            0
        }
        struct Found {
            own: u32,
            other: bool,
        }
        let mut found = Found {
            own: std::process::id(),
            other: false,
        };
        let mut dead = 0;
        // SAFETY: open environment; `dead` is a valid out pointer. A failure leaves stale
        // slots, which only make this answer "yes" for longer.
        unsafe { ffi::mdb_reader_check(self.as_ptr(), &mut dead) };
        // SAFETY: open environment; `each` matches `MDB_msg_func` and reads `ctx` as the
        // `Found` it is, which outlives the call.
        unsafe {
            ffi::mdb_reader_list(
                self.as_ptr(),
                Some(each),
                &mut found as *mut Found as *mut libc::c_void,
            )
        };
        found.other
    }

    /// Writes a compacted copy (`MDB_CP_COMPACT`) to `out` (a file or a pipe: LMDB writes it
    /// in one sequential pass, meta pages first, and goes on after short writes).
    pub(crate) fn copy_compacted(&self, out: std::os::fd::BorrowedFd<'_>) -> Result<(), LmdbError> {
        use std::os::fd::AsRawFd;
        // SAFETY: open environment; the descriptor is open for writing and outlives the call
        // (borrowed). The copy runs its own read transaction and only writes to `out`.
        check(unsafe { ffi::mdb_env_copyfd2(self.as_ptr(), out.as_raw_fd(), ffi::MDB_CP_COMPACT) })
    }

    /// Flushes every committed page to the device (`mdb_env_sync` forced): what a commit
    /// under `MDB_NOSYNC` skipped. Safe while other transactions run.
    pub(crate) fn sync(&self) -> Result<(), LmdbError> {
        // SAFETY: open environment; LMDB serializes the flush with its own state.
        check(unsafe { ffi::mdb_env_sync(self.as_ptr(), 1) })
    }

    /// A read-only transaction (a snapshot).
    pub(crate) fn read_txn(&self) -> Result<RoTxn, LmdbError> {
        RoTxn::begin(self.clone())
    }

    /// A reset read-only transaction to renew, if one is idle.
    pub(crate) fn take_idle(&self) -> Option<IdleTxn> {
        self.inner
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
    }

    /// Keeps a reset read-only transaction for a later snapshot; gives it back when the pool
    /// is full.
    pub(crate) fn keep_idle(&self, txn: IdleTxn) -> Option<IdleTxn> {
        let mut idle = self.inner.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() >= crate::limits::IDLE_READ_TXNS {
            return Some(txn);
        }
        idle.push(txn);
        None
    }

    /// The write transaction (LMDB serializes writers with its own lock).
    pub(crate) fn write_txn(&self) -> Result<RwTxn, LmdbError> {
        RwTxn::begin(self.clone())
    }
}
