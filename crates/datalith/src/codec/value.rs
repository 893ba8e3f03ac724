//! The values a datom can hold.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// A keyword or symbol name: `:ns/name` (namespace optional).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Keyword {
    ns: Option<Arc<str>>,
    name: Arc<str>,
}

impl Keyword {
    /// A keyword. An empty namespace counts as none.
    pub fn new(ns: Option<&str>, name: &str) -> Keyword {
        Keyword {
            ns: ns.filter(|n| !n.is_empty()).map(Arc::from),
            name: Arc::from(name),
        }
    }

    /// Parses `:ns/name`, `ns/name`, `:name` or `name`. The name is everything after the first
    /// `/` (so `:a/b/c` has namespace `a`, name `b/c`), except that `/` alone is a name.
    pub fn parse(text: &str) -> Keyword {
        let t = text.strip_prefix(':').unwrap_or(text);
        match t.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.is_empty() => Keyword::new(Some(ns), name),
            _ => Keyword::new(None, t),
        }
    }

    /// The namespace, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.ns.as_deref()
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ns/name` without the colon.
    pub fn to_symbol_text(&self) -> String {
        match &self.ns {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.to_string(),
        }
    }
}

impl fmt::Display for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.ns {
            Some(ns) => write!(f, ":{ns}/{}", self.name),
            None => write!(f, ":{}", self.name),
        }
    }
}

impl fmt::Debug for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A double that is never NaN, so it is totally ordered (`-0.0` is normalized to `0.0`).
#[derive(Clone, Copy, PartialEq)]
pub struct F64(f64);

impl F64 {
    /// `None` for NaN.
    pub fn new(x: f64) -> Option<F64> {
        if x.is_nan() {
            None
        } else if x == 0.0 {
            Some(F64(0.0))
        } else {
            Some(F64(x))
        }
    }

    /// The number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl Eq for F64 {}
impl PartialOrd for F64 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for F64 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl std::hash::Hash for F64 {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.to_bits().hash(h)
    }
}
impl fmt::Debug for F64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// A float that is never NaN.
#[derive(Clone, Copy, PartialEq)]
pub struct F32(f32);

impl F32 {
    /// `None` for NaN.
    pub fn new(x: f32) -> Option<F32> {
        if x.is_nan() {
            None
        } else if x == 0.0 {
            Some(F32(0.0))
        } else {
            Some(F32(x))
        }
    }

    /// The number.
    pub fn get(self) -> f32 {
        self.0
    }
}

impl Eq for F32 {}
impl PartialOrd for F32 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for F32 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl std::hash::Hash for F32 {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.to_bits().hash(h)
    }
}
impl fmt::Debug for F32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// An exact decimal: `negative`, significant `digits` (ASCII '0'-'9', no leading or trailing
/// zeros; empty for zero) and `exponent`, meaning `0.d1d2d3... x 10^exponent`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BigDec {
    negative: bool,
    digits: Arc<str>,
    exponent: i32,
}

impl BigDec {
    /// Parses decimal text such as `-12.50`, `3e-7`, `0.0001` (an `M` suffix is allowed).
    pub fn parse(text: &str) -> Option<BigDec> {
        let t = text.strip_suffix('M').unwrap_or(text);
        let (negative, t) = match t.as_bytes().first()? {
            b'-' => (true, &t[1..]),
            b'+' => (false, &t[1..]),
            _ => (false, t),
        };
        let (mantissa, exp) = match t.find(['e', 'E']) {
            Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
            None => (t, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let all: String = format!("{int}{frac}");
        let lead = all.len() - all.trim_start_matches('0').len();
        let digits = all.trim_start_matches('0').trim_end_matches('0');
        if digits.is_empty() {
            return Some(BigDec {
                negative: false,
                digits: Arc::from(""),
                exponent: 0,
            });
        }
        let exponent = (int.len() as i64 - lead as i64 + exp as i64)
            .clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        Some(BigDec {
            negative,
            digits: Arc::from(digits),
            exponent,
        })
    }

    /// Sign, digits and exponent.
    pub fn parts(&self) -> (bool, &str, i32) {
        (self.negative, &self.digits, self.exponent)
    }

    pub(crate) fn from_parts(negative: bool, digits: &str, exponent: i32) -> BigDec {
        BigDec {
            negative: negative && !digits.is_empty(),
            digits: Arc::from(digits),
            exponent,
        }
    }

    fn sign(&self) -> i8 {
        if self.digits.is_empty() {
            0
        } else if self.negative {
            -1
        } else {
            1
        }
    }
}

impl PartialOrd for BigDec {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BigDec {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.sign(), other.sign());
        if a != b || a == 0 {
            return a.cmp(&b);
        }
        let magnitude = self
            .exponent
            .cmp(&other.exponent)
            .then_with(|| self.digits.as_bytes().cmp(other.digits.as_bytes()));
        if a < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl fmt::Display for BigDec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.digits.is_empty() {
            return write!(f, "0M");
        }
        if self.negative {
            write!(f, "-")?;
        }
        write!(f, "0.{}E{}M", self.digits, self.exponent)
    }
}

impl fmt::Debug for BigDec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A value. The derived order is the value order within a type, and across types the order of
/// the variants, which is also the order of their encodings.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// `true` / `false`.
    Boolean(bool),
    /// 64-bit integer.
    Long(i64),
    /// Big integer (`N` suffix), limited to 128 bits.
    BigInt(i128),
    /// 32-bit float.
    Float(F32),
    /// 64-bit double.
    Double(F64),
    /// Exact decimal (`M` suffix).
    BigDec(BigDec),
    /// Milliseconds since the Unix epoch.
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
    /// A tuple; elements may be nil.
    Tuple(Vec<Option<Value>>),
}

impl Value {
    /// A double value; `None` for NaN.
    pub fn double(x: f64) -> Option<Value> {
        F64::new(x).map(Value::Double)
    }

    /// A string value.
    pub fn string(s: &str) -> Value {
        Value::String(Arc::from(s))
    }

    /// A keyword value parsed from `:ns/name`.
    pub fn keyword(s: &str) -> Value {
        Value::Keyword(Keyword::parse(s))
    }

    /// Its type.
    pub fn value_type(&self) -> ValueType {
        match self {
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
            Value::Tuple(_) => ValueType::Tuple,
        }
    }

    /// The number as f64, for comparisons across numeric types.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Long(n) => Some(*n as f64),
            Value::BigInt(n) => Some(*n as f64),
            Value::Float(x) => Some(x.get() as f64),
            Value::Double(x) => Some(x.get()),
            Value::BigDec(d) => d.to_string().trim_end_matches('M').parse().ok(),
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

/// The type of an attribute's values (`:db.type/...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ValueType {
    /// `:db.type/boolean`
    Boolean,
    /// `:db.type/long`
    Long,
    /// `:db.type/bigint`
    BigInt,
    /// `:db.type/float`
    Float,
    /// `:db.type/double`
    Double,
    /// `:db.type/bigdec`
    BigDec,
    /// `:db.type/instant`
    Instant,
    /// `:db.type/uuid`
    Uuid,
    /// `:db.type/string`
    String,
    /// `:db.type/keyword`
    Keyword,
    /// `:db.type/symbol`
    Symbol,
    /// `:db.type/ref`
    Ref,
    /// `:db.type/bytes`
    Bytes,
    /// `:db.type/tuple`
    Tuple,
}

