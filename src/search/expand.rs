//! Query expansion for search as you type: which indexed terms each query word may match.
//!
//! A word matches its own term (weight 1). With `prefix`, the word being typed (the query's last,
//! when nothing follows it) also matches the indexed words it begins, the most frequent first;
//! with `fuzzy`, a word the index does not have matches the indexed words within an edit
//! distance. Both look words up as they were written (folded, not stemmed: "instal" begins
//! "installation"), in the index's word FST, and weigh what they find below an exact match, so a
//! complete word still ranks first. Lexical scoring takes each word's best term (`search_words`).
//!
//! The model reads the query with each misspelled word replaced by its nearest indexed word
//! (`Expanded::corrected`): it would otherwise embed the typo's word pieces.

use std::ops::Range;

use fst::automaton::Levenshtein;

use super::query::Query;
use crate::hit::{Expansion, ExpansionKind, SearchOptions};
use crate::index::lexical::{LexicalIndex, QueryWord};

/// The most terms a prefix expands to, by chunk frequency.
pub const PREFIX_TERMS: usize = 16;
/// The most terms a misspelled word expands to, by chunk frequency.
pub const FUZZY_TERMS: usize = 8;
/// The shortest prefix that expands, in characters.
pub const PREFIX_MIN_CHARS: usize = 2;
/// The longest word typo matching looks at, in characters (the automaton grows with it).
pub const FUZZY_MAX_CHARS: usize = 32;
/// The most words of one query that typo matching looks at.
pub const FUZZY_WORDS: usize = 16;

/// The query's words as the lexical index searches them, and the expansions among them.
pub struct Expanded {
    pub words: Vec<QueryWord>,
    pub expansions: Vec<Expansion>,
    /// Each misspelled word's byte range in the query and the indexed word typo matching put
    /// first (the nearest, then the one most chunks hold), in query order.
    corrections: Vec<(Range<usize>, String)>,
}

impl Expanded {
    /// `query` with each misspelled word replaced by its correction ("retreival evaluation" →
    /// "retrieval evaluation"): what the model embeds. None when nothing was corrected.
    pub fn corrected(&self, query: &str) -> Option<String> {
        if self.corrections.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(query.len() + 8);
        let mut at = 0;
        for (range, word) in &self.corrections {
            out.push_str(&query[at..range.start]);
            out.push_str(word);
            at = range.end;
        }
        out.push_str(&query[at..]);
        Some(out)
    }
}

pub fn expand(index: &LexicalIndex, query: &Query, options: &SearchOptions) -> Expanded {
    let mut words = Vec::new();
    let mut expansions = Vec::new();
    let mut corrections = Vec::new();
    let tokens = &query.tokens;
    // The query's own terms: a typo's correction is never one of them (in "hyperpituitarism and
    // hypopituitarism" the first word is not a misspelling of the second, which the query has).
    let mut own_terms: Vec<u32> = tokens
        .iter()
        .filter_map(|t| index.term_id(&t.term))
        .collect();
    crate::order::sort(&mut own_terms);
    own_terms.dedup();
    let mut fuzzy_words = 0;
    for (token, folded) in tokens.iter().zip(&query.folded) {
        let exact = index.term_id(&token.term);
        let mut word = QueryWord {
            alternatives: exact.map(|t| vec![(t, 1.0)]).unwrap_or_default(),
        };
        if exact.is_none() && fuzzy_words < FUZZY_WORDS {
            fuzzy_words += 1;
            let found = fuzzy(index, folded, options, &own_terms);
            if let Some((word, ..)) = found.first() {
                corrections.push((token.start..token.end, word.clone()));
            }
            for found in found {
                word.alternatives.push((found.1, found.2));
                expansions.push(expansion(index, folded, found, ExpansionKind::Fuzzy));
            }
        }
        if !word.alternatives.is_empty() {
            words.push(word);
        }
    }
    if options.prefix {
        if let Some(typed) = &query.typed {
            let (start, folded) = (typed.start, &typed.folded);
            // A finished stop word after other words ("how to") is not being typed further.
            if folded.chars().count() >= PREFIX_MIN_CHARS
                && !(typed.stop_word && !tokens.is_empty())
            {
                // The typed word's own query word, if it has one, gains the completions.
                let own = tokens.iter().position(|t| t.start == start).and_then(|i| {
                    let term = index.term_id(&tokens[i].term)?;
                    words
                        .iter()
                        .position(|w| w.alternatives.first().is_some_and(|a| a.0 == term))
                });
                let mut completions = QueryWord::default();
                let target = match own {
                    Some(i) => &mut words[i],
                    None => &mut completions,
                };
                for found in prefixed(index, folded) {
                    if !target.alternatives.iter().any(|a| a.0 == found.1) {
                        target.alternatives.push((found.1, found.2));
                        expansions.push(expansion(index, folded, found, ExpansionKind::Prefix));
                    }
                }
                if !completions.alternatives.is_empty() {
                    words.push(completions);
                }
            }
        }
    }
    Expanded {
        words,
        expansions,
        corrections,
    }
}

