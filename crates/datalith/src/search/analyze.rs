//! Text to terms: Unicode word segmentation (UAX #29, `unicode-segmentation`), lower-casing,
//! then, if the index asks for them, a language's stop words removed (`stop-words`, NLTK's
//! lists) and Snowball stemming (`rust-stemmers`). The same analysis runs when a document is
//! indexed, when a query is parsed and when a snippet's match offsets are found, so the three
//! cannot disagree about what a word is.

use unicode_segmentation::UnicodeSegmentation;

use crate::limits::MAX_SEARCH_TERM_BYTES;

/// The languages stemming and stop words are offered in (Snowball's and NLTK's common set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Language {
    /// English.
    English,
    /// German.
    German,
    /// French.
    French,
    /// Spanish.
    Spanish,
    /// Italian.
    Italian,
    /// Portuguese.
    Portuguese,
    /// Dutch.
    Dutch,
    /// Swedish.
    Swedish,
    /// Norwegian.
    Norwegian,
    /// Danish.
    Danish,
    /// Finnish.
    Finnish,
    /// Russian.
    Russian,
}

/// Every language with its name (the keyword's name in `:db.fulltext/stemmer :english`).
const LANGUAGES: [(Language, &str); 12] = [
    (Language::English, "english"),
    (Language::German, "german"),
    (Language::French, "french"),
    (Language::Spanish, "spanish"),
    (Language::Italian, "italian"),
    (Language::Portuguese, "portuguese"),
    (Language::Dutch, "dutch"),
    (Language::Swedish, "swedish"),
    (Language::Norwegian, "norwegian"),
    (Language::Danish, "danish"),
    (Language::Finnish, "finnish"),
    (Language::Russian, "russian"),
];

impl Language {
    /// The language named `name` (`"english"`).
    pub fn from_name(name: &str) -> Option<Language> {
        LANGUAGES.iter().find(|(_, n)| *n == name).map(|(l, _)| *l)
    }

    /// The language's name, as `from_name` reads it.
    pub fn name(self) -> &'static str {
        LANGUAGES
            .iter()
            .find(|(l, _)| *l == self)
            .map(|(_, n)| *n)
            .unwrap_or("english")
    }

    /// Every language's name, for error messages.
    pub fn names() -> Vec<&'static str> {
        LANGUAGES.iter().map(|(_, n)| *n).collect()
    }

    fn stemmer(self) -> rust_stemmers::Algorithm {
        use rust_stemmers::Algorithm as A;
        match self {
            Language::English => A::English,
            Language::German => A::German,
            Language::French => A::French,
            Language::Spanish => A::Spanish,
            Language::Italian => A::Italian,
            Language::Portuguese => A::Portuguese,
            Language::Dutch => A::Dutch,
            Language::Swedish => A::Swedish,
            Language::Norwegian => A::Norwegian,
            Language::Danish => A::Danish,
            Language::Finnish => A::Finnish,
            Language::Russian => A::Russian,
        }
    }

    fn iso(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::German => "de",
            Language::French => "fr",
            Language::Spanish => "es",
            Language::Italian => "it",
            Language::Portuguese => "pt",
            Language::Dutch => "nl",
            Language::Swedish => "sv",
            Language::Norwegian => "no",
            Language::Danish => "da",
            Language::Finnish => "fi",
            Language::Russian => "ru",
        }
    }
}

/// Which words an index leaves out (they still take a position, so a phrase does not match
/// across a removed word).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopWords {
    /// None: every word is indexed.
    #[default]
    None,
    /// The 33 English words of Lucene's classic `StandardAnalyzer`, which Datomic's
    /// `:db/fulltext` leaves out ("a", "and", "the", ...): the default of a Datalog full-text
    /// attribute, so that queries answer as Datomic's do.
    Classic,
    /// A language's list (NLTK's, from the `stop-words` crate).
    Language(Language),
}

/// The classic English stop set (Lucene's `StopAnalyzer.ENGLISH_STOP_WORDS_SET`), which
/// Datomic's full-text analyzer uses.
const CLASSIC: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// How an index turns text into terms. The default: words lower-cased, nothing removed,
/// nothing stemmed (what Lucene's `StandardAnalyzer` does with an empty stop set).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AnalyzerConfig {
    /// The words left out.
    pub stop_words: StopWords,
    /// Reduce each word to its stem in this language (Snowball).
    pub stemmer: Option<Language>,
}

