//! The values a datom can hold, and the few a query computes but no datom holds (ratios,
//! regular expressions, sets and maps: see `Value::is_storable`).

use std::fmt;
use std::sync::Arc;

use super::keyword::Keyword;
use super::number::{BigDec, F32, F64};
use super::ratio::Ratio;
use super::regex::Regex;
use super::value_type::ValueType;

/// A value. The derived order is the value order within a type, and across types the order of
/// the variants, which is also the order of their encodings.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// `true` / `false`.
    Boolean(bool),
    /// 64-bit integer.
    Long(i64),
    /// Big integer (`N` suffix). Limited to 128 bits (`i128`): Datomic's bigints are
    /// unbounded, but integers past 2^127 are vanishingly rare in data, and a fixed width keeps
    /// the encoding a plain 16-byte sign-flipped number. Readers refuse larger literals.
    BigInt(Box<i128>),
    /// 32-bit float.
    Float(F32),
    /// 64-bit double.
    Double(F64),
    /// Exact decimal (`M` suffix).
    BigDec(BigDec),
    /// Milliseconds since the Unix epoch (negative before 1970).
    Instant(i64),
    /// A UUID.
    Uuid([u8; 16]),
    /// UTF-8 text.
    String(Arc<str>),
    /// A keyword.
    Keyword(Keyword),
    /// A symbol.
    Symbol(Keyword),
    /// An entity id.
    Ref(u64),
    /// Raw bytes.
    Bytes(Arc<[u8]>),
    /// A tuple; elements may be nil. Query functions also return their vectors, lists and
    /// sequences as tuples.
    Tuple(Vec<Option<Value>>),
    /// An exact fraction (query values only: Datomic has no ratio type).
    Ratio(Box<Ratio>),
    /// A regular expression (query values only).
    Regex(Regex),
    /// A set, its elements sorted by this order and distinct (query values only: a
    /// cardinality-many attribute holds several datoms, not a set value).
    Set(Arc<[Value]>),
    /// A map, its entries sorted by key and keys distinct (query values only).
    Map(Arc<[(Value, Value)]>),
    /// A character (query values only): what Clojure's sequence functions give of a string
    /// (`(first "abc")` is `\\a`, a collection binding of a string binds its characters).
    /// Java's characters are UTF-16 units; a lone surrogate half becomes U+FFFD.
    Char(char),
}

// Query rows hold millions of values: the rare wide ones (bigints, ratios) are boxed and a
// keyword is one pointer, so that a value is four words.
const _: () = assert!(std::mem::size_of::<Value>() <= 32);

impl Value {
    /// A double value; `None` for NaN.
    pub fn double(x: f64) -> Option<Value> {
        F64::new(x).map(Value::Double)
    }

    /// A float value; `None` for NaN.
    pub fn float(x: f32) -> Option<Value> {
        F32::new(x).map(Value::Float)
    }

    /// A string value.
    pub fn string(s: &str) -> Value {
        Value::String(Arc::from(s))
    }

    /// A keyword value parsed from `:ns/name`.
    pub fn keyword(s: &str) -> Value {
        Value::Keyword(Keyword::parse(s))
    }

    /// A set of `items`, sorted and deduplicated.
    pub fn set(mut items: Vec<Value>) -> Value {
        items.sort();
        items.dedup();
        Value::Set(items.into())
    }

