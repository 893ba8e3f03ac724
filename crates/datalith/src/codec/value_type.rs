//! The type of an attribute's values, named by `:db.type/...` idents.

use super::keyword::Keyword;

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

#[cfg(test)]
mod tests {
    use super::ValueType;
    use crate::codec::Keyword;

    #[test]
    fn idents_round_trip() {
        for t in ValueType::ALL {
            assert_eq!(ValueType::from_ident(&Keyword::parse(t.ident())), Some(t));
        }
        for bad in [":db.type/text", ":db/string", ":string", ":db.type/"] {
            assert_eq!(ValueType::from_ident(&Keyword::parse(bad)), None, "{bad}");
        }
    }
}
