//! Index keys: giants keep equality exact, inline order exact, and giant order exact after a
//! full comparison.

use std::collections::HashMap;

use super::strategies::{sized_value, value};
use crate::codec::*;
use crate::limits::{GIANT_PREFIX_BYTES, MAX_INDEXED_VALUE_BYTES, MAX_INLINE_VALUE_BYTES};
use proptest::prelude::*;

/// The `giants` table of a test.
fn giants(values: &[&Value]) -> HashMap<GiantHash, Vec<u8>> {
    values
        .iter()
        .filter_map(|v| index_key(v).giant().cloned())
        .map(|g| (g.hash, g.full))
        .collect()
}

#[test]
fn boundary_table() {
    // (string length, giant?): tag + body + 2-byte terminator vs MAX_INLINE_VALUE_BYTES.
    let inline_max = MAX_INLINE_VALUE_BYTES - 3;
    for (n, giant) in [
        (0, false),
        (inline_max, false),
        (inline_max + 1, true),
        (5000, true),
    ] {
        let v = Value::string(&"y".repeat(n));
        let k = index_key(&v);
        assert_eq!(k.giant().is_some(), giant, "length {n}");
        assert_eq!(k.full_encoding(), encode_to_vec(&v));
        let want_len = if giant {
            MAX_INDEXED_VALUE_BYTES
        } else {
            n + 3
        };
        assert_eq!(k.bytes().len(), want_len);
        match classify(k.bytes()).unwrap() {
            IndexKeyRef::Inline(b) => assert!(!giant && b == k.bytes()),
            IndexKeyRef::Giant { prefix, hash } => {
                let g = k.giant().unwrap();
                assert!(giant && *hash == g.hash && g.full.starts_with(prefix));
                assert_eq!(prefix.len(), GIANT_PREFIX_BYTES);
            }
        }
        let mut out = vec![0, 0, 0, 7];
        let g = encode_index_key(&v, &mut out);
        assert_eq!(&out[4..], k.bytes());
        assert_eq!(g.as_ref(), k.giant());
    }
}

#[test]
fn corrupt_keys_and_giants_are_errors() {
    assert!(classify(&[0; MAX_INLINE_VALUE_BYTES + 1]).is_err());
    assert!(classify(&[0; MAX_INDEXED_VALUE_BYTES + 1]).is_err());
    let v = Value::string(&"z".repeat(1000));
    let k = index_key(&v);
    let g = k.giant().unwrap();
    let IndexKeyRef::Giant { prefix, hash } = classify(k.bytes()).unwrap() else {
        panic!("a giant")
    };
    assert_eq!(decode_giant(prefix, hash, &g.full), Ok(v.clone()));
    let mut tampered = g.full.clone();
    tampered[600] = b'q';
    assert!(
        decode_giant(prefix, hash, &tampered).is_err(),
        "hash mismatch"
    );
    assert!(
        decode_giant(prefix, hash, &g.full[..400]).is_err(),
        "too short"
    );
    let other = index_key(&Value::string(&"w".repeat(1000)));
    assert!(
        decode_giant(prefix, hash, other.full_encoding()).is_err(),
        "wrong prefix"
    );
    let r: Result<Value, CodecError> = decode_index_key(k.bytes(), |_| Ok(tampered.clone()));
    assert!(r.is_err());
}

proptest! {
    #[test]
    fn index_keys_keep_equality_and_order(a in sized_value(), b in sized_value()) {
        let (ka, kb) = (index_key(&a), index_key(&b));
        let table = giants(&[&a, &b]);
        let load = |h: &GiantHash| table.get(h).cloned().ok_or(());

        // Equality is exact.
        prop_assert_eq!(a == b, ka.bytes() == kb.bytes());
        // Every key fits the index.
        prop_assert!(ka.bytes().len() <= MAX_INDEXED_VALUE_BYTES);

        // memcmp is exact unless both are giants sharing a prefix; the full comparison always is.
        let tied = ka.giant().is_some() && kb.giant().is_some()
            && ka.bytes()[..GIANT_PREFIX_BYTES] == kb.bytes()[..GIANT_PREFIX_BYTES];
        if !tied {
            prop_assert_eq!(a.cmp(&b), ka.bytes().cmp(kb.bytes()));
        }
        prop_assert_eq!(Ok(a.cmp(&b)), cmp_keys_exact(ka.bytes(), kb.bytes(), load));

        // Against a bound's full encoding: None exactly when a full comparison is needed.
        let kb_full = kb.full_encoding();
        match cmp_key_to_encoding(ka.bytes(), kb_full) {
            Some(o) => prop_assert_eq!(o, a.cmp(&b)),
            None => prop_assert!(tied),
        }

        // Scan bounds cover every candidate.
        if b >= a {
            prop_assert!(kb.bytes() >= &*ka.scan_floor());
        }
        if b <= a {
            prop_assert!(kb.bytes() <= &*ka.scan_ceiling());
        }

        // Decoding through the giants table gives the value back.
        let back: Result<Value, CodecError> = decode_index_key(ka.bytes(), |h| {
            table.get(h).cloned().ok_or(CodecError::Malformed { offset: 0, what: "missing giant" })
        });
        prop_assert_eq!(back, Ok(a));
    }

    #[test]
    fn small_values_are_inline(v in value()) {
        let k = index_key(&v);
        prop_assert_eq!(k.giant().is_none(), encoded_len(&v) <= MAX_INLINE_VALUE_BYTES);
    }
}

#[test]
fn giants_sharing_a_prefix_need_the_full_comparison() {
    let body = "x".repeat(900);
    let (a, b) = (
        Value::string(&format!("{body}a")),
        Value::string(&format!("{body}b")),
    );
    let (ka, kb) = (index_key(&a), index_key(&b));
    assert_eq!(
        ka.bytes()[..GIANT_PREFIX_BYTES],
        kb.bytes()[..GIANT_PREFIX_BYTES]
    );
    assert_ne!(ka.bytes(), kb.bytes());
    assert_eq!(cmp_key_to_encoding(ka.bytes(), kb.full_encoding()), None);
    let table = giants(&[&a, &b]);
    let load = |h: &GiantHash| table.get(h).cloned().ok_or(());
    assert_eq!(cmp_keys_exact(ka.bytes(), kb.bytes(), load), Ok(a.cmp(&b)));
    assert_eq!(cmp_keys_exact(kb.bytes(), ka.bytes(), load), Ok(b.cmp(&a)));
    // The scan window of either covers both.
    for k in [&ka, &kb] {
        assert!(k.scan_floor().as_ref() <= ka.bytes().min(kb.bytes()));
        assert!(k.scan_ceiling().as_ref() >= ka.bytes().max(kb.bytes()));
    }
    // An inline value sharing the start still compares exactly.
    let short = Value::string(&"x".repeat(100));
    assert_eq!(
        cmp_key_to_encoding(ka.bytes(), &encode_to_vec(&short)),
        Some(a.cmp(&short))
    );
}
