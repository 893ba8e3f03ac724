use super::*;
use crate::codec::Keyword;
use proptest::prelude::*;

#[test]
fn reads_every_form() {
    let cases: Vec<(&str, Edn)> = vec![
        ("nil", Edn::Nil),
        ("true", Edn::Bool(true)),
        ("-42", Edn::Long(-42)),
        ("42N", Edn::BigInt(42)),
        ("99999999999999999999", Edn::BigInt(99999999999999999999)),
        ("1.5", Edn::Double(1.5)),
        ("1e3", Edn::Double(1000.0)),
        ("\"a\\nb\\u0041\"", Edn::String("a\nbA".into())),
        ("\\newline", Edn::Char('\n')),
        ("\\x", Edn::Char('x')),
        (":a/b", Edn::Keyword(Keyword::new(Some("a"), "b"))),
        ("?e", Edn::Symbol(Keyword::new(None, "?e"))),
        (
            "(1 [2] {:a 3} #{4})",
            Edn::List(vec![
                Edn::Long(1),
                Edn::Vector(vec![Edn::Long(2)]),
                Edn::Map(vec![(Edn::kw(":a"), Edn::Long(3))]),
                Edn::Set(vec![Edn::Long(4)]),
            ]),
        ),
        (
            "[1, 2 ; comment\n #_ 3 4]",
            Edn::Vector(vec![Edn::Long(1), Edn::Long(2), Edn::Long(4)]),
        ),
        ("#inst \"1970-01-02T00:00:00.500Z\"", Edn::Inst(86_400_500)),
        (
            "#inst \"2024-02-29T12:00:00+01:00\"",
            Edn::Inst(1_709_204_400_000),
        ),
        (
            "#uuid \"00000000-0000-0000-0000-000000000001\"",
            Edn::Uuid([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
        ),
        // Spacing of every kind before a tagged value, and a discard between.
        ("#inst\t,\n \"1970-01-01\"", Edn::Inst(0)),
        ("#inst #_ 7 ; c\n\"1970-01-01\"", Edn::Inst(0)),
        ("#inst\u{2003}\"1970-01-01\"", Edn::Inst(0)),
        // Plain integers end where their token ends; anything longer is another number.
        (
            "[-12,34\t5;x\n6]",
            Edn::Vector(vec![
                Edn::Long(-12),
                Edn::Long(34),
                Edn::Long(5),
                Edn::Long(6),
            ]),
        ),
        ("[1.5 2e3 3N 4M]", read_one("[1.5 2000.0 3N 4M]").unwrap()),
        ("123456789012345678", Edn::Long(123_456_789_012_345_678)),
        (
            "-1234567890123456789",
            Edn::Long(-1_234_567_890_123_456_789),
        ),
        (
            "[- -a]",
            Edn::Vector(vec![
                Edn::Symbol(Keyword::parse("-")),
                Edn::Symbol(Keyword::parse("-a")),
            ]),
        ),
        ("12\u{2003}", Edn::Long(12)),
    ];
    for (text, want) in cases {
        assert_eq!(read_one(text).unwrap(), want, "{text}");
    }
    // Words that start like numbers but are not plain integers: symbols or errors, as before.
    assert!(matches!(read_one("-a"), Ok(Edn::Symbol(_))));
    assert_eq!(
        read_one("12a").unwrap_err().to_string(),
        "1:1: bad number \"12a\""
    );
}

#[test]
fn errors_say_where_and_what() {
    let cases = [
        ("[1 2", "1:1: unclosed collection: expected ]"),
        ("(a\n  b))", "2:5: unexpected text after the form"),
        ("{:a}", "1:1: a map needs an even number of forms"),
        ("[{:a 1 :b 2 :a 3}]", "1:2: a map repeats its key :a"),
        ("\"abc", "1:1: unterminated string"),
        ("[1 }", "1:4: unbalanced }: expected ]"),
        (
            "#inst \"yesterday\"",
            "1:1: bad #inst \"yesterday\": expected RFC 3339",
        ),
        ("1.2.3", "1:1: bad number \"1.2.3\""),
        ("[#_]", "1:2: expected a form after #_"),
        // Found by fuzzing: `#:a x` read as a tag printed back as Clojure's namespaced map.
        (
            "#:a x",
            "1:1: expected a tag (a symbol starting with a letter), {, ## or _ after #",
        ),
        (
            "#1 x",
            "1:1: expected a tag (a symbol starting with a letter), {, ## or _ after #",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(read_one(text).unwrap_err().to_string(), want, "{text}");
    }
}

#[test]
fn completeness_for_multi_line_input() {
    assert!(!is_complete("[:find ?e\n :where [?e"));
    assert!(!is_complete("\"open"));
    assert!(is_complete("[:find ?e :where [?e :a 1]]"));
    assert!(
        is_complete("]"),
        "a syntax error is complete: it will not get better"
    );
}

#[test]
fn a_prefix_reads_its_first_form_or_waits_for_more() {
    // (text, the form and the bytes it took, or None: more text is needed)
    let cases: Vec<(&str, Option<(&str, usize)>)> = vec![
        ("[1 2] [3", Some(("[1 2]", 5))),
        ("  \"a b\" x", Some(("\"a b\"", 7))),
        ("#{[1 \"x", None),
        ("\"open", None),
        ("[1 [2", None),
        ("   ", None),
        ("", None),
        ("{:a 1} ", Some(("{:a 1}", 6))),
        ("17 ", Some(("17", 2))),
    ];
    for (text, want) in cases {
        let got = read_prefix(text).unwrap();
        let want = want.map(|(form, used)| (read_one(form).unwrap(), used));
        assert_eq!(got, want, "{text:?}");
    }
    // A syntax error is an error, not a wait for more.
    assert!(read_prefix("] x").is_err());
    // Pieces read form by form give the forms of the whole.
    let whole =
        "[1 \"two three\" #{:four}] {:five [5.5 #inst \"2020-01-02T00:00:00.000-00:00\"]} \\c ";
    let mut at = 0;
    let mut forms = Vec::new();
    while let Some((form, used)) = read_prefix(&whole[at..]).unwrap() {
        forms.push(form);
        at += used;
    }
    assert_eq!(forms, read_all(whole).unwrap());
}

pub(super) fn edn() -> impl Strategy<Value = Edn> {
    let leaf = prop_oneof![
        Just(Edn::Nil),
        any::<bool>().prop_map(Edn::Bool),
        any::<i64>().prop_map(Edn::Long),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Edn::Double),
        ".{0,8}".prop_map(Edn::String),
        "[a-z][a-z0-9\\-]{0,5}".prop_map(|n| Edn::Keyword(Keyword::new(Some("ns"), &n))),
        (-1_000_000_000_000i64..4_000_000_000_000).prop_map(Edn::Inst),
        any::<[u8; 16]>().prop_map(Edn::Uuid),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Edn::Vector),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Edn::List),
            // A map's keys differ (the reader refuses a repeated one).
            proptest::collection::vec((inner.clone(), inner), 0..3).prop_map(|mut pairs| {
                let mut kept: Vec<(Edn, Edn)> = Vec::new();
                for (k, v) in pairs.drain(..) {
                    if !kept.iter().any(|(seen, _)| *seen == k) {
                        kept.push((k, v));
                    }
                }
                Edn::Map(kept)
            }),
        ]
    })
}

