//! A request's head and body sent in one write.
//!
//! ureq writes a request's head, then its body, each with a `write` of its own, and its
//! sockets set `TCP_NODELAY`, so the two leave as two segments. The server's reader wakes on
//! the head, finds no body yet, goes back to waiting and is woken again when the body lands:
//! one more thread wake-up on every request with a body, the most expensive step on a
//! loopback round trip (a transaction of W's batch 100 over loopback, `strace` of the server:
//! `recvfrom` of the 172-byte head, `epoll_wait`, `recvfrom` of the 5,116-byte body).
//!
//! [`Coalesce`] wraps the transport ureq made (plain TCP or TLS): what ureq hands it to send is
//! held until ureq first waits for input (the answer, or a `100 Continue`), then goes out at
//! once. Nothing is held past a wait, so no request waits on its own unsent bytes, and a body
//! larger than [`HOLD_LIMIT`] is sent as it comes, in writes of at least that size.
//!
//! It also hands the inner transport its timeouts in whole seconds, rounded up
//! ([`settled`]). ureq gives each phase a deadline and passes what is left of it, a value a few
//! microseconds shorter at every call, so its TCP transport set the socket's timeout again
//! (`setsockopt`) before every send and every receive; rounded, the value repeats and the
//! transport keeps the one it set. A phase bound of minutes may so end up to a second late.
//!
//! ureq's two liveness probes of a pooled connection (as it returns to the pool, and as the
//! next request takes it; three system calls each) are left alone: answering the second from
//! the first would widen the moment in which a connection the server just closed (to make
//! room past `--max-connections`) carries a write, which then fails instead of going out on
//! a new connection.

use std::fmt;

use ureq::unversioned::transport::time::Duration;
use ureq::unversioned::transport::{Buffers, ConnectionDetails, Connector, NextTimeout, Transport};
use ureq::Error;

/// Held bytes beyond which a transport sends at once (a large body streams in pieces of this
/// size rather than waiting whole in memory).
const HOLD_LIMIT: usize = 256 * 1024;

/// The connector that wraps each transport of the chain before it in a [`Coalesced`].
#[derive(Debug, Default)]
pub(crate) struct Coalesce;

impl Connector<Box<dyn Transport>> for Coalesce {
    type Out = Coalesced;

    fn connect(
        &self,
        _details: &ConnectionDetails,
        chained: Option<Box<dyn Transport>>,
    ) -> Result<Option<Coalesced>, Error> {
        Ok(chained.map(|inner| Coalesced {
            inner,
            held: Vec::new(),
        }))
    }
}

/// A transport whose writes wait, copied aside, until the first wait for input.
pub(crate) struct Coalesced {
    inner: Box<dyn Transport>,
    held: Vec<u8>,
}

impl fmt::Debug for Coalesced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Coalesced")
            .field("inner", &self.inner)
            .field("held", &self.held.len())
            .finish()
    }
}

impl Coalesced {
    /// Sends what is held, through the inner transport's output buffer.
    fn send_held(&mut self, timeout: NextTimeout) -> Result<(), Error> {
        let mut sent = 0;
        while sent < self.held.len() {
            let out = self.inner.buffers().output();
            let n = out.len().min(self.held.len() - sent);
            // An output buffer of no room would never send (ureq's is 128 KiB by default).
            assert!(n > 0, "the transport's output buffer has room");
            out[..n].copy_from_slice(&self.held[sent..sent + n]);
            self.inner.transmit_output(n, timeout)?;
            sent += n;
        }
        self.held.clear();
        Ok(())
    }
}

/// `timeout` with each bound of a second or more rounded up to whole seconds (see the module
/// documentation); shorter ones, near a deadline, stay exact.
fn settled(timeout: NextTimeout) -> NextTimeout {
    let round = |d: Duration| match d {
        Duration::Exact(t) if t >= std::time::Duration::from_secs(1) => {
            let whole = t.as_secs() + u64::from(t.subsec_nanos() > 0);
            Duration::Exact(std::time::Duration::from_secs(whole))
        }
        other => other,
    };
    NextTimeout {
        after: round(timeout.after),
        per_read: timeout.per_read.map(round),
        per_write: timeout.per_write.map(round),
        ..timeout
    }
}

