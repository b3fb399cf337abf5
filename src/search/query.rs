//! A query analyzed once, at the top of a search, with the analyzer of the index it searches:
//! its words with their offsets, their terms (checked against the limits) and the word being
//! typed. Retrieval, expansion, the static tier and the model's corrected text all read this
//! one value.

use super::limits;
use crate::analyze::{Analyzer, Token};
use crate::error::{Error, Result};

pub struct Query<'q> {
    pub text: &'q str,
    /// Its tokens (stop words left out), in order.
    pub tokens: Vec<Token>,
    /// Each token's word as written, folded but not stemmed: what typo matching looks up.
    pub folded: Vec<String>,
    /// The tokens' terms, in order.
    pub terms: Vec<String>,
    /// The word being typed: the last, when nothing (no space, no punctuation) follows it.
    pub typed: Option<Typed>,
}

/// The word being typed: its byte offset in the query, folded, and whether it is a stop word.
pub struct Typed {
    pub start: usize,
    pub folded: String,
    pub stop_word: bool,
}

impl<'q> Query<'q> {
    /// `text` analyzed; an error when it is over the limits.
    pub fn new(analyzer: &Analyzer, text: &'q str) -> Result<Self> {
        if let Some(why) = analyzer.unsupported() {
            return Err(Error::InvalidInput(why));
        }
        let chars = text.chars().count();
        if chars > limits::QUERY_CHARS {
            return Err(Error::InvalidInput(format!(
                "the query has {chars} characters; cairn searches at most {} (shorten it)",
                limits::QUERY_CHARS
            )));
        }
        let tokens = analyzer.tokens(text);
        if tokens.len() > limits::QUERY_TERMS {
            return Err(Error::InvalidInput(format!(
                "the query has {} terms (stop words left out); cairn searches at most {} (shorten it)",
                tokens.len(),
                limits::QUERY_TERMS
            )));
        }
        use unicode_segmentation::UnicodeSegmentation;
        let typed = text
            .unicode_word_indices()
            .last()
            .filter(|(start, word)| start + word.len() == text.len())
            .map(|(start, word)| Typed {
                start,
                folded: analyzer.word(word),
                stop_word: analyzer.terms(word).is_empty(),
            });
        Ok(Query {
            text,
            folded: tokens
                .iter()
                .map(|t| analyzer.word(&text[t.start..t.end]))
                .collect(),
            terms: tokens.iter().map(|t| t.term.clone()).collect(),
            tokens,
            typed,
        })
    }
}
