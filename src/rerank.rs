//! The cross-encoder reranker: a BERT with a sequence-classification head (the Hugging Face
//! `BertForSequenceClassification` layout, e.g. cross-encoder/ms-marco-MiniLM-L-6-v2) run with
//! candle, on both targets. Each (query, text) pair is tokenized together, truncated on the text
//! side, run through the encoder, pooled from the [CLS] token (dense + tanh), classified to one
//! logit and squashed by a sigmoid into a relevance in [0, 1]. It reorders the few best hits of
//! a search; it does not take part in indexing.

use std::collections::BTreeMap;

use candle_core::{DType, Device, IndexOp, Tensor};
use candle_nn::{Linear, Module, VarBuilder};
use candle_transformers::models::bert::Config;
use serde::Deserialize;
use tokenizers::{Encoding, Tokenizer, TruncationParams, TruncationStrategy};

use crate::embed::{check_config, ModelFiles};
use crate::error::{Error, Result};
use crate::store::pack::sha256_hex;

/// The longest (query, text) pair the reranker reads, in tokens, special tokens included
/// (less if the model's `max_position_embeddings` is smaller).
pub const MAX_TOKENS: usize = 512;
/// How many pairs run through the model together (padded to the longest of them).
const BATCH: usize = 16;
/// The most labels a classification head may have before the config is taken for a mistake.
const MAX_LABELS: usize = 4096;

/// What `config.json` says about the classification head, besides the BERT config.
#[derive(Deserialize)]
struct HeadConfig {
    num_labels: Option<usize>,
    id2label: Option<BTreeMap<String, serde_json::Value>>,
}

/// A cross-encoder: scores how relevant each text is to a query by reading both together.
///
/// The head may have several labels (`num_labels`, or the size of `id2label`, in
/// `config.json`; one when neither is given). With more than one, the score is the sigmoid of
/// the LAST label's logit, as in a 2-class head whose classes are ("irrelevant", "relevant").
pub struct Reranker {
    model: crate::encoder::Bert,
    pooler: Linear,
    classifier: Linear,
    /// Truncates the text (second) side only.
    tokenizer: Tokenizer,
    /// Truncates the longer side first: for a query too long to leave room for any text.
    fallback: Tokenizer,
    pad_id: u32,
    /// The index of the logit that is the score.
    label: usize,
    device: Device,
    weights_sha256: String,
}

impl Reranker {
    /// Loads a cross-encoder from its three files (`model.safetensors` in f32 or f16,
    /// `tokenizer.json`, `config.json`). Its tensors are `bert.embeddings.*`, `bert.encoder.*`,
    /// `bert.pooler.dense.*` and `classifier.*`; exports without the `bert.` prefix load too.
    pub fn load(files: ModelFiles) -> Result<Self> {
        let device = Device::Cpu;
        let config: Config = serde_json::from_slice(&files.config).map_err(|e| {
            Error::Model(format!(
                "the reranker's config.json is not a BERT config: {e}; use the config.json of a BertForSequenceClassification cross-encoder"
            ))
        })?;
        check_config(&config, "the cross-encoder these weights came with")
            .map_err(|e| Error::Model(format!("the reranker's {e}")))?;
        let head: HeadConfig = serde_json::from_slice(&files.config).map_err(|e| {
            Error::Model(format!(
                "the reranker's config.json has a bad num_labels or id2label: {e}"
            ))
        })?;
        let num_labels = head
            .num_labels
            .or(head.id2label.map(|labels| labels.len()))
            .unwrap_or(1);
        if num_labels == 0 || num_labels > MAX_LABELS {
            return Err(Error::Model(format!(
                "the reranker's config.json gives {num_labels} labels, it must be between 1 and {MAX_LABELS}; use the config.json of a cross-encoder"
            )));
        }
        let max_length = MAX_TOKENS
            .min(config.max_position_embeddings - crate::encoder::first_position(&config) as usize);

        let mut tokenizer = Tokenizer::from_bytes(&files.tokenizer).map_err(|e| {
            Error::Model(format!("the reranker's tokenizer.json cannot be read: {e}"))
        })?;
        let vocabulary = tokenizer.get_vocab_size(true);
        if vocabulary > config.vocab_size {
            return Err(Error::Model(format!(
                "the reranker's tokenizer.json has {vocabulary} tokens but its config.json's model only {}; use the tokenizer and config of one model",
                config.vocab_size
            )));
        }
        tokenizer.with_padding(None);
        let truncation = |strategy| TruncationParams {
            max_length,
            strategy,
            ..Default::default()
        };
        let mut fallback = tokenizer.clone();
        for (tokenizer, strategy) in [
            (&mut tokenizer, TruncationStrategy::OnlySecond),
            (&mut fallback, TruncationStrategy::LongestFirst),
        ] {
            tokenizer
                .with_truncation(Some(truncation(strategy)))
                .map_err(|e| Error::Model(format!("cannot set the reranker's truncation: {e}")))?;
        }
        // A pair's token type ids must exist in the model (a tokenizer that marks the second
        // text with type 1 needs type_vocab_size >= 2).
        let probe = tokenizer.encode(("query", "text"), true).map_err(|e| {
            Error::Model(format!(
                "the reranker's tokenizer cannot encode a pair: {e}"
            ))
        })?;
        if let Some(&type_id) = probe.get_type_ids().iter().max() {
            if type_id as usize >= config.type_vocab_size {
                return Err(Error::Model(format!(
                    "the reranker's tokenizer marks a pair with token type {type_id} but config.json's type_vocab_size is {}; use the tokenizer and config of one model",
                    config.type_vocab_size
                )));
            }
        }

        let weights_sha256 = sha256_hex(&files.weights);
        let root = VarBuilder::from_buffered_safetensors(files.weights, DType::F32, &device)
            .map_err(|e| {
                Error::Model(format!(
                    "the reranker's model.safetensors cannot be read: {e}"
                ))
            })?;
        let bert = if root.contains_tensor("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        let hidden = config.hidden_size;
        let pooler = linear(
            &root,
            &format!("{bert}pooler.dense"),
            (hidden, "hidden_size"),
            (hidden, "hidden_size"),
        )?;
        let classifier = linear(
            &root,
            "classifier",
            (num_labels, "num_labels"),
            (hidden, "hidden_size"),
        )?;
        let model = crate::encoder::Bert::load(root, &config).map_err(|e| {
            Error::Model(format!(
                "the reranker's weights do not fit a BERT model with its config: {e}; use the config.json and model.safetensors of one cross-encoder"
            ))
        })?;
        Ok(Reranker {
            model,
            pooler,
            classifier,
            tokenizer,
            fallback,
            pad_id: config.pad_token_id as u32,
            label: num_labels - 1,
            device,
            weights_sha256,
        })
    }

    /// Relevance in [0, 1] of each text to the query, in order. Each text is scored as the pair
    /// (query, text), cut to [`MAX_TOKENS`] tokens (or the model's `max_position_embeddings`,
    /// if fewer) by truncating the text only, or both sides when the query alone is too long.
    /// Pairs run in batches of 16, each padded to its longest.
    pub fn score(&self, query: &str, texts: &[&str]) -> Result<Vec<f32>> {
        let mut scores = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            let encodings = batch
                .iter()
                .map(|text| self.encode(query, text))
                .collect::<Result<Vec<_>>>()?;
            scores.extend(self.score_batch(&encodings)?);
        }
        Ok(scores)
    }

