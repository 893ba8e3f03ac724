//! Python to EDN.
//!
//! When a plain `str` is a keyword: a `datalith.Keyword` always is; a plain string is one only
//! where the database takes nothing but keywords, so that no string value is ever misread:
//! the keys of a dict (an entity map's attributes, a pull's map keys), and the values of
//! `:db/ident`, `:db/valueType`, `:db/cardinality` and `:db/unique`, when the string begins
//! with `:`. Everywhere else a `str` is a string.

use std::collections::HashMap;

use datalith::codec::{BigDec, Keyword, Ratio, Reduced};
use datalith::limits::MAX_EDN_DEPTH;
use datalith::Edn;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString,
    PyTuple,
};

use crate::package;

/// Where a value stands, which decides whether a plain `str` that begins with `:` is a
/// keyword.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Place {
    /// A value: a `str` is a string.
    Value,
    /// A dict's key, or the value of an attribute that only takes keywords.
    Keyword,
    /// Anywhere in a pull pattern given as Python data, where every `:...` string names an
    /// attribute.
    Pattern,
}

/// Attributes whose values are keywords and nothing else.
const KEYWORD_VALUED: &[&str] = &[
    ":db/ident",
    ":db/valueType",
    ":db/cardinality",
    ":db/unique",
];

/// The EDN of `obj`.
pub(crate) fn to_edn(obj: &Bound<'_, PyAny>, place: Place) -> PyResult<Edn> {
    ToEdn::default().edn(obj, place)
}

/// One conversion (a whole transaction's data, say): the keywords it has read, by their text,
/// so that the attribute of every entity map is parsed once, not once per entity.
#[derive(Default)]
pub(crate) struct ToEdn {
    keywords: HashMap<String, Keyword>,
    /// Containers entered on the way to the value being read: a list that holds itself (or
    /// data nested past what the database reads as text) ends in an error here, not in a
    /// stack overflow that takes the interpreter down.
    depth: usize,
}

impl ToEdn {
    fn keyword(&mut self, text: &str) -> Keyword {
        if let Some(k) = self.keywords.get(text) {
            return k.clone();
        }
        let k = Keyword::parse(text);
        self.keywords.insert(text.to_string(), k.clone());
        k
    }

    /// The EDN of `obj`.
    pub(crate) fn edn(&mut self, obj: &Bound<'_, PyAny>, place: Place) -> PyResult<Edn> {
        // The commonest values first, by exact type (a `Keyword` is a `str` subclass, a
        // `bool` an `int` subclass: neither is taken here).
        if obj.is_exact_instance_of::<PyString>() {
            let s = obj.cast::<PyString>()?.to_cow()?;
            return Ok(match place {
                Place::Keyword | Place::Pattern if s.len() > 1 && s.starts_with(':') => {
                    Edn::Keyword(self.keyword(&s))
                }
                _ => Edn::String(s.into_owned()),
            });
        }
        if obj.is_exact_instance_of::<PyInt>() {
            if let Ok(n) = obj.extract::<i64>() {
                return Ok(Edn::Long(n));
            }
        }
        self.general(obj, place)
    }

    fn general(&mut self, obj: &Bound<'_, PyAny>, place: Place) -> PyResult<Edn> {
        if self.depth >= MAX_EDN_DEPTH {
            return Err(PyValueError::new_err(format!(
                "data nested deeper than {MAX_EDN_DEPTH} levels (a list or dict that holds \
                 itself?); the database reads values nested at most that deep"
            )));
        }
        self.depth += 1;
        let made = self.general_here(obj, place);
        self.depth -= 1;
        made
    }

