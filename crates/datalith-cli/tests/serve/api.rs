//! Every operation in EDN and in JSON, and the errors a client meets, against one server.

use crate::client::{as_cbor, raw, run_table, Fmt, Row};
use crate::server;

const fn row(
    method: &'static str,
    path: &'static str,
    fmt: Fmt,
    body: &'static str,
    status: u16,
    want: &'static [&'static str],
) -> Row {
    Row {
        method,
        path,
        fmt,
        headers: &[],
        body,
        status,
        want,
    }
}

use Fmt::{Edn as E, Json as J};

#[test]
fn every_operation_in_edn_and_json_and_the_errors() {
    let s = server::start(&["people", "films"], &[]);
    let rows = [
        row(
            "GET",
            "/health",
            E,
            "",
            200,
            &[":status :ok", ":databases 2"],
        ),
        row(
            "GET",
            "/health",
            J,
            "",
            200,
            &[r##"raw:":status":{"#kw":":ok"}"##],
        ),
        row("GET", "/dbs", E, "", 200, &[r#"["films" "people"]"#]),
        // transact: tx data as EDN text.
        row(
            "POST",
            "/db/people/transact",
            E,
            r#"{:tx-data "[{:db/ident :person/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                           {:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
                           {:db/ident :person/born :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
                           {:db/ident :person/ssn :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/value}
                           {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]"}"#,
            200,
            &[":tx ", ":db-after {:basis-t ", ":tx-data [["],
        ),
        // transact: tx data as JSON data, keywords and an instant as tagged objects.
        row(
            "POST",
            "/db/people/transact",
            J,
            r##"{"tx-data": [{":db/id": "ann", ":person/email": "ann@x", ":person/name": "Ann",
                              ":person/ssn": "111", ":person/born": {"#inst": "1990-01-02T00:00:00Z"}}]}"##,
            200,
            &[
                r#":tempids {"ann" "#,
                r#":person/name "Ann""#,
                r#"raw:":tempids":{"ann":"#,
            ],
        ),
        // transact: tx data as EDN data, with a lookup ref.
        row(
            "POST",
            "/db/people/transact",
            E,
            r#"{:tx-data [{:db/id "bob" :person/email "bob@x" :person/name "Bob" :person/friend [[:person/email "ann@x"]]}]}"#,
            200,
            &[r#":tempids {"bob" "#],
        ),
        // q, EDN: inputs after $.
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query "[:find ?n :where [_ :person/name ?n]]"}"#,
            200,
            &[r#"["Ann"]"#, r#"["Bob"]"#, ":basis-t "],
        ),
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query [:find ?n . :in $ ?e :where [?p :person/email ?e] [?p :person/name ?n]] :args ["bob@x"]}"#,
            200,
            &[r#":result "Bob""#],
        ),
        // q in time: as of an instant before any data, and the history's events.
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query "[:find (count ?n) . :where [_ :person/name ?n]]" :as-of #inst "2000-01-01"}"#,
            200,
            &[":result nil"],
        ),
        row(
            "POST",
            "/db/people/q",
            J,
            r##"{"query": "[:find ?n ?added :where [_ :person/name ?n _ ?added]]", "history": true}"##,
            200,
            &["Bob", "true"],
        ),
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query "[:find ?n :where [_ :person/name ?n]]" :as-of "yesterday"}"#,
            400,
            &[":as-of must be a transaction id or an instant"],
        ),
        // q, JSON: the answer's types survive (a set, a keyword, an instant).
        row(
            "POST",
            "/db/people/q",
            J,
            r#"{"query": "[:find ?n . :in $ ?e :where [?p :person/email ?e] [?p :person/name ?n]]", "args": ["ann@x"]}"#,
            200,
            &[r#"raw:":result":"Ann""#],
        ),
        row(
            "POST",
            "/db/people/q",
            J,
            r##"{"query": "[:find ?k . :in ?k]", "args": [{"#kw": ":a/b"}]}"##,
            200,
            &[r##"raw:{"#kw":":a/b"}"##],
        ),
        row(
            "POST",
            "/db/people/q",
            J,
            r#"{"query": "[:find ?b . :where [?p :person/email \"ann@x\"] [?p :person/born ?b]]"}"#,
            200,
            &[
                r##"raw:{"#inst":"1990-01-02T00:00:00.000Z"}"##,
                "#inst \"1990-01-02T00:00:00.000-00:00\"",
            ],
        ),
        row(
            "POST",
            "/db/people/q",
            J,
            r#"{"query": "[:find ?e :where [?p :person/email ?e]]"}"#,
            200,
            &[r##"raw:{":result":{"#set":["##, r#"["ann@x"]"#],
        ),
        // pull and pull-many.
        row(
            "POST",
            "/db/people/pull",
            E,
            r#"{:selector "[:person/name {:person/friend [:person/email]}]" :eid [:person/email "bob@x"]}"#,
            200,
            &[r#":result {:person/name "Bob", :person/friend [{:person/email "ann@x"}]}"#],
        ),
        row(
            "POST",
            "/db/people/pull",
            J,
            r##"{"selector": "[:person/name]", "eid": [{"#kw": ":person/email"}, "ann@x"]}"##,
            200,
            &[r#"raw:{":person/name":"Ann"}"#],
        ),
        row(
            "POST",
            "/db/people/pull-many",
            E,
            r#"{:selector [:person/name] :eids [[:person/email "ann@x"] [:person/email "nobody@x"]]}"#,
            200,
            &[r#":result [{:person/name "Ann"} nil]"#],
        ),
        row(
            "POST",
            "/db/people/pull-many",
            J,
            r##"{"selector": "[:person/name]", "eids": [[{"#kw": ":person/email"}, "bob@x"]]}"##,
            200,
            &[r#":result [{:person/name "Bob"}]"#],
        ),
        // datoms, a page at a time.
        row(
            "POST",
            "/db/people/datoms",
            E,
            r#"{:index :avet :components [:person/email] :limit 1}"#,
            200,
            &[r#":person/email "ann@x"]]"#, ":next-offset 1"],
        ),
        row(
            "POST",
            "/db/people/datoms",
            J,
            r##"{"index": "avet", "components": [{"#kw": ":person/email"}], "offset": 1}"##,
            200,
            &[r#":person/email "bob@x"]]"#],
        ),
        row(
            "POST",
            "/db/people/datoms",
            E,
            r#"{:index :eavt :components [[:person/email "bob@x"] :person/friend]}"#,
            200,
            &[":person/friend "],
        ),
        // index-range: values in [start, end).
        row(
            "POST",
            "/db/people/index-range",
            E,
            r#"{:attrid :person/email :start "b" :end "c"}"#,
            200,
            &[r#":result [[1048577 :person/email "bob@x"]]"#],
        ),
        row(
            "POST",
            "/db/people/index-range",
            J,
            r##"{"attrid": {"#kw": ":person/email"}, "limit": 1}"##,
            200,
            &[r#":person/email "ann@x"]]"#, ":next-offset 1"],
        ),
        // tx-range: the log, a page at a time.
        row(
            "POST",
            "/db/people/tx-range",
            E,
            "{:limit 2}",
            200,
            &[":instant #inst", ":db/ident :person/email", ":next-start "],
        ),
        row(
            "POST",
            "/db/people/tx-range",
            J,
            r#"{"start": 17592186044417}"#,
            200,
            &[r#":person/name "Ann""#, r#":person/name "Bob""#],
        ),
        // metrics, in Prometheus's text format.
        row(
            "GET",
            "/metrics",
            E,
            "",
            200,
            &[
                r#"datalith_requests_total{op="q",status="200"}"#,
                r#"datalith_basis_t{db="people"}"#,
                "datalith_request_seconds_bucket",
            ],
        ),
        // stat.
        row(
            "GET",
            "/db/people/stat",
            E,
            "",
            200,
            &[
                r#":name "people""#,
                ":db/ident :person/email",
                ":datoms {:eav ",
            ],
        ),
        row(
            "GET",
            "/db/people/stat",
            J,
            "",
            200,
            &[r#"raw:":name":"people""#],
        ),
        // Databases are apart.
        row(
            "POST",
            "/db/films/q",
            E,
            r#"{:query "[:find ?e :where [?e :person/name]]"}"#,
            400,
            &[":db.error/not-an-entity"],
        ),
        row(
            "POST",
            "/db/films/transact",
            E,
            r#"{:tx-data "[{:db/ident :film/title :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"}"#,
            200,
            &[],
        ),
        row(
            "POST",
            "/db/films/q",
            E,
            r#"{:query "[:find (count ?e) . :where [?e :film/title]]"}"#,
            200,
            &[":result nil"],
        ),
        // ...and one query joins them, naming the other database among its inputs.
        row(
            "POST",
            "/db/films/transact",
            E,
            r#"{:tx-data [{:film/title "Alien"}]}"#,
            200,
            &[],
        ),
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query "[:find ?n ?t :in $ $films :where [_ :person/name ?n] [$films _ :film/title ?t]]" :args [#datalith/db "films"]}"#,
            200,
            &[r#"["Ann" "Alien"]"#, r#"["Bob" "Alien"]"#],
        ),
        row(
            "POST",
            "/db/people/q",
            J,
            r##"{"query": "[:find ?t . :in $ $films :where [$films _ :film/title ?t]]", "args": [{"#tag": ["datalith/db", "films"]}]}"##,
            200,
            &[r#"raw:":result":"Alien""#],
        ),
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query "[:find ?t :in $ $x :where [$x _ :film/title ?t]]" :args [#datalith/db "nope"]}"#,
            404,
            &[":datalith.error/unknown-database"],
        ),
        // Errors: the category, the anomaly and the message, with the anomaly's status.
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query "[:find"#,
            400,
            &[
                ":db/error :datalith.error/invalid-edn",
                ":cognitect.anomalies/category :cognitect.anomalies/incorrect",
                ":line 1",
                ":message ",
            ],
        ),
        row(
            "POST",
            "/db/people/q",
            J,
            r#"{"query": "#,
            400,
            &[":db/error :datalith.error/invalid-json"],
        ),
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query "[:find ?x :where [?x"}"#,
            400,
            &[":cognitect.anomalies/incorrect"],
        ),
        row(
            "POST",
            "/db/nope/q",
            E,
            r#"{:query "[:find ?x :where [?x :a]]"}"#,
            404,
            &[
                ":db/error :datalith.error/unknown-database",
                ":cognitect.anomalies/not-found",
            ],
        ),
        row(
            "POST",
            "/db/..%2F..%2Fetc/q",
            E,
            r#"{:query "[:find ?x :where [?x :a]]"}"#,
            404,
            &[":datalith.error/unknown-database"],
        ),
        row(
            "POST",
            "/db/people/transact",
            E,
            r#"{:tx-data "[{:no/such 1}]"}"#,
            400,
            &[":db.error/not-an-entity"],
        ),
        row(
            "POST",
            "/db/people/transact",
            J,
            r#"{"tx-data": "[{:person/email \"cid@x\" :person/ssn \"111\"}]"}"#,
            409,
            &[
                ":db/error :db.error/unique-conflict",
                ":cognitect.anomalies/conflict",
                r##"raw:":db/error":{"#kw":":db.error/unique-conflict"}"##,
            ],
        ),
        row(
            "POST",
            "/db/people/transact",
            E,
            r#"{:tx-data "[{:person/email \"cid@x\" :person/name 42}]"}"#,
            400,
            &[":db.error/wrong-type-for-attribute"],
        ),
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:qurey "[:find ?x]"}"#,
            400,
            &["unknown field :qurey"],
        ),
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query "[:find ?x :where [?x :person/name]]" :basis-t 1}"#,
            409,
            &[":datalith.error/basis-unavailable"],
        ),
        row(
            "POST",
            "/db/people/q",
            E,
            r#"{:query "[:find (max ?s) . :where [(range 0 3000) [?x ...]] [(range 0 3000) [?y ...]] [(+ ?x ?y) ?s]]" :timeout 1}"#,
            504,
            &[
                ":datalith.error/timeout",
                ":cognitect.anomalies/interrupted",
            ],
        ),
        row(
            "GET",
            "/db/people/q",
            E,
            "",
            405,
            &[":datalith.error/method-not-allowed"],
        ),
        row(
            "GET",
            "/nowhere",
            E,
            "",
            404,
            &[":datalith.error/unknown-route"],
        ),
        Row {
            headers: &[("Content-Type", "text/plain")],
            ..row(
                "POST",
                "/db/people/q",
                E,
                "{}",
                415,
                &[":datalith.error/unsupported-media-type"],
            )
        },
        Row {
            headers: &[("Accept", "text/html")],
            ..row(
                "GET",
                "/health",
                E,
                "",
                406,
                &[":datalith.error/not-acceptable"],
            )
        },
        Row {
            headers: &[("Accept", "application/json")],
            ..row(
                "POST",
                "/db/people/q",
                E,
                r#"{:query "[:find ?n . :where [_ :person/name ?n] [(= ?n \"Ann\")]]"}"#,
                200,
                &[r#"raw:":result":"Ann""#],
            )
        },
    ];
    run_table(&s, &rows);
    // The same in CBOR, against a server of its own (the rows write).
    let c = server::start(&["people", "films"], &[]);
    let cbor = as_cbor(&rows);
    assert!(
        cbor.len() > rows.len() * 3 / 4,
        "{} of {} rows",
        cbor.len(),
        rows.len()
    );
    run_table(&c, &cbor);

    // A body without Content-Type is EDN, and so is the answer.
    let body = r#"{:query "[:find (count ?p) . :where [?p :person/email]]"}"#;
    let (status, reply) = raw(
        &s.addr(),
        format!(
            "POST /db/people/q HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    );
    assert_eq!(status, 200, "{reply}");
    assert!(reply.contains("content-type: application/edn"), "{reply}");
    assert!(reply.contains(":result 2"), "{reply}");
}

#[test]
fn a_leased_value_answers_later_requests_until_its_lease_ends() {
    let s = server::start(&["people"], &["--max-lease-ms", "5000"]);
    let post = |path: &str, body: &str| {
        crate::client::send(
            "POST",
            &s.url(path),
            &[("Content-Type", "application/edn")],
            Some(body),
        )
    };
    let schema = r#"{:tx-data "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"}"#;
    assert_eq!(post("/db/people/transact", schema).status, 200);
    assert_eq!(
        post("/db/people/transact", "{:tx-data [{:n 1}]}").status,
        200
    );
    let count = r#"[:find (count ?e) . :where [?e :n]]"#;
    let leased = post(
        "/db/people/q",
        &format!("{{:query {count:?} :lease-ms 5000}}"),
    );
    assert_eq!(leased.status, 200, "{}", leased.body);
    let basis = match leased.edn() {
        datalith::edn::Edn::Map(pairs) => pairs
            .into_iter()
            .find(|(k, _)| *k == datalith::edn::Edn::kw(":basis-t"))
            .map(|(_, v)| v.to_string())
            .unwrap(),
        other => panic!("{other}"),
    };
    assert_eq!(
        post("/db/people/transact", "{:tx-data [{:n 2}]}").status,
        200
    );
    let again = post(
        "/db/people/q",
        &format!("{{:query {count:?} :basis-t {basis}}}"),
    );
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(again.body.contains(":result 1,"), "{}", again.body);
    let latest = post("/db/people/q", &format!("{{:query {count:?}}}"));
    assert!(latest.body.contains(":result 2,"), "{}", latest.body);
    let stat = crate::client::send("GET", &s.url("/db/people/stat"), &[], None);
    assert!(stat.body.contains(":leases 1"), "{}", stat.body);
    let too_long = post(
        "/db/people/q",
        &format!("{{:query {count:?} :lease-ms 5001}}"),
    );
    assert_eq!(too_long.status, 400, "{}", too_long.body);
}
