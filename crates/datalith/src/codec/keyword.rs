//! Keywords and symbols: an optional namespace and a name.
//!
//! The derived order (namespace, absent first, then name, both bytewise) is the order of their
//! encodings: an absent namespace encodes as the empty string, which sorts before any other.

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

    /// Whether `other` shares this keyword's allocations (is a clone of it): a check of two
    /// pointers that implies equality (equal keywords may still not share them).
    pub fn same_allocation(&self, other: &Keyword) -> bool {
        Arc::ptr_eq(&self.name, &other.name)
            && match (&self.ns, &other.ns) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
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
