//! The encoder's linear layers, y = x·W + b, on packed weights: what a BERT layer spends most of
//! its time in. W (in × out) is packed once at load into panels of `NR` columns (a panel's
//! rows contiguous, the last panel padded with zeros), so a product reads the weights in order
//! and never repacks them, as candle's `gemm` does at every call. A register tile of `MR` rows of
//! x by `NR` columns accumulates over a block of `KC` inputs that keeps its panel in L1.
//!
//! A tile for each instruction set, written out with its intrinsics (the compiler's own
//! vectorization of the generic tile spilled its sums), chosen at run time on x86-64: AVX-512F
//! (8 rows × 32 columns), else AVX2 + FMA (6 × 16), else the generic tile; in wasm a SIMD128
//! tile (4 × 8, a multiply and an add where native code fuses them). `CAIRN_NO_AVX512` set in
//! the environment skips AVX-512, to measure or test the AVX2 tile on a machine that has both.
//! Rows are independent and each sum adds its inputs in the same order whatever the tile, so a
//! row's result does not depend on the other rows of the batch.

/// A linear layer's weight (in × out, packed) and bias, for the instruction set chosen when
/// it was packed.
pub struct Packed {
    inputs: usize,
    outputs: usize,
    isa: Isa,
    panels: Panels,
    bias: Vec<f32>,
}

/// Panels of `isa.nr()` columns: panel p holds W[k][p·NR + j] at (p·inputs + k)·NR + j.
enum Panels {
    F32(Vec<f32>),
    /// The browser's 8-bit model as its file has it (q8_0: a scale a column every `Q8_BLOCK`
    /// inputs, at (p·blocks + k / Q8_BLOCK)·NR + j), widened to f32 a block of a panel at a time
    /// as the product reaches it: the same f32 weights (value × scale, as candle widens them),
    /// so the same sums, from a quarter of the bytes. A query's few rows read every weight once
    /// or twice, so its time is that of reading them.
    Q8 {
        values: Vec<i8>,
        scales: Vec<f32>,
    },
}

/// Inputs a q8_0 scale covers.
pub const Q8_BLOCK: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Isa {
    #[cfg(target_arch = "x86_64")]
    Avx512,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// SSE2 on x86-64, SIMD128 in wasm, whatever the compiler makes of it elsewhere.
    Base,
}

impl Isa {
    fn detect() -> Isa {
        static ISA: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
        *ISA.get_or_init(Isa::find)
    }

    fn find() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if avx512_allowed() && std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Isa::Avx2;
            }
        }
        Isa::Base
    }

    /// Columns a panel (and a register tile) holds.
    fn nr(self) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => 32,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => 16,
            Isa::Base => 8,
        }
    }
}

/// Whether AVX-512 may be used where the processor has it (`CAIRN_NO_AVX512` unset).
#[cfg(target_arch = "x86_64")]
pub(super) fn avx512_allowed() -> bool {
    std::env::var_os("CAIRN_NO_AVX512").is_none()
}

/// Runs `f` compiled for the instruction set the products use (AVX-512 or AVX2 + FMA where
/// detected): the loops `f` inlines (softmax, GELU, LayerNorm) vectorize to that width, where
/// the crate's baseline x86-64 build gives them SSE2's 4 lanes.
#[inline(always)]
pub(super) fn wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
    // SAFETY: each is called only where `detect` found its instructions.
    match Isa::detect() {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512(f) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2(f) },
        Isa::Base => f(),
    }
}

impl Packed {
    /// Packs W given transposed as the file stores it (`weight`: out × in, row-major) and `bias`.
    pub fn new(weight: &[f32], bias: &[f32], outputs: usize, inputs: usize) -> Packed {
        assert_eq!(weight.len(), outputs * inputs, "a weight of out × in");
        assert_eq!(bias.len(), outputs, "a bias a column");
        let isa = Isa::detect();
        let nr = isa.nr();
        let panels_n = outputs.div_ceil(nr);
        let mut panels = vec![0.0; panels_n * inputs * nr];
        for (o, row) in weight.chunks_exact(inputs.max(1)).enumerate() {
            let (p, j) = (o / nr, o % nr);
            for (k, &w) in row.iter().enumerate() {
                panels[(p * inputs + k) * nr + j] = w;
            }
        }
        Packed {
            inputs,
            outputs,
            isa,
            panels: Panels::F32(panels),
            bias: bias.to_vec(),
        }
    }

