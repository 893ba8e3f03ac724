//! Values pushed onto a reader's vector, made in their slot. Through `Vec::push` a value
//! went through the stack: its 48 bytes written in 1- and 8-byte pieces, then read back in
//! 16-byte ones, a store-forwarding stall on every item read (`perf annotate`: a fifth of the
//! time to read a query's 2,575 one-value rows, in CBOR and in EDN alike). Each function here
//! takes its variant's parts (in registers) and writes the value through the slot's
//! pointer; each is kept out of line so that the compiler does not merge a reader's pushes
//! back into one copy through the stack. Measured on q1's answer (2,575 one-value rows) read
//! in one process: from CBOR ~157 -> ~143 us with the integers made in place, -> 99-112 us
//! with the vectors too; q1 over the server in `crates/datalith-server/README.md`.

use std::mem::MaybeUninit;

use crate::codec::Keyword;
use crate::edn::Edn;

/// The unused slot at `out`'s end, reserved if need be.
#[inline(always)]
fn spare_slot(out: &mut Vec<Edn>) -> &mut MaybeUninit<Edn> {
    out.reserve(1);
    &mut out.spare_capacity_mut()[0]
}

/// Writes the value `$value` makes into `$out`'s spare slot and takes it into the length.
/// A macro, not a function: the value must be made after the slot is found, straight into
/// it; made first and handed to a function, it went through the stack again.
macro_rules! fill {
    ($out:expr, $value:expr) => {{
        let out: &mut Vec<Edn> = $out;
        spare_slot(out).write($value);
        // SAFETY: `spare_slot` reserved the slot at the old length, and it was just
        // written.
        unsafe { out.set_len(out.len() + 1) };
    }};
}

/// Pushes `Edn::Long(n)`.
#[inline(never)]
pub(crate) fn push_long(out: &mut Vec<Edn>, n: i64) {
    fill!(out, Edn::Long(n));
}

/// Pushes `Edn::Vector(items)`. The vector is handed on as its three words: passed whole,
/// it was copied into a value on the stack and read back across two stores, the same stall.
#[inline(always)]
pub(crate) fn push_vector(out: &mut Vec<Edn>, items: Vec<Edn>) {
    let mut items = std::mem::ManuallyDrop::new(items);
    let (ptr, len, capacity) = (items.as_mut_ptr(), items.len(), items.capacity());
    // SAFETY: the parts of a vector that is never dropped (`ManuallyDrop`): its buffer is
    // owned by the one made again from them.
    unsafe { push_vector_parts(out, ptr, len, capacity) }
}

/// See [`push_vector`].
///
/// # Safety
///
/// `ptr`, `len` and `capacity` are the parts of a `Vec<Edn>` nothing else owns.
#[inline(never)]
unsafe fn push_vector_parts(out: &mut Vec<Edn>, ptr: *mut Edn, len: usize, capacity: usize) {
    // SAFETY: the caller's promise.
    fill!(
        out,
        Edn::Vector(unsafe { Vec::from_raw_parts(ptr, len, capacity) })
    );
}

/// Pushes `Edn::Keyword(k)`.
#[inline(never)]
pub(crate) fn push_keyword(out: &mut Vec<Edn>, k: Keyword) {
    fill!(out, Edn::Keyword(k));
}

/// Pushes `Edn::String(s)`.
#[inline(never)]
pub(crate) fn push_string(out: &mut Vec<Edn>, s: String) {
    fill!(out, Edn::String(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_push_appends_its_value_growing_the_vector() {
        let mut out = Vec::new();
        for i in 0..100 {
            push_long(&mut out, i);
            push_vector(&mut out, vec![Edn::Long(i)]);
            push_keyword(&mut out, Keyword::parse(":a/b"));
            push_string(&mut out, format!("s{i}"));
        }
        assert_eq!(out.len(), 400);
        assert_eq!(out[396], Edn::Long(99));
        assert_eq!(out[397], Edn::Vector(vec![Edn::Long(99)]));
        assert_eq!(out[398], Edn::kw(":a/b"));
        assert_eq!(out[399], Edn::String("s99".into()));
    }
}
