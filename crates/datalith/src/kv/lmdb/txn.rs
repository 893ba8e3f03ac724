//! Transactions and table handles.

use lmdb_master_sys as ffi;
use std::ffi::CString;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use super::env::{Env, IdleTxn};
use super::error::{check, found, LmdbError};

/// A table handle (LMDB's `MDB_dbi`): a number valid for the environment's lifetime once the
/// transaction that opened it committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dbi(pub(crate) ffi::MDB_dbi);

/// Flags of a put.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PutFlags(pub(crate) u32);

impl PutFlags {
    /// An ordinary insert (placed by search).
    pub(crate) const NONE: PutFlags = PutFlags(0);
    /// The key sorts after every key of the table (`MDB_APPEND`).
    pub(crate) const APPEND: PutFlags = PutFlags(ffi::MDB_APPEND);
    /// The value sorts after every value of its key (`MDB_APPENDDUP`).
    pub(crate) const APPEND_DUP: PutFlags = PutFlags(ffi::MDB_APPENDDUP);
    /// Only if the key is absent (`MDB_NOOVERWRITE`; in a list table: absent with any value).
    pub(crate) const NO_OVERWRITE: PutFlags = PutFlags(ffi::MDB_NOOVERWRITE);
}

/// An `MDB_val` pointing at `bytes` (LMDB only reads through it for inputs).
#[inline]
pub(crate) fn val(bytes: &[u8]) -> ffi::MDB_val {
    ffi::MDB_val {
        mv_size: bytes.len(),
        mv_data: bytes.as_ptr() as *mut libc::c_void,
    }
}

/// The bytes an `MDB_val` returned by LMDB points at.
///
/// # Safety
/// `v` must come from LMDB for a transaction that outlives `'t` and that is not written
/// through while the slice lives (the borrow of the transaction guarantees both).
#[inline]
pub(crate) unsafe fn bytes<'t>(v: &ffi::MDB_val) -> &'t [u8] {
    if v.mv_size == 0 {
        return &[];
    }
    // SAFETY: per the contract, LMDB's pointer is valid for `mv_size` bytes for 't.
    unsafe { std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size) }
}

/// A transaction: read-only ([`RoTxn`]) or the read side of a [`RwTxn`].
pub(crate) struct RoTxn {
    /// `None` once committed or aborted.
    ptr: Option<NonNull<ffi::MDB_txn>>,
    /// Keeps the environment open while the transaction lives, and takes it back reset.
    env: Env,
    /// A read-only transaction: reset into the environment's pool when dropped, not freed.
    reusable: bool,
}

// SAFETY: the environment is opened with MDB_NOTLS, so a read-only transaction may move
// between threads (LMDB ties its reader slot to the object, not the thread). Write
// transactions are wrapped in `RwTxn`, which is not Send.
unsafe impl Send for RoTxn {}

impl RoTxn {
    pub(crate) fn begin(env: Env) -> Result<RoTxn, LmdbError> {
        if let Some(idle) = env.take_idle() {
            // SAFETY: a read-only transaction of this environment, reset when it was dropped
            // and owned by us alone since it left the pool.
            match check(unsafe { ffi::mdb_txn_renew(idle.0.as_ptr()) }) {
                Ok(()) => {
                    return Ok(RoTxn {
                        ptr: Some(idle.0),
                        env,
                        reusable: true,
                    })
                }
                // SAFETY: as above; a failed renewal leaves a handle to free.
                Err(_) => unsafe { ffi::mdb_txn_abort(idle.0.as_ptr()) },
            }
        }
        Self::begin_with(env, ffi::MDB_RDONLY)
    }

    fn begin_with(env: Env, flags: u32) -> Result<RoTxn, LmdbError> {
        let mut raw = ptr::null_mut();
        // SAFETY: open environment, no parent, valid out pointer.
        check(unsafe { ffi::mdb_txn_begin(env.as_ptr(), ptr::null_mut(), flags, &mut raw) })?;
        Ok(RoTxn {
            ptr: NonNull::new(raw),
            env,
            reusable: flags & ffi::MDB_RDONLY != 0,
        })
    }

    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut ffi::MDB_txn {
        self.ptr.map_or(ptr::null_mut(), NonNull::as_ptr)
    }

    /// LMDB's transaction id (grows with every commit).
    pub(crate) fn id(&self) -> usize {
        // SAFETY: a live transaction.
        unsafe { ffi::mdb_txn_id(self.as_ptr()) }
    }

    /// The value of `key` (the first value for a list table).
    pub(crate) fn get(&self, dbi: Dbi, key: &[u8]) -> Result<Option<&[u8]>, LmdbError> {
        let mut k = val(key);
        let mut v = val(&[]);
        // SAFETY: live transaction, valid handle and in/out values.
        let rc = unsafe { ffi::mdb_get(self.as_ptr(), dbi.0, &mut k, &mut v) };
        // SAFETY: `v` comes from LMDB for this transaction, borrowed by the result.
        Ok(found(rc)?.then(|| unsafe { bytes(&v) }))
    }

    /// Number of entries in the table.
    pub(crate) fn entries(&self, dbi: Dbi) -> Result<u64, LmdbError> {
        // SAFETY: MDB_stat is plain data.
        let mut stat: ffi::MDB_stat = unsafe { std::mem::zeroed() };
        // SAFETY: live transaction, valid handle and out pointer.
        check(unsafe { ffi::mdb_stat(self.as_ptr(), dbi.0, &mut stat) })?;
        Ok(stat.ms_entries as u64)
    }

