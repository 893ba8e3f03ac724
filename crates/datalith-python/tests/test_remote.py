"""The same API against a real `datalith serve` process (`datalith.connect`)."""

import datetime
import decimal
import os
import pathlib
import socket
import subprocess
import time
import uuid

import pytest

import datalith
from datalith import Keyword

ROOT = pathlib.Path(__file__).resolve().parents[3]


def server_binary():
    given = os.environ.get("DATALITH_BIN")
    if given:
        return given
    for profile in ("release", "debug"):
        candidate = ROOT / "target" / profile / "datalith"
        if candidate.exists():
            return str(candidate)
    if os.environ.get("DATALITH_REQUIRE_SERVER"):
        pytest.fail("no datalith binary (build it, or set DATALITH_BIN)")
    pytest.skip("no datalith binary to serve with (cargo build -p datalith-cli)")


@pytest.fixture
def server(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [server_binary(), "serve", str(tmp_path / "people"), "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    line = proc.stdout.readline()
    assert "listening on" in line, line
    yield f"http://127.0.0.1:{port}/db/people"
    proc.terminate()
    proc.wait(timeout=30)


SCHEMA = (
    "[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}"
    " {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}"
    " {:db/ident :person/born :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}]"
)


def test_the_remote_api_mirrors_the_embedded_one(server):
    conn = datalith.connect(server)
    conn.transact(SCHEMA)
    born = datetime.datetime(1990, 5, 1, 12, 30, tzinfo=datetime.timezone.utc)
    report = conn.transact(
        [
            {":db/id": "ann", ":person/name": "Ann", ":person/born": born},
            {":db/id": "bob", ":person/name": "Bob", ":person/friend": ["ann"]},
        ]
    )
    assert set(report.tempids) == {"ann", "bob"} and report.tx > 0
    assert any(d.a == ":person/name" and d.v == "Ann" for d in report.tx_data)
    db = conn.db()
    assert db.q("[:find ?n :where [?e :person/name ?n]]") == {("Ann",), ("Bob",)}
    assert db.q("[:find ?b . :in $ ?n :where [?e :person/name ?n] [?e :person/born ?b]]", "Ann") == born
    bob = db.pull([":person/name", {":person/friend": [":person/name"]}], (":person/name", "Bob"))
    assert bob == {":person/name": "Bob", ":person/friend": [{":person/name": "Ann"}]}
    assert isinstance(list(bob)[0], Keyword)
    assert db.pull_many("[:person/name]", [(":person/name", "Ann")]) == [{":person/name": "Ann"}]
    assert [d.v for d in db.datoms(":avet", ":person/name")] == ["Ann", "Bob"]
    # The value stays as it was while others write.
    conn.transact([{":person/name": "Cy"}])
    assert db.q("[:find (count ?e) . :where [?e :person/name]]") == 2
    assert conn.db().q("[:find (count ?e) . :where [?e :person/name]]") == 3


TYPES = [
    2**70,
    1.5,
    float("inf"),
    b"\x00\x01",
    uuid.UUID("8cfb4d2c-9c8f-41cc-a73d-de49b4bb1976"),
    decimal.Decimal("1.25"),
    Keyword(":a/b"),
    {1, 2},
    [1, "a"],
    {"k": 1, ":x/y": [2]},
    datetime.datetime(2024, 2, 29, 1, 2, 3, 456000, tzinfo=datetime.timezone.utc),
]


@pytest.mark.parametrize("value", TYPES, ids=[repr(v) for v in TYPES])
def test_types_cross_the_wire_as_they_cross_the_embedded_api(server, value):
    db = datalith.connect(server).db()
    assert db.q("[:find ?v . :in $ ?v]", value) == value


def test_errors_arrive_as_the_same_classes(server):
    conn = datalith.connect(server)
    conn.transact(SCHEMA)
    with pytest.raises(datalith.Incorrect) as info:
        conn.transact([{":person/name": 5}])
    assert info.value.code == ":db.error/wrong-type-for-attribute"
    with pytest.raises(datalith.Incorrect):
        conn.db().q("[:find ?x :where [?x")
    with pytest.raises(datalith.NotFound):
        datalith.connect(server.replace("/db/people", "/db/nobody")).db()
    with pytest.raises(datalith.Unavailable):
        datalith.connect("http://127.0.0.1:1/db/x", timeout=2).db()
    with pytest.raises(ValueError, match="database URL"):
        datalith.connect("http://127.0.0.1:1")
