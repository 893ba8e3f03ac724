"""``RemoteConnection.kv(name)``: a key-value table on the server, with ``KvTable``'s methods.

The table is the one the embedded ``Connection.kv(name)`` opens (the server names a program's
tables by the same rule, ``py/NAME`` in the catalog), so a table written in process is read
remotely and the other way round. Keys and values travel as the server's bytes
(``{"#tag": ["bytes", [...]]}``); a ``str`` is sent as text and stored as its UTF-8, as the
embedded table stores it. Differences that the wire makes: each write is one request (``update``
one for all its pairs, within the server's body limit, 16 MiB unless told), and ``items`` and
``keys`` read a page (1000 entries) per request as they are iterated, each page from the latest
state, so a walk sees once, in order, every key that stays in the range throughout, where the
embedded walk reads one snapshot.
"""

from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

if TYPE_CHECKING:
    from .remote import RemoteConnection

KeyLike = Union[bytes, bytearray, str]

# Entries a page of ``items``/``keys`` asks for.
PAGE = 1000


def _wire(k: Any, what: str) -> Any:
    """A key or value as the server takes it (raising ``TypeError`` as ``KvTable`` does)."""
    if isinstance(k, str):
        return k
    if isinstance(k, (bytes, bytearray, memoryview)):
        return {"#tag": ["bytes", list(bytes(k))]}
    raise TypeError(f"a {what} is bytes or str, not {type(k).__name__}")


def _bytes(v: Any) -> bytes:
    """The bytes of an answer's ``{"#tag": ["bytes", [...]]}``."""
    if isinstance(v, dict) and "#tag" in v:
        tag, items = v["#tag"]
        if tag == "bytes":
            return bytes(items)
    raise ValueError(f"the server answered {v!r}, not bytes")


class RemoteKvTable:
    """A key-value table of a database on the server (``RemoteConnection.kv(name)``): a mapping
    of ``bytes`` to ``bytes`` with the methods of ``datalith.KvTable``."""

    def __init__(self, conn: "RemoteConnection", name: str):
        if not isinstance(name, str):
            raise TypeError(f"a table's name is a str, not {type(name).__name__}")
        self._conn = conn
        self._name = name

    @property
    def name(self) -> str:
        """The table's name."""
        return self._name

    def _call(self, op: str, body: Dict[str, Any]) -> Dict[str, Any]:
        answer: Dict[str, Any] = self._conn._http.post(self._conn._path(op), dict(body, table=self._name))
        return answer

    def _get(self, key: KeyLike) -> Optional[bytes]:
        found = self._call("kv-get", {"key": _wire(key, "key")}).get(":result")
        return None if found is None else _bytes(found)

    def __getitem__(self, key: KeyLike) -> bytes:
        found = self._get(key)
        if found is None:
            raise KeyError(key)
        return found

    def get(self, key: KeyLike, default: Optional[bytes] = None) -> Optional[bytes]:
        """The value of ``key``, or ``default``."""
        found = self._get(key)
        return default if found is None else found

    def __setitem__(self, key: KeyLike, value: KeyLike) -> None:
        self._call("kv-put", {"key": _wire(key, "key"), "value": _wire(value, "value")})

    def __delitem__(self, key: KeyLike) -> None:
        # As the embedded table: a missing key is a KeyError (looked up, then deleted).
        if self._get(key) is None:
            raise KeyError(key)
        self._call("kv-delete", {"key": _wire(key, "key")})

    def __contains__(self, key: KeyLike) -> bool:
        return self._get(key) is not None

    def __len__(self) -> int:
        n: int = self._call("kv-count", {})[":result"]
        return n

    def update(self, pairs: Any = None, *, delete: Optional[Iterable[KeyLike]] = None) -> None:
        """Writes every pair of ``pairs`` (a dict, or an iterable of ``(key, value)``) in one
        transaction; ``delete`` removes keys in the same one."""
        puts: List[List[Any]] = []
        if pairs is not None:
            items = pairs.items() if hasattr(pairs, "items") else pairs
            for k, v in items:
                puts.append([_wire(k, "key"), _wire(v, "value")])
        deletes = [_wire(k, "key") for k in (delete or [])]
        self._call("kv-write", {"put": puts, "delete": deletes})

    def _entries(self, start: Optional[KeyLike], end: Optional[KeyLike], reverse: bool, keys_only: bool) -> Iterator[Any]:
        body: Dict[str, Any] = {"reverse": reverse, "keys-only": keys_only, "limit": PAGE}
        if start is not None:
            body["start"] = _wire(start, "key")
        if end is not None:
            body["end"] = _wire(end, "key")
        # The first page now, so that a bad argument or an unreachable server raises here, as
        # the embedded call raises; the rest as they are drawn.
        first = self._call("kv-range", body)
        return self._walk(body, first, reverse)

    def _walk(self, body: Dict[str, Any], page: Dict[str, Any], reverse: bool) -> Iterator[Any]:
        while True:
            yield from page.get(":result", [])
            following = page.get(":next-through" if reverse else ":next-start")
            if following is None or not page.get(":result"):
                return
            body = dict(body)
            if reverse:
                body["through"] = following
                body.pop("end", None)
            else:
                body["start"] = following
            page = self._call("kv-range", body)

    def items(self, start: Optional[KeyLike] = None, end: Optional[KeyLike] = None, *, reverse: bool = False) -> Iterator[Tuple[bytes, bytes]]:
        """``(key, value)`` pairs with ``start <= key < end``, in key order (descending with
        ``reverse``)."""
        return ((_bytes(k), _bytes(v)) for k, v in self._entries(start, end, reverse, False))

    def keys(self, start: Optional[KeyLike] = None, end: Optional[KeyLike] = None, *, reverse: bool = False) -> Iterator[bytes]:
        """The keys with ``start <= key < end``, in order."""
        return (_bytes(k) for k in self._entries(start, end, reverse, True))

    def __iter__(self) -> Iterator[bytes]:
        return self.keys()

    def __repr__(self) -> str:
        return f"<datalith.RemoteKvTable {self._name!r}>"
