//! A large site made from small real ones, for measuring (and testing) a fragmented index at
//! sizes this machine cannot embed: `N` chunks in documents of 8, each chunk's text a mix of
//! sentences of the text sources' chunks (`--text`, default the vector sources), and its vector
//! either a real embedding perturbed (σ = 0.02 a component before renormalizing, as
//! `bench_vectors` does), or with `--mix`, a random blend of three real embeddings plus that
//! noise (so that a small source does not give 100k near-copies of a few points).
//! Writes OUT/single (index.cairn), OUT/fragments (meta.cairn and packs) and the queries:
//! OUT/queries.txt (one a line), OUT/queries.f32 (their vectors: real source embeddings
//! perturbed with σ = 0.05) and OUT/queries.json (text, vector, and the exact semantic top 10).
//!
//!   cargo run --example synthetic_site -- SOURCE_DIR[,SOURCE_DIR...] OUT_DIR N [QUERIES]
//!       [--text TEXT_DIR[,TEXT_DIR...]] [--mix]

use std::path::Path;

use cairn::fragment::write::{self, Options};
use cairn::index::lexical::{ChunkTerms, LexicalIndex};
use cairn::index::vector::{Precision, VectorIndex};
use cairn::index::{format, indexed_text, Chunk, Document, Index};

const PER_DOCUMENT: usize = 8;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let mix = args.iter().any(|a| a == "--mix");
    let text_sources = flag("--text");
    let args: Vec<String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && !(*i > 0 && args[i - 1] == "--text"))
        .map(|(_, a)| a.clone())
        .collect();
    let [sources, out, n, rest @ ..] = &args[..] else {
        return Err("usage: synthetic_site SOURCE_DIR[,SOURCE_DIR...] OUT_DIR N [QUERIES]".into());
    };
    let n: usize = n.parse()?;
    let query_count: usize = rest.first().map_or(Ok(50), |q| q.parse())?;
    let out = Path::new(out);
    let open = |dirs: &str| -> Result<Vec<Index>, Box<dyn std::error::Error>> {
        dirs.split(',')
            .map(|dir| {
                Ok(format::read(&std::fs::read(
                    Path::new(dir).join("index.cairn"),
                )?)?)
            })
            .collect()
    };
    let sources = open(sources)?;
    let texts = match &text_sources {
        Some(dirs) => open(dirs)?,
        None => Vec::new(),
    };
    let first = &sources[0];
    let model = first
        .vectors
        .as_ref()
        .ok_or("the source index has no vectors")?
        .model
        .clone();
    let dim = model.dimension as usize;
    // Every source chunk's sentences and title; the vector sources' chunks with their vectors.
    let sentences_of = |chunk: &Chunk| -> Vec<String> {
        chunk
            .text
            .split_inclusive(['.', '!', '?'])
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let mut pool: Vec<(Vec<String>, String, Vec<f32>)> = Vec::new();
    for index in &sources {
        let vectors = index
            .vectors
            .as_ref()
            .ok_or("a source index has no vectors")?
            .to_flat();
        for (c, chunk) in index.chunks.iter().enumerate() {
            let sentences = sentences_of(chunk);
            if !sentences.is_empty() {
                let title = index.document_of(chunk).title.clone();
                pool.push((sentences, title, vectors[c * dim..(c + 1) * dim].to_vec()));
            }
        }
    }
    let text_pool: Vec<(Vec<String>, String)> = texts
        .iter()
        .flat_map(|index| {
            index
                .chunks
                .iter()
                .map(|chunk| (sentences_of(chunk), index.document_of(chunk).title.clone()))
        })
        .filter(|(s, _)| !s.is_empty())
        .collect();
    println!(
        "{} real chunks with vectors, {} of text",
        pool.len(),
        if text_pool.is_empty() {
            pool.len()
        } else {
            text_pool.len()
        }
    );
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut documents = Vec::new();
    let mut chunks = Vec::new();
    let mut vectors = Vec::with_capacity(n * dim);
    for i in 0..n {
        let doc = (i / PER_DOCUMENT) as u32;
        let s = (next(&mut rng) * pool.len() as f64) as usize % pool.len();
        let (own_sentences, own_title, vector) = &pool[s];
        let (sentences, title) = if text_pool.is_empty() {
            (own_sentences, own_title)
        } else {
            let t =
                &text_pool[(next(&mut rng) * text_pool.len() as f64) as usize % text_pool.len()];
            (&t.0, &t.1)
        };
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
        if mix {
            let mut blend: Vec<f32> = vector.iter().map(|x| x * next(&mut rng) as f32).collect();
            for _ in 0..2 {
                let other = &pool[(next(&mut rng) * pool.len() as f64) as usize % pool.len()].2;
                let w = next(&mut rng) as f32;
                blend.iter_mut().zip(other).for_each(|(b, o)| *b += w * o);
            }
            vectors.extend(perturb(&blend, 0.02, &mut rng));
        } else {
            vectors.extend(perturb(vector, 0.02, &mut rng));
        }
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
        let (sentences, _, vector) =
            &pool[(next(&mut rng) * pool.len() as f64) as usize % pool.len()];
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
    let layout = write::write(&index, &out.join("fragments"), &Options::default(), &[])?;
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
