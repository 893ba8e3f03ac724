//! The least any server could add to a durable transaction, for `write --remote`'s `dl-bare`:
//! a process of this binary (`__bare-serve DIR`) that holds the database open, reads each
//! request as a frame on one loopback TCP connection (`TCP_NODELAY`), runs the embedded call
//! and answers with a frame of a few bytes. No HTTP, no body format, no report: what is left
//! between `dl-bare` and `dl-sync` is the second process, the round trip and the CPUs' waits
//! for each other, which no protocol removes; what lies between `dl-remote` and `dl-bare`
//! is what the real server and client do on top (HTTP, CBOR, the report, the runtime).
//!
//! A frame: one byte (a request's kind, an answer's status), a length (`u32`, little-endian),
//! that many bytes. Requests: [`TRANSACT`] (EDN text, as `dl-remote` sends it; answered with
//! the basis t after and the number of datoms, two `u64`), [`READ`] (a key, `i64`; answered
//! with `:v`'s text, or [`NONE`]), [`COUNT`] (answered with the number of `:k` datoms, `u64`).
//! An error answers [`FAILED`] with its message.

use std::io::{BufReader, BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitCode};

use datalith::edn::Edn;
use datalith::{Database, DbOptions};

use super::BenchError;

pub const TRANSACT: u8 = 1;
pub const READ: u8 = 2;
pub const COUNT: u8 = 3;

pub const OK: u8 = 0;
pub const NONE: u8 = 1;
pub const FAILED: u8 = 2;

/// The largest frame either side accepts (a batch of 1,000 records is ~57 KB of text).
const MAX_FRAME: usize = 64 << 20;

/// What the server is called in errors.
const WHAT: &str = "bare server";

const READ_QUERY: &str = "[:find ?v . :in $ ?k :where [?e :k ?k] [?e :v ?v]]";
const COUNT_QUERY: &str = "[:find (count ?e) . :where [?e :k]]";

/// Writes one frame in one call (so that it leaves as one segment).
fn send(out: &mut impl Write, tag: u8, body: &[u8]) -> std::io::Result<()> {
    let mut frame = Vec::with_capacity(5 + body.len());
    frame.push(tag);
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(body);
    out.write_all(&frame)?;
    out.flush()
}

/// Reads one frame into `body`; `None` at a clean end of the stream.
fn receive(input: &mut impl Read, body: &mut Vec<u8>) -> std::io::Result<Option<u8>> {
    let mut head = [0u8; 5];
    match input.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a frame of {len} bytes (at most {MAX_FRAME})"),
        ));
    }
    body.resize(len, 0);
    input.read_exact(body)?;
    Ok(Some(head[0]))
}

