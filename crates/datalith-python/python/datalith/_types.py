"""Values Python has no type of its own for: keywords, symbols, tagged elements."""

import datetime as _dt
from typing import Any, NamedTuple, Optional


class Keyword(str):
    """A keyword such as ``:person/name``.

    It is a ``str`` whose text is the keyword's, so it equals (and hashes as) the plain
    string ``":person/name"``: a pulled map can be read with ``m[":person/name"]``. Passed
    to the database, a ``Keyword`` is always a keyword, where a plain string is one only in
    the places the README's type table names.
    """

    __slots__ = ()

    def __new__(cls, text: str) -> "Keyword":
        if not isinstance(text, str) or not text.lstrip(":"):
            raise ValueError(f"not a keyword: {text!r}")
        return super().__new__(cls, text if text.startswith(":") else ":" + text)

    @property
    def namespace(self) -> Optional[str]:
        """The part before the ``/`` (``person`` of ``:person/name``), or ``None``."""
        body = self[1:]
        ns, slash, name = body.partition("/")
        return ns if slash and ns and name else None

    @property
    def name(self) -> str:
        """The part after the namespace (``name`` of ``:person/name``)."""
        return self[1:] if self.namespace is None else self[1:].partition("/")[2]

    def __repr__(self) -> str:
        return f"Keyword({str.__repr__(self)})"


class Symbol(str):
    """A symbol such as ``?e`` or ``my.ns/f`` (an EDN symbol read back from the database)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Symbol({str.__repr__(self)})"


class Tagged(NamedTuple):
    """An EDN tagged element Python has no type for, e.g. ``#my/tag [1 2]``."""

    tag: str
    value: Any


class Datom(NamedTuple):
    """One fact as an index holds it: entity, attribute, value, transaction, added."""

    e: int
    a: Keyword
    v: Any
    tx: int
    added: bool


# Conversions the extension calls (abi3 has no C API for datetime): instants are milliseconds
# since the Unix epoch, exactly, with no float in between.
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MS = _dt.timedelta(milliseconds=1)


def _inst_from_ms(ms: int) -> _dt.datetime:
    return _EPOCH + _dt.timedelta(milliseconds=ms)


def _ms_from_inst(value: _dt.datetime) -> int:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"{value!r} has no time zone: an instant needs one (e.g. tzinfo=datetime.timezone.utc)"
        )
    return (value - _EPOCH) // _MS
