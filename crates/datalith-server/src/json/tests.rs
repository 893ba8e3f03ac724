//! Round trips: every EDN value encodes to JSON and decodes to itself; hand-written JSON
//! decodes to the EDN it means; what is wrong is refused with a message.

use datalith::edn::{read_one, Edn};

use super::*;

fn edn(text: &str) -> Edn {
    read_one(text).unwrap()
}

/// `e` with every map's pairs in key order: EDN maps have no order, JSON objects are read
/// back in key order.
fn sorted(e: Edn) -> Edn {
    match e {
        Edn::Map(pairs) => {
            let mut pairs: Vec<(Edn, Edn)> = pairs
                .into_iter()
                .map(|(k, v)| (sorted(k), sorted(v)))
                .collect();
            pairs.sort_by_key(|(k, _)| k.to_string());
            Edn::Map(pairs)
        }
        Edn::Vector(items) => Edn::Vector(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[test]
fn every_edn_value_round_trips_through_json() {
    let cases = [
        "nil",
        "true",
        "42",
        "-9223372036854775808",
        "4.5",
        "1.0",
        "12345678901234567890123N",
        "7N",
        "1.25M",
        "31/5",
        r#""a string with \"quotes\" and :colon""#,
        r#"":looks-like-a-keyword""#,
        r##""#looks-like-a-tag""##,
        "\\c",
        ":person/name",
        ":plain",
        "?e",
        "my.ns/sym",
        r#"#inst "2026-12-01T10:20:30.456-00:00""#,
        r#"#uuid "6ba7b810-9dad-11d1-80b4-00c04fd430c8""#,
        r##"#"a+b""##,
        "[1 [2 3] []]",
        "(1 2)",
        "#{1 :a \"b\"}",
        r#"{:person/name "Ann", :person/age 30}"#,
        r#"{"a" 1, "b" 2}"#,
        r#"{":a" 1}"#,
        r##"{"#x" 1}"##,
        r#"{1 "one", [2] "two"}"#,
        r#"{"tempid" 17592186045418, -1 17592186045419}"#,
        "#my/tag [1 2]",
        "{}",
        "[]",
    ];
    for text in cases {
        let value = edn(text);
        let json = to_json_string(&value);
        let back = from_json_slice(json.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(sorted(back), sorted(value), "{text} -> {json}");
    }
}

#[test]
fn json_shows_each_type_as_documented() {
    let cases = [
        (":person/name", r##"{"#kw":":person/name"}"##),
        ("#{1}", r##"{"#set":[1]}"##),
        ("1.0", "1.0"),
        ("42", "42"),
        ("1.50M", r##"{"#bigdec":"1.5"}"##),
        (
            r#"#inst "2026-12-01T00:00:00.000-00:00""#,
            r##"{"#inst":"2026-12-01T00:00:00.000Z"}"##,
        ),
        (r#"{:a/b "x"}"#, r#"{":a/b":"x"}"#),
        (r#"{-1 2}"#, r##"{"#map":[[-1,2]]}"##),
    ];
    for (text, want) in cases {
        assert_eq!(to_json_string(&edn(text)), want, "{text}");
    }
    assert_eq!(
        to_json_string(&Edn::Double(f64::NAN)),
        r##"{"#double":"NaN"}"##
    );
}

#[test]
fn hand_written_json_means_what_the_table_says() {
    let cases = [
        (r##"{"#kw": "db.type/string"}"##, ":db.type/string"),
        (r##"{"#ratio": "4/2"}"##, "2"),
        (
            r##"{"#inst": "2026-12-01T01:00:00+01:00"}"##,
            r#"#inst "2026-12-01T00:00:00.000-00:00""#,
        ),
        (r##"{"#bigdec": "3.14M"}"##, "3.14M"),
        (r#"[1, 2.5, "x", null, true]"#, r#"[1 2.5 "x" nil true]"#),
        (
            r#"{"query": "[:find ?e]", "args": []}"#,
            r#"{"query" "[:find ?e]", "args" []}"#,
        ),
        (
            r#"{":db/id": "ann", ":person/name": "Ann"}"#,
            r#"{:db/id "ann", :person/name "Ann"}"#,
        ),
        ("18446744073709551615", "18446744073709551615N"),
    ];
    for (json, want) in cases {
        let got = from_json_slice(json.as_bytes()).unwrap_or_else(|e| panic!("{json}: {e}"));
        assert_eq!(sorted(got), sorted(edn(want)), "{json}");
    }
}

#[test]
fn wrong_json_is_refused_with_a_message() {
    let cases = [
        ("{", "EOF"),
        (r##"{"#nope": 1}"##, "unknown tag"),
        (r##"{"#kw": 1}"##, "takes a string"),
        (r##"{"#kw": "a b"}"##, "is not one"),
        (r##"{"#uuid": "not-a-uuid"}"##, "is not one"),
        (r##"{"#inst": "yesterday"}"##, "RFC 3339"),
        (r##"{"#set": 1}"##, "takes an array"),
        (r##"{"#map": [[1]]}"##, "pairs"),
        (r##"{"#char": "ab"}"##, "one character"),
        (r##"{"a": 1, "#b": 2}"##, "is a tag"),
        (r##"{"#sym": "nil"}"##, "is not one"),
    ];
    for (json, want) in cases {
        let e = from_json_slice(json.as_bytes()).expect_err(json);
        assert_eq!(e.category, crate::error::codes::INVALID_JSON, "{json}");
        assert!(e.message.contains(want), "{json}: {}", e.message);
    }
}

/// A string reads back as itself with serde_json, escaped as the model says (the quote, the
/// backslash, `\n \r \t` short, the other control characters `\u00XX`, nothing else): every
/// ASCII character alone and among others, and other text.
#[test]
fn strings_read_back_with_serde_json() {
    let model = |s: &str| -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    };
    let mut cases: Vec<String> = (0u8..128).map(|b| (b as char).to_string()).collect();
    cases.extend((0u8..128).map(|b| format!("ab{}cd\"e\\f", b as char)));
    cases.extend(
        [
            "",
            "plain",
            "é ü 日本 \u{2028} \u{2029} \u{7f} 😀",
            "[{:k 1 :v \"x\\\"y\"}]",
            "\u{0}\u{1f}\u{7f}",
        ]
        .map(String::from),
    );
    for s in cases {
        let out = to_json_string(&Edn::String(s.clone()));
        assert_eq!(out, model(&s), "{s:?}");
        let back: String = serde_json::from_str(&out).unwrap();
        assert_eq!(back, s);
    }
}

proptest::proptest! {
    #[test]
    fn any_string_reads_back_with_serde_json(s in ".*") {
        let out = to_json_string(&Edn::String(s.clone()));
        let back: String = serde_json::from_str(&out).unwrap();
        proptest::prop_assert_eq!(back, s);
    }
}

/// A keyword is written piece by piece as its text would be: the same JSON.
#[test]
fn keywords_write_as_their_text() {
    use datalith::Keyword;
    let json = |s: &str| serde_json::Value::from(s).to_string();
    for k in [
        Keyword::parse(":a"),
        Keyword::parse(":db/ident"),
        Keyword::parse(":a/b/c"),
        Keyword::new(Some("n\"s"), "na\\me\u{1}"),
        Keyword::new(None, "é"),
    ] {
        let want = format!("{{{}:{}}}", json(super::tag::KEYWORD), json(&k.to_string()));
        assert_eq!(to_json_string(&Edn::Keyword(k.clone())), want, "{k}");
    }
}
