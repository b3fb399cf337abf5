//! Text analysis: turns text into index terms that remember where they came from.
//!
//! Words are found by Unicode word segmentation (UAX #29), then lower-cased, stripped of
//! diacritics (canonical decomposition, combining marks removed), filtered against the Snowball English stop list
//! (and, as in most BM25 tokenizers, single ASCII letters and digits) and stemmed with the
//! Snowball 3 English stemmer (Pagefind's `pagefind_stem`). Every token keeps the byte range of the word
//! in the original text, so matches can be highlighted exactly where they occur.

use pagefind_stem::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

mod fold;

/// How text is analyzed; stored in the index so queries are analyzed the same way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyzerSettings {
    pub stemming: bool,
    pub stop_words: bool,
}

impl Default for AnalyzerSettings {
    fn default() -> Self {
        AnalyzerSettings {
            stemming: true,
            stop_words: true,
        }
    }
}

/// A term and the byte range of the word it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub term: String,
    pub start: usize,
    pub end: usize,
}

pub struct Analyzer {
    settings: AnalyzerSettings,
    stemmer: Stemmer,
}

impl Analyzer {
    pub fn new(settings: AnalyzerSettings) -> Self {
        Analyzer {
            settings,
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    pub fn settings(&self) -> &AnalyzerSettings {
        &self.settings
    }

    /// Every indexable token of `text`, in order.
    pub fn tokens(&self, text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        self.for_each_token(text, |_, token| out.push(token));
        out
    }

    /// The terms of `text` without offsets, for indexing and queries.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_token(text, |_, token| out.push(token.term));
        out
    }

    /// Each term of `text` with the word it came from, folded but not stemmed ("installing" →
    /// ("installing", "instal")): what prefix and typo matching look words up by.
    pub fn words_and_terms(&self, text: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        self.for_each_token(text, |word, token| out.push((word.to_string(), token.term)));
        out
    }

    /// A word lower-cased and stripped of diacritics, as the index's words are: NFD with the
    /// combining marks removed, each character looked up in `fold`'s table.
    pub fn fold(&self, word: &str) -> String {
        let mut folded = String::with_capacity(word.len());
        for c in word.chars() {
            fold::fold_char(c, |d| folded.extend(d.to_lowercase()));
        }
        // Typographic apostrophes fold to the ASCII one, so "user’s" and "user's" agree.
        if folded.contains('\u{2019}') {
            folded.replace('\u{2019}', "'")
        } else {
            folded
        }
    }

    fn for_each_token(&self, text: &str, mut emit: impl FnMut(&str, Token)) {
        for (start, word) in text.unicode_word_indices() {
            let folded = self.fold(word);
            if folded.len() == 1 || self.settings.stop_words && is_stop_word(&folded) {
                continue;
            }
            let term = if self.settings.stemming {
                self.stemmer.stem(&folded).into_owned()
            } else {
                folded.clone()
            };
            if term.is_empty() {
                continue;
            }
            emit(
                &folded,
                Token {
                    term,
                    start,
                    end: start + word.len(),
                },
            );
        }
    }
}

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// The Snowball project's English stop list (snowballstem.org/algorithms/english/stop.txt),
/// sorted for binary search.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren't",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can't",
    "cannot",
    "could",
    "couldn't",
    "did",
    "didn't",
    "do",
    "does",
    "doesn't",
    "doing",
    "don't",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn't",
    "has",
    "hasn't",
    "have",
    "haven't",
    "having",
    "he",
    "he'd",
    "he'll",
    "he's",
    "her",
    "here",
    "here's",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "how's",
    "i",
    "i'd",
    "i'll",
    "i'm",
    "i've",
    "if",
    "in",
    "into",
    "is",
    "isn't",
    "it",
    "it's",
    "its",
    "itself",
    "let's",
    "me",
    "more",
    "most",
    "mustn't",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "shan't",
    "she",
    "she'd",
    "she'll",
    "she's",
    "should",
    "shouldn't",
    "so",
    "some",
    "such",
    "than",
    "that",
    "that's",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "there's",
    "these",
    "they",
    "they'd",
    "they'll",
    "they're",
    "they've",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "wasn't",
    "we",
    "we'd",
    "we'll",
    "we're",
    "we've",
    "were",
    "weren't",
    "what",
    "what's",
    "when",
    "when's",
    "where",
    "where's",
    "which",
    "while",
    "who",
    "who's",
    "whom",
    "why",
    "why's",
    "with",
    "won't",
    "would",
    "wouldn't",
    "you",
    "you'd",
    "you'll",
    "you're",
    "you've",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn analyzer() -> Analyzer {
        Analyzer::new(AnalyzerSettings::default())
    }

    #[test]
    fn folding_is_nfd_without_marks_for_every_character() {
        use unicode_normalization::char::is_combining_mark;
        use unicode_normalization::UnicodeNormalization;
        let nfd = |w: &str| -> String {
            let s: String = w
                .nfd()
                .filter(|c| !is_combining_mark(*c))
                .flat_map(char::to_lowercase)
                .collect();
            s.replace('\u{2019}', "'")
        };
        let a = analyzer();
        for c in (0..0x11_0000).filter_map(char::from_u32) {
            // Alone, and after a base letter with a mark (reordering happens among marks).
            for w in [c.to_string(), format!("a\u{301}{c}\u{323}")] {
                assert_eq!(a.fold(&w), nfd(&w), "{:?}", c as u32);
            }
        }
    }

    #[test]
    fn stop_list_is_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn stems_folds_and_drops_stop_words() {
        let terms = analyzer().terms("The Runners were RUNNING to the Café");
        assert_eq!(terms, vec!["runner", "run", "cafe"]);
    }

    #[test]
    fn stems_with_snowball_3() {
        // Snowball 2 conflated these pairs; Snowball 3 keeps them apart.
        for (a, b) in [
            ("organic", "organ"),
            ("university", "universe"),
            ("international", "intern"),
        ] {
            assert_ne!(analyzer().terms(a), analyzer().terms(b), "{a} / {b}");
        }
        assert_eq!(
            analyzer().terms("generously generous"),
            vec!["generous", "generous"]
        );
    }

    #[test]
    fn offsets_point_at_original_words() {
        let text = "Ça va? Naïve résumés, 東京 and 🔍 search";
        for token in analyzer().tokens(text) {
            let word = &text[token.start..token.end];
            assert!(!word.is_empty(), "{token:?}");
            assert_eq!(analyzer().terms(word), vec![token.term.clone()], "{word}");
        }
        let words: Vec<&str> = analyzer()
            .tokens(text)
            .iter()
            .map(|t| &text[t.start..t.end])
            .collect();
        assert_eq!(
            words,
            vec!["Ça", "va", "Naïve", "résumés", "東", "京", "search"]
        );
    }
}
