//! Self-attention over the stacked query, key and value projections, head by head on the
//! packed product (`matmul`): scores = Q·Kᵀ (+ the padding's mask), softmax a row, then P·V. It
//! replaces candle's permute, two batched products, mask, softmax and transpose (each a new
//! tensor) with a few buffers a head.

use super::matmul::Packed;

/// The context, (batch, tokens, hidden), of `qkv` (batch, tokens, 3 × hidden: queries already
/// scaled by 1/√d, then keys, then values, each `heads` heads wide); `mask` adds a bias a key
/// (batch × tokens: 0, or f32::MIN for padding).
pub(crate) fn attend(
    qkv: &[f32],
    batch: usize,
    tokens: usize,
    heads: usize,
    mask: Option<&[f32]>,
) -> Vec<f32> {
    let hidden = qkv.len() / (batch * tokens).max(1) / 3;
    let d = hidden / heads.max(1);
    let mut out = vec![0f32; batch * tokens * hidden];
    if d == 0 || tokens == 0 {
        return out;
    }
    let zeros = vec![0f32; tokens.max(d)];
    let mut q = vec![0f32; tokens * d];
    let mut k = vec![0f32; tokens * d];
    let mut vt = vec![0f32; d * tokens];
    for b in 0..batch {
        let rows = &qkv[b * tokens * 3 * hidden..(b + 1) * tokens * 3 * hidden];
        for h in 0..heads {
            for (t, row) in rows.chunks_exact(3 * hidden).enumerate() {
                copy(&mut q[t * d..(t + 1) * d], &row[h * d..(h + 1) * d]);
                copy(
                    &mut k[t * d..(t + 1) * d],
                    &row[hidden + h * d..hidden + (h + 1) * d],
                );
                for (e, &v) in row[2 * hidden + h * d..2 * hidden + (h + 1) * d]
                    .iter()
                    .enumerate()
                {
                    vt[e * tokens + t] = v;
                }
            }
            // Scores: the keys as a layer's weight (out × in = tokens × d), the queries its input.
            let mut scores = Packed::new(&k, &zeros[..tokens], tokens, d).forward(&q);
            let bias = mask.map(|m| &m[b * tokens..(b + 1) * tokens]);
            super::matmul::wide(
                #[inline(always)]
                || {
                    for row in scores.chunks_exact_mut(tokens) {
                        softmax(row, bias);
                    }
                },
            );
            let context = Packed::new(&vt, &zeros[..d], d, tokens).forward(&scores);
            for (t, c) in context.chunks_exact(d).enumerate() {
                copy(&mut out[(b * tokens + t) * hidden + h * d..][..d], c);
            }
        }
    }
    out
}

/// `dst` = `src`, 8 values a step: a head's rows are short (32 values in MiniLM), and
/// `copy_from_slice` on them was a memmove call each (5% of a build).
#[inline(always)]
fn copy(dst: &mut [f32], src: &[f32]) {
    let (mut to, mut from) = (dst.chunks_exact_mut(8), src.chunks_exact(8));
    for (to, from) in (&mut to).zip(&mut from) {
        let from: &[f32; 8] = from.try_into().expect("chunks of 8");
        *<&mut [f32; 8]>::try_from(to).expect("chunks of 8") = *from;
    }
    to.into_remainder().copy_from_slice(from.remainder());
}

/// Softmax of a row of scores in place, with the mask's bias added first. Maxima and sums are
/// taken in 8 lanes, so that the loops vectorize.
#[inline(always)]
fn softmax(row: &mut [f32], bias: Option<&[f32]>) {
    if let Some(bias) = bias {
        for (s, b) in row.iter_mut().zip(bias) {
            *s += b;
        }
    }
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        for (m, &v) in lanes.iter_mut().zip(c) {
            *m = if v > *m { v } else { *m };
        }
    }
    let max = chunks
        .remainder()
        .iter()
        .chain(&lanes)
        .fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    // Eight at a time, which the compiler turns into vector code (the loop alone it leaves scalar).
    let mut chunks = row.chunks_exact_mut(8);
    for c in &mut chunks {
        for s in c {
            *s = exp(*s - max);
        }
    }
    for s in chunks.into_remainder() {
        *s = exp(*s - max);
    }
    let mut lanes = [0f32; 8];
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l += v;
        }
    }
    let sum: f32 = chunks.remainder().iter().sum::<f32>() + lanes.iter().sum::<f32>();
    for s in row.iter_mut() {
        *s /= sum;
    }
}

/// eˣ for x ≤ 0 (a score less the row's maximum): 2ⁿ · p(r) with x = n·ln 2 + r, |r| ≤ ln 2 / 2
/// and p Taylor's polynomial of degree 6 (within about an f32 step); 0 below −87, where eˣ is
/// below f32's normal range. Branch-free, so the softmax's loop vectorizes where libm's `expf`
/// is a call a value.
#[inline(always)]
fn exp(x: f32) -> f32 {
    // Round to nearest by adding 1.5 · 2²³ (no `round`, a libm call without SSE4.1).
    const SHIFTER: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let clamped = if x > -87.0 { x } else { -87.0 };
    let shifted = clamped * std::f32::consts::LOG2_E + SHIFTER;
    let n = shifted - SHIFTER;
    let r = clamped - n * LN2_HI - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    // n as an integer is the shifted value's low mantissa bits (no float-to-int conversion,
    // whose saturating checks keep the loop scalar).
    let n = shifted.to_bits().wrapping_sub(SHIFTER.to_bits()) as i32;
    let scale = f32::from_bits((n.wrapping_add(127) as u32) << 23);
    if x < -87.0 {
        0.0
    } else {
        p * scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_an_f32_step_or_two_of_libms() {
        let mut x = -87.0f32;
        while x <= 0.0 {
            let (got, want) = (exp(x), (x as f64).exp());
            assert!(
                ((got as f64 - want) / want).abs() < 3e-7,
                "exp({x}) = {got}, not {want}"
            );
            x += 0.0137;
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(f32::MIN), 0.0);
    }

    #[test]
    fn attention_matches_the_textbook_sum() {
        let (batch, tokens, heads, hidden) = (2, 5, 2, 4);
        let qkv: Vec<f32> = (0..batch * tokens * 3 * hidden)
            .map(|i| ((i * 37 % 17) as f32 - 8.0) / 8.0)
            .collect();
        let mask: Vec<f32> = (0..batch * tokens)
            .map(|i| if i == 9 { f32::MIN } else { 0.0 })
            .collect();
        let got = attend(&qkv, batch, tokens, heads, Some(&mask));
        let d = hidden / heads;
        let at = |b: usize, t: usize, part: usize, h: usize, e: usize| {
            qkv[(b * tokens + t) * 3 * hidden + part * hidden + h * d + e] as f64
        };
        for b in 0..batch {
            for h in 0..heads {
                for i in 0..tokens {
                    let scores: Vec<f64> = (0..tokens)
                        .map(|j| {
                            (0..d)
                                .map(|e| at(b, i, 0, h, e) * at(b, j, 1, h, e))
                                .sum::<f64>()
                                + mask[b * tokens + j] as f64
                        })
                        .collect();
                    let max = scores.iter().cloned().fold(f64::MIN, f64::max);
                    let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                    let total: f64 = weights.iter().sum();
                    for e in 0..d {
                        let want: f64 = (0..tokens)
                            .map(|j| weights[j] / total * at(b, j, 2, h, e))
                            .sum();
                        let g = got[(b * tokens + i) * hidden + h * d + e] as f64;
                        assert!((g - want).abs() < 1e-5, "{g} against {want}");
                    }
                }
            }
        }
    }
}
