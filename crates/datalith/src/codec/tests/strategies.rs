//! Value generators. Narrow domains on purpose: equal values, shared prefixes, embedded NULs
//! and values near the giant boundary are what break order-preserving encodings.

use crate::codec::*;
use proptest::prelude::*;

/// Digits of a normalized decimal.
fn bigdec() -> impl Strategy<Value = Value> {
    (any::<bool>(), "[1-9]([0-9]{0,5}[1-9])?", -20i32..20, 0..8u8).prop_map(|(n, d, e, z)| {
        if z == 0 {
            Value::BigDec(BigDec::zero())
        } else {
            Value::BigDec(BigDec::new(n, &d, e).expect("normalized digits"))
        }
    })
}

fn float() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<f32>().prop_filter_map("nan", Value::float),
        prop::sample::select(vec![
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY
        ])
        .prop_filter_map("nan", Value::float),
    ]
}

fn double() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<f64>().prop_filter_map("nan", Value::double),
        prop::sample::select(vec![
            0.0f64,
            -0.0,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY
        ])
        .prop_filter_map("nan", Value::double),
    ]
}

fn small_i64() -> impl Strategy<Value = i64> {
    prop_oneof![any::<i64>(), -3i64..3]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,12}",
        "[ab\\x00\\x01]{0,5}",
        "[\\x00-\\x7f]{0,4}\u{ff}?"
    ]
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..12),
        proptest::collection::vec(prop::sample::select(vec![0u8, 1, 0xFF]), 0..5),
    ]
}

fn keyword() -> impl Strategy<Value = Keyword> {
    ("[ab.]{0,3}", "[ab\\x00\\-]{0,4}").prop_map(|(n, m)| Keyword::new(Some(&n), &m))
}

/// Scalars of one type (index into `ValueType::ALL`, tuples excluded).
pub fn scalar_of(t: usize) -> BoxedStrategy<Value> {
    match t {
        0 => any::<bool>().prop_map(Value::Boolean).boxed(),
        1 => small_i64().prop_map(Value::Long).boxed(),
        2 => prop_oneof![any::<i128>(), -3i128..3]
            .prop_map(|n| Value::BigInt(Box::new(n)))
            .boxed(),
        3 => float().boxed(),
        4 => double().boxed(),
        5 => bigdec().boxed(),
        6 => small_i64().prop_map(Value::Instant).boxed(),
        7 => prop_oneof![
            any::<[u8; 16]>(),
            prop::sample::select(vec![[0u8; 16], [0xFF; 16]])
        ]
        .prop_map(Value::Uuid)
        .boxed(),
        8 => text().prop_map(|s| Value::string(&s)).boxed(),
        9 => keyword().prop_map(Value::Keyword).boxed(),
        10 => keyword().prop_map(Value::Symbol).boxed(),
        11 => prop_oneof![any::<u64>(), 0u64..3]
            .prop_map(Value::Ref)
            .boxed(),
        _ => bytes().prop_map(|b| Value::Bytes(b.into())).boxed(),
    }
}

/// Any scalar.
pub fn scalar() -> impl Strategy<Value = Value> {
    (0usize..13).prop_flat_map(scalar_of)
}

/// Any value, tuples nested up to three deep.
pub fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        proptest::collection::vec(proptest::option::of(inner), 0..4).prop_map(Value::Tuple)
    })
}

/// Tuples drawn from a tiny domain, so pairs often share prefixes and tie element by element.
pub fn narrow_tuple() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        (0i64..3).prop_map(Value::Long),
        "[ab]{0,2}".prop_map(|s| Value::string(&s)),
        any::<bool>().prop_map(Value::Boolean),
    ];
    let leaf = leaf.prop_recursive(2, 8, 3, |inner| {
        proptest::collection::vec(proptest::option::of(inner), 0..3).prop_map(Value::Tuple)
    });
    proptest::collection::vec(proptest::option::of(leaf), 0..4).prop_map(Value::Tuple)
}

/// Two values of the same type (tuples from the narrow domain).
pub fn same_type_pair() -> impl Strategy<Value = (Value, Value)> {
    (0usize..14).prop_flat_map(|t| {
        if t == 13 {
            (narrow_tuple().boxed(), narrow_tuple().boxed())
        } else {
            (scalar_of(t), scalar_of(t))
        }
    })
}

/// Values around the giant boundary: long strings, byte strings and tuples that share long
/// prefixes, so giants tie on their prefix.
pub fn sized_value() -> impl Strategy<Value = Value> {
    let len = prop::sample::select(vec![
        0usize, 10, 480, 487, 488, 489, 490, 491, 495, 520, 900,
    ]);
    let text = (len.clone(), "[ab]{0,3}", any::<bool>()).prop_map(|(n, tail, pre)| {
        let body = "x".repeat(n);
        if pre {
            format!("{tail}{body}")
        } else {
            format!("{body}{tail}")
        }
    });
    prop_oneof![
        text.clone().prop_map(|s| Value::string(&s)),
        (len, "[ab]{0,3}").prop_map(|(n, tail)| {
            let mut b = vec![0u8; n / 2];
            b.extend(tail.bytes());
            Value::Bytes(b.into())
        }),
        (text, 0i64..2)
            .prop_map(|(s, n)| Value::Tuple(vec![Some(Value::string(&s)), Some(Value::Long(n))])),
        (0i64..2).prop_map(Value::Long),
    ]
}
