//! Cursors: a position in one table of one transaction, kept across many seeks.
//!
//! A seek (`MDB_SET_RANGE`, `MDB_SET_KEY`, `MDB_GET_BOTH_RANGE`) from a positioned cursor first
//! checks whether the key falls within the leaf page the cursor is on and then searches only
//! that page, skipping the descent from the root: sorted lookups through one cursor mostly
//! stay on one page.

use lmdb_master_sys as ffi;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use super::error::{check, found, LmdbError};
use super::txn::{bytes, val, Dbi, PutFlags, RoTxn, RwTxn};

/// A `(key, value)` pair borrowed from the transaction.
pub(crate) type Pair<'t> = (&'t [u8], &'t [u8]);

/// LMDB cursor operations used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Op {
    First = ffi::MDB_FIRST,
    Last = ffi::MDB_LAST,
    Next = ffi::MDB_NEXT,
    Prev = ffi::MDB_PREV,
    NextDup = ffi::MDB_NEXT_DUP,
    PrevDup = ffi::MDB_PREV_DUP,
    NextNoDup = ffi::MDB_NEXT_NODUP,
    LastDup = ffi::MDB_LAST_DUP,
    GetCurrent = ffi::MDB_GET_CURRENT,
}

/// A read cursor borrowing its transaction.
pub(crate) struct Cursor<'t> {
    ptr: NonNull<ffi::MDB_cursor>,
    _txn: PhantomData<&'t RoTxn>,
}

impl<'t> Cursor<'t> {
    /// A cursor on table `dbi`, not yet positioned.
    pub(crate) fn open(txn: &'t RoTxn, dbi: Dbi) -> Result<Cursor<'t>, LmdbError> {
        let mut raw = ptr::null_mut();
        // SAFETY: live transaction, valid handle, valid out pointer.
        check(unsafe { ffi::mdb_cursor_open(txn.as_ptr(), dbi.0, &mut raw) })?;
        let ptr = NonNull::new(raw).ok_or(LmdbError { code: libc::ENOMEM })?;
        Ok(Cursor {
            ptr,
            _txn: PhantomData,
        })
    }

    #[inline]
    fn get(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        op: u32,
    ) -> Result<Option<Pair<'t>>, LmdbError> {
        let mut k = key.map_or(val(&[]), val);
        let mut v = value.map_or(val(&[]), val);
        // SAFETY: a live cursor; LMDB reads the inputs (for the ops that take them) and
        // overwrites `k`/`v` with pointers into the map.
        let rc = unsafe { ffi::mdb_cursor_get(self.ptr.as_ptr(), &mut k, &mut v, op) };
        if !found(rc)? {
            return Ok(None);
        }
        // SAFETY: on success both point into the map of a transaction borrowed for 't, which
        // is not written through while borrowed.
        Ok(Some(unsafe { (bytes(&k), bytes(&v)) }))
    }

    /// A move without a key (first, next, ...).
    #[inline]
    pub(crate) fn step(&mut self, op: Op) -> Result<Option<Pair<'t>>, LmdbError> {
        self.get(None, None, op as u32)
    }

    /// The first entry whose key is at least `key` (for a list table, its first value).
    #[inline]
    pub(crate) fn seek(&mut self, key: &[u8]) -> Result<Option<Pair<'t>>, LmdbError> {
        self.get(Some(key), None, ffi::MDB_SET_RANGE)
    }

    /// The entry of exactly `key` (for a list table, its first value).
    #[inline]
    pub(crate) fn seek_exact(&mut self, key: &[u8]) -> Result<Option<Pair<'t>>, LmdbError> {
        self.get(Some(key), None, ffi::MDB_SET_KEY)
    }

    /// List tables: the first value of exactly `key` that is at least `value`.
    #[inline]
    pub(crate) fn seek_value(
        &mut self,
        key: &[u8],
        value: &[u8],
    ) -> Result<Option<Pair<'t>>, LmdbError> {
        self.get(Some(key), Some(value), ffi::MDB_GET_BOTH_RANGE)
    }
}

