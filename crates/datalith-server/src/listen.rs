//! Where the server may listen. Without a token file every request is allowed, and without
//! TLS whatever crosses the network (tokens, queries, data) is clear text. Hence: loopback
//! addresses only, unless `--tokens` is given (so requests are authenticated: no option lifts
//! that) and either TLS is on (`--tls-cert`, `--tls-key`) or `--insecure` says that clear
//! text on this network is acceptable (a private network, or a TLS proxy in front).

use std::net::{SocketAddr, ToSocketAddrs};

use datalith::edn::Edn;

use crate::error::{Result, ServerError};

/// The addresses `listen` (HOST:PORT) stands for.
pub fn addresses(listen: &str) -> Result<Vec<SocketAddr>> {
    let bad = |why: String| {
        ServerError::invalid(format!("--listen {listen}: {why}"))
            .with("listen", Edn::String(listen.to_string()))
    };
    let addrs: Vec<SocketAddr> = listen
        .to_socket_addrs()
        .map_err(|e| bad(format!("{e} (expected HOST:PORT, e.g. 127.0.0.1:7171)")))?
        .collect();
    if addrs.is_empty() {
        return Err(bad("names no address".to_string()));
    }
    Ok(addrs)
}

/// Refuses addresses beyond loopback unless tokens are required and either `tls` is on or
/// `insecure` is given.
pub fn check(addrs: &[SocketAddr], insecure: bool, tokens: bool, tls: bool) -> Result<()> {
    let Some(outside) = addrs.iter().find(|a| !a.ip().is_loopback()) else {
        return Ok(());
    };
    if !tokens {
        return Err(ServerError::invalid(format!(
            "refusing to listen on {outside}, beyond loopback, without --tokens: every request \
             would be allowed to anyone who can reach it"
        )));
    }
    if !tls && !insecure {
        return Err(ServerError::invalid(format!(
            "refusing to listen on {outside}, beyond loopback, without TLS: tokens and data \
             would cross the network in clear text; give --tls-cert and --tls-key (`datalith \
             cert` makes a pair to try), or --insecure to do it anyway (a private network, or \
             a TLS proxy in front)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_only_unless_tokens_and_tls_or_insecure() {
        let cases: &[(&str, bool, bool, bool, bool)] = &[
            // listen, --insecure, --tokens, TLS, allowed
            ("127.0.0.1:7171", false, false, false, true),
            ("127.0.0.2:0", false, false, false, true),
            ("[::1]:7171", false, false, false, true),
            ("localhost:7171", false, false, false, true),
            ("0.0.0.0:7171", false, false, false, false),
            ("0.0.0.0:7171", true, false, false, false),
            ("0.0.0.0:7171", false, false, true, false),
            ("0.0.0.0:7171", true, false, true, false),
            ("0.0.0.0:7171", false, true, false, false),
            ("0.0.0.0:7171", true, true, false, true),
            ("0.0.0.0:7171", false, true, true, true),
            ("192.0.2.1:7171", true, true, false, true),
            ("192.0.2.1:7171", false, true, true, true),
        ];
        for (listen, insecure, tokens, tls, allowed) in cases {
            let addrs = addresses(listen).unwrap();
            assert_eq!(
                check(&addrs, *insecure, *tokens, *tls).is_ok(),
                *allowed,
                "{listen} insecure={insecure} tokens={tokens} tls={tls}"
            );
        }
        assert!(addresses("no-port").is_err());
    }
}
