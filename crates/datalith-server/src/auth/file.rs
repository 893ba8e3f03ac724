//! The token file's lines.

use super::{hash, Grant, Role};

/// The grants of a token file's text, or the first wrong line with its number. A grant's
/// database must be served, or, when `any_name` (databases may be created), any valid name.
pub fn parse(text: &str, served: &[String], any_name: bool) -> Result<Vec<Grant>, String> {
    let mut grants = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |what: String| format!("line {}: {what}", i + 1);
        let words: Vec<&str> = line.split_whitespace().collect();
        let [name, role, db, hex] = words[..] else {
            return Err(at(format!(
                "{} words, expected NAME ROLE DB-OR-* SHA256-HEX",
                words.len()
            )));
        };
        let role = Role::parse(role)
            .ok_or_else(|| at(format!("role {role:?} is not read, write or admin")))?;
        let db = match db {
            "*" => None,
            d if served.iter().any(|s| s == d) => Some(d.to_string()),
            d if any_name && crate::served::valid_name(d) => Some(d.to_string()),
            d => {
                return Err(at(format!(
                    "database {d:?} is not served (served: {})",
                    served.join(", ")
                )))
            }
        };
        let hash = hash::from_hex(hex).ok_or_else(|| {
            at("the hash must be 64 hex digits, the SHA-256 of the token \
                (printf %s \"$TOKEN\" | sha256sum)"
                .to_string())
        })?;
        grants.push(Grant {
            name: name.to_string(),
            role,
            db,
            hash,
        });
    }
    Ok(grants)
}
