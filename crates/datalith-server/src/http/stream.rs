//! Large answers written as the client takes them. An answer `{:result R, ...}` whose R is a
//! collection of more than [`STREAM_FROM`] items is not written into one string: the body
//! is produced a chunk (about [`CHUNK_BYTES`]) at a time, when hyper asks for the next one,
//! that is when the connection has taken the previous one (HTTP/1.1 chunked transfer, HTTP/2
//! data frames). Each item is dropped once written, so the answer's memory shrinks as it
//! goes out, and its text is never whole in memory. An answer whose text ends within its
//! first chunk is sent whole after all (with a `Content-Length`): streaming it would only add
//! the chunks' framing and a second write.
//!
//! What stays proportional to the result is the result itself: the query engine builds it
//! whole (its rows, then their EDN values) before the first byte is sent, within the query's
//! memory limit. Streaming saves the serialized text (as large again, or larger) and its
//! copies, and lets the client start reading before the server has written the end.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Bytes;
use datalith::edn::{to_edn_string, write_edn, Edn};
use http_body::Frame;

use crate::format::Format;
use crate::json;

/// Results with more items than this are streamed; smaller ones are written whole (with a
/// `Content-Length`).
pub const STREAM_FROM: usize = 1000;

/// The size a chunk grows to before it is handed over.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// A streamed answer: what comes before the result's items, the items, what comes after.
pub struct Streamed {
    /// A chunk written ahead (by [`Streamed::whole`]) and not yet handed over.
    ready: Option<String>,
    head: Option<String>,
    items: std::vec::IntoIter<Edn>,
    written: usize,
    tail: Option<String>,
    format: Format,
}

impl Streamed {
    /// The answer as a stream, when it is a map whose `:result` is a collection of more than
    /// [`STREAM_FROM`] items; otherwise the answer back.
    pub fn of(format: Format, answer: Edn) -> Result<Streamed, Edn> {
        let Edn::Map(mut pairs) = answer else {
            return Err(answer);
        };
        let at = pairs.iter().position(|(k, v)| {
            *k == Edn::kw(":result")
                && matches!(v, Edn::Set(i) | Edn::Vector(i) | Edn::List(i) if i.len() > STREAM_FROM)
        });
        let Some(at) = at else {
            return Err(Edn::Map(pairs));
        };
        let (key, result) = pairs.remove(at);
        let (kind, items) = match result {
            Edn::Set(items) => (Kind::Set, items),
            Edn::Vector(items) => (Kind::Vector, items),
            Edn::List(items) => (Kind::List, items),
            _ => unreachable!("matched above"),
        };
        let (open, close) = kind.brackets(format);
        let separator = match format {
            Format::Edn => ", ",
            Format::Json => ",",
        };
        // The entries keep their order: those before `:result`, it, those after.
        let mut head = String::from("{");
        for (k, v) in &pairs[..at] {
            entry_key(format, k, &mut head);
            head.push_str(&format.write(v));
            head.push_str(separator);
        }
        entry_key(format, &key, &mut head);
        head.push_str(open);
        let mut tail = String::from(close);
        for (k, v) in &pairs[at..] {
            tail.push_str(separator);
            entry_key(format, k, &mut tail);
            tail.push_str(&format.write(v));
        }
        // A line of its own, as whole answers end.
        tail.push_str("}\n");
        Ok(Streamed {
            ready: None,
            head: Some(head),
            items: items.into_iter(),
            written: 0,
            tail: Some(tail),
            format,
        })
    }

    /// The answer's whole text when it ends within the first chunk; otherwise `None`, and
    /// that chunk is kept to go out first.
    pub fn whole(&mut self) -> Option<String> {
        let first = self.next_chunk()?;
        if self.head.is_none() && self.tail.is_none() {
            return Some(first);
        }
        self.ready = Some(first);
        None
    }

