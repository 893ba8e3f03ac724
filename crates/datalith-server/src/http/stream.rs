//! Large answers written as the client takes them. An answer `{:result R, ...}` whose R is a
//! collection of more than [`STREAM_FROM`] items is not written into one string: the body
//! is produced a chunk (about [`CHUNK_BYTES`]) at a time, when hyper asks for the next one,
//! that is when the connection has taken the previous one (HTTP/1.1 chunked transfer, HTTP/2
//! data frames). Each item is dropped once written, so the answer's memory shrinks as it
//! goes out, and its text is never whole in memory. An answer whose text ends within its
//! first chunk is sent whole after all (with a `Content-Length`): streaming it would only add
//! the chunks' framing and a second write.
//!
//! A query whose result is a collection of its rows (`:find ?a ?b`, `:find [?a ...]`, pulls
//! included; not paged, not explained) is not made into EDN before it is sent. Run in place
//! (expected short), its answer is the engine's last relation (`datalith::query::ResultRows`),
//! each row made into its EDN item, pulled, written and freed as its chunk is written
//! ([`Streamed::rows`]). On a blocking thread the query writes its answer as it runs
//! ([`PushedText`], `http::outlet`), and once past its first chunk the answer is sent as it
//! is written ([`Sending`]); the engine then makes the rows of a plan starting with an
//! attribute scan a part at a time, so neither the rows nor their text are whole in memory.
//! Other answers (aggregates, `:order-by`, pages, other operations) are made whole, and their
//! text written a chunk at a time.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Bytes;
use datalith::edn::Edn;
use datalith::query::ResultRows;
use http_body::Frame;

use super::cancel::CancelOnDrop;
use crate::error::ServerError;
use crate::format::{Collection, Format};
use crate::ops::Chunks;

/// Results with more items than this are streamed; smaller ones are written whole (with a
/// `Content-Length`).
pub const STREAM_FROM: usize = 1000;

/// The size a chunk grows to before it is handed over.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// A streamed answer: what comes before the result's items, the items, what comes after.
pub struct Streamed {
    /// A chunk written ahead (by [`Streamed::whole`]) and not yet handed over.
    ready: Option<Vec<u8>>,
    head: Option<Vec<u8>>,
    items: Items,
    /// How many items the head announced (a CBOR array's length).
    announced: usize,
    written: usize,
    tail: Option<Vec<u8>>,
    format: Format,
}

/// A result's items: EDN values, or a query's rows made into EDN as they are written (each
/// row freed once written).
enum Items {
    Values(std::vec::IntoIter<Edn>),
    Rows(ResultRows),
}

impl Items {
    /// Items not written yet: exactly as many as `write_next` will write (a row that
    /// cannot be made ends the answer with its error instead).
    fn len(&self) -> usize {
        match self {
            Items::Values(values) => values.len(),
            Items::Rows(rows) => rows.len(),
        }
    }

