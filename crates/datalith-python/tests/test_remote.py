"""The same API against a real `datalith serve` process (`datalith.connect`)."""

import asyncio
import contextlib
import datetime
import decimal
import os
import pathlib
import socket
import subprocess
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


@contextlib.contextmanager
def serving(directory):
    """A `datalith serve` of the database in `directory`; yields its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [server_binary(), "serve", str(directory), "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "listening on" in line, line
        yield f"http://127.0.0.1:{port}/db/{pathlib.Path(directory).name}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()


@pytest.fixture
def server(tmp_path):
    with serving(tmp_path / "people") as url:
        yield url


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


# -- the same tests against both backends ----------------------------------------------------

PEOPLE_SCHEMA = (
    "[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}"
    " {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}"
    " {:db/ident :person/tags :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}"
    " {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]"
)


@pytest.fixture(params=["embedded", "remote"])
def backend(request, tmp_path):
    """A connection to a fresh database: opened in process, or through a `datalith serve`."""
    if request.param == "embedded":
        with datalith.open(tmp_path / "people") as conn:
            yield conn
    else:
        with serving(tmp_path / "people") as url:
            with datalith.connect(url) as conn:
                yield conn


@pytest.fixture
def people(backend):
    backend.transact(PEOPLE_SCHEMA)
    backend.transact(
        [
            {":db/id": "ann", ":person/name": "Ann", ":person/age": 30, ":person/tags": [Keyword(":a")]},
            {":db/id": "bob", ":person/name": "Bob", ":person/friend": ["ann"]},
            {":db/id": "cy", ":person/name": "Cy", ":person/friend": ["ann", "bob"]},
        ]
    )
    return backend


@pytest.fixture
def small_pages(monkeypatch):
    """Remote walks read pages of 2, so that every walk of a test spans several."""
    monkeypatch.setattr(datalith.remote, "DATOMS_PAGE", 2)
    monkeypatch.setattr(datalith._remote_kv, "PAGE", 2)


def test_values_in_time_are_the_same_on_both(people):
    t1 = people.db().basis_t
    people.transact([{":person/name": "Ann", ":person/age": 31}])
    db = people.db()
    ages = "[:find ?a :where [_ :person/age ?a]]"
    assert set(db.q(ages)) == {(31,)}
    assert set(db.as_of(t1).q(ages)) == {(30,)}
    assert set(db.since(t1).q(ages)) == {(31,)}
    assert set(db.history().q("[:find ?a ?added :where [_ :person/age ?a _ ?added]]")) == {
        (30, True),
        (30, False),
        (31, True),
    }
    assert db.as_of(t1).pull("[:person/age]", (":person/name", "Ann")) == {":person/age": 30}
    assert db.as_of(t1).as_of_t == t1 and db.history().is_history
    with pytest.raises(datalith.Error):
        db.history().pull("[*]", (":person/name", "Ann"))


def test_entity_is_a_lazy_mapping_on_both(people):
    db = people.db()
    bob = db.entity((":person/name", "Bob"))
    assert bob[":person/name"] == "Bob" and bob[Keyword(":person/name")] == "Bob"
    friends = bob[":person/friend"]
    assert [f[":person/name"] for f in friends] == ["Ann"]
    ann = friends[0]
    assert ann == db.entity((":person/name", "Ann")) and hash(ann) == ann.id
    assert list(ann[":person/tags"]) == [":a"]
    assert sorted(ann.keys()) == [":person/age", ":person/name", ":person/tags"]
    assert all(type(k) is str for k in ann.keys())
    assert ":person/age" in ann and ":person/friend" not in ann and 5 not in ann
    assert ann.get(":person/friend") is None and ann.get(":person/friend", 0) == 0
    with pytest.raises(KeyError):
        ann[":person/friend"]
    with pytest.raises(TypeError, match="keyword"):
        ann["person/name"]
    # Reverse references, as pull reads them.
    assert sorted(f[":person/name"] for f in ann[":person/_friend"]) == ["Bob", "Cy"]
    touched = ann.touch()
    assert touched[":person/name"] == "Ann" and touched[":db/id"] == ann.id
    assert db.entity(ann.id) == ann and db.entity(ann.id)[":person/age"] == 30
    assert db.entity((":person/name", "Nobody")) is None
    # The entity reads the value it came from, not later ones.
    people.transact([{":person/name": "Ann", ":person/age": 31}])
    assert ann[":person/age"] == 30
    assert people.db().entity(ann.id)[":person/age"] == 31
    with pytest.raises(datalith.Incorrect):
        db.entity((":person/age", 30))


def test_db_reads_are_the_same_on_both(people, small_pages):
    db = people.db()
    assert [d.v for d in db.datoms(":avet", ":person/name")] == ["Ann", "Bob", "Cy"]
    assert len(list(db.datoms(":eavt"))) > 6
    with pytest.raises(ValueError):
        db.datoms(":nope")
    assert db.q("[:find (count ?e) . :where [?e :person/name]]", timeout_ms=10_000) == 3
    assert isinstance(db.basis_t, int) and isinstance(people.path, str)


def test_q_each_is_the_same_on_both(people):
    db = people.db()
    rows = []
    assert db.q_each("[:find ?n :where [_ :person/name ?n]]", rows.append) is None
    assert sorted(rows) == [("Ann",), ("Bob",), ("Cy",)]
    called = []
    assert db.q_each("[:find (count ?e) . :where [?e :person/name]]", called.append) == 3
    assert called == []


def test_raw_access_is_the_same_on_both(people):
    db = people.db()
    ids = {n: db.entity((":person/name", n)).id for n in ("Ann", "Bob", "Cy")}
    assert db.entities_with(":person/name", "Bob") == [ids["Bob"]]
    assert db.entities_with(":person/name", "Nobody") == []
    order = [ids["Cy"], ids["Ann"], ids["Cy"], ids["Bob"]]
    want = [v for e in order for v in sorted(d.v for d in db.datoms(":eavt", e, ":person/friend"))]
    assert db.values_of_each(order, ":person/friend") == want
    assert db.values_of_each([], ":person/name") == []


def test_kv_tables_are_mappings_of_bytes_on_both(backend, small_pages):
    t = backend.kv("blobs")
    assert t.name == "blobs" and len(t) == 0 and list(t) == []
    t[b"a"] = b"1"
    t["b"] = "two"
    assert t[b"a"] == b"1" and t["b"] == b"two"
    assert t.get(b"missing") is None and t.get(b"missing", b"x") == b"x"
    assert b"a" in t and b"c" not in t and len(t) == 2
    del t[b"a"]
    assert b"a" not in t
    with pytest.raises(KeyError):
        t[b"a"]
    with pytest.raises(KeyError):
        del t[b"a"]
    with pytest.raises(TypeError, match="bytes or str"):
        t[1] = b"x"
    with pytest.raises(TypeError, match="bytes or str"):
        t[b"k"] = 1


def test_kv_ranges_in_key_order_on_both(backend, small_pages):
    t = backend.kv("r")
    t.update({bytes([i]): bytes([i * 2]) for i in range(10)})
    assert list(t.keys()) == [bytes([i]) for i in range(10)]
    assert list(t.items(bytes([3]), bytes([6]))) == [(bytes([i]), bytes([i * 2])) for i in range(3, 6)]
    assert list(t.keys(reverse=True)) == [bytes([i]) for i in reversed(range(10))]
    assert list(t.keys(bytes([2]), bytes([7]), reverse=True)) == [bytes([i]) for i in range(6, 1, -1)]
    assert list(t.keys(end=bytes([1]))) == [bytes([0])] and list(t.keys(bytes([9]))) == [bytes([9])]
    assert list(t) == list(t.keys())
    t.update([(b"k1", b"v1"), (b"k2", b"v2")])
    t.update({b"k3": b"v3"}, delete=[b"k1", bytes([0])])
    assert list(t.keys(b"k")) == [b"k2", b"k3"] and len(t) == 11


def test_transact_async_commits_on_both(backend):
    backend.transact(PEOPLE_SCHEMA)
    futures = [datalith.transact_async(backend, [{":person/name": f"p{i}"}]) for i in range(20)]
    reports = [f.result(timeout=60) for f in futures]
    assert len({r.tx for r in reports}) == 20
    assert all(r.tempids == {} and any(d.v == f"p{i}" for d in r.tx_data) for i, r in enumerate(reports))
    assert backend.db().q("[:find (count ?e) . :where [?e :person/name]]") == 20

    async def awaited():
        return await asyncio.wrap_future(datalith.transact_async(backend, [{":person/name": "late"}]))

    assert asyncio.run(awaited()).tx > max(r.tx for r in reports)
    with pytest.raises(datalith.Incorrect):
        datalith.transact_async(backend, [{":person/name": 5}]).result(timeout=60)


MAPPING = {"__getitem__", "__setitem__", "__delitem__", "__contains__", "__len__", "__iter__", "__enter__", "__exit__", "__eq__", "__hash__"}


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_") or n in MAPPING}


def test_every_embedded_method_is_remote_too(conn, server):
    """The remote classes have every method and property of the embedded ones."""
    remote = datalith.connect(server)
    conn.transact(PEOPLE_SCHEMA)
    remote.transact(PEOPLE_SCHEMA)
    pairs = [
        (conn, remote),
        (conn.transact([{":person/name": "Ann"}]), remote.transact([{":person/name": "Ann"}])),
        (conn.db(), remote.db()),
        (conn.db().entity((":person/name", "Ann")), remote.db().entity((":person/name", "Ann"))),
        (conn.kv("t"), remote.kv("t")),
    ]
    for embedded, other in pairs:
        missing = public(embedded) - public(other)
        assert not missing, f"{type(other).__name__} lacks {sorted(missing)}"


def test_a_kv_table_written_in_process_is_read_remotely_and_back(tmp_path):
    directory = tmp_path / "shared"
    with datalith.open(directory) as conn:
        conn.kv("t")[b"local"] = b"1"
        conn.transact(PEOPLE_SCHEMA)
        conn.transact([{":person/name": "Ann"}])
    with serving(directory) as url:
        remote = datalith.connect(url)
        assert remote.kv("t")[b"local"] == b"1"
        remote.kv("t")[b"remote"] = b"2"
        assert remote.db().entity((":person/name", "Ann"))[":person/name"] == "Ann"
    with datalith.open(directory, read_only=True) as conn:
        assert dict(conn.kv("t").items()) == {b"local": b"1", b"remote": b"2"}