    /// The next chunk, or `None` at the end.
    fn next_chunk(&mut self) -> Option<String> {
        if let Some(ready) = self.ready.take() {
            return Some(ready);
        }
        let mut out = self.head.take().unwrap_or_default();
        // Room for the whole chunk at once, rather than growing (and copying) it as it fills.
        out.reserve(CHUNK_BYTES + 1024);
        while out.len() < CHUNK_BYTES {
            match self.items.next() {
                Some(item) => {
                    if self.written > 0 {
                        out.push_str(match self.format {
                            Format::Edn => " ",
                            Format::Json => ",",
                        });
                    }
                    // Written into the chunk, not into a string of its own.
                    match self.format {
                        Format::Edn => write_edn(&item, &mut out),
                        Format::Json => json::write_json(&item, &mut out),
                    }
                    self.written += 1;
                }
                None => {
                    if let Some(tail) = self.tail.take() {
                        out.push_str(&tail);
                    }
                    break;
                }
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

impl http_body::Body for Streamed {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        // Writing a chunk takes about a millisecond: done here, on the connection's task,
        // rather than on a thread that a client reading slowly would hold.
        let chunk = self.get_mut().next_chunk();
        Poll::Ready(chunk.map(|c| Ok(Frame::data(Bytes::from(c)))))
    }

    fn is_end_stream(&self) -> bool {
        self.ready.is_none() && self.head.is_none() && self.tail.is_none()
    }
}

/// The kinds of collection a result is.
#[derive(Clone, Copy)]
enum Kind {
    Set,
    Vector,
    List,
}

impl Kind {
    /// What opens and closes the collection in `format`.
    fn brackets(self, format: Format) -> (&'static str, &'static str) {
        match (format, self) {
            (Format::Edn, Kind::Set) => ("#{", "}"),
            (Format::Edn, Kind::Vector) => ("[", "]"),
            (Format::Edn, Kind::List) => ("(", ")"),
            (Format::Json, Kind::Set) => (r##"{"#set":["##, "]}"),
            (Format::Json, Kind::Vector) => ("[", "]"),
            (Format::Json, Kind::List) => (r##"{"#list":["##, "]}"),
        }
    }
}

/// A map entry's key and what separates it from its value: `:k ` in EDN, `":k":` in JSON
/// (an answer's keys are keywords, which a JSON object holds as their text).
fn entry_key(format: Format, key: &Edn, out: &mut String) {
    match format {
        Format::Edn => {
            out.push_str(&to_edn_string(key));
            out.push(' ');
        }
        Format::Json => {
            out.push_str(&json::to_json_string(&Edn::String(key.to_string())));
            out.push(':');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// The answers, streamed and written whole, read back the same.
    #[test]
    fn a_streamed_answer_reads_as_the_whole_one() {
        let rows = |n: i64| -> Vec<Edn> {
            (0..n)
                .map(|i| Edn::Vector(vec![Edn::Long(i), Edn::String(format!("row {i}"))]))
                .collect()
        };
        let many = STREAM_FROM as i64 * 30;
        let answers = [
            Edn::Map(vec![
                (Edn::kw(":result"), Edn::Set(rows(many))),
                (Edn::kw(":basis-t"), Edn::Long(42)),
                (Edn::kw(":next-offset"), Edn::Long(7)),
            ]),
            Edn::Map(vec![
                (Edn::kw(":basis-t"), Edn::Long(42)),
                (Edn::kw(":result"), Edn::Vector(rows(many))),
            ]),
            Edn::Map(vec![(Edn::kw(":result"), Edn::List(rows(many)))]),
        ];
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for answer in answers {
            for format in [Format::Edn, Format::Json] {
                let mut streamed = Streamed::of(format, answer.clone()).ok().unwrap();
                assert!(streamed.whole().is_none(), "{format:?}: sent whole");
                let collected = runtime.block_on(async {
                    let body = axum::body::Body::new(streamed);
                    let mut chunks = 0;
                    let mut all = Vec::new();
                    let mut body = body;
                    while let Some(frame) = body.frame().await {
                        let data = frame.unwrap().into_data().unwrap();
                        assert!(data.len() < 2 * CHUNK_BYTES);
                        all.extend_from_slice(&data);
                        chunks += 1;
                    }
                    assert!(chunks > 5, "{chunks} chunks");
                    all
                });
                // Read back as the whole answer reads back (JSON objects come back in their
                // reader's key order).
                let back = format.read(&collected).unwrap().unwrap();
                let whole = format.read(format.write(&answer).as_bytes()).unwrap();
                assert!(
                    Some(back) == whole,
                    "{format:?}: the streamed answer differs"
                );
            }
        }
        // Small results and other answers are written whole.
        let small = Edn::Map(vec![(Edn::kw(":result"), Edn::Set(rows(3)))]);
        assert!(Streamed::of(Format::Edn, small).is_err());
        assert!(Streamed::of(Format::Edn, Edn::Long(1)).is_err());
        // More items than STREAM_FROM whose text fits in one chunk: whole, as it reads.
        let short = (0..STREAM_FROM as i64 * 2)
            .map(Edn::Long)
            .collect::<Vec<_>>();
        let answer = Edn::Map(vec![
            (Edn::kw(":result"), Edn::Vector(short)),
            (Edn::kw(":basis-t"), Edn::Long(42)),
        ]);
        for format in [Format::Edn, Format::Json] {
            let mut streamed = Streamed::of(format, answer.clone()).ok().unwrap();
            let text = streamed.whole().expect("one chunk's worth is sent whole");
            assert!(text.len() < CHUNK_BYTES && text.ends_with("}\n"), "{text}");
            let back = format.read(text.as_bytes()).unwrap();
            assert!(back == format.read(format.write(&answer).as_bytes()).unwrap());
        }
    }
}
