//! TLS (rustls): the server's certificate and key from PEM files (`--tls-cert`, `--tls-key`),
//! offered over HTTP/1.1 and HTTP/2 (ALPN), and the clear answer a client gets when it speaks
//! plain HTTP to a TLS port.
//!
//! | module | what |
//! |---|---|
//! | `config` | reading the PEM files into a rustls server configuration |
//! | `plain` | telling a TLS handshake from plain HTTP on the first byte, and answering the latter |

mod config;
mod plain;

pub use config::{acceptor, Tls};
pub use plain::{first_byte_is_tls, refuse_plain_http};
