//! The BERT encoder the sentence model (`embed`) and the cross-encoder (`rerank`) run, on both
//! targets: cairn's own kernels on plain buffers from the embeddings' LayerNorm to the last
//! layer (candle only reads the weights and gathers the embeddings). It computes what Hugging
//! Face's `BertModel` does, or `XLMRobertaModel` (the same network with positions numbered after
//! the padding's: `first_position`), with the same weights, names and results to f32 rounding,
//! but:
//! - every linear layer runs on its weights packed once at load (`matmul`: AVX-512 or AVX2 + FMA
//!   tiles chosen at run time, SIMD128 in wasm), where candle's gemm packed them again at every
//!   product and reached about a quarter of the machine's peak; or, with `Arithmetic::Int8`, on
//!   8-bit blocks (`int8`: VNNI or AVX2), about twice as fast a product;
//! - the query, key and value projections are one product (their weights stacked at load), the
//!   1/√d of attention is folded into the query weights, and attention runs head by head on the
//!   same packed product with a vectorized exp in the softmax (`attention`), the padding's mask
//!   added only when a batch is padded (a text embedded alone has none);
//! - the residual add and LayerNorm are one pass, GELU's erf is a rational function the compiler
//!   vectorizes (`erf`), and these loops are compiled for the products' instruction set
//!   (`matmul::wide`: the crate's baseline x86-64 gave them SSE2's 4 lanes).
//!
//! The same encoder ships quantized for the browser (`to_gguf`, `from_gguf`): the linear layers'
//! weights in q8_0 (blocks of 32 int8 values with a scale each), everything else as it was, and
//! the word-embedding table not in the file at all but in rows (`Words::Rows`) that a browser
//! fetches by token as queries need them. The weights stay in q8_0 in memory and are widened to
//! f32 a block of a panel at a time as a product reaches it (`Packed::from_q8`): the f32
//! products of the full model on the very weights a widening at load gave, from a quarter of
//! the memory (and a query's time is much of it reading them). Activations are not quantized:
//! 8-bit products for queries (`int8`) moved hybrid nDCG@10 by up to 0.008.

use std::sync::RwLock;

use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{embedding, linear, Embedding, VarBuilder};
use candle_transformers::models::bert::{Config, HiddenAct};

pub use crate::index::vector::Arithmetic;
use crate::store::rows::StaticTable;

mod attention;
pub mod int8;
pub mod matmul;
use matmul::{wide, Packed};

type Result<T> = candle_core::Result<T>;

pub struct Bert {
    pub(crate) word: Words,
    position: Embedding,
    /// The position of a text's first token: 0 for BERT, `pad_token_id + 1` for the RoBERTa
    /// family (XLM-R), whose position table starts after the padding's row.
    first_position: u32,
    token_type: Embedding,
    norm: Norm,
    layers: Vec<Layer>,
}

/// The word-embedding table: whole (f32), or int8 rows with a scale each, only those loaded so
/// far (the 8-bit model for the browser: a query needs a few of its 30,522).
pub(crate) enum Words {
    Table(Embedding),
    Rows(RwLock<StaticTable>),
}

/// A linear layer: y = x·Wᵀ + b, on weights packed once for the product (`matmul`, or `int8`'s
/// 8-bit blocks).
enum Dense {
    F32(Packed),
    Int8(int8::Packed8),
}

impl Dense {
    fn new(weight: Tensor, bias: Tensor) -> Result<Self> {
        let (outputs, inputs) = weight.dims2()?;
        let weight = weight
            .to_dtype(DType::F32)?
            .flatten_all()?
            .to_vec1::<f32>()?;
        let bias = bias.to_dtype(DType::F32)?.to_vec1::<f32>()?;
        if bias.len() != outputs {
            candle_core::bail!("a bias of {} for {outputs} outputs", bias.len());
        }
        Ok(Dense::F32(Packed::new(&weight, &bias, outputs, inputs)))
    }

    fn forward(&self, x: &[f32]) -> Vec<f32> {
        match self {
            Dense::F32(w) => w.forward(x),
            Dense::Int8(w) => w.forward(x),
        }
    }

