//! EDN to tagged JSON (see the table in `json`), written straight into text: a map keeps
//! its order (a JSON value tree would sort the keys), and no tree is built for a large
//! result.

use datalith::edn::{inst_text, to_edn_string, write_edn, write_escaped as escaped, Edn, TextOut};

use super::tag;

/// `edn` as JSON text.
pub fn to_json_string(edn: &Edn) -> String {
    let mut out = String::new();
    write_value(edn, &mut out);
    out
}

/// `edn` as JSON text, appended to `out` (a streamed answer's items, written into its chunk).
pub fn write_json(edn: &Edn, out: &mut impl TextOut) {
    write_value(edn, out);
}

fn write_value(edn: &Edn, out: &mut impl TextOut) {
    match edn {
        Edn::Nil => out.push_str("null"),
        Edn::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // EDN's digits are JSON's.
        Edn::Long(_) => write_edn(edn, out),
        Edn::BigInt(n) => tagged_text(tag::BIGINT, &n.to_string(), out),
        Edn::Double(x) => match serde_json::Number::from_f64(*x) {
            // serde_json writes a double with a fraction or an exponent (`1.0`), so it reads
            // back as a double.
            Some(n) => {
                let _ = write!(out, "{n}");
            }
            None => tagged_text(tag::DOUBLE, non_finite(*x), out),
        },
        Edn::BigDec(_) => {
            let text = to_edn_string(edn);
            tagged_text(tag::BIGDEC, text.strip_suffix('M').unwrap_or(&text), out)
        }
        Edn::Ratio(r) => tagged_text(tag::RATIO, &r.to_string(), out),
        Edn::String(s) => string(s, out),
        Edn::Char(c) => tagged_text(tag::CHAR, &c.to_string(), out),
        // The keyword's text (`:ns/name`) written piece by piece, not made first.
        Edn::Keyword(k) => tagged(tag::KEYWORD, out, |out| {
            out.push_str("\":");
            if let Some(ns) = k.namespace() {
                escaped(ns, out);
                out.push('/');
            }
            escaped(k.name(), out);
            out.push('"');
        }),
        Edn::Symbol(s) => tagged_text(tag::SYMBOL, &s.to_symbol_text(), out),
        Edn::Vector(items) => array(items, out),
        Edn::List(items) => tagged(tag::LIST, out, |out| array(items, out)),
        Edn::Set(items) => tagged(tag::SET, out, |out| array(items, out)),
        Edn::Map(pairs) => map(pairs, out),
        Edn::Inst(ms) => tagged_text(tag::INST, &rfc3339(*ms), out),
        Edn::Uuid(_) => tagged_text(tag::UUID, &quoted_text(edn), out),
        Edn::Regex(source) => tagged_text(tag::REGEX, source, out),
        Edn::Tagged(t, v) => tagged(tag::TAGGED, out, |out| {
            out.push('[');
            string(&t.to_symbol_text(), out);
            out.push(',');
            write_value(v, out);
            out.push(']');
        }),
    }
}

/// `s` as a JSON string: the EDN printer's escaping, which is JSON's too (RFC 8259: the
/// quote, the backslash and the control characters), written in place: through a serde_json
/// value each string cost two allocations, a third of a large JSON answer's time.
fn string(s: &str, out: &mut impl TextOut) {
    out.push('"');
    escaped(s, out);
    out.push('"');
}

fn tagged<O: TextOut>(tag: &str, out: &mut O, value: impl FnOnce(&mut O)) {
    out.push('{');
    string(tag, out);
    out.push(':');
    value(out);
    out.push('}');
}

fn tagged_text(tag: &str, text: &str, out: &mut impl TextOut) {
    tagged(tag, out, |out| string(text, out));
}

fn array(items: &[Edn], out: &mut impl TextOut) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_value(item, out);
    }
    out.push(']');
}

fn non_finite(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// An instant as RFC 3339 in UTC (`...Z`), which every JSON world parses; EDN's printer
/// writes `-00:00`, which means the same.
fn rfc3339(ms: i64) -> String {
    let text = inst_text(ms);
    match text.strip_suffix("-00:00") {
        Some(rest) => format!("{rest}Z"),
        None => text,
    }
}

/// The string inside a tagged literal's printed form (`#uuid "..."` gives `...`).
fn quoted_text(edn: &Edn) -> String {
    let printed = to_edn_string(edn);
    match (printed.find('"'), printed.rfind('"')) {
        (Some(a), Some(b)) if b > a => printed[a + 1..b].to_string(),
        _ => printed,
    }
}

/// The JSON object key of a map key, when a JSON object can hold it without ambiguity: a
/// keyword as its text (with the colon), a string that starts with neither `:` nor `#`.
fn object_key(k: &Edn) -> Option<String> {
    match k {
        Edn::Keyword(k) => Some(k.to_string()),
        Edn::String(s) if !s.starts_with(':') && !s.starts_with('#') => Some(s.clone()),
        _ => None,
    }
}

fn map(pairs: &[(Edn, Edn)], out: &mut impl TextOut) {
    let keys: Option<Vec<String>> = pairs.iter().map(|(k, _)| object_key(k)).collect();
    match keys {
        // No key starts with `#`, so a one-key object cannot read as a tag.
        Some(keys) => {
            out.push('{');
            for (i, (key, (_, v))) in keys.iter().zip(pairs).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(key, out);
                out.push(':');
                write_value(v, out);
            }
            out.push('}');
        }
        None => tagged(tag::MAP, out, |out| {
            out.push('[');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('[');
                write_value(k, out);
                out.push(',');
                write_value(v, out);
                out.push(']');
            }
            out.push(']');
        }),
    }
}
