//! The sentence embedder: all-MiniLM-L6-v2 (a 6-layer BERT) run with candle, on both targets.
//! Text is tokenized with the model's own `tokenizer.json`, truncated at 256 tokens, run through
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
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, PostProcessor, Tokenizer, TruncationParams};

use crate::error::{Error, Result};

/// The model's name as the index records it.
pub const MODEL_NAME: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// The longest input the model was trained on, in tokens.
pub const MAX_TOKENS: usize = 256;

/// The three files a model is made of.
pub struct ModelFiles {
    pub weights: Vec<u8>,
    pub tokenizer: Vec<u8>,
    pub config: Vec<u8>,
}

impl ModelFiles {
    pub const WEIGHTS: &'static str = "model.safetensors";
    pub const TOKENIZER: &'static str = "tokenizer.json";
    pub const CONFIG: &'static str = "config.json";

    /// Reads `model.safetensors`, `tokenizer.json` and `config.json` from a folder.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_dir(dir: &std::path::Path) -> Result<Self> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| {
                Error::Model(format!(
                    "cannot read {} ({e}); the model folder needs {}, {} and {} (run scripts/setup.sh to fetch all-MiniLM-L6-v2)",
                    dir.join(name).display(),
                    Self::WEIGHTS,
                    Self::TOKENIZER,
                    Self::CONFIG
                ))
            })
        };
        Ok(ModelFiles {
            weights: read(Self::WEIGHTS)?,
            tokenizer: read(Self::TOKENIZER)?,
            config: read(Self::CONFIG)?,
        })
    }
}

pub struct Embedder {
    model: crate::encoder::Bert,
    tokenizer: Tokenizer,
    device: Device,
    dimension: usize,
    weights_sha256: String,
}

impl Embedder {
    /// Loads a model from its files. Weights may be f32 or f16; they are computed in f32.
    pub fn load(files: ModelFiles) -> Result<Self> {
        #[cfg(not(target_arch = "wasm32"))]
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
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| Error::Model(format!("cannot set truncation: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        let weights_sha256 = sha256_hex(&files.weights);
        let vb = VarBuilder::from_buffered_safetensors(files.weights, DType::F32, &device)
            .map_err(|e| Error::Model(format!("model.safetensors cannot be read: {e}")))?;
        let model = crate::encoder::Bert::load(vb, &config).map_err(|e| {
            Error::Model(format!(
                "the weights do not fit a BERT model with this config: {e}"
            ))
        })?;
        Ok(Embedder {
            model,
            tokenizer,
            device,
            dimension: config.hidden_size,
            weights_sha256,
        })
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
            window: MAX_TOKENS - special,
        })
    }

    /// SHA-256 (hex) of the weights file this embedder was loaded from.
    pub fn weights_sha256(&self) -> &str {
        &self.weights_sha256
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
#[cfg(not(target_arch = "wasm32"))]
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
    if config.max_position_embeddings < MAX_TOKENS {
        return bad(format!(
            "max_position_embeddings {} is under the {MAX_TOKENS} tokens cairn feeds it",
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

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes f32 safetensors weights to `out` as f16: half the bytes for the browser to download.
#[cfg(not(target_arch = "wasm32"))]
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
