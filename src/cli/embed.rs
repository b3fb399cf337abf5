//! `cairn embed`: the embeddings of texts as JSON arrays, one a line (for checking targets agree).

use std::path::PathBuf;

use anyhow::Result;
use cairn::build::MODEL_DIR;
use cairn::embed::{Embedder, ModelFiles};

#[derive(clap::Args)]
pub(super) struct EmbedArgs {
    /// A model folder, or an index folder (its model/ is used).
    #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
    model: PathBuf,
    #[arg(required = true)]
    texts: Vec<String>,
}

pub(super) fn run_embed(EmbedArgs { model, texts }: EmbedArgs) -> Result<()> {
    let dir = if model.join(MODEL_DIR).is_dir() {
        model.join(MODEL_DIR)
    } else {
        model.to_path_buf()
    };
    let embedder = Embedder::load(ModelFiles::read_dir(&dir)?)?;
    for text in &texts {
        println!("{}", serde_json::to_string(&embedder.embed(text)?)?);
    }
    Ok(())
}
