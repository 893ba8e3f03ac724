//! The entity a pull starts from, named as Datomic accepts it: an entity id, an ident, or a
//! lookup ref `[:unique/attr value]`.

use crate::codec::{Keyword, Value};
use crate::db::Db;
use crate::edn::{edn_from_value, to_edn_string, value_from_edn, Edn};
use crate::query::QueryError;
use crate::store::EntityId;

/// An entity identifier.
#[derive(Debug, Clone, PartialEq)]
pub enum Eid {
    /// An entity id.
    Id(EntityId),
    /// The entity with this `:db/ident`.
    Ident(Keyword),
    /// The entity whose unique attribute has this value.
    Lookup(Keyword, Value),
}

impl From<EntityId> for Eid {
    fn from(e: EntityId) -> Eid {
        Eid::Id(e)
    }
}

impl From<&EntityId> for Eid {
    fn from(e: &EntityId) -> Eid {
        Eid::Id(*e)
    }
}

impl From<Keyword> for Eid {
    fn from(k: Keyword) -> Eid {
        Eid::Ident(k)
    }
}

impl From<(Keyword, Value)> for Eid {
    fn from((k, v): (Keyword, Value)) -> Eid {
        Eid::Lookup(k, v)
    }
}

impl std::fmt::Display for Eid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&to_edn_string(&self.to_edn()))
    }
}

impl Eid {
    /// Reads an entity identifier from EDN: a positive number, a keyword (or a string spelling
    /// one, `":color/red"`) or a lookup ref.
    pub fn from_edn(e: &Edn) -> Result<Eid, QueryError> {
        let not = |reason: &str| QueryError::NotAnEntity {
            eid: to_edn_string(e),
            reason: reason.into(),
        };
        match e {
            Edn::Long(n) if *n > 0 => Ok(Eid::Id(*n as EntityId)),
            Edn::Keyword(k) => Ok(Eid::Ident(k.clone())),
            // Datomic reads a string here as an ident: it needs its leading colon.
            Edn::String(s) => {
                Keyword::from_colon_text(s)
                    .map(Eid::Ident)
                    .ok_or_else(|| QueryError::NotAKeyword {
                        value: to_edn_string(e),
                    })
            }
            // Datomic's categories for what is no lookup ref: another length, a string where
            // the attribute is due (read as a keyword), another first element.
            Edn::Vector(items) | Edn::List(items) => match items.as_slice() {
                [Edn::Keyword(k), v] => {
                    let v = value_from_edn(v)
                        .ok_or_else(|| not("a lookup ref's value is a plain value"))?;
                    Ok(Eid::Lookup(k.clone(), v))
                }
                [a @ Edn::String(s), _] => match Keyword::from_colon_text(s) {
                    Some(k) => Eid::from_edn(&Edn::Vector(vec![Edn::Keyword(k), items[1].clone()])),
                    None => Err(QueryError::NotAKeyword {
                        value: to_edn_string(a),
                    }),
                },
                [a, _] => Err(QueryError::NotAnAttribute {
                    value: to_edn_string(a),
                }),
                _ => Err(QueryError::InvalidLookupRef {
                    lookup: to_edn_string(e),
                }),
            },
            _ => Err(not("not an entity id, ident or lookup ref")),
        }
    }

    /// As EDN.
    pub fn to_edn(&self) -> Edn {
        match self {
            Eid::Id(e) => Edn::Long(*e as i64),
            Eid::Ident(k) => Edn::Keyword(k.clone()),
            Eid::Lookup(k, v) => Edn::Vector(vec![Edn::Keyword(k.clone()), edn_from_value(v)]),
        }
    }

    /// The entity named, `None` when an ident or lookup ref names none (pull then gives
    /// nil, as Datomic's does). A lookup ref on an attribute that is not unique, or unknown,
    /// is an error: it cannot name one entity.
    pub fn resolve(&self, db: &Db) -> Result<Option<EntityId>, QueryError> {
        match self {
            Eid::Id(e) => Ok(Some(*e)),
            Eid::Ident(k) => Ok(db.ident_entity(k)?),
            Eid::Lookup(k, v) => {
                let attr = db.attr(k).ok_or_else(|| QueryError::NotAnEntity {
                    eid: self.to_string(),
                    reason: format!("no attribute {k}"),
                })?;
                if attr.unique.is_none() {
                    return Err(QueryError::LookupRefNotUnique {
                        attr: k.to_string(),
                        lookup_ref: self.to_string(),
                    });
                }
                let v = match v {
                    // A ref attribute's value given as an entity id.
                    Value::Long(n) if attr.is_ref() && *n > 0 => Value::Ref(*n as EntityId),
                    other => other.clone(),
                };
                // A value in time resolves in its own state (a since value may lack it).
                if !db.time_filter().is_current() {
                    return Ok(db.holders(attr.id, &v)?.first().copied());
                }
                Ok(db.reader().first_entity_with(attr.id, &v)?)
            }
        }
    }
}
