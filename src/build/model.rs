//! The models of a build: the f32 model the index is embedded with, and the one written beside
//! the index for the browser (`model/`), and a split build's copy of it. (What the index records
//! of them is `Embedder::identity`.)

use std::collections::HashMap;
use std::path::Path;

use super::{io, publish::write_synced};
use crate::embed::{self, Embedder, ModelFiles};
use crate::error::{Error, Result};
use crate::fragment;
use crate::index::vector;

/// Precision of the model weights written for the browser.
#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum WebWeights {
    /// The linear layers in q8_0, the word table as int8 rows fetched by token (about 12 MB
    /// before gzip, a query's rows a few kilobytes).
    Q8,
    F16,
    F32,
}

/// Loads the f32 model the index embeddings are made with, and keeps its files' bytes (read
/// once, so the model folder may be the output's own `model/`).
pub fn load_source_model(dir: &Path) -> Result<(Embedder, ModelFiles)> {
    let files = ModelFiles::read_dir(dir)?;
    let embedder = Embedder::load(files.clone())?;
    Ok((embedder, files))
}

/// The most word rows `common.cairnrows` holds: about 800 kB (750 kB gzip) beside the 8-bit
/// model's 12 MB.
const COMMON_ROWS: usize = 2048;

/// The most texts `common_tokens` reads (evenly spread over them): a large site's common tokens
/// are its sample's, for about a second of tokenizing.
const COMMON_SAMPLE: usize = 5000;

/// The tokens that most of the chunks' `texts` have (by how many texts have each, then id,
/// counted over at most `COMMON_SAMPLE` of them) and the token that pads a batch, at most
/// `COMMON_ROWS` in all, ascending; and the share of the texts' tokens they are.
pub fn common_tokens<'a>(
    embedder: &Embedder,
    texts: impl Iterator<Item = &'a str>,
) -> Result<(Vec<u32>, f64)> {
    let texts: Vec<&str> = texts.collect();
    let mut counts: HashMap<u32, (u64, u64)> = HashMap::new(); // texts, occurrences
    let mut ids = Vec::new();
    for text in texts
        .iter()
        .step_by(texts.len().div_ceil(COMMON_SAMPLE).max(1))
    {
        ids.clear();
        ids.extend(embedder.token_ids(text)?);
        for &id in &ids {
            counts.entry(id).or_default().1 += 1;
        }
        ids.sort_unstable();
        ids.dedup();
        for &id in &ids {
            counts.entry(id).or_default().0 += 1;
        }
    }
    let mut tokens: Vec<(u32, u64, u64)> =
        counts.into_iter().map(|(id, (c, o))| (id, c, o)).collect();
    tokens.sort_unstable_by_key(|&(id, texts, _)| (std::cmp::Reverse(texts), id));
    let total: u64 = tokens.iter().map(|t| t.2).sum();
    tokens.truncate(COMMON_ROWS - 1); // and the pad token
    let covered: u64 = tokens.iter().map(|t| t.2).sum();
    let mut ids: Vec<u32> = tokens.into_iter().map(|t| t.0).collect();
    ids.push(embedder.pad_id());
    ids.sort_unstable();
    ids.dedup();
    Ok((ids, covered as f64 / total.max(1) as f64))
}

/// Writes the model a browser downloads (weights, tokenizer, config, and the 8-bit model's word
/// rows under `p/`, those of the `common` tokens also in `common.cairnrows`, which a browser
/// fetches with the model) into `out`; returns the weights' SHA-256 and file name.
pub fn write_web_model(
    source: &ModelFiles,
    out: &Path,
    precision: WebWeights,
    common: &[u32],
) -> Result<(String, &'static str)> {
    std::fs::create_dir_all(out)?;
    let (name, written) = match precision {
        WebWeights::Q8 => {
            let model = embed::quantize_model(source)?;
            fragment::write::save_packs(&model.packs, out)?;
            if !common.is_empty() {
                let selection =
                    crate::store::rows::write_selection(&model.rows, &model.packs, common);
                write_synced(&out.join(ModelFiles::COMMON), &selection)?;
            }
            (ModelFiles::QUANTIZED, model.weights)
        }
        WebWeights::F16 => {
            let weights = out.join(ModelFiles::WEIGHTS);
            embed::write_f16_weights(&source.weights, &weights)?;
            (ModelFiles::WEIGHTS, std::fs::read(&weights)?)
        }
        WebWeights::F32 => (ModelFiles::WEIGHTS, source.weights.clone()),
    };
    write_synced(&out.join(name), &written)?;
    write_synced(&out.join(ModelFiles::TOKENIZER), &source.tokenizer)?;
    write_synced(&out.join(ModelFiles::CONFIG), &source.config)?;
    Ok((crate::store::pack::sha256_hex(&written), name))
}

/// Copies the browser's model of an index (as its identity names it) from `from` into `to`.
pub(super) fn copy_web_model(
    from: &Path,
    to: &Path,
    identity: &vector::ModelIdentity,
) -> Result<()> {
    let weights = std::fs::read(from.join(&identity.web_weights_file)).map_err(io(format!(
        "cannot read the model the shard wrote in {}",
        from.display()
    )))?;
    if crate::store::pack::sha256_hex(&weights) != identity.web_weights_sha256 {
        return Err(Error::Model(format!(
            "{} is not the model its part was written with; build that shard again",
            from.display()
        )));
    }
    std::fs::create_dir_all(to)?;
    if embed::is_quantized(&weights) {
        let packs = embed::word_packs(&weights)?
            .into_iter()
            .map(|name| {
                let path = from.join(fragment::PACK_DIR).join(&name);
                Ok((
                    name,
                    std::fs::read(&path).map_err(io(format!("cannot read {}", path.display())))?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        fragment::write::save_packs(&packs, to)?;
    }
    write_synced(&to.join(&identity.web_weights_file), &weights)?;
    for name in [ModelFiles::TOKENIZER, ModelFiles::CONFIG] {
        write_synced(&to.join(name), &std::fs::read(from.join(name))?)?;
    }
    // The first part's common rows (every part reads every document's text).
    if let Ok(common) = std::fs::read(from.join(ModelFiles::COMMON)) {
        write_synced(&to.join(ModelFiles::COMMON), &common)?;
    }
    Ok(())
}
