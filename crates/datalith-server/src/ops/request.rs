//! A request's body as a map of named fields. EDN bodies name them with keywords
//! (`{:query "..."}`), JSON bodies with strings (`{"query": "..."}`); both are accepted, and
//! a field the operation does not know is refused, so a misspelt option never goes unnoticed.

use datalith::edn::{to_edn_string, Edn};

use crate::error::{Result, ServerError};

/// The fields of one request.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pairs: Vec<(Edn, Edn)>,
}

/// The field name a key stands for: `:query` and `"query"` both name `query`.
fn field_name(key: &Edn) -> Option<String> {
    match key {
        Edn::Keyword(k) if k.namespace().is_none() => Some(k.name().to_string()),
        Edn::String(s) => Some(s.clone()),
        _ => None,
    }
}

impl Request {
    /// The request a body holds (`None`: no body, no fields); `allowed` are the fields the
    /// operation knows.
    pub fn new(body: Option<Edn>, allowed: &[&str]) -> Result<Request> {
        let pairs = match body {
            None => Vec::new(),
            Some(Edn::Map(pairs)) => pairs,
            Some(other) => {
                return Err(ServerError::invalid(format!(
                    "the body must be a map of fields ({}), got {}",
                    shown(allowed),
                    short(&other)
                )))
            }
        };
        for (k, _) in &pairs {
            match field_name(k) {
                Some(name) if allowed.contains(&name.as_str()) => {}
                _ => {
                    return Err(ServerError::invalid(format!(
                        "unknown field {}: this operation takes {}",
                        to_edn_string(k),
                        shown(allowed)
                    ))
                    .with("field", k.clone()))
                }
            }
        }
        Ok(Request { pairs })
    }

    /// The value of `field`; nil counts as absent.
    pub fn get(&self, field: &str) -> Option<&Edn> {
        self.pairs
            .iter()
            .find(|(k, _)| field_name(k).as_deref() == Some(field))
            .map(|(_, v)| v)
            .filter(|v| **v != Edn::Nil)
    }

    /// The value of a field the operation needs.
    pub fn required(&self, field: &str) -> Result<&Edn> {
        self.get(field)
            .ok_or_else(|| ServerError::invalid(format!("missing field :{field}")))
    }

    /// A needed field that is EDN text or EDN data (a query, a pull pattern), as text.
    pub fn text(&self, field: &str) -> Result<String> {
        Ok(match self.required(field)? {
            Edn::String(s) => s.clone(),
            other => to_edn_string(other),
        })
    }

    /// An optional count (a non-negative integer).
    pub fn count(&self, field: &str) -> Result<Option<u64>> {
        match self.get(field) {
            None => Ok(None),
            Some(Edn::Long(n)) if *n >= 0 => Ok(Some(*n as u64)),
            Some(other) => Err(ServerError::invalid(format!(
                ":{field} must be a non-negative integer, got {}",
                short(other)
            ))),
        }
    }

    /// An optional sequence (vector or list); absent: empty.
    pub fn seq(&self, field: &str) -> Result<Vec<Edn>> {
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(Edn::Vector(items) | Edn::List(items)) => Ok(items.clone()),
            Some(other) => Err(ServerError::invalid(format!(
                ":{field} must be a vector, got {}",
                short(other)
            ))),
        }
    }
}

fn shown(fields: &[&str]) -> String {
    if fields.is_empty() {
        return "no fields".to_string();
    }
    fields
        .iter()
        .map(|f| format!(":{f}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A value for a message: its EDN, cut short.
pub(crate) fn short(v: &Edn) -> String {
    let text = to_edn_string(v);
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text,
    }
}
