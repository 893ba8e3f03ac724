//! Property tests: byte order is value order, round trips, and decoding untrusted bytes.

use super::strategies::{same_type_pair, value};
use crate::codec::*;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn round_trip(v in value()) {
        let b = encode_to_vec(&v);
        prop_assert_eq!(encoded_len(&v), b.len());
        prop_assert_eq!(decode(&b), Ok((v.clone(), b.len())));
        prop_assert_eq!(decode_exact(&b), Ok(v));
    }

    #[test]
    fn same_type_byte_order_is_value_order((a, b) in same_type_pair()) {
        prop_assert_eq!(a.cmp(&b), encode_to_vec(&a).cmp(&encode_to_vec(&b)), "{:?} vs {:?}", a, b);
        prop_assert_eq!(a == b, encode_to_vec(&a) == encode_to_vec(&b));
    }

    #[test]
    fn any_byte_order_is_value_order(a in value(), b in value()) {
        prop_assert_eq!(a.cmp(&b), encode_to_vec(&a).cmp(&encode_to_vec(&b)), "{:?} vs {:?}", a, b);
    }

    #[test]
    fn concatenations_compare_elementwise((a, b) in same_type_pair(), (c, d) in same_type_pair()) {
        // Self-delimiting: (a, c) vs (b, d) as byte strings is the pair order.
        let ac = [encode_to_vec(&a), encode_to_vec(&c)].concat();
        let bd = [encode_to_vec(&b), encode_to_vec(&d)].concat();
        prop_assert_eq!(a.cmp(&b).then(c.cmp(&d)), ac.cmp(&bd));
    }

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok((v, n)) = decode(&bytes) {
            // Strict: what decodes re-encodes to the same bytes.
            prop_assert_eq!(encode_to_vec(&v), &bytes[..n]);
        }
        let _ = decode_str(&bytes);
        let _ = decode_long(&bytes);
        let _ = classify(&bytes);
    }

    #[test]
    fn mutated_encodings_never_panic(v in value(), at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let mut b = encode_to_vec(&v);
        let i = at.index(b.len());
        b[i] = byte;
        b.truncate(cut.index(b.len() + 1).max(i));
        if let Ok((w, n)) = decode(&b) {
            prop_assert_eq!(encode_to_vec(&w), &b[..n]);
        }
    }
}

proptest! {
    #[test]
    fn skip_agrees_with_decode(v in value(), tail in proptest::collection::vec(any::<u8>(), 0..4)) {
        let b = [encode_to_vec(&v), tail].concat();
        prop_assert_eq!(skip(&b), Ok(encoded_len(&v)));
        if let Value::Tuple(items) = &v {
            let (raw, n) = tuple_items(&b).unwrap();
            prop_assert_eq!(n, encoded_len(&v));
            let want: Vec<Option<Vec<u8>>> = items.iter().map(|i| i.as_ref().map(encode_to_vec)).collect();
            let got: Vec<Option<Vec<u8>>> = raw.iter().map(|i| i.map(<[u8]>::to_vec)).collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn skip_accepts_exactly_what_decode_accepts(v in value(), at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let mut b = encode_to_vec(&v);
        let i = at.index(b.len());
        b[i] = byte;
        b.truncate(cut.index(b.len() + 1).max(i));
        prop_assert_eq!(skip(&b), decode(&b).map(|(_, n)| n));
    }
}