    /// The layer in `arithmetic` (from f32 weights).
    fn to(&mut self, arithmetic: Arithmetic) {
        if let (Dense::F32(w), Arithmetic::Int8) = (&*self, arithmetic) {
            *self = Dense::Int8(int8::Packed8::new(
                &w.weight(),
                w.bias(),
                w.outputs(),
                w.inputs(),
            ));
        }
    }

    /// W as the file stores it (out × in), from f32 weights.
    fn weight(&self) -> Result<Tensor> {
        let Dense::F32(w) = self else {
            candle_core::bail!("an 8-bit layer's weights are not kept in f32");
        };
        Tensor::from_vec(w.weight(), (w.outputs(), w.inputs()), &Device::Cpu)
    }

    fn bias(&self) -> Result<Tensor> {
        let Dense::F32(w) = self else {
            candle_core::bail!("an 8-bit layer's weights are not kept in f32");
        };
        Tensor::from_slice(w.bias(), w.outputs(), &Device::Cpu)
    }
}

struct Layer {
    /// Query (pre-scaled by 1/√d), key and value, stacked: hidden → 3 × hidden.
    qkv: Dense,
    heads: usize,
    attention_out: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    activation: HiddenAct,
    output: Dense,
    output_norm: Norm,
}

impl Bert {
    /// Loads the encoder from `BertModel` or `XLMRobertaModel` weights, with or without the
    /// `bert.` or `roberta.` prefix.
    pub fn load(vb: VarBuilder, config: &Config) -> Result<Self> {
        let vb = match ["bert", "roberta"]
            .into_iter()
            .find(|p| vb.contains_tensor(&format!("{p}.embeddings.word_embeddings.weight")))
        {
            Some(prefix) => vb.pp(prefix),
            None => vb,
        };
        let hidden = config.hidden_size;
        let e = vb.pp("embeddings");
        let layers = (0..config.num_hidden_layers)
            .map(|i| Layer::load(vb.pp(format!("encoder.layer.{i}")), config))
            .collect::<Result<_>>()?;
        Ok(Bert {
            word: Words::Table(embedding(
                config.vocab_size,
                hidden,
                e.pp("word_embeddings"),
            )?),
            position: embedding(
                config.max_position_embeddings,
                hidden,
                e.pp("position_embeddings"),
            )?,
            first_position: first_position(config),
            token_type: embedding(
                config.type_vocab_size,
                hidden,
                e.pp("token_type_embeddings"),
            )?,
            norm: Norm::load(e.pp("LayerNorm"), hidden, config.layer_norm_eps)?,
            layers,
        })
    }

    /// Runs the linear layers in `arithmetic` from here on. The encoder loads in f32; once in
    /// 8 bits it stays so (its f32 weights are not kept), which `arithmetic` then says.
    pub fn set_arithmetic(&mut self, arithmetic: Arithmetic) {
        for layer in &mut self.layers {
            for dense in [
                &mut layer.qkv,
                &mut layer.attention_out,
                &mut layer.intermediate,
                &mut layer.output,
            ] {
                dense.to(arithmetic);
            }
        }
    }

    /// The arithmetic the linear layers run in.
    pub fn arithmetic(&self) -> Arithmetic {
        match self.layers.first().map(|l| &l.qkv) {
            Some(Dense::Int8(_)) => Arithmetic::Int8,
            _ => Arithmetic::F32,
        }
    }

