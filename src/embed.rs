//! The sentence embedder: all-MiniLM-L6-v2 (a 6-layer BERT) by default, or any BERT or XLM-R
//! sentence-transformers model a user brings (its own tokenizer, WordPiece or Unigram, and its
//! own vocabulary, width and depth, all read from its files), run with candle, on both targets.
//! Text is tokenized with the model's own `tokenizer.json`, truncated at 256 tokens (or the
//! model's positions, if fewer), run through
//! the encoder, mean-pooled over real tokens only (padding masked out) and L2-normalized, as
//! sentence-transformers does. Natively it embeds chunks at index time, each text alone and as
//! many side by side as there are cores (`build::embed_all`); in the browser it embeds the query.
//!
//! Natively candle's matrix kernels run on one thread each (`native_runtime`). Running
//! whole texts in parallel instead keeps every core busy (candle's element-wise ops between the
//! matmuls are serial), wastes nothing on padding, and makes a text's vector a function of that
//! text alone: the same bits whatever else the build embeds, so a rebuild that keeps vectors and
//! a build split into shards write the same bytes as one build from scratch.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::Config;
use tokenizers::{PaddingParams, PaddingStrategy, PostProcessor, Tokenizer, TruncationParams};

use crate::error::{Error, Result};
use crate::store::pack::sha256_hex;
use crate::store::rows::{RowRequest, StaticRows, StaticTable};

/// The model's name as the index records it.
pub const MODEL_NAME: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// The most tokens a text is cut to (all-MiniLM-L6-v2 was trained on 256): fewer where the
/// model has fewer positions.
pub const MAX_TOKENS: usize = 256;
/// The fewest positions a model may have to be used here.
const MIN_TOKENS: usize = 16;

/// The most tokens `config`'s model reads: `MAX_TOKENS`, or its positions if fewer.
pub(crate) fn max_tokens(config: &Config) -> usize {
    let first = crate::encoder::first_position(config) as usize;
    MAX_TOKENS.min(config.max_position_embeddings.saturating_sub(first))
}

/// The name an index records for a model: all-MiniLM-L6-v2's for a model of its shape, else its
/// kind and shape from its config (the hashes recorded beside it tell models apart).
fn model_name(config: &Config) -> String {
    let kind = config.model_type.as_deref().unwrap_or("bert");
    if kind == "bert"
        && (
            config.vocab_size,
            config.hidden_size,
            config.num_hidden_layers,
        ) == (30522, 384, 6)
    {
        return MODEL_NAME.to_string();
    }
    format!(
        "{kind} ({} wide, {} layers, {} tokens)",
        config.hidden_size, config.num_hidden_layers, config.vocab_size
    )
}

/// The files a model is made of: weights (safetensors, or the quantized model's GGUF),
/// tokenizer and config, and for a quantized model the packs of its word rows that are at hand
/// (all of them natively; none in a browser, which fetches the rows a query needs).
#[derive(Clone, Default)]
pub struct ModelFiles {
    pub weights: Vec<u8>,
    pub tokenizer: Vec<u8>,
    pub config: Vec<u8>,
    pub word_packs: Vec<Vec<u8>>,
}

/// GGUF metadata keys of the quantized model: where its word rows are.
const WORDS_DIMENSION: &str = "cairn.words.dimension";
const WORDS_COUNT: &str = "cairn.words.count";
const WORDS_PER_PACK: &str = "cairn.words.per_pack";
const WORDS_PACKS: &str = "cairn.words.packs";

impl ModelFiles {
    pub const WEIGHTS: &'static str = "model.safetensors";
    /// The 8-bit model for the browser: the encoder without its word table (GGUF).
    pub const QUANTIZED: &'static str = "model.gguf";
    pub const TOKENIZER: &'static str = "tokenizer.json";
    pub const CONFIG: &'static str = "config.json";
    /// The 8-bit model's word rows of the tokens an index's text uses most
    /// (`store::rows::write_selection`), which a browser fetches with the model.
    pub const COMMON: &'static str = "common.cairnrows";

