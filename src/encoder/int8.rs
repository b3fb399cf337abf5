//! The encoder's linear layers in 8 bits, y = x·W + b: W quantized once at load and x at each
//! product, both in blocks of `BLOCK` inputs with a scale each (symmetric, ±127: ggml's q8_0 on
//! both sides), their products summed exactly in i32 a block and folded into f32 as
//! Σ_blocks dot · (x's scale · W's scale), then + b. Per row alone, blocks of 32 keep a BERT
//! layer's outlier features from flattening the rest (one scale a row gave all-MiniLM-L6-v2
//! vectors at cosine 0.995 to f32; blocks of 32, 0.9994).
//!
//! The integer sums are exact and the fold is a multiply and an add (never fused), in the same
//! order on every target, so every kernel gives the same bits: AVX-512 VNNI (`vpdpbusd`, x
//! offset to unsigned and the offset's sum taken back), AVX2 (`vpmaddubsw` on |x| and W with
//! x's sign, which cannot saturate at ±127), and plain code elsewhere (wasm).
//!
//! A build uses it when asked (`cairn index --arithmetic int8`): its vectors are within cosine
//! 0.999 of f32's, but one collection's hybrid nDCG@10 moved by 0.005 (docs/benchmarks.md), more
//! than the 0.002 a default may, so f32 stays the default.

/// Inputs a scale covers.
pub const BLOCK: usize = 32;
/// Inputs a 32-bit lane sums at once (VNNI's group).
const GROUP: usize = 4;

/// A linear layer's weight in 8-bit blocks, packed for the kernel chosen at load, and its bias.
pub struct Packed8 {
    inputs: usize,
    outputs: usize,
    blocks: usize,
    isa: Isa,
    /// Panels of NR columns: panel p, block b, group g, column j, input t of the group at
    /// (((p·blocks + b)·8 + g)·NR + j)·4 + t.
    weights: Vec<i8>,
    /// W's scale for panel p, block b, column j at (p·blocks + b)·NR + j.
    scales: Vec<f32>,
    /// 128 × the sum of each column's block of weights (VNNI's unsigned x), laid out as `scales`.
    offsets: Vec<i32>,
    bias: Vec<f32>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Isa {
    #[cfg(target_arch = "x86_64")]
    Vnni512,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "wasm32")]
    Simd128,
    Base,
}

impl Isa {
    fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if super::matmul::avx512_allowed() && has!("avx512f") && has!("avx512vnni") {
                return Isa::Vnni512;
            }
            if has!("avx2") {
                return Isa::Avx2;
            }
        }
        #[cfg(target_arch = "wasm32")]
        return Isa::Simd128;
        #[allow(unreachable_code)]
        Isa::Base
    }

    fn nr(self) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Isa::Vnni512 => 32,
            _ => 8,
        }
    }
}

/// Quantizes `values` (a block, up to BLOCK long) into `out`, each value plus `offset` (128 for
/// VNNI's unsigned bytes, wrapping): its scale.
#[inline(always)]
fn quantize_block(values: &[f32], out: &mut [i8], offset: u8) -> f32 {
    // A comparison, not `f32::max`, so that the loop vectorizes (no value here is NaN).
    let max = values
        .iter()
        .fold(0f32, |m, v| if v.abs() > m { v.abs() } else { m });
    let inverse = if max == 0.0 || !max.is_finite() {
        0.0
    } else {
        127.0 / max
    };
    for (q, &v) in out.iter_mut().zip(values) {
        // Half away from zero, without `round` (a call to libm where SSE4.1 is not assumed);
        // clamped first (`max`, `min` also take a NaN to −127), so that the conversion needs no
        // saturation, which kept the loop scalar.
        let y = (v * inverse).max(-127.0).min(127.0);
        let y = y + 0.5f32.copysign(y);
        // SAFETY: y is finite and within ±127.5, where the truncation is an i32.
        let r = unsafe { y.to_int_unchecked::<i32>() };
        *q = (r as u8).wrapping_add(offset) as i8;
    }
    out[values.len()..].fill(offset as i8);
    if inverse == 0.0 {
        0.0
    } else {
        max / 127.0
    }
}

