use super::*;
use crate::edn::{read_one, to_edn_string};

/// The text a span covers.
fn at(text: &str, span: Option<Span>) -> &str {
    let s = span.expect("read from text");
    &text[s.start..s.end]
}

#[test]
fn clauses_know_their_kind_and_where_they_were_written() {
    // (query, [(kind, text the clause's span covers, where it starts)])
    let cases: &[(&str, &[(ClauseKind, &str, &str)])] = &[
        (
            "[:find ?e :where [?e :name \"Ivan\"]]",
            &[(
                ClauseKind::DataPattern,
                "[?e :name \"Ivan\"]",
                "line 1, column 18",
            )],
        ),
        (
            "[:find ?n\n :where [?e :age ?a]\n        [(> ?a 30)]\n        [(str ?a) ?n]]",
            &[
                (ClauseKind::DataPattern, "[?e :age ?a]", "line 2, column 9"),
                (ClauseKind::Predicate, "[(> ?a 30)]", "line 3, column 9"),
                (ClauseKind::Function, "[(str ?a) ?n]", "line 4, column 9"),
            ],
        ),
        (
            "[:find ?e :in $ % :where (follows ?e ?f) (not [?f :a 1]) \
             (not-join [?e] [?e :b]) (or [?e :a] [?e :b]) (or-join [?e] [?e :c]) \
             ($db follows ?e ?f) ($db not [?e :a])]",
            &[
                (ClauseKind::RuleCall, "(follows ?e ?f)", "line 1, column 26"),
                (ClauseKind::Not, "(not [?f :a 1])", "line 1, column 42"),
                (
                    ClauseKind::NotJoin,
                    "(not-join [?e] [?e :b])",
                    "line 1, column 58",
                ),
                (ClauseKind::Or, "(or [?e :a] [?e :b])", "line 1, column 82"),
                (
                    ClauseKind::OrJoin,
                    "(or-join [?e] [?e :c])",
                    "line 1, column 103",
                ),
                (
                    ClauseKind::RuleCall,
                    "($db follows ?e ?f)",
                    "line 1, column 126",
                ),
                (ClauseKind::Not, "($db not [?e :a])", "line 1, column 146"),
            ],
        ),
        // Multi-byte text before a clause: spans are bytes, columns are characters.
        (
            "[:find ?e :where [?e :name \"Ωμέγα\"] [?e :age 3]]",
            &[
                (
                    ClauseKind::DataPattern,
                    "[?e :name \"Ωμέγα\"]",
                    "line 1, column 18",
                ),
                (ClauseKind::DataPattern, "[?e :age 3]", "line 1, column 37"),
            ],
        ),
        // A discarded form (`#_`) and comments take no place.
        (
            "[:find ?e :where #_[?x :gone] ; note\n [?e :a] [(f) x y]]",
            &[
                (ClauseKind::DataPattern, "[?e :a]", "line 2, column 2"),
                (ClauseKind::Invalid, "[(f) x y]", "line 2, column 10"),
            ],
        ),
        // The map form.
        (
            "{:find [?e] :where [[?e :a #inst \"2020-01-01\"] [?e :b]]}",
            &[
                (
                    ClauseKind::DataPattern,
                    "[?e :a #inst \"2020-01-01\"]",
                    "line 1, column 21",
                ),
                (ClauseKind::DataPattern, "[?e :b]", "line 1, column 48"),
            ],
        ),
    ];
    for (text, want) in cases {
        let ast = parse(text).unwrap();
        let got: Vec<(ClauseKind, &str, String)> = ast
            .clauses
            .iter()
            .map(|c| {
                let pos = ast.position(c.form.span).unwrap().to_string();
                (c.kind, at(text, c.form.span), pos)
            })
            .collect();
        let want: Vec<(ClauseKind, &str, String)> = want
            .iter()
            .map(|(k, t, p)| (*k, *t, p.to_string()))
            .collect();
        assert_eq!(got, want, "{text}");
    }
}

