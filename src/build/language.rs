//! Which language a build analyzes its documents as: the one it is told (`--language de`), or,
//! told `auto`, the one most of its documents say they are in (`<html lang>`, front matter or
//! JSONL `lang`), English where none says. One index holds one language: told `auto`, documents
//! in several languages are split (`split_by_language`) into one index a language, each in its
//! own folder, which `languages.json` beside them lists (`LanguageManifest`) for a client to
//! choose from by the page's language.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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

/// Documents split by the language they say, one group a language, most documents first; a
/// document that says none goes with the most common language (`choice.language`).
pub fn split_by_language(
    choice: &LanguageChoice,
    documents: Vec<SourceDocument>,
) -> Vec<(String, Vec<SourceDocument>)> {
    let mut groups: Vec<(String, Vec<SourceDocument>)> = choice
        .declared
        .iter()
        .map(|(code, _)| (code.clone(), Vec::new()))
        .collect();
    if !groups.iter().any(|(code, _)| *code == choice.language) {
        groups.push((choice.language.clone(), Vec::new()));
    }
    for document in documents {
        let code = document.language.as_deref().unwrap_or(&choice.language);
        let at = groups
            .iter()
            .position(|(c, _)| c == code)
            .expect("every declared language has a group");
        groups[at].1.push(document);
    }
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    groups
}

/// `languages.json`: the indexes of a site in several languages, each in its own folder beside
/// it, for a client given the folder to choose one by the page's language.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LanguageManifest {
    /// Always "cairn-languages": what tells this file from a site's own `languages.json`.
    pub format: String,
    /// The language a page whose language has no index gets: the one most documents are in.
    pub default: String,
    pub languages: Vec<LanguageEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LanguageEntry {
    /// The primary language subtag ("de").
    pub language: String,
    /// The index's folder, relative to the manifest ("de/").
    pub path: String,
    pub documents: usize,
}

impl LanguageManifest {
    pub const FILE: &'static str = "languages.json";
    const FORMAT: &'static str = "cairn-languages";

    /// The manifest of `groups` (as `split_by_language` gave them, each with its document count).
    pub fn new(groups: &[(String, usize)]) -> Self {
        LanguageManifest {
            format: Self::FORMAT.into(),
            default: groups.first().map_or("en".into(), |(c, _)| c.clone()),
            languages: groups
                .iter()
                .map(|(language, documents)| LanguageEntry {
                    language: language.clone(),
                    path: format!("{language}/"),
                    documents: *documents,
                })
                .collect(),
        }
    }

    /// The manifest in `bytes`, if they are one cairn wrote.
    pub fn read(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice::<Self>(bytes)
            .ok()
            .filter(|m| m.format == Self::FORMAT)
    }
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

    #[test]
    fn documents_split_by_language_with_the_silent_ones_in_the_most_common() {
        let docs = saying(&[Some("fr"), None, Some("de"), Some("fr"), None]);
        let choice = choose_language("auto", &docs).unwrap();
        let groups = split_by_language(&choice, docs);
        let sizes: Vec<(&str, usize)> = groups.iter().map(|(c, d)| (c.as_str(), d.len())).collect();
        assert_eq!(sizes, [("fr", 4), ("de", 1)]);
        let manifest = LanguageManifest::new(&[("fr".into(), 4), ("de".into(), 1)]);
        assert_eq!(manifest.default, "fr");
        let bytes = serde_json::to_vec(&manifest).unwrap();
        assert_eq!(LanguageManifest::read(&bytes), Some(manifest));
        assert_eq!(LanguageManifest::read(br#"{"languages": []}"#), None);
    }
}
