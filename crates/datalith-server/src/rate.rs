//! Requests a second: per token (`--token-rate`), so that one client cannot take every place
//! to run from the others, and per client address (`--address-rate`), which holds before any
//! token is read, so that a flood of requests, authenticated or not, is turned away at the
//! door. Each is a token bucket per key, holding up to a second's worth. Past it a request
//! is refused with 429 `:datalith.error/rate-limited` and `Retry-After`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use datalith::edn::Edn;

use crate::error::{codes, Result, ServerError};

/// Keys tracked at most; past them the buckets that are full again (idle a second) are
/// forgotten, which changes nothing for them, so that many addresses cannot grow the table
/// without bound.
const MAX_TRACKED: usize = 10_000;

/// One rate, with a bucket per key (a token's name, a client's address).
pub struct Rate {
    per_second: f64,
    /// What the key is (`token`, `address`), for the error's field.
    kind: &'static str,
    /// The option that set the rate, for the message.
    option: &'static str,
    buckets: Mutex<HashMap<String, Bucket>>,
}

struct Bucket {
    left: f64,
    at: Instant,
}

impl Rate {
    /// `per_second` requests a second for each token.
    pub fn per_token(per_second: u32) -> Rate {
        Rate::new(per_second, "token", "--token-rate")
    }

    /// `per_second` requests a second for each client address.
    pub fn per_address(per_second: u32) -> Rate {
        Rate::new(per_second, "address", "--address-rate")
    }

    fn new(per_second: u32, kind: &'static str, option: &'static str) -> Rate {
        Rate {
            per_second: f64::from(per_second),
            kind,
            option,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from `key`'s bucket, or says it is empty.
    pub fn take(&self, key: &str) -> Result<()> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(key) {
            buckets.retain(|_, b| now.duration_since(b.at).as_secs_f64() < 1.0);
        }
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket {
            left: self.per_second,
            at: now,
        });
        let refill = now.duration_since(bucket.at).as_secs_f64() * self.per_second;
        bucket.left = (bucket.left + refill).min(self.per_second);
        bucket.at = now;
        if bucket.left >= 1.0 {
            bucket.left -= 1.0;
            return Ok(());
        }
        Err(ServerError::new(
            codes::RATE_LIMITED,
            format!(
                "{} {} is over this server's rate of {} requests a second ({}); retry after \
                 the time Retry-After says",
                self.kind,
                datalith::edn::to_edn_string(&Edn::String(key.to_string())),
                self.per_second,
                self.option
            ),
        )
        .with("rate", Edn::Double(self.per_second))
        .with("limited", Edn::kw(&format!(":{}", self.kind))))
    }

    /// Keys tracked now.
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.buckets.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_refusals_then_a_refill() {
        let rate = Rate::per_token(3);
        for _ in 0..3 {
            rate.take("a").unwrap();
        }
        let e = rate.take("a").unwrap_err();
        assert_eq!(e.category, codes::RATE_LIMITED);
        assert!(e.message.contains("token \"a\""), "{}", e.message);
        assert!(e.message.contains("--token-rate"), "{}", e.message);
        // Another key has its own bucket.
        rate.take("b").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(400));
        rate.take("a").unwrap();
    }

    #[test]
    fn many_addresses_do_not_grow_the_table_past_its_bound() {
        let rate = Rate::per_address(1);
        for i in 0..MAX_TRACKED {
            rate.take(&format!("10.0.{}.{}", i / 256, i % 256)).unwrap();
        }
        assert_eq!(rate.tracked(), MAX_TRACKED);
        // All are still within their second: none is forgotten, the table holds one more.
        rate.take("192.0.2.1").unwrap();
        assert_eq!(rate.tracked(), MAX_TRACKED + 1);
        let e = rate.take("10.0.0.0").unwrap_err();
        assert!(e.message.contains("address \"10.0.0.0\""), "{}", e.message);
        assert!(e.message.contains("--address-rate"), "{}", e.message);
        // A second later they are full again and forgotten when a new key comes.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        rate.take("192.0.2.2").unwrap();
        assert_eq!(rate.tracked(), 1);
    }
}
