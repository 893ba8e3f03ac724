"""The same API against ``datalith serve``: ``datalith.connect(url)``.

``connect`` returns a connection with the embedded ``Connection``'s methods (``transact``,
``db``, ``kv``, ``close``, ``path``; ``datalith.transact_async`` takes it too), whose ``db()``
has the embedded ``Db``'s (``q``, ``pull``, ``pull_many``, ``entity``, ``datoms``,
``basis_t``), and whose ``kv(name)`` has ``KvTable``'s. A notebook switches between a local
database and a server by changing one line. Requests go over HTTP as JSON, whose tagged
objects (the server's README: "JSON carries every EDN type") carry every type of the package's
type table both ways. A ``RemoteDb`` is one database value: the server keeps it leased while it
is used (each read renews the lease), and a read after the lease ended raises ``Conflict``
(``:datalith.error/basis-unavailable``).
"""

import datetime as _dt
import decimal
import fractions
import json
import math
import ssl
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, Iterable, Iterator, List, Literal, Optional, Tuple, Union

from . import _errors
from ._datalith import _comes_in_rows
from ._remote_entity import RemoteEntity
from ._remote_kv import RemoteKvTable
from ._types import Datom, Keyword, Symbol, Tagged, _inst_from_ms, _ms_from_inst

# How long the server keeps a value this client reads (renewed by every read of it).
LEASE_MS = 60_000
# Datoms a page of ``RemoteDb.datoms`` asks for.
DATOMS_PAGE = 10_000

_KEYWORD_VALUED = {":db/ident", ":db/valueType", ":db/cardinality", ":db/unique"}


# -- Python to tagged JSON ------------------------------------------------------------------


