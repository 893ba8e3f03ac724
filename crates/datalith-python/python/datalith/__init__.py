"""Datalith: an embedded Datalog database (Datomic's dialect) and key-value store, on LMDB.

    >>> import datalith, tempfile
    >>> conn = datalith.open(tempfile.mkdtemp(), schema={":person/name": {":db/valueType": ":db.type/string", ":db/unique": ":db.unique/identity"}})
    >>> report = conn.transact([{":db/id": "ann", ":person/name": "Ann"}])
    >>> db = conn.db()
    >>> db.q('[:find ?n . :where [?e :person/name ?n]]')
    'Ann'
    >>> db.pull("[*]", (":person/name", "Ann"))[":person/name"]
    'Ann'
    >>> conn.close()

See the package's README for the type table and the exceptions.
"""

import concurrent.futures as _futures
from typing import Any

from ._datalith import Connection, Db, Entity, KvTable, TxReport, open, q
from ._errors import (
    Busy,
    CasFailed,
    Cancelled,
    Conflict,
    Corrupt,
    Error,
    Fault,
    Forbidden,
    Incorrect,
    Interrupted,
    InvalidEdn,
    NotFound,
    Timeout,
    Unavailable,
    UniqueConflict,
    Unsupported,
)
from ._types import Datom, Keyword, Symbol, Tagged
from .remote import RemoteConnection, RemoteDb, RemoteTxReport, connect

__all__ = [
    "open",
    "init_db",
    "connect",
    "RemoteConnection",
    "RemoteDb",
    "RemoteTxReport",
    "q",
    "Connection",
    "Db",
    "Entity",
    "KvTable",
    "TxReport",
    "Datom",
    "Keyword",
    "Symbol",
    "Tagged",
    "transact_async",
    "Error",
    "Incorrect",
    "NotFound",
    "Conflict",
    "Unavailable",
    "Interrupted",
    "Fault",
    "Busy",
    "Forbidden",
    "Unsupported",
    "UniqueConflict",
    "CasFailed",
    "Timeout",
    "Cancelled",
    "Corrupt",
    "InvalidEdn",
]

# Transactions queued from `transact_async` run here: each releases the GIL while it waits
# for its group commit, so many wait at once and commit together.
_COMMITTERS = _futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="datalith-transact")


def transact_async(conn: Connection, data: Any) -> "_futures.Future[TxReport]":
    """Queues ``conn.transact(data)`` and returns a ``concurrent.futures.Future`` of its report
    (``asyncio.wrap_future`` makes it awaitable). Transactions queued together commit in one
    group."""
    return _COMMITTERS.submit(conn.transact, data)


def init_db(
    path: Any, datoms: Any, *, schema: Any = None, durability: Any = None
) -> Connection:
    """Opens (creating) the database at ``path`` with ``schema`` and bulk-loads ``datoms``,
    ``(entity id, attribute, value)`` triples (Datalevin's ``init-db``): see
    ``Connection.fill_db``. Returns the open connection."""
    conn = open(path, schema=schema, durability=durability)
    try:
        conn.fill_db(datoms)
    except BaseException:
        conn.close()
        raise
    return conn