impl Transport for Coalesced {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        let out = self.inner.buffers().output();
        self.held.extend_from_slice(&out[..amount]);
        if self.held.len() >= HOLD_LIMIT {
            self.send_held(settled(timeout))?;
        }
        Ok(())
    }

    fn maybe_await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        let timeout = settled(timeout);
        self.send_held(timeout)?;
        self.inner.maybe_await_input(timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        let timeout = settled(timeout);
        self.send_held(timeout)?;
        self.inner.await_input(timeout)
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use ureq::unversioned::transport::LazyBuffers;
    use ureq::Timeout;

    use super::*;

    /// A transport that records each write it is asked to make, and has no input.
    #[derive(Debug)]
    struct Recording {
        buffers: LazyBuffers,
        writes: Arc<Mutex<Vec<Vec<u8>>>>,
    }

    impl Transport for Recording {
        fn buffers(&mut self) -> &mut dyn Buffers {
            &mut self.buffers
        }
        fn transmit_output(&mut self, amount: usize, _timeout: NextTimeout) -> Result<(), Error> {
            let bytes = self.buffers.output()[..amount].to_vec();
            self.writes.lock().unwrap().push(bytes);
            Ok(())
        }
        fn await_input(&mut self, _timeout: NextTimeout) -> Result<bool, Error> {
            Ok(false)
        }
        fn is_open(&mut self) -> bool {
            true
        }
    }

    const NEVER: NextTimeout = NextTimeout {
        after: Duration::NotHappening,
        reason: Timeout::Global,
        per_read: None,
        per_write: None,
    };

    /// `sends` ureq's writes through a `Coalesced`, each followed by a wait for input when
    /// marked; returns the writes that reached the inner transport.
    fn writes_of(sends: &[(&[u8], bool)], output_bytes: usize) -> Vec<Vec<u8>> {
        let writes = Arc::new(Mutex::new(Vec::new()));
        let inner = Recording {
            buffers: LazyBuffers::new(1024, output_bytes),
            writes: writes.clone(),
        };
        let mut t = Coalesced {
            inner: Box::new(inner),
            held: Vec::new(),
        };
        for (bytes, then_wait) in sends {
            for piece in bytes.chunks(output_bytes) {
                t.buffers().output()[..piece.len()].copy_from_slice(piece);
                t.transmit_output(piece.len(), NEVER).unwrap();
            }
            if *then_wait {
                t.await_input(NEVER).unwrap();
            }
        }
        let got = writes.lock().unwrap().clone();
        got
    }

    #[test]
    fn writes_before_a_wait_go_out_together_and_nothing_waits_past_it() {
        let big = vec![7u8; HOLD_LIMIT + 10];
        let cases: Vec<(&str, Vec<(&[u8], bool)>, usize, Vec<Vec<u8>>)> = vec![
            (
                "head and body, then the answer's wait: one write",
                vec![(b"HEAD", false), (b"BODY", true)],
                4096,
                vec![b"HEADBODY".to_vec()],
            ),
            (
                "two requests: one write each",
                vec![(b"A1", false), (b"A2", true), (b"B1", true)],
                4096,
                vec![b"A1A2".to_vec(), b"B1".to_vec()],
            ),
            (
                "no writes, a wait: nothing sent",
                vec![(b"", true)],
                4096,
                vec![],
            ),
            (
                "held bytes larger than the output buffer: sent in its pieces, in order",
                vec![(b"0123456789", true)],
                4,
                vec![b"0123".to_vec(), b"4567".to_vec(), b"89".to_vec()],
            ),
        ];
        for (name, sends, output_bytes, want) in cases {
            assert_eq!(writes_of(&sends, output_bytes), want, "{name}");
        }
        // A body past the hold limit goes out before any wait, whole and in order.
        let sent: Vec<u8> = writes_of(&[(&big, false)], 64 * 1024).concat();
        assert_eq!(sent.len(), HOLD_LIMIT, "sent at the limit, not before");
        let sent: Vec<u8> = writes_of(&[(&big, true)], 64 * 1024).concat();
        assert_eq!(sent, big);
    }

    #[test]
    fn timeouts_of_a_second_or_more_are_whole_seconds() {
        let exact = |ms: u64| Duration::Exact(std::time::Duration::from_millis(ms));
        let cases = [
            (exact(299_999), exact(300_000)),
            (exact(300_000), exact(300_000)),
            (exact(1_001), exact(2_000)),
            (exact(1_000), exact(1_000)),
            (exact(999), exact(999)),
            (exact(0), exact(0)),
            (Duration::NotHappening, Duration::NotHappening),
        ];
        for (given, want) in cases {
            let t = NextTimeout {
                after: given,
                per_read: Some(given),
                ..NEVER
            };
            let got = settled(t);
            assert_eq!(
                (got.after, got.per_read, got.per_write),
                (want, Some(want), None)
            );
        }
    }
}