    /// The last hidden state, (batch, tokens, hidden). `mask` (1 for a real token, 0 for
    /// padding) is needed only when a batch is padded.
    pub fn forward(
        &self,
        ids: &Tensor,
        type_ids: &Tensor,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let (_, tokens) = ids.dims2()?;
        let first = self.first_position;
        let positions = Tensor::arange(first, first + tokens as u32, ids.device())?;
        let words = match &self.word {
            Words::Table(table) => table.forward(ids)?,
            Words::Rows(rows) => gather(&rows.read().expect("no writer panics"), ids)?,
        };
        let x = (words + self.token_type.forward(type_ids)?)?
            .broadcast_add(&self.position.forward(&positions)?)?;
        let shape = x.shape().clone();
        let (batch, _, _) = x.dims3()?;
        let mut x = x.flatten_all()?.to_vec1::<f32>()?;
        wide(
            #[inline(always)]
            || self.norm.apply(&mut x, None),
        );
        // Padding gets the lowest score, as transformers does: (1 − mask) × f32::MIN.
        let bias = match mask {
            Some(mask) => Some(
                ((1.0 - mask.to_dtype(DType::F32)?)? * f32::MIN as f64)?
                    .flatten_all()?
                    .to_vec1::<f32>()?,
            ),
            None => None,
        };
        for layer in &self.layers {
            x = layer.forward(&x, batch, tokens, bias.as_deref());
        }
        Tensor::from_vec(x, shape, ids.device())
    }
}

/// The position id of a text's first token. The RoBERTa family numbers positions from
/// `pad_token_id + 1` (Hugging Face's `create_position_ids_from_input_ids`); padding, which
/// gets `pad_token_id`, is masked out, so a text's tokens are numbered from there on.
pub(crate) fn first_position(config: &Config) -> u32 {
    match config.model_type.as_deref() {
        Some("roberta" | "xlm-roberta" | "camembert") => config.pad_token_id as u32 + 1,
        _ => 0,
    }
}

/// Names in the quantized file that are not a layer's.
const POSITION: &str = "position";
const TOKEN_TYPE: &str = "token_type";

impl Bert {
    /// The encoder's tensors for the quantized file, by the names `from_gguf` reads: each linear
    /// layer's weight in q8_0, the position table in f16, every other tensor (biases,
    /// LayerNorms, the token-type table) in f32. Not the word table: its rows are written
    /// apart. The encoder must have been loaded with f32 weights.
    pub fn to_gguf(&self) -> Result<Vec<(String, QTensor)>> {
        let mut out = Vec::new();
        let mut put = |name: String, t: &Tensor, dtype: GgmlDType| -> Result<()> {
            out.push((name, QTensor::quantize(t, dtype)?));
            Ok(())
        };
        put(POSITION.into(), self.position.embeddings(), GgmlDType::F16)?;
        put(
            TOKEN_TYPE.into(),
            self.token_type.embeddings(),
            GgmlDType::F32,
        )?;
        for (name, norm) in self.norms() {
            let vector = |v: &[f32]| Tensor::from_slice(v, v.len(), &Device::Cpu);
            put(
                format!("{name}.weight"),
                &vector(&norm.weight)?,
                GgmlDType::F32,
            )?;
            put(format!("{name}.bias"), &vector(&norm.bias)?, GgmlDType::F32)?;
        }
        for (name, dense) in self.denses() {
            put(format!("{name}.weight"), &dense.weight()?, GgmlDType::Q8_0)?;
            put(format!("{name}.bias"), &dense.bias()?, GgmlDType::F32)?;
        }
        Ok(out)
    }

