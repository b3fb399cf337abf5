//! Text analysis: turns text into index terms that remember where they came from.
//!
//! Words are found by Unicode word segmentation (UAX #29), then each run of Chinese or Japanese
//! ideographs (and kana that UAX #29 leaves one a word) becomes the overlapping pairs of its
//! characters ("简单的" → "简单", "单的"; one alone stays itself), as Lucene's CJK bigram filter
//! does: no dictionary to ship to the browser, the same terms at index and query time, and a
//! query matches any run of two or more characters of the text. Then words are lower-cased, stripped of diacritics (canonical decomposition, combining marks
//! removed), filtered against the language's stop list (and, as in most BM25 tokenizers, single
//! ASCII letters and digits) and stemmed with the language's Snowball stemmer (Pagefind's
//! `pagefind_stem`; English is Snowball 3). `language` owns which languages have which. Every
//! token keeps the byte range of the word in the original text, so matches can be highlighted
//! exactly where they occur.

use pagefind_stem::Stemmer;
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

mod fold;
pub mod language;
pub use language::Language;

/// How text is analyzed; stored in the index so queries are analyzed the same way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyzerSettings {
    pub stemming: bool,
    pub stop_words: bool,
    /// The language the text is analyzed as: a BCP 47 primary subtag ("en", "de", "zh").
    pub language: String,
    /// That language's stop words, folded and sorted, when it is not English (whose list every
    /// build has): the browser's modules read them from the index instead of carrying them all.
    pub stop_list: Vec<String>,
}

impl Default for AnalyzerSettings {
    fn default() -> Self {
        AnalyzerSettings {
            stemming: true,
            stop_words: true,
            language: "en".into(),
            stop_list: Vec::new(),
        }
    }
}

impl AnalyzerSettings {
    /// The settings for text in `language` (a language tag: "de", "pt-BR"; its primary subtag
    /// counts): its stemmer and stop words where Snowball and NLTK have them, folding only where
    /// they do not (Chinese, Japanese, Korean, …). An error for a tag that is not one.
    #[cfg(not(browser))]
    pub fn for_language(language: &str) -> Result<Self, String> {
        let code = language::primary_subtag(language)?;
        let stop_list = match Language::of(&code).and_then(|l| l.stop_words) {
            Some(_) if code == "en" => Vec::new(),
            Some(nltk) => {
                let fold = Analyzer::new(AnalyzerSettings::default());
                let mut words: Vec<String> =
                    stop_words::get(nltk).iter().map(|w| fold.fold(w)).collect();
                words.sort();
                words.dedup();
                words
            }
            None => Vec::new(),
        };
        Ok(AnalyzerSettings {
            language: code,
            stop_list,
            ..AnalyzerSettings::default()
        })
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
    /// The language's stemmer, when stemming is on and this build has it.
    stemmer: Option<Stem>,
    /// The language's elided articles (`language::elisions`), sorted.
    elisions: &'static [&'static str],
}

enum Stem {
    Snowball(Stemmer),
    /// One the page registered (`language::register_stemmer`), by its language: the browser's
    /// modules compile English's only and load the others' wasm when an index needs one.
    #[cfg(browser)]
    Registered(String),
}

impl Analyzer {
    pub fn new(settings: AnalyzerSettings) -> Self {
        let language = Language::of(&settings.language).filter(|_| settings.stemming);
        let stemmer = language.and_then(|l| match l.stemmer() {
            Some(algorithm) => Some(Stem::Snowball(Stemmer::create(algorithm))),
            #[cfg(browser)]
            None if language::registered(l.code) => Some(Stem::Registered(l.code.into())),
            None => None,
        });
        let elisions = language::elisions(&settings.language);
        Analyzer {
            settings,
            stemmer,
            elisions,
        }
    }

