//! The languages the analyzer knows: for each, its Snowball stemmer (`pagefind_stem`; every one on
//! native and WASI builds, English's only in the browser's modules, which must stay small) and
//! its NLTK stop list (the `stop-words` crate, read at build time; the index carries the list).
//! A language missing here is analyzed by folding alone.

use pagefind_stem::Algorithm;

/// A language cairn stems or stops.
pub struct Language {
    /// Its BCP 47 primary subtag.
    pub code: &'static str,
    /// Its English name, for messages.
    pub name: &'static str,
    /// Its Snowball stemmer's name, if Snowball has one.
    pub snowball: Option<&'static str>,
    /// Its NLTK stop list's code in `stop-words`, if NLTK has one.
    pub stop_words: Option<&'static str>,
}

macro_rules! languages {
    ($(($code:literal, $name:literal, $snowball:expr, $stop:expr)),* $(,)?) => {
        /// Every language with a stemmer or a stop list, by code.
        pub const LANGUAGES: &[Language] = &[$(Language { code: $code, name: $name, snowball: $snowball, stop_words: $stop }),*];
    };
}

languages![
    ("ar", "Arabic", Some("arabic"), Some("ar")),
    ("az", "Azerbaijani", None, Some("az")),
    ("ca", "Catalan", Some("catalan"), None),
    ("da", "Danish", Some("danish"), Some("da")),
    ("de", "German", Some("german"), Some("de")),
    ("el", "Greek", Some("greek"), Some("el")),
    ("en", "English", Some("english"), Some("en")),
    ("eo", "Esperanto", Some("esperanto"), None),
    ("es", "Spanish", Some("spanish"), Some("es")),
    ("et", "Estonian", Some("estonian"), None),
    ("eu", "Basque", Some("basque"), None),
    ("fi", "Finnish", Some("finnish"), Some("fi")),
    ("fr", "French", Some("french"), Some("fr")),
    ("ga", "Irish", Some("irish"), None),
    ("hi", "Hindi", Some("hindi"), None),
    ("hu", "Hungarian", Some("hungarian"), Some("hu")),
    ("hy", "Armenian", Some("armenian"), None),
    ("id", "Indonesian", Some("indonesian"), Some("id")),
    ("it", "Italian", Some("italian"), Some("it")),
    ("kk", "Kazakh", None, Some("kk")),
    ("lt", "Lithuanian", Some("lithuanian"), None),
    ("ne", "Nepali", Some("nepali"), Some("ne")),
    ("nl", "Dutch", Some("dutch"), Some("nl")),
    ("no", "Norwegian", Some("norwegian"), Some("no")),
    ("pl", "Polish", Some("polish"), None),
    ("pt", "Portuguese", Some("portuguese"), Some("pt")),
    ("ro", "Romanian", Some("romanian"), Some("ro")),
    ("ru", "Russian", Some("russian"), Some("ru")),
    ("sl", "Slovenian", None, Some("sl")),
    ("sr", "Serbian", Some("serbian"), None),
    ("sv", "Swedish", Some("swedish"), Some("sv")),
    ("ta", "Tamil", Some("tamil"), None),
    ("tg", "Tajik", None, Some("tg")),
    ("tr", "Turkish", Some("turkish"), Some("tr")),
    ("yi", "Yiddish", Some("yiddish"), None),
];

impl Language {
    /// The language of a primary subtag, if cairn stems or stops it.
    pub fn of(code: &str) -> Option<&'static Language> {
        LANGUAGES.iter().find(|l| l.code == code)
    }

    /// Its stemmer, if Snowball has one and this build compiled it in.
    pub fn stemmer(&self) -> Option<Algorithm> {
        Some(match self.snowball? {
            "english" => Algorithm::English,
            #[cfg(not(browser))]
            other => other_stemmer(other)?,
            #[cfg(browser)]
            _ => return None,
        })
    }
}

#[cfg(not(browser))]
fn other_stemmer(name: &str) -> Option<Algorithm> {
    use Algorithm::*;
    Some(match name {
        "arabic" => Arabic,
        "armenian" => Armenian,
        "basque" => Basque,
        "catalan" => Catalan,
        "danish" => Danish,
        "dutch" => Dutch,
        "esperanto" => Esperanto,
        "estonian" => Estonian,
        "finnish" => Finnish,
        "french" => French,
        "german" => German,
        "greek" => Greek,
        "hindi" => Hindi,
        "hungarian" => Hungarian,
        "indonesian" => Indonesian,
        "irish" => Irish,
        "italian" => Italian,
        "lithuanian" => Lithuanian,
        "nepali" => Nepali,
        "norwegian" => Norwegian,
        "polish" => Polish,
        "portuguese" => Portuguese,
        "romanian" => Romanian,
        "russian" => Russian,
        "serbian" => Serbian,
        "spanish" => Spanish,
        "swedish" => Swedish,
        "tamil" => Tamil,
        "turkish" => Turkish,
        "yiddish" => Yiddish,
        _ => return None,
    })
}