    /// Reads a model folder: `tokenizer.json`, `config.json`, and `model.safetensors`, or else
    /// `model.gguf` with every pack of its word rows (under `p/`).
    #[cfg(not(browser))]
    pub fn read_dir(dir: &std::path::Path) -> Result<Self> {
        if !dir.join(Self::WEIGHTS).exists() && dir.join(Self::QUANTIZED).exists() {
            let weights = std::fs::read(dir.join(Self::QUANTIZED)).map_err(|e| {
                Error::Model(format!(
                    "cannot read {} ({e})",
                    dir.join(Self::QUANTIZED).display()
                ))
            })?;
            let word_packs = word_packs(&weights)?
                .iter()
                .map(|name| {
                    let path = dir.join(crate::store::pack::PACK_DIR).join(name);
                    std::fs::read(&path).map_err(|e| {
                        Error::Model(format!(
                            "cannot read the model's word rows {} ({e}); write the model again (cairn index)",
                            path.display()
                        ))
                    })
                })
                .collect::<Result<_>>()?;
            return Ok(ModelFiles {
                weights,
                word_packs,
                ..Self::read_text_files(dir)?
            });
        }
        Ok(ModelFiles {
            weights: std::fs::read(dir.join(Self::WEIGHTS))
                .map_err(|e| Self::missing(dir, Self::WEIGHTS, e))?,
            ..Self::read_text_files(dir)?
        })
    }

    #[cfg(not(browser))]
    fn missing(dir: &std::path::Path, name: &str, e: std::io::Error) -> Error {
        Error::Model(format!(
            "cannot read {} ({e}); the model folder needs {}, {} and {} (run scripts/setup.sh to fetch all-MiniLM-L6-v2)",
            dir.join(name).display(),
            Self::WEIGHTS,
            Self::TOKENIZER,
            Self::CONFIG
        ))
    }

    #[cfg(not(browser))]
    fn read_text_files(dir: &std::path::Path) -> Result<Self> {
        let read =
            |name: &str| std::fs::read(dir.join(name)).map_err(|e| Self::missing(dir, name, e));
        Ok(ModelFiles {
            tokenizer: read(Self::TOKENIZER)?,
            config: read(Self::CONFIG)?,
            ..Default::default()
        })
    }
}

/// Whether weights are a quantized model's GGUF (else safetensors).
pub fn is_quantized(weights: &[u8]) -> bool {
    weights.starts_with(b"GGUF")
}

/// The GGUF header of a quantized model's weights.
fn gguf_content(weights: &[u8]) -> Result<candle_core::quantized::gguf_file::Content> {
    candle_core::quantized::gguf_file::Content::read(&mut std::io::Cursor::new(weights))
        .map_err(|e| Error::Model(format!("model.gguf cannot be read: {e}")))
}

/// Where a quantized model's word rows are (its GGUF metadata).
fn word_rows(content: &candle_core::quantized::gguf_file::Content) -> Result<StaticRows> {
    let bad = |what: &str| {
        Error::Model(format!(
            "model.gguf has no valid {what}; write the model again (cairn index)"
        ))
    };
    let get = |key: &str| content.metadata.get(key).ok_or_else(|| bad(key));
    let number = |key: &str| get(key)?.to_u32().map_err(|_| bad(key));
    let packs = get(WORDS_PACKS)?
        .to_vec()
        .map_err(|_| bad(WORDS_PACKS))?
        .iter()
        .map(|v| v.to_string().cloned().map_err(|_| bad(WORDS_PACKS)))
        .collect::<Result<Vec<_>>>()?;
    let (dimension, count) = (number(WORDS_DIMENSION)?, number(WORDS_COUNT)?);
    if count > 1_000_000 {
        return Err(bad(WORDS_COUNT));
    }
    let rows = StaticRows::every(dimension, count, number(WORDS_PER_PACK)?, packs);
    rows.validate(count as usize)
        .map_err(|e| Error::Model(format!("model.gguf: {e}")))?;
    Ok(rows)
}

