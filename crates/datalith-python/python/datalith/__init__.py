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

import threading as _threading
from typing import TYPE_CHECKING, Any, Optional, Union, overload

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

# The remote client and the thread pool of `transact_async` are imported when first used:
# `ssl`, `urllib` and `concurrent.futures` were two thirds of `import datalith`'s time, and
# an embedded program needs none of them.
if TYPE_CHECKING:
    import concurrent.futures as _futures

    from ._remote_entity import RemoteEntity
    from ._remote_kv import RemoteKvTable
    from .remote import RemoteConnection, RemoteDb, RemoteTxReport, connect

_LAZY = {
    "connect": "remote",
    "RemoteConnection": "remote",
    "RemoteDb": "remote",
    "RemoteTxReport": "remote",
    "RemoteEntity": "_remote_entity",
    "RemoteKvTable": "_remote_kv",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'datalith' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

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
_committers: "Optional[_futures.ThreadPoolExecutor]" = None
_committers_made = _threading.Lock()


def _pool() -> "_futures.ThreadPoolExecutor":
    global _committers
    with _committers_made:
        if _committers is None:
            import concurrent.futures

            _committers = concurrent.futures.ThreadPoolExecutor(
                max_workers=32, thread_name_prefix="datalith-transact"
            )
        return _committers


@overload
def transact_async(conn: Connection, data: Any) -> "_futures.Future[TxReport]": ...
@overload
def transact_async(conn: "RemoteConnection", data: Any) -> "_futures.Future[RemoteTxReport]": ...
def transact_async(conn: "Union[Connection, RemoteConnection]", data: Any) -> "Union[_futures.Future[TxReport], _futures.Future[RemoteTxReport]]":
    """Queues ``conn.transact(data)`` and returns a ``concurrent.futures.Future`` of its report
    (``asyncio.wrap_future`` makes it awaitable). ``conn`` is a ``Connection`` or a
    ``RemoteConnection``. Transactions queued together commit in one group."""
    # Two calls, so that each future has its own report's type.
    if isinstance(conn, Connection):
        return _pool().submit(conn.transact, data)
    return _pool().submit(conn.transact, data)


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
