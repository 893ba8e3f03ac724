//! The three body formats: reading a request body and writing a response in EDN, JSON or
//! CBOR, and choosing between them from the request's headers ([`negotiate`]).

pub mod negotiate;

use datalith::edn::{cbor, read_one, Edn};

use crate::error::{codes, Result, ServerError};
use crate::json;

/// A body format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/edn`: the default.
    Edn,
    /// `application/json`, with EDN's types as tagged objects (see [`crate::json`]).
    Json,
    /// `application/cbor`: EDN's values as CBOR, every type kept (`datalith::edn::cbor`).
    Cbor,
}

/// The kinds of collection an answer's streamed result may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collection {
    /// `#{...}`.
    Set,
    /// `[...]`.
    Vector,
    /// `(...)`.
    List,
}

impl Format {
    /// The media type a response in this format carries.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Edn => "application/edn",
            Format::Json => "application/json",
            Format::Cbor => "application/cbor",
        }
    }

    /// `value` written in this format at the end of `out` (an answer written piece by
    /// piece, into one buffer).
    pub fn write_into(self, value: &Edn, out: &mut Vec<u8>) {
        match self {
            Format::Edn => datalith::edn::write_edn(value, out),
            Format::Json => json::write_json(value, out),
            Format::Cbor => cbor::write_cbor(value, out),
        }
    }

    /// The start of a map of `entries` entries (its keys and values written after it).
    pub fn map_open(self, entries: usize, out: &mut Vec<u8>) {
        match self {
            Format::Edn | Format::Json => out.push(b'{'),
            Format::Cbor => cbor::CborWriter(out).map_head(entries),
        }
    }

    /// The end of a map, and of a whole text answer: its line end, so that `curl` leaves
    /// the prompt on the next line.
    pub fn map_close(self, out: &mut Vec<u8>) {
        match self {
            Format::Edn | Format::Json => out.extend_from_slice(b"}\n"),
            Format::Cbor => {}
        }
    }

    /// What ends a whole answer (a text answer's line end).
    pub fn answer_end(self) -> &'static [u8] {
        match self {
            Format::Edn | Format::Json => b"\n",
            Format::Cbor => b"",
        }
    }

    /// A map entry's key and what separates it from its value, at the end of `out`: `:k `
    /// in EDN, `":k":` in JSON (an answer's keys are keywords, which a JSON object holds as
    /// their text), the keyword itself in CBOR.
    pub fn entry_key(self, key: &Edn, out: &mut Vec<u8>) {
        match self {
            Format::Edn => {
                datalith::edn::write_edn(key, out);
                out.push(b' ');
            }
            Format::Json => {
                json::write_json(&Edn::String(key.to_string()), out);
                out.push(b':');
            }
            Format::Cbor => cbor::write_cbor(key, out),
        }
    }

    /// What separates a map's entries.
    pub fn entry_separator(self) -> &'static [u8] {
        match self {
            Format::Edn => b", ",
            Format::Json => b",",
            Format::Cbor => b"",
        }
    }

    /// What separates a collection's items.
    pub fn item_separator(self) -> &'static [u8] {
        match self {
            Format::Edn => b" ",
            Format::Json => b",",
            Format::Cbor => b"",
        }
    }

    /// The start of a collection whose items are written one by one after it: `len` of
    /// them when their number is known before (in CBOR a definite-length array, which a
    /// reader makes at its size instead of growing it), else `None`. Ended by
    /// [`Self::collection_close`] with the same `len`.
    pub fn collection_open(self, kind: Collection, len: Option<usize>, out: &mut Vec<u8>) {
        let text: &[u8] = match (self, kind) {
            (Format::Edn, Collection::Set) => b"#{",
            (Format::Edn, Collection::Vector) => b"[",
            (Format::Edn, Collection::List) => b"(",
            (Format::Json, Collection::Set) => br##"{"#set":["##,
            (Format::Json, Collection::Vector) => b"[",
            (Format::Json, Collection::List) => br##"{"#list":["##,
            (Format::Cbor, _) => {
                let mut w = cbor::CborWriter(out);
                match kind {
                    Collection::Set => w.tag(cbor::SET),
                    Collection::List => w.tag(cbor::LIST),
                    Collection::Vector => {}
                }
                match len {
                    Some(len) => w.array_head(len),
                    None => w.begin_array(),
                }
                return;
            }
        };
        out.extend_from_slice(text);
    }

    /// The end of a collection begun with [`Self::collection_open`] with this `len`.
    pub fn collection_close(self, kind: Collection, len: Option<usize>, out: &mut Vec<u8>) {
        let text: &[u8] = match (self, kind) {
            (Format::Edn, Collection::Set) => b"}",
            (Format::Edn, Collection::Vector) => b"]",
            (Format::Edn, Collection::List) => b")",
            (Format::Json, Collection::Set | Collection::List) => b"]}",
            (Format::Json, Collection::Vector) => b"]",
            (Format::Cbor, _) => {
                if len.is_none() {
                    cbor::CborWriter(out).end();
                }
                return;
            }
        };
        out.extend_from_slice(text);
    }

    /// `value` written in this format.
    pub fn write(self, value: &Edn) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_into(value, &mut out);
        out
    }

    /// A request body in this format: one EDN form, or one JSON value. An empty body is
    /// `None` (the operation decides whether it needs one).
    pub fn read(self, body: &[u8]) -> Result<Option<Edn>> {
        let empty = match self {
            Format::Cbor => body.is_empty(),
            Format::Edn | Format::Json => body.iter().all(u8::is_ascii_whitespace),
        };
        if empty {
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
            Format::Cbor => cbor::read_cbor(body).map(Some).map_err(|e| {
                ServerError::new(codes::INVALID_CBOR, format!("body: {e}"))
                    .with("at", Edn::Long(e.at as i64))
            }),
        }
    }
}
