//! The chunk vectors of two index files of the same inputs, compared: the lowest and the median
//! cosine between a chunk's vector in one and in the other (`bench/npx-equivalence.sh`: the
//! native CLI's build against the npm package's WASI build).
//!
//!   cargo run --release --example compare_vectors -- A/index.cairn B/index.cairn

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let [a, b] = paths.as_slice() else {
        return Err("usage: compare_vectors A/index.cairn B/index.cairn".into());
    };
    let read = |p: &str| -> Result<cairn::index::Index, Box<dyn std::error::Error>> {
        Ok(cairn::index::format::read(&std::fs::read(p)?)?)
    };
    let (a, b) = (read(a)?, read(b)?);
    let texts =
        |i: &cairn::index::Index| i.chunks.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
    if texts(&a) != texts(&b) {
        return Err("the two indexes do not hold the same chunks".into());
    }
    let (Some(va), Some(vb)) = (&a.vectors, &b.vectors) else {
        return Err("an index has no vectors".into());
    };
    let dim = va.dimension();
    let (fa, fb) = (va.to_flat(), vb.to_flat());
    let mut cosines: Vec<f32> = fa
        .chunks(dim)
        .zip(fb.chunks(dim))
        .map(|(x, y)| {
            let dot: f32 = x.iter().zip(y).map(|(p, q)| p * q).sum();
            let norm = |v: &[f32]| v.iter().map(|p| p * p).sum::<f32>().sqrt();
            dot / (norm(x) * norm(y))
        })
        .collect();
    cosines.sort_by(f32::total_cmp);
    let identical = fa == fb;
    println!(
        "{} vectors: cosine min {:.6}, median {:.6}{}",
        cosines.len(),
        cosines.first().copied().unwrap_or(1.0),
        cosines.get(cosines.len() / 2).copied().unwrap_or(1.0),
        if identical { " (identical)" } else { "" }
    );
    Ok(())
}
