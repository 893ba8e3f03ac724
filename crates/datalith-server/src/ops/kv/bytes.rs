//! Keys and values as they travel. A byte string is the library's bytes value: in EDN
//! `#bytes [104 105]`, in JSON `{"#tag": ["bytes", [104, 105]]}` (the tagged element every
//! bytes value of the server already is); answers always write it so. A request may also give
//! one as a string, which stands for its UTF-8 bytes (`"hi"` is `#bytes [104 105]`), so that
//! text keys read as text in a request.

use datalith::codec::Keyword;
use datalith::edn::Edn;
use datalith::limits::MAX_KEY_BYTES;

use super::super::request::short;
use crate::error::{Result, ServerError};

/// `bytes` as EDN: `#bytes [...]`.
pub fn edn(bytes: &[u8]) -> Edn {
    Edn::Tagged(
        Keyword::new(None, "bytes"),
        Box::new(Edn::Vector(
            bytes.iter().map(|b| Edn::Long(*b as i64)).collect(),
        )),
    )
}

/// The bytes `form` gives for `field`: `#bytes [...]` or a string.
pub fn of(field: &str, form: &Edn) -> Result<Vec<u8>> {
    let refused = || {
        ServerError::invalid(format!(
            ":{field} must be bytes (#bytes [0 255 ...], or a string for its UTF-8), got {}",
            short(form)
        ))
    };
    match form {
        Edn::String(s) => Ok(s.as_bytes().to_vec()),
        Edn::Tagged(tag, inner) if tag.namespace().is_none() && tag.name() == "bytes" => {
            match &**inner {
                Edn::Vector(items) | Edn::List(items) => items
                    .iter()
                    .map(|i| match i {
                        Edn::Long(n) => u8::try_from(*n).ok(),
                        _ => None,
                    })
                    .collect::<Option<Vec<u8>>>()
                    .ok_or_else(refused),
                _ => Err(refused()),
            }
        }
        _ => Err(refused()),
    }
}

/// A key: 1 to `MAX_KEY_BYTES` bytes (the store's limit, checked here so that a read is
/// refused as a write would be).
pub fn key(field: &str, form: &Edn) -> Result<Vec<u8>> {
    let key = bound(field, form)?;
    match key.is_empty() {
        true => Err(ServerError::invalid(format!(
            ":{field} is empty: a key has at least one byte"
        ))),
        false => Ok(key),
    }
}

/// A range's bound: at most `MAX_KEY_BYTES` bytes (no key is longer), possibly empty.
pub fn bound(field: &str, form: &Edn) -> Result<Vec<u8>> {
    let bytes = of(field, form)?;
    if bytes.len() > MAX_KEY_BYTES {
        return Err(ServerError::invalid(format!(
            ":{field} has {} bytes: a key has at most {MAX_KEY_BYTES}",
            bytes.len()
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datalith::edn::read_one;

    #[test]
    fn bytes_come_as_the_bytes_tag_or_a_string_and_go_as_the_tag() {
        let form = read_one("#bytes [0 104 255]").unwrap();
        assert_eq!(of("key", &form).unwrap(), vec![0, 104, 255]);
        assert_eq!(edn(&[0, 104, 255]), form);
        assert_eq!(
            of("key", &Edn::String("hé".into())).unwrap(),
            "hé".as_bytes()
        );
        for bad in [
            "#bytes [256]",
            "#bytes [-1]",
            "#bytes [\"a\"]",
            "#bytes 1",
            "42",
            ":k",
        ] {
            assert!(of("key", &read_one(bad).unwrap()).is_err(), "{bad}");
        }
        assert!(key("key", &Edn::String(String::new())).is_err());
        assert!(key("key", &Edn::String("x".repeat(MAX_KEY_BYTES + 1))).is_err());
        assert!(bound("start", &Edn::String(String::new()))
            .unwrap()
            .is_empty());
    }
}
