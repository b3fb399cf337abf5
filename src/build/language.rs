//! Which language a build analyzes its documents as: the one it is told (`--language de`), or,
//! told `auto`, the one most of its documents say they are in (`<html lang>`, front matter or
//! JSONL `lang`), English where none says. One index holds one language; documents that say
//! another are counted, so the command line can tell the user.

use std::collections::BTreeMap;

use crate::analyze::language::primary_subtag;
use crate::ingest::SourceDocument;

/// A build's language and what its documents said.
#[derive(Debug, PartialEq)]
pub struct LanguageChoice {
    /// The primary subtag the index is analyzed as.
    pub language: String,
    /// How many documents said which language, most first (ties by code).
    pub declared: Vec<(String, usize)>,
}

impl LanguageChoice {
    /// The documents that said a language other than the index's, by language.
    pub fn others(&self) -> impl Iterator<Item = &(String, usize)> {
        self.declared
            .iter()
            .filter(|(code, _)| *code != self.language)
    }
}

/// The language to analyze `documents` as: `told` ("auto", or a language tag).
pub fn choose_language(told: &str, documents: &[SourceDocument]) -> Result<LanguageChoice, String> {
    let mut counts = BTreeMap::<&str, usize>::new();
    for language in documents.iter().filter_map(|d| d.language.as_deref()) {
        *counts.entry(language).or_default() += 1;
    }
    let mut declared: Vec<(String, usize)> = counts
        .into_iter()
        .map(|(c, n)| (c.to_string(), n))
        .collect();
    declared.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let language = match told {
        "auto" => declared
            .first()
            .map_or_else(|| "en".to_string(), |(code, _)| code.clone()),
        tag => primary_subtag(tag)?,
    };
    Ok(LanguageChoice { language, declared })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saying(languages: &[Option<&str>]) -> Vec<SourceDocument> {
        languages
            .iter()
            .map(|l| SourceDocument {
                document: Default::default(),
                chunks: Vec::new(),
                links: Vec::new(),
                origin: String::new(),
                language: l.map(str::to_string),
            })
            .collect()
    }

    #[test]
    fn auto_takes_the_language_most_documents_say() {
        let docs = saying(&[
            Some("fr"),
            Some("de"),
            None,
            Some("de"),
            Some("fr"),
            Some("de"),
        ]);
        let choice = choose_language("auto", &docs).unwrap();
        assert_eq!(choice.language, "de");
        assert_eq!(
            choice.others().collect::<Vec<_>>(),
            [&("fr".to_string(), 2)]
        );
        assert_eq!(
            choose_language("auto", &saying(&[None, None]))
                .unwrap()
                .language,
            "en"
        );
        // Told, the documents do not count.
        assert_eq!(choose_language("pt-BR", &docs).unwrap().language, "pt");
        assert!(choose_language("German", &docs).is_err());
    }
}