    /// Writes the next item into `out` in `format`, after `separator` when it is not the
    /// first; false at the end. Each item is written where it is made (see
    /// `ResultRows::next_with`).
    fn write_next(
        &mut self,
        format: Format,
        separator: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) -> Result<bool, ServerError> {
        let mut write = |item: &Edn| {
            if let Some(separator) = separator {
                out.extend_from_slice(separator);
            }
            // Written into the chunk, not into a string of its own.
            format.write_into(item, out);
        };
        match self {
            Items::Values(values) => Ok(values.next().map(|item| write(&item)).is_some()),
            // CBOR has no separators, and plain rows go out without being made into EDN.
            Items::Rows(rows) if format == Format::Cbor => match rows.write_next_cbor(out) {
                Some(written) => written.map(|()| true).map_err(ServerError::from),
                None => Ok(false),
            },
            Items::Rows(rows) => match rows.next_with(write) {
                Some(written) => written.map(|()| true).map_err(ServerError::from),
                None => Ok(false),
            },
        }
    }
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
            Edn::Set(items) => (Collection::Set, items),
            Edn::Vector(items) => (Collection::Vector, items),
            Edn::List(items) => (Collection::List, items),
            _ => unreachable!("matched above"),
        };
        let (before, after) = pairs.split_at(at);
        Ok(Streamed::around(
            format,
            (before, &key, kind, after),
            Items::Values(items.into_iter()),
        ))
    }

    /// A query's rows as the answer `{:result ROWS, :basis-t BASIS}`, each row made into
    /// EDN as it is written. Streamed whatever their number ([`Streamed::whole`] sends a
    /// short one whole).
    pub fn rows(format: Format, rows: ResultRows, basis: u64) -> Streamed {
        let kind = match rows.is_set() {
            true => Collection::Set,
            false => Collection::Vector,
        };
        let after = [(Edn::kw(":basis-t"), Edn::Long(basis as i64))];
        Streamed::around(
            format,
            (&[], &Edn::kw(":result"), kind, &after),
            Items::Rows(rows),
        )
    }

    /// The answer map `{BEFORE..., KEY ITEMS, AFTER...}` with `items` written in place of
    /// the collection of `kind` under `key`; the entries keep their order.
    fn around(
        format: Format,
        (before, key, kind, after): (&[(Edn, Edn)], &Edn, Collection, &[(Edn, Edn)]),
        items: Items,
    ) -> Streamed {
        // Their number is known before the first is written: a CBOR reader then makes the
        // collection at its size.
        let announced = items.len();
        let (head, tail) = frame(format, (before, key, kind, after), Some(announced));
        Streamed {
            ready: None,
            head: Some(head),
            items,
            announced,
            written: 0,
            tail: Some(tail),
            format,
        }
    }

    /// The answer's whole text when it ends within the first chunk; otherwise `None`, and
    /// that chunk is kept to go out first. An item that cannot be made (a row's pull failed)
    /// within the first chunk is the answer's error.
    pub fn whole(&mut self) -> Result<Option<Vec<u8>>, ServerError> {
        let Some(first) = self.next_chunk()? else {
            return Ok(None);
        };
        if self.head.is_none() && self.tail.is_none() {
            return Ok(Some(first));
        }
        self.ready = Some(first);
        Ok(None)
    }

    /// The next chunk, or `None` at the end.
    fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, ServerError> {
        if let Some(ready) = self.ready.take() {
            return Ok(Some(ready));
        }
        let mut out = self.head.take().unwrap_or_default();
        // Room for the whole chunk at once, rather than growing (and copying) it as it fills.
        out.reserve(CHUNK_BYTES + 1024);
        let separator = self.format.item_separator();
        while out.len() < CHUNK_BYTES {
            let before = (self.written > 0).then_some(separator);
            if self.items.write_next(self.format, before, &mut out)? {
                self.written += 1;
            } else {
                if let Some(tail) = self.tail.take() {
                    // Believed never to happen; a CBOR answer would not read, so it is cut
                    // short instead.
                    if self.written != self.announced {
                        return Err(ServerError::new(
                            crate::error::codes::INTERNAL,
                            format!(
                                "the answer announced {} items and had {}",
                                self.announced, self.written
                            ),
                        ));
                    }
                    out.extend_from_slice(&tail);
                }
                break;
            }
        }
        Ok((!out.is_empty()).then_some(out))
    }
}

