//! A request's [`Outlet`]: where a query on a blocking thread writes its answer while it
//! still runs. The query hands its items to a [`PushedText`]; while the text fits one chunk
//! nothing is sent, and an answer that ends there is the operation's reply as usual (whole,
//! with a `Content-Length`), as is an error. Once the first chunk is full the reply is sent
//! early, as a [`Reply::Stream`] of that chunk and a bounded channel, and the query goes on
//! writing chunks into the channel (waiting while the client has not taken the last two),
//! holding its place among the running requests until its last chunk.
//!
//! Stopping: before the early reply the request's cancel flag stops the query (set when the
//! client goes away); after it, that flag is set by the request's end, so the query reads
//! the body's instead, set when the body is dropped (sent, or its client gone: a client that
//! stops reading is cut off by `--send-timeout-ms`). A query that fails after the early
//! reply ends the body with the error, which closes the connection before the answer's end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use datalith::edn::Edn;
use datalith::query::{ItemSink, QueryError};
use tokio::sync::{mpsc, oneshot};

use super::stream::PushedText;
use crate::error::Result;
use crate::format::Format;
use crate::ops::{AnswerOut, Chunks, Outlet, Reply};

/// Chunks written ahead of the client: the query waits once this many are in the channel.
const CHUNKS_AHEAD: usize = 2;

/// The outlet of one request run on a blocking thread.
pub struct RequestOutlet {
    format: Format,
    /// The request's cancel flag (`http::cancel`).
    cancel: Arc<AtomicBool>,
    /// Set once the reply went out early.
    sent: AtomicBool,
    /// Set when the early reply's body is dropped.
    body_gone: Arc<AtomicBool>,
    /// Where the reply goes, until it went.
    reply: Mutex<Option<oneshot::Sender<Result<Reply>>>>,
}

impl RequestOutlet {
    /// An outlet answering in `format`, stopped by `cancel` until it sends; and where its
    /// reply comes.
    pub fn new(
        format: Format,
        cancel: Arc<AtomicBool>,
    ) -> (RequestOutlet, oneshot::Receiver<Result<Reply>>) {
        let (tx, rx) = oneshot::channel();
        let outlet = RequestOutlet {
            format,
            cancel,
            sent: AtomicBool::new(false),
            body_gone: Arc::new(AtomicBool::new(false)),
            reply: Mutex::new(Some(tx)),
        };
        (outlet, rx)
    }

    /// Sends the operation's reply, unless one went out early.
    pub fn reply(&self, reply: Result<Reply>) {
        let sender = self.reply.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(sender) = sender {
            // A request whose client is gone no longer waits for it.
            let _ = sender.send(reply);
        }
    }
}

impl Outlet for RequestOutlet {
    fn answer(&self, basis: u64) -> Box<dyn AnswerOut + '_> {
        Box::new(TextAnswer {
            outlet: self,
            text: PushedText::new(self.format, basis),
            sending: None,
        })
    }

    fn gone(&self) -> bool {
        match self.sent.load(Ordering::Relaxed) {
            false => self.cancel.load(Ordering::Relaxed),
            true => self.body_gone.load(Ordering::Relaxed),
        }
    }
}

/// A query's answer written into text, sent once it outgrows its first chunk.
struct TextAnswer<'o> {
    outlet: &'o RequestOutlet,
    text: PushedText,
    /// The channel of the answer sent early.
    sending: Option<mpsc::Sender<Result<(Vec<u8>, bool)>>>,
}

impl TextAnswer<'_> {
    /// Sends `chunk`: the first one as the early reply, the others through its channel.
    fn send(&mut self, chunk: Vec<u8>, last: bool) -> std::result::Result<(), QueryError> {
        match &self.sending {
            Some(channel) => channel
                .blocking_send(Ok((chunk, last)))
                .map_err(|_| QueryError::Cancelled),
            None => {
                let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
                // Before the reply: from now on the request's end sets its cancel flag.
                self.outlet.sent.store(true, Ordering::Relaxed);
                self.outlet.reply(Ok(Reply::Stream(Chunks {
                    first: chunk,
                    rest: rx,
                    gone: self.outlet.body_gone.clone(),
                })));
                self.sending = Some(tx);
                Ok(())
            }
        }
    }
}

