//! A query's answer read as it arrives (`RemoteDb::q_each`): `{:result ITEMS, :basis-t B}`,
//! each item of ITEMS (a set or a vector) read as soon as its text is whole and handed on,
//! and the text it took let go, so the answer is never whole in the client's memory.

use std::io::Read;

use datalith::edn::read_prefix;
use datalith::query::{ItemSink, QueryError};

/// Why the reading stopped.
pub(crate) enum Failed {
    /// The sink said to stop.
    Sink(QueryError),
    /// The answer broke off or does not read as one.
    Answer(String),
}

/// Where in the answer the reading is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Before the items: `{:result ` and the collection's opening.
    Head,
    /// Among the items, until the collection's closing character.
    Items(char),
    /// After them: the rest of the map.
    Tail,
}

/// Reads the answer from `reader` to its end, handing each item to `sink`.
pub(crate) fn hand_on(mut reader: impl Read, sink: &mut dyn ItemSink) -> Result<(), Failed> {
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut stage = Stage::Head;
    loop {
        let n = reader
            .read(&mut buf)
            .map_err(|e| Failed::Answer(format!("the answer broke off: {e}")))?;
        let ended = n == 0;
        pending.extend_from_slice(&buf[..n]);
        let taken = take(&pending, &mut stage, sink, ended)?;
        pending.drain(..taken);
        if ended {
            return match (stage, String::from_utf8_lossy(&pending).trim_end()) {
                (Stage::Tail, rest) if rest.ends_with('}') => Ok(()),
                _ => Err(Failed::Answer(format!(
                    "the answer ended before its end: ...{}",
                    String::from_utf8_lossy(&pending[pending.len().saturating_sub(80)..])
                ))),
            };
        }
    }
}

/// Takes what the text so far holds whole, from the start of `pending`; the bytes taken.
/// Until the answer has `ended`, only the text up to its last spacing or closing character
/// is read: a token at the end of what arrived may go on in the next piece.
fn take(
    pending: &[u8],
    stage: &mut Stage,
    sink: &mut dyn ItemSink,
    ended: bool,
) -> Result<usize, Failed> {
    // A character split between pieces waits for its rest.
    let valid = match std::str::from_utf8(pending) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&pending[..e.valid_up_to()]).unwrap_or_default(),
    };
    let upto = match ended {
        true => valid.len(),
        false => valid
            .rfind(|c: char| c.is_whitespace() || matches!(c, ']' | '}' | ')' | ','))
            .map_or(0, |at| at + 1),
    };
    let text = &valid[..upto];
    let mut at = 0;
    loop {
        let rest = &text[at..];
        let spacing = rest.len() - rest.trim_start_matches(is_spacing).len();
        let rest = &rest[spacing..];
        match *stage {
            Stage::Head => {
                let Some(after) = rest.strip_prefix('{') else {
                    return head_or_wait(rest, at);
                };
                let after_key = after.trim_start_matches(is_spacing);
                let Some(after_key) = after_key.strip_prefix(":result") else {
                    return head_or_wait(after_key, at);
                };
                let items = after_key.trim_start_matches(is_spacing);
                let (close, open) = if items.starts_with("#{") {
                    ('}', 2)
                } else if items.starts_with('[') {
                    (']', 1)
                } else {
                    return head_or_wait(items, at);
                };
                sink.begin(close == '}').map_err(Failed::Sink)?;
                at = text.len() - items.len() + open;
                *stage = Stage::Items(close);
            }
            Stage::Items(close) => {
                if rest.starts_with(close) {
                    at += spacing + 1;
                    *stage = Stage::Tail;
                    continue;
                }
                match read_prefix(rest) {
                    Ok(Some((item, used))) => {
                        sink.item(&item).map_err(Failed::Sink)?;
                        at += spacing + used;
                    }
                    Ok(None) => return Ok(at),
                    Err(e) => return Err(Failed::Answer(format!("an item does not read: {e}"))),
                }
            }
            // The rest of the map is read once the answer has ended.
            Stage::Tail => return Ok(at),
        }
    }
}

/// Spacing between forms (commas are spacing in EDN).
fn is_spacing(c: char) -> bool {
    c.is_whitespace() || c == ','
}

/// The answer's head is not whole yet (wait, `Ok(at)`), or is not a query's answer of
/// rows.
fn head_or_wait(rest: &str, at: usize) -> Result<usize, Failed> {
    match rest.is_empty() {
        true => Ok(at),
        false => Err(Failed::Answer(format!(
            "not a query's answer of rows: {}",
            rest.chars().take(60).collect::<String>()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datalith::edn::{read_one, Edn};

    #[derive(Default)]
    struct Collect {
        set: Option<bool>,
        items: Vec<Edn>,
    }

    impl ItemSink for Collect {
        fn begin(&mut self, set: bool) -> Result<(), QueryError> {
            self.set = Some(set);
            Ok(())
        }
        fn item(&mut self, item: &Edn) -> Result<(), QueryError> {
            self.items.push(item.clone());
            Ok(())
        }
    }

    /// A reader giving `text` `piece` bytes at a time.
    struct Pieces<'a> {
        text: &'a [u8],
        piece: usize,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.piece.min(self.text.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.text[..n]);
            self.text = &self.text[n..];
            Ok(n)
        }
    }

    /// Answers cut into pieces of every size give the items of the whole.
    #[test]
    fn items_arrive_whole_however_the_answer_is_cut() {
        let answers = [
            "{:result #{[1 \"a b\"] [22 \"é\"] [333 #inst \"2020-01-02T00:00:00.000-00:00\"]}, :basis-t 7}\n",
            "{:result [{:name \"x\", :friend [{:id 1}]} {:name \"y\"} 12345 -6.5 :kw], :basis-t 9}\n",
            "{:result #{}, :basis-t 3}\n",
        ];
        for answer in answers {
            let whole = read_one(answer).unwrap();
            let Edn::Map(pairs) = &whole else { panic!() };
            let (want, set) = match &pairs[0].1 {
                Edn::Set(items) => (items.clone(), true),
                Edn::Vector(items) => (items.clone(), false),
                _ => panic!(),
            };
            for piece in [1, 2, 3, 7, 64, 1 << 20] {
                let mut sink = Collect::default();
                let reader = Pieces {
                    text: answer.as_bytes(),
                    piece,
                };
                assert!(hand_on(reader, &mut sink).is_ok(), "{answer} in {piece}");
                assert_eq!(sink.set, Some(set));
                assert_eq!(sink.items, want, "{answer} in pieces of {piece}");
            }
        }
    }

    #[test]
    fn a_broken_or_foreign_answer_is_an_error() {
        for text in [
            "{:result #{[1 2] [3",
            "{:result 17, :basis-t 1}",
            "{:result #{[1 2]}",
            "",
        ] {
            let mut sink = Collect::default();
            let reader = Pieces {
                text: text.as_bytes(),
                piece: 4,
            };
            assert!(
                matches!(hand_on(reader, &mut sink), Err(Failed::Answer(_))),
                "{text}"
            );
        }
    }
}
