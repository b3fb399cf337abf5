//! The BERT encoder the sentence model (`embed`) and the cross-encoder (`rerank`) run, on both
//! targets: candle's tensors and
//! matrix kernels, with the work between the matrix products cut down. It computes what
//! Hugging Face's `BertModel` does (the same weights, names and results to f32 rounding), but:
//! - the query, key and value projections are one matrix product (their weights stacked at
//!   load), and the 1/√d of attention is folded into the query weights;
//! - softmax is one pass a row (`softmax_last_dim`), and the attention mask is added only when
//!   a batch is padded (a text embedded alone has none);
//! - GELU's erf is a rational function the compiler vectorizes (`gelu_erf`), where candle calls
//!   libm's scalar `erff` for each of a chunk's 6 × 1,536 × T values.
//! On med's chunks this took the native build from 19.1 to 21.4 chunks a second
//! (`docs/benchmarks.md`).

use candle_core::{CpuStorage, CustomOp1, DType, Layout, Module, Shape, Tensor};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, Linear, VarBuilder};
use candle_transformers::models::bert::{Config, HiddenAct};

type Result<T> = candle_core::Result<T>;

pub struct Bert {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    norm: LayerNorm,
    layers: Vec<Layer>,
}

struct Layer {
    /// Query (pre-scaled by 1/√d), key and value, stacked: hidden → 3 × hidden.
    qkv: Linear,
    heads: usize,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    activation: HiddenAct,
    output: Linear,
    output_norm: LayerNorm,
}

impl Bert {
    /// Loads the encoder from `BertModel` weights, with or without the `bert.` prefix.
    pub fn load(vb: VarBuilder, config: &Config) -> Result<Self> {
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let hidden = config.hidden_size;
        let e = vb.pp("embeddings");
        let layers = (0..config.num_hidden_layers)
            .map(|i| Layer::load(vb.pp(format!("encoder.layer.{i}")), config))
            .collect::<Result<_>>()?;
        Ok(Bert {
            word: embedding(config.vocab_size, hidden, e.pp("word_embeddings"))?,
            position: embedding(
                config.max_position_embeddings,
                hidden,
                e.pp("position_embeddings"),
            )?,
            token_type: embedding(config.type_vocab_size, hidden, e.pp("token_type_embeddings"))?,
            norm: layer_norm(hidden, config.layer_norm_eps, e.pp("LayerNorm"))?,
            layers,
        })
    }

    /// The last hidden state, (batch, tokens, hidden). `mask` (1 for a real token, 0 for
    /// padding) is needed only when a batch is padded.
    pub fn forward(&self, ids: &Tensor, type_ids: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
        let (_, tokens) = ids.dims2()?;
        let positions = Tensor::arange(0u32, tokens as u32, ids.device())?;
        let x = (self.word.forward(ids)? + self.token_type.forward(type_ids)?)?
            .broadcast_add(&self.position.forward(&positions)?)?;
        let mut x = self.norm.forward(&x)?;
        // Padding gets the lowest score, as transformers does: (1 − mask) × f32::MIN.
        let bias = match mask {
            Some(mask) => Some(
                ((1.0 - mask.to_dtype(DType::F32)?)? * f32::MIN as f64)?
                    .unsqueeze(1)?
                    .unsqueeze(1)?,
            ),
            None => None,
        };
        for layer in &self.layers {
            x = layer.forward(&x, bias.as_ref())?;
        }
        Ok(x)
    }
}

impl Layer {
    fn load(vb: VarBuilder, config: &Config) -> Result<Self> {
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        let scale = 1.0 / ((hidden / heads) as f64).sqrt();
        let a = vb.pp("attention");
        let part = |name: &str, scale: f64| -> Result<(Tensor, Tensor)> {
            let l = linear(hidden, hidden, a.pp("self").pp(name))?;
            let bias = l
                .bias()
                .ok_or_else(|| candle_core::Error::Msg(format!("{name} has no bias")))?
                .clone();
            Ok(((l.weight() * scale)?, (bias * scale)?))
        };
        let (q, k, v) = (part("query", scale)?, part("key", 1.0)?, part("value", 1.0)?);
        let qkv = Linear::new(
            Tensor::cat(&[&q.0, &k.0, &v.0], 0)?,
            Some(Tensor::cat(&[&q.1, &k.1, &v.1], 0)?),
        );
        Ok(Layer {
            qkv,
            heads,
            attention_out: linear(hidden, hidden, a.pp("output").pp("dense"))?,
            attention_norm: layer_norm(hidden, config.layer_norm_eps, a.pp("output").pp("LayerNorm"))?,
            intermediate: linear(hidden, config.intermediate_size, vb.pp("intermediate").pp("dense"))?,
            activation: config.hidden_act,
            output: linear(config.intermediate_size, hidden, vb.pp("output").pp("dense"))?,
            output_norm: layer_norm(hidden, config.layer_norm_eps, vb.pp("output").pp("LayerNorm"))?,
        })
    }

    fn forward(&self, x: &Tensor, mask_bias: Option<&Tensor>) -> Result<Tensor> {
        let (batch, tokens, hidden) = x.dims3()?;
        let head = hidden / self.heads;
        // (batch, tokens, 3, heads, head) → (3, batch, heads, tokens, head), one copy.
        let qkv = self
            .qkv
            .forward(x)?
            .reshape((batch, tokens, 3, self.heads, head))?
            .permute((2, 0, 3, 1, 4))?
            .contiguous()?;
        let (q, k, v) = (qkv.get(0)?, qkv.get(1)?, qkv.get(2)?);
        let mut scores = q.matmul(&k.t()?)?;
        if let Some(bias) = mask_bias {
            scores = scores.broadcast_add(bias)?;
        }
        let context = candle_nn::ops::softmax_last_dim(&scores)?
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((batch, tokens, hidden))?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + x)?)?;
        let inner = self.intermediate.forward(&attended)?;
        let inner = match self.activation {
            HiddenAct::Gelu => inner.apply_op1_no_bwd(&GeluErf)?,
            HiddenAct::GeluApproximate => inner.gelu()?,
            HiddenAct::Relu => inner.relu()?,
        };
        self.output_norm
            .forward(&(self.output.forward(&inner)? + attended)?)
    }
}

/// GELU as BERT defines it, x · (1 + erf(x / √2)) / 2, on f32.
struct GeluErf;

impl CustomOp1 for GeluErf {
    fn name(&self) -> &'static str {
        "gelu-erf"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let (CpuStorage::F32(values), Some((start, end))) =
            (storage, layout.contiguous_offsets())
        else {
            candle_core::bail!("gelu-erf takes a contiguous f32 tensor");
        };
        let out: Vec<f32> = values[start..end]
            .iter()
            .map(|&x| 0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2)))
            .collect();
        Ok((CpuStorage::F32(out), layout.shape().clone()))
    }
}

/// erf on f32: x·p(x²)/q(x²) on x clamped to [−4, 4] (erf is ±1 to f32 precision beyond), the
/// rational approximation Eigen and XLA use for f32; branch-free, so loops over it vectorize.
/// Within 5e-7 of the true erf, a few f32 steps of 1 (a test checks it).
#[inline]
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