/// `__bare-serve DIR`: opens the database as `dl-sync` does, prints `listening on PORT`, serves
/// one connection, and ends when it closes.
pub fn serve(dir: &Path) -> Result<ExitCode, BenchError> {
    let io = |op: &'static str| BenchError::store(WHAT, op);
    let mut options = DbOptions::default();
    options.env.initial_map_bytes = crate::write::stores::DATALITH_MAP_BYTES;
    let db = Database::open(dir, options).map_err(BenchError::store(WHAT, "open"))?;
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io("bind"))?;
    let port = listener.local_addr().map_err(io("bind"))?.port();
    println!("listening on {port}");
    std::io::stdout().flush().map_err(io("print"))?;
    let (stream, _) = listener.accept().map_err(io("accept"))?;
    stream.set_nodelay(true).map_err(io("accept"))?;
    let mut input = BufReader::new(stream.try_clone().map_err(io("accept"))?);
    let mut output = BufWriter::new(stream);
    let mut body = Vec::new();
    while let Some(kind) = receive(&mut input, &mut body).map_err(io("read"))? {
        let (status, answer) = answer(&db, kind, &body);
        send(&mut output, status, &answer).map_err(io("write"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The answer to one request.
fn answer(db: &Database, kind: u8, body: &[u8]) -> (u8, Vec<u8>) {
    let failed = |message: String| (FAILED, message.into_bytes());
    match kind {
        TRANSACT => {
            let Ok(text) = std::str::from_utf8(body) else {
                return failed("transaction text that is not UTF-8".into());
            };
            match db.transact(text) {
                Ok(report) => {
                    let mut out = report.basis_t_after().to_le_bytes().to_vec();
                    out.extend_from_slice(&(report.tx_data.len() as u64).to_le_bytes());
                    (OK, out)
                }
                Err(e) => failed(e.to_string()),
            }
        }
        READ | COUNT => {
            let (query, inputs) = match (kind, <[u8; 8]>::try_from(body)) {
                (READ, Ok(key)) => (READ_QUERY, vec![Edn::Long(i64::from_le_bytes(key))]),
                (COUNT, _) => (COUNT_QUERY, vec![]),
                _ => return failed(format!("a read of {} bytes (a key is 8)", body.len())),
            };
            let answer = db
                .db()
                .map_err(|e| e.to_string())
                .and_then(|snapshot| snapshot.q(query, &inputs).map_err(|e| e.to_string()));
            match answer {
                Ok(Edn::String(s)) => (OK, s.into_bytes()),
                Ok(Edn::Long(n)) => (OK, (n as u64).to_le_bytes().to_vec()),
                Ok(Edn::Nil) => (NONE, Vec::new()),
                Ok(other) => failed(format!("the query answered {other}")),
                Err(e) => failed(e),
            }
        }
        _ => failed(format!("a request of kind {kind}")),
    }
}

/// A running bare server and the one connection to it.
pub struct BareServer {
    child: Child,
    stream: TcpStream,
    body: Vec<u8>,
}

impl BareServer {
    /// Starts `__bare-serve DIR` (this executable) and connects to it.
    pub fn start(dir: &Path) -> Result<BareServer, BenchError> {
        let child_error = |message: String| BenchError::Child {
            what: WHAT.into(),
            message,
        };
        let exe = std::env::current_exe().map_err(|e| child_error(e.to_string()))?;
        let mut command = Command::new(&exe);
        command.arg("__bare-serve").arg(dir);
        let (mut child, port) = super::serve::spawn_listening(&mut command, WHAT)?;
        let connected = port
            .parse::<u16>()
            .map_err(|e| e.to_string())
            .and_then(|p| TcpStream::connect(("127.0.0.1", p)).map_err(|e| e.to_string()))
            .and_then(|stream| {
                stream
                    .set_nodelay(true)
                    .map(|()| stream)
                    .map_err(|e| e.to_string())
            });
        match connected {
            Ok(stream) => Ok(BareServer {
                child,
                stream,
                body: Vec::new(),
            }),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(child_error(format!("connecting to port {port}: {e}")))
            }
        }
    }

    /// One request and its answer: the status and the answer's bytes.
    pub fn call(&mut self, kind: u8, body: &[u8]) -> Result<(u8, &[u8]), String> {
        send(&mut self.stream, kind, body).map_err(|e| e.to_string())?;
        match receive(&mut self.stream, &mut self.body).map_err(|e| e.to_string())? {
            Some(FAILED) => Err(String::from_utf8_lossy(&self.body).into_owned()),
            Some(status) => Ok((status, &self.body)),
            None => Err("the bare server closed the connection".into()),
        }
    }
}

impl Drop for BareServer {
    fn drop(&mut self) {
        // Closing the connection ends the server; it closes its database on the way out.
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_as_written() {
        let mut wire = Vec::new();
        send(&mut wire, TRANSACT, b"[{:k 1}]").unwrap();
        send(&mut wire, COUNT, b"").unwrap();
        let mut input = &wire[..];
        let mut body = Vec::new();
        assert_eq!(receive(&mut input, &mut body).unwrap(), Some(TRANSACT));
        assert_eq!(body, b"[{:k 1}]");
        assert_eq!(receive(&mut input, &mut body).unwrap(), Some(COUNT));
        assert!(body.is_empty());
        assert_eq!(receive(&mut input, &mut body).unwrap(), None);
        // A length past the limit is refused before anything is reserved.
        let mut huge = vec![READ];
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(receive(&mut &huge[..], &mut body).is_err());
    }

    #[test]
    fn requests_are_answered_by_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        let schema = "[{:db/ident :k :db/valueType :db.type/long :db/cardinality \
                      :db.cardinality/one :db/unique :db.unique/identity}
                      {:db/ident :v :db/valueType :db.type/string :db/cardinality \
                      :db.cardinality/one}]";
        assert_eq!(answer(&db, TRANSACT, schema.as_bytes()).0, OK);
        let (status, out) = answer(&db, TRANSACT, br#"[{:k 7 :v "seven"}]"#);
        assert_eq!(status, OK);
        assert_eq!(u64::from_le_bytes(out[8..16].try_into().unwrap()), 3);
        assert_eq!(
            answer(&db, READ, &7i64.to_le_bytes()),
            (OK, b"seven".to_vec())
        );
        assert_eq!(answer(&db, READ, &8i64.to_le_bytes()), (NONE, vec![]));
        assert_eq!(answer(&db, COUNT, b""), (OK, 1u64.to_le_bytes().to_vec()));
        assert_eq!(answer(&db, TRANSACT, b"[{:k").0, FAILED);
        assert_eq!(answer(&db, READ, b"123").0, FAILED);
        assert_eq!(answer(&db, 9, b"").0, FAILED);
    }
}
