"""The API: transact, q, pull, pull_many, entity, datoms, reports."""

import tempfile

import pytest

import datalith
from datalith import Keyword

from conftest import SCHEMA


def test_transact_returns_tempids_and_datoms(conn):
    report = conn.transact([{":db/id": "ann", ":person/name": "Ann", ":person/age": 30}])
    ann = report.tempids["ann"]
    assert report.tx > 0
    assert sorted((d.a, d.v) for d in report.tx_data if d.e == ann) == [(":person/age", 30), (":person/name", "Ann")]
    assert all(d.added and d.tx == report.tx for d in report.tx_data if d.e == ann)


# Each form of tx data, and what the database then holds for Ann.
TX_FORMS = [
    ("edn text", '[{:person/name "Ann" :person/age 31}]', 31),
    ("entity dict", [{":person/name": "Ann", ":person/age": 32}], 32),
    ("list with plain strings", [[":db/add", "t", ":person/name", "Ann"], [":db/add", "t", ":person/age", 33]], 33),
    ("list with a lookup ref", [[":db/add", (":person/name", "Ann"), ":person/age", 34]], 34),
    ("keywords", [[Keyword(":db/add"), (Keyword(":person/name"), "Ann"), Keyword(":person/age"), 35]], 35),
]


@pytest.mark.parametrize("name,data,age", TX_FORMS, ids=[f[0] for f in TX_FORMS])
def test_every_form_of_tx_data(conn, name, data, age):
    conn.transact([{":person/name": "Ann"}])
    conn.transact(data)
    assert conn.db().q('[:find ?a . :where [?e :person/name "Ann"] [?e :person/age ?a]]') == age


def test_a_string_value_that_begins_with_a_colon_stays_a_string(conn):
    conn.transact([{":person/name": ":colon"}])
    assert conn.db().q("[:find ?n . :where [_ :person/name ?n]]") == ":colon"


QUERIES = [
    ("[:find ?n :where [?e :person/name ?n]]", (), {("Ann",), ("Bob",), ("Cy",)}),
    ("[:find [?n ...] :in $ ?min :where [?e :person/age ?a] [(>= ?a ?min)] [?e :person/name ?n]]", (18,), None),
    ("[:find (count ?e) . :where [?e :person/name]]", (), 3),
    ("[:find ?n . :in $ [?a ...] :where [?e :person/age ?a] [?e :person/name ?n]]", ([17],), "Bob"),
    ("[:find ?f :where [?e :person/name \"Cy\"] [?e :person/friend ?x] [?x :person/name ?f]]", (), {("Ann",), ("Bob",)}),
]


@pytest.mark.parametrize("query,inputs,expected", QUERIES, ids=[q for q, _, _ in QUERIES])
def test_queries(people, query, inputs, expected):
    out = people.db().q(query, *inputs)
    if expected is None:
        assert sorted(out) == ["Ann", "Cy"]
    else:
        assert out == expected


def test_a_query_over_two_database_values(people):
    before = people.db()
    people.transact([{":person/name": "Dee", ":person/age": 50}])
    after = people.db()
    q = "[:find ?n :in $ $old :where [?e :person/name ?n] (not [$old ?e :person/name])]"
    assert after.q(q, before) == {("Dee",)}
    # Datomic's form: every input given, the databases among them.
    q = "[:find ?n :in $old $new :where [$new ?e :person/name ?n] (not [$old ?e :person/name])]"
    assert datalith.q(q, before, after) == {("Dee",)}
    assert before.q("[:find (count ?e) . :where [?e :person/name]]") == 3


def test_pull_and_pull_many(people):
    db = people.db()
    bob = db.pull([":person/name", {":person/friend": [":person/name"]}], (":person/name", "Bob"))
    assert bob == {":person/name": "Bob", ":person/friend": [{":person/name": "Ann"}]}
    assert db.pull("[:person/age]", (":person/name", "Nobody")) is None
    names = db.pull_many("[:person/name]", [(":person/name", "Ann"), (":person/name", "Cy")])
    assert names == [{":person/name": "Ann"}, {":person/name": "Cy"}]
    assert db.pull(["*"], (":person/email", "ann@x.org"))[":person/age"] == 30


