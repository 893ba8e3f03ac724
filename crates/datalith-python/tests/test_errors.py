"""Errors arrive as the exception class of their category, with the error's data."""

import pytest

import datalith

# (what to do, the class, the code)
CASES = [
    (lambda c: c.transact([{":person/name": 5}]), datalith.Incorrect, ":db.error/wrong-type-for-attribute"),
    (lambda c: c.transact([{":no/such": 1}]), datalith.Error, ":db.error/not-an-entity"),
    (lambda c: c.transact("[{:person/name"), datalith.InvalidEdn, ":datalith.error/invalid-edn"),
    (lambda c: c.db().q("[:find ?x :where [?x :person/name"), datalith.Incorrect, ":datalith.error/invalid-query"),
    (
        lambda c: c.transact([{":person/name": "Eve", ":person/email": "ann@x.org"}]),
        datalith.UniqueConflict,
        ":db.error/unique-conflict",
    ),
    (
        lambda c: c.transact([[":db/cas", (":person/name", "Ann"), ":person/age", 99, 100]]),
        datalith.CasFailed,
        ":db.error/cas-failed",
    ),
    (
        lambda c: c.db().q("[:find (count ?a) . :where [?a :person/name] [?b :person/name] [?c :person/name] [?d :person/name]]", timeout_ms=0),
        datalith.Timeout,
        ":datalith.error/timeout",
    ),
]


@pytest.mark.parametrize("act,cls,code", CASES, ids=[c[2] for c in CASES])
def test_each_error_has_its_class_and_code(people, act, cls, code):
    with pytest.raises(cls) as info:
        act(people)
    e = info.value
    assert isinstance(e, datalith.Error)
    assert e.code == code, e
    assert e.anomaly.startswith(":cognitect.anomalies/")
    assert isinstance(e.data, dict) and e.message


def test_anomaly_classes_are_python_classes_too(people):
    with pytest.raises(ValueError):
        people.transact([{":person/name": 5}])
    with pytest.raises(datalith.Conflict):
        people.transact([{":person/name": "Eve", ":person/email": "ann@x.org"}])


def test_a_second_writer_is_busy(tmp_path):
    import subprocess
    import sys

    with datalith.open(tmp_path):
        code = (
            "import datalith, sys\n"
            "try:\n"
            f"    datalith.open({str(tmp_path)!r})\n"
            "except datalith.Busy as e:\n"
            "    print(e.code); sys.exit(0)\n"
            "sys.exit(1)\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == ":datalith.error/busy"


def test_unknown_durability(tmp_path):
    with pytest.raises(ValueError, match="durability"):
        datalith.open(tmp_path, durability="sometimes")


def nested_list(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


def test_data_that_holds_itself_or_nests_too_deep_is_a_value_error(people):
    looped = []
    looped.append(looped)
    cyclic_map = {":person/name": "Cy"}
    cyclic_map[":person/friend"] = cyclic_map
    q = "[:find ?x . :in $ ?x]"
    for bad in [looped, nested_list(10_000)]:
        with pytest.raises(ValueError, match="nested deeper than 512"):
            people.db().q(q, bad)
    with pytest.raises(ValueError, match="nested deeper than 512"):
        people.transact([cyclic_map])
    # As deep as the database reads text is fine.
    assert people.db().q(q, nested_list(500)) is not None
    # The connection still works.
    assert people.db().q("[:find (count ?e) . :where [?e :person/name]]") >= 1


def test_queries_nested_past_the_limits_are_errors_not_crashes(people):
    deep_or = "[:find ?e :where [?e :person/name] " + "(or " * 300 + "[?e :person/name \"Ann\"]" + ")" * 300 + "]"
    with pytest.raises(datalith.Incorrect, match="clauses nested deeper than 64"):
        people.db().q(deep_or)