    /// Packs an 8-bit weight as q8_0 stores it: `values` out × in (row-major), `scales` out ×
    /// in / `Q8_BLOCK`, W[o][k] = values[o][k] · scales[o][k / Q8_BLOCK]. `inputs` is a
    /// multiple of `Q8_BLOCK`.
    pub fn from_q8(
        values: &[i8],
        scales: &[f32],
        bias: &[f32],
        outputs: usize,
        inputs: usize,
    ) -> Packed {
        assert_eq!(inputs % Q8_BLOCK, 0, "whole blocks of inputs");
        assert_eq!(values.len(), outputs * inputs, "a weight of out × in");
        assert_eq!(scales.len(), outputs * inputs / Q8_BLOCK, "a scale a block");
        assert_eq!(bias.len(), outputs, "a bias a column");
        let isa = Isa::detect();
        let nr = isa.nr();
        let blocks = inputs / Q8_BLOCK;
        let panels_n = outputs.div_ceil(nr);
        let mut packed = vec![0i8; panels_n * inputs * nr];
        let mut packed_scales = vec![0f32; panels_n * blocks * nr];
        for (o, row) in values.chunks_exact(inputs.max(1)).enumerate() {
            let (p, j) = (o / nr, o % nr);
            for (k, &v) in row.iter().enumerate() {
                packed[(p * inputs + k) * nr + j] = v;
            }
            for b in 0..blocks {
                packed_scales[(p * blocks + b) * nr + j] = scales[o * blocks + b];
            }
        }
        Packed {
            inputs,
            outputs,
            isa,
            panels: Panels::Q8 {
                values: packed,
                scales: packed_scales,
            },
            bias: bias.to_vec(),
        }
    }

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    pub fn bias(&self) -> &[f32] {
        &self.bias
    }

    /// W as the file stores it (out × in, row-major), in f32.
    pub fn weight(&self) -> Vec<f32> {
        let nr = self.isa.nr();
        let mut out = vec![0.0; self.outputs * self.inputs];
        for (o, row) in out.chunks_exact_mut(self.inputs.max(1)).enumerate() {
            let (p, j) = (o / nr, o % nr);
            for (k, w) in row.iter_mut().enumerate() {
                let at = (p * self.inputs + k) * nr + j;
                *w = match &self.panels {
                    Panels::F32(panels) => panels[at],
                    Panels::Q8 { values, scales } => {
                        let blocks = self.inputs / Q8_BLOCK;
                        values[at] as f32 * scales[(p * blocks + k / Q8_BLOCK) * nr + j]
                    }
                };
            }
        }
        out
    }