impl ItemSink for TextAnswer<'_> {
    fn begin(&mut self, set: bool) -> std::result::Result<(), QueryError> {
        self.text.begin(set);
        Ok(())
    }

    fn item(&mut self, item: &Edn) -> std::result::Result<(), QueryError> {
        self.text.item(item);
        match self.text.take_full() {
            Some(chunk) => self.send(chunk, false),
            None => Ok(()),
        }
    }
}

impl AnswerOut for TextAnswer<'_> {
    fn end(self: Box<Self>, ended: Result<()>) -> Result<Reply> {
        let TextAnswer { text, sending, .. } = *self;
        match (sending, ended) {
            (None, Ok(())) => {
                let format = text.format();
                Ok(Reply::Written(text.finish(), format))
            }
            (None, Err(e)) => Err(e),
            (Some(channel), ended) => {
                let last = ended.map(|()| (text.finish(), true));
                // A client gone takes nothing more.
                let _ = channel.blocking_send(last);
                Ok(Reply::Sent)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ServerError;

    /// Items past the first chunk send the reply early; the rest, and the end, follow
    /// through the channel; together they are the answer the rows make whole.
    #[test]
    fn an_answer_outgrowing_its_first_chunk_is_sent_early_then_in_chunks() {
        let cancel = Arc::new(AtomicBool::new(false));
        let (outlet, reply) = RequestOutlet::new(Format::Edn, cancel.clone());
        let items: Vec<Edn> = (0..40_000).map(Edn::Long).collect();
        let writer = std::thread::spawn({
            let items = items.clone();
            move || {
                let mut out = outlet.answer(7);
                out.begin(false).unwrap();
                for item in &items {
                    out.item(item).unwrap();
                }
                let ended = out.end(Ok(()));
                assert!(matches!(ended, Ok(Reply::Sent)));
                assert!(!outlet.gone(), "the body is still read");
            }
        });
        let Ok(Reply::Stream(chunks)) = reply.blocking_recv().unwrap() else {
            panic!("an early reply")
        };
        let mut text = chunks.first.clone();
        let mut rest = chunks.rest;
        loop {
            let (chunk, last) = rest.blocking_recv().unwrap().unwrap();
            text.extend_from_slice(&chunk);
            if last {
                break;
            }
        }
        writer.join().unwrap();
        let whole = datalith::edn::read_one(std::str::from_utf8(&text).unwrap()).unwrap();
        let expected = datalith::edn::read_one("{:result [], :basis-t 7}").unwrap();
        let (Edn::Map(got), Edn::Map(want)) = (whole, expected) else {
            panic!()
        };
        assert_eq!(got[0].1, Edn::Vector(items));
        assert_eq!(got[1], want[1]);
        // The request's end sets its cancel flag: the query no longer reads it.
        cancel.store(true, Ordering::Relaxed);
    }

    #[test]
    fn a_short_answer_or_an_error_is_the_reply() {
        let cancel = Arc::new(AtomicBool::new(false));
        let (outlet, _reply) = RequestOutlet::new(Format::Json, cancel.clone());
        let mut out = outlet.answer(3);
        out.begin(true).unwrap();
        out.item(&Edn::Long(1)).unwrap();
        let Ok(Reply::Written(text, _)) = out.end(Ok(())) else {
            panic!("the whole answer")
        };
        assert_eq!(text, b"{\":result\":{\"#set\":[1]},\":basis-t\":3}\n");
        let out = outlet.answer(3);
        let e = ServerError::invalid("bad".to_string());
        assert!(out.end(Err(e)).is_err());
        // Before an early reply, the request's cancel flag says whether to stop.
        assert!(!outlet.gone());
        cancel.store(true, Ordering::Relaxed);
        assert!(outlet.gone());
    }
}