    /// SHA-256 (hex) of the weights file this reranker was loaded from.
    pub fn weights_sha256(&self) -> &str {
        &self.weights_sha256
    }

    fn encode(&self, query: &str, text: &str) -> Result<Encoding> {
        self.tokenizer
            .encode((query, text), true)
            .or_else(|_| self.fallback.encode((query, text), true))
            .map_err(|e| Error::Model(format!("the reranker cannot tokenize a pair: {e}")))
    }

    fn score_batch(&self, encodings: &[Encoding]) -> Result<Vec<f32>> {
        let rows = encodings.len();
        let cols = encodings.iter().map(|e| e.len()).max().unwrap_or(0);
        if rows == 0 || cols == 0 {
            // Only a tokenizer without special tokens makes an empty pair: nothing to read.
            return Ok(vec![0.5; rows]);
        }
        let mut ids = Vec::with_capacity(rows * cols);
        let mut type_ids = Vec::with_capacity(rows * cols);
        let mut mask = Vec::with_capacity(rows * cols);
        for encoding in encodings {
            let padding = cols - encoding.len();
            ids.extend(encoding.get_ids());
            ids.extend(std::iter::repeat_n(self.pad_id, padding));
            type_ids.extend(encoding.get_type_ids());
            type_ids.extend(std::iter::repeat_n(0, padding));
            mask.extend(encoding.get_attention_mask());
            mask.extend(std::iter::repeat_n(0, padding));
        }
        let ids = Tensor::from_vec(ids, (rows, cols), &self.device)?;
        let type_ids = Tensor::from_vec(type_ids, (rows, cols), &self.device)?;
        let mask = Tensor::from_vec(mask, (rows, cols), &self.device)?;
        let padded = encodings.iter().any(|e| e.len() < cols);
        let hidden = self
            .model
            .forward(&ids, &type_ids, padded.then_some(&mask))?;
        let cls = hidden.i((.., 0))?.contiguous()?;
        let pooled = self.pooler.forward(&cls)?.tanh()?;
        let logits = self.classifier.forward(&pooled)?;
        let logits = logits.i((.., self.label))?.to_vec1::<f32>()?;
        Ok(logits.into_iter().map(sigmoid).collect())
    }
}

fn sigmoid(x: f32) -> f32 {
    if x.is_nan() {
        return 0.5;
    }
    1.0 / (1.0 + (-x).exp())
}

/// The `{name}.weight` [out, in] and `{name}.bias` [out] of a dense layer, each size given with
/// the config field it comes from, or an error that names the missing or misshapen tensor.
fn linear(
    vb: &VarBuilder,
    name: &str,
    (out, out_field): (usize, &str),
    (input, in_field): (usize, &str),
) -> Result<Linear> {
    let tensor = |suffix: &str, shape: &[usize], fields: &str| -> Result<Tensor> {
        let full = format!("{name}.{suffix}");
        if !vb.contains_tensor(&full) {
            return Err(Error::Model(format!(
                "the reranker's model.safetensors has no {full}; a cross-encoder is a BertForSequenceClassification export (bert.*, bert.pooler.dense.*, classifier.*)"
            )));
        }
        let tensor = vb.get_unchecked(&full).map_err(|e| {
            Error::Model(format!(
                "the reranker's model.safetensors has an unreadable {full}: {e}"
            ))
        })?;
        if tensor.dims() != shape {
            return Err(Error::Model(format!(
                "{full} is {:?}, expected {fields} = {shape:?}; use the config.json that came with these weights",
                tensor.dims()
            )));
        }
        Ok(tensor)
    };
    let weight = tensor(
        "weight",
        &[out, input],
        &format!("[{out_field}, {in_field}]"),
    )?;
    let bias = tensor("bias", &[out], &format!("[{out_field}]"))?;
    Ok(Linear::new(weight, Some(bias)))
}

impl crate::search::CrossEncoder for Reranker {
    fn relevance(&self, query: &str, texts: &[&str]) -> Result<Vec<f32>> {
        self.score(query, texts)
    }
}