def test_entity_is_a_lazy_mapping_that_navigates_refs(people):
    db = people.db()
    cy = db.entity((":person/name", "Cy"))
    assert cy[":person/name"] == "Cy"
    assert sorted(f[":person/name"] for f in cy[":person/friend"]) == ["Ann", "Bob"]
    assert cy.get(":person/email") is None and cy.get(":person/email", "none") == "none"
    assert ":person/age" in cy and ":person/email" not in cy
    assert sorted(cy.keys()) == [":person/age", ":person/friend", ":person/name"]
    with pytest.raises(KeyError):
        cy[":person/email"]
    assert db.entity((":person/name", "Nobody")) is None
    assert db.entity(cy.id) == cy


def test_datoms_walk_an_index(people):
    db = people.db()
    names = [(d.a, d.v) for d in db.datoms(":avet", ":person/name")]
    assert names == [(":person/name", "Ann"), (":person/name", "Bob"), (":person/name", "Cy")]
    ann = db.entity((":person/name", "Ann")).id
    assert {d.a for d in db.datoms(":eavt", ann)} == {":person/name", ":person/age", ":person/email"}
    assert [d.e for d in db.datoms(":avet", ":person/age", 17)] == [db.entity((":person/name", "Bob")).id]
    # :vaet: the references to an entity (Bob and Cy name Ann a friend).
    bob, cy = db.entity((":person/name", "Bob")).id, db.entity((":person/name", "Cy")).id
    assert sorted(d.e for d in db.datoms(":vaet", ann)) == sorted([bob, cy])
    assert [d.e for d in db.datoms(":vaet", ann, ":person/friend")] == sorted([bob, cy])
    with pytest.raises(ValueError, match="not an index"):
        db.datoms(":veat")


def test_datoms_are_datoms(people):
    d = next(iter(people.db().datoms(":avet", ":person/name")))
    assert type(d) is datalith.Datom and isinstance(d.a, Keyword) and d.added is True
    assert d == (d.e, ":person/name", "Ann", d.tx, True)


def test_raw_access_entities_with_then_values_of_each(people):
    db = people.db()
    ids = {n: db.entity((":person/name", n)).id for n in ("Ann", "Bob", "Cy")}
    cases = [
        # (attribute, value, the entities, the attribute read of each, its values)
        (":person/name", "Bob", [ids["Bob"]], ":person/age", [17]),
        (":person/age", 99, [], ":person/name", []),
        (":person/tags", Keyword(":x"), [], ":person/age", []),
    ]
    for attr, value, entities, other, values in cases:
        found = db.entities_with(attr, value)
        assert found == entities, (attr, value)
        assert db.values_of_each(found, other) == values
    everyone = sorted(ids.values())
    assert db.values_of_each(everyone, ":person/friend") == [ids["Ann"], ids["Ann"], ids["Bob"]]
    assert db.values_of_each(everyone, ":person/email") == ["ann@x.org"]
    with pytest.raises(KeyError, match="not an attribute"):
        db.entities_with(":person/nope", 1)


