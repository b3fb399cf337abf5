//! Does 8-bit pay for the build? Times the encoder's linear layers (all-MiniLM-L6-v2: 384 → 384,
//! 384 → 1536, 1536 → 384) for one chunk of T tokens, as candle's f32 matmul (gemm) and as
//! candle's q8_0 `QMatMul` (AVX2 kernels), on one thread as `cairn index` runs them (one text a
//! core). Prints milliseconds a layer and the ratio.
//!
//! Usage: cargo run --example bench_qmatmul -- [TOKENS...]   (default 64 139 256)

use std::time::Instant;

use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{Device, Module, Tensor};

fn main() -> candle_core::Result<()> {
    // What `Embedder::load` does: candle's kernels on one thread.
    std::env::set_var("RAYON_NUM_THREADS", "1");
    let tokens: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a token count"))
        .collect();
    let tokens = if tokens.is_empty() {
        vec![64, 139, 256]
    } else {
        tokens
    };
    let device = Device::Cpu;
    println!("| tokens | layer (in → out) | f32 gemm ms | q8_0 QMatMul ms | q8_0 / f32 | |");
    println!("|---|---|---|---|---|");
    for &t in &tokens {
        for (k, n) in [(384, 384), (384, 1536), (1536, 384)] {
            let x = Tensor::randn(0f32, 1.0, (t, k), &device)?;
            let w = Tensor::randn(0f32, 0.05, (n, k), &device)?;
            let f32_layer = QMatMul::Tensor(w.clone());
            let q8_layer = QMatMul::from_qtensor(QTensor::quantize(&w, GgmlDType::Q8_0)?)?;
            let time = |layer: &QMatMul| -> candle_core::Result<f64> {
                layer.forward(&x)?; // warm
                let runs = 40;
                let started = Instant::now();
                for _ in 0..runs {
                    std::hint::black_box(layer.forward(&x)?);
                }
                Ok(started.elapsed().as_secs_f64() * 1000.0 / runs as f64)
            };
            let (a, b) = (time(&f32_layer)?, time(&q8_layer)?);
            println!("| {t} | {k} → {n} | {a:.3} | {b:.3} | {:.2} |", b / a);
        }
    }
    Ok(())
}
