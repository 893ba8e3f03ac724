//! Lazy entities: navigate the database attribute by attribute, forwards through refs and
//! backwards through reverse attributes (`:person/_friend`), reading only what is asked.

use crate::codec::{Keyword, Value};
use crate::db::Db;
use crate::edn::Edn;
use crate::query::QueryError;
use crate::store::EntityId;

/// An entity of a snapshot. Nothing is read until an attribute is asked for.
#[derive(Clone, Copy)]
pub struct Entity<'a> {
    db: &'a Db,
    /// Its id.
    pub id: EntityId,
}

/// What an attribute of an entity holds.
pub enum EntityValue<'a> {
    /// A cardinality-one plain value.
    One(Value),
    /// The values of a cardinality-many attribute.
    Many(Vec<Value>),
    /// A cardinality-one reference.
    Ref(Entity<'a>),
    /// Several references (cardinality many, or a reverse attribute).
    Refs(Vec<Entity<'a>>),
}

impl std::fmt::Debug for Entity<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#entity {}", self.id)
    }
}

impl std::fmt::Debug for EntityValue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntityValue::One(v) => write!(f, "{v:?}"),
            EntityValue::Many(vs) => write!(f, "{vs:?}"),
            EntityValue::Ref(e) => write!(f, "{e:?}"),
            EntityValue::Refs(es) => write!(f, "{es:?}"),
        }
    }
}

impl Db {
    /// The entity `e` (lazy: it may have no datoms at all). Its attributes are read on
    /// demand, forwards through refs and backwards through `:ns/_name`.
    ///
    /// ```
    /// use datalith::api::EntityValue;
    /// use datalith::{Database, DbOptions, Value};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    /// db.transact(r#"[{:db/ident :name :db/valueType :db.type/string
    ///                  :db/cardinality :db.cardinality/one}
    ///                 {:db/ident :friend :db/valueType :db.type/ref
    ///                  :db/cardinality :db.cardinality/one}]"#).unwrap();
    /// let r = db.transact(r#"[{:db/id "a" :name "Ann" :friend "b"} {:db/id "b" :name "Bob"}]"#);
    /// let ann = r.unwrap().tempid("a").unwrap();
    ///
    /// let snap = db.db().unwrap();
    /// let Some(EntityValue::Ref(bob)) = snap.entity(ann).get(":friend").unwrap() else {
    ///     panic!("Ann has a friend");
    /// };
    /// assert!(matches!(bob.get(":name").unwrap(), Some(EntityValue::One(Value::String(n))) if &*n == "Bob"));
    /// // Backwards: who names Bob as a friend.
    /// assert!(matches!(bob.get(":_friend").unwrap(), Some(EntityValue::Refs(v)) if v[0].id == ann));
    /// assert_eq!(snap.entity(ann).touch().unwrap().to_string().contains(r#":name "Ann""#), true);
    /// ```
    pub fn entity(&self, e: EntityId) -> Entity<'_> {
        Entity { db: self, id: e }
    }

    /// The entity whose unique attribute `attr` has value `v` (a lookup ref), if any.
    pub fn entity_by(&self, attr: &Keyword, v: &Value) -> Result<Option<Entity<'_>>, QueryError> {
        let Some(a) = self.attr(attr) else {
            return Ok(None);
        };
        if a.unique.is_none() {
            return Err(QueryError::BadArguments {
                name: "entity".into(),
                message: format!("{attr} is not unique, so it names no entity"),
            });
        }
        let v = crate::query::exec::coerce(self.schema(), a.id, v);
        Ok(self
            .reader()
            .first_entity_with(a.id, &v)?
            .map(|e| self.entity(e)))
    }
}

impl<'a> Entity<'a> {
    /// The value(s) of `attr` (`:ns/name`, or `:ns/_name` for the entities referring to this
    /// one). `None` when the entity has none or the attribute does not exist.
    pub fn get(&self, attr: &str) -> Result<Option<EntityValue<'a>>, QueryError> {
        let k = Keyword::parse(attr);
        let (ident, reverse) = match k.name().strip_prefix('_') {
            Some(rest) if !rest.is_empty() => (Keyword::new(k.namespace(), rest), true),
            _ => (k, false),
        };
        let Some(a) = self.db.attr(&ident).cloned() else {
            return Ok(None);
        };
        self.not_history()?;
        if reverse {
            let holders = self.db.holders(a.id, &Value::Ref(self.id))?;
            if holders.is_empty() {
                return Ok(None);
            }
            let mut es: Vec<Entity<'a>> = holders.into_iter().map(|e| self.db.entity(e)).collect();
            // A component has one owner: Datomic gives the entity itself.
            if a.is_component && es.len() == 1 {
                return Ok(Some(EntityValue::Ref(es.remove(0))));
            }
            return Ok(Some(EntityValue::Refs(es)));
        }
        let vals = self.db.attr_values(self.id, a.id)?;
        if vals.is_empty() {
            return Ok(None);
        }
        Ok(Some(match (a.is_ref(), a.is_many()) {
            (true, true) => EntityValue::Refs(
                vals.iter()
                    .filter_map(crate::query::exec::entity_of)
                    .map(|e| self.db.entity(e))
                    .collect(),
            ),
            (true, false) => match vals.first().and_then(crate::query::exec::entity_of) {
                Some(e) => EntityValue::Ref(self.db.entity(e)),
                None => return Ok(None),
            },
            (false, true) => EntityValue::Many(vals),
            (false, false) => EntityValue::One(vals.into_iter().next().expect("not empty")),
        }))
    }

    /// The attribute idents this entity has values for.
    pub fn keys(&self) -> Result<Vec<Keyword>, QueryError> {
        self.not_history()?;
        let mut out: Vec<Keyword> = Vec::new();
        for (a, _) in self.db.entity_datoms(self.id)? {
            if let Some(attr) = self.db.schema().get(a) {
                if out.last() != Some(&attr.ident) {
                    out.push(attr.ident.clone());
                }
            }
        }
        Ok(out)
    }

    /// An entity of a history value is refused, as Datomic refuses it: such a value holds
    /// every value ever, not an entity's state.
    fn not_history(&self) -> Result<(), QueryError> {
        if self.db.is_history() {
            return Err(QueryError::BadArguments {
                name: "entity".into(),
                message: "entity is not supported on a history database".into(),
            });
        }
        Ok(())
    }

    /// Every attribute at once, as a map (components expanded, other refs as `{:db/id n}`):
    /// Datomic's `touch`.
    pub fn touch(&self) -> Result<Edn, QueryError> {
        self.db.pull("[*]", self.id)
    }
}
