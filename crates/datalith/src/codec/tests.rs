use super::*;
use proptest::prelude::*;

fn enc(v: &Value) -> Vec<u8> {
    encode_to_vec(v)
}

#[test]
fn known_encodings() {
    let cases: &[(Value, &[u8])] = &[
        (Value::Boolean(true), &[0x01, 0x01]),
        (Value::Long(0), &[0x02, 0x80, 0, 0, 0, 0, 0, 0, 0]),
        (
            Value::Long(-1),
            &[0x02, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        ),
        (Value::Ref(258), &[0x0C, 0, 0, 0, 0, 0, 0, 1, 2]),
        (Value::string("ab"), &[0x09, b'a', b'b', 0, 0]),
        (Value::string("a\0"), &[0x09, b'a', 0, 0xFF, 0, 0]),
        (Value::keyword(":a/b"), &[0x0A, b'a', 0, 0, b'b', 0, 0]),
        (Value::keyword(":b"), &[0x0A, 0, 0, b'b', 0, 0]),
        (
            Value::Tuple(vec![None, Some(Value::Boolean(false))]),
            &[0x0E, 0x01, 0x02, 0x01, 0x00, 0x00],
        ),
    ];
    for (v, bytes) in cases {
        assert_eq!(enc(v), *bytes, "{v:?}");
        assert_eq!(decode(bytes).unwrap(), (v.clone(), bytes.len()));
    }
}

#[test]
fn bigdec_parses_and_orders() {
    let texts = [
        "-100", "-2.5", "-0.001", "0", "0.0", "1e-3", "0.5", "2.50", "2.5000M", "10", "1E2",
    ];
    let vals: Vec<BigDec> = texts.iter().map(|t| BigDec::parse(t).unwrap()).collect();
    assert_eq!(vals[3], vals[4]);
    assert_eq!(vals[7], vals[8]);
    assert_eq!(vals[5], BigDec::parse("0.001").unwrap());
    for w in vals.windows(2) {
        assert!(w[0] <= w[1], "{:?} <= {:?}", w[0], w[1]);
        let (a, b) = (
            enc(&Value::BigDec(w[0].clone())),
            enc(&Value::BigDec(w[1].clone())),
        );
        assert_eq!(w[0].cmp(&w[1]), a.cmp(&b), "{:?} vs {:?}", w[0], w[1]);
    }
    assert!(BigDec::parse("1.2.3").is_none());
    assert!(BigDec::parse("").is_none());
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::Boolean),
        any::<i64>().prop_map(Value::Long),
        any::<i128>().prop_map(Value::BigInt),
        any::<f32>().prop_filter_map("nan", |x| F32::new(x).map(Value::Float)),
        any::<f64>().prop_filter_map("nan", Value::double),
        (any::<bool>(), "[1-9][0-9]{0,6}", -20i32..20).prop_map(|(n, d, e)| {
            let d = d.trim_end_matches('0').to_string();
            Value::BigDec(BigDec::from_parts(
                n,
                if d.is_empty() { "1" } else { &d },
                e,
            ))
        }),
        any::<i64>().prop_map(Value::Instant),
        any::<[u8; 16]>().prop_map(Value::Uuid),
        ".{0,12}".prop_map(|s| Value::string(&s)),
        ("[a-z.]{0,4}", "[a-z\\-\\x00]{1,6}")
            .prop_map(|(n, m)| Value::Keyword(Keyword::new(Some(&n), &m))),
        any::<u64>().prop_map(Value::Ref),
        proptest::collection::vec(any::<u8>(), 0..12).prop_map(|b| Value::Bytes(b.into())),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(2, 16, 4, |inner| {
        proptest::collection::vec(proptest::option::of(inner), 0..4).prop_map(Value::Tuple)
    })
}

proptest! {
    #[test]
    fn round_trip(v in value()) {
        let b = enc(&v);
        prop_assert_eq!(decode(&b).unwrap(), (v, b.len()));
    }

    #[test]
    fn byte_order_is_value_order(a in value(), b in value()) {
        prop_assert_eq!(a.cmp(&b), enc(&a).cmp(&enc(&b)), "{:?} vs {:?}", a, b);
    }

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode(&bytes);
    }
}