impl http_body::Body for Streamed {
    type Data = Bytes;
    type Error = ServerError;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ServerError>>> {
        // Writing a chunk takes about a millisecond: done here, on the connection's task,
        // rather than on a thread that a client reading slowly would hold. An item that
        // cannot be made after the status went out ends the body with the error: the
        // connection is closed before the answer's end, so the client cannot take what it
        // got for the whole answer.
        let this = self.get_mut();
        match this.next_chunk() {
            Ok(chunk) => Poll::Ready(chunk.map(|c| Ok(Frame::data(Bytes::from(c))))),
            Err(e) => {
                this.head = None;
                this.tail = None;
                cut_short(e)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ready.is_none() && self.head.is_none() && self.tail.is_none()
    }
}

/// A body's end after its status went out: the error, logged, which closes the connection
/// before the answer's end (so the client cannot take what it got for the whole answer).
fn cut_short(e: ServerError) -> Poll<Option<Result<Frame<Bytes>, ServerError>>> {
    crate::run::log(&format!("answer cut short: {}: {}", e.category, e.message));
    Poll::Ready(Some(Err(e)))
}

/// The bytes before and after the items of the answer map `{BEFORE..., KEY ITEMS,
/// AFTER...}` whose items under `key` are a collection of `kind`; the entries keep their
/// order.
fn frame(
    format: Format,
    (before, key, kind, after): (&[(Edn, Edn)], &Edn, Collection, &[(Edn, Edn)]),
    len: Option<usize>,
) -> (Vec<u8>, Vec<u8>) {
    let separator = format.entry_separator();
    let mut head = Vec::new();
    format.map_open(before.len() + 1 + after.len(), &mut head);
    for (k, v) in before {
        format.entry_key(k, &mut head);
        format.write_into(v, &mut head);
        head.extend_from_slice(separator);
    }
    format.entry_key(key, &mut head);
    format.collection_open(kind, len, &mut head);
    let mut tail = Vec::new();
    format.collection_close(kind, len, &mut tail);
    for (k, v) in after {
        tail.extend_from_slice(separator);
        format.entry_key(k, &mut tail);
        format.write_into(v, &mut tail);
    }
    // A text answer ends its line, as whole answers do.
    format.map_close(&mut tail);
    (head, tail)
}

/// A query's answer `{:result ITEMS, :basis-t BASIS}` written as the query hands it its
/// items (`http::outlet`), taken a chunk (about [`CHUNK_BYTES`]) at a time: the text
/// [`Streamed::rows`] writes for the same items.
pub struct PushedText {
    format: Format,
    basis: u64,
    out: Vec<u8>,
    tail: Vec<u8>,
    written: usize,
}

impl PushedText {
    /// An answer of the value `basis`, in `format`.
    pub fn new(format: Format, basis: u64) -> PushedText {
        PushedText {
            format,
            basis,
            out: Vec::new(),
            tail: Vec::new(),
            written: 0,
        }
    }

    /// Starts the answer: its items are a set, or a vector.
    pub fn begin(&mut self, set: bool) {
        let kind = match set {
            true => Collection::Set,
            false => Collection::Vector,
        };
        let after = [(Edn::kw(":basis-t"), Edn::Long(self.basis as i64))];
        let (head, tail) = frame(self.format, (&[], &Edn::kw(":result"), kind, &after), None);
        self.out = head;
        self.out.reserve(CHUNK_BYTES + 1024);
        self.tail = tail;
    }

    /// Writes the next item.
    pub fn item(&mut self, item: &Edn) {
        if self.written > 0 {
            self.out.extend_from_slice(self.format.item_separator());
        }
        self.format.write_into(item, &mut self.out);
        self.written += 1;
    }

    /// The text written so far, once it fills a chunk.
    pub fn take_full(&mut self) -> Option<Vec<u8>> {
        (self.out.len() >= CHUNK_BYTES)
            .then(|| std::mem::replace(&mut self.out, Vec::with_capacity(CHUNK_BYTES + 1024)))
    }

    /// The rest of the answer, its end included.
    /// The format it writes.
    pub fn format(&self) -> Format {
        self.format
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.out.extend_from_slice(&self.tail);
        self.out
    }
}

/// An answer sent as the query writes it ([`Chunks`]): the first chunk, then each chunk
/// the query sends, until the one marked last. An error, or a query that ended without its
/// last chunk, ends the body with an error: the connection is closed before the answer's
/// end, so the client cannot take what it got for the whole answer. Dropped (sent, or its
/// client gone), it tells the query to stop.
pub struct Sending {
    first: Option<Vec<u8>>,
    rest: tokio::sync::mpsc::Receiver<crate::error::Result<(Vec<u8>, bool)>>,
    /// Sets the query's flag when the body is dropped (sent, or its client gone).
    _gone: CancelOnDrop,
    ended: bool,
}

impl Sending {
    /// The body of `chunks`.
    pub fn new(chunks: Chunks) -> Sending {
        Sending {
            first: Some(chunks.first),
            rest: chunks.rest,
            _gone: CancelOnDrop::on(chunks.gone),
            ended: false,
        }
    }
}

impl http_body::Body for Sending {
    type Data = Bytes;
    type Error = ServerError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ServerError>>> {
        let this = self.get_mut();
        if let Some(first) = this.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(first)))));
        }
        if this.ended {
            return Poll::Ready(None);
        }
        let failed = match this.rest.poll_recv(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Some(Ok((chunk, last)))) => {
                this.ended = last;
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk)))));
            }
            Poll::Ready(Some(Err(e))) => e,
            Poll::Ready(None) => ServerError::new(
                crate::error::codes::INTERNAL,
                "the query writing the answer ended before its last chunk".to_string(),
            ),
        };
        this.ended = true;
        cut_short(failed)
    }

    fn is_end_stream(&self) -> bool {
        self.first.is_none() && self.ended
    }
}

