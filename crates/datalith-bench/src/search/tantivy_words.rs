//! A tantivy tokenizer with Datalith's and Lucene's choices: Unicode word segmentation
//! (UAX #29 words, through `unicode-segmentation`, as [`super::analyze::Tokenization::Words`]),
//! lower-cased, no stemming, no stop words. tantivy's own `default` tokenizer cuts at every
//! non-alphanumeric character instead, and drops tokens over 40 bytes.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use unicode_segmentation::UnicodeSegmentation;

/// The name it is registered under.
pub const NAME: &str = "words";

#[derive(Clone, Default)]
pub struct Words;

/// The tokens of one text, made at once (the texts are a few KB).
pub struct Stream {
    tokens: Vec<Token>,
    /// The next token's index plus one (0: before the first).
    at: usize,
}

impl Tokenizer for Words {
    type TokenStream<'a> = Stream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Stream {
        let tokens = text
            .unicode_word_indices()
            .enumerate()
            .map(|(position, (from, word))| Token {
                offset_from: from,
                offset_to: from + word.len(),
                position,
                text: word.to_lowercase(),
                position_length: 1,
            })
            .collect();
        Stream { tokens, at: 0 }
    }
}

impl TokenStream for Stream {
    fn advance(&mut self) -> bool {
        if self.at < self.tokens.len() {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.at.max(1) - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.at.max(1) - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_terms_as_the_reference() {
        let text = "At five o'clock, 3.5 Foxes-Hunt";
        let mut tk = Words;
        let mut s = tk.token_stream(text);
        let mut got = Vec::new();
        while s.advance() {
            got.push((s.token().text.clone(), s.token().position));
        }
        let want: Vec<(String, usize)> = super::super::analyze::Tokenization::Words
            .terms(text)
            .into_iter()
            .enumerate()
            .map(|(i, t)| (t, i))
            .collect();
        assert_eq!(got, want);
    }
}