    /// Why this build cannot analyze text as the settings say, if it cannot: the language has a
    /// stemmer that is not compiled in and was not registered (`registerStemmer`, which the
    /// client calls with the package's `stem/<language>.wasm`).
    pub fn unsupported(&self) -> Option<String> {
        let language = Language::of(&self.settings.language)?;
        (self.settings.stemming && !language::can_stem(language.code)).then(|| {
            format!(
                "this index is analyzed as {} (`cairn index --language {}`), and its stemmer is not loaded: \
                 open it with the package's client (Cairn.open or <cairn-search>), which loads stem/{}.wasm, \
                 or call registerStemmer first",
                language.name, self.settings.language, self.settings.language
            )
        })
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

    /// A word as the index's words are: folded, and without an elided article ("L'Option" →
    /// "option"), which prefix and typo matching look up.
    pub fn word(&self, word: &str) -> String {
        let folded = self.fold(word);
        match folded.split_once('\'') {
            Some((article, rest))
                if !rest.is_empty() && self.elisions.binary_search(&article).is_ok() =>
            {
                rest.to_string()
            }
            _ => folded,
        }
    }

    fn for_each_token(&self, text: &str, mut emit: impl FnMut(&str, Token)) {
        let mut words = text.unicode_word_indices().peekable();
        // Whether the word before was an ideograph paired with this one.
        let mut paired = false;
        while let Some((start, word)) = words.next() {
            if is_ideograph(word) {
                let next = words
                    .peek()
                    .filter(|(at, w)| *at == start + word.len() && is_ideograph(w));
                let end = match next {
                    Some((at, w)) => at + w.len(),
                    None if paired => {
                        paired = false;
                        continue;
                    }
                    None => start + word.len(),
                };
                paired = next.is_some();
                let term = self.fold(&text[start..end]);
                if !(self.settings.stop_words && self.is_stop_word(&term)) {
                    emit(
                        &term,
                        Token {
                            term: term.clone(),
                            start,
                            end,
                        },
                    );
                }
                continue;
            }
            paired = false;
            // The token spans the whole word, an elided article included.
            let folded = self.word(word);
            if folded.len() == 1 || self.settings.stop_words && self.is_stop_word(&folded) {
                continue;
            }
            let term = match &self.stemmer {
                Some(Stem::Snowball(stemmer)) => stemmer.stem(&folded).into_owned(),
                #[cfg(browser)]
                Some(Stem::Registered(code)) => language::stem_registered(code, &folded),
                None => folded.clone(),
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

/// Whether a word of UAX #29 is one character that it gives a word of its own: a Chinese or
/// Japanese ideograph, or hiragana.
fn is_ideograph(word: &str) -> bool {
    let mut chars = word.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if matches!(c,
        '\u{3040}'..='\u{309F}'      // Hiragana
        | '\u{3400}'..='\u{4DBF}'    // CJK Unified Ideographs Extension A
        | '\u{4E00}'..='\u{9FFF}'    // CJK Unified Ideographs
        | '\u{F900}'..='\u{FAFF}'    // CJK Compatibility Ideographs
        | '\u{20000}'..='\u{3FFFF}'  // Extensions B to H
    ))
}

impl Analyzer {
    fn is_stop_word(&self, word: &str) -> bool {
        if self.settings.language == "en" {
            STOP_WORDS.binary_search(&word).is_ok()
        } else {
            let list = &self.settings.stop_list;
            list.binary_search_by(|w| w.as_str().cmp(word)).is_ok()
        }
    }
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

    #[cfg(not(browser))]
    #[test]
    fn other_languages_stem_and_stop_as_their_own() {
        let german = Analyzer::new(AnalyzerSettings::for_language("de-AT").unwrap());
        // "für" and "über" are German stop words, found after folding; the plural stems as the singular.
        assert_eq!(
            german.terms("Häuser für Kinder über dem Fluss"),
            german.terms("Haus Kind Fluss")
        );
        assert_eq!(german.terms("die und der"), Vec::<String>::new());
        let french = Analyzer::new(AnalyzerSettings::for_language("fr").unwrap());
        assert_eq!(
            french.terms("les chevaux continuaient"),
            french.terms("cheval continuer")
        );
        // Elided articles go ("l’option", typographic apostrophe and all, is "option").
        assert_eq!(
            french.terms("l’option d'options"),
            french.terms("option options")
        );
        assert_eq!(french.word("L’Option"), "option");
        // English's stop words are not French's: "the" is a word in a French text.
        assert_eq!(french.terms("the"), vec!["the"]);
        // Chinese has no stemmer or stop list here: a run of ideographs is the pairs of its
        // characters, folded only; one alone is itself.
        let chinese = Analyzer::new(AnalyzerSettings::for_language("zh-Hans").unwrap());
        assert_eq!(chinese.terms("搜索引擎"), vec!["搜索", "索引", "引擎"]);
        assert_eq!(chinese.terms("用 cairn 搜"), vec!["用", "cairn", "搜"]);
        let tokens = chinese.tokens("这是简单的Test，测试文本");
        let spans: Vec<(&str, &str)> = tokens
            .iter()
            .map(|t| (t.term.as_str(), &"这是简单的Test，测试文本"[t.start..t.end]))
            .collect();
        assert_eq!(
            spans,
            [
                ("这是", "这是"),
                ("是简", "是简"),
                ("简单", "简单"),
                ("单的", "单的"),
                ("test", "Test"),
                ("测试", "测试"),
                ("试文", "试文"),
                ("文本", "文本")
            ]
        );
        // Japanese: kanji and hiragana pair; a katakana word stays whole.
        let japanese = Analyzer::new(AnalyzerSettings::for_language("ja").unwrap());
        assert_eq!(
            japanese.terms("検索するテスト"),
            vec!["検索", "索す", "する", "テスト"]
        );
        assert!(chinese.unsupported().is_none() && german.unsupported().is_none());
        assert!(AnalyzerSettings::for_language("Deutsch").is_err());
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
            vec!["Ça", "va", "Naïve", "résumés", "東京", "search"]
        );
    }
}
