"""Every type of the README's table, through the database and back."""

import datetime
import decimal
import fractions
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datalith
from datalith import Keyword, Symbol

UTC = datetime.timezone.utc

# (Python value in, what comes back): a query input bound to ?v and returned as is.
ROUND_TRIPS = [
    (0, 0),
    (-(2**63), -(2**63)),
    (2**63, 2**63),
    (-(2**127), -(2**127)),
    (1.5, 1.5),
    (float("inf"), float("inf")),
    ("text", "text"),
    (":not-a-keyword", ":not-a-keyword"),
    ("", ""),
    (True, True),
    (False, False),
    (b"\x00\xffbytes", b"\x00\xffbytes"),
    (bytearray(b"ab"), b"ab"),
    (datetime.datetime(2024, 2, 29, 12, 0, 0, 123000, tzinfo=UTC), datetime.datetime(2024, 2, 29, 12, 0, 0, 123000, tzinfo=UTC)),
    (datetime.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC), datetime.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)),
    (uuid.UUID("8cfb4d2c-9c8f-41cc-a73d-de49b4bb1976"), uuid.UUID("8cfb4d2c-9c8f-41cc-a73d-de49b4bb1976")),
    (decimal.Decimal("12.50"), decimal.Decimal("12.5")),
    (decimal.Decimal("-0.001"), decimal.Decimal("-0.001")),
    (fractions.Fraction(3, 4), fractions.Fraction(3, 4)),
    (fractions.Fraction(8, 4), 2),
    (Keyword(":a/b"), Keyword(":a/b")),
    (Keyword("plain"), Keyword(":plain")),
    ({1, 2, 3}, {1, 2, 3}),
    (frozenset({"a"}), {"a"}),
    ((1, "a", None), [1, "a", None]),
    ([1, [2, 3]], [1, [2, 3]]),
    ({"k": 1, Keyword(":x/y"): [1]}, {"k": 1, ":x/y": [1]}),
    ({(1, 2): "tuple key"}, {(1, 2): "tuple key"}),
    ({(1, 2), (3, 4)}, {(1, 2), (3, 4)}),
]


@pytest.mark.parametrize("value,expected", ROUND_TRIPS, ids=[repr(v) for v, _ in ROUND_TRIPS])
def test_a_value_comes_back_as_its_type(conn, value, expected):
    out = conn.db().q("[:find ?v . :in $ ?v]", value)
    assert out == expected
    assert type(out) is type(expected) or isinstance(out, type(expected))


def test_keywords_equal_their_text_and_know_their_parts():
    k = Keyword(":person/name")
    assert k == ":person/name" and hash(k) == hash(":person/name")
    assert (k.namespace, k.name) == ("person", "name")
    assert Keyword(":plain").namespace is None and Keyword(":plain").name == "plain"
    with pytest.raises(ValueError):
        Keyword(":")


def test_a_naive_datetime_is_refused_with_the_reason(conn):
    with pytest.raises(ValueError, match="no time zone"):
        conn.db().q("[:find ?v . :in $ ?v]", datetime.datetime(2024, 1, 1))


def test_an_integer_past_128_bits_is_refused(conn):
    with pytest.raises(ValueError, match="128 bits"):
        conn.db().q("[:find ?v . :in $ ?v]", 2**130)


def test_a_fraction_past_128_bits_is_refused(conn):
    with pytest.raises(ValueError, match="128-bit"):
        conn.db().q("[:find ?v . :in $ ?v]", fractions.Fraction(2**130 + 1, 2))


def test_a_type_the_database_has_no_place_for_is_a_type_error(conn):
    with pytest.raises(TypeError, match="object"):
        conn.db().q("[:find ?v . :in $ ?v]", object())


def test_stored_values_come_back_typed(conn):
    conn.transact(
        "[{:db/ident :v/inst :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}"
        " {:db/ident :v/uuid :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one}"
        " {:db/ident :v/dec :db/valueType :db.type/bigdec :db/cardinality :db.cardinality/one}"
        " {:db/ident :v/kw :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}"
        " {:db/ident :v/bytes :db/valueType :db.type/bytes :db/cardinality :db.cardinality/one}]"
    )
    when = datetime.datetime(2030, 1, 1, tzinfo=UTC)
    u = uuid.uuid4()
    conn.transact([{":v/inst": when, ":v/uuid": u, ":v/dec": decimal.Decimal("1.25"), ":v/kw": Keyword(":a/b"), ":v/bytes": b"\x01\x02"}])
    got = conn.db().q("[:find (pull ?e [:v/inst :v/uuid :v/dec :v/kw :v/bytes]) . :where [?e :v/uuid]]")
    assert got == {":v/inst": when, ":v/uuid": u, ":v/dec": decimal.Decimal("1.25"), ":v/kw": ":a/b", ":v/bytes": b"\x01\x02"}
    assert isinstance(got[":v/kw"], Keyword)


def test_symbols_read_back_as_symbols(conn):
    out = conn.db().q("[:find ?v . :in $ ?v]", Symbol("my.ns/f"))
    assert out == "my.ns/f" and isinstance(out, Symbol)


# No None among them: the database's sets and maps hold no nil (a vector may: below).
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**127), max_value=2**127 - 1),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
    st.uuids(),
    st.datetimes(
        min_value=datetime.datetime(1, 1, 1),
        max_value=datetime.datetime(9999, 12, 31),
        timezones=st.just(UTC),
    ).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    st.fractions(max_denominator=10**6)
    .filter(lambda f: f.denominator != 1 and abs(f.numerator) < 2**120),
    st.from_regex(r"\A[a-z][a-z0-9]{0,8}/[a-z][a-z0-9-]{0,8}\Z").map(Keyword),
)
hashable = st.recursive(scalars, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3), max_leaves=6)
values = st.recursive(
    scalars,
    lambda inner: st.lists(st.none() | inner, max_size=4)
    | st.dictionaries(hashable, inner, max_size=3)
    | st.frozensets(hashable, max_size=3),
    max_leaves=10,
)


def normal(v):
    """What a value reads back as: tuples as lists, frozensets as sets, fractions n/1 as ints."""
    if isinstance(v, tuple):
        return [normal(x) for x in v]
    if isinstance(v, list):
        return [normal(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return {hashable_normal(x) for x in v}
    if isinstance(v, dict):
        return {hashable_normal(k): normal(x) for k, x in v.items()}
    return v


def hashable_normal(v):
    if isinstance(v, (tuple, list)):
        return tuple(hashable_normal(x) for x in v)
    if isinstance(v, (set, frozenset)):
        return frozenset(hashable_normal(x) for x in v)
    return v


@settings(max_examples=300, deadline=None)
@given(v=values)
def test_any_value_round_trips_through_a_query_input(v):
    import tempfile

    # One database for every example (a fixture is not reset between Hypothesis examples).
    global _shared
    try:
        _shared
    except NameError:
        _shared = datalith.open(tempfile.mkdtemp())
    out = _shared.db().q("[:find ?v . :in $ ?v]", [v])
    assert out == [normal(v)]