#[cfg(browser)]
type Stem = std::rc::Rc<dyn Fn(&str) -> String>;

#[cfg(browser)]
thread_local! {
    /// The stemmers the page registered, by language code (one thread: the wasm's).
    static REGISTERED: std::cell::RefCell<Vec<(String, Stem)>> = Default::default();
}

/// Registers the stemmer of `code` (a language this build has no stemmer for): `stem` takes a
/// folded word and gives its stem, as `pagefind_stem` does natively.
#[cfg(browser)]
pub fn register_stemmer(code: &str, stem: Stem) {
    REGISTERED.with_borrow_mut(|r| {
        r.retain(|(c, _)| c != code);
        r.push((code.to_string(), stem));
    });
}

#[cfg(browser)]
pub(super) fn registered(code: &str) -> bool {
    REGISTERED.with_borrow(|r| r.iter().any(|(c, _)| c == code))
}

#[cfg(browser)]
pub(super) fn stem_registered(code: &str, word: &str) -> String {
    // Taken out of the registry first: the stemmer is the page's code, which may call back in.
    let stem =
        REGISTERED.with_borrow(|r| r.iter().find(|(c, _)| c == code).map(|(_, s)| s.clone()));
    stem.map_or_else(|| word.to_string(), |stem| stem(word))
}

/// Whether this build stems `code` as the index's builder did: it has no stemmer, or its
/// stemmer is compiled in or registered.
pub fn can_stem(code: &str) -> bool {
    let Some(language) = Language::of(code) else {
        return true;
    };
    #[cfg(browser)]
    if registered(code) {
        return true;
    }
    language.snowball.is_none() || language.stemmer().is_some()
}

/// The articles and pronouns `code` writes elided before a vowel ("l'option", "dell'anno"), as
/// Lucene's ElisionFilter strips them: a word is indexed without one ("option"), so it matches
/// the word alone.
pub fn elisions(code: &str) -> &'static [&'static str] {
    match code {
        "ca" => &["d", "l", "m", "n", "s", "t"],
        "fr" => &[
            "c", "d", "j", "jusqu", "l", "lorsqu", "m", "n", "puisqu", "qu", "quoiqu", "s", "t",
        ],
        "it" => &[
            "agl", "all", "c", "d", "dagl", "dall", "degl", "dell", "gl", "l", "m", "negl", "nell",
            "s", "sugl", "sull", "t", "un", "v",
        ],
        _ => &[],
    }
}

/// The primary subtag of a language tag, lower-cased ("pt-BR" → "pt", "nb" → "no": Norwegian
/// Bokmål and Nynorsk share a stemmer); an error for text that is not a language tag.
pub fn primary_subtag(tag: &str) -> Result<String, String> {
    let primary = tag
        .trim()
        .split(['-', '_'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if !(2..=3).contains(&primary.len()) || !primary.bytes().all(|b| b.is_ascii_lowercase()) {
        return Err(format!(
            "{tag:?} is not a language tag; give one such as en, de, fr, pt-BR or zh (cairn stems {})",
            LANGUAGES.iter().filter(|l| l.snowball.is_some()).map(|l| l.code).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(match primary.as_str() {
        "nb" | "nn" => "no".into(),
        _ => primary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Natively, where every stemmer is compiled in and the stop lists are.
    #[cfg(not(browser))]
    #[test]
    fn the_table_is_sorted_and_every_stemmer_and_list_exists() {
        assert!(LANGUAGES.windows(2).all(|w| w[0].code < w[1].code));
        for l in LANGUAGES {
            assert_eq!(l.stemmer().is_some(), l.snowball.is_some(), "{}", l.code);
            if let Some(code) = l.stop_words {
                assert!(!stop_words::get(code).is_empty(), "{}", l.code);
            }
        }
    }

    #[test]
    fn elisions_are_sorted() {
        for code in ["ca", "fr", "it"] {
            assert!(elisions(code).windows(2).all(|w| w[0] < w[1]), "{code}");
        }
    }

    #[test]
    fn language_tags() {
        assert_eq!(primary_subtag("pt-BR").unwrap(), "pt");
        assert_eq!(primary_subtag("nb").unwrap(), "no");
        assert_eq!(primary_subtag(" DE ").unwrap(), "de");
        assert!(primary_subtag("deutsch")
            .unwrap_err()
            .contains("not a language tag"));
        assert!(primary_subtag("").is_err());
    }
}