proptest! {
    #[test]
    fn printing_reads_back(v in edn()) {
        let text = to_edn_string(&v);
        prop_assert_eq!(read_one(&text).unwrap(), v, "{}", text);
    }

    #[test]
    fn any_input_is_a_value_or_an_error(s in "\\PC{0,40}") {
        let _ = read_all(&s);
        let _ = is_complete(&s);
    }
}

#[test]
fn ratios_and_regex_literals_read_and_print() {
    // (text read, EDN printed, JSON printed)
    let cases = [
        ("31/5", "31/5", "\"31/5\""),
        ("-2/4", "-1/2", "\"-1/2\""),
        ("+3/6", "1/2", "\"1/2\""),
        ("4/2", "2", "2"),
        ("0/7", "0", "0"),
        (
            "170141183460469231731687303715884105726/2",
            "85070591730234615865843651857942052863N",
            "85070591730234615865843651857942052863",
        ),
        (r#"#"a(\d+)""#, r#"#"a(\d+)""#, r#""a(\\d+)""#),
        (
            r#"#"say \"hi\"""#,
            r#"#"say \"hi\"""#,
            r#""say \\\"hi\\\"""#,
        ),
        ("##Inf", "##Inf", "null"),
        ("##-Inf", "##-Inf", "null"),
    ];
    for (text, edn, json) in cases {
        let v = read_one(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(to_edn_string(&v), edn, "{text}");
        assert_eq!(to_json(&v), json, "{text}");
    }
    let bad = ["1/0", "1/2/3", "1/-2", "1.5/2", "a/2x", "#\"open"];
    for text in bad {
        match read_one(text) {
            Err(_) => {}
            // `a/2x` is a symbol, not a number: fine as long as it is not a ratio.
            Ok(Edn::Symbol(_)) => {}
            Ok(other) => panic!("{text} read as {other:?}"),
        }
    }
    assert!(
        !is_complete("#\"open"),
        "an open regex literal asks for more input"
    );
}

#[test]
fn query_only_values_convert_both_ways() {
    for text in ["31/5", "#{1 \"b\" :a}", "{:a 1, :b [2 3]}", r#"#"x+""#] {
        let e = read_one(text).unwrap();
        let v = value_from_edn(&e).unwrap_or_else(|| panic!("{text} is a value"));
        assert!(!v.is_storable(), "{text}");
        assert_eq!(edn_from_value(&v), e, "{text}");
    }
    // An invalid pattern or a nil element is not a value.
    for text in [r#"#"(""#, "#{1 nil}", "{:a nil}"] {
        assert_eq!(value_from_edn(&read_one(text).unwrap()), None, "{text}");
    }
}

#[test]
fn bigdecs_print_plain_where_short() {
    // (text read, EDN printed, JSON printed)
    let cases = [
        ("1.50M", "1.5M", "\"1.5M\""),
        ("-0.001M", "-0.001M", "\"-0.001M\""),
        ("120M", "120M", "\"120M\""),
        ("1e60M", "0.1E61M", "\"0.1E61M\""),
    ];
    for (text, edn, json) in cases {
        let v = read_one(text).unwrap();
        assert_eq!(to_edn_string(&v), edn, "{text}");
        assert_eq!(to_json(&v), json, "{text}");
        assert_eq!(read_one(edn).unwrap(), v, "{text} reads back");
    }
}

#[test]
fn strings_print_with_their_escapes() {
    let cases: Vec<(&str, &str)> = vec![
        ("", r#""""#),
        ("plain", r#""plain""#),
        ("a\"b", r#""a\"b""#),
        ("[{:v \"x\"}]", r#""[{:v \"x\"}]""#),
        ("back\\slash", r#""back\\slash""#),
        ("l1\nl2\tt\rr", r#""l1\nl2\tt\rr""#),
        ("\u{1}bell\u{7}", r#""\u0001bell\u0007""#),
        ("é \"ü\" 日本", r#""é \"ü\" 日本""#),
        ("\"", r#""\"""#),
    ];
    for (s, printed) in cases {
        let text = to_edn_string(&Edn::String(s.into()));
        assert_eq!(text, printed, "{s:?}");
        assert_eq!(read_one(&text).unwrap(), Edn::String(s.into()), "{s:?}");
    }
}