/// x quantized a row at a time: `rows` × blocks·BLOCK values and rows × blocks scales.
struct Rows {
    values: Vec<i8>,
    scales: Vec<f32>,
}

#[inline(always)]
fn quantize_rows(x: &[f32], inputs: usize, blocks: usize, offset: u8) -> Rows {
    let rows = x.len() / inputs;
    let stride = blocks * BLOCK;
    let mut values = vec![0i8; rows * stride];
    let mut scales = vec![0f32; rows * blocks];
    for (r, row) in x.chunks_exact(inputs).enumerate() {
        for (b, block) in row.chunks(BLOCK).enumerate() {
            let at = r * stride + b * BLOCK;
            scales[r * blocks + b] = quantize_block(block, &mut values[at..at + BLOCK], offset);
        }
    }
    Rows { values, scales }
}

impl Packed8 {
    /// Quantizes and packs W given as the file stores it (`weight`: out × in) and `bias`.
    pub fn new(weight: &[f32], bias: &[f32], outputs: usize, inputs: usize) -> Packed8 {
        Packed8::for_isa(Isa::detect(), weight, bias, outputs, inputs)
    }

    /// `new` on the plain kernel, whatever the machine has: what every kernel must equal, to
    /// the bit (a test in each target's suite).
    #[doc(hidden)]
    pub fn plain(weight: &[f32], bias: &[f32], outputs: usize, inputs: usize) -> Packed8 {
        Packed8::for_isa(Isa::Base, weight, bias, outputs, inputs)
    }

    fn for_isa(isa: Isa, weight: &[f32], bias: &[f32], outputs: usize, inputs: usize) -> Packed8 {
        assert_eq!(weight.len(), outputs * inputs, "a weight of out × in");
        assert_eq!(bias.len(), outputs, "a bias a column");
        let nr = isa.nr();
        let blocks = inputs.div_ceil(BLOCK);
        let panels = outputs.div_ceil(nr);
        let mut weights = vec![0i8; panels * blocks * BLOCK * nr];
        let mut scales = vec![0f32; panels * blocks * nr];
        let mut offsets = vec![0i32; panels * blocks * nr];
        let mut q = [0i8; BLOCK];
        for (o, row) in weight.chunks_exact(inputs.max(1)).enumerate().take(outputs) {
            let (p, j) = (o / nr, o % nr);
            for (b, block) in row.chunks(BLOCK).enumerate() {
                let at = (p * blocks + b) * nr + j;
                scales[at] = quantize_block(block, &mut q, 0);
                offsets[at] = 128 * q.iter().map(|&v| v as i32).sum::<i32>();
                for (k, &v) in q.iter().enumerate() {
                    let (g, t) = (k / GROUP, k % GROUP);
                    weights[(((p * blocks + b) * (BLOCK / GROUP) + g) * nr + j) * GROUP + t] = v;
                }
            }
        }
        Packed8 {
            inputs,
            outputs,
            blocks,
            isa,
            weights,
            scales,
            offsets,
            bias: bias.to_vec(),
        }
    }

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// x·W + b for `x` of rows × inputs (row-major): rows × outputs.
    pub fn forward(&self, x: &[f32]) -> Vec<f32> {
        let rows = if self.inputs == 0 {
            0
        } else {
            x.len() / self.inputs
        };
        let mut out = vec![0.0; rows * self.outputs];
        if rows == 0 || self.outputs == 0 {
            return out;
        }
        // VNNI multiplies unsigned by signed bytes: x + 128, the offset's sum taken back.
        #[cfg(target_arch = "x86_64")]
        let offset = if self.isa == Isa::Vnni512 { 128 } else { 0 };
        #[cfg(not(target_arch = "x86_64"))]
        let offset = 0;
        let q = super::matmul::wide(
            #[inline(always)]
            || quantize_rows(x, self.inputs, self.blocks, offset),
        );
        // SAFETY: each kernel is called only where `detect` found its instructions.
        #[allow(unused_unsafe)] // only the plain kernel where x86-64's are not compiled
        unsafe {
            match self.isa {
                #[cfg(target_arch = "x86_64")]
                Isa::Vnni512 => product::<8, 32>(self, &q, &mut out, |a, s, w, acc| unsafe {
                    tile_vnni512(a, s, w, acc)
                }),
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 => product::<4, 8>(self, &q, &mut out, |a, s, w, acc| unsafe {
                    tile_avx2(a, s, w, acc)
                }),
                #[cfg(target_arch = "wasm32")]
                Isa::Simd128 => product::<4, 8>(self, &q, &mut out, tile_simd128),
                Isa::Base => product::<4, 8>(self, &q, &mut out, tile_base),
            }
        }
        out
    }
}

