//! Building an index (native only): numbers the documents and chunks, builds the lexical index
//! and, with a model, embeds every chunk and builds the vector index.

use rayon::prelude::*;

use super::lexical::LexicalIndex;
use super::vector::{GraphSettings, ModelIdentity, VectorIndex};
use super::{indexed_text, Index, IndexSettings};
use crate::embed::Embedder;
use crate::error::Result;
use crate::ingest::SourceDocument;

/// How the vectors are indexed.
pub struct VectorOptions<'a> {
    pub embedder: &'a Embedder,
    pub identity: ModelIdentity,
    /// Build an HNSW graph from this many chunks on; fewer are scanned exactly.
    pub graph_from: usize,
    pub graph: GraphSettings,
    /// Chunks per model call.
    pub batch_size: usize,
}

/// Assembles an index; `progress(done, total)` is called as chunks are embedded.
pub fn build(
    sources: Vec<SourceDocument>,
    settings: IndexSettings,
    vectors: Option<VectorOptions<'_>>,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<Index> {
    let mut documents = Vec::with_capacity(sources.len());
    let mut chunks = Vec::new();
    for (doc, source) in sources.into_iter().enumerate() {
        documents.push(source.document);
        chunks.extend(source.chunks.into_iter().map(|mut c| {
            c.doc = doc as u32;
            c
        }));
    }
    let texts: Vec<String> = chunks.iter().map(|c| indexed_text(&documents[c.doc as usize], c)).collect();
    let analyzer = crate::analyze::Analyzer::new(settings.analyzer.clone());
    let terms: Vec<Vec<String>> = texts.par_iter().map(|t| analyzer.terms(t)).collect();
    let lexical = LexicalIndex::build(settings.bm25, terms);

    let vectors = match vectors {
        None => None,
        Some(options) => {
            let flat = embed_all(options.embedder, &texts, options.batch_size, &progress)?;
            Some(if chunks.len() >= options.graph_from {
                VectorIndex::graph(options.identity, flat, options.graph)
            } else {
                VectorIndex::flat(options.identity, flat)
            })
        }
    };
    Ok(Index { settings, documents, chunks, lexical, vectors })
}

/// Embeds texts in batches of similar length (less padding), returning the vectors in text
/// order, flattened.
pub fn embed_all(
    embedder: &Embedder,
    texts: &[String],
    batch_size: usize,
    progress: &(impl Fn(usize, usize) + Sync),
) -> Result<Vec<f32>> {
    let dim = embedder.dimension();
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| (texts[i].len(), i));
    let mut flat = vec![0f32; texts.len() * dim];
    let mut done = 0;
    for batch in order.chunks(batch_size.max(1)) {
        let inputs: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
        let vectors = embedder.embed_batch(&inputs)?;
        for (&i, v) in batch.iter().zip(vectors) {
            flat[i * dim..(i + 1) * dim].copy_from_slice(&v);
        }
        done += batch.len();
        progress(done, texts.len());
    }
    Ok(flat)
}
