//! `cairn merge`: the parts of a split build (`shard`) joined into the index one build would
//! have written.

use std::path::{Path, PathBuf};

use super::distill::distill_static;
use super::layout::{write_index, Layout};
use super::publish::Staging;
use super::{indexer, io, model, shard, MODEL_DIR, PART_FILE};
use crate::error::{Error, Result};
use crate::index::{vector, Index};

/// `cairn merge`: joins the parts of a split build into the index one build would have written
/// in `out`; returns it, what was written (for the summary line) and its bytes.
pub fn merge(
    parts: &[PathBuf],
    out: &Path,
    model: &Path,
    layout: Layout,
) -> Result<(Index, String, usize)> {
    let read = |dir: &PathBuf| -> Result<shard::Part> {
        let path = dir.join(PART_FILE);
        let bytes = std::fs::read(&path).map_err(io(format!(
            "cannot read {}: merge takes the folders `cairn index --shard I/N --out DIR` wrote",
            path.display()
        )))?;
        shard::Part::read(&bytes)
            .map_err(|e| Error::InvalidIndex(format!("{}: {e}", path.display())))
    };
    let joined = shard::join(parts.iter().map(read).collect::<Result<_>>()?)?;
    let (mut embedder, _) = model::load_source_model(model)?;
    // Leftover chunks and the static tier in the arithmetic the shards embedded in.
    embedder.set_arithmetic(joined.identity.arithmetic);
    if embedder.weights_sha256() != joined.identity.source_weights_sha256 {
        return Err(Error::Model(format!(
            "the shards were embedded by another model than {}; pass the shards' model with --model",
            model.display()
        )));
    }
    std::fs::create_dir_all(out).map_err(io(format!("cannot create {}", out.display())))?;
    let staging = Staging::new(out)?;
    // The browser's model, as the shards wrote it (theirs agree: the identities do).
    model::copy_web_model(
        &parts[0].join(MODEL_DIR),
        &staging.path.join(MODEL_DIR),
        &joined.identity,
    )?;
    let options = indexer::VectorOptions {
        embedder: &embedder,
        identity: joined.identity,
        previous: None,
        graph_from: joined.graph_from,
        graph: vector::GraphSettings::default(),
        precision: joined.precision,
    };
    let mut index = indexer::with_vectors(joined.index, joined.vectors, &options)?;
    let (rows_packs, _) = distill_static(&mut index, &embedder)?;
    let (path, bytes) = write_index(&index, rows_packs, layout, staging, true)?;
    Ok((index, path, bytes))
}
