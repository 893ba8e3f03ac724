//! Keywords and symbols: an optional namespace and a name.
//!
//! The derived order (namespace, absent first, then name, both bytewise) is the order of their
//! encodings: an absent namespace encodes as the empty string, which sorts before any other.

use std::fmt;
use std::sync::Arc;

/// A keyword or symbol name: `:ns/name` (namespace optional).
///
/// One pointer wide (the parts behind one `Arc`): every `Value` is as wide as its widest
/// variant, and query rows hold millions of values.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Keyword(Arc<Parts>);

#[derive(PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Parts {
    ns: Option<Box<str>>,
    name: Box<str>,
}

impl Keyword {
    /// A keyword. An empty namespace counts as none.
    pub fn new(ns: Option<&str>, name: &str) -> Keyword {
        Keyword(Arc::new(Parts {
            ns: ns.filter(|n| !n.is_empty()).map(Box::from),
            name: Box::from(name),
        }))
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

    /// The keyword a string spells where Datomic wants a keyword and reads a string as one
    /// (a keyword attribute's value, an ident naming an entity): `":a/b"` is `:a/b`; a string
    /// without its leading colon, or the colon alone, spells none.
    pub fn from_colon_text(text: &str) -> Option<Keyword> {
        match text.strip_prefix(':') {
            Some(rest) if !rest.is_empty() => Some(Keyword::parse(text)),
            _ => None,
        }
    }

    /// Whether `other` shares this keyword's allocation (is a clone of it): a check of a
    /// pointer that implies equality (equal keywords may still not share it).
    pub fn same_allocation(&self, other: &Keyword) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The namespace, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.0.ns.as_deref()
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// `ns/name` without the colon.
    pub fn to_symbol_text(&self) -> String {
        match &self.0.ns {
            Some(ns) => format!("{ns}/{}", self.0.name),
            None => self.0.name.to_string(),
        }
    }
}

impl fmt::Display for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.ns {
            Some(ns) => write!(f, ":{ns}/{}", self.0.name),
            None => write!(f, ":{}", self.0.name),
        }
    }
}

impl fmt::Debug for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for Keyword {
    type Err = std::convert::Infallible;

    /// Same as [`Keyword::parse`]; never fails.
    fn from_str(s: &str) -> Result<Keyword, Self::Err> {
        Ok(Keyword::parse(s))
    }
}

#[cfg(test)]
mod tests {
    use super::Keyword;

    #[test]
    fn colon_text_spells_a_keyword_only_with_its_colon() {
        let table = [
            (":a/b", Some(":a/b")),
            (":dev", Some(":dev")),
            (":a/b/c", Some(":a/b/c")),
            ("a/b", None),
            ("dev", None),
            (":", None),
            ("", None),
        ];
        for (text, want) in table {
            let got = Keyword::from_colon_text(text).map(|k| k.to_string());
            assert_eq!(got.as_deref(), want, "{text:?}");
        }
    }

    #[test]
    fn parse_table() {
        // (text, namespace, name, display)
        let cases: &[(&str, Option<&str>, &str, &str)] = &[
            (":db/ident", Some("db"), "ident", ":db/ident"),
            (
                "db.type/string",
                Some("db.type"),
                "string",
                ":db.type/string",
            ),
            (":name", None, "name", ":name"),
            ("name", None, "name", ":name"),
            (":a/b/c", Some("a"), "b/c", ":a/b/c"),
            (":/", None, "/", ":/"),
            (":/x", None, "/x", ":/x"),
            (":x/", None, "x/", ":x/"),
            (":_friend", None, "_friend", ":_friend"),
            (
                ":person/_friend",
                Some("person"),
                "_friend",
                ":person/_friend",
            ),
        ];
        for &(text, ns, name, shown) in cases {
            let k = Keyword::parse(text);
            assert_eq!(k.namespace(), ns, "{text}");
            assert_eq!(k.name(), name, "{text}");
            assert_eq!(k.to_string(), shown, "{text}");
            assert_eq!(Keyword::parse(&k.to_string()), k, "{text} re-parses");
        }
    }

    #[test]
    fn empty_namespace_is_none() {
        assert_eq!(Keyword::new(Some(""), "a"), Keyword::new(None, "a"));
        assert!(Keyword::new(None, "z") < Keyword::new(Some("a"), "a"));
    }
}
