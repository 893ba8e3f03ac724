//! `--log kafka://HOST:PORT[,HOST:PORT...]/TOPIC[?replication=N]`: where a replicated
//! database's transaction log lives.

use crate::error::{Result, ServerError};

/// The longest topic name Kafka takes.
const MAX_TOPIC_LEN: usize = 249;

/// A parsed `kafka://` log address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogUrl {
    /// Bootstrap brokers, `host:port` each.
    pub brokers: Vec<String>,
    /// The topic; its one partition is the database's order.
    pub topic: String,
    /// The replication factor a topic this node creates gets; by default as many brokers as
    /// the address lists, at most 3.
    pub replication: i16,
}

impl LogUrl {
    /// Reads `text`; a clear error for each way it can be wrong.
    pub fn parse(text: &str) -> Result<LogUrl> {
        let bad = |why: &str| {
            ServerError::invalid(format!(
                "--log {text:?}: {why} (expected kafka://HOST:PORT[,HOST:PORT...]/TOPIC\
                 [?replication=N])"
            ))
        };
        let rest = text
            .strip_prefix("kafka://")
            .ok_or_else(|| bad("only kafka:// logs are known"))?;
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (hosts, topic) = rest
            .split_once('/')
            .ok_or_else(|| bad("no /TOPIC after the brokers"))?;
        let brokers: Vec<String> = hosts.split(',').map(str::to_string).collect();
        for b in &brokers {
            let port = b.rsplit_once(':').map(|(h, p)| (h, p.parse::<u16>()));
            match port {
                Some((host, Ok(p))) if !host.is_empty() && p > 0 => {}
                _ => return Err(bad(&format!("broker {b:?} is not HOST:PORT"))),
            }
        }
        if topic.is_empty()
            || topic.len() > MAX_TOPIC_LEN
            || topic == "."
            || topic == ".."
            || !topic
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(bad(&format!(
                "topic {topic:?} must be 1 to {MAX_TOPIC_LEN} letters, digits, '.', '_' or '-'"
            )));
        }
        let mut replication = brokers.len().min(3) as i16;
        if let Some(query) = query {
            for pair in query.split('&') {
                match pair.split_once('=') {
                    Some(("replication", n)) => {
                        replication = n
                            .parse::<i16>()
                            .ok()
                            .filter(|n| *n >= 1)
                            .ok_or_else(|| bad(&format!("replication {n:?} is not a count")))?
                    }
                    _ => return Err(bad(&format!("unknown option {pair:?}"))),
                }
            }
        }
        Ok(LogUrl {
            brokers,
            topic: topic.to_string(),
            replication,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_addresses() {
        let ok: &[(&str, &[&str], &str, i16)] = &[
            (
                "kafka://127.0.0.1:9092/films",
                &["127.0.0.1:9092"],
                "films",
                1,
            ),
            (
                "kafka://a:1,b:2,c:3,d:4/t.x_y-z",
                &["a:1", "b:2", "c:3", "d:4"],
                "t.x_y-z",
                3,
            ),
            ("kafka://a:1/t?replication=2", &["a:1"], "t", 2),
        ];
        for (text, brokers, topic, replication) in ok {
            let url = LogUrl::parse(text).unwrap();
            assert_eq!(url.brokers, *brokers, "{text}");
            assert_eq!(url.topic, *topic, "{text}");
            assert_eq!(url.replication, *replication, "{text}");
        }
        let bad: &[(&str, &str)] = &[
            ("http://a:1/t", "only kafka://"),
            ("kafka://a:1", "no /TOPIC"),
            ("kafka://a/t", "not HOST:PORT"),
            ("kafka://a:0/t", "not HOST:PORT"),
            ("kafka://a:1/", "topic"),
            ("kafka://a:1/../x", "topic"),
            ("kafka://a:1/t?replication=0", "not a count"),
            ("kafka://a:1/t?acks=1", "unknown option"),
        ];
        for (text, want) in bad {
            let e = LogUrl::parse(text).unwrap_err();
            assert!(e.message.contains(want), "{text}: {}", e.message);
        }
    }
}