/// The names of the packs (under `p/` beside it) that hold a quantized model's word rows.
pub fn word_packs(weights: &[u8]) -> Result<Vec<String>> {
    Ok(word_rows(&gguf_content(weights)?)?.packs)
}

pub struct Embedder {
    model: crate::encoder::Bert,
    tokenizer: Tokenizer,
    device: Device,
    dimension: usize,
    max_tokens: usize,
    name: String,
    weights_sha256: String,
}

impl Embedder {
    /// Loads a model from its files. Weights may be f32 or f16 safetensors (computed in f32), or
    /// the quantized model's GGUF with the word-row packs given (none: rows come by `add_row`).
    pub fn load(files: ModelFiles) -> Result<Self> {
        #[cfg(not(browser))]
        native_runtime();
        let device = Device::Cpu;
        let config: Config = serde_json::from_slice(&files.config)
            .map_err(|e| Error::Model(format!("config.json is not a BERT config: {e}")))?;
        check_config(&config, "the model the index was built with")?;
        let mut tokenizer = Tokenizer::from_bytes(&files.tokenizer)
            .map_err(|e| Error::Model(format!("tokenizer.json cannot be read: {e}")))?;
        let vocabulary = tokenizer.get_vocab_size(true);
        if vocabulary > config.vocab_size {
            return Err(Error::Model(format!(
                "tokenizer.json has {vocabulary} tokens but config.json's model only {}; use the tokenizer and config of one model",
                config.vocab_size
            )));
        }
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens(&config),
                ..Default::default()
            }))
            .map_err(|e| Error::Model(format!("cannot set truncation: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        let weights_sha256 = sha256_hex(&files.weights);
        let unfit = |e| {
            Error::Model(format!(
                "the weights do not fit a BERT model with this config: {e}"
            ))
        };
        let model = if is_quantized(&files.weights) {
            let content = gguf_content(&files.weights)?;
            let rows = word_rows(&content)?;
            if rows.dimension as usize != config.hidden_size || rows.len() != config.vocab_size {
                return Err(Error::Model(format!(
                    "model.gguf's word rows are {} of {} values, the config's table {} of {}; use the files of one model",
                    rows.len(),
                    rows.dimension,
                    config.vocab_size,
                    config.hidden_size
                )));
            }
            let words = if files.word_packs.is_empty() {
                StaticTable::new(rows)
            } else {
                crate::store::rows::from_packs(&rows, &files.word_packs)
                    .map_err(|e| Error::Model(format!("the model's word rows: {e}")))?
            }
            .named("the model's word row");
            crate::encoder::Bert::from_gguf(&content, &files.weights, &config, words)
                .map_err(unfit)?
        } else {
            let vb = VarBuilder::from_buffered_safetensors(files.weights, DType::F32, &device)
                .map_err(|e| Error::Model(format!("model.safetensors cannot be read: {e}")))?;
            crate::encoder::Bert::load(vb, &config).map_err(unfit)?
        };
        Ok(Embedder {
            model,
            tokenizer,
            device,
            dimension: config.hidden_size,
            max_tokens: max_tokens(&config),
            name: model_name(&config),
            weights_sha256,
        })
    }

    /// Embeds in `arithmetic` from here on (`Arithmetic::Int8`: the linear layers in 8-bit
    /// blocks, about twice the texts a second natively); once 8-bit, it stays so
    /// (`Bert::set_arithmetic`), and `identity` records what it runs.
    pub fn set_arithmetic(&mut self, arithmetic: crate::encoder::Arithmetic) {
        self.model.set_arithmetic(arithmetic);
    }

    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// A counter of this model's tokens, for cutting chunks the model reads whole.
    pub fn token_counter(&self) -> Result<TokenCounter> {
        let mut tokenizer = self.tokenizer.clone();
        tokenizer
            .with_truncation(None)
            .map_err(|e| Error::Model(format!("cannot unset truncation: {e}")))?;
        tokenizer.with_padding(None);
        let special = tokenizer
            .get_post_processor()
            .map_or(0, |p| p.added_tokens(false));
        Ok(TokenCounter {
            tokenizer,
            window: self.max_tokens - special,
        })
    }

    /// SHA-256 (hex) of the weights file this embedder was loaded from.
    pub fn weights_sha256(&self) -> &str {
        &self.weights_sha256
    }

    /// The identity an index records of this model, loaded from `source`: its weights, config
    /// and tokenizer, and the browser's copy of the weights (`web`: their SHA-256 and file name,
    /// as `build::write_web_model` gives them; the same weights when the browser embeds).
    pub fn identity(
        &self,
        source: &ModelFiles,
        web: (String, &str),
    ) -> crate::index::vector::ModelIdentity {
        let (web_sha, web_file) = web;
        crate::index::vector::ModelIdentity {
            name: self.name.clone(),
            dimension: self.dimension() as u32,
            source_weights_sha256: self.weights_sha256.clone(),
            web_weights_sha256: web_sha,
            web_weights_file: web_file.to_string(),
            config_sha256: sha256_hex(&source.config),
            tokenizer_sha256: sha256_hex(&source.tokenizer),
            arithmetic: self.model.arithmetic(),
        }
    }

    /// The word rows embedding `text` needs that are not loaded yet (none for a model with its
    /// whole table), the pad token's too (texts embedded together need it): each once, by
    /// token id.
    pub fn missing_rows(&self, text: &str) -> Result<Vec<RowRequest>> {
        let crate::encoder::Words::Rows(rows) = &self.model.word else {
            return Ok(Vec::new());
        };
        let mut ids = self.token_ids(text)?;
        // And the pad token's, which texts embedded together need.
        ids.push(self.pad_id());
        ids.sort_unstable();
        ids.dedup();
        let rows = rows.read().expect("no writer panics");
        Ok(ids
            .into_iter()
            .filter(|&id| rows.row(id).is_none())
            .filter_map(|id| rows.row_of(id).map(|r| rows.rows.request(r)))
            .collect())
    }

    /// Adds word row `row` from its record's bytes (as `missing_rows` located them).
    pub fn add_row(&self, row: u32, bytes: &[u8]) -> Result<()> {
        let crate::encoder::Words::Rows(rows) = &self.model.word else {
            return Err(Error::InvalidInput(
                "this model has its whole word table; it takes no rows".into(),
            ));
        };
        rows.write().expect("no writer panics").add(row, bytes)
    }

    /// Adds the word rows of a file of common rows (`store::rows::write_selection`, the
    /// `model/common.cairnrows` of an index); how many.
    pub fn add_rows(&self, bytes: &[u8]) -> Result<usize> {
        let crate::encoder::Words::Rows(rows) = &self.model.word else {
            return Err(Error::InvalidInput(
                "this model has its whole word table; it takes no rows".into(),
            ));
        };
        rows.write().expect("no writer panics").add_selection(bytes)
    }

    /// The token that pads the shorter texts of a batch.
    pub fn pad_id(&self) -> u32 {
        self.tokenizer.get_padding().map_or(0, |p| p.pad_id)
    }

    /// Whether token `id`'s word row is in (always, for a model with its whole table).
    fn has_row(&self, id: u32) -> bool {
        match &self.model.word {
            crate::encoder::Words::Rows(rows) => {
                rows.read().expect("no writer panics").row(id).is_some()
            }
            crate::encoder::Words::Table(_) => true,
        }
    }

    /// The token ids of `text` as the model reads it (special tokens included, truncated).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::Model(format!("tokenization failed: {e}")))?
            .get_ids()
            .to_vec())
    }

    /// Embeds one text.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self
            .embed_batch(&[text])?
            .pop()
            .expect("one text in, one vector out"))
    }

    /// Embeds texts together (padded to the longest); one normalized vector per text.
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| Error::Model(format!("tokenization failed: {e}")))?;
        let rows = encodings.len();
        let cols = encodings[0].get_ids().len();
        let flat = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
            encodings
                .iter()
                .flat_map(|e| f(e).iter().copied())
                .collect()
        };
        let ids = Tensor::from_vec(flat(&|e| e.get_ids()), (rows, cols), &self.device)?;
        let type_ids = Tensor::from_vec(flat(&|e| e.get_type_ids()), (rows, cols), &self.device)?;
        let mask = Tensor::from_vec(
            flat(&|e| e.get_attention_mask()),
            (rows, cols),
            &self.device,
        )?;
        // A text alone, or texts of one length, need no mask.
        let padded = encodings
            .iter()
            .any(|e| e.get_attention_mask().contains(&0));
        let hidden = self
            .model
            .forward(&ids, &type_ids, padded.then_some(&mask))?;
        // Mean over real tokens: sum(hidden · mask) / sum(mask).
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
        let normalized = mean.broadcast_div(&norms)?;
        Ok(normalized.to_vec2::<f32>()?)
    }
}