#[test]
fn find_shape_and_sections_are_read_once() {
    // (query, shape, find elements as written, :in as written, the AST printed back)
    let cases: &[(&str, FindShape, &[&str], &[&str], &str)] = &[
        (
            "[:find ?e ?n :where [?e :a ?n]]",
            FindShape::Relation,
            &["?e", "?n"],
            &["$"],
            "[:find ?e ?n :where [?e :a ?n]]",
        ),
        (
            "[:find [?n ...] :in $ [?n ...] :where [_ :a ?n]]",
            FindShape::Collection,
            &["?n"],
            &["$", "[?n ...]"],
            "[:find [?n ...] :in $ [?n ...] :where [_ :a ?n]]",
        ),
        (
            "[:find [?a (max ?b)] :with ?c :where [?c :a ?a] [?c :b ?b]]",
            FindShape::Tuple,
            &["?a", "(max ?b)"],
            &["$"],
            "[:find [?a (max ?b)] :with ?c :where [?c :a ?a] [?c :b ?b]]",
        ),
        (
            "[:find (pull ?e [*]) . :where [?e :a] :limit 2 :timeout 100]",
            FindShape::Scalar,
            &["(pull ?e [*])"],
            &["$"],
            "[:find (pull ?e [*]) . :where [?e :a] :limit 2 :timeout 100]",
        ),
        (
            "{:find [?e] :keys [e] :in [$ ?x] :where [[?e :a ?x]]}",
            FindShape::Relation,
            &["?e"],
            &["$", "?x"],
            "[:find ?e :keys e :in $ ?x :where [?e :a ?x]]",
        ),
    ];
    for (text, shape, find, inputs, printed) in cases {
        let ast = parse(text).unwrap();
        let forms =
            |fs: &[Form]| -> Vec<String> { fs.iter().map(|f| to_edn_string(&f.edn)).collect() };
        assert_eq!(ast.find.shape, *shape, "{text}");
        assert_eq!(forms(&ast.find.elements), *find, "{text}");
        let in_forms: Vec<Form> = ast.inputs.iter().map(|i| i.form.clone()).collect();
        assert_eq!(forms(&in_forms), *inputs, "{text}");
        assert_eq!(ast.to_string(), *printed, "{text}");
        // The same query given as data parses to the same sections, without spans.
        let data = parse_edn(&read_one(text).unwrap()).unwrap();
        assert_eq!(data.to_string(), *printed, "{text}");
        assert!(data.clauses.iter().all(|c| c.form.span.is_none()), "{text}");
    }
}

#[test]
fn a_query_that_does_not_parse_says_where() {
    // (query, error)
    let cases = [
        (
            "[:find ?e :where [?e :name]",
            "line 1, column 1: unclosed collection: expected ]",
        ),
        (
            "[:find ?e\n :where [?e :name \"x]]",
            "line 2, column 19: unterminated string",
        ),
        (
            "[:find ?e :where [?e :a]] extra",
            "line 1, column 27: unexpected text after the form",
        ),
        (
            "[?e :find ?e]",
            "line 1, column 2: query must start with a keyword such as :find, not ?e",
        ),
        (
            "[:find ?e :wher [?e :a]]",
            "line 1, column 11: unknown query section :wher",
        ),
        (
            "[:find ?e :where [?e :a] :limit -1]",
            "line 1, column 33: :limit takes one non-negative number",
        ),
        (
            "[:find ?e :where [?e :a] :timeout]",
            "line 1, column 26: :timeout takes one non-negative number",
        ),
        ("[:where [?e :a]]", "line 1, column 1: query has no :find"),
        (
            "{:find [?e] \"where\" [[?e :a]]}",
            "line 1, column 13: query map key \"where\" is not a keyword",
        ),
        (
            "\n\n  #{:find}",
            "line 3, column 3: a query is a vector or a map, not #{:find}",
        ),
    ];
    for (text, want) in cases {
        let err = parse(text).unwrap_err();
        assert_eq!(err.to_string(), want, "{text}");
        assert_eq!(err.category(), crate::error::INVALID_QUERY, "{text}");
    }
    // Given as data, the same mistake has no position to name.
    let err = parse_edn(&read_one("[:find ?e :wher [?e :a]]").unwrap()).unwrap_err();
    assert_eq!(err.to_string(), "unknown query section :wher");
}

