//! What embeds the chunks (`ChunkEmbedder`: the sentence model, or a stand-in in tests), and
//! embedding many texts on every core, for the build and for summaries.

use rayon::prelude::*;

use crate::error::Result;

/// What embeds the chunks: the sentence model (`embed::Embedder`), or a stand-in in tests.
/// Texts are embedded one at a time, on every core at once.
pub trait ChunkEmbedder: Sync {
    fn dimension(&self) -> usize;
    /// A normalized vector that depends on `text` alone.
    fn embed(&self, text: &str) -> Result<Vec<f32>>;
    /// The vectors of short texts, flattened, for work where a vector need not be the text's
    /// alone (the static tier's starting rows): in padded batches where that is faster.
    fn embed_short(&self, texts: &[String]) -> Result<Vec<f32>> {
        embed_all(self, texts, &|_, _| {})
    }
}

#[cfg(feature = "model")]
impl ChunkEmbedder for crate::embed::Embedder {
    fn dimension(&self) -> usize {
        self.dimension()
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>> {
        self.embed(text)
    }
    /// Batches of 64 in order, on every core: the same batches, so the same bits, every run.
    fn embed_short(&self, texts: &[String]) -> Result<Vec<f32>> {
        let batches: Vec<Vec<Vec<f32>>> = texts
            .par_chunks(64)
            .map(|batch| self.embed_batch(&batch.iter().map(String::as_str).collect::<Vec<_>>()))
            .collect::<Result<_>>()?;
        Ok(batches.into_iter().flatten().flatten().collect())
    }
}

/// Embeds texts on every core, each alone (no padding, and a vector depends on its text only),
/// longest first so the cores finish together; the vectors come back in text order, flattened.
pub fn embed_all<E: ChunkEmbedder + ?Sized>(
    embedder: &E,
    texts: &[String],
    progress: &(impl Fn(usize, usize) + Sync),
) -> Result<Vec<f32>> {
    let dim = embedder.dimension();
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(texts[i].len()), i));
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut vectors: Vec<(usize, Vec<f32>)> = order
        .into_par_iter()
        .map(|i| {
            let vector = embedder.embed(&texts[i])?;
            if vector.len() != dim {
                return Err(crate::error::Error::Model(format!(
                    "the model gave a vector of {} components, not {dim}",
                    vector.len()
                )));
            }
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, texts.len());
            Ok((i, vector))
        })
        .collect::<Result<_>>()?;
    vectors.sort_unstable_by_key(|(i, _)| *i);
    Ok(vectors.into_iter().flat_map(|(_, v)| v).collect())
}
