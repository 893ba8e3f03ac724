//! Requests a second per token (`--token-rate`): a token bucket per token name, holding up
//! to a second's worth, so that one client cannot take every place to run from the others.
//! Past it a request is refused with 429 `:datalith.error/rate-limited` and `Retry-After`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use datalith::edn::Edn;

use crate::error::{codes, Result, ServerError};

/// The buckets.
pub struct TokenRate {
    per_second: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

struct Bucket {
    left: f64,
    at: Instant,
}

impl TokenRate {
    /// `per_second` requests a second for each token, in bursts of as many.
    pub fn new(per_second: u32) -> TokenRate {
        TokenRate {
            per_second: f64::from(per_second),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from `token`'s bucket, or says it is empty.
    pub fn take(&self, token: &str) -> Result<()> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry(token.to_string()).or_insert(Bucket {
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
                "token {token:?} is over this server's rate of {} requests a second \
                 (--token-rate)",
                self.per_second
            ),
        )
        .with("rate", Edn::Double(self.per_second)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_refusals_then_a_refill() {
        let rate = TokenRate::new(3);
        for _ in 0..3 {
            rate.take("a").unwrap();
        }
        assert_eq!(rate.take("a").unwrap_err().category, codes::RATE_LIMITED);
        // Another token has its own bucket.
        rate.take("b").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(400));
        rate.take("a").unwrap();
    }
}