#[test]
fn a_planning_error_is_located_at_its_clause() {
    use crate::query::error::QueryError;
    let text = "[:find ?e\n :where [?e :a ?x]\n        (not [?e :b ?y] [(> ?y 2)])]";
    let ast = parse(text).unwrap();
    // (error naming a clause, where it is)
    let cases = [
        (
            QueryError::UnknownAttribute {
                attr: ":a".into(),
                clause: "[?e :a ?x]".into(),
            },
            Some("line 2, column 9"),
        ),
        // A clause inside a `not` is found where it is.
        (
            QueryError::InsufficientBinding {
                vars: vec!["?y".into()],
                clause: "[(> ?y 2)]".into(),
            },
            Some("line 3, column 25"),
        ),
        // The `not` itself.
        (
            QueryError::InsufficientBinding {
                vars: vec!["?y".into()],
                clause: "(not [?e :b ?y] [(> ?y 2)])".into(),
            },
            Some("line 3, column 9"),
        ),
        (
            QueryError::UnknownAttribute {
                attr: ":z".into(),
                clause: "[?e :z]".into(),
            },
            None,
        ),
        (QueryError::NoDatabase, None),
    ];
    for (err, want) in cases {
        let got = ast.locate(&err).map(|p| p.to_string());
        assert_eq!(got.as_deref(), want, "{err}");
    }
}

#[test]
fn pull_patterns_written_in_find_are_parsed_with_the_text() {
    // (query, patterns parsed with the text)
    let cases: &[(&str, &[&str])] = &[
        ("[:find ?e :where [?e :a]]", &[]),
        ("[:find (pull ?e [:a :b]) :where [?e :a]]", &["[:a :b]"]),
        (
            "[:find (pull ?e [*]) (pull $ ?f [:a]) :where [?e :a ?f]]",
            &["[*]", "[:a]"],
        ),
        // A pattern given as an input is parsed when it arrives.
        (
            "[:find (pull ?e pattern) :in $ pattern :where [?e :a]]",
            &[],
        ),
        // One that does not parse is reported when the query is planned.
        ("[:find (pull ?e [42]) :where [?e :a]]", &[]),
    ];
    for (query, want) in cases {
        let ast = parse(query).unwrap();
        let got: Vec<String> = ast.pulls.iter().map(|(e, _)| to_edn_string(e)).collect();
        assert_eq!(got, *want, "{query}");
    }
}

#[test]
fn in_forms_know_what_they_take() {
    // (:in form, what it takes)
    let cases = [
        ("$", InputKind::Source("$".into())),
        ("$people", InputKind::Source("$people".into())),
        ("%", InputKind::Rules),
        ("?x", InputKind::Scalar("?x".into())),
        ("pattern", InputKind::PullPattern("pattern".into())),
        ("_", InputKind::Binding),
        ("[?x ...]", InputKind::Binding),
        ("[[?a ?b]]", InputKind::Binding),
        ("[?a ?b]", InputKind::Binding),
    ];
    for (form, want) in cases {
        let text = format!("[:find ?e :in {form} :where [?e :a]]");
        let ast = parse(&text).unwrap();
        assert_eq!(ast.inputs.len(), 1, "{form}");
        assert_eq!(ast.inputs[0].kind, want, "{form}");
        assert_eq!(at(&text, ast.inputs[0].form.span), form);
    }
    // Without :in, `$` alone, written nowhere.
    let ast = parse("[:find ?e :where [?e :a]]").unwrap();
    let kinds: Vec<&InputKind> = ast.inputs.iter().map(|i| &i.kind).collect();
    assert_eq!(kinds, [&InputKind::Source("$".into())]);
    assert!(!ast.inputs_written && ast.inputs[0].form.span.is_none());
}

#[test]
fn clauses_inside_not_and_or_keep_their_kind_and_span() {
    /// A clause as `Kind line:column`, with its inner clauses in braces.
    fn tree(ast: &QueryAst, c: &WhereClause) -> String {
        let at = ast.position(c.form.span).unwrap();
        let inner: Vec<String> = c.inner.iter().map(|i| tree(ast, i)).collect();
        let inner = if inner.is_empty() {
            String::new()
        } else {
            format!(" {{{}}}", inner.join(", "))
        };
        format!("{:?} {}:{}{inner}", c.kind, at.line, at.column)
    }
    // (query, its clauses as trees)
    let cases: &[(&str, &[&str])] = &[
        (
            "[:find ?e :where (not [?e :a] [(> ?e 1)])]",
            &["Not 1:18 {DataPattern 1:23, Predicate 1:31}"],
        ),
        (
            "[:find ?e :where (not-join [?e] [?e :a ?x])]",
            &["NotJoin 1:18 {DataPattern 1:33}"],
        ),
        (
            "[:find ?e :where ($db not [?e :a])]",
            &["Not 1:18 {DataPattern 1:27}"],
        ),
        (
            "[:find ?e :where (or [?e :a]\n (and [?e :b] (not [?e :c])))]",
            &["Or 1:18 {DataPattern 1:22, And 2:2 {DataPattern 2:7, Not 2:15 {DataPattern 2:20}}}"],
        ),
        (
            "[:find ?e :where (or-join [?e] (and [?e :b ?x] [?x :c]))]",
            &["OrJoin 1:18 {And 1:32 {DataPattern 1:37, DataPattern 1:48}}"],
        ),
        // A rule call and an `and` outside an `or` hold no clauses.
        (
            "[:find ?e :in $ % :where (r ?e) (and [?e :a])]",
            &["RuleCall 1:26", "RuleCall 1:33"],
        ),
    ];
    for (text, want) in cases {
        let ast = parse(text).unwrap();
        let got: Vec<String> = ast.clauses.iter().map(|c| tree(&ast, c)).collect();
        assert_eq!(got, *want, "{text}");
    }
}

