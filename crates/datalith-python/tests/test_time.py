"""Time as data from Python: as_of, since, history, the transaction position."""

from datetime import datetime, timezone

import pytest

import datalith


def test_values_in_time(people):
    t1 = people.db().basis_t
    people.transact([{":person/name": "Ann", ":person/age": 31}])
    people.transact([[":db/retractEntity", (":person/name", "Bob")]])
    now = people.db()
    ages = "[:find ?n ?a :where [?p :person/name ?n] [?p :person/age ?a]]"
    # (value, query, expected)
    cases = [
        ("now", now, ages, {("Ann", 31), ("Cy", 45)}),
        ("as of t1", now.as_of(t1), ages, {("Ann", 30), ("Bob", 17), ("Cy", 45)}),
        ("since t1", now.since(t1), "[:find ?a :where [_ :person/age ?a]]", {(31,)}),
        (
            "history",
            now.history(),
            "[:find ?a ?added :where [?p :person/age ?a _ ?added]]",
            {(30, True), (30, False), (31, True), (17, True), (17, False), (45, True)},
        ),
    ]
    for name, db, query, want in cases:
        assert set(db.q(query)) == want, name
    assert now.as_of(t1).as_of_t == t1
    assert now.since(t1).since_t == t1
    assert now.history().is_history and not now.is_history


def test_as_of_an_instant_and_the_transaction_position(people):
    db = people.db()
    tx = db.q("[:find ?tx . :where [?p :person/name \"Ann\" ?tx]]")
    when = db.q("[:find ?w . :in $ ?tx :where [?tx :db/txInstant ?w]]", tx)
    assert isinstance(when, datetime)
    assert db.as_of(when).q("[:find (count ?p) . :where [?p :person/name]]") == 3
    long_ago = datetime(2000, 1, 1, tzinfo=timezone.utc)
    assert db.as_of(long_ago).q("[:find (count ?p) . :where [?p :person/name]]") is None


def test_pull_on_history_is_refused(people):
    db = people.db()
    with pytest.raises(datalith.Error):
        db.history().pull("[*]", (":person/name", "Ann"))
    with pytest.raises(TypeError):
        db.as_of("yesterday")
