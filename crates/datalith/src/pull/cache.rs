//! Parsed pull patterns by text: a pattern pulled for entity after entity is read and parsed
//! once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::pattern::{parse_pattern, PullPattern};
use crate::edn::read_one;
use crate::query::QueryError;

/// Patterns kept before the cache is cleared (patterns built by string concatenation would
/// otherwise grow it without bound).
const PULL_CACHE_ENTRIES: usize = 1024;

/// A cache of parsed pull patterns.
#[derive(Default)]
pub struct PullCache {
    parsed: Mutex<HashMap<String, Arc<PullPattern>>>,
}

impl PullCache {
    /// The parsed form of `text`.
    pub fn parse(&self, text: &str) -> Result<Arc<PullPattern>, QueryError> {
        if let Some(p) = self
            .parsed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(text)
        {
            return Ok(p.clone());
        }
        let form = read_one(text).map_err(crate::query::parse::syntax_error)?;
        let p = Arc::new(parse_pattern(&form)?);
        let mut cache = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= PULL_CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(text.to_string(), p.clone());
        Ok(p)
    }

    /// How many patterns are cached.
    pub fn len(&self) -> usize {
        self.parsed.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether no pattern is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_parsed_once_and_the_cache_stays_bounded() {
        let c = PullCache::default();
        let a = c.parse("[:a/b]").unwrap();
        let b = c.parse("[:a/b]").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(c.len(), 1);
        for i in 0..PULL_CACHE_ENTRIES + 5 {
            c.parse(&format!("[:a/b{i}]")).unwrap();
        }
        assert!(c.len() <= PULL_CACHE_ENTRIES);
        let err = c.parse("[:a/b").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1, column 1: unclosed collection: expected ]"
        );
    }
}
