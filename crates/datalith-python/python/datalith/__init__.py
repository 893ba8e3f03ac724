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
from typing import Any, Union, overload

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
from ._remote_entity import RemoteEntity
from ._remote_kv import RemoteKvTable
from .remote import RemoteConnection, RemoteDb, RemoteTxReport, connect

__all__ = [
    "open",
    "init_db",
    "connect",
    "RemoteConnection",
    "RemoteDb",
    "RemoteEntity",
    "RemoteKvTable",
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

# Transactions queued from `transact_async` run here: each waits for its commit without the
# GIL (embedded: the group commit; remote: the server's answer, while the server groups the
# transactions that arrive together into one commit), so many wait at once and commit together.
_COMMITTERS = _futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="datalith-transact")


@overload
def transact_async(conn: Connection, data: Any) -> "_futures.Future[TxReport]": ...
@overload
def transact_async(conn: RemoteConnection, data: Any) -> "_futures.Future[RemoteTxReport]": ...
def transact_async(conn: Union[Connection, RemoteConnection], data: Any) -> "Union[_futures.Future[TxReport], _futures.Future[RemoteTxReport]]":
    """Queues ``conn.transact(data)`` and returns a ``concurrent.futures.Future`` of its report
    (``asyncio.wrap_future`` makes it awaitable). ``conn`` is a ``Connection`` or a
    ``RemoteConnection``. Transactions queued together commit in one group."""
    # Two calls, so that each future has its own report's type.
    if isinstance(conn, RemoteConnection):
        return _COMMITTERS.submit(conn.transact, data)
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
