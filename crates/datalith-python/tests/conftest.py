import tempfile

import pytest

import datalith

SCHEMA = {
    ":person/name": {":db/valueType": ":db.type/string", ":db/unique": ":db.unique/identity"},
    ":person/email": {":db/valueType": ":db.type/string", ":db/unique": ":db.unique/value"},
    ":person/age": {":db/valueType": ":db.type/long"},
    ":person/friend": {":db/valueType": ":db.type/ref", ":db/cardinality": ":db.cardinality/many"},
    ":person/tags": {":db/valueType": ":db.type/keyword", ":db/cardinality": ":db.cardinality/many"},
}


@pytest.fixture
def conn():
    with tempfile.TemporaryDirectory() as d:
        with datalith.open(d, schema=SCHEMA) as c:
            yield c


@pytest.fixture
def people(conn):
    conn.transact(
        [
            {":db/id": "ann", ":person/name": "Ann", ":person/age": 30, ":person/email": "ann@x.org"},
            {":db/id": "bob", ":person/name": "Bob", ":person/age": 17, ":person/friend": ["ann"]},
            {":db/id": "cy", ":person/name": "Cy", ":person/age": 45, ":person/friend": ["ann", "bob"]},
        ]
    )
    return conn
