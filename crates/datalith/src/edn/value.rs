//! The EDN value tree.

use crate::codec::{BigDec, Keyword, Ratio};

/// One EDN value.
#[derive(Debug, Clone, PartialEq)]
pub enum Edn {
    /// `nil`
    Nil,
    /// `true` / `false`
    Bool(bool),
    /// An integer.
    Long(i64),
    /// An integer with `N` (or too large for 64 bits).
    BigInt(i128),
    /// A floating-point number.
    Double(f64),
    /// A decimal with `M`.
    BigDec(BigDec),
    /// A fraction `31/5` (Clojure's ratio literal; lowest terms, denominator above 1).
    Ratio(Ratio),
    /// A string.
    String(String),
    /// A character `\c`.
    Char(char),
    /// A keyword.
    Keyword(Keyword),
    /// A symbol.
    Symbol(Keyword),
    /// `( ... )`
    List(Vec<Edn>),
    /// `[ ... ]`
    Vector(Vec<Edn>),
    /// `{ ... }` in written order.
    Map(Vec<(Edn, Edn)>),
    /// `#{ ... }`
    Set(Vec<Edn>),
    /// `#inst "..."` as epoch milliseconds.
    Inst(i64),
    /// `#uuid "..."`.
    Uuid([u8; 16]),
    /// `#"..."`: a regular expression (Clojure's literal, not EDN's), its text as written.
    Regex(String),
    /// Any other tagged element.
    Tagged(Keyword, Box<Edn>),
}

impl Edn {
    /// The keyword, if this is one.
    pub fn as_keyword(&self) -> Option<&Keyword> {
        match self {
            Edn::Keyword(k) => Some(k),
            _ => None,
        }
    }

    /// The symbol's text, if this is a symbol.
    pub fn as_symbol(&self) -> Option<String> {
        match self {
            Edn::Symbol(s) => Some(s.to_symbol_text()),
            _ => None,
        }
    }

    /// Items of a vector or list.
    pub fn as_seq(&self) -> Option<&[Edn]> {
        match self {
            Edn::Vector(v) | Edn::List(v) => Some(v),
            _ => None,
        }
    }

    /// A keyword `:name` or `:ns/name` parsed from text.
    pub fn kw(text: &str) -> Edn {
        Edn::Keyword(Keyword::parse(text))
    }
}