/// Sets the process up for embedding, once, before any model runs:
/// - candle's matrix kernels single-threaded from here on, once the global thread pool (which
///   runs texts side by side) has its threads: candle reads `RAYON_NUM_THREADS` at every matmul;
/// - with glibc, freed memory kept for the next text instead of handed back to the kernel:
///   candle allocates a fresh buffer for every op, and faulting those pages in again cost 14% of
///   the embedding time (`docs/benchmarks.md`).
#[cfg(not(browser))]
fn native_runtime() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        rayon::current_num_threads();
        std::env::set_var("RAYON_NUM_THREADS", "1");
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes the allocator's thresholds.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        }
    });
}

/// Checks that a config describes a BERT that can be built and run, before candle divides by
/// its head count or allocates by its sizes: a bad config is an error that names the field.
/// `whose` names the model in the message ("the model the index was built with").
pub(crate) fn check_config(config: &Config, whose: &str) -> Result<()> {
    let bad = |m: String| {
        Err(Error::Model(format!(
            "config.json describes an impossible model: {m}; use the config.json of {whose}"
        )))
    };
    let sizes = [
        ("vocab_size", config.vocab_size, 1_000_000),
        ("hidden_size", config.hidden_size, 4096),
        ("num_hidden_layers", config.num_hidden_layers, 48),
        ("num_attention_heads", config.num_attention_heads, 64),
        ("intermediate_size", config.intermediate_size, 16384),
        (
            "max_position_embeddings",
            config.max_position_embeddings,
            8192,
        ),
        ("type_vocab_size", config.type_vocab_size, 16),
    ];
    for (name, value, max) in sizes {
        if value == 0 || value > max {
            return bad(format!("{name} is {value}, it must be between 1 and {max}"));
        }
    }
    if config.hidden_size % config.num_attention_heads != 0 {
        return bad(format!(
            "hidden_size {} is not a multiple of num_attention_heads {}",
            config.hidden_size, config.num_attention_heads
        ));
    }
    if max_tokens(config) < MIN_TOKENS {
        return bad(format!(
            "max_position_embeddings {} leaves fewer than {MIN_TOKENS} positions for a text",
            config.max_position_embeddings
        ));
    }
    if config.pad_token_id >= config.vocab_size {
        return bad(format!(
            "pad_token_id {} is outside the vocabulary of {}",
            config.pad_token_id, config.vocab_size
        ));
    }
    if !(config.layer_norm_eps.is_finite() && config.layer_norm_eps > 0.0) {
        return bad(format!(
            "layer_norm_eps {} must be a positive number",
            config.layer_norm_eps
        ));
    }
    Ok(())
}

