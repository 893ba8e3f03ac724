"""The key-value tables of the same database."""

import pytest

import datalith


def test_a_table_is_a_mapping_of_bytes(conn):
    t = conn.kv("blobs")
    t[b"a"] = b"1"
    t["b"] = "two"
    assert t[b"a"] == b"1" and t["b"] == b"two"
    assert t.get(b"missing") is None and t.get(b"missing", b"x") == b"x"
    assert b"a" in t and b"c" not in t
    assert len(t) == 2
    del t[b"a"]
    assert b"a" not in t
    with pytest.raises(KeyError):
        t[b"a"]
    with pytest.raises(KeyError):
        del t[b"a"]


def test_ranges_in_key_order(conn):
    t = conn.kv("r")
    t.update({bytes([i]): bytes([i * 2]) for i in range(10)})
    assert list(t.keys()) == [bytes([i]) for i in range(10)]
    assert list(t.items(bytes([3]), bytes([6]))) == [(bytes([i]), bytes([i * 2])) for i in range(3, 6)]
    assert list(t.keys(reverse=True))[:2] == [bytes([9]), bytes([8])]
    assert list(t) == list(t.keys())


def test_update_is_one_transaction_with_deletes(conn):
    t = conn.kv("u")
    t.update([(b"k1", b"v1"), (b"k2", b"v2")])
    t.update({b"k3": b"v3"}, delete=[b"k1"])
    assert list(t.keys()) == [b"k2", b"k3"]


def test_tables_are_apart_from_the_store_and_each_other(people):
    people.kv("eav")[b"x"] = b"y"
    people.kv("other")[b"x"] = b"z"
    assert people.kv("eav")[b"x"] == b"y"
    # The Datalog store is untouched by a table named like one of its indexes.
    assert people.db().q("[:find (count ?e) . :where [?e :person/name]]") == 3


def test_wrong_types_are_type_errors(conn):
    t = conn.kv("w")
    with pytest.raises(TypeError, match="bytes or str"):
        t[1] = b"x"


def test_tables_survive_reopening(tmp_path):
    with datalith.open(tmp_path) as c:
        c.kv("t")[b"k"] = b"v"
    with datalith.open(tmp_path, read_only=True) as c:
        assert c.kv("t")[b"k"] == b"v"