def _encode(v: Any, keyword_place: bool = False, pattern: bool = False) -> Any:
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**63 else {"#bigint": str(v)}
    if isinstance(v, float):
        if math.isnan(v):
            return {"#double": "NaN"}
        if math.isinf(v):
            return {"#double": "Infinity" if v > 0 else "-Infinity"}
        return v
    if isinstance(v, Keyword):
        return {"#kw": str(v)}
    if isinstance(v, Symbol):
        return {"#sym": str(v)}
    if isinstance(v, str):
        if (keyword_place or pattern) and len(v) > 1 and v.startswith(":"):
            return {"#kw": v}
        if pattern and v == "*":
            return {"#sym": "*"}
        return v
    if isinstance(v, (bytes, bytearray)):
        return {"#tag": ["bytes", list(v)]}
    if isinstance(v, _dt.datetime):
        ms = _ms_from_inst(v)
        return {"#inst": _inst_from_ms(ms).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"}
    if isinstance(v, uuid.UUID):
        return {"#uuid": str(v)}
    if isinstance(v, decimal.Decimal):
        return {"#bigdec": str(v)}
    if isinstance(v, fractions.Fraction):
        return _encode(v.numerator) if v.denominator == 1 else {"#ratio": f"{v.numerator}/{v.denominator}"}
    if isinstance(v, Tagged):
        return {"#tag": [v.tag, _encode(v.value)]}
    if isinstance(v, dict):
        return _encode_map(v, pattern)
    if isinstance(v, (list, tuple)):
        return [_encode(x, keyword_place, pattern) for x in v]
    if isinstance(v, (set, frozenset)):
        return {"#set": [_encode(x, keyword_place, pattern) for x in v]}
    raise TypeError(f"a {type(v).__name__} has no database type (the package's README lists the types it takes)")


def _encode_map(m: Dict[Any, Any], pattern: bool) -> Any:
    pairs = []
    for k, v in m.items():
        key = _encode(k, keyword_place=True, pattern=pattern)
        value_is_keyword = isinstance(k, str) and k in _KEYWORD_VALUED
        pairs.append((key, _encode(v, keyword_place=value_is_keyword, pattern=pattern)))
    # A plain object when every key is a keyword or a string that cannot be read as one.
    if all(isinstance(k, dict) and "#kw" in k or isinstance(k, str) and not k.startswith((":", "#")) for k, _ in pairs):
        return {(k["#kw"] if isinstance(k, dict) else k): v for k, v in pairs}
    return {"#map": [[k, v] for k, v in pairs]}


def _tx_data(data: Any) -> Any:
    if isinstance(data, str):
        return data
    out = []
    for statement in data:
        if isinstance(statement, (list, tuple)):
            items = []
            for i, item in enumerate(statement):
                if i in (0, 2):
                    items.append(_encode(item, keyword_place=True))
                elif i == 1 and isinstance(item, (list, tuple)) and len(item) == 2:
                    items.append([_encode(item[0], keyword_place=True), _encode(item[1])])
                else:
                    items.append(_encode(item))
            out.append(items)
        else:
            out.append(_encode(statement))
    return out


def _eid(e: Any) -> Any:
    if isinstance(e, (list, tuple)) and len(e) == 2:
        return [_encode(e[0], keyword_place=True), _encode(e[1])]
    return _encode(e, keyword_place=True)


# -- tagged JSON to Python ------------------------------------------------------------------


def _decode(v: Any, hashable: bool = False) -> Any:
    if isinstance(v, list):
        items = [_decode(x, hashable) for x in v]
        return tuple(items) if hashable else items
    if not isinstance(v, dict):
        return v
    if len(v) == 1:
        (tag, inner), = v.items()
        if tag.startswith("#"):
            return _decode_tagged(tag, inner, hashable)
    return {(_key(k)): _decode(x) for k, x in v.items()}


def _key(k: str) -> Any:
    return Keyword(k) if k.startswith(":") and len(k) > 1 else k


def _decode_tagged(tag: str, inner: Any, hashable: bool) -> Any:
    if tag == "#kw":
        return Keyword(inner)
    if tag == "#sym":
        return Symbol(inner)
    if tag == "#set":
        try:
            items = [_decode(x, True) for x in inner]
            return frozenset(items) if hashable else set(items)
        except TypeError:
            return [_decode(x) for x in inner]
    if tag == "#list":
        return _decode(inner, hashable)
    if tag == "#inst":
        when = _dt.datetime.strptime(inner.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z")
        return when.astimezone(_dt.timezone.utc)
    if tag == "#uuid":
        return uuid.UUID(inner)
    if tag == "#bigdec":
        return decimal.Decimal(inner)
    if tag == "#bigint":
        return int(inner)
    if tag == "#ratio":
        return fractions.Fraction(inner)
    if tag == "#double":
        return float(inner.lower().replace("infinity", "inf"))
    if tag in ("#char", "#regex"):
        return inner
    if tag == "#map":
        return {_decode(k, True): _decode(x) for k, x in inner}
    if tag == "#tag":
        name, value = inner
        if name == "bytes" and isinstance(value, list):
            return bytes(value)
        return Tagged(name, _decode(value, hashable))
    return {_key(tag): _decode(inner)}


# -- HTTP -----------------------------------------------------------------------------------


class _Http:
    def __init__(self, base: str, token: Optional[str], cacert: Optional[str], timeout: float):
        self.base = base.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.context = ssl.create_default_context(cafile=cacert) if base.startswith("https") else None

    def post(self, path: str, body: Dict[str, Any]) -> Any:
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            method="POST",
        )
        return self._send(request)

    def get(self, path: str) -> Any:
        return self._send(urllib.request.Request(self.base + path, headers={"Accept": "application/json"}))

    def _send(self, request: urllib.request.Request) -> Any:
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self.context) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                answer = json.loads(raw)
            except ValueError:
                raise _errors.Unavailable(f"HTTP {e.code} from {request.full_url}: {raw[:200]!r}") from None
            raise _error(answer) from None
        except urllib.error.URLError as e:
            raise _errors.Unavailable(f"{request.full_url}: {e.reason}", ":datalith.error/io", ":cognitect.anomalies/unavailable") from None


def _error(answer: Any) -> _errors.Error:
    data = _decode(answer) if isinstance(answer, dict) else {}
    code = str(data.get(":db/error", ""))
    anomaly = str(data.get(":cognitect.anomalies/category", ""))
    message = str(data.get(":message", "the server refused the request"))
    return _errors._make(message, code, anomaly, data)


# -- the API --------------------------------------------------------------------------------


class RemoteTxReport:
    """A transaction committed on the server: ``tx``, ``tempids``, ``tx_data``."""

    def __init__(self, answer: Dict[Any, Any]):
        self.tx: int = answer[":tx"]
        self.tempids: Dict[Union[str, int], int] = dict(answer.get(":tempids", {}))
        self.tx_data: List[Datom] = [Datom(*d) for d in answer.get(":tx-data", [])]

    def __repr__(self) -> str:
        return f"<datalith.RemoteTxReport tx {self.tx} ({len(self.tempids)} tempids)>"


def _point(t: Any) -> Any:
    """A point in time as the server reads it: a transaction id, or a tagged instant."""
    if isinstance(t, bool) or not isinstance(t, (int, _dt.datetime)):
        raise TypeError("a point in time is a transaction id (int) or a datetime")
    return _encode(t)


