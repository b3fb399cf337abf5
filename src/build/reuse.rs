//! What a rebuild takes from the index already in its output folder: the vectors of unchanged
//! chunks and the summaries of unchanged documents, so only what changed is embedded again.

use std::collections::HashSet;
use std::path::Path;

use super::indexer::Previous;
use crate::fragment::load::native::Folder;
use crate::index::{format, vector, Index, INDEX_FILE};

/// A text's 64-bit hash: the estimate's way to tell a chunk the previous index has a vector
/// for without keeping its text twice.
pub(crate) fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// What a rebuild into `out` may take from the index there, if it was embedded by the model
/// `identity` names: unchanged chunks keep their vectors and unchanged documents their
/// summaries; and the hashes of the texts it has vectors for, so the estimate counts only the
/// chunks to embed.
pub fn reusable(
    out: &Path,
    identity: &vector::ModelIdentity,
) -> (Option<Previous>, Option<HashSet<u64>>) {
    let old = previous_index(out);
    let previous = old.as_ref().and_then(|old| Previous::of(old, identity));
    let previous_texts = old.filter(|_| previous.is_some()).map(|old| {
        old.chunks
            .iter()
            .map(|c| text_hash(&crate::index::indexed_text(old.document_of(c), c)))
            .collect()
    });
    (previous, previous_texts)
}

/// The index in `out` a rebuild may take vectors and summaries from: its `index.cairn`, or its
/// fragments read back whole. None when there is none, or it does not read.
fn previous_index(out: &Path) -> Option<Index> {
    match std::fs::read(out.join(INDEX_FILE)) {
        Ok(bytes) => format::read(&bytes).ok(),
        Err(_) => Folder::open(out).and_then(|mut f| f.read_index()).ok(),
    }
}
