//! LMDB's return codes as a value.

use lmdb_master_sys as ffi;
use std::ffi::CStr;

/// A non-zero LMDB return code: one of LMDB's own (negative) or an `errno` (positive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LmdbError {
    pub(crate) code: i32,
}

impl LmdbError {
    pub(crate) const MAP_FULL: i32 = ffi::MDB_MAP_FULL;
    pub(crate) const TXN_FULL: i32 = ffi::MDB_TXN_FULL;
    pub(crate) const INVALID: i32 = ffi::MDB_INVALID;
    pub(crate) const CORRUPTED: i32 = ffi::MDB_CORRUPTED;
    pub(crate) const PAGE_NOTFOUND: i32 = ffi::MDB_PAGE_NOTFOUND;
    pub(crate) const VERSION_MISMATCH: i32 = ffi::MDB_VERSION_MISMATCH;
    pub(crate) const INCOMPATIBLE: i32 = ffi::MDB_INCOMPATIBLE;
    pub(crate) const DBS_FULL: i32 = ffi::MDB_DBS_FULL;
    pub(crate) const KEY_EXIST: i32 = ffi::MDB_KEYEXIST;

    /// Whether the map is full (the batch is retried after growing it).
    pub(crate) fn is_map_full(self) -> bool {
        self.code == Self::MAP_FULL
    }

    /// An `errno` from the operating system (LMDB's own codes are negative).
    pub(crate) fn os_error(self) -> Option<std::io::Error> {
        (self.code > 0).then(|| std::io::Error::from_raw_os_error(self.code))
    }
}

impl std::fmt::Display for LmdbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: `mdb_strerror` returns a pointer to a static NUL-terminated string for any
        // code (LMDB's own table, or `strerror` for errno values).
        let msg = unsafe { CStr::from_ptr(ffi::mdb_strerror(self.code)) };
        write!(f, "{} (code {})", msg.to_string_lossy(), self.code)
    }
}

impl std::error::Error for LmdbError {}

/// `Ok` for LMDB's success code, else the error.
#[inline]
pub(crate) fn check(rc: i32) -> Result<(), LmdbError> {
    if rc == ffi::MDB_SUCCESS {
        Ok(())
    } else {
        Err(LmdbError { code: rc })
    }
}

/// `Ok(false)` for `MDB_NOTFOUND`, `Ok(true)` for success, else the error.
#[inline]
pub(crate) fn found(rc: i32) -> Result<bool, LmdbError> {
    if rc == ffi::MDB_NOTFOUND {
        Ok(false)
    } else {
        check(rc).map(|()| true)
    }
}