    /// The encoder from the quantized file `to_gguf` wrote (its header `content`, its bytes),
    /// with the word rows `words` (loaded so far) for a table.
    pub fn from_gguf(
        content: &gguf_file::Content,
        bytes: &[u8],
        config: &Config,
        words: StaticTable,
    ) -> Result<Self> {
        let mut file = GgufReader {
            content,
            reader: std::io::Cursor::new(bytes),
            eps: config.layer_norm_eps,
        };
        let (hidden, inner) = (config.hidden_size, config.intermediate_size);
        let table = |file: &mut GgufReader, name: &str, rows: usize| -> Result<Embedding> {
            Ok(Embedding::new(file.float(name, &[rows, hidden])?, hidden))
        };
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                Ok(Layer {
                    qkv: file.dense(&format!("{i}.qkv"), 3 * hidden, hidden)?,
                    heads: config.num_attention_heads,
                    attention_out: file.dense(&format!("{i}.attention_out"), hidden, hidden)?,
                    attention_norm: file.norm(&format!("{i}.attention_norm"), hidden)?,
                    intermediate: file.dense(&format!("{i}.intermediate"), inner, hidden)?,
                    activation: config.hidden_act,
                    output: file.dense(&format!("{i}.output"), hidden, inner)?,
                    output_norm: file.norm(&format!("{i}.output_norm"), hidden)?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Bert {
            word: Words::Rows(RwLock::new(words)),
            position: table(&mut file, POSITION, config.max_position_embeddings)?,
            first_position: first_position(config),
            token_type: table(&mut file, TOKEN_TYPE, config.type_vocab_size)?,
            norm: file.norm("norm", hidden)?,
            layers,
        })
    }

    fn norms(&self) -> Vec<(String, &Norm)> {
        let mut out = vec![("norm".to_string(), &self.norm)];
        for (i, l) in self.layers.iter().enumerate() {
            out.push((format!("{i}.attention_norm"), &l.attention_norm));
            out.push((format!("{i}.output_norm"), &l.output_norm));
        }
        out
    }

    fn denses(&self) -> Vec<(String, &Dense)> {
        self.layers
            .iter()
            .enumerate()
            .flat_map(|(i, l)| {
                [
                    (format!("{i}.qkv"), &l.qkv),
                    (format!("{i}.attention_out"), &l.attention_out),
                    (format!("{i}.intermediate"), &l.intermediate),
                    (format!("{i}.output"), &l.output),
                ]
            })
            .collect()
    }
}

/// Reads the quantized file's tensors by name, each checked against the shape the config gives.
struct GgufReader<'a> {
    content: &'a gguf_file::Content,
    reader: std::io::Cursor<&'a [u8]>,
    eps: f64,
}

impl GgufReader<'_> {
    fn tensor(&mut self, name: &str, shape: &[usize]) -> Result<QTensor> {
        let t = self.content.tensor(&mut self.reader, name, &Device::Cpu)?;
        if t.shape().dims() != shape {
            candle_core::bail!(
                "{name} has shape {:?}, the config says {shape:?}",
                t.shape().dims()
            );
        }
        Ok(t)
    }

    fn float(&mut self, name: &str, shape: &[usize]) -> Result<Tensor> {
        self.tensor(name, shape)?.dequantize(&Device::Cpu)
    }

    /// A linear layer; its weight kept in q8_0's 8 bits where the file has them so (`Packed::
    /// from_q8`), widened to f32 only a block at a time as products reach it.
    fn dense(&mut self, name: &str, rows: usize, cols: usize) -> Result<Dense> {
        let weight = self.tensor(&format!("{name}.weight"), &[rows, cols])?;
        let bias = self
            .float(&format!("{name}.bias"), &[rows])?
            .to_vec1::<f32>()?;
        if bias.len() != rows {
            candle_core::bail!("{name}.bias has {} values for {rows} outputs", bias.len());
        }
        if weight.dtype() != GgmlDType::Q8_0 || cols % matmul::Q8_BLOCK != 0 {
            let weight = weight.dequantize(&Device::Cpu)?;
            return Dense::new(weight, Tensor::from_vec(bias, rows, &Device::Cpu)?);
        }
        // q8_0's blocks: an f16 scale, then 32 signed bytes.
        const BLOCK_BYTES: usize = 2 + matmul::Q8_BLOCK;
        let data = weight.data()?;
        if data.len() != rows * cols / matmul::Q8_BLOCK * BLOCK_BYTES {
            candle_core::bail!(
                "{name}.weight has {} bytes, not {rows} × {cols} in q8_0",
                data.len()
            );
        }
        let mut values = Vec::with_capacity(rows * cols);
        let mut scales = Vec::with_capacity(rows * cols / matmul::Q8_BLOCK);
        for block in data.chunks_exact(BLOCK_BYTES) {
            scales.push(half::f16::from_le_bytes([block[0], block[1]]).to_f32());
            values.extend(block[2..].iter().map(|&b| b as i8));
        }
        Ok(Dense::F32(Packed::from_q8(
            &values, &scales, &bias, rows, cols,
        )))
    }

    fn norm(&mut self, name: &str, hidden: usize) -> Result<Norm> {
        Norm::new(
            &self.float(&format!("{name}.weight"), &[hidden])?,
            &self.float(&format!("{name}.bias"), &[hidden])?,
            self.eps,
        )
    }
}

