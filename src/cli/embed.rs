//! `cairn embed`: the embeddings of texts as JSON arrays, one a line (for checking targets agree).

use std::path::Path;

use anyhow::Result;
use cairn::build::MODEL_DIR;
use cairn::embed::{Embedder, ModelFiles};

pub(super) fn run_embed(model: &Path, texts: &[String]) -> Result<()> {
    let dir = if model.join(MODEL_DIR).is_dir() {
        model.join(MODEL_DIR)
    } else {
        model.to_path_buf()
    };
    let embedder = Embedder::load(ModelFiles::read_dir(&dir)?)?;
    for text in texts {
        println!("{}", serde_json::to_string(&embedder.embed(text)?)?);
    }
    Ok(())
}
