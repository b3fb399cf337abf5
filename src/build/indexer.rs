//! Building an index: numbers the documents and chunks, builds the lexical index
//! and, with a model, embeds every chunk and builds the vector index; then each document's
//! summary (`summary`).

use rayon::prelude::*;

use crate::error::Result;
use crate::index::lexical::{ChunkTerms, LexicalIndex};
use crate::index::vector::{GraphSettings, ModelIdentity, Precision, VectorIndex};
use crate::index::{indexed_text, Index, IndexSettings};
use crate::ingest::SourceDocument;

use super::chunk_embedder::{embed_all, ChunkEmbedder};

/// How the vectors are indexed.
pub struct VectorOptions<'a> {
    pub embedder: &'a dyn ChunkEmbedder,
    pub identity: ModelIdentity,
    /// Build an HNSW graph from this many chunks on; fewer are scanned exactly.
    pub graph_from: usize,
    pub graph: GraphSettings,
    /// How a scanned index stores its vectors.
    pub precision: Precision,
    /// What an earlier build of the same model computed: an unchanged chunk is not embedded
    /// again, nor an unchanged document's summary chosen again.
    pub previous: Option<&'a Previous>,
}

/// An earlier index's chunk vectors by the text the model read (title, headings and text), and
/// its summaries by document id and text. Only an index embedded by the same model (weights,
/// config and tokenizer) qualifies; a vector comes back as it was stored (the int8 ones
/// quantize again to the same bytes).
#[derive(Default)]
pub struct Previous {
    vectors: std::collections::HashMap<String, Vec<f32>>,
    summaries: std::collections::HashMap<(String, String), Option<String>>,
    /// How many chunk vectors the build took from it.
    reused: std::cell::Cell<usize>,
}

impl Previous {
    pub fn of(index: &Index, identity: &ModelIdentity) -> Option<Self> {
        let vectors = index
            .vectors
            .as_ref()
            .filter(|v| v.model.same_embeddings(identity))?;
        let dim = vectors.dimension();
        let flat = vectors.to_flat();
        let by_text = index
            .chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    indexed_text(index.document_of(c), c),
                    flat[i * dim..(i + 1) * dim].to_vec(),
                )
            })
            .collect();
        let summaries = (0..index.documents.len() as u32)
            .map(|d| {
                let document = &index.documents[d as usize];
                (
                    (document.id.clone(), index.document_text(d)),
                    document.summary.clone(),
                )
            })
            .collect();
        Some(Previous {
            vectors: by_text,
            summaries,
            reused: Default::default(),
        })
    }

    /// How many chunk vectors the build took from it (not embedded again).
    pub fn reused(&self) -> usize {
        self.reused.get()
    }
}

/// Assembles an index; `progress(done, total)` is called as chunks are embedded.
pub fn build(
    sources: Vec<SourceDocument>,
    settings: IndexSettings,
    vectors: Option<VectorOptions<'_>>,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<Index> {
    if let Some(why) = crate::analyze::Analyzer::new(settings.analyzer.clone()).unsupported() {
        return Err(crate::error::Error::InvalidInput(why));
    }
    let (mut index, texts) = assemble(sources, settings);
    match vectors {
        None => {
            if index.settings.summaries {
                let analyzer = crate::analyze::Analyzer::new(index.settings.analyzer.clone());
                let summaries = super::summary::lexical(
                    &index.documents,
                    &index.chunks,
                    &index.lexical,
                    &analyzer,
                );
                super::summary::keep(&mut index.documents, &index.chunks, summaries);
            }
            Ok(index)
        }
        Some(options) => {
            let none = Previous::default();
            let previous = options.previous.unwrap_or(&none);
            let flat = embed_new(options.embedder, &texts, previous, &progress)?;
            with_vectors(index, flat, &options)
        }
    }
}

/// The index without vectors or summaries (the part of a build that needs no model, and the
/// same in every shard of a split build), and each chunk's text as the model reads it.
pub fn assemble(sources: Vec<SourceDocument>, settings: IndexSettings) -> (Index, Vec<String>) {
    let mut documents = Vec::with_capacity(sources.len());
    let mut chunks = Vec::new();
    let mut raw_links = Vec::new();
    for (doc, source) in sources.into_iter().enumerate() {
        documents.push(source.document);
        raw_links.push(source.links);
        chunks.extend(source.chunks.into_iter().map(|mut c| {
            c.doc = doc as u32;
            c
        }));
    }
    let links = resolve_links(&documents, raw_links);
    let texts: Vec<String> = chunks
        .iter()
        .map(|c| indexed_text(&documents[c.doc as usize], c))
        .collect();
    let analyzer = crate::analyze::Analyzer::new(settings.analyzer.clone());
    // Each chunk's terms, and its distinct words (folded, unstemmed) with their terms.
    let (terms, words): (Vec<ChunkTerms>, Vec<Vec<(String, String)>>) = texts
        .par_iter()
        .zip(&chunks)
        .map(|(t, c)| {
            let mut pairs = analyzer.words_and_terms(t);
            let terms = pairs.iter().map(|(_, term)| term.clone()).collect();
            pairs.sort_unstable();
            pairs.dedup();
            (
                ChunkTerms {
                    document: c.doc,
                    terms,
                },
                pairs,
            )
        })
        .unzip();
    let mut lexical = LexicalIndex::build(settings.bm25, terms);
    lexical.set_words(words.into_iter().flatten());
    let index = Index::new(settings, documents, chunks, links, lexical, None);
    (index, texts)
}

