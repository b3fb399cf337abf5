//! `cairn merge`: joins the parts of a split build (`cairn::build::merge`) and says what it wrote.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use cairn::build::Layout;

#[derive(clap::Args)]
pub(super) struct MergeArgs {
    /// The folders the shards wrote, one a shard, in any order.
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// The index folder to write.
    #[arg(long)]
    out: PathBuf,
    /// The sentence model's folder: the one the shards embedded with (checked; it embeds the
    /// summaries' sentences).
    #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
    model: PathBuf,
    /// One file, or fragments a browser fetches only as a query needs them, as
    /// `cairn index --layout` (the same files one build would have written).
    #[arg(long, value_enum, default_value_t = Layout::Auto)]
    layout: Layout,
}

/// `cairn merge`: joins the parts of a split build into the index one build would have written.
pub(super) fn merge(args: MergeArgs) -> Result<()> {
    let MergeArgs {
        parts,
        out,
        model,
        layout,
    } = args;
    let started = Instant::now();
    let (index, path, bytes) = cairn::build::merge(&parts, &out, &model, layout)?;
    println!(
        "merged {} parts: {} documents, {} chunks, {bytes} bytes ({path}) in {:.1} s",
        parts.len(),
        index.documents.len(),
        index.chunks.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
