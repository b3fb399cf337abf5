//! Arbitrary text and query through the analyzer and every highlighting function: each byte
//! range must lie on character boundaries of the text, each UTF-16 range inside it, and each
//! snippet highlight inside the snippet and on the words it was found at.
#![no_main]

use cairn::analyze::{Analyzer, AnalyzerSettings};
use cairn::search::highlight::{
    best_lexical_sentence, highlights, match_range, sentences, snippet, term_matches, to_utf16, truncate_chars,
};
use cairn_fuzz::{check_utf16_range, utf16_len, write_seeds_if_asked};
use libfuzzer_sys::fuzz_target;

/// The input is `text 0xFF query 0xFF params`: 0xFF never occurs in UTF-8, so the parts stay
/// readable in a corpus file; each part is read as UTF-8 with bad sequences replaced. `params`
/// is the snippet length (2 bytes, little-endian, taken modulo 10 001), analyzer flags and a shift.
struct Input {
    text: String,
    query: String,
    snippet_length: u16,
    stemming: bool,
    stop_words: bool,
    shift: u8,
}

impl Input {
    fn parse(data: &[u8]) -> Input {
        let mut parts = data.splitn(3, |&b| b == 0xFF);
        let text = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
        let query = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
        let params = parts.next().unwrap_or_default();
        let byte = |i: usize, default: u8| params.get(i).copied().unwrap_or(default);
        Input {
            text,
            query,
            snippet_length: u16::from_le_bytes([byte(0, 160), byte(1, 0)]),
            stemming: byte(2, 0) & 1 == 0,
            stop_words: byte(2, 0) & 2 == 0,
            shift: byte(3, 0),
        }
    }
}

fn seeds() -> Vec<(String, Vec<u8>)> {
    let texts = [
        ("emoji", "🔍 Café searching in 東京: cafés SEARCH. 🏔️ The café in Zürich serves rare coffee beans.", "cafe search 京"),
        ("combining", "e\u{301}tude  Ünïcödé\u{200d}👩‍👩‍👧 s\u{308}earch… „quoted“ — dash. Next sentence!", "etude unicode search"),
        ("cjk", "東京都は日本の首都です。大阪は西にあります。検索エンジン。", "東京 検索"),
        ("rtl", "مرحبا بالعالم. שלום עולם! Mixed עברית and English words.", "words עולם"),
        ("spaces", "   \n\n\t lead and trail   \u{3000}\u{a0} spaces.   ", "lead trail spaces"),
    ];
    texts
        .iter()
        .map(|(name, text, query)| {
            let mut bytes = Vec::new();
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(0xFF);
            bytes.extend_from_slice(query.as_bytes());
            bytes.push(0xFF);
            bytes.extend_from_slice(&[30, 0, 0, 2]);
            (name.to_string(), bytes)
        })
        .collect()
}

fn on_boundaries(text: &str, r: &std::ops::Range<usize>, what: &str) {
    assert!(r.start <= r.end && r.end <= text.len(), "{what}: {r:?} outside {} bytes", text.len());
    assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end), "{what}: {r:?} not on char boundaries of {text:?}");
}

fuzz_target!(
    init: {
        write_seeds_if_asked("analyze_highlight", seeds);
    },
    |data: &[u8]| {
        let input = Input::parse(data);
        let analyzer = Analyzer::new(AnalyzerSettings { stemming: input.stemming, stop_words: input.stop_words, ..AnalyzerSettings::default() });
        let text = input.text.as_str();
        for token in analyzer.tokens(text) {
            on_boundaries(text, &(token.start..token.end), "token");
            assert!(token.start < token.end && !token.term.is_empty(), "empty token {token:?}");
        }
        let terms = analyzer.terms(&input.query);
        let matches = term_matches(&analyzer, text, &terms);
        for m in &matches {
            on_boundaries(text, &m.bytes, "term match");
            assert!(terms.contains(&m.term));
        }
        assert!(matches.windows(2).all(|w| w[0].bytes.end <= w[1].bytes.start), "matches out of order");
        let n16 = utf16_len(text) as u32;
        for h in highlights(&analyzer, text, &terms) {
            check_utf16_range(text, h.start, h.end, "highlight");
        }
        let shift = input.shift as u32;
        for h in to_utf16(text, &matches, shift) {
            assert!(h.start >= shift && h.end <= n16 + shift && h.start <= h.end, "shifted highlight {h:?}");
        }
        let sentences = sentences(text);
        for s in &sentences {
            on_boundaries(text, s, "sentence");
            assert!(s.start < s.end, "empty sentence");
        }
        let best = best_lexical_sentence(&sentences, &matches, |t| t.len() as f32);
        assert!(best.is_none_or(|b| b < sentences.len()));
        let length = input.snippet_length as usize % 10_001;
        let mut foci: Vec<std::ops::Range<usize>> = sentences.clone();
        foci.truncate(4);
        foci.extend(best.map(|b| sentences[b].clone()));
        for focus in &foci {
            let m = match_range(text, focus);
            check_utf16_range(text, m.start, m.start + m.length, "match");
            let snip = snippet(text, focus, &matches, length);
            for h in &snip.highlights {
                check_utf16_range(&snip.text, h.start, h.end, "snippet highlight");
                let units: Vec<u16> = snip.text.encode_utf16().collect();
                let word = String::from_utf16(&units[h.start as usize..h.end as usize]).unwrap();
                assert!(
                    matches.iter().any(|m| text[m.bytes.clone()] == word && m.term == h.term),
                    "snippet highlight {h:?} ({word:?}) is not a match of the text"
                );
            }
            // The snippet is the text's own words, cropped: about `length` characters plus the
            // marks and at most 20 characters a side for the word boundaries.
            let chars = snip.text.chars().count();
            assert!(chars <= length + 2 + 40, "snippet of {chars} chars for length {length}");
        }
        let cut = truncate_chars(text, length);
        assert!(text.starts_with(cut) && cut.chars().count() <= length);
    }
);
