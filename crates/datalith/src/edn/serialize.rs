//! The caller's own `Serialize` values as EDN: [`to_edn`], so that a struct can be tx data
//! (`Database::transact(datalith::edn::to_edn(&people)?)`).
//!
//! How serde's data model becomes EDN: a struct is a map whose keys are keywords named after
//! its fields (`#[serde(rename = "person/name")]` gives `:person/name`); a field that is
//! `None` is left out (a datom has no nil value); sequences and tuples are vectors; maps keep
//! their keys (strings stay strings); a unit enum variant is a keyword; integers are longs
//! (a `u64` above `i64::MAX` is refused), floats doubles, bytes a vector of longs.

use serde::ser::{self, Impossible, Serialize};

use super::Edn;
use crate::codec::Keyword;

/// Why a value has no EDN form (a `u64` too large for a long, a map key that failed, or the
/// value's own `Serialize` error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerializeError(String);

impl std::fmt::Display for SerializeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SerializeError {}

impl ser::Error for SerializeError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        SerializeError(msg.to_string())
    }
}

/// `value` as EDN.
///
/// ```
/// use datalith::{Database, DbOptions};
///
/// #[derive(serde::Serialize)]
/// struct Person {
///     #[serde(rename = "person/name")]
///     name: String,
///     #[serde(rename = "person/age")]
///     age: Option<i64>,
/// }
///
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
/// db.transact(r#"[{:db/ident :person/name :db/valueType :db.type/string
///                  :db/cardinality :db.cardinality/one}
///                 {:db/ident :person/age :db/valueType :db.type/long
///                  :db/cardinality :db.cardinality/one}]"#).unwrap();
/// let people = [Person { name: "Ann".into(), age: Some(30) }, Person { name: "Bob".into(), age: None }];
/// let data = datalith::edn::to_edn(&people).unwrap();
/// assert_eq!(data.to_string(), r#"[{:person/name "Ann", :person/age 30} {:person/name "Bob"}]"#);
/// db.transact(&data).unwrap();
/// ```
pub fn to_edn<T: Serialize + ?Sized>(value: &T) -> Result<Edn, SerializeError> {
    value.serialize(EdnSerializer)
}

fn keyword(name: &str) -> Edn {
    Edn::Keyword(Keyword::parse(&format!(":{name}")))
}

/// Builds the EDN of one value.
struct EdnSerializer;

/// The items of a sequence, tuple or tuple variant being built.
struct Items(Vec<Edn>);

/// The entries of a map or struct being built, and a key waiting for its value.
struct Entries {
    pairs: Vec<(Edn, Edn)>,
    key: Option<Edn>,
}

impl ser::Serializer for EdnSerializer {
    type Ok = Edn;
    type Error = SerializeError;
    type SerializeSeq = Items;
    type SerializeTuple = Items;
    type SerializeTupleStruct = Items;
    type SerializeTupleVariant = Items;
    type SerializeMap = Entries;
    type SerializeStruct = Entries;
    type SerializeStructVariant = Impossible<Edn, SerializeError>;

    fn serialize_bool(self, v: bool) -> Result<Edn, SerializeError> {
        Ok(Edn::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Edn, SerializeError> {
        Ok(Edn::Long(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Edn, SerializeError> {
        Ok(Edn::Long(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Edn, SerializeError> {
        Ok(Edn::Long(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Edn, SerializeError> {
        Ok(Edn::Long(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Edn, SerializeError> {
        Ok(i64::try_from(v).map_or(Edn::BigInt(v), Edn::Long))
    }
    fn serialize_u8(self, v: u8) -> Result<Edn, SerializeError> {
        Ok(Edn::Long(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Edn, SerializeError> {
        Ok(Edn::Long(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Edn, SerializeError> {
        Ok(Edn::Long(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Edn, SerializeError> {
        i64::try_from(v)
            .map(Edn::Long)
            .map_err(|_| SerializeError(format!("{v} does not fit in a long")))
    }
    fn serialize_f32(self, v: f32) -> Result<Edn, SerializeError> {
        Ok(Edn::Double(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Edn, SerializeError> {
        Ok(Edn::Double(v))
    }
    fn serialize_char(self, v: char) -> Result<Edn, SerializeError> {
        Ok(Edn::Char(v))
    }
    fn serialize_str(self, v: &str) -> Result<Edn, SerializeError> {
        Ok(Edn::String(v.to_string()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Edn, SerializeError> {
        Ok(Edn::Vector(
            v.iter().map(|b| Edn::Long((*b).into())).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Edn, SerializeError> {
        Ok(Edn::Nil)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Edn, SerializeError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Edn, SerializeError> {
        Ok(Edn::Nil)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Edn, SerializeError> {
        Ok(Edn::Nil)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Edn, SerializeError> {
        Ok(keyword(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Edn, SerializeError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Edn, SerializeError> {
        Ok(Edn::Map(vec![(keyword(variant), value.serialize(self)?)]))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Items, SerializeError> {
        Ok(Items(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<Items, SerializeError> {
        Ok(Items(Vec::with_capacity(len)))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Items, SerializeError> {
        Ok(Items(Vec::with_capacity(len)))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        len: usize,
    ) -> Result<Items, SerializeError> {
        Ok(Items(Vec::with_capacity(len)))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Entries, SerializeError> {
        Ok(Entries {
            pairs: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Entries, SerializeError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Impossible<Edn, SerializeError>, SerializeError> {
        Err(SerializeError(format!(
            "{name}::{variant}: an enum variant with fields has no EDN form here"
        )))
    }
}

impl ser::SerializeSeq for Items {
    type Ok = Edn;
    type Error = SerializeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerializeError> {
        self.0.push(to_edn(v)?);
        Ok(())
    }
    fn end(self) -> Result<Edn, SerializeError> {
        Ok(Edn::Vector(self.0))
    }
}

/// Tuples, tuple structs and tuple variants are sequences.
macro_rules! items_as_a_sequence {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for Items {
            type Ok = Edn;
            type Error = SerializeError;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerializeError> {
                ser::SerializeSeq::serialize_element(self, v)
            }
            fn end(self) -> Result<Edn, SerializeError> {
                ser::SerializeSeq::end(self)
            }
        }
    )*};
}

items_as_a_sequence!(
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Entries {
    type Ok = Edn;
    type Error = SerializeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), SerializeError> {
        self.key = Some(to_edn(k)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerializeError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| SerializeError("a map value without its key".into()))?;
        self.pairs.push((key, to_edn(v)?));
        Ok(())
    }
    fn end(self) -> Result<Edn, SerializeError> {
        Ok(Edn::Map(self.pairs))
    }
}

impl ser::SerializeStruct for Entries {
    type Ok = Edn;
    type Error = SerializeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        v: &T,
    ) -> Result<(), SerializeError> {
        match to_edn(v)? {
            // A datom has no nil value: an absent field asserts nothing.
            Edn::Nil => {}
            v => self.pairs.push((keyword(name), v)),
        }
        Ok(())
    }
    fn end(self) -> Result<Edn, SerializeError> {
        Ok(Edn::Map(self.pairs))
    }
}