    /// Opens the named table, `None` if it does not exist. With `create` (write transactions
    /// only) a missing table is made, as a list (dupsort) table when `list`, whose values all
    /// have one width when `fixed` (dupfixed). The handle becomes usable by other transactions
    /// once this one commits.
    pub(crate) fn open_dbi(
        &self,
        name: &str,
        create: bool,
        list: bool,
        fixed: bool,
    ) -> Result<Option<Dbi>, LmdbError> {
        let c_name = CString::new(name).map_err(|_| LmdbError { code: libc::EINVAL })?;
        let mut flags = 0;
        if create {
            flags |= ffi::MDB_CREATE;
        }
        if list {
            flags |= ffi::MDB_DUPSORT;
        }
        if list && fixed {
            flags |= ffi::MDB_DUPFIXED;
        }
        let mut dbi = 0;
        // SAFETY: live transaction, NUL-terminated name, valid out pointer. Callers open
        // tables one transaction at a time (LMDB's rule for `mdb_dbi_open`): the environment
        // opens tables under its table-map lock, in a transaction of its own.
        let rc = unsafe { ffi::mdb_dbi_open(self.as_ptr(), c_name.as_ptr(), flags, &mut dbi) };
        if !found(rc)? {
            return Ok(None);
        }
        // SAFETY: a handle just opened by this transaction, before any data access through it
        // by this process; the comparator gives LMDB's default order (see `compare`), so every
        // program agrees on it. Re-setting it on a handle opened before sets the same function.
        unsafe {
            check(ffi::mdb_set_compare(
                self.as_ptr(),
                dbi,
                Some(super::compare::byte_order),
            ))?;
            if list {
                check(ffi::mdb_set_dupsort(
                    self.as_ptr(),
                    dbi,
                    Some(super::compare::byte_order),
                ))?;
            }
        }
        Ok(Some(Dbi(dbi)))
    }

    /// Commits (for a read-only transaction: makes the table handles it opened global).
    pub(crate) fn commit(mut self) -> Result<(), LmdbError> {
        let Some(p) = self.ptr.take() else {
            return Ok(());
        };
        // SAFETY: a live transaction, ended here exactly once (commit frees it even on error).
        check(unsafe { ffi::mdb_txn_commit(p.as_ptr()) })
    }
}

impl Drop for RoTxn {
    fn drop(&mut self) {
        let Some(p) = self.ptr.take() else { return };
        if self.reusable {
            // SAFETY: a live read-only transaction (MDB_NOTLS: its reader slot stays with the
            // handle); its cursors borrowed it and so are already closed.
            unsafe { ffi::mdb_txn_reset(p.as_ptr()) };
            match self.env.keep_idle(IdleTxn(p)) {
                None => return,
                Some(IdleTxn(p)) => {
                    // SAFETY: the reset handle the pool refused, ended here once.
                    unsafe { ffi::mdb_txn_abort(p.as_ptr()) };
                    return;
                }
            }
        }
        // SAFETY: a live transaction, ended exactly once; its cursors borrowed it and so are
        // already closed.
        unsafe { ffi::mdb_txn_abort(p.as_ptr()) };
    }
}

/// The write transaction. Reads go through `Deref` to [`RoTxn`]; writes need `&mut`, so no
/// slice read from the transaction survives a write (LMDB may move pages on write).
pub(crate) struct RwTxn {
    txn: RoTxn,
    /// A write transaction stays on the thread that began it.
    _not_send: PhantomData<*const ()>,
}

impl std::ops::Deref for RwTxn {
    type Target = RoTxn;
    fn deref(&self) -> &RoTxn {
        &self.txn
    }
}

impl RwTxn {
    pub(crate) fn begin(env: Env) -> Result<RwTxn, LmdbError> {
        Ok(RwTxn {
            txn: RoTxn::begin_with(env, 0)?,
            _not_send: PhantomData,
        })
    }

    /// Stores `value` under `key`.
    pub(crate) fn put(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
        flags: PutFlags,
    ) -> Result<(), LmdbError> {
        let (mut k, mut v) = (val(key), val(value));
        // SAFETY: live write transaction; `key` and `value` are not in the map (they are
        // borrowed from the caller while `&mut self` excludes slices read from LMDB).
        check(unsafe { ffi::mdb_put(self.as_ptr(), dbi.0, &mut k, &mut v, flags.0) })
    }

    /// Stores `value` under `key` and says whether `key` was absent before (in a list table:
    /// held no value). An absent key costs one search; a present one a second, from the page
    /// the first found it on.
    pub(crate) fn put_counting(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
    ) -> Result<bool, LmdbError> {
        match self.put(dbi, key, value, PutFlags::NO_OVERWRITE) {
            Ok(()) => Ok(true),
            Err(e) if e.code == LmdbError::KEY_EXIST => {
                self.put(dbi, key, value, PutFlags::NONE).map(|()| false)
            }
            Err(e) => Err(e),
        }
    }

    /// Deletes `key` (with all its values), or only `value` of it in a list table; whether
    /// anything was there.
    pub(crate) fn del(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<bool, LmdbError> {
        let mut k = val(key);
        let mut v = value.map(val);
        let vp = v
            .as_mut()
            .map_or(ptr::null_mut(), |v| v as *mut ffi::MDB_val);
        // SAFETY: live write transaction; inputs are not in the map (see `put`).
        found(unsafe { ffi::mdb_del(self.as_ptr(), dbi.0, &mut k, vp) })
    }

    /// Commits.
    pub(crate) fn commit(self) -> Result<(), LmdbError> {
        self.txn.commit()
    }

    /// Aborts (as dropping does).
    pub(crate) fn abort(self) {
        drop(self);
    }
}