    fn general_here(&mut self, obj: &Bound<'_, PyAny>, place: Place) -> PyResult<Edn> {
        let py = obj.py();
        if obj.is_none() {
            return Ok(Edn::Nil);
        }
        // Before `int`: `bool` is a subclass of it.
        if let Ok(b) = obj.cast::<PyBool>() {
            return Ok(Edn::Bool(b.is_true()));
        }
        if obj.is_instance_of::<PyInt>() {
            if let Ok(n) = obj.extract::<i64>() {
                return Ok(Edn::Long(n));
            }
            return match obj.extract::<i128>() {
                Ok(n) => Ok(Edn::BigInt(n)),
                Err(_) => Err(PyValueError::new_err(format!(
                    "{} is past the largest integer the database keeps (128 bits)",
                    obj.repr()?
                ))),
            };
        }
        if let Ok(x) = obj.cast::<PyFloat>() {
            return Ok(Edn::Double(x.value()));
        }
        if obj.is_instance(package::keyword_class(py)?)? {
            return Ok(Edn::Keyword(self.keyword(&obj.extract::<String>()?)));
        }
        if obj.is_instance(package::symbol_class(py)?)? {
            return Ok(Edn::Symbol(Keyword::parse(&obj.extract::<String>()?)));
        }
        if let Ok(s) = obj.cast::<PyString>() {
            let s = s.to_cow()?;
            let s: &str = &s;
            return Ok(match place {
                Place::Keyword | Place::Pattern if s.len() > 1 && s.starts_with(':') => {
                    Edn::Keyword(self.keyword(s))
                }
                _ => Edn::String(s.to_string()),
            });
        }
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(bytes_edn(b.as_bytes()));
        }
        if let Ok(b) = obj.cast::<PyByteArray>() {
            return Ok(bytes_edn(&b.to_vec()));
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            let mut pairs = Vec::with_capacity(d.len());
            for (k, v) in d.iter() {
                let key = self.edn(&k, Place::Keyword)?;
                let value_place = match &key {
                    _ if place == Place::Pattern => Place::Pattern,
                    Edn::Keyword(kw) if keyword_valued(kw) => Place::Keyword,
                    _ => Place::Value,
                };
                pairs.push((key, self.edn(&v, value_place)?));
            }
            return Ok(Edn::Map(pairs));
        }
        if let Ok(l) = obj.cast::<PyList>() {
            return Ok(Edn::Vector(self.items(l.iter(), place)?));
        }
        if let Ok(t) = obj.cast::<PyTuple>() {
            return Ok(Edn::Vector(self.items(t.iter(), place)?));
        }
        if let Ok(s) = obj.cast::<PySet>() {
            return Ok(Edn::Set(self.items(s.iter(), place)?));
        }
        if let Ok(s) = obj.cast::<PyFrozenSet>() {
            return Ok(Edn::Set(self.items(s.iter(), place)?));
        }
        if obj.is_instance(package::datetime_class(py)?)? {
            let ms: i64 = package::ms_from_inst(py)?.call1((obj,))?.extract()?;
            return Ok(Edn::Inst(ms));
        }
        if obj.is_instance(package::uuid_class(py)?)? {
            let bytes: Vec<u8> = obj.getattr("bytes")?.extract()?;
            let bytes: [u8; 16] = bytes
                .try_into()
                .map_err(|_| PyValueError::new_err("a UUID of other than 16 bytes"))?;
            return Ok(Edn::Uuid(bytes));
        }
        if obj.is_instance(package::decimal_class(py)?)? {
            let text: String = obj.str()?.extract()?;
            return BigDec::parse(&text).map(Edn::BigDec).ok_or_else(|| {
                PyValueError::new_err(format!("Decimal('{text}') has no exact decimal value"))
            });
        }
        if obj.is_instance(package::fraction_class(py)?)? {
            let too_big = || -> PyResult<PyErr> {
                Ok(PyValueError::new_err(format!(
                    "{} is past the 128-bit numerator and denominator the database keeps",
                    obj.repr()?
                )))
            };
            let part = |name: &str| -> PyResult<Option<i128>> {
                Ok(obj.getattr(name)?.extract::<i128>().ok())
            };
            let (Some(num), Some(den)) = (part("numerator")?, part("denominator")?) else {
                return Err(too_big()?);
            };
            return match Ratio::reduce(num, den) {
                Some(Reduced::Fraction(r)) => Ok(Edn::Ratio(r)),
                Some(Reduced::Whole(n)) => Ok(i64::try_from(n).map_or(Edn::BigInt(n), Edn::Long)),
                None => Err(too_big()?),
            };
        }
        if obj.is_instance(package::tagged_class(py)?)? {
            let tag: String = obj.getattr("tag")?.extract()?;
            let value = self.edn(&obj.getattr("value")?, place)?;
            return Ok(Edn::Tagged(Keyword::parse(&tag), Box::new(value)));
        }
        Err(PyTypeError::new_err(format!(
            "a {} has no database type (the package's README lists the types it takes)",
            obj.get_type().name()?
        )))
    }

    fn items<'py>(
        &mut self,
        iter: impl Iterator<Item = Bound<'py, PyAny>>,
        place: Place,
    ) -> PyResult<Vec<Edn>> {
        // A vector's members are values, except in a keyword-only place (`:db/unique` never
        // takes one; a tuple of idents does).
        iter.map(|i| self.edn(&i, place)).collect()
    }
}

/// Whether `k` is one of [`KEYWORD_VALUED`] (compared without making its text).
fn keyword_valued(k: &Keyword) -> bool {
    k.namespace() == Some("db")
        && KEYWORD_VALUED
            .iter()
            .any(|t| t.strip_prefix(":db/") == Some(k.name()))
}

/// The library's form of a byte value (`#bytes [...]`).
fn bytes_edn(b: &[u8]) -> Edn {
    Edn::Tagged(
        Keyword::new(None, "bytes"),
        Box::new(Edn::Vector(
            b.iter().map(|x| Edn::Long(*x as i64)).collect(),
        )),
    )
}
