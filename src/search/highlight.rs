//! Highlighting: finds every occurrence of the query's terms in a text by analyzing the text the
//! same way the index did, and reports the words' ranges in UTF-16 code units, the unit of
//! JavaScript strings. Also picks the best-matching sentence (`match`) and crops a snippet
//! around it with its own highlights.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

use crate::analyze::Analyzer;
use crate::hit::{Highlight, MatchRange, Snippet};

/// A query term's occurrence, as a byte range of the text.
#[derive(Debug, Clone, PartialEq)]
pub struct TermMatch {
    pub bytes: Range<usize>,
    pub term: String,
}

/// The byte ranges of `text` whose analyzed term is one of `terms`, in order and apart: the
/// overlapping pairs of a run of ideographs ("東京", "京都" in "東京都") are one match, named by
/// its first term.
pub fn term_matches(analyzer: &Analyzer, text: &str, terms: &[String]) -> Vec<TermMatch> {
    if terms.is_empty() {
        return Vec::new();
    }
    let mut matches: Vec<TermMatch> = Vec::new();
    for token in analyzer.tokens(text) {
        if !terms.contains(&token.term) {
            continue;
        }
        match matches.last_mut() {
            Some(last) if token.start < last.bytes.end => {
                last.bytes.end = last.bytes.end.max(token.end)
            }
            _ => matches.push(TermMatch {
                bytes: token.start..token.end,
                term: token.term,
            }),
        }
    }
    matches
}

/// The ranges of `text` whose analyzed term is one of `terms`, in UTF-16 code units.
pub fn highlights(analyzer: &Analyzer, text: &str, terms: &[String]) -> Vec<Highlight> {
    to_utf16(text, &term_matches(analyzer, text, terms), 0)
}

/// Converts matches (byte ranges of `text`) to UTF-16 highlights, shifted by `shift` units.
pub fn to_utf16(text: &str, matches: &[TermMatch], shift: u32) -> Vec<Highlight> {
    let mut utf16 = Utf16Offsets::new(text);
    matches
        .iter()
        .map(|m| Highlight {
            start: shift + utf16.at(m.bytes.start),
            end: shift + utf16.at(m.bytes.end),
            term: m.term.clone(),
        })
        .collect()
}

/// The sentences of a text, as trimmed byte ranges.
pub fn sentences(text: &str) -> Vec<Range<usize>> {
    text.split_sentence_bound_indices()
        .filter_map(|(start, s)| {
            let lead = s.len() - s.trim_start().len();
            let trimmed = s.trim();
            (!trimmed.is_empty()).then(|| start + lead..start + lead + trimmed.len())
        })
        .collect()
}

/// The sentence with the most query-term weight (the IDF of each distinct term it contains),
/// if any sentence contains a term.
pub fn best_lexical_sentence(
    sentences: &[Range<usize>],
    matches: &[TermMatch],
    idf: impl Fn(&str) -> f32,
) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, sentence) in sentences.iter().enumerate() {
        let mut terms: Vec<&str> = matches
            .iter()
            .filter(|m| sentence.contains(&m.bytes.start))
            .map(|m| m.term.as_str())
            .collect();
        crate::order::sort(&mut terms);
        terms.dedup();
        let weight: f32 = terms.iter().map(|t| idf(t)).sum();
        if weight > 0.0 && best.is_none_or(|(_, w)| weight > w) {
            best = Some((i, weight));
        }
    }
    best.map(|(i, _)| i)
}

/// The first `max` characters of `text` (all of it when shorter).
pub fn truncate_chars(text: &str, max: usize) -> &str {
    text.char_indices()
        .nth(max)
        .map_or(text, |(i, _)| &text[..i])
}

/// A byte range of `text` as a UTF-16 `MatchRange`.
pub fn match_range(text: &str, range: &Range<usize>) -> MatchRange {
    let mut utf16 = Utf16Offsets::new(text);
    let start = utf16.at(range.start);
    MatchRange {
        start,
        length: utf16.at(range.end) - start,
    }
}

