//! Cuts an existing single-file index into fragments with chosen sizes, for measuring what the
//! sizes cost per query (`bench/fragments.mjs`) without building the index again.
//!
//!   cargo run --example write_fragments -- INDEX_DIR OUT_DIR [--shard-postings N] [--shard-words N]
//!       [--text-bytes N] [--link-bytes N] [--pack-bytes N] [--partitions N] [--scan-codes N]

use std::path::PathBuf;

use cairn::fragment::write::{self, Options};
use cairn::index::format;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [source, out, ..] = &args[..] else {
        return Err("usage: write_fragments INDEX_DIR OUT_DIR [--shard-postings N] [--shard-words N] [--text-bytes N] [--link-bytes N] [--pack-bytes N] [--partitions N] [--scan-codes N]".into());
    };
    let flag = |name: &str| -> Option<usize> {
        let i = args.iter().position(|a| a == name)?;
        args.get(i + 1)?.parse().ok()
    };
    let defaults = Options::default();
    let options = Options {
        shard_postings: flag("--shard-postings").unwrap_or(defaults.shard_postings),
        shard_words: flag("--shard-words").unwrap_or(defaults.shard_words),
        text_bytes: flag("--text-bytes").unwrap_or(defaults.text_bytes),
        link_bytes: flag("--link-bytes").unwrap_or(defaults.link_bytes),
        pack_bytes: flag("--pack-bytes").unwrap_or(defaults.pack_bytes),
        partitions: flag("--partitions").or(defaults.partitions),
        scan_codes: flag("--scan-codes").map_or(defaults.scan_codes, |n| n as u32),
    };
    let started = std::time::Instant::now();
    let index = format::read(&std::fs::read(PathBuf::from(source).join("index.cairn"))?)?;
    let rows = match &index.statics {
        Some(rows) => cairn::store::rows::read_packs(rows, std::path::Path::new(source))?,
        None => Vec::new(),
    };
    let layout = write::write(&index, &PathBuf::from(out), &options, &rows)?;
    let total: usize = layout.packs.iter().map(|(_, b)| b.len()).sum();
    println!(
        "{} fragments in {} packs, {} bytes, meta {} bytes, {:.1} s ({options:?})",
        layout.fragments,
        layout.packs.len(),
        total,
        layout.meta.len(),
        started.elapsed().as_secs_f64()
    );
    // Copy the model beside the fragments (its word packs too), if the index has one.
    let model = PathBuf::from(source).join("model");
    if model.is_dir() {
        copy_dir(&model, &PathBuf::from(out).join("model"))?;
    }
    Ok(())
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)?.flatten() {
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}