impl AnalyzerConfig {
    /// One byte each for the stop words' and the stemmer's language (0: none), as the index's
    /// catalog stores them.
    pub fn to_bytes(self) -> [u8; 2] {
        let code = |l: Option<Language>| {
            l.and_then(|l| LANGUAGES.iter().position(|(x, _)| *x == l))
                .map_or(0, |i| i as u8 + 1)
        };
        let stop = match self.stop_words {
            StopWords::None => 0,
            StopWords::Classic => 255,
            StopWords::Language(l) => code(Some(l)),
        };
        [stop, code(self.stemmer)]
    }

    /// Parses what `to_bytes` wrote; `None` for an unknown code.
    pub fn from_bytes(b: [u8; 2]) -> Option<AnalyzerConfig> {
        let lang = |c: u8| match c {
            0 => Some(None),
            c => LANGUAGES.get(c as usize - 1).map(|(l, _)| Some(*l)),
        };
        let stop_words = match b[0] {
            255 => StopWords::Classic,
            c => lang(c)?.map_or(StopWords::None, StopWords::Language),
        };
        Some(AnalyzerConfig {
            stop_words,
            stemmer: lang(b[1])?,
        })
    }
}

/// One indexed word: its term, its position (word count before it, removed stop words
/// included) and its byte range in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The term as indexed (lower-cased, maybe stemmed).
    pub term: String,
    /// Its position among the text's words.
    pub position: u32,
    /// Its start, a byte offset into the text.
    pub start: usize,
    /// Its end (exclusive).
    pub end: usize,
}

/// An analyzer built from its configuration (the stemmer and the stop list looked up once).
pub struct Analyzer {
    config: AnalyzerConfig,
    stemmer: Option<rust_stemmers::Stemmer>,
    stop: Option<rustc_hash::FxHashSet<&'static str>>,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("config", &self.config)
            .finish()
    }
}

impl Analyzer {
    /// The analyzer `config` describes.
    pub fn new(config: AnalyzerConfig) -> Analyzer {
        Analyzer {
            config,
            stemmer: config
                .stemmer
                .map(|l| rust_stemmers::Stemmer::create(l.stemmer())),
            stop: match config.stop_words {
                StopWords::None => None,
                StopWords::Classic => Some(CLASSIC.iter().copied().collect()),
                StopWords::Language(l) => Some(
                    stop_words::lookup(l.iso())
                        .unwrap_or(&[])
                        .iter()
                        .copied()
                        .collect(),
                ),
            },
        }
    }

    /// Its configuration.
    pub fn config(&self) -> AnalyzerConfig {
        self.config
    }

    /// The tokens of `text`, in order.
    pub fn tokens(&self, text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        self.each_token(text, |t| out.push(t));
        out
    }

    /// Calls `f` with each token of `text`, in order.
    pub fn each_token(&self, text: &str, mut f: impl FnMut(Token)) {
        let mut position = 0u32;
        for (start, word) in text.unicode_word_indices() {
            let at = position;
            position = position.saturating_add(1);
            let Some(term) = self.term(word) else {
                continue;
            };
            f(Token {
                term,
                position: at,
                start,
                end: start + word.len(),
            });
        }
    }

    /// Calls `f` with each indexed term of `text` and its position, lower-casing into `buf`
    /// (no allocation for a word already in lower case, the common case when indexing).
    pub fn each_term(&self, text: &str, buf: &mut String, mut f: impl FnMut(&str, u32)) {
        let mut position = 0u32;
        for word in text.unicode_words() {
            let at = position;
            position = position.saturating_add(1);
            let lower: &str = if word
                .bytes()
                .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
            {
                word
            } else if word.is_ascii() {
                buf.clear();
                buf.extend(word.bytes().map(|b| char::from(b.to_ascii_lowercase())));
                buf.as_str()
            } else {
                // `str::to_lowercase`, as `term` does (a final sigma is lower-cased by context).
                *buf = word.to_lowercase();
                buf.as_str()
            };
            if let Some(term) = self.indexed(lower) {
                f(&term, at);
            }
        }
    }

