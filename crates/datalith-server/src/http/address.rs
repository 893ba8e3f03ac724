//! The rate per client address (`--address-rate`), before anything else is read of a
//! request: a client over it gets 429 `:datalith.error/rate-limited` whatever its token.
//! `/health` is not counted, so that probes never see 429. The address is the TCP peer's, or,
//! for a request from a `--trusted-proxy`, the last address of its `X-Forwarded-For` that is
//! not a trusted proxy (each proxy appends the address it got the request from, so the
//! addresses before the first untrusted one are the client's word, not the proxies').

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::{respond, Shared};

/// The address of the client a request came from, put on each request by the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub IpAddr);

/// Refuses the request when its address is past its rate; otherwise passes it on.
pub async fn limit(State(state): State<Shared>, request: Request, next: Next) -> Response {
    if let (Some(rate), Some(ClientAddr(peer))) = (
        &state.address_rate,
        request.extensions().get::<ClientAddr>(),
    ) {
        if request.uri().path() != "/health" {
            let forwarded = request
                .headers()
                .get_all(FORWARDED_FOR)
                .iter()
                .filter_map(|v| v.to_str().ok());
            let ip = client(*peer, forwarded, &state.trusted_proxies);
            if let Err(e) = rate.take(&ip.to_string()) {
                state
                    .metrics
                    .address_rate_refusals
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return respond::answer(request.headers(), Err(e));
            }
        }
    }
    next.run(request).await
}

const FORWARDED_FOR: &str = "x-forwarded-for";

/// The client's address: `peer`, or, when `peer` is a trusted proxy, the last address of the
/// `X-Forwarded-For` values (in their order) that is not one; a value that does not read as
/// an address stops the walk there (what comes before it is the client's word).
fn client<'a>(
    peer: IpAddr,
    forwarded: impl Iterator<Item = &'a str>,
    trusted: &[IpAddr],
) -> IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let hops: Vec<&str> = forwarded
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let mut client = peer;
    for hop in hops.iter().rev() {
        match hop.parse::<IpAddr>() {
            Ok(ip) => {
                client = ip;
                if !trusted.contains(&ip) {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_the_last_forwarded_address_that_no_trusted_proxy_wrote() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let proxy = "10.0.0.1";
        // (peer, X-Forwarded-For values, trusted proxies, the client)
        let cases: &[(&str, &[&str], &[&str], &str)] = &[
            // No trusted proxy: the header is anyone's word.
            (proxy, &["203.0.113.7"], &[], proxy),
            // From a trusted proxy: the address it appended.
            (proxy, &["203.0.113.7"], &[proxy], "203.0.113.7"),
            // What the client wrote itself comes before: the proxy's entry is the last.
            (proxy, &["1.1.1.1, 203.0.113.7"], &[proxy], "203.0.113.7"),
            // Two trusted proxies in a row, in one value or two.
            (
                proxy,
                &["203.0.113.7, 10.0.0.2"],
                &[proxy, "10.0.0.2"],
                "203.0.113.7",
            ),
            (
                proxy,
                &["203.0.113.7", "10.0.0.2"],
                &[proxy, "10.0.0.2"],
                "203.0.113.7",
            ),
            // No header, or one that does not read: the proxy itself.
            (proxy, &[], &[proxy], proxy),
            (proxy, &["unknown"], &[proxy], proxy),
            // An untrusted peer's header is ignored.
            ("192.0.2.5", &["203.0.113.7"], &[proxy], "192.0.2.5"),
            // IPv6.
            (proxy, &["2001:db8::1"], &[proxy], "2001:db8::1"),
        ];
        for (peer, forwarded, trusted, want) in cases {
            let trusted: Vec<IpAddr> = trusted.iter().map(|t| ip(t)).collect();
            let got = client(ip(peer), forwarded.iter().copied(), &trusted);
            assert_eq!(got, ip(want), "{peer} {forwarded:?} {trusted:?}");
        }
    }
}
