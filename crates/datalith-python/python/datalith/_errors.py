"""Errors of the database as Python exceptions.

Every error is a :class:`Error` and carries what the Rust error carries: ``code`` (the
error's keyword, e.g. ``:db.error/unique-conflict``), ``anomaly`` (its category,
``:cognitect.anomalies/conflict``), ``data`` (its fields as a dict) and the message. The
classes below it follow the anomaly categories; a few common codes have a class of their own
under their category, so ``except datalith.Conflict`` also catches ``UniqueConflict``.
"""

from typing import Any, Dict, Type


class Error(Exception):
    """An error of the database. ``code``, ``anomaly`` and ``data`` say which."""

    def __init__(self, message: str, code: str = "", anomaly: str = "", data: Any = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.anomaly = anomaly
        self.data: Dict[Any, Any] = data if isinstance(data, dict) else {}


class Incorrect(Error, ValueError):
    """The request is wrong (a malformed query, tx data of the wrong type): fix it."""


class NotFound(Error, LookupError):
    """What the request names does not exist (an unknown attribute, a missing database)."""


class Conflict(Error):
    """The request conflicts with the current state (a unique value held, a failed cas)."""


class Unavailable(Error):
    """The database cannot serve now (closed, poisoned, full)."""


class Interrupted(Error):
    """The request was stopped (its timeout, or a cancellation such as Ctrl-C)."""


class Fault(Error):
    """The database failed (an I/O error, damaged data)."""


class Busy(Error):
    """Another process holds the database for writing: retry later."""


class Forbidden(Error, PermissionError):
    """Not allowed (file permissions)."""


class Unsupported(Error):
    """Something this build does not do (a foreign or newer file)."""


class UniqueConflict(Conflict):
    """A unique value already held by another entity (``:db.error/unique-conflict``)."""


class CasFailed(Conflict):
    """A ``:db/cas`` whose expected value was not the current one (``:db.error/cas-failed``)."""


class Timeout(Interrupted):
    """A query that ran past its ``:timeout`` (``:datalith.error/timeout``)."""


class Cancelled(Interrupted):
    """A query cancelled, e.g. by Ctrl-C (``:datalith.error/cancelled``)."""


class Corrupt(Fault):
    """A damaged database file (``:datalith.error/corrupt``)."""


class InvalidEdn(Incorrect):
    """Text that is not EDN (``:datalith.error/invalid-edn``)."""


_BY_ANOMALY: Dict[str, Type[Error]] = {
    ":cognitect.anomalies/incorrect": Incorrect,
    ":cognitect.anomalies/not-found": NotFound,
    ":cognitect.anomalies/conflict": Conflict,
    ":cognitect.anomalies/unavailable": Unavailable,
    ":cognitect.anomalies/interrupted": Interrupted,
    ":cognitect.anomalies/fault": Fault,
    ":cognitect.anomalies/busy": Busy,
    ":cognitect.anomalies/forbidden": Forbidden,
    ":cognitect.anomalies/unsupported": Unsupported,
}

_BY_CODE: Dict[str, Type[Error]] = {
    ":db.error/unique-conflict": UniqueConflict,
    ":db.error/cas-failed": CasFailed,
    ":datalith.error/timeout": Timeout,
    ":datalith.error/cancelled": Cancelled,
    ":datalith.error/corrupt": Corrupt,
    ":datalith.error/invalid-edn": InvalidEdn,
}


def _make(message: str, code: str, anomaly: str, data: Any) -> Error:
    """The exception for an error of the extension (called from Rust)."""
    cls = _BY_CODE.get(code) or _BY_ANOMALY.get(anomaly) or Error
    return cls(message, code, anomaly, data)