#[test]
fn a_clause_is_read_into_what_it_says_once() {
    use crate::codec::Value;
    use ClauseForm as C;
    use TermForm as T;
    let var = |n: &str| T::Var(n.to_string());
    let kw = |k: &str| T::Const(Value::Keyword(crate::codec::Keyword::parse(k)));
    let long = |n: i64| T::Const(Value::Long(n));
    let join = |vars: &[(&str, bool)]| {
        Ok(Some(
            vars.iter()
                .map(|(n, required)| JoinVar {
                    term: var(n),
                    written: n.to_string(),
                    required: *required,
                })
                .collect(),
        ))
    };
    // (clause text, what it says)
    let cases: Vec<(&str, ClauseForm)> = vec![
        (
            "[?e :age 30]",
            C::Pattern {
                src: None,
                terms: vec![var("?e"), kw(":age"), long(30)],
            },
        ),
        (
            "[$db _ :age]",
            C::Pattern {
                src: Some("$db".into()),
                terms: vec![T::Blank, kw(":age")],
            },
        ),
        (
            "[(> ?a 30)]",
            C::Call {
                name: ">".into(),
                src: None,
                args: vec![var("?a"), long(30)],
                binding: CallBinding::None,
            },
        ),
        (
            "[(get-else $ ?e :a 0) [?x ...]]",
            C::Call {
                name: "get-else".into(),
                src: Some("$".into()),
                args: vec![var("?e"), kw(":a"), long(0)],
                binding: CallBinding::One(BindingForm::Collection(var("?x"))),
            },
        ),
        (
            "[(f ?a) ?b ?c]",
            C::Call {
                name: "f".into(),
                src: None,
                args: vec![var("?a")],
                binding: CallBinding::TooMany,
            },
        ),
        (
            "($db follows ?a 1)",
            C::Rule {
                src: Some("$db".into()),
                name: "follows".into(),
                args: vec![var("?a"), long(1)],
            },
        ),
        (
            "(or-join [?a [?b]] [?a :x ?b])",
            C::Or {
                src: None,
                join: join(&[("?a", false), ("?b", true)]),
            },
        ),
        (
            "($x not [?a :x])",
            C::Not {
                src: Some("$x".into()),
                join: Ok(None),
            },
        ),
        (
            "($x not-join ?a [?a :x])",
            C::Not {
                src: Some("$x".into()),
                join: Err("not-join needs a vector of variables: (not-join ?a [?a :x])".into()),
            },
        ),
        (
            "[?e :a nil]",
            C::Pattern {
                src: None,
                terms: vec![
                    var("?e"),
                    kw(":a"),
                    T::Bad("nil is not a valid value in a clause".into()),
                ],
            },
        ),
        (
            "[(1 ?a)]",
            C::Malformed("expected a function name in [(1 ?a)]".into()),
        ),
        ("($db)", C::Malformed("expected a rule name: ($db)".into())),
        ("42", C::Malformed("not a clause: 42".into())),
    ];
    for (text, want) in cases {
        let got = clause_of(&read_one(text).unwrap()).parsed;
        assert_eq!(got, want, "{text}");
    }
    // An `or` branch may be an `and`; elsewhere `and` is a rule name (Datomic).
    let or = parse("[:find ?a :where (or (and [?a :x] [?a :y]) [?a :z])]").unwrap();
    assert_eq!(or.clauses[0].inner[0].parsed, C::And);
    assert_eq!(or.clauses[0].inner[0].inner.len(), 2);
    let not = parse("[:find ?a :where (not (and [?a :x]))]").unwrap();
    assert!(matches!(&not.clauses[0].inner[0].parsed, C::Rule { name, .. } if name == "and"));
}
