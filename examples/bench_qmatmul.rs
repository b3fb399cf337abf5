//! The encoder's linear layers (all-MiniLM-L6-v2: 384 → 384, 384 → 1536, 1536 → 384) for one
//! chunk of T tokens, on one thread as `cairn index` runs them (one text a core): candle's f32
//! matmul (gemm), candle's q8_0 `QMatMul` (AVX2 kernels), and cairn's packed f32 product
//! (`encoder::matmul`, what the encoder runs). Prints milliseconds a layer, the ratios to gemm and
//! the packed product's GFLOP/s.
//!
//! Usage: cargo run --example bench_qmatmul -- [TOKENS...]   (default 64 139 256)

use std::time::Instant;

use cairn::encoder::int8::Packed8;
use cairn::encoder::matmul::Packed;
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
    println!("| tokens | layer (in → out) | f32 gemm ms | q8_0 QMatMul ms | packed f32 ms | packed int8 ms | q8_0 ÷ gemm | packed ÷ gemm | int8 ÷ gemm | packed GFLOP/s | int8 GOP/s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
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
            let packed = Packed::new(&w.flatten_all()?.to_vec1()?, &vec![0.0; n], n, k);
            let xs = x.flatten_all()?.to_vec1::<f32>()?;
            packed.forward(&xs); // warm
            let runs = 40;
            let started = Instant::now();
            for _ in 0..runs {
                std::hint::black_box(packed.forward(&xs));
            }
            let c = started.elapsed().as_secs_f64() * 1000.0 / runs as f64;
            let int8 = Packed8::new(&w.flatten_all()?.to_vec1()?, &vec![0.0; n], n, k);
            int8.forward(&xs); // warm
            let started = Instant::now();
            for _ in 0..runs {
                std::hint::black_box(int8.forward(&xs));
            }
            let d = started.elapsed().as_secs_f64() * 1000.0 / runs as f64;
            let ops = |ms: f64| 2.0 * (t * k * n) as f64 / (ms / 1000.0) / 1e9;
            println!(
                "| {t} | {k} → {n} | {a:.3} | {b:.3} | {c:.3} | {d:.3} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} |",
                b / a,
                c / a,
                d / a,
                ops(c),
                ops(d)
            );
        }
    }
    Ok(())
}
