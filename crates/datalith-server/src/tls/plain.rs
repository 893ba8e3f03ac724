//! Plain HTTP sent to a TLS port. Its bytes would only fail the handshake, and the client
//! would see a connection closed without a word; a TLS record starts with 0x16 (a handshake)
//! and an HTTP request with a letter, so the server looks at the first byte and answers plain
//! HTTP with a 400 that says to use `https://`, then closes.

use std::time::Duration;

use datalith::edn::to_edn_string;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::{codes, ServerError};

/// The first byte of a TLS handshake record.
const HANDSHAKE: u8 = 0x16;

/// Whether the client's first byte starts a TLS handshake; `None` when it sent nothing within
/// `patience` or closed.
pub async fn first_byte_is_tls(stream: &TcpStream, patience: Duration) -> Option<bool> {
    let mut first = [0u8; 1];
    match tokio::time::timeout(patience, stream.peek(&mut first)).await {
        Ok(Ok(1)) => Some(first[0] == HANDSHAKE),
        _ => None,
    }
}

/// Answers a plain HTTP request on the TLS port with 400 and closes the connection.
pub async fn refuse_plain_http(mut stream: TcpStream) {
    let e = ServerError::new(
        codes::TLS_REQUIRED,
        "this port speaks TLS: use https:// (plain HTTP is not served here)",
    );
    let body = format!("{}\n", to_edn_string(&e.to_edn()));
    let answer = format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: application/edn\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    // The client may be gone already: nothing to do about it.
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
    // Closing with the request unread would reset the connection, and the client might lose
    // the answer: read what it sent, for a moment, first.
    let mut sink = [0u8; 4096];
    let drain = async {
        while let Ok(n) = stream.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
}
