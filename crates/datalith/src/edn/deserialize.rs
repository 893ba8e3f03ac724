//! EDN into the caller's own types, through `serde`: [`from_edn`] reads a query result or a
//! pulled map as any `Deserialize` type.
//!
//! How EDN meets serde's data model: nil is unit (and `None` for an `Option`); lists, vectors
//! and sets are sequences (so tuples and `Vec`s); maps are maps; keywords and symbols are
//! their text without the colon (`:person/name` is `"person/name"`, and a unit enum variant
//! with that name); an instant is its epoch milliseconds; a tagged value is the value under
//! the tag; UUIDs, big decimals, ratios and regular expressions are their EDN text.
//!
//! A map read as a struct (a pulled entity) matches each keyword key to a field by its whole
//! text (`#[serde(rename = "person/name")]`), else by its name alone (a field `name` takes
//! `:person/name`) when no other key of the map has that name: `{:person/name .. :pet/name
//! ..}` matches neither `name`, so such fields need the rename.

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{Deserializer, IntoDeserializer, Visitor};

use super::Edn;

/// Why EDN does not fit the type asked for (serde's own message: what it found, what it
/// expected).
pub type DeserializeError = serde::de::value::Error;

/// `edn` as a `T`.
///
/// ```
/// use datalith::edn::from_edn;
/// use datalith::{Database, DbOptions};
///
/// // Fields match keys by name (`name` takes `:person/name`) or by a rename to the whole
/// // keyword, which a name two keys share needs.
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Person {
///     name: String,
///     #[serde(rename = "person/age")]
///     age: Option<i64>,
/// }
///
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
/// db.transact(r#"[{:db/ident :person/name :db/valueType :db.type/string
///                  :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
///                 {:db/ident :person/age :db/valueType :db.type/long
///                  :db/cardinality :db.cardinality/one}]"#).unwrap();
/// db.transact(r#"[{:person/name "Ann" :person/age 30} {:person/name "Bob" :person/age 25}]"#)
///     .unwrap();
/// let snap = db.db().unwrap();
///
/// // A relation as a vector of tuples.
/// let found = snap.q("[:find ?n ?a :where [?e :person/name ?n] [?e :person/age ?a]]", &[]).unwrap();
/// let mut rows: Vec<(String, i64)> = from_edn(&found).unwrap();
/// rows.sort();
/// assert_eq!(rows, [("Ann".to_string(), 30), ("Bob".to_string(), 25)]);
///
/// // A pull as a struct.
/// let ann = snap.pull("[:person/name :person/age]", datalith::Eid::Lookup(
///     datalith::Keyword::parse(":person/name"), datalith::Value::string("Ann"))).unwrap();
/// let ann: Person = from_edn(&ann).unwrap();
/// assert_eq!(ann, Person { name: "Ann".into(), age: Some(30) });
/// ```
pub fn from_edn<'de, T: serde::Deserialize<'de>>(edn: &'de Edn) -> Result<T, DeserializeError> {
    T::deserialize(edn)
}

impl<'de> IntoDeserializer<'de, DeserializeError> for &'de Edn {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> Deserializer<'de> for &'de Edn {
    type Error = DeserializeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeserializeError> {
        match self {
            Edn::Nil => visitor.visit_unit(),
            Edn::Bool(b) => visitor.visit_bool(*b),
            Edn::Long(n) | Edn::Inst(n) => visitor.visit_i64(*n),
            Edn::BigInt(n) => visitor.visit_i128(*n),
            Edn::Double(x) => visitor.visit_f64(*x),
            Edn::String(s) => visitor.visit_borrowed_str(s),
            Edn::Char(c) => visitor.visit_char(*c),
            Edn::Keyword(k) | Edn::Symbol(k) => visitor.visit_string(k.to_symbol_text()),
            Edn::List(items) | Edn::Vector(items) | Edn::Set(items) => {
                visitor.visit_seq(SeqDeserializer::new(items.iter()))
            }
            Edn::Map(pairs) => {
                visitor.visit_map(MapDeserializer::new(pairs.iter().map(|(k, v)| (k, v))))
            }
            Edn::Tagged(_, inner) => inner.deserialize_any(visitor),
            Edn::BigDec(_) | Edn::Ratio(_) | Edn::Uuid(_) | Edn::Regex(_) => {
                visitor.visit_string(self.to_string())
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeserializeError> {
        match self {
            Edn::Nil => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    /// A map's keyword keys are offered by their whole text, or by their name alone where
    /// that is a field and no other key has the same name (see the module doc).
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeserializeError> {
        let Edn::Map(pairs) = self else {
            return self.deserialize_any(visitor);
        };
        let keys = pairs.iter().map(|(k, _)| field_key(k, pairs, fields));
        let values = pairs.iter().map(|(_, v)| v);
        visitor.visit_map(MapDeserializer::new(keys.zip(values)))
    }

    /// A keyword or string names a unit variant.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeserializeError> {
        let text = match self {
            Edn::Keyword(k) | Edn::Symbol(k) => k.to_symbol_text(),
            Edn::String(s) => s.clone(),
            _ => return self.deserialize_any(visitor),
        };
        visitor.visit_enum(IntoDeserializer::<DeserializeError>::into_deserializer(
            text,
        ))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map identifier
        ignored_any
    }
}

/// The text a struct sees for the map key `key` (see `deserialize_struct`).
fn field_key(key: &Edn, pairs: &[(Edn, Edn)], fields: &[&str]) -> String {
    let k = match key {
        Edn::Keyword(k) => k,
        Edn::String(s) => return s.clone(),
        other => return other.to_string(),
    };
    let whole = k.to_symbol_text();
    let name = k.name();
    let shared_name = || {
        pairs
            .iter()
            .filter(|(other, _)| matches!(other, Edn::Keyword(o) if o.name() == name))
            .count()
            > 1
    };
    if fields.contains(&whole.as_str()) || !fields.contains(&name) || shared_name() {
        whole
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::from_edn;
    use crate::edn::Edn;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Named {
        name: Option<String>,
        #[serde(rename = "pet/name")]
        pet: Option<String>,
    }

    #[test]
    fn struct_fields_take_keys_by_whole_text_or_unshared_name() {
        let named = |name: Option<&str>, pet: Option<&str>| Named {
            name: name.map(str::to_string),
            pet: pet.map(str::to_string),
        };
        // (pulled map, the struct it reads as)
        let cases = [
            (r#"{:person/name "Ann"}"#, named(Some("Ann"), None)),
            (r#"{:name "Ann"}"#, named(Some("Ann"), None)),
            // Two keys named `name`: the rename takes its own, `name` neither.
            (
                r#"{:person/name "Ann" :pet/name "Rex"}"#,
                named(None, Some("Rex")),
            ),
            (r#"{:pet/name "Rex"}"#, named(None, Some("Rex"))),
            // Two keys share the name: neither matches `name`.
            (
                r#"{:person/name "Ann" :city/name "Oslo"}"#,
                named(None, None),
            ),
            (r#"{"name" "Ann"}"#, named(Some("Ann"), None)),
        ];
        for (text, want) in cases {
            let edn: Edn = text.parse().unwrap();
            assert_eq!(from_edn::<Named>(&edn).unwrap(), want, "{text}");
        }
    }
}