/// The rows of `ids` (batch, tokens) from a table of int8 rows: (batch, tokens, hidden), or an
/// error naming the first row not loaded.
fn gather(rows: &StaticTable, ids: &Tensor) -> Result<Tensor> {
    let dims = ids.dims().to_vec();
    let dimension = rows.rows.dimension as usize;
    let ids = ids.flatten_all()?.to_vec1::<u32>()?;
    let mut out = Vec::with_capacity(ids.len() * dimension);
    for id in ids {
        let Some((values, scale)) = rows.row(id) else {
            candle_core::bail!("the model's word row {id} is not loaded; fetch the rows a text needs (modelRows) before embedding it");
        };
        out.extend(values.iter().map(|&v| v as f32 * scale));
    }
    let mut shape = dims;
    shape.push(dimension);
    Tensor::from_vec(out, shape, &Device::Cpu)
}

impl Layer {
    fn load(vb: VarBuilder, config: &Config) -> Result<Self> {
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        let scale = 1.0 / ((hidden / heads) as f64).sqrt();
        let a = vb.pp("attention");
        // A linear layer's weight and bias, both times `scale`.
        let linear = |vb: VarBuilder, i: usize, o: usize, scale: f64| -> Result<(Tensor, Tensor)> {
            let l = linear(i, o, vb)?;
            let bias = l
                .bias()
                .ok_or_else(|| candle_core::Error::Msg("a linear layer has no bias".into()))?;
            Ok(((l.weight() * scale)?, (bias * scale)?))
        };
        let part = |name: &str, scale| linear(a.pp("self").pp(name), hidden, hidden, scale);
        let (q, k, v) = (
            part("query", scale)?,
            part("key", 1.0)?,
            part("value", 1.0)?,
        );
        let qkv = Dense::new(
            Tensor::cat(&[&q.0, &k.0, &v.0], 0)?,
            Tensor::cat(&[&q.1, &k.1, &v.1], 0)?,
        )?;
        let dense = |i, o, vb| linear(vb, i, o, 1.0).and_then(|(w, b)| Dense::new(w, b));
        Ok(Layer {
            qkv,
            heads,
            attention_out: dense(hidden, hidden, a.pp("output").pp("dense"))?,
            attention_norm: Norm::load(
                a.pp("output").pp("LayerNorm"),
                hidden,
                config.layer_norm_eps,
            )?,
            intermediate: dense(
                hidden,
                config.intermediate_size,
                vb.pp("intermediate").pp("dense"),
            )?,
            activation: config.hidden_act,
            output: dense(
                config.intermediate_size,
                hidden,
                vb.pp("output").pp("dense"),
            )?,
            output_norm: Norm::load(
                vb.pp("output").pp("LayerNorm"),
                hidden,
                config.layer_norm_eps,
            )?,
        })
    }

    /// The layer on `x`, (batch × tokens) rows of hidden values; `mask_bias` as `attend`'s.
    fn forward(
        &self,
        x: &[f32],
        batch: usize,
        tokens: usize,
        mask_bias: Option<&[f32]>,
    ) -> Vec<f32> {
        let qkv = self.qkv.forward(x);
        let context = attention::attend(&qkv, batch, tokens, self.heads, mask_bias);
        let mut attended = self.attention_out.forward(&context);
        wide(
            #[inline(always)]
            || self.attention_norm.apply(&mut attended, Some(x)),
        );
        let mut inner = self.intermediate.forward(&attended);
        wide(
            #[inline(always)]
            || activate(self.activation, &mut inner),
        );
        let mut out = self.output.forward(&inner);
        wide(
            #[inline(always)]
            || self.output_norm.apply(&mut out, Some(&attended)),
        );
        out
    }
}