/// Adds every chunk's vector (`flat`, chunk order) to an assembled index, and with
/// `settings.summaries` each document's summary. Summaries are chosen from the vectors as the
/// index stores them, so a build that took vectors from an earlier index or from shards chooses
/// what a build from scratch does.
pub fn with_vectors(mut index: Index, flat: Vec<f32>, options: &VectorOptions) -> Result<Index> {
    // The browser builds no graph (it would take minutes there): it scans.
    let vectors = if cfg!(not(browser)) && index.chunks.len() >= options.graph_from {
        VectorIndex::graph(options.identity.clone(), flat, options.graph)
    } else {
        VectorIndex::flat(options.identity.clone(), flat, options.precision)
    };
    if index.settings.summaries {
        let none = Previous::default();
        let previous = options.previous.unwrap_or(&none);
        let summaries = super::summary::semantic(
            &index.documents,
            &index.chunks,
            &vectors.to_flat(),
            options.embedder,
            &previous.summaries,
        )?;
        super::summary::keep(&mut index.documents, &index.chunks, summaries);
    }
    index.vectors = Some(vectors);
    Ok(index)
}

/// Turns each document's link targets (paths relative to the document, as written in its
/// source) into links between indexed documents; links to anything else are dropped.
fn resolve_links(
    documents: &[crate::index::Document],
    raw: Vec<Vec<crate::ingest::RawLink>>,
) -> Vec<crate::index::DocLink> {
    let by_id: std::collections::HashMap<&str, u32> = documents
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i as u32))
        .collect();
    let mut links = Vec::new();
    for (from, targets) in raw.into_iter().enumerate() {
        let base = documents[from]
            .id
            .rsplit_once('/')
            .map_or("", |(dir, _)| dir);
        for link in targets {
            let Some(target) = resolve_path(base, &link.target) else {
                continue;
            };
            // A link to a folder means its index page, as a web server serves it.
            let index_page = format!(
                "{}index.html",
                if target.is_empty() {
                    String::new()
                } else {
                    format!("{target}/")
                }
            );
            if let Some(&to) = by_id
                .get(target.as_str())
                .or_else(|| by_id.get(index_page.as_str()))
            {
                if to != from as u32 {
                    links.push(crate::index::DocLink {
                        from: from as u32,
                        to,
                        text: link.text,
                        rel: link.rel,
                    });
                }
            }
        }
    }
    links.sort_by_key(|a| (a.from, a.to));
    links.dedup_by(|a, b| a.from == b.from && a.to == b.to);
    links
}

/// `target` (a link as written: relative, maybe with `#fragment` or `?query`) resolved against
/// the folder `base`; None for links that leave the site (a scheme, `//`, or above the root).
fn resolve_path(base: &str, target: &str) -> Option<String> {
    let target = target.split(['#', '?']).next().unwrap_or("");
    if target.is_empty()
        || target.contains("://")
        || target.starts_with("//")
        || target.starts_with("mailto:")
    {
        return None;
    }
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        base.split('/').filter(|p| !p.is_empty()).collect()
    };
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Like `embed_all`, but a text `previous` has a vector for is not embedded again.
fn embed_new(
    embedder: &dyn ChunkEmbedder,
    texts: &[String],
    previous: &Previous,
    progress: &(impl Fn(usize, usize) + Sync),
) -> Result<Vec<f32>> {
    let dim = embedder.dimension();
    let known = |t: &String| previous.vectors.get(t).filter(|v| v.len() == dim);
    let new: Vec<String> = texts
        .iter()
        .filter(|t| known(t).is_none())
        .cloned()
        .collect();
    let reused = texts.len() - new.len();
    previous.reused.set(reused);
    let embedded = embed_all(embedder, &new, &|done, _| {
        progress(reused + done, texts.len())
    })?;
    let mut flat = Vec::with_capacity(texts.len() * dim);
    let mut next = embedded.chunks(dim);
    for text in texts {
        match known(text) {
            Some(v) => flat.extend_from_slice(v),
            None => flat.extend_from_slice(next.next().expect("one vector a new text")),
        }
    }
    Ok(flat)
}

#[cfg(test)]
mod tests {
    use super::resolve_path;

    #[test]
    fn resolves_relative_links() {
        assert_eq!(
            resolve_path("guide", "install.md#build").as_deref(),
            Some("guide/install.md")
        );
        assert_eq!(
            resolve_path("guide", "../notes.txt").as_deref(),
            Some("notes.txt")
        );
        assert_eq!(
            resolve_path("", "/guide/install.md").as_deref(),
            Some("guide/install.md")
        );
        assert_eq!(resolve_path("", "../outside.md"), None);
        assert_eq!(resolve_path("a", "https://example.org/x.md"), None);
    }
}