class RemoteDb:
    """One database value on the server, leased while it is read (see the module's comment)."""

    def __init__(self, conn: "RemoteConnection", basis_t: int, time: Optional[Dict[str, Any]] = None):
        self._conn = conn
        self.basis_t = basis_t
        # The point in time read (the server's :as-of, :since, :history), none for now.
        self._time: Dict[str, Any] = dict(time or {})

    def _in_time(self, **change: Any) -> "RemoteDb":
        return RemoteDb(self._conn, self.basis_t, dict(self._time, **change))

    def as_of(self, t: Any) -> "RemoteDb":
        """The database as it was at ``t`` (a transaction id or a ``datetime``), read on the
        server as Datomic's ``as-of``; an earlier point of an as-of value wins."""
        if "as-of" in self._time and not isinstance(t, _dt.datetime) and not isinstance(self._time["as-of"], dict):
            t = min(t, self._time["as-of"])
        return self._in_time(**{"as-of": _point(t)})

    def since(self, t: Any) -> "RemoteDb":
        """Only what was asserted after ``t`` and is still there (Datomic's ``since``)."""
        return self._in_time(since=_point(t))

    def history(self) -> "RemoteDb":
        """Every assertion and retraction (Datomic's ``history``)."""
        return self._in_time(history=True)

    @property
    def as_of_t(self) -> Optional[int]:
        t = self._time.get("as-of")
        return t if isinstance(t, int) else None

    @property
    def since_t(self) -> Optional[int]:
        t = self._time.get("since")
        return t if isinstance(t, int) else None

    @property
    def is_history(self) -> bool:
        return bool(self._time.get("history"))

    def _read(self, op: str, body: Dict[str, Any]) -> Any:
        body = dict(body, **self._time, **{"basis-t": self.basis_t, "lease-ms": LEASE_MS})
        answer = _decode(self._conn._http.post(self._conn._path(op), body))
        return answer.get(":result")

    def q(self, query: str, *inputs: Any, timeout_ms: Optional[int] = None) -> Any:
        body: Dict[str, Any] = {"query": query, "args": [_encode(i) for i in inputs]}
        if timeout_ms is not None:
            # The server takes at most its own limit (--query-timeout-ms).
            body["timeout"] = timeout_ms
        return self._read("q", body)

    def q_each(self, query: str, each: Callable[[Any], Any], *inputs: Any, timeout_ms: Optional[int] = None) -> Any:
        """``Db.q_each`` over the server: ``each`` is called with every item of a result that
        comes in rows, and ``None`` returned; any other result is returned whole. The server
        writes such an answer as its query runs (holding a part of the result, not all of it);
        this client reads the answer whole before calling ``each`` (the Rust client,
        ``RemoteDb::q_each``, reads it an item at a time)."""
        result = self.q(query, *inputs, timeout_ms=timeout_ms)
        if not _comes_in_rows(query):
            return result
        for item in result:
            each(item)
        return None

    def pull(self, pattern: Any, eid: Any) -> Any:
        selector = pattern if isinstance(pattern, str) else _encode(pattern, pattern=True)
        return self._read("pull", {"selector": selector, "eid": _eid(eid)})

    def pull_many(self, pattern: Any, eids: Iterable[Any]) -> List[Any]:
        selector = pattern if isinstance(pattern, str) else _encode(pattern, pattern=True)
        return list(self._read("pull-many", {"selector": selector, "eids": [_eid(e) for e in eids]}))

    def entity(self, eid: Any) -> Optional[RemoteEntity]:
        """The entity ``eid`` names as a lazy mapping (read when asked, from this value);
        ``None`` if it names none. An id always names one, as in the embedded API."""
        if isinstance(eid, int) and not isinstance(eid, bool) and eid >= 0:
            return RemoteEntity(self, eid)
        found = self.pull("[:db/id]", eid)
        return RemoteEntity(self, found[":db/id"]) if isinstance(found, dict) else None

    def datoms(self, index: str, *components: Any) -> Iterator[Datom]:
        """The datoms of ``index`` that begin with ``components``, read from this value a
        page (``DATOMS_PAGE``) per request as they are iterated."""
        # Where the index takes its attribute, a ':ns/name' string is a keyword.
        attr_at = 1 if index.lstrip(":") in ("eavt", "eav") else 0
        given = [_encode(c, keyword_place=(i == attr_at)) for i, c in enumerate(components)]
        body = {"index": {"#kw": ":" + index.lstrip(":")}, "components": given, "limit": DATOMS_PAGE}
        # The first page now, so that a bad index or component raises here, as embedded.
        first = self._page("datoms", body)
        return self._datoms(body, first)

    def entities_with(self, attr: Any, value: Any) -> List[int]:
        """The entities whose ``attr`` has ``value``, ascending (the AVE datoms' entities)."""
        return [d.e for d in self.datoms(":avet", attr, value)]

    def values_of_each(self, eids: Iterable[Any], attr: Any) -> List[Any]:
        """The values of ``attr`` of each of ``eids``, in order, as one list: one query on
        the server, its (entity, value) pairs put back in the embedded call's order (each
        entity's values ascending, as EAV holds them)."""
        eids = list(eids)
        if not eids:
            return []
        pairs = self.q(f"[:find ?e ?v :in $ [?e ...] :where [?e {Keyword(attr)} ?v]]", eids)
        by_entity: Dict[int, List[Any]] = {}
        for e, v in pairs:
            by_entity.setdefault(e, []).append(v)
        out: List[Any] = []
        for e in eids:
            out.extend(sorted(by_entity.get(e, ())))
        return out

    def _page(self, op: str, body: Dict[str, Any]) -> Dict[Any, Any]:
        body = dict(body, **self._time, **{"basis-t": self.basis_t, "lease-ms": LEASE_MS})
        answer: Dict[Any, Any] = _decode(self._conn._http.post(self._conn._path(op), body))
        return answer

    def _datoms(self, body: Dict[str, Any], page: Dict[Any, Any]) -> Iterator[Datom]:
        while True:
            # Rows are [e a v], with tx and added when the server has them.
            for r in page.get(":result", []):
                yield Datom(r[0], r[1], r[2], r[3] if len(r) > 3 else 0, r[4] if len(r) > 4 else True)
            offset = page.get(":next-offset")
            if offset is None:
                return
            page = self._page("datoms", dict(body, offset=offset))

    def __repr__(self) -> str:
        return f"<datalith.RemoteDb basis-t {self.basis_t}>"