/// A LayerNorm's scale, shift and ε, applied to rows in place.
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn load(vb: VarBuilder, hidden: usize, eps: f64) -> Result<Self> {
        Norm::new(&vb.get(hidden, "weight")?, &vb.get(hidden, "bias")?, eps)
    }

    fn new(weight: &Tensor, bias: &Tensor, eps: f64) -> Result<Self> {
        let vector = |t: &Tensor| t.to_dtype(DType::F32)?.to_vec1::<f32>();
        Ok(Norm {
            weight: vector(weight)?,
            bias: vector(bias)?,
            eps: eps as f32,
        })
    }

    /// Each row of `x` (rows of `weight.len()` values), after adding `residual`'s row if given,
    /// normalized to mean 0 and variance 1 over the row, then scaled and shifted.
    #[inline(always)]
    fn apply(&self, x: &mut [f32], residual: Option<&[f32]>) {
        let hidden = self.weight.len();
        if let Some(residual) = residual {
            for (x, r) in x.iter_mut().zip(residual) {
                *x += r;
            }
        }
        for row in x.chunks_exact_mut(hidden) {
            let mean = lanes_sum(row, |v| v) / hidden as f32;
            let variance = lanes_sum(row, |v| (v - mean) * (v - mean)) / hidden as f32;
            let scale = 1.0 / (variance + self.eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * scale * w + b;
            }
        }
    }
}

/// Σ f(v) over `row`, summed in 8 lanes so that the loop vectorizes.
#[inline(always)]
fn lanes_sum(row: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0f32; 8];
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l += f(v);
        }
    }
    chunks.remainder().iter().map(|&v| f(v)).sum::<f32>() + lanes.iter().sum::<f32>()
}

/// The feed-forward's activation, in place: GELU as BERT defines it, x · (1 + erf(x / √2)) / 2;
/// its tanh approximation; or ReLU.
#[inline(always)]
fn activate(activation: HiddenAct, x: &mut [f32]) {
    match activation {
        HiddenAct::Gelu => {
            for v in x.iter_mut() {
                *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
            }
        }
        HiddenAct::GeluApproximate => {
            const C: f32 = 0.797_884_6; // √(2/π)
            for v in x.iter_mut() {
                *v = 0.5 * *v * (1.0 + (C * (*v + 0.044_715 * *v * *v * *v)).tanh());
            }
        }
        HiddenAct::Relu => {
            for v in x.iter_mut() {
                *v = v.max(0.0);
            }
        }
    }
}

/// erf on f32: x·p(x²)/q(x²) on x clamped to [−4, 4] (erf is ±1 to f32 precision beyond), the
/// rational approximation Eigen and XLA use for f32; branch-free, so loops over it vectorize.
/// Within 5e-7 of the true erf, a few f32 steps of 1 (a test checks it).
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    for c in [
        2.770_681_4e-8,
        -2.101_024_e-6,
        -5.692_506_4e-5,
        -7.349_906_e-4,
        -2.954_600_1e-3,
        -1.609_603_3e-2,
    ] {
        p = p * x2 + c;
    }
    let mut q = -1.456_607_2e-5_f32;
    for c in [-2.133_740_6e-4, -1.682_827e-3, -7.373_329e-3, -1.426_474e-2] {
        q = q * x2 + c;
    }
    x * p / q
}

#[cfg(test)]
mod tests {
    /// erf in f64 by its Taylor series (exact enough on [−4.5, 4.5] for an f32 check).
    fn erf64(x: f64) -> f64 {
        let (mut term, mut sum) = (x, x);
        for n in 1..200 {
            term *= -x * x / n as f64;
            sum += term / (2 * n + 1) as f64;
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn erf_is_within_f32_rounding() {
        let mut worst = (0f64, 0f32);
        for i in -45_000..=45_000 {
            let x = i as f32 / 10_000.0;
            let error = (super::erf(x) as f64 - erf64(x as f64)).abs();
            if error > worst.0 {
                worst = (error, x);
            }
        }
        assert!(worst.0 < 5e-7, "{worst:?}");
    }
}