def test_bulk_load_fill_db_and_init_db(tmp_path):
    base = 1 << 40  # inside the user partition
    datoms = [(base + i, ":person/name", f"p{i}") for i in range(100)]
    datoms += [(base + i, ":person/tags", Keyword(":t")) for i in range(0, 100, 2)]
    with datalith.init_db(tmp_path / "a", datoms, schema=SCHEMA, durability="nosync") as c:
        db = c.db()
        assert db.q("[:find (count ?e) . :where [?e :person/name]]") == 100
        assert len(db.entities_with(":person/tags", Keyword(":t"))) == 50
        assert c.fill_db([(base + 500, ":person/age", 5)]) == 1
        assert c.db().q("[:find ?a . :where [_ :person/age ?a]]") == 5
    bad = [
        ([(base, ":person/nope", 1)], datalith.Error),
        ([(base, ":person/age", "not a long")], datalith.Error),
        ([(1, ":person/age", 1)], datalith.Error),
        ([(base, ":person/age")], ValueError),
        ([("e", ":person/age", 1)], ValueError),
    ]
    with datalith.open(tmp_path / "b", schema=SCHEMA) as c:
        for datoms, error in bad:
            with pytest.raises(error):
                c.fill_db(datoms)
        assert c.db().q("[:find (count ?e) . :where [?e :person/age]]") is None


def test_a_db_value_does_not_change(people):
    db = people.db()
    people.transact([{":person/name": "Dee"}])
    assert db.q("[:find (count ?e) . :where [?e :person/name]]") == 3
    assert people.db().basis_t > db.basis_t


def test_reopening_finds_what_was_committed(tmp_path):
    with datalith.open(tmp_path) as c:
        c.transact('[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one} ]')
        c.transact([{":n": 7}])
    with datalith.open(tmp_path, read_only=True) as c:
        assert c.db().q("[:find ?v . :where [_ :n ?v]]") == 7


def test_a_closed_connection_says_so(tmp_path):
    c = datalith.open(tmp_path)
    c.close()
    assert "closed" in repr(c)
    with pytest.raises(datalith.Unavailable):
        c.db()


def test_q_each_hands_on_the_items_of_a_result_in_rows(people):
    db = people.db()
    rows = []
    query = "[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]"
    assert db.q_each(query, rows.append) is None
    # The items `q` gives, tuples as in its set, in the engine's order.
    assert set(rows) == db.q(query) == {("Ann", 30), ("Bob", 17), ("Cy", 45)}
    names = []
    assert db.q_each("[:find [?n ...] :in $ ?min :where [?e :person/age ?a] [(>= ?a ?min)] [?e :person/name ?n]]", names.append, 18) is None
    assert sorted(names) == ["Ann", "Cy"]
    # Other results come whole; the callable is not called.
    called = []
    assert db.q_each("[:find (count ?e) . :where [?e :person/name]]", called.append) == 3
    assert called == []

    # The callable's exception stops the query and is raised.
    def stop(item):
        raise ValueError(f"enough at {item!r}")

    with pytest.raises(ValueError, match="enough at"):
        db.q_each(query, stop)


def test_a_database_that_keeps_ave_for_declared_attributes_answers_alike():
    """`value_index="declared"`: `:person/age` and `:person/tags` get no AVE entries; lookups
    and ranges by their values answer as with every attribute in AVE."""
    data = [
        {":db/id": "ann", ":person/name": "Ann", ":person/age": 30, ":person/tags": [":a", ":b"]},
        {":db/id": "bob", ":person/name": "Bob", ":person/age": 17, ":person/tags": [":b"]},
        {":db/id": "cy", ":person/name": "Cy", ":person/age": 45},
    ]
    queries = [
        '[:find [?n ...] :where [?e :person/age 30] [?e :person/name ?n]]',
        '[:find [?n ...] :where [?e :person/age ?a] [(> ?a 20)] [?e :person/name ?n]]',
        '[:find [?n ...] :where [?e :person/tags :b] [?e :person/name ?n]]',
    ]
    answers = {}
    for value_index in ["all", "declared"]:
        with tempfile.TemporaryDirectory() as d:
            with datalith.open(d, schema=SCHEMA, value_index=value_index) as c:
                c.transact(data)
                answers[value_index] = [sorted(c.db().q(q)) for q in queries]
    assert answers["declared"] == answers["all"] == [["Ann"], ["Ann", "Cy"], ["Ann", "Bob"]]
    with tempfile.TemporaryDirectory() as d:
        with pytest.raises(ValueError, match="value_index"):
            datalith.open(d, value_index="some")
