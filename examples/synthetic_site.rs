//! A large site made from a small real one, for measuring (and testing) a fragmented index at
//! sizes this machine cannot embed: `N` chunks in documents of 8, each chunk's text a mix of
//! sentences of the source's chunks and its vector a real embedding of the chunk it mostly
//! comes from, perturbed (σ = 0.02 a component before renormalizing, as `bench_vectors` does).
//! Writes OUT/single (index.cairn), OUT/fragments (meta.cairn and packs) and the queries:
//! OUT/queries.txt (one a line), OUT/queries.f32 (their vectors: real source embeddings
//! perturbed with σ = 0.05) and OUT/queries.json (text, vector, and the exact semantic top 10).
//!
//!   cargo run --example synthetic_site -- SOURCE_DIR[,SOURCE_DIR...] OUT_DIR N [QUERIES]

use std::path::Path;

use cairn::fragment::write::{self, Options};
use cairn::index::lexical::{ChunkTerms, LexicalIndex};
use cairn::index::vector::{Precision, VectorIndex};
use cairn::index::{format, indexed_text, Chunk, Document, Index};

const PER_DOCUMENT: usize = 8;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [sources, out, n, rest @ ..] = &args[..] else {
        return Err("usage: synthetic_site SOURCE_DIR[,SOURCE_DIR...] OUT_DIR N [QUERIES]".into());
    };
    let n: usize = n.parse()?;
    let query_count: usize = rest.first().map_or(Ok(50), |q| q.parse())?;
    let out = Path::new(out);
    let sources: Vec<(String, Index)> = sources
        .split(',')
        .map(|dir| {
            let bytes = std::fs::read(Path::new(dir).join("index.cairn"))?;
            Ok((dir.to_string(), format::read(&bytes)?))
        })
        .collect::<Result<_, Box<dyn std::error::Error>>>()?;
    let first = &sources[0].1;
    let model = first.vectors.as_ref().ok_or("the source index has no vectors")?.model.clone();
    let dim = model.dimension as usize;
    // Every source chunk: its text's sentences, its title and its vector.
    let mut pool: Vec<(Vec<String>, String, Vec<f32>)> = Vec::new();
    for (_, index) in &sources {
        let vectors = index.vectors.as_ref().ok_or("a source index has no vectors")?.to_flat();
        for (c, chunk) in index.chunks.iter().enumerate() {
            let sentences: Vec<String> = chunk
                .text
                .split_inclusive(['.', '!', '?'])
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            if !sentences.is_empty() {
                let title = index.document_of(chunk).title.clone();
                pool.push((sentences, title, vectors[c * dim..(c + 1) * dim].to_vec()));
            }
        }
    }
    println!("{} real chunks from {} sources", pool.len(), sources.len());
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut documents = Vec::new();
    let mut chunks = Vec::new();
    let mut vectors = Vec::with_capacity(n * dim);
    for i in 0..n {
        let doc = (i / PER_DOCUMENT) as u32;
        let s = (next(&mut rng) * pool.len() as f64) as usize % pool.len();
        let (sentences, title, vector) = &pool[s];
        if i % PER_DOCUMENT == 0 {
            documents.push(Document {
                id: format!("page-{doc}"),
                doc_type: cairn::hit::DocType::Md,
                title: format!("{title} ({doc})"),
                url: Some(format!("https://example.org/page-{doc}.html")),
                metadata: None,
                created: None,
                updated: None,
                author: None,
                summary: None,
            });
        }
        // Most of the text from chunk `s`, a sentence from another.
        let other = &pool[(next(&mut rng) * pool.len() as f64) as usize % pool.len()].0;
        let mut text = sentences.join(" ");
        text.push(' ');
        text.push_str(&other[(next(&mut rng) * other.len() as f64) as usize % other.len()]);
        chunks.push(Chunk {
            doc,
            chunk_index: (i % PER_DOCUMENT) as u32,
            heading_path: vec![format!("Section {}", i % PER_DOCUMENT + 1)],
            anchor: Some(format!("section-{}", i % PER_DOCUMENT + 1)),
            text,
            line_start: 1,
            line_end: 1,
            source_offset: 0,
            pages: None,
        });
        vectors.extend(perturb(vector, 0.02, &mut rng));
    }
    let analyzer = first.analyzer();
    let mut words = Vec::new();
    let terms: Vec<ChunkTerms> = chunks
        .iter()
        .map(|c| {
            let pairs = analyzer.words_and_terms(&indexed_text(&documents[c.doc as usize], c));
            let terms = pairs.iter().map(|(_, term)| term.clone()).collect();
            words.extend(pairs);
            ChunkTerms {
                document: c.doc,
                terms,
            }
        })
        .collect();
    let mut lexical = LexicalIndex::build(first.settings.bm25, terms);
    lexical.set_words(words);
    let vector_index = VectorIndex::flat(model, vectors, Precision::Int8);

    // Queries: a few words of a real chunk, and that chunk's vector perturbed.
    let mut texts = Vec::new();
    let mut query_vectors: Vec<f32> = Vec::new();
    let mut json = Vec::new();
    while texts.len() < query_count {
        let (sentences, _, vector) = &pool[(next(&mut rng) * pool.len() as f64) as usize % pool.len()];
        let text: String = sentences[0]
            .split_whitespace()
            .filter(|w| w.len() > 3)
            .take(4)
            .collect::<Vec<_>>()
            .join(" ");
        if text.is_empty() {
            continue;
        }
        let v = perturb(vector, 0.05, &mut rng);
        let exact: Vec<String> = vector_index
            .search_exact(&v, 10, None)
            .iter()
            .map(|h| {
                let c = &chunks[h.chunk as usize];
                format!("{}#{}", documents[c.doc as usize].id, c.chunk_index)
            })
            .collect();
        json.push(serde_json::json!({ "text": text, "vector": v, "exact": exact }));
        query_vectors.extend(&v);
        texts.push(text);
    }
    let index = Index::new(
        first.settings.clone(),
        documents,
        chunks,
        Vec::new(),
        lexical,
        Some(vector_index),
    );
    let single = out.join("single");
    std::fs::create_dir_all(&single)?;
    std::fs::write(single.join("index.cairn"), format::write(&index)?)?;
    let layout = write::write(&index, &out.join("fragments"), &Options::default())?;
    std::fs::write(out.join("queries.txt"), texts.join("\n") + "\n")?;
    let bytes: Vec<u8> = query_vectors.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(out.join("queries.f32"), bytes)?;
    std::fs::write(out.join("queries.json"), serde_json::to_string(&json)?)?;
    println!(
        "{n} chunks, {} documents: {} fragments in {} packs",
        index.documents.len(),
        layout.fragments,
        layout.packs.len()
    );
    Ok(())
}

fn next(rng: &mut u64) -> f64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    (*rng >> 11) as f64 / (1u64 << 53) as f64
}

/// `v` plus Gaussian noise of deviation `sigma` per component, renormalized.
fn perturb(v: &[f32], sigma: f32, rng: &mut u64) -> Vec<f32> {
    let mut out: Vec<f32> = v
        .iter()
        .map(|x| {
            let (u1, u2) = (next(rng).max(1e-12), next(rng));
            x + sigma * ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()) as f32
        })
        .collect();
    let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
    out.iter_mut().for_each(|x| *x /= norm);
    out
}