/// A panel's weights, scales and offsets (all its blocks).
struct Panel<'a> {
    weights: &'a [i8],
    scales: &'a [f32],
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    offsets: &'a [i32],
}

type Sums<const MR: usize, const NR: usize> = [[f32; NR]; MR];

/// The product in tiles of MR rows × NR columns: `tile` sums a tile's blocks.
#[inline(always)]
fn product<const MR: usize, const NR: usize>(
    w: &Packed8,
    x: &Rows,
    out: &mut [f32],
    tile: impl Fn(&[&[i8]; MR], &[&[f32]; MR], &Panel, &mut Sums<MR, NR>),
) {
    let (n, blocks) = (w.outputs, w.blocks);
    let stride = blocks * BLOCK;
    let rows = x.values.len() / stride;
    for p in 0..n.div_ceil(NR) {
        let panel = Panel {
            weights: &w.weights[p * blocks * BLOCK * NR..(p + 1) * blocks * BLOCK * NR],
            scales: &w.scales[p * blocks * NR..(p + 1) * blocks * NR],
            offsets: &w.offsets[p * blocks * NR..(p + 1) * blocks * NR],
        };
        let (c0, width) = (p * NR, NR.min(n - p * NR));
        let mut r0 = 0;
        while r0 < rows {
            let height = MR.min(rows - r0);
            let row = |i: usize| r0 + if i < height { i } else { 0 };
            let a: [&[i8]; MR] =
                std::array::from_fn(|i| &x.values[row(i) * stride..(row(i) + 1) * stride]);
            let s: [&[f32]; MR] =
                std::array::from_fn(|i| &x.scales[row(i) * blocks..(row(i) + 1) * blocks]);
            let mut sums = [[0.0f32; NR]; MR];
            tile(&a, &s, &panel, &mut sums);
            for (i, sums) in sums.iter().enumerate().take(height) {
                let o = &mut out[(r0 + i) * n + c0..(r0 + i) * n + c0 + width];
                for ((o, &s), &b) in o.iter_mut().zip(sums).zip(&w.bias[c0..c0 + width]) {
                    *o = s + b;
                }
            }
            r0 += MR;
        }
    }
}

/// The tile in plain code: what every kernel computes, to the bit.
fn tile_base(a: &[&[i8]; 4], s: &[&[f32]; 4], w: &Panel, sums: &mut Sums<4, 8>) {
    const NR: usize = 8;
    let blocks = s[0].len();
    for b in 0..blocks {
        for i in 0..4 {
            let mut dot = [0i32; NR];
            for g in 0..BLOCK / GROUP {
                let x = &a[i][b * BLOCK + g * GROUP..][..GROUP];
                let ws = &w.weights[((b * (BLOCK / GROUP) + g) * NR) * GROUP..][..NR * GROUP];
                for j in 0..NR {
                    for t in 0..GROUP {
                        dot[j] += x[t] as i32 * ws[j * GROUP + t] as i32;
                    }
                }
            }
            for j in 0..NR {
                let scale = w.scales[b * NR + j] * s[i][b];
                sums[i][j] += dot[j] as f32 * scale;
            }
        }
    }
}