/// What a query word (`query`, folded) was expanded to: an indexed word found for it (word,
/// term, weight).
fn expansion(
    index: &LexicalIndex,
    query: &str,
    (word, term, weight): (String, u32, f32),
    kind: ExpansionKind,
) -> Expansion {
    Expansion {
        query: query.to_string(),
        word,
        term: index.term(term).to_string(),
        kind,
        weight,
    }
}

/// The indexed words `typed` begins (not itself), one per term, the most frequent terms first:
/// (word, term, weight). The weight grows with how much of the word is typed: 0.5 + 0.4 ×
/// typed / word characters, below 1.
fn prefixed(index: &LexicalIndex, typed: &str) -> Vec<(String, u32, f32)> {
    let typed_chars = typed.chars().count() as f32;
    let mut found: Vec<(String, u32, f32)> = Vec::new();
    for position in index.words_starting(typed) {
        let word = &index.words[position];
        if word == typed {
            continue;
        }
        let weight = 0.5 + 0.4 * typed_chars / word.chars().count() as f32;
        found.push((word.clone(), index.term_of_word(position), weight));
    }
    best_per_term(index, found, PREFIX_TERMS)
}

/// The indexed words nearest `word` within the allowed edit distance (one per term, none of
/// the `own` terms of the query, sorted): those at distance 1 (weight 0.5), or when there are none,
/// those at distance 2 (weight 0.3); the terms most chunks hold first. A nearer word is the
/// likelier meaning, so farther ones are not added.
fn fuzzy(
    index: &LexicalIndex,
    word: &str,
    options: &SearchOptions,
    own: &[u32],
) -> Vec<(String, u32, f32)> {
    let chars = word.chars().count();
    let max = options.fuzzy.distance(chars);
    if max == 0 || chars > FUZZY_MAX_CHARS {
        return Vec::new();
    }
    let mut found: Vec<(String, u32, f32)> = Vec::new();
    for distance in 1..=max {
        let Ok(automaton) = Levenshtein::new(word, distance) else {
            break;
        };
        for position in index.words_matching(&automaton) {
            let term = index.term_of_word(position);
            if own.binary_search(&term).is_err() {
                let weight = if distance == 1 { 0.5 } else { 0.3 };
                found.push((index.words[position].clone(), term, weight));
            }
        }
        if !found.is_empty() {
            break;
        }
    }
    best_per_term(index, found, FUZZY_TERMS)
}

/// One entry per term (its highest weight), at most `max`: the terms most chunks hold, ties by
/// term.
fn best_per_term(
    index: &LexicalIndex,
    mut found: Vec<(String, u32, f32)>,
    max: usize,
) -> Vec<(String, u32, f32)> {
    crate::order::sort_by(&mut found, |a, b| {
        a.1.cmp(&b.1).then(b.2.total_cmp(&a.2)).then(a.0.cmp(&b.0))
    });
    found.dedup_by_key(|f| f.1);
    let frequency = |f: &(String, u32, f32)| index.chunk_frequency(f.1);
    crate::order::sort_by(&mut found, |a, b| {
        frequency(b).cmp(&frequency(a)).then(a.1.cmp(&b.1))
    });
    found.truncate(max);
    found
}
