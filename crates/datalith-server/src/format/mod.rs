//! The two body formats: reading a request body and writing a response in EDN or JSON, and
//! choosing between them from the request's headers ([`negotiate`]).

pub mod negotiate;

use datalith::edn::{read_one, to_edn_string, Edn};

use crate::error::{Result, ServerError};
use crate::json;

/// A body format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/edn`: the default.
    Edn,
    /// `application/json`, with EDN's types as tagged objects (see [`crate::json`]).
    Json,
}

impl Format {
    /// The media type a response in this format carries.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Edn => "application/edn",
            Format::Json => "application/json",
        }
    }

    /// `value` written in this format at the end of `out` (an answer written piece by
    /// piece, into one buffer).
    pub fn write_into(self, value: &Edn, out: &mut String) {
        match self {
            Format::Edn => datalith::edn::write_edn(value, out),
            Format::Json => json::write_json(value, out),
        }
    }

    /// A map entry's key and what separates it from its value, at the end of `out`: `:k `
    /// in EDN, `":k":` in JSON (an answer's keys are keywords, which a JSON object holds as
    /// their text).
    pub fn entry_key(self, key: &Edn, out: &mut String) {
        match self {
            Format::Edn => {
                datalith::edn::write_edn(key, out);
                out.push(' ');
            }
            Format::Json => {
                json::write_json(&Edn::String(key.to_string()), out);
                out.push(':');
            }
        }
    }

    /// What separates a map's entries.
    pub fn entry_separator(self) -> &'static str {
        match self {
            Format::Edn => ", ",
            Format::Json => ",",
        }
    }

    /// What separates a collection's items.
    pub fn item_separator(self) -> &'static str {
        match self {
            Format::Edn => " ",
            Format::Json => ",",
        }
    }

    /// `value` written in this format.
    pub fn write(self, value: &Edn) -> String {
        match self {
            Format::Edn => to_edn_string(value),
            Format::Json => json::to_json_string(value),
        }
    }

    /// A request body in this format: one EDN form, or one JSON value. An empty body is
    /// `None` (the operation decides whether it needs one).
    pub fn read(self, body: &[u8]) -> Result<Option<Edn>> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        match self {
            Format::Edn => {
                let text = std::str::from_utf8(body).map_err(|e| {
                    ServerError::invalid(format!("body: not UTF-8 ({e})"))
                        .with("source", Edn::String("body".into()))
                })?;
                read_one(text)
                    .map(Some)
                    .map_err(|e| ServerError::read("body", &e))
            }
            Format::Json => json::from_json_slice(body).map(Some),
        }
    }
}
