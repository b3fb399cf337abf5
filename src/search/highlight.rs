//! Highlighting: finds every occurrence of the query's terms in a text by analyzing the text the
//! same way the index did, and reports the words' ranges in UTF-16 code units, the unit of
//! JavaScript strings.

use crate::analyze::Analyzer;
use crate::hit::Highlight;

/// The ranges of `text` whose analyzed term is one of `terms`, in UTF-16 code units.
pub fn highlights(analyzer: &Analyzer, text: &str, terms: &[String]) -> Vec<Highlight> {
    if terms.is_empty() {
        return Vec::new();
    }
    let mut utf16 = Utf16Offsets::new(text);
    analyzer
        .tokens(text)
        .into_iter()
        .filter(|token| terms.contains(&token.term))
        .map(|token| Highlight { start: utf16.at(token.start), end: utf16.at(token.end), term: token.term })
        .collect()
}

/// Converts increasing byte offsets of a text into UTF-16 offsets in one pass over the text.
pub struct Utf16Offsets<'a> {
    text: &'a str,
    byte: usize,
    unit: u32,
}

impl<'a> Utf16Offsets<'a> {
    pub fn new(text: &'a str) -> Self {
        Utf16Offsets { text, byte: 0, unit: 0 }
    }

    /// The UTF-16 offset of byte offset `byte` (a char boundary). Offsets asked for out of order
    /// restart the count from the beginning.
    pub fn at(&mut self, byte: usize) -> u32 {
        if byte < self.byte {
            self.byte = 0;
            self.unit = 0;
        }
        self.unit += self.text[self.byte..byte].chars().map(|c| c.len_utf16() as u32).sum::<u32>();
        self.byte = byte;
        self.unit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::AnalyzerSettings;

    #[test]
    fn utf16_ranges_slice_the_matched_words() {
        let analyzer = Analyzer::new(AnalyzerSettings::default());
        let text = "🔍 Café searching in 東京: cafés SEARCH";
        let terms = analyzer.terms("cafe search 京");
        let found = highlights(&analyzer, text, &terms);
        let utf16: Vec<u16> = text.encode_utf16().collect();
        let words: Vec<String> =
            found.iter().map(|h| String::from_utf16(&utf16[h.start as usize..h.end as usize]).unwrap()).collect();
        assert_eq!(words, vec!["Café", "searching", "京", "cafés", "SEARCH"]);
        assert_eq!(found[0].start, 3, "the emoji is two UTF-16 units, then a space");
    }
}