impl ValueType {
    /// Every type.
    pub const ALL: [ValueType; 14] = [
        ValueType::Boolean,
        ValueType::Long,
        ValueType::BigInt,
        ValueType::Float,
        ValueType::Double,
        ValueType::BigDec,
        ValueType::Instant,
        ValueType::Uuid,
        ValueType::String,
        ValueType::Keyword,
        ValueType::Symbol,
        ValueType::Ref,
        ValueType::Bytes,
        ValueType::Tuple,
    ];

    /// `:db.type/...` text.
    pub fn ident(self) -> &'static str {
        match self {
            ValueType::Boolean => ":db.type/boolean",
            ValueType::Long => ":db.type/long",
            ValueType::BigInt => ":db.type/bigint",
            ValueType::Float => ":db.type/float",
            ValueType::Double => ":db.type/double",
            ValueType::BigDec => ":db.type/bigdec",
            ValueType::Instant => ":db.type/instant",
            ValueType::Uuid => ":db.type/uuid",
            ValueType::String => ":db.type/string",
            ValueType::Keyword => ":db.type/keyword",
            ValueType::Symbol => ":db.type/symbol",
            ValueType::Ref => ":db.type/ref",
            ValueType::Bytes => ":db.type/bytes",
            ValueType::Tuple => ":db.type/tuple",
        }
    }

    /// The type named by a `:db.type/...` keyword.
    pub fn from_ident(k: &Keyword) -> Option<ValueType> {
        if k.namespace() != Some("db.type") {
            return None;
        }
        ValueType::ALL
            .into_iter()
            .find(|t| t.ident().rsplit('/').next() == Some(k.name()))
    }
}