    /// x·W + b for `x` of rows × inputs (row-major): rows × outputs.
    pub fn forward(&self, x: &[f32]) -> Vec<f32> {
        assert_eq!(x.len() % self.inputs.max(1), 0, "rows of `inputs` values");
        let rows = if self.inputs == 0 {
            0
        } else {
            x.len() / self.inputs
        };
        let mut out = vec![0.0; rows * self.outputs];
        if rows == 0 || self.outputs == 0 {
            return out;
        }
        // SAFETY: each kernel is called only where `detect` found its instructions.
        #[allow(unused_unsafe)] // only the SIMD128 tile in wasm
        unsafe {
            match self.isa {
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512 => product_avx512(self, x, &mut out),
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 => product_avx2(self, x, &mut out),
                #[cfg(target_arch = "wasm32")]
                Isa::Base => product::<4, 8>(self, x, &mut out, tile_simd128),
                #[cfg(not(target_arch = "wasm32"))]
                Isa::Base => product::<4, 8>(self, x, &mut out, |a, panel, acc| {
                    tile(a, panel, acc, |a, b, c| a * b + c)
                }),
            }
        }
        out
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn product_avx512(w: &Packed, x: &[f32], out: &mut [f32]) {
    product::<8, 32>(w, x, out, |a, panel, acc| unsafe {
        tile_avx512(a, panel, acc)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn product_avx2(w: &Packed, x: &[f32], out: &mut [f32]) {
    product::<6, 16>(w, x, out, |a, panel, acc| unsafe {
        tile_avx2(a, panel, acc)
    })
}

/// Inputs a block: a panel's block of `KC` × NR floats is about 32 kB, an L1 cache.
const PANEL_BLOCK_FLOATS: usize = 8 * 1024;

/// The tile's rows of x, its block of a panel (KC × NR), and its sums, which it adds to.
type Tile<const MR: usize, const NR: usize> = [[f32; NR]; MR];

/// The product in tiles of MR rows × NR columns, each tile's sums by `tile`.
#[inline(always)]
fn product<const MR: usize, const NR: usize>(
    w: &Packed,
    x: &[f32],
    out: &mut [f32],
    tile: impl Fn(&[&[f32]; MR], &[f32], &mut Tile<MR, NR>),
) {
    let (k_all, n) = (w.inputs, w.outputs);
    let rows = x.len() / k_all;
    // A multiple of Q8_BLOCK, so that an 8-bit block of a panel is whole blocks of scales.
    let kc_max = (PANEL_BLOCK_FLOATS / NR).max(1);
    debug_assert_eq!(kc_max % Q8_BLOCK, 0);
    let mut widened = match w.panels {
        Panels::F32(_) => Vec::new(),
        Panels::Q8 { .. } => vec![0f32; kc_max.min(k_all) * NR],
    };
    let mut k0 = 0;
    while k0 < k_all {
        let kc = kc_max.min(k_all - k0);
        for p in 0..n.div_ceil(NR) {
            let span = (p * k_all + k0) * NR..(p * k_all + k0 + kc) * NR;
            let panel: &[f32] = match &w.panels {
                Panels::F32(panels) => &panels[span],
                Panels::Q8 { values, scales } => {
                    let blocks = k_all / Q8_BLOCK;
                    let first = p * blocks + k0 / Q8_BLOCK;
                    for ((to, from), scale) in widened[..kc * NR]
                        .chunks_exact_mut(Q8_BLOCK * NR)
                        .zip(values[span].chunks_exact(Q8_BLOCK * NR))
                        .zip(scales[first * NR..].chunks_exact(NR))
                    {
                        for (to, from) in to.chunks_exact_mut(NR).zip(from.chunks_exact(NR)) {
                            widen(to, from, scale);
                        }
                    }
                    &widened[..kc * NR]
                }
            };
            let (c0, width) = (p * NR, NR.min(n - p * NR));
            let mut r0 = 0;
            while r0 < rows {
                let height = MR.min(rows - r0);
                // The tile's rows of x (a short tile repeats its first row, its sums unused).
                let a: [&[f32]; MR] = std::array::from_fn(|i| {
                    let r = r0 + if i < height { i } else { 0 };
                    &x[r * k_all + k0..r * k_all + k0 + kc]
                });
                // Sums start from the bias, or from the last block's sums. A full tile's copies
                // have a fixed size, which the compiler inlines (memmove calls cost 3 to 5%).
                let mut acc = [[0.0f32; NR]; MR];
                for (i, acc) in acc.iter_mut().enumerate().take(height) {
                    let row = &out[(r0 + i) * n + c0..(r0 + i) * n + c0 + width];
                    let start = if k0 == 0 {
                        &w.bias[c0..c0 + width]
                    } else {
                        row
                    };
                    match <&[f32; NR]>::try_from(start) {
                        Ok(full) => *acc = *full,
                        Err(_) => acc[..width].copy_from_slice(start),
                    }
                }
                tile(&a, panel, &mut acc);
                for (i, acc) in acc.iter().enumerate().take(height) {
                    let row = &mut out[(r0 + i) * n + c0..(r0 + i) * n + c0 + width];
                    match <&mut [f32; NR]>::try_from(&mut *row) {
                        Ok(full) => *full = *acc,
                        Err(_) => row.copy_from_slice(&acc[..width]),
                    }
                }
                r0 += MR;
            }
        }
        k0 += kc;
    }
}

/// `to[j] = from[j] · scale[j]`: a panel row of 8-bit weights in f32, as candle widens q8_0.
#[inline(always)]
fn widen(to: &mut [f32], from: &[i8], scale: &[f32]) {
    #[cfg(target_arch = "wasm32")]
    if to.len() == 8 && from.len() == 8 && scale.len() == 8 {
        use std::arch::wasm32::*;
        // SAFETY: 8 bytes read from `from`, 8 floats from `scale` and to `to` (checked above).
        unsafe {
            let bytes = u64x2_splat((from.as_ptr() as *const u64).read_unaligned());
            let wide = i16x8_extend_low_i8x16(bytes);
            let (lo, hi) = (i32x4_extend_low_i16x8(wide), i32x4_extend_high_i16x8(wide));
            let s = scale.as_ptr() as *const v128;
            let t = to.as_mut_ptr() as *mut v128;
            v128_store(t, f32x4_mul(f32x4_convert_i32x4(lo), v128_load(s)));
            v128_store(
                t.add(1),
                f32x4_mul(f32x4_convert_i32x4(hi), v128_load(s.add(1))),
            );
        }
        return;
    }
    for ((t, &v), &s) in to.iter_mut().zip(from).zip(scale) {
        *t = v as f32 * s;
    }
}

/// acc[i][j] += Σ_k a[i][k] · panel[k][j], k in order, `madd(a, b, c)` = a·b + c: the tile for
/// targets without a written-out one, which the compiler vectorizes as it can.
#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
fn tile<const MR: usize, const NR: usize>(
    a: &[&[f32]; MR],
    panel: &[f32],
    acc: &mut Tile<MR, NR>,
    madd: impl Fn(f32, f32, f32) -> f32 + Copy,
) {
    let kc = a[0].len();
    let mut sums = *acc;
    for (k, b) in panel.chunks_exact(NR).enumerate().take(kc) {
        let b: &[f32; NR] = b.try_into().expect("a panel row of NR");
        for i in 0..MR {
            let x = a[i][k];
            for j in 0..NR {
                sums[i][j] = madd(x, b[j], sums[i][j]);
            }
        }
    }
    *acc = sums;
}

/// `tile` for wasm SIMD128: 8 of V8's 16 vector registers on x86-64 hold sums (a multiply and
/// an add: fused multiply-add is relaxed SIMD's).
#[cfg(target_arch = "wasm32")]
fn tile_simd128(a: &[&[f32]; 4], panel: &[f32], acc: &mut Tile<4, 8>) {
    use std::arch::wasm32::*;
    let kc = a[0].len();
    assert!(panel.len() >= kc * 8 && a.iter().all(|r| r.len() == kc));
    // SAFETY: every load and store is within `panel`, `a`'s rows or `acc` (checked above).
    unsafe {
        let mut c = [[f32x4_splat(0.0); 2]; 4];
        for i in 0..4 {
            c[i][0] = v128_load(acc[i].as_ptr() as *const v128);
            c[i][1] = v128_load(acc[i].as_ptr().add(4) as *const v128);
        }
        let p = panel.as_ptr();
        for k in 0..kc {
            let b0 = v128_load(p.add(k * 8) as *const v128);
            let b1 = v128_load(p.add(k * 8 + 4) as *const v128);
            for i in 0..4 {
                let x = f32x4_splat(*a[i].get_unchecked(k));
                c[i][0] = f32x4_add(c[i][0], f32x4_mul(x, b0));
                c[i][1] = f32x4_add(c[i][1], f32x4_mul(x, b1));
            }
        }
        for i in 0..4 {
            v128_store(acc[i].as_mut_ptr() as *mut v128, c[i][0]);
            v128_store(acc[i].as_mut_ptr().add(4) as *mut v128, c[i][1]);
        }
    }
}

/// `tile` for AVX-512F, written out: 24 of the 32 registers hold sums.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn tile_avx512(a: &[&[f32]; 8], panel: &[f32], acc: &mut Tile<8, 32>) {
    use std::arch::x86_64::*;
    let kc = a[0].len();
    assert!(panel.len() >= kc * 32 && a.iter().all(|r| r.len() == kc));
    let mut c = [[_mm512_setzero_ps(); 2]; 8];
    for i in 0..8 {
        c[i][0] = _mm512_loadu_ps(acc[i].as_ptr());
        c[i][1] = _mm512_loadu_ps(acc[i].as_ptr().add(16));
    }
    let p = panel.as_ptr();
    for k in 0..kc {
        let b0 = _mm512_loadu_ps(p.add(k * 32));
        let b1 = _mm512_loadu_ps(p.add(k * 32 + 16));
        for i in 0..8 {
            let x = _mm512_set1_ps(*a[i].as_ptr().add(k));
            c[i][0] = _mm512_fmadd_ps(x, b0, c[i][0]);
            c[i][1] = _mm512_fmadd_ps(x, b1, c[i][1]);
        }
    }
    for i in 0..8 {
        _mm512_storeu_ps(acc[i].as_mut_ptr(), c[i][0]);
        _mm512_storeu_ps(acc[i].as_mut_ptr().add(16), c[i][1]);
    }
}

/// `tile` for AVX2 + FMA, written out: the compiler's own vectorization of it spills.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn tile_avx2(a: &[&[f32]; 6], panel: &[f32], acc: &mut Tile<6, 16>) {
    use std::arch::x86_64::*;
    let kc = a[0].len();
    assert!(panel.len() >= kc * 16 && a.iter().all(|r| r.len() == kc));
    let mut c = [[_mm256_setzero_ps(); 2]; 6];
    for i in 0..6 {
        c[i][0] = _mm256_loadu_ps(acc[i].as_ptr());
        c[i][1] = _mm256_loadu_ps(acc[i].as_ptr().add(8));
    }
    let p = panel.as_ptr();
    for k in 0..kc {
        let b0 = _mm256_loadu_ps(p.add(k * 16));
        let b1 = _mm256_loadu_ps(p.add(k * 16 + 8));
        for i in 0..6 {
            let x = _mm256_broadcast_ss(&*a[i].as_ptr().add(k));
            c[i][0] = _mm256_fmadd_ps(x, b0, c[i][0]);
            c[i][1] = _mm256_fmadd_ps(x, b1, c[i][1]);
        }
    }
    for i in 0..6 {
        _mm256_storeu_ps(acc[i].as_mut_ptr(), c[i][0]);
        _mm256_storeu_ps(acc[i].as_mut_ptr().add(8), c[i][1]);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn reference(weight: &[f32], bias: &[f32], x: &[f32], n: usize, k: usize) -> Vec<f32> {
        let rows = x.len() / k;
        let mut out = vec![0.0; rows * n];
        for r in 0..rows {
            for o in 0..n {
                let dot: f64 = (0..k)
                    .map(|i| x[r * k + i] as f64 * weight[o * k + i] as f64)
                    .sum();
                out[r * n + o] = (dot + bias[o] as f64) as f32;
            }
        }
        out
    }

    /// Layers of random weights and inputs (rows, inputs, outputs, weight, bias, x), at shapes
    /// that reach every edge of a tile, a panel and a block; x's values in ±`spread`/2.
    #[allow(clippy::type_complexity)]
    pub(in crate::encoder) fn random_layers(
        seed: u32,
        spread: f32,
    ) -> Vec<(usize, usize, usize, Vec<f32>, Vec<f32>, Vec<f32>)> {
        let mut seed = seed;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1 << 24) as f32 - 0.5
        };
        let shapes = [
            (1, 384, 384),
            (7, 3, 5),
            (13, 1536, 40),
            (9, 2049, 33),
            (0, 4, 4),
            (3, 5, 0),
        ];
        shapes
            .into_iter()
            .map(|(rows, k, n)| {
                let weight: Vec<f32> = (0..n * k).map(|_| next()).collect();
                let bias: Vec<f32> = (0..n).map(|_| next()).collect();
                let x: Vec<f32> = (0..rows * k).map(|_| next() * spread).collect();
                (rows, k, n, weight, bias, x)
            })
            .collect()
    }

    #[test]
    fn eight_bit_panels_give_the_widened_weights_products_to_the_bit() {
        // 544 inputs: two whole blocks of AVX-512 panels (256) and a short one.
        let (n, k, rows) = (45, 544, 7);
        let values: Vec<i8> = (0..n * k)
            .map(|i| ((i * 37 % 255) as i32 - 127) as i8)
            .collect();
        let scales: Vec<f32> = (0..n * k / Q8_BLOCK)
            .map(|i| 0.001 + i as f32 * 1e-4)
            .collect();
        let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.01 - 0.2).collect();
        let x: Vec<f32> = (0..rows * k)
            .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
            .collect();
        // q8_0 widened as candle does: value × scale.
        let widened: Vec<f32> = (0..n * k)
            .map(|i| values[i] as f32 * scales[(i / k) * (k / Q8_BLOCK) + (i % k) / Q8_BLOCK])
            .collect();
        let q8 = Packed::from_q8(&values, &scales, &bias, n, k);
        assert_eq!(q8.weight(), widened);
        assert_eq!(
            q8.forward(&x),
            Packed::new(&widened, &bias, n, k).forward(&x)
        );
    }

    #[test]
    fn products_match_a_plain_sum_at_every_shape_edge() {
        for (rows, k, n, weight, bias, x) in random_layers(7, 1.0) {
            let packed = Packed::new(&weight, &bias, n, k);
            assert_eq!(packed.weight(), weight);
            let got = packed.forward(&x);
            let want = reference(&weight, &bias, &x, n, k);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
                    "{g} against {w} at {rows}×{k}×{n}"
                );
            }
            // A row's result does not depend on the rows beside it.
            if rows > 1 {
                assert_eq!(packed.forward(&x[k..2 * k]), got[n..2 * n]);
            }
        }
    }
}
