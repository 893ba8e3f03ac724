"""``RemoteDb.entity(eid)``: an entity as a lazy mapping, with the embedded ``Entity``'s
behaviour, built over the server's pull on the value (``:basis-t``) it came from. Each attribute
is pulled when asked (``[:attr]``), ``keys`` and ``touch`` pull ``[*]``; a reference reads as
another ``RemoteEntity`` of the same value, as the embedded one reads as an ``Entity``.
"""

from typing import TYPE_CHECKING, Any, Dict, List, Union

from ._types import Keyword

if TYPE_CHECKING:
    from .remote import RemoteDb


def _attribute(attr: Any) -> str:
    """An attribute given as a ``Keyword`` or a ``":..."`` string, as its text."""
    if isinstance(attr, str) and len(attr) > 1 and attr.startswith(":"):
        return str(attr)
    raise TypeError('an attribute is a keyword such as ":person/name"')


def _entity_id(v: Any) -> Union[int, None]:
    """The id of a pulled ``{:db/id n}`` that holds nothing else (a reference)."""
    if isinstance(v, dict) and len(v) == 1:
        (k, e), = v.items()
        if k == ":db/id" and isinstance(e, int) and not isinstance(e, bool) and e >= 0:
            return e
    return None


class RemoteEntity:
    """An entity of a ``RemoteDb``: a lazy mapping from attribute to value."""

    def __init__(self, db: "RemoteDb", eid: int):
        self._db = db
        self._id = eid

    @property
    def id(self) -> int:
        """The entity id."""
        return self._id

    def _pull(self, pattern: str) -> Any:
        return self._db.pull(pattern, self._id)

    def __getitem__(self, attr: Union[str, Keyword]) -> Any:
        key = _attribute(attr)
        pulled = self._pull(f"[{key}]")
        if isinstance(pulled, dict):
            for k, v in pulled.items():
                if k == key:
                    return self._navigable(v)
        raise KeyError(key)

    def get(self, attr: Union[str, Keyword], default: Any = None) -> Any:
        """The value of ``attr``, or ``default`` when the entity has none."""
        try:
            return self[attr]
        except KeyError:
            return default

    def __contains__(self, attr: Union[str, Keyword]) -> bool:
        try:
            key = _attribute(attr)
        except TypeError:
            return False
        return key in self.keys()

    def keys(self) -> List[str]:
        """The attributes the entity has, as keywords' text."""
        pulled = self._pull("[*]")
        if not isinstance(pulled, dict):
            return []
        return [str(k) for k in pulled if k != ":db/id"]

    def touch(self) -> Dict[Any, Any]:
        """Every attribute and value at once, as a dict (Datomic's ``touch``)."""
        pulled = self._pull("[*]")
        return pulled if isinstance(pulled, dict) else {}

    def _navigable(self, v: Any) -> Any:
        """A pulled value where every ``{:db/id n}`` alone is a ``RemoteEntity``."""
        one = _entity_id(v)
        if one is not None:
            return RemoteEntity(self._db, one)
        if isinstance(v, (list, set, frozenset, tuple)) and v:
            ids = [_entity_id(i) for i in v]
            if all(i is not None for i in ids):
                return [RemoteEntity(self._db, i) for i in ids if i is not None]
        return v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemoteEntity) and other._id == self._id

    def __hash__(self) -> int:
        return self._id

    def __repr__(self) -> str:
        return f"<datalith.RemoteEntity {self._id}>"