    /// A map of `entries`, sorted by key; a later entry replaces an earlier one with its key.
    pub fn map(entries: Vec<(Value, Value)>) -> Value {
        let mut sorted: Vec<(Value, Value)> = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            match sorted.iter_mut().find(|(have, _)| *have == k) {
                Some(slot) => slot.1 = v,
                None => sorted.push((k, v)),
            }
        }
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        Value::Map(sorted.into())
    }

    /// Whether a datom can hold it: every value but the query-only ratios, regular
    /// expressions, sets and maps (nor tuples containing one).
    pub fn is_storable(&self) -> bool {
        self.value_type().is_some()
    }

    /// Its type; `None` for the values no datom can hold (see `is_storable`).
    pub fn value_type(&self) -> Option<ValueType> {
        Some(match self {
            Value::Boolean(_) => ValueType::Boolean,
            Value::Long(_) => ValueType::Long,
            Value::BigInt(_) => ValueType::BigInt,
            Value::Float(_) => ValueType::Float,
            Value::Double(_) => ValueType::Double,
            Value::BigDec(_) => ValueType::BigDec,
            Value::Instant(_) => ValueType::Instant,
            Value::Uuid(_) => ValueType::Uuid,
            Value::String(_) => ValueType::String,
            Value::Keyword(_) => ValueType::Keyword,
            Value::Symbol(_) => ValueType::Symbol,
            Value::Ref(_) => ValueType::Ref,
            Value::Bytes(_) => ValueType::Bytes,
            Value::Tuple(items) => {
                if items.iter().flatten().all(Value::is_storable) {
                    ValueType::Tuple
                } else {
                    return None;
                }
            }
            Value::Ratio(_) | Value::Regex(_) | Value::Set(_) | Value::Map(_) | Value::Char(_) => {
                return None
            }
        })
    }

    /// How deeply tuples nest inside this value: 0 for a scalar, 1 for a tuple of scalars.
    /// Decoding refuses values deeper than `limits::MAX_TUPLE_DEPTH` + 1, so writers check
    /// this before storing a value.
    pub fn tuple_depth(&self) -> u32 {
        match self {
            Value::Tuple(items) => {
                1 + items
                    .iter()
                    .flatten()
                    .map(Value::tuple_depth)
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        }
    }

    /// The number as f64, for comparisons across numeric types.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Long(n) => Some(*n as f64),
            Value::BigInt(n) => Some(**n as f64),
            Value::Float(x) => Some(x.get() as f64),
            Value::Double(x) => Some(x.get()),
            Value::BigDec(d) => d.to_string().trim_end_matches('M').parse().ok(),
            Value::Ratio(r) => Some(r.to_f64()),
            _ => None,
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Boolean(b) => write!(f, "{b}"),
            Value::Long(n) => write!(f, "{n}"),
            Value::BigInt(n) => write!(f, "{n}N"),
            Value::Float(x) => write!(f, "{:?}", x.get()),
            Value::Double(x) => write!(f, "{:?}", x.get()),
            Value::BigDec(d) => write!(f, "{d}"),
            Value::Instant(ms) => write!(f, "#inst {ms}"),
            Value::Uuid(u) => write!(f, "#uuid \"{}\"", uuid_text(u)),
            Value::String(s) => write!(f, "{s:?}"),
            Value::Keyword(k) => write!(f, "{k}"),
            Value::Symbol(s) => write!(f, "{}", s.to_symbol_text()),
            Value::Ref(e) => write!(f, "#ref {e}"),
            Value::Bytes(b) => write!(f, "#bytes {b:02x?}"),
            Value::Tuple(items) => {
                write!(f, "[")?;
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, " ")?;
                    }
                    match it {
                        Some(v) => write!(f, "{v:?}")?,
                        None => write!(f, "nil")?,
                    }
                }
                write!(f, "]")
            }
            Value::Ratio(r) => write!(f, "{r}"),
            Value::Regex(r) => write!(f, "{r:?}"),
            Value::Char(c) => write!(f, "\\{c}"),
            Value::Set(items) => {
                write!(f, "#{{")?;
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, " ")?;
                    }
                    write!(f, "{it:?}")?;
                }
                write!(f, "}}")
            }
            Value::Map(entries) => {
                write!(f, "{{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k:?} {v:?}")?;
                }
                write!(f, "}}")
            }
        }
    }
}

/// The canonical text form of a UUID.
pub fn uuid_text(u: &[u8; 16]) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Parses the canonical text form of a UUID.
pub fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 || s.len() != 36 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}