    /// The term one word becomes, or `None` for a word not indexed (a stop word, or one
    /// longer than `MAX_SEARCH_TERM_BYTES`).
    pub fn term(&self, word: &str) -> Option<String> {
        self.indexed(&word.to_lowercase()).map(|t| t.into_owned())
    }

    /// What a lower-cased word is indexed as: `None` for a stop word or a term longer than
    /// `MAX_SEARCH_TERM_BYTES`, else its stem (or itself).
    fn indexed<'w>(&self, lower: &'w str) -> Option<std::borrow::Cow<'w, str>> {
        if self.stop.as_ref().is_some_and(|stop| stop.contains(lower)) {
            return None;
        }
        let term = match &self.stemmer {
            Some(s) => s.stem(lower),
            None => std::borrow::Cow::Borrowed(lower),
        };
        (!term.is_empty() && term.len() <= MAX_SEARCH_TERM_BYTES).then_some(term)
    }

    /// The term a query's prefix (`hik*`) is matched against: lower-cased, never stemmed or
    /// removed (a prefix is not a word).
    pub fn prefix_term(&self, word: &str) -> String {
        word.to_lowercase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(config: AnalyzerConfig, text: &str) -> Vec<(String, u32)> {
        Analyzer::new(config)
            .tokens(text)
            .into_iter()
            .map(|t| (t.term, t.position))
            .collect()
    }

    #[test]
    fn words_are_segmented_lowercased_and_placed() {
        let plain = AnalyzerConfig::default();
        let english = AnalyzerConfig {
            stop_words: StopWords::Language(Language::English),
            stemmer: Some(Language::English),
        };
        let cases: &[(AnalyzerConfig, &str, &[(&str, u32)])] = &[
            (plain, "", &[]),
            (plain, "  ,;  ", &[]),
            (plain, "Hello, World!", &[("hello", 0), ("world", 1)]),
            (
                plain,
                "Café in Zürich",
                &[("café", 0), ("in", 1), ("zürich", 2)],
            ),
            (
                plain,
                "don't stop 3.14",
                &[("don't", 0), ("stop", 1), ("3.14", 2)],
            ),
            (
                english,
                "The hikers were hiking",
                &[("hiker", 1), ("hike", 3)],
            ),
        ];
        for (config, text, want) in cases {
            let want: Vec<(String, u32)> = want.iter().map(|(t, p)| (t.to_string(), *p)).collect();
            assert_eq!(terms(*config, text), want, "{text:?}");
        }
    }

    #[test]
    fn each_term_agrees_with_tokens() {
        let english = AnalyzerConfig {
            stop_words: StopWords::Classic,
            stemmer: Some(Language::English),
        };
        for config in [AnalyzerConfig::default(), english] {
            let a = Analyzer::new(config);
            for text in [
                "The Hikers were HIKING in Zürich",
                "don't stop 3.14",
                "ÆRØ É é ΟΔΟΣ",
            ] {
                let want: Vec<(String, u32)> = a
                    .tokens(text)
                    .into_iter()
                    .map(|t| (t.term, t.position))
                    .collect();
                let mut got = Vec::new();
                a.each_term(text, &mut String::new(), |t, p| {
                    got.push((t.to_string(), p))
                });
                assert_eq!(got, want, "{text}");
            }
        }
    }

    #[test]
    fn offsets_cover_the_word() {
        let text = "big Red fox";
        let t = Analyzer::new(AnalyzerConfig::default()).tokens(text);
        assert_eq!(&text[t[1].start..t[1].end], "Red");
    }

    #[test]
    fn config_bytes_round_trip() {
        for stop in [
            StopWords::None,
            StopWords::Classic,
            StopWords::Language(Language::English),
            StopWords::Language(Language::Russian),
        ] {
            for stem in [None, Some(Language::German)] {
                let c = AnalyzerConfig {
                    stop_words: stop,
                    stemmer: stem,
                };
                assert_eq!(AnalyzerConfig::from_bytes(c.to_bytes()), Some(c));
            }
        }
        assert_eq!(AnalyzerConfig::from_bytes([200, 0]), None);
    }
}