impl<'t> Cursor<'t> {
    /// List tables: how many values the key the cursor is on has.
    #[inline]
    pub(crate) fn count(&mut self) -> Result<usize, LmdbError> {
        let mut n = 0;
        // SAFETY: a live, positioned cursor; valid out pointer.
        check(unsafe { ffi::mdb_cursor_count(self.ptr.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// Fixed-width list tables (`MDB_DUPFIXED`) only, on a key with more than one value
    /// ([`Self::count`]; a single value has no value pages, and LMDB may then answer from a
    /// stale sub-cursor): after a positioning op, the values on the current page of the key's
    /// values (`first`: the page the cursor is on, from its start; else the next page), packed
    /// end to end. `None` past the key's last page.
    #[inline]
    pub(crate) fn values_page(&mut self, first: bool) -> Result<Option<&'t [u8]>, LmdbError> {
        let op = if first {
            ffi::MDB_GET_MULTIPLE
        } else {
            ffi::MDB_NEXT_MULTIPLE
        };
        Ok(self.get(None, None, op)?.map(|(_, v)| v))
    }
}

impl Drop for Cursor<'_> {
    fn drop(&mut self) {
        // SAFETY: a live cursor of a transaction that is still open (borrowed), closed once.
        unsafe { ffi::mdb_cursor_close(self.ptr.as_ptr()) };
    }
}

/// A write cursor: inserts that start their search from the previous insert's leaf page.
pub(crate) struct WriteCursor<'t> {
    ptr: NonNull<ffi::MDB_cursor>,
    _txn: PhantomData<&'t mut RwTxn>,
}

impl<'t> WriteCursor<'t> {
    /// A cursor on table `dbi` of the write transaction.
    pub(crate) fn open(txn: &'t mut RwTxn, dbi: Dbi) -> Result<WriteCursor<'t>, LmdbError> {
        let mut raw = ptr::null_mut();
        // SAFETY: live write transaction, valid handle, valid out pointer.
        check(unsafe { ffi::mdb_cursor_open(txn.as_ptr(), dbi.0, &mut raw) })?;
        let ptr = NonNull::new(raw).ok_or(LmdbError { code: libc::ENOMEM })?;
        Ok(WriteCursor {
            ptr,
            _txn: PhantomData,
        })
    }

    /// Inserts `value` under `key` with insert flags (never `MDB_CURRENT`).
    pub(crate) fn put(
        &mut self,
        key: &[u8],
        value: &[u8],
        flags: PutFlags,
    ) -> Result<(), LmdbError> {
        let (mut k, mut v) = (val(key), val(value));
        // SAFETY: a live cursor of a write transaction borrowed mutably (no slice read from
        // LMDB is alive); inputs are the caller's memory, not the map.
        check(unsafe { ffi::mdb_cursor_put(self.ptr.as_ptr(), &mut k, &mut v, flags.0) })
    }

    /// The table's last key (copied: the next put may move it), leaving the cursor there.
    pub(crate) fn last_key(&mut self) -> Result<Option<Vec<u8>>, LmdbError> {
        let mut k = val(&[]);
        let mut v = val(&[]);
        // SAFETY: a live cursor; LMDB overwrites `k`/`v` with pointers into the map, which
        // are copied out before any write (the cursor is borrowed mutably until return).
        let rc = unsafe { ffi::mdb_cursor_get(self.ptr.as_ptr(), &mut k, &mut v, ffi::MDB_LAST) };
        if !found(rc)? {
            return Ok(None);
        }
        // SAFETY: on success `k` points into the map; copied before the borrow ends.
        Ok(Some(unsafe { bytes(&k) }.to_vec()))
    }

    /// Inserts `value` under `key` and says whether `key` was absent before (see
    /// `RwTxn::put_counting`); after a present key the cursor sits on it, so the second put
    /// finds it on that page.
    pub(crate) fn put_counting(&mut self, key: &[u8], value: &[u8]) -> Result<bool, LmdbError> {
        match self.put(key, value, PutFlags::NO_OVERWRITE) {
            Ok(()) => Ok(true),
            Err(e) if e.code == LmdbError::KEY_EXIST => {
                self.put(key, value, PutFlags::NONE).map(|()| false)
            }
            Err(e) => Err(e),
        }
    }
}

impl Drop for WriteCursor<'_> {
    fn drop(&mut self) {
        // SAFETY: a live cursor of a transaction still open (borrowed), closed once.
        unsafe { ffi::mdb_cursor_close(self.ptr.as_ptr()) };
    }
}