/// `tile_base` in wasm SIMD128, to the bit: the block's weights widened to 16 bits once for the
/// four rows, `i32x4.dot_i16x8_s` on a group's four inputs (each lane two inputs of a column),
/// the lanes' pairs added at the block's end, then the fold in `tile_base`'s order.
#[cfg(target_arch = "wasm32")]
fn tile_simd128(a: &[&[i8]; 4], s: &[&[f32]; 4], w: &Panel, sums: &mut Sums<4, 8>) {
    use std::arch::wasm32::*;
    const NR: usize = 8;
    let blocks = s[0].len();
    assert!(a.iter().all(|r| r.len() >= blocks * BLOCK) && s.iter().all(|r| r.len() == blocks));
    assert!(w.weights.len() >= blocks * BLOCK * NR && w.scales.len() >= blocks * NR);
    // SAFETY: every load is within the slices checked above; stores are to `sums`.
    unsafe {
        let mut f = [[f32x4_splat(0.0); 2]; 4];
        // Group g's columns 2h and 2h + 1 (four inputs each) at wide[g·4 + h].
        let mut wide = [i16x8_splat(0); 4 * BLOCK / GROUP];
        for b in 0..blocks {
            let wp = w.weights.as_ptr().add(b * BLOCK * NR) as *const v128;
            for g in 0..BLOCK / GROUP {
                let (lo, hi) = (v128_load(wp.add(2 * g)), v128_load(wp.add(2 * g + 1)));
                wide[g * 4] = i16x8_extend_low_i8x16(lo);
                wide[g * 4 + 1] = i16x8_extend_high_i8x16(lo);
                wide[g * 4 + 2] = i16x8_extend_low_i8x16(hi);
                wide[g * 4 + 3] = i16x8_extend_high_i8x16(hi);
            }
            let ws = [
                v128_load(w.scales.as_ptr().add(b * NR) as *const v128),
                v128_load(w.scales.as_ptr().add(b * NR + 4) as *const v128),
            ];
            for i in 0..4 {
                let xp = a[i].as_ptr().add(b * BLOCK) as *const u32;
                let mut acc = [i32x4_splat(0); 4];
                for g in 0..BLOCK / GROUP {
                    // The group's four inputs twice, as 16-bit lanes.
                    let x = i16x8_extend_low_i8x16(u32x4_splat(xp.add(g).read_unaligned()));
                    for h in 0..4 {
                        acc[h] = i32x4_add(acc[h], i32x4_dot_i16x8(wide[g * 4 + h], x));
                    }
                }
                let si = f32x4_splat(*s[i].get_unchecked(b));
                for h in 0..2 {
                    let (p, q) = (acc[2 * h], acc[2 * h + 1]);
                    let dot = i32x4_add(
                        i32x4_shuffle::<0, 2, 4, 6>(p, q),
                        i32x4_shuffle::<1, 3, 5, 7>(p, q),
                    );
                    let scale = f32x4_mul(ws[h], si);
                    f[i][h] = f32x4_add(f[i][h], f32x4_mul(f32x4_convert_i32x4(dot), scale));
                }
            }
        }
        for i in 0..4 {
            v128_store(sums[i].as_mut_ptr() as *mut v128, f[i][0]);
            v128_store(sums[i].as_mut_ptr().add(4) as *mut v128, f[i][1]);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn tile_vnni512(a: &[&[i8]; 8], s: &[&[f32]; 8], w: &Panel, sums: &mut Sums<8, 32>) {
    use std::arch::x86_64::*;
    let blocks = s[0].len();
    assert!(a.iter().all(|r| r.len() >= blocks * BLOCK) && w.weights.len() >= blocks * BLOCK * 32);
    assert!(w.scales.len() >= blocks * 32 && w.offsets.len() >= blocks * 32);
    let x: [*const i32; 8] = std::array::from_fn(|i| a[i].as_ptr() as *const i32);
    let mut f = [[_mm512_setzero_ps(); 2]; 8];
    let mut wp = w.weights.as_ptr() as *const __m512i;
    for b in 0..blocks {
        let mut acc = [[_mm512_setzero_si512(); 2]; 8];
        for g in 0..BLOCK / GROUP {
            let (w0, w1) = (_mm512_loadu_si512(wp), _mm512_loadu_si512(wp.add(1)));
            wp = wp.add(2);
            for i in 0..8 {
                let xi = _mm512_set1_epi32(x[i].add(b * (BLOCK / GROUP) + g).read_unaligned());
                acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], xi, w0);
                acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], xi, w1);
            }
        }
        let ws = [
            _mm512_loadu_ps(w.scales.as_ptr().add(b * 32)),
            _mm512_loadu_ps(w.scales.as_ptr().add(b * 32 + 16)),
        ];
        let offset = [
            _mm512_loadu_si512(w.offsets.as_ptr().add(b * 32) as *const _),
            _mm512_loadu_si512(w.offsets.as_ptr().add(b * 32 + 16) as *const _),
        ];
        for i in 0..8 {
            let si = _mm512_set1_ps(*s[i].get_unchecked(b));
            for h in 0..2 {
                let dot = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[i][h], offset[h]));
                f[i][h] = _mm512_add_ps(f[i][h], _mm512_mul_ps(dot, _mm512_mul_ps(ws[h], si)));
            }
        }
    }
    for i in 0..8 {
        _mm512_storeu_ps(sums[i].as_mut_ptr(), f[i][0]);
        _mm512_storeu_ps(sums[i].as_mut_ptr().add(16), f[i][1]);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn tile_avx2(a: &[&[i8]; 4], s: &[&[f32]; 4], w: &Panel, sums: &mut Sums<4, 8>) {
    use std::arch::x86_64::*;
    let blocks = s[0].len();
    assert!(a.iter().all(|r| r.len() >= blocks * BLOCK) && w.weights.len() >= blocks * BLOCK * 8);
    assert!(w.scales.len() >= blocks * 8);
    let ones = _mm256_set1_epi16(1);
    let mut f = [_mm256_setzero_ps(); 4];
    for b in 0..blocks {
        let mut acc = [_mm256_setzero_si256(); 4];
        for g in 0..BLOCK / GROUP {
            let wv = _mm256_loadu_si256(
                w.weights.as_ptr().add((b * (BLOCK / GROUP) + g) * 32) as *const _
            );
            for i in 0..4 {
                let x = _mm256_set1_epi32(
                    (a[i].as_ptr().add(b * BLOCK + g * GROUP) as *const i32).read_unaligned(),
                );
                // |x| · (W with x's sign): unsigned × signed bytes, pairs at most 2·127² < 2¹⁵.
                let pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(x), _mm256_sign_epi8(wv, x));
                acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(pairs, ones));
            }
        }
        let ws = _mm256_loadu_ps(w.scales.as_ptr().add(b * 8));
        for i in 0..4 {
            let dot = _mm256_cvtepi32_ps(acc[i]);
            let scale = _mm256_mul_ps(ws, _mm256_set1_ps(s[i][b]));
            f[i] = _mm256_add_ps(f[i], _mm256_mul_ps(dot, scale));
        }
    }
    for i in 0..4 {
        _mm256_storeu_ps(sums[i].as_mut_ptr(), f[i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_gives_the_plain_codes_bits_and_near_the_f32_product() {
        for (rows, k, n, weight, bias, x) in crate::encoder::matmul::tests::random_layers(11, 4.0) {
            let packed = Packed8::new(&weight, &bias, n, k);
            let got = packed.forward(&x);
            // The plain code's bits, whatever kernel ran.
            let plain = Packed8::for_isa(Isa::Base, &weight, &bias, n, k);
            assert_eq!(got, plain.forward(&x), "at {rows}×{k}×{n}");
            for r in 0..rows {
                for o in 0..n {
                    let want: f32 = (0..k)
                        .map(|i| x[r * k + i] * weight[o * k + i])
                        .sum::<f32>()
                        + bias[o];
                    let g = got[r * n + o];
                    assert!(
                        (g - want).abs() <= 0.02 * (1.0 + (k as f32).sqrt()),
                        "{g} against {want}"
                    );
                }
            }
        }
    }
}
