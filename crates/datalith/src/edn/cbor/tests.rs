use proptest::prelude::*;

use super::{read_cbor, read_cbor_map_deferring, write_cbor};
use crate::edn::{read_one, Edn};

fn cbor(e: &Edn) -> Vec<u8> {
    let mut out = Vec::new();
    write_cbor(e, &mut out);
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Every kind of value, as EDN text, and its CBOR bytes (where they are short enough to
/// read): what another language's CBOR library makes of them.
#[test]
fn every_kind_of_value_round_trips() {
    let cases: &[(&str, Option<&str>)] = &[
        ("nil", Some("f6")),
        ("true", Some("f5")),
        ("false", Some("f4")),
        ("0", Some("00")),
        ("23", Some("17")),
        ("-1", Some("20")),
        ("17592186045418", Some("1b00001000000003ea")),
        ("-9223372036854775808", Some("3b7fffffffffffffff")),
        ("9223372036854775807", Some("1b7fffffffffffffff")),
        ("1N", Some("c24101")),
        ("-1N", Some("c340")),
        ("0N", Some("c240")),
        ("170141183460469231731687303715884105727N", None),
        ("-170141183460469231731687303715884105728N", None),
        ("1.5", Some("fb3ff8000000000000")),
        ("-0.0", Some("fb8000000000000000")),
        ("1.5M", Some("c482200f")),
        ("-12.50M", None),
        ("0M", None),
        ("123456789012345678901234567890.0001M", None),
        ("-0.000000000000000000000000000000000000000001M", None),
        ("1/3", Some("d81e820103")),
        ("-7/2", None),
        ("\"\"", Some("60")),
        ("\"a\\nb ü\"", None),
        ("\\c", None),
        ("\\u00e9", None),
        (":a", Some("d8276161")),
        (":person/name", None),
        ("sym", None),
        ("ns/sym", None),
        ("[]", Some("80")),
        (
            "[1 [2]]",
            Some("820181 02".split(' ').collect::<String>().leak()),
        ),
        ("(1 2)", None),
        ("()", None),
        ("#{}", Some("d9010280")),
        ("#{1 :a}", None),
        ("{}", Some("a0")),
        ("{:a 1 \"b\" [2] 3 nil}", None),
        ("#inst \"1970-01-01T00:00:00.000-00:00\"", Some("c100")),
        ("#inst \"2026-12-07T14:45:01.123-00:00\"", None),
        ("#inst \"1969-12-31T23:59:59.999-00:00\"", None),
        (
            "#uuid \"6ba7b810-9dad-11d1-80b4-00c04fd430c8\"",
            Some("d825506ba7b8109dad11d180b400c04fd430c8"),
        ),
        ("#\"a(\\d+)\"", None),
        ("#my/tag [1 2]", None),
    ];
    let mut wrong = Vec::new();
    for (text, bytes) in cases {
        let value = read_one(text).unwrap();
        let encoded = cbor(&value);
        if bytes.is_some_and(|b| hex(&encoded) != b) {
            wrong.push(format!("{text}: wrote {}", hex(&encoded)));
        }
        if read_cbor(&encoded) != Ok(value) {
            wrong.push(format!("{text}: read {:?}", read_cbor(&encoded)));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// CBOR another library writes that Datalith's writer does not: read as the same values.
#[test]
fn other_encodings_of_the_same_values_read() {
    let cases: &[(&str, &str)] = &[
        // Indefinite arrays, maps and strings.
        ("9f0102ff", "[1 2]"),
        ("bf6161 01ff", "{\"a\" 1}"),
        ("7f61616162ff", "\"ab\""),
        ("d9 0102 9f01ff", "#{1}"),
        // Smaller floats.
        ("f93e00", "1.5"),
        ("fa3fc00000", "1.5"),
        ("f90001", "5.960464477539063E-8"),
        // An integer past 64 bits is a big integer; a bignum with leading zeros.
        ("3bffffffffffffffff", "-18446744073709551616N"),
        ("1bffffffffffffffff", "18446744073709551615N"),
        ("c243000001", "1N"),
        // Tag 1 with a float of seconds; a ratio in other terms.
        (
            "c1fb3ff8000000000000",
            "#inst \"1970-01-01T00:00:01.500-00:00\"",
        ),
        // Tag 0: RFC 3339 text, as Python's cbor2 writes a datetime by default.
        (
            "c0 78 1d 313939302d30352d31375431323a30303a30302e3132332b30303a3030",
            "#inst \"1990-05-17T12:00:00.123-00:00\"",
        ),
        ("d81e820204", "1/2"),
        ("d81e820402", "2"),
        // A big decimal's mantissa as a bignum.
        ("c482 21 c2 41 0f", "0.15M"),
        ("c482 00 c3 41 00", "-1M"),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(bytes, text)| {
            let got = read_cbor(&unhex(&bytes.replace(' ', "")));
            (got.as_ref().ok() != Some(&read_one(text).unwrap()))
                .then(|| format!("{bytes}: {got:?}, not {text}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Bytes that are no value Datalith reads: each an error naming the byte it met.
#[test]
fn malformed_bytes_are_errors() {
    let deep = "81".repeat(600) + "00";
    let cases: &[(&str, &str, usize)] = &[
        ("", "end inside a value", 0),
        ("82 01", "2 items counted, 1 bytes left", 0),
        ("82 01 83", "3 items counted, 0 bytes left", 2),
        ("82 01 18", "end inside a value", 3),
        ("01 02", "bytes after the value", 1),
        ("9b ffffffffffffffff", "items counted", 0),
        ("bb ffffffffffffffff", "entries counted", 0),
        ("7f 61 61 01 ff", "not a definite string of its kind", 3),
        ("1f", "indefinite-length integer", 0),
        ("ff", "break outside", 0),
        ("fc", "reserved byte 0xfc", 0),
        ("63 6162", "a string of 3 bytes, 2 bytes left", 0),
        ("62 ff fe", "utf", 0),
        ("41 00", "byte string outside a tag", 0),
        ("f7", "no EDN value", 0),
        ("d8 63 00", "tag 99 is not one", 0),
        ("d8 25 41 00", "not 16", 0),
        ("d8 27 62 3a61", "not a name", 0),
        ("d8 27 01", "text string belongs", 2),
        ("a2 6161 01 6161 02", "repeats its key \"a\"", 0),
        ("d9 0102 a0", "tag 258 on something other than an array", 0),
        (
            "c2 51 0100000000000000000000000000000000",
            "beyond 128 bits",
            0,
        ),
        ("d8 1e 82 01 00", "denominator positive", 0),
        ("c4 82 f6 01", "exponent is not an integer", 0),
        ("c1 6161", "tag 1 on a text string", 0),
        ("c0 6161", "not an RFC 3339 date", 0),
        ("c1 1b 7fffffffffffffff", "out of range", 0),
        ("d9 f232 62 6162", "not one character", 0),
        (&deep, "nested deeper than", 512),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(bytes, message, at)| {
            let got = read_cbor(&unhex(&bytes.replace(' ', "")));
            match &got {
                Err(e)
                    if e.message.to_lowercase().contains(&message.to_lowercase())
                        && e.at == *at =>
                {
                    None
                }
                _ => Some(format!("{bytes}: {got:?}, not {message:?} at {at}")),
            }
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

proptest! {
    #[test]
    fn written_values_read_back(v in crate::edn::tests::edn()) {
        prop_assert_eq!(read_cbor(&cbor(&v)), Ok(v));
    }

    #[test]
    fn any_bytes_are_a_value_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = read_cbor(&bytes);
    }
}

/// Names repeated across a value read back as written, also past the names the reader
/// keeps (`NAMES_KEPT`): 40 distinct keywords and symbols, each written three times in
/// turn, and an indefinite-length text string as a name (not borrowed from the bytes).
#[test]
fn repeated_names_read_back_past_the_names_kept() {
    let names: Vec<Edn> = (0..40)
        .map(|i| match i % 2 {
            0 => Edn::kw(&format!(":ns{i}/k{i}")),
            _ => Edn::Symbol(crate::codec::Keyword::parse(&format!("s{i}"))),
        })
        .collect();
    let value = Edn::Vector(names.iter().chain(&names).chain(&names).cloned().collect());
    assert_eq!(read_cbor(&cbor(&value)).unwrap(), value);
    // Tag 39 on an indefinite-length text of two chunks, "a/" and "b", read twice.
    let chunked = unhex("82d8277f62612f6162ffd8277f62612f6162ff");
    assert_eq!(
        read_cbor(&chunked).unwrap(),
        Edn::Vector(vec![Edn::kw(":a/b"), Edn::kw(":a/b")])
    );
}

/// A map read with one key's value deferred: the other entries as `read_cbor` reads them,
/// and the deferred value's bytes, which read on their own to the value the key had.
#[test]
fn a_deferred_value_reads_later_as_it_would_have_read_in_place() {
    let cases = [
        "{:tx 5 :tx-data [[1 :a \"x\" 5 true] [2 :b #{1 2} 5 false]] :tempids {\"t\" 1}}",
        "{:tx-data [] :tx 1}",
        "{:tx-data {:nested [1 [2 [3]] #inst \"2026-12-07T00:00:00.000-00:00\"]} :tx 1}",
        "{:tx 7}",
        "{}",
    ];
    for text in cases {
        let whole = read_one(text).unwrap();
        let bytes = cbor(&whole);
        let (rest, range) = read_cbor_map_deferring(&bytes, ":tx-data").unwrap();
        let Edn::Map(pairs) = &whole else { panic!() };
        let (deferred, kept): (Vec<_>, Vec<_>) = pairs
            .iter()
            .cloned()
            .partition(|(k, _)| *k == Edn::kw(":tx-data"));
        assert_eq!(rest, Edn::Map(kept), "{text}");
        let later = range.map(|r| read_cbor(&bytes[r]).unwrap());
        assert_eq!(later, deferred.into_iter().next().map(|(_, v)| v), "{text}");
    }
    // Something other than a map is read whole.
    assert_eq!(
        read_cbor_map_deferring(&cbor(&Edn::Long(3)), ":tx-data").unwrap(),
        (Edn::Long(3), None)
    );
    // Indefinite lengths (a map, an array and a text in chunks) are passed over too.
    let indefinite =
        unhex(&"bf d827 67 74782d64617461 9f 7f 6161 6162 ff 01 ff 61 6b 02 ff".replace(' ', ""));
    let (rest, range) = read_cbor_map_deferring(&indefinite, ":tx-data").unwrap();
    assert_eq!(rest, read_one("{\"k\" 2}").unwrap());
    assert_eq!(
        read_cbor(&indefinite[range.unwrap()]).unwrap(),
        read_one("[\"ab\" 1]").unwrap()
    );
}

/// Malformed bytes in a deferred value are refused when the map is read, where their shape
/// is wrong (what the shape holds is checked when the value is read).
#[test]
fn a_deferred_value_of_the_wrong_shape_is_an_error() {
    let deep = "81".repeat(600) + "00";
    // `:tx-data` (tag 39, "tx-data") then the value's bytes.
    let key = "d827 67 74782d64617461";
    let cases: Vec<(String, &str)> = vec![
        (format!("a1 {key} 82 01"), "2 items counted, 1 bytes left"),
        (format!("a1 {key} 9b ffffffffffffffff"), "items counted"),
        (format!("a1 {key} 63 6162"), "end inside a value"),
        (format!("a1 {key} 1f"), "indefinite-length integer"),
        (format!("a1 {key} 7f 01 ff"), "chunk of another kind"),
        (format!("a1 {key} {deep}"), "nested deeper than"),
        (
            format!("a1 {key} {}00", "9f".repeat(600)),
            "nested deeper than",
        ),
        (
            format!("a1 {key} 82 01 ff"),
            "a break where an item belongs",
        ),
        (
            format!("a1 {key} bf 01 ff"),
            "a break where an item belongs",
        ),
        (format!("a1 {key} 9f 01"), "end inside a value"),
        (format!("a2 {key} 01 {key} 02"), "repeats its key :tx-data"),
        (format!("a1 {key} 01 02"), "bytes after the value"),
    ];
    for (bytes, message) in cases {
        let got = read_cbor_map_deferring(&unhex(&bytes.replace(' ', "")), ":tx-data");
        assert!(
            matches!(&got, Err(e) if e.message.contains(message)),
            "{bytes}: {got:?}, not {message:?}"
        );
    }
    // What the shape holds is the later read's to refuse: a byte string outside a tag.
    let bytes = unhex(&format!("a1 {key} 41 00").replace(' ', ""));
    let (_, range) = read_cbor_map_deferring(&bytes, ":tx-data").unwrap();
    let later = read_cbor(&bytes[range.unwrap()]);
    assert!(
        matches!(&later, Err(e) if e.message.contains("byte string outside a tag")),
        "{later:?}"
    );
}

proptest! {
    #[test]
    fn any_bytes_deferred_are_a_value_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = read_cbor_map_deferring(&bytes, ":tx-data");
    }

    /// Whatever reads as a map's `:tx-data` value is passed over to the same end when
    /// deferred, and reads back to the same value: written values, and any bytes that read.
    #[test]
    fn what_reads_in_place_reads_deferred(
        value in crate::edn::tests::edn(),
        noise in proptest::collection::vec(any::<u8>(), 0..48),
    ) {
        for tail in [cbor(&value), noise] {
            let mut bytes = unhex("a1d8276774782d64617461");
            bytes.extend_from_slice(&tail);
            if let Ok(Edn::Map(pairs)) = read_cbor(&bytes) {
                let (rest, range) = read_cbor_map_deferring(&bytes, ":tx-data").unwrap();
                prop_assert_eq!(rest, Edn::Map(vec![]));
                prop_assert_eq!(read_cbor(&bytes[range.unwrap()]).ok(), Some(pairs[0].1.clone()));
            }
        }
    }
}