/// Counts a text's tokens as the model's tokenizer cuts them, without truncation or special
/// tokens; `window` is how many a text may have before the model cuts it off.
pub struct TokenCounter {
    tokenizer: Tokenizer,
    window: usize,
}

impl TokenCounter {
    pub fn count(&self, text: &str) -> usize {
        // A text the tokenizer cannot take counts one token a byte: never too few.
        self.tokenizer
            .encode(text, false)
            .map_or(text.len(), |e| e.len())
    }

    pub fn window(&self) -> usize {
        self.window
    }
}

/// Writes f32 safetensors weights to `out` as f16: half the bytes for the browser to download.
#[cfg(not(browser))]
pub fn write_f16_weights(weights: &[u8], out: &std::path::Path) -> Result<()> {
    let tensors = candle_core::safetensors::load_buffer(weights, &Device::Cpu)?;
    let mut halved = std::collections::BTreeMap::new();
    for (name, tensor) in tensors {
        let tensor = if tensor.dtype() == DType::F32 {
            tensor.to_dtype(DType::F16)?
        } else {
            tensor
        };
        halved.insert(name, tensor);
    }
    let halved: std::collections::HashMap<_, _> = halved.into_iter().collect();
    candle_core::safetensors::save(&halved, out)?;
    Ok(())
}

