//! The key (and list value) order of every table: LMDB's default order, byte by byte and
//! then shorter first, with a fast path for two 8-byte items (entity ids, the EAV keys and the
//! AVE values) compared as big-endian integers: the same order, without a call to `memcmp`
//! through LMDB's generic comparator on every step of every search.
//!
//! Because the order is exactly LMDB's default, files stay readable by any LMDB program and
//! by builds without this comparator.

use lmdb_master_sys as ffi;
use std::cmp::Ordering;

/// The comparator handed to `mdb_set_compare` / `mdb_set_dupsort`.
///
/// # Safety
/// LMDB calls it with two valid `MDB_val`s whose data pointers are readable for `mv_size`
/// bytes (or dangling with size 0).
pub(crate) unsafe extern "C" fn byte_order(
    a: *const ffi::MDB_val,
    b: *const ffi::MDB_val,
) -> libc::c_int {
    // SAFETY: per the contract, both values are valid for reads.
    let (a, b) = unsafe { (&*a, &*b) };
    if a.mv_size == 8 && b.mv_size == 8 {
        // SAFETY: both point at 8 readable bytes (unaligned reads).
        let (x, y) = unsafe {
            (
                std::ptr::read_unaligned(a.mv_data as *const [u8; 8]),
                std::ptr::read_unaligned(b.mv_data as *const [u8; 8]),
            )
        };
        return ordering(u64::from_be_bytes(x).cmp(&u64::from_be_bytes(y)));
    }
    // SAFETY: as above; a size-0 value is the empty slice.
    let (x, y) = unsafe { (super::txn::bytes(a), super::txn::bytes(b)) };
    ordering(x.cmp(y))
}

fn ordering(o: Ordering) -> libc::c_int {
    match o {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(a: &[u8], b: &[u8]) -> libc::c_int {
        let (va, vb) = (super::super::txn::val(a), super::super::txn::val(b));
        // SAFETY: both values point at live slices.
        unsafe { byte_order(&va, &vb) }
    }

    #[test]
    fn the_order_is_bytes_then_length() {
        let items: [&[u8]; 9] = [
            b"",
            &[0],
            &[0, 0, 0, 0, 0, 0, 0, 0],
            &[0, 0, 0, 0, 0, 0, 0, 1],
            &[0, 0, 0, 0, 0, 0, 0, 1, 0],
            &[0, 0, 0, 0, 0, 0, 1, 0],
            &[1],
            &[1, 0, 0, 0, 0, 0, 0, 0],
            &[0xFF, 0, 0, 0, 0, 0, 0, 0],
        ];
        for a in items {
            for b in items {
                assert_eq!(cmp(a, b), ordering(a.cmp(b)), "{a:?} {b:?}");
            }
        }
    }
}
