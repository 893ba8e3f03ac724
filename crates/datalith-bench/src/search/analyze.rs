//! The two tokenizations of the engines under test, as the bench's own reference (to make
//! queries whose answers do not depend on the choice, and to know every answer):
//!
//! - [`Tokenization::Words`]: Unicode word segmentation (UAX #29 word boundaries, the segments
//!   holding a letter or digit), lower-cased. Datalith's analyzer, Lucene's
//!   `StandardTokenizer` + `LowerCaseFilter`, the tantivy peer's tokenizer
//!   ([`super::tantivy_peer`]).
//! - [`Tokenization::Alnum`]: runs of letters and digits, lower-cased: SQLite FTS5's
//!   `unicode61` tokenizer (it has no UAX #29 one), which splits `o'clock` and `3.5` apart,
//!   and Datalevin's analyzer here (a Clojure function: the JDK has no UAX #29 segmenter; its
//!   word `BreakIterator` keeps GCIDE's `Ab"di*ca*tive` pieces `Ab"di` whole).

use unicode_segmentation::UnicodeSegmentation;

/// A way of cutting text into terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenization {
    Words,
    Alnum,
}

impl Tokenization {
    /// Calls `f` with each term of `text` in order.
    pub fn each(self, text: &str, mut f: impl FnMut(String)) {
        match self {
            Tokenization::Words => {
                for w in text.unicode_words() {
                    f(w.to_lowercase());
                }
            }
            Tokenization::Alnum => {
                for w in text.split(|c: char| !c.is_alphanumeric()) {
                    if !w.is_empty() {
                        f(w.to_lowercase());
                    }
                }
            }
        }
    }

    /// The terms of `text`, in order.
    pub fn terms(self, text: &str) -> Vec<String> {
        let mut v = Vec::new();
        self.each(text, |t| v.push(t));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_tokenizations_differ_where_said() {
        let text = "At five o'clock, 3.5 Foxes-Hunt ÉTÉ";
        assert_eq!(
            Tokenization::Words.terms(text),
            ["at", "five", "o'clock", "3.5", "foxes", "hunt", "été"]
        );
        assert_eq!(
            Tokenization::Alnum.terms(text),
            ["at", "five", "o", "clock", "3", "5", "foxes", "hunt", "été"]
        );
    }
}