/// About `length` characters of `text` around `focus`: from the sentence's start, or a third of
/// the length before its first query term when that is further in (moved back when the text
/// ends first), cut at word boundaries, "…" where cropped, with the highlights inside.
pub fn snippet(text: &str, focus: &Range<usize>, matches: &[TermMatch], length: usize) -> Snippet {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    let at_char = |byte: usize| chars.partition_point(|&(b, _)| b < byte);
    let anchor = matches
        .iter()
        .find(|m| focus.contains(&m.bytes.start))
        .map_or(focus.start, |m| m.bytes.start);
    let mut first = at_char(focus.start).max(at_char(anchor).saturating_sub(length / 3));
    let mut last = first.saturating_add(length).min(n);
    if last - first < length {
        first = last.saturating_sub(length);
    }
    // Snap to word boundaries, looking at most 20 characters away.
    if first > 0 {
        if let Some(ws) = (first.saturating_sub(20)..first)
            .rev()
            .find(|&i| chars[i].1.is_whitespace())
        {
            first = ws + 1;
        }
    }
    if last < n {
        if let Some(ws) =
            (last..last.saturating_add(20).min(n)).find(|&i| chars[i].1.is_whitespace())
        {
            last = ws;
        }
    }
    let byte = |c: usize| chars.get(c).map_or(text.len(), |&(b, _)| b);
    let (start, end) = (byte(first), byte(last));
    let prefix = if start > 0 { "…" } else { "" };
    let body = &text[start..end];
    let snippet_text = format!(
        "{prefix}{}{}",
        body.trim_end(),
        if end < text.len() { "…" } else { "" }
    );
    let inside: Vec<TermMatch> = matches
        .iter()
        .filter(|m| m.bytes.start >= start && m.bytes.end <= start + body.trim_end().len())
        .map(|m| TermMatch {
            bytes: m.bytes.start - start..m.bytes.end - start,
            term: m.term.clone(),
        })
        .collect();
    let highlights = to_utf16(body, &inside, prefix.encode_utf16().count() as u32);
    Snippet {
        text: snippet_text,
        highlights,
    }
}

/// Converts increasing byte offsets of a text into UTF-16 offsets in one pass over the text.
pub struct Utf16Offsets<'a> {
    text: &'a str,
    byte: usize,
    unit: u32,
}

impl<'a> Utf16Offsets<'a> {
    pub fn new(text: &'a str) -> Self {
        Utf16Offsets {
            text,
            byte: 0,
            unit: 0,
        }
    }

    /// The UTF-16 offset of byte offset `byte` (a char boundary). Offsets asked for out of order
    /// restart the count from the beginning.
    pub fn at(&mut self, byte: usize) -> u32 {
        if byte < self.byte {
            self.byte = 0;
            self.unit = 0;
        }
        self.unit += self.text[self.byte..byte]
            .chars()
            .map(|c| c.len_utf16() as u32)
            .sum::<u32>();
        self.byte = byte;
        self.unit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::AnalyzerSettings;

    fn slice(text: &str, start: u32, end: u32) -> String {
        let units: Vec<u16> = text.encode_utf16().collect();
        String::from_utf16(&units[start as usize..end as usize]).unwrap()
    }

    #[test]
    fn utf16_ranges_slice_the_matched_words() {
        let analyzer = Analyzer::new(AnalyzerSettings::default());
        let text = "🔍 Café searching in 東京: cafés SEARCH";
        let terms = analyzer.terms("cafe search 東京");
        let found = highlights(&analyzer, text, &terms);
        let words: Vec<String> = found.iter().map(|h| slice(text, h.start, h.end)).collect();
        assert_eq!(words, vec!["Café", "searching", "東京", "cafés", "SEARCH"]);
        assert_eq!(
            found[0].start, 3,
            "the emoji is two UTF-16 units, then a space"
        );
    }

    #[test]
    fn overlapping_pairs_of_ideographs_are_one_highlight() {
        let analyzer = Analyzer::new(AnalyzerSettings::default());
        let text = "京都と東京都の間";
        let found = highlights(&analyzer, text, &analyzer.terms("東京都 京都"));
        let words: Vec<String> = found.iter().map(|h| slice(text, h.start, h.end)).collect();
        assert_eq!(words, vec!["京都", "東京都"]);
    }

    #[test]
    fn match_is_the_weightiest_sentence_and_snippet_keeps_highlights() {
        let analyzer = Analyzer::new(AnalyzerSettings::default());
        let text =
            "Cairns mark trails. 🏔️ The café in Zürich serves rare coffee beans. Coffee is common.";
        let terms = analyzer.terms("rare coffee");
        let matches = term_matches(&analyzer, text, &terms);
        let sentences = sentences(text);
        let idf = |t: &str| if t == "rare" { 3.0 } else { 1.0 };
        let best = best_lexical_sentence(&sentences, &matches, idf).unwrap();
        let m = match_range(text, &sentences[best]);
        assert_eq!(
            slice(text, m.start, m.start + m.length),
            "🏔️ The café in Zürich serves rare coffee beans."
        );
        let snip = snippet(text, &sentences[best], &matches, 30);
        assert!(
            snip.text.starts_with('…') && snip.text.ends_with('…'),
            "{}",
            snip.text
        );
        let words: Vec<String> = snip
            .highlights
            .iter()
            .map(|h| slice(&snip.text, h.start, h.end))
            .collect();
        assert!(
            !words.is_empty()
                && words
                    .iter()
                    .all(|w| w == "rare" || w.eq_ignore_ascii_case("coffee")),
            "{words:?}"
        );
    }
}