class RemoteConnection:
    """A database served by ``datalith serve`` (from ``datalith.connect``)."""

    def __init__(self, http: _Http, name: str):
        self._http = http
        self.name = name

    def _path(self, op: str) -> str:
        return f"/db/{urllib.parse.quote(self.name, safe='')}/{op}"

    def transact(self, data: Any) -> RemoteTxReport:
        answer = _decode(self._http.post(self._path("transact"), {"tx-data": _tx_data(data)}))
        return RemoteTxReport(answer)

    def fill_db(self, datoms: Any) -> int:
        """Not over the server: the bulk loader writes the database's files in the serving
        process's own way, and the server has no operation for it. Raises ``Unsupported``;
        transact the datoms, or load the database before serving it."""
        raise _errors.Unsupported(
            "fill_db is not served: load the database before serving it, or transact the datoms",
            ":datalith.error/unsupported-remote",
            ":cognitect.anomalies/unsupported",
            None,
        )

    def kv(self, name: str) -> RemoteKvTable:
        """The key-value table ``name`` of this database on the server (the embedded
        ``Connection.kv``'s table of the same name); created by its first write."""
        return RemoteKvTable(self, name)

    @property
    def path(self) -> str:
        """The database's URL (where the embedded ``path`` is its directory)."""
        return f"{self._http.base}/db/{self.name}"

    def db(self) -> RemoteDb:
        answer = _decode(self._http.post(self._path("q"), {"query": "[:find ?x . :in ?x]", "args": [1], "lease-ms": LEASE_MS}))
        return RemoteDb(self, answer[":basis-t"])

    def close(self) -> None:
        """Nothing to close (each request is its own); here so code written for ``open`` runs."""

    def __enter__(self) -> "RemoteConnection":
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return f"<datalith.RemoteConnection {self._http.base}/db/{self.name}>"


def connect(url: str, *, token: Optional[str] = None, cacert: Optional[str] = None, timeout: float = 60.0) -> RemoteConnection:
    """Connects to the database at ``url`` (``http(s)://HOST:PORT/db/NAME``) of a
    ``datalith serve``. ``token`` is a bearer token; ``cacert`` a PEM file to verify a
    self-signed server with."""
    base, sep, name = url.partition("/db/")
    if not sep or not name or "/" in name.strip("/"):
        raise ValueError(f"{url!r} is not a database URL (http://HOST:PORT/db/NAME)")
    return RemoteConnection(_Http(base, token, cacert, timeout), name.strip("/"))
