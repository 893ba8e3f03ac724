//! Tagged JSON to EDN (see the table in `json`). Each tag's text is read by the EDN reader
//! where it has a literal (keywords, bigdecs, ratios, UUIDs), so JSON accepts exactly what
//! EDN accepts.

use datalith::codec::Keyword;
use datalith::edn::{parse_inst, read_one, to_edn_string, Edn};
use serde_json::{Map, Number, Value};

use super::tag;
use crate::error::{codes, Result, ServerError};

/// Reads a JSON body into EDN.
pub fn from_json_slice(bytes: &[u8]) -> Result<Edn> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        ServerError::new(codes::INVALID_JSON, format!("body: {e}"))
            .with("line", Edn::Long(e.line() as i64))
            .with("column", Edn::Long(e.column() as i64))
    })?;
    from_json_value(&value)
}

/// A JSON value as EDN.
pub fn from_json_value(v: &Value) -> Result<Edn> {
    Ok(match v {
        Value::Null => Edn::Nil,
        Value::Bool(b) => Edn::Bool(*b),
        Value::Number(n) => number(n),
        Value::String(s) => Edn::String(s.clone()),
        Value::Array(items) => Edn::Vector(all(items)?),
        Value::Object(m) => object(m)?,
    })
}

fn all(items: &[Value]) -> Result<Vec<Edn>> {
    items.iter().map(from_json_value).collect()
}

fn number(n: &Number) -> Edn {
    if let Some(i) = n.as_i64() {
        Edn::Long(i)
    } else if let Some(u) = n.as_u64() {
        // Above i64::MAX: EDN reads such an integer as a bigint too.
        Edn::BigInt(u as i128)
    } else {
        Edn::Double(n.as_f64().unwrap_or(f64::NAN))
    }
}

fn bad(message: impl Into<String>) -> ServerError {
    ServerError::new(codes::INVALID_JSON, message)
}

fn object(m: &Map<String, Value>) -> Result<Edn> {
    if m.len() == 1 {
        let (k, v) = m.iter().next().expect("one entry");
        if k.starts_with('#') {
            return tagged(k, v);
        }
    }
    let mut pairs = Vec::with_capacity(m.len());
    for (k, v) in m {
        pairs.push((key(k)?, from_json_value(v)?));
    }
    Ok(Edn::Map(pairs))
}

/// An object key: `:ns/name` is a keyword, anything else a string, except `#...`, which only
/// a tag may use (a map with such string keys is written as `#map`).
fn key(k: &str) -> Result<Edn> {
    if k.starts_with(':') {
        keyword(k)
    } else if k.starts_with('#') {
        Err(bad(format!(
            "key {k:?}: a key starting with # is a tag, alone in its object; write a map with \
             such a string key as {{\"#map\": [[key, value], ...]}}"
        )))
    } else {
        Ok(Edn::String(k.to_string()))
    }
}

fn text<'a>(tag: &str, v: &'a Value) -> Result<&'a str> {
    v.as_str()
        .ok_or_else(|| bad(format!("{tag} takes a string, got {v}")))
}

fn array<'a>(tag: &str, v: &'a Value) -> Result<&'a [Value]> {
    v.as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| bad(format!("{tag} takes an array, got {v}")))
}

/// Reads `edn_text` and keeps it only if `want` accepts what it read.
fn literal(tag: &str, shown: &str, edn_text: &str, want: fn(&Edn) -> bool) -> Result<Edn> {
    match read_one(edn_text) {
        Ok(e) if want(&e) => Ok(e),
        _ => Err(bad(format!("{tag}: {shown:?} is not one"))),
    }
}

fn keyword(t: &str) -> Result<Edn> {
    let t = t.strip_prefix(':').unwrap_or(t);
    literal(tag::KEYWORD, t, &format!(":{t}"), |e| {
        matches!(e, Edn::Keyword(_))
    })
}

fn tagged(name: &str, v: &Value) -> Result<Edn> {
    match name {
        tag::KEYWORD => keyword(text(name, v)?),
        tag::SYMBOL => {
            let t = text(name, v)?;
            literal(name, t, t, |e| matches!(e, Edn::Symbol(_)))
        }
        tag::BIGINT => {
            let t = text(name, v)?;
            t.parse::<i128>().map(Edn::BigInt).map_err(|_| {
                bad(format!(
                    "{name}: {t:?} is not an integer of at most 128 bits"
                ))
            })
        }
        tag::BIGDEC => {
            let t = text(name, v)?;
            let digits = t.strip_suffix('M').unwrap_or(t);
            literal(name, t, &format!("{digits}M"), |e| {
                matches!(e, Edn::BigDec(_))
            })
        }
        tag::RATIO => {
            let t = text(name, v)?;
            // `4/2` reads as `2`, as in EDN.
            literal(name, t, t, |e| {
                matches!(e, Edn::Ratio(_) | Edn::Long(_) | Edn::BigInt(_))
            })
        }
        tag::DOUBLE => match text(name, v)? {
            "NaN" => Ok(Edn::Double(f64::NAN)),
            "Infinity" => Ok(Edn::Double(f64::INFINITY)),
            "-Infinity" => Ok(Edn::Double(f64::NEG_INFINITY)),
            other => other
                .parse::<f64>()
                .map(Edn::Double)
                .map_err(|_| bad(format!("{name}: {other:?} is not a double"))),
        },
        tag::CHAR => {
            let t = text(name, v)?;
            let mut chars = t.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(Edn::Char(c)),
                _ => Err(bad(format!("{name}: {t:?} is not one character"))),
            }
        }
        tag::INST => {
            let t = text(name, v)?;
            parse_inst(t)
                .map(Edn::Inst)
                .ok_or_else(|| bad(format!("{name}: {t:?} is not an RFC 3339 instant")))
        }
        tag::UUID => {
            let t = text(name, v)?;
            let edn_text = format!("#uuid {}", to_edn_string(&Edn::String(t.to_string())));
            literal(name, t, &edn_text, |e| matches!(e, Edn::Uuid(_)))
        }
        tag::REGEX => Ok(Edn::Regex(text(name, v)?.to_string())),
        tag::LIST => Ok(Edn::List(all(array(name, v)?)?)),
        tag::SET => Ok(Edn::Set(all(array(name, v)?)?)),
        tag::MAP => {
            let mut pairs = Vec::new();
            for pair in array(name, v)? {
                match pair.as_array().map(Vec::as_slice) {
                    Some([k, v]) => pairs.push((from_json_value(k)?, from_json_value(v)?)),
                    _ => return Err(bad(format!("{name} takes [key, value] pairs, got {pair}"))),
                }
            }
            Ok(Edn::Map(pairs))
        }
        tag::TAGGED => match array(name, v)? {
            [Value::String(t), value] if !t.is_empty() && !t.starts_with(':') => Ok(Edn::Tagged(
                Keyword::parse(t),
                Box::new(from_json_value(value)?),
            )),
            _ => Err(bad(format!("{name} takes [\"ns/tag\", value], got {v}"))),
        },
        other => Err(bad(format!(
            "unknown tag {other:?} (a one-key object whose key starts with # is a tag: #kw, \
             #sym, #set, #list, #map, #inst, #uuid, #bigint, #bigdec, #ratio, #double, #char, \
             #regex, #tag)"
        ))),
    }
}
