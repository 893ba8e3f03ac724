//! (value, expected bytes) for every type; each also decodes back.

use crate::codec::*;

fn uuid() -> [u8; 16] {
    parse_uuid("01234567-89ab-cdef-0011-223344556677").unwrap()
}

fn cases() -> Vec<(Value, Vec<u8>)> {
    let z8 = |tag: u8, first: u8, rest: u8| {
        let mut v = vec![tag, first];
        v.extend([rest; 7]);
        v
    };
    let mut uuid_bytes = vec![0x08];
    uuid_bytes.extend(uuid());
    vec![
        (Value::Boolean(false), vec![0x01, 0x00]),
        (Value::Boolean(true), vec![0x01, 0x01]),
        (Value::Long(0), z8(0x02, 0x80, 0x00)),
        (Value::Long(-1), z8(0x02, 0x7F, 0xFF)),
        (Value::Long(i64::MIN), z8(0x02, 0x00, 0x00)),
        (Value::Long(i64::MAX), z8(0x02, 0xFF, 0xFF)),
        (Value::Long(258), vec![0x02, 0x80, 0, 0, 0, 0, 0, 1, 2]),
        (
            Value::BigInt(Box::new(0)),
            [vec![0x03, 0x80], vec![0; 15]].concat(),
        ),
        (
            Value::BigInt(Box::new(-1)),
            [vec![0x03, 0x7F], vec![0xFF; 15]].concat(),
        ),
        (Value::float(0.0).unwrap(), vec![0x04, 0x80, 0, 0, 0]),
        (Value::float(-0.0).unwrap(), vec![0x04, 0x80, 0, 0, 0]),
        (Value::float(1.0).unwrap(), vec![0x04, 0xBF, 0x80, 0, 0]),
        (
            Value::float(-1.0).unwrap(),
            vec![0x04, 0x40, 0x7F, 0xFF, 0xFF],
        ),
        (Value::double(0.0).unwrap(), z8(0x05, 0x80, 0x00)),
        (
            Value::double(1.0).unwrap(),
            vec![0x05, 0xBF, 0xF0, 0, 0, 0, 0, 0, 0],
        ),
        (Value::double(-2.0).unwrap(), z8(0x05, 0x3F, 0xFF)),
        (
            Value::double(f64::INFINITY).unwrap(),
            vec![0x05, 0xFF, 0xF0, 0, 0, 0, 0, 0, 0],
        ),
        (Value::BigDec(BigDec::zero()), vec![0x06, 0x01]),
        (
            Value::BigDec(BigDec::parse("2.5").unwrap()),
            vec![0x06, 0x02, 0x80, 0, 0, 0x01, b'2', b'5', 0x00],
        ),
        (
            Value::BigDec(BigDec::parse("-2.5").unwrap()),
            vec![0x06, 0x00, 0x7F, 0xFF, 0xFF, 0xFE, !b'2', !b'5', 0xFF],
        ),
        (
            Value::BigDec(BigDec::parse("0.001").unwrap()),
            vec![0x06, 0x02, 0x7F, 0xFF, 0xFF, 0xFE, b'1', 0x00],
        ),
        (Value::Instant(0), z8(0x07, 0x80, 0x00)),
        (
            Value::Instant(-1000),
            vec![0x07, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFC, 0x18],
        ),
        (Value::Uuid(uuid()), uuid_bytes),
        (Value::string(""), vec![0x09, 0, 0]),
        (Value::string("ab"), vec![0x09, b'a', b'b', 0, 0]),
        (Value::string("a\0"), vec![0x09, b'a', 0, 0xFF, 0, 0]),
        (Value::string("\0\0"), vec![0x09, 0, 0xFF, 0, 0xFF, 0, 0]),
        (Value::string("é"), vec![0x09, 0xC3, 0xA9, 0, 0]),
        (Value::keyword(":a/b"), vec![0x0A, b'a', 0, 0, b'b', 0, 0]),
        (Value::keyword(":b"), vec![0x0A, 0, 0, b'b', 0, 0]),
        (
            Value::Symbol(Keyword::parse("x/y")),
            vec![0x0B, b'x', 0, 0, b'y', 0, 0],
        ),
        (Value::Ref(258), vec![0x0C, 0, 0, 0, 0, 0, 0, 1, 2]),
        (Value::Bytes(vec![].into()), vec![0x0D, 0, 0]),
        (
            Value::Bytes(vec![0, 1].into()),
            vec![0x0D, 0, 0xFF, 1, 0, 0],
        ),
        (Value::Tuple(vec![]), vec![0x0E, 0x00]),
        (
            Value::Tuple(vec![None, Some(Value::Boolean(false))]),
            vec![0x0E, 0x01, 0x02, 0x01, 0x00, 0x00],
        ),
        (
            Value::Tuple(vec![Some(Value::Tuple(vec![Some(Value::string("a"))]))]),
            vec![0x0E, 0x02, 0x0E, 0x02, 0x09, b'a', 0, 0, 0x00, 0x00],
        ),
    ]
}

