//! JSON that carries every EDN value, both ways: what JSON has is written as JSON, what it
//! lacks as a *tagged object*, an object with one key that starts with `#`.
//!
//! | EDN | JSON |
//! |---|---|
//! | `nil`, `true`, `"s"` | `null`, `true`, `"s"` |
//! | `42` (a long) | `42` |
//! | `4.2` (a double) | `4.2` (always with a fraction or exponent: `1.0`); `{"#double": "NaN"}`, `"Infinity"`, `"-Infinity"` |
//! | `42N` | `{"#bigint": "42"}` |
//! | `4.20M` | `{"#bigdec": "4.2"}` (a bigdec is kept normalized) |
//! | `31/5` | `{"#ratio": "31/5"}` |
//! | `:person/name` | `{"#kw": ":person/name"}` (the colon may be left out when writing) |
//! | `?e`, `pull` | `{"#sym": "?e"}` |
//! | `\c` | `{"#char": "c"}` |
//! | `#inst "2026-12-01T00:00:00.000-00:00"` | `{"#inst": "2026-12-01T00:00:00.000Z"}` (RFC 3339) |
//! | `#uuid "..."` | `{"#uuid": "..."}` |
//! | `#"a+"` | `{"#regex": "a+"}` |
//! | `[1 2]` | `[1, 2]` |
//! | `(1 2)` | `{"#list": [1, 2]}` |
//! | `#{1 2}` | `{"#set": [1, 2]}` |
//! | `#my/tag v` | `{"#tag": ["my/tag", v]}` |
//! | `{:a 1, "b" 2}`: keys all keywords or strings | `{":a": 1, "b": 2}`: a keyword key is its text with the colon |
//! | any other map (keys that are numbers, vectors..., or strings starting with `:` or `#`) | `{"#map": [[k, v], ...]}` |
//!
//! So every string is a string (never guessed to be a keyword or a date), a one-key object
//! whose key starts with `#` is always a tag (an unknown tag is an error, not a map), and
//! decoding what encoding wrote gives the same EDN back. Integers beyond 64 bits must be
//! written as `#bigint` (a JSON parser may round them).

mod decode;
mod encode;

pub use decode::{from_json_slice, from_json_value};
pub use encode::{to_json_string, write_json};

/// The tags, as they are written.
pub mod tag {
    /// A keyword.
    pub const KEYWORD: &str = "#kw";
    /// A symbol.
    pub const SYMBOL: &str = "#sym";
    /// An integer with `N`.
    pub const BIGINT: &str = "#bigint";
    /// A decimal with `M`.
    pub const BIGDEC: &str = "#bigdec";
    /// A ratio.
    pub const RATIO: &str = "#ratio";
    /// A double JSON cannot write (NaN, the infinities).
    pub const DOUBLE: &str = "#double";
    /// A character.
    pub const CHAR: &str = "#char";
    /// An instant.
    pub const INST: &str = "#inst";
    /// A UUID.
    pub const UUID: &str = "#uuid";
    /// A regular expression.
    pub const REGEX: &str = "#regex";
    /// A list.
    pub const LIST: &str = "#list";
    /// A set.
    pub const SET: &str = "#set";
    /// A map whose keys a JSON object cannot hold.
    pub const MAP: &str = "#map";
    /// Any other tagged element.
    pub const TAGGED: &str = "#tag";
}

#[cfg(test)]
mod tests;