/// The kinds of collection a result is.
#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// A CBOR answer announces its number of items (a definite-length array, which a
    /// reader makes at its size), whole or streamed.
    #[test]
    fn a_cbor_answer_announces_its_items() {
        for n in [STREAM_FROM * 2, STREAM_FROM * 300] {
            let answer = Edn::Map(vec![(
                Edn::kw(":result"),
                Edn::Vector((0..n as i64).map(Edn::Long).collect()),
            )]);
            let mut streamed = Streamed::of(Format::Cbor, answer).ok().unwrap();
            let first = match streamed.whole().unwrap() {
                Some(whole) => whole,
                None => streamed.next_chunk().unwrap().unwrap(),
            };
            // {:result [...]}: map(1), tag 39 "result", then the array's head.
            let head = &first[..16];
            let n = u32::try_from(n).unwrap();
            let expected: Vec<u8> = match u16::try_from(n) {
                Ok(n) => [&[0x99][..], &n.to_be_bytes()].concat(),
                Err(_) => [&[0x9a][..], &n.to_be_bytes()].concat(),
            };
            assert!(
                head.windows(expected.len()).any(|w| w == expected),
                "{n} items: {head:02x?}"
            );
        }
    }

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
            for format in [Format::Edn, Format::Json, Format::Cbor] {
                let mut streamed = Streamed::of(format, answer.clone()).ok().unwrap();
                assert!(
                    streamed.whole().unwrap().is_none(),
                    "{format:?}: sent whole"
                );
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
                let whole = format.read(&format.write(&answer)).unwrap();
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
        for format in [Format::Edn, Format::Json, Format::Cbor] {
            let mut streamed = Streamed::of(format, answer.clone()).ok().unwrap();
            let text = streamed
                .whole()
                .unwrap()
                .expect("one chunk's worth is sent whole");
            assert!(text.len() < CHUNK_BYTES, "{format:?}");
            assert!(
                text.ends_with(format.answer_end()),
                "{format:?}: its line's end"
            );
            let back = format.read(&text).unwrap();
            assert!(back == format.read(&format.write(&answer)).unwrap());
        }
    }

    /// A query's rows, streamed, read back as its whole answer, in both formats; a few rows
    /// go whole.
    #[test]
    fn a_querys_rows_read_as_its_whole_answer() {
        use datalith::query::{Answer, QueryOptions};
        let dir = tempfile::tempdir().unwrap();
        let db = datalith::Database::open(dir.path(), datalith::DbOptions::default()).unwrap();
        db.transact(
            "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
              {:db/ident :s :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
        )
        .unwrap();
        let maps: Vec<String> = (0..5000)
            .map(|i| format!("{{:n {i} :s \"text {i}\"}}"))
            .collect();
        db.transact(format!("[{}]", maps.join(" ")).as_str())
            .unwrap();
        let value = db.db().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for (query, streams) in [
            ("[:find ?n ?s :where [?e :n ?n] [?e :s ?s]]", true),
            ("[:find [(pull ?e [:n :s]) ...] :where [?e :n]]", true),
            ("[:find ?n :where [?e :n ?n] [(< ?n 3)]]", false),
        ] {
            let whole = Edn::Map(vec![
                (Edn::kw(":result"), value.q(query, &[]).unwrap()),
                (Edn::kw(":basis-t"), Edn::Long(42)),
            ]);
            for format in [Format::Edn, Format::Json, Format::Cbor] {
                let Answer::Rows(rows) =
                    value.q_rows(query, &[], &QueryOptions::default()).unwrap()
                else {
                    panic!("{query}: rows");
                };
                let mut streamed = Streamed::rows(format, rows, 42);
                let text = match streamed.whole().unwrap() {
                    Some(text) => {
                        assert!(!streams, "{query}: sent whole");
                        text
                    }
                    None => {
                        assert!(streams, "{query}: streamed");
                        runtime.block_on(async {
                            let mut body = axum::body::Body::new(streamed);
                            let mut all = Vec::new();
                            while let Some(frame) = body.frame().await {
                                all.extend_from_slice(&frame.unwrap().into_data().unwrap());
                            }
                            all
                        })
                    }
                };
                let back = format.read(&text).unwrap();
                let expected = format.read(&format.write(&whole)).unwrap();
                assert!(back == expected, "{query} {format:?}: the rows differ");
            }
        }
    }
}