#[test]
fn known_encodings() {
    for (v, bytes) in cases() {
        assert_eq!(encode_to_vec(&v), bytes, "encode {v:?}");
        assert_eq!(encoded_len(&v), bytes.len(), "encoded_len {v:?}");
        assert_eq!(decode(&bytes), Ok((v.clone(), bytes.len())), "decode {v:?}");
        assert_eq!(peek_type(&bytes).ok(), v.value_type(), "peek_type {v:?}");
    }
}

#[test]
fn every_type_has_a_case_and_tags_follow_variant_order() {
    let cases = cases();
    for t in ValueType::ALL {
        assert!(
            cases.iter().any(|(v, _)| v.value_type() == Some(t)),
            "{t:?}"
        );
        assert_eq!(encode::tag::value_type(encode::tag::of(t)), Some(t));
    }
    assert_eq!(encode::tag::value_type(0), None);
    assert_eq!(encode::tag::value_type(0x0F), None);
}

#[test]
fn hot_path_helpers_match_encode() {
    for n in [i64::MIN, -1, 0, 1, i64::MAX] {
        assert_eq!(&long_bytes(n)[..], encode_to_vec(&Value::Long(n)));
        assert_eq!(decode_long(&long_bytes(n)), Ok(n));
        assert_eq!(&instant_bytes(n)[..], encode_to_vec(&Value::Instant(n)));
        assert_eq!(decode_instant(&instant_bytes(n)), Ok(n));
        let mut out = Vec::new();
        encode_long(n, &mut out);
        assert_eq!(out, long_bytes(n));
    }
    for e in [0, 1, u64::MAX] {
        assert_eq!(&ref_bytes(e)[..], encode_to_vec(&Value::Ref(e)));
        assert_eq!(decode_ref(&ref_bytes(e)), Ok(e));
        let mut out = Vec::new();
        encode_ref(e, &mut out);
        assert_eq!(out, ref_bytes(e));
    }
    for s in ["", "abc", "a\0b"] {
        let mut out = Vec::new();
        encode_str(s, &mut out);
        assert_eq!(out, encode_to_vec(&Value::string(s)));
        let (back, n) = decode_str(&out).unwrap();
        assert_eq!((back.as_ref(), n), (s, out.len()));
        // Borrowed unless an escape had to be undone.
        assert_eq!(
            matches!(back, std::borrow::Cow::Borrowed(_)),
            !s.contains('\0')
        );
    }
    let mut out = Vec::new();
    encode_keyword_parts(encode::tag::KEYWORD, Some("a"), "b", &mut out);
    assert_eq!(out, encode_to_vec(&Value::keyword(":a/b")));
    out.clear();
    encode_keyword_parts(encode::tag::SYMBOL, Some(""), "b", &mut out);
    assert_eq!(out, encode_to_vec(&Value::Symbol(Keyword::parse("b"))));
}

#[test]
fn long_and_short_encodings_do_not_reallocate() {
    // The output vector, once big enough, is the only memory touched.
    let mut out = Vec::with_capacity(64);
    let ptr = out.as_ptr();
    encode(&Value::Long(7), &mut out);
    encode_long(-7, &mut out);
    encode_str("short string", &mut out);
    encode(&Value::string("another"), &mut out);
    assert_eq!(out.as_ptr(), ptr);
}

#[test]
fn tuple_depth_counts_nesting() {
    let mut v = Value::Long(1);
    assert_eq!(v.tuple_depth(), 0);
    for d in 1..=crate::limits::MAX_TUPLE_DEPTH {
        v = Value::Tuple(vec![None, Some(v)]);
        assert_eq!(v.tuple_depth(), d);
        assert_eq!(decode_exact(&encode_to_vec(&v)), Ok(v.clone()), "depth {d}");
    }
    let too_deep = Value::Tuple(vec![Some(v)]);
    assert!(matches!(
        decode_exact(&encode_to_vec(&too_deep)),
        Err(CodecError::Malformed {
            what: "tuple nested too deeply",
            ..
        })
    ));
}