/// The 8-bit model for the browser, made from f32 weights: the encoder with its linear layers in
/// q8_0 as GGUF (`weights`), and the word-embedding table as int8 rows with a scale
/// each, in packs of about a megabyte (`packs`, named by content, for `p/`), which the GGUF's
/// metadata lists. The same weights give the same bytes.
#[cfg(not(browser))]
pub struct QuantizedModel {
    pub weights: Vec<u8>,
    /// The word table's directory and packs.
    pub rows: StaticRows,
    pub packs: Vec<(String, Vec<u8>)>,
}

#[cfg(not(browser))]
pub fn quantize_model(source: &ModelFiles) -> Result<QuantizedModel> {
    use candle_core::quantized::gguf_file::{self, Value};
    let config: Config = serde_json::from_slice(&source.config)
        .map_err(|e| Error::Model(format!("config.json is not a BERT config: {e}")))?;
    check_config(&config, "the model to quantize")?;
    let not_f32 = || {
        Error::Model(
            "the model to write in 8 bits must be given as safetensors (pass --model with the source model, e.g. models/all-MiniLM-L6-v2)".into(),
        )
    };
    if is_quantized(&source.weights) {
        return Err(not_f32());
    }
    let vb =
        VarBuilder::from_buffered_safetensors(source.weights.clone(), DType::F32, &Device::Cpu)?;
    let bert = crate::encoder::Bert::load(vb, &config)?;
    let crate::encoder::Words::Table(table) = &bert.word else {
        return Err(not_f32());
    };
    let (count, dimension) = table.embeddings().dims2()?;
    let values = table.embeddings().flatten_all()?.to_vec1::<f32>()?;
    let (rows, packs) = crate::store::rows::write(dimension, &values);
    let tensors = bert.to_gguf()?;
    let metadata = [
        (WORDS_DIMENSION, Value::U32(dimension as u32)),
        (WORDS_COUNT, Value::U32(count as u32)),
        (WORDS_PER_PACK, Value::U32(rows.per_pack)),
        (
            WORDS_PACKS,
            Value::Array(rows.packs.iter().cloned().map(Value::String).collect()),
        ),
    ];
    let mut weights = std::io::Cursor::new(Vec::new());
    gguf_file::write(
        &mut weights,
        &metadata.iter().map(|(k, v)| (*k, v)).collect::<Vec<_>>(),
        &tensors
            .iter()
            .map(|(k, t)| (k.as_str(), t))
            .collect::<Vec<_>>(),
    )?;
    Ok(QuantizedModel {
        weights: weights.into_inner(),
        rows,
        packs,
    })
}

impl crate::search::SentenceEncoder for Embedder {
    fn can_embed(&self, text: &str) -> bool {
        // Texts are embedded together, the shorter padded: the pad token's row is needed too.
        self.missing_rows(text).is_ok_and(|m| m.is_empty()) && self.has_row(self.pad_id())
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Embedder::embed_batch(self, texts)
    }
}
