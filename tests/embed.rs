//! The embedder against an independent reference, and hybrid search end to end, with the real
//! all-MiniLM-L6-v2 weights (scripts/setup.sh fetches them into models/).
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};
use std::process::Command;

use cairn::build::common_tokens;
use cairn::embed::{quantize_model, write_f16_weights, Embedder, ModelFiles, QuantizedModel};
use cairn::store::rows::write_selection;
use serde_json::Value;

fn model_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    assert!(
        dir.join("model.safetensors").exists(),
        "run scripts/setup.sh first: {} is missing",
        dir.display()
    );
    dir
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let norm = |v: &[f32]| v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

#[test]
fn embeddings_match_the_reference_implementation() {
    let embedder = Embedder::load(ModelFiles::read_dir(&model_dir()).unwrap()).unwrap();
    let reference: Value = serde_json::from_str(include_str!("data/reference_embeddings.json"))
        .expect("reference embeddings");
    let sentences = reference["sentences"].as_array().unwrap();
    let texts: Vec<&str> = sentences
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    // One by one and as one padded batch: padding must not change a vector.
    let batch = embedder.embed_batch(&texts).unwrap();
    for (sentence, batched) in sentences.iter().zip(&batch) {
        let expected: Vec<f32> = sentence["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let single = embedder.embed(sentence["text"].as_str().unwrap()).unwrap();
        assert_eq!(single.len(), 384);
        let c = cosine(&single, &expected);
        assert!(c >= 0.9999, "{:?}: cosine {c}", sentence["text"]);
        assert!(
            cosine(&single, batched) >= 0.99999,
            "{:?}: batching changed the vector",
            sentence["text"]
        );
        let norm: f32 = single.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
    }
}

#[test]
fn half_precision_weights_keep_the_embeddings() {
    let dir = model_dir();
    let full = Embedder::load(ModelFiles::read_dir(&dir).unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let f16 = tmp.path().join("model.safetensors");
    write_f16_weights(&std::fs::read(dir.join("model.safetensors")).unwrap(), &f16).unwrap();
    let half_bytes = std::fs::read(&f16).unwrap();
    let files = ModelFiles {
        weights: half_bytes,
        tokenizer: std::fs::read(dir.join("tokenizer.json")).unwrap(),
        config: std::fs::read(dir.join("config.json")).unwrap(),
        ..Default::default()
    };
    let half = Embedder::load(files).unwrap();
    for text in [
        "A man is eating food.",
        "How is the index file laid out?",
        "東京の喫茶店 ☕",
    ] {
        let c = cosine(&full.embed(text).unwrap(), &half.embed(text).unwrap());
        assert!(c >= 0.999, "{text}: f16 cosine {c}");
    }
}

/// The 8-bit model `q8` of `source`, given the word-row packs `packs` (none: rows come apart).
fn eight_bit(source: &ModelFiles, q8: &QuantizedModel, packs: Vec<Vec<u8>>) -> Embedder {
    Embedder::load(ModelFiles {
        weights: q8.weights.clone(),
        word_packs: packs,
        ..source.clone()
    })
    .unwrap()
}

#[test]
fn the_eight_bit_model_keeps_the_embeddings_and_reads_only_the_rows_it_is_given() {
    let dir = model_dir();
    let source = ModelFiles::read_dir(&dir).unwrap();
    let full = Embedder::load(source.clone()).unwrap();
    let q8 = quantize_model(&source).unwrap();
    // The same weights give the same bytes.
    let again = quantize_model(&source).unwrap();
    assert!(q8.weights == again.weights && q8.packs == again.packs);
    let loaded = |packs| eight_bit(&source, &q8, packs);
    let whole = loaded(q8.packs.iter().map(|(_, b)| b.clone()).collect());
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference_embeddings.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for sentence in reference["sentences"].as_array().unwrap() {
        let text = sentence["text"].as_str().unwrap();
        let c = cosine(&full.embed(text).unwrap(), &whole.embed(text).unwrap());
        assert!(c >= 0.99, "{text}: 8-bit cosine {c}");
        assert!(whole.missing_rows(text).unwrap().is_empty());
    }

    // Without its packs, the model names the rows a text's tokens need (each once) and embeds
    // the text once they, and only they, are added.
    let sparse = loaded(Vec::new());
    let text = "How do I install the wasm32 target with rustup? install install";
    let need = sparse.missing_rows(text).unwrap();
    let mut tokenizer = tokenizers::Tokenizer::from_bytes(&source.tokenizer).unwrap();
    tokenizer.with_padding(None);
    let mut ids = tokenizer.encode(text, true).unwrap().get_ids().to_vec();
    // And the pad token's row, which texts embedded together need.
    ids.push(sparse.pad_id());
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(need.iter().map(|r| r.row).collect::<Vec<_>>(), ids);
    assert!(sparse.embed(text).is_err());
    for r in &need {
        let pack = &q8.packs.iter().find(|(name, _)| *name == r.pack).unwrap().1;
        let at = r.offset as usize;
        sparse
            .add_row(r.row, &pack[at..at + r.length as usize])
            .unwrap();
    }
    assert!(sparse.missing_rows(text).unwrap().is_empty());
    assert_eq!(sparse.embed(text).unwrap(), whole.embed(text).unwrap());
    // Texts embedded together, the shorter padded (a hit's sentences), with the rows they named.
    let pair = [text, "install the target"];
    assert!(sparse.missing_rows(pair[1]).unwrap().is_empty());
    assert_eq!(
        sparse.embed_batch(&pair).unwrap(),
        whole.embed_batch(&pair).unwrap()
    );
    // A damaged row is refused and changes nothing.
    let r = &sparse.missing_rows("zebra").unwrap()[0];
    assert!(sparse.add_row(r.row, &[0u8; 10]).is_err());
    assert_eq!(sparse.missing_rows("zebra").unwrap().len(), 1);
}

#[test]
fn the_common_rows_give_their_tokens_rows_and_a_damaged_or_foreign_file_gives_none() {
    let source = ModelFiles::read_dir(&model_dir()).unwrap();
    let q8 = quantize_model(&source).unwrap();
    let loaded = |packs| eight_bit(&source, &q8, packs);
    let whole = loaded(q8.packs.iter().map(|(_, b)| b.clone()).collect());
    let texts = [
        "The index is written as fragments, fetched as queries need them.",
        "A query needs the fragments of its terms.",
    ];
    let (ids, share) = common_tokens(&whole, texts.into_iter()).unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]) && share == 1.0);
    // The pad token's row too: texts embedded together (a hit's sentences) need it.
    assert!(ids.contains(&whole.pad_id()));
    let file = write_selection(&q8.rows, &q8.packs, &ids);

    // Given the file, a text of those tokens needs no row of its own and embeds as with every
    // row; a text with other tokens still names those.
    let sparse = loaded(Vec::new());
    assert_eq!(sparse.add_rows(&file).unwrap(), ids.len());
    for text in texts {
        assert!(sparse.missing_rows(text).unwrap().is_empty(), "{text}");
        assert_eq!(sparse.embed(text).unwrap(), whole.embed(text).unwrap());
    }
    assert!(!sparse.missing_rows("zebra crossing").unwrap().is_empty());

    // A damaged row, a cut file, another model's file or one of more rows than the model has is
    // refused whole: nothing of it kept.
    let fresh = loaded(Vec::new());
    let mut damaged = file.clone();
    let last = damaged.len() - 9;
    damaged[last] ^= 1;
    let mut foreign = file.clone();
    foreign[12] ^= 1; // a letter of the first pack's name
                      // More rows than the model has (a crafted file): refused before any is read.
    let rows_from = file.len() - ids.len() * 396;
    let mut crafted = file.clone();
    while crafted.len() - rows_from <= 30_522 * 396 {
        crafted.extend_from_slice(&file[rows_from..]);
    }
    for bad in [
        &damaged[..],
        &file[..file.len() - 3],
        &foreign[..],
        b"CAIRNSEL",
        &crafted[..],
    ] {
        assert!(fresh.add_rows(bad).is_err());
        assert_eq!(fresh.missing_rows(texts[0]).unwrap().len(), {
            let mut t = whole.token_ids(texts[0]).unwrap();
            t.push(whole.pad_id());
            t.sort_unstable();
            t.dedup();
            t.len()
        });
    }
}

#[test]
fn hybrid_search_finds_meaning_without_shared_words() {
    let out = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/docs");
    let cairn = env!("CARGO_BIN_EXE_cairn");
    let status = Command::new(cairn)
        .args([
            "index",
            fixtures.to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
            "--model",
            model_dir().to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    for file in [
        "index.cairn",
        "model/model.gguf",
        "model/common.cairnrows",
        "model/tokenizer.json",
        "model/config.json",
    ] {
        assert!(out.path().join(file).exists(), "{file} missing");
    }
    let search = |query: &str, mode: &str| -> Vec<Value> {
        let o = Command::new(cairn)
            .args([
                "search",
                out.path().to_str().unwrap(),
                query,
                "--json",
                "--mode",
            ])
            .args(mode.split(' '))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    };
    // No word of the query is in the document; only meaning connects them.
    let hits = search("espresso bars in Japan", "semantic");
    assert_eq!(hits[0]["citation"]["docId"], "international.md");
    assert_eq!(hits[0]["scoreKind"], "cosine");
    let semantic = &hits[0]["signals"]["semantic"];
    assert_eq!(semantic["rank"], 1);
    assert!(
        (semantic["score"].as_f64().unwrap() + semantic["distance"].as_f64().unwrap() - 1.0).abs()
            < 1e-5
    );

    // Hybrid search fuses by default with a weighted sum of each signal's share of its best, in [0, 1].
    let hits = search("stone trail markers", "hybrid");
    assert_eq!(hits[0]["scoreKind"], "weighted");
    assert_eq!(hits[0]["citation"]["docId"], "notes.txt");
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    let hits = search("stone trail markers", "hybrid --fusion rrf");
    assert_eq!(hits[0]["scoreKind"], "rrf");
    assert_eq!(hits[0]["citation"]["docId"], "notes.txt");
    let top = &hits[0]["signals"];
    assert!(
        top.get("lexical").is_some() && top.get("semantic").is_some(),
        "{top}"
    );
    let rrf = 1.0 / (60.0 + top["lexical"]["rank"].as_f64().unwrap())
        + 1.0 / (60.0 + top["semantic"]["rank"].as_f64().unwrap());
    assert!((hits[0]["score"].as_f64().unwrap() - rrf).abs() < 1e-6);
    // Every hybrid hit is explained by at least one signal.
    assert!(hits
        .iter()
        .all(|h| h["signals"].get("lexical").is_some() || h["signals"].get("semantic").is_some()));
}

#[test]
fn a_model_that_does_not_match_the_index_is_refused() {
    let out = tempfile::tempdir().unwrap();
    let notes = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/docs/notes.txt");
    let status = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "index",
            notes.to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
            "--model",
            model_dir().to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(out.path().join("index.cairn")).unwrap();
    let files = |weights: Vec<u8>| ModelFiles {
        weights,
        tokenizer: std::fs::read(model_dir().join("tokenizer.json")).unwrap(),
        config: std::fs::read(model_dir().join("config.json")).unwrap(),
        ..Default::default()
    };
    // The same architecture with one weight changed: a different model as far as the index knows.
    let mut tensors = candle_core::safetensors::load(
        model_dir().join("model.safetensors"),
        &candle_core::Device::Cpu,
    )
    .unwrap();
    let name = "pooler.dense.bias".to_string();
    let changed = (tensors[&name].clone() + 1.0).unwrap();
    tensors.insert(name, changed);
    let other = out.path().join("other.safetensors");
    candle_core::safetensors::save(&tensors, &other).unwrap();

    let mut searcher = cairn::Searcher::from_bytes(&bytes).unwrap();
    let error = searcher
        .load_model(files(std::fs::read(&other).unwrap()))
        .expect_err("refused")
        .to_string();
    assert!(error.contains("does not match the index"), "{error}");
    assert!(!searcher.model_ready());
    // The browser's model written beside the index (8-bit, its word rows under p/).
    assert!(!out.path().join("model/model.safetensors").exists());
    searcher
        .load_model(ModelFiles::read_dir(&out.path().join("model")).unwrap())
        .unwrap();
    assert!(searcher.model_ready());
}

#[test]
fn a_hit_found_by_meaning_gets_the_closest_sentence_as_its_match() {
    let out = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("trip.md"),
        "# Trip\n\nWe flew out on a Tuesday. The espresso bars of Tokyo open early and serve strong coffee. The museum was closed.\n",
    )
    .unwrap();
    let cairn = env!("CARGO_BIN_EXE_cairn");
    let status = Command::new(cairn)
        .args([
            "index",
            dir.path().to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
            "--model",
            model_dir().to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let o = Command::new(cairn)
        .args([
            "search",
            out.path().to_str().unwrap(),
            "cafés in Japan",
            "--json",
            "--mode",
            "semantic",
        ])
        .output()
        .unwrap();
    let hits: Value = serde_json::from_slice(&o.stdout).unwrap();
    let hit = &hits[0];
    assert!(
        hit["highlights"].as_array().unwrap().is_empty(),
        "no query word is in the text"
    );
    let text = hit["text"].as_str().unwrap();
    let units: Vec<u16> = text.encode_utf16().collect();
    let (start, length) = (
        hit["match"]["start"].as_u64().unwrap() as usize,
        hit["match"]["length"].as_u64().unwrap() as usize,
    );
    let sentence = String::from_utf16(&units[start..start + length]).unwrap();
    assert_eq!(
        sentence,
        "The espresso bars of Tokyo open early and serve strong coffee."
    );
}

#[test]
fn with_a_model_every_chunk_fits_the_models_window() {
    // One record of 192 words of dense terminology: under the 400-word bound below, but several
    // tokens a word, so the model's 256-token window decides the cuts.
    let dir = tempfile::tempdir().unwrap();
    let sentence = "Immunohistochemical characterization of hepatocellular carcinomas after radiofrequency thermoablation.";
    let text = vec![sentence; 24].join(" ");
    let record = serde_json::json!({ "_id": "r1", "title": "Pharmacokinetics of antiretroviral prophylaxis", "text": text });
    let corpus = dir.path().join("corpus.jsonl");
    std::fs::write(&corpus, format!("{record}\n")).unwrap();
    let build = |out: &Path, extra: &[&str]| {
        let status = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args([
                "index",
                corpus.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--chunk-words",
                "400",
            ])
            .args(["--model", model_dir().to_str().unwrap()])
            .args(extra)
            .status()
            .unwrap();
        assert!(status.success());
        cairn::index::format::read(&std::fs::read(out.join("index.cairn")).unwrap()).unwrap()
    };
    let index = build(&dir.path().join("embedded"), &[]);
    let counter = Embedder::load(ModelFiles::read_dir(&model_dir()).unwrap())
        .unwrap()
        .token_counter()
        .unwrap();
    assert_eq!(counter.window(), 254, "256 less [CLS] and [SEP]");
    assert!(index.chunks.len() >= 3, "{} chunks", index.chunks.len());
    for chunk in &index.chunks {
        let tokens = counter.count(&cairn::index::indexed_text(&index.documents[0], chunk));
        assert!(
            tokens <= counter.window(),
            "chunk {} has {tokens} tokens",
            chunk.chunk_index
        );
    }
    // Without a model, the word bound alone keeps the record whole.
    assert_eq!(
        build(&dir.path().join("lexical"), &["--no-embed"])
            .chunks
            .len(),
        1
    );
}

/// A collection of 1,000 records: short ones (one chunk each) and every 50th long enough for
/// several chunks; `edited` changes one sentence near the end of record 500.
fn thousand_records(edited: bool) -> String {
    const WORDS: [&str; 24] = [
        "index",
        "search",
        "vector",
        "browser",
        "query",
        "fragment",
        "token",
        "model",
        "chunk",
        "page",
        "site",
        "shard",
        "merge",
        "build",
        "cache",
        "ranking",
        "lexical",
        "semantic",
        "embedding",
        "document",
        "citation",
        "highlight",
        "fusion",
        "filter",
    ];
    let sentence = |r: usize, s: usize| {
        let w = |k: usize| WORDS[(r * 7 + s * 5 + k * 3) % WORDS.len()];
        format!(
            "The {} of record {r} explains how a {} meets a {} in part {s}.",
            w(0),
            w(1),
            w(2)
        )
    };
    (0..1000)
        .map(|r| {
            let sentences = if r % 50 == 0 { 40 } else { 1 + r % 3 };
            let mut text: Vec<String> = (0..sentences).map(|s| sentence(r, s)).collect();
            if edited && r == 500 {
                text[sentences - 2] = "This sentence was rewritten after the first build.".into();
            }
            serde_json::json!({"_id": format!("r{r}"), "title": format!("Record {r}"), "text": text.join(" ")})
                .to_string()
                + "\n"
        })
        .collect()
}

/// Runs `cairn ARGS...` and returns its standard output; fails the test on an error.
fn cairn(args: &[&str]) -> String {
    let run = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "cairn {args:?}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8(run.stdout).unwrap()
}

/// Builds are reproducible whichever way they are made: three shards merged, a build from
/// scratch, and a rebuild that keeps the vectors of every unchanged chunk all write the same
/// bytes; the rebuild embeds exactly the chunks whose text changed.
#[test]
fn shards_and_rebuilds_write_the_bytes_of_one_build() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("records.jsonl");
    let model = model_dir();
    let model = model.to_str().unwrap();
    let index = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "index",
            input.to_str().unwrap(),
            "--model",
            model,
            "--summaries",
            "--out",
            out.to_str().unwrap(),
        ];
        // One file (the 1,000 records' would be over the first answer's budget), unless a
        // test asks for fragments.
        if !extra.contains(&"--layout") {
            args.extend(["--layout", "single"]);
        }
        args.extend_from_slice(extra);
        cairn(&args)
    };
    let bytes = |out: &Path| std::fs::read(out.join("index.cairn")).unwrap();
    let read = |out: &Path| cairn::index::format::read(&bytes(out)).unwrap();

    std::fs::write(&input, thousand_records(false)).unwrap();
    let whole = dir.path().join("whole");
    let first = index(&whole, &[]);
    assert!(!first.contains("kept from the previous index"), "{first}");
    let before = read(&whole);
    assert_eq!(before.documents.len(), 1000);
    assert!(before.documents.iter().any(|d| d.summary.is_some()));

    // Three shards, merged in another order: the bytes of the one build.
    let parts: Vec<PathBuf> = (1..=3)
        .map(|i| dir.path().join(format!("part{i}")))
        .collect();
    for (i, part) in parts.iter().enumerate() {
        let said = index(part, &["--shard", &format!("{}/3", i + 1)]);
        assert!(said.contains(&format!("shard {}/3", i + 1)), "{said}");
    }
    let merged = dir.path().join("merged");
    let order = [&parts[2], &parts[0], &parts[1]];
    let mut args = vec!["merge"];
    args.extend(order.iter().map(|p| p.to_str().unwrap()));
    args.extend([
        "--out",
        merged.to_str().unwrap(),
        "--model",
        model,
        "--layout",
        "single",
    ]);
    cairn(&args);
    assert!(
        bytes(&merged) == bytes(&whole),
        "merged shards differ from one build"
    );
    // Every file under a folder: its path there, and its bytes.
    let files = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<_> = walkdir::WalkDir::new(d)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                (
                    e.path().strip_prefix(d).unwrap().display().to_string(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let (merged_model, whole_model) = (files(&merged.join("model")), files(&whole.join("model")));
    assert!(
        merged_model.len() > 3 && merged_model == whole_model,
        "the merged model differs"
    );

    // Merged into fragments (a large site's split build): the files of one build with
    // `--layout fragments` (made here from a copy of the one build, which keeps its vectors).
    let whole_fragments = dir.path().join("whole-fragments");
    for entry in walkdir::WalkDir::new(&whole).into_iter().flatten() {
        let to = whole_fragments.join(entry.path().strip_prefix(&whole).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
    let said = index(&whole_fragments, &["--layout", "fragments"]);
    assert!(said.contains("fragments in"), "{said}");
    let merged_fragments = dir.path().join("merged-fragments");
    let mut args = vec!["merge"];
    args.extend(order.iter().map(|p| p.to_str().unwrap()));
    args.extend([
        "--out",
        merged_fragments.to_str().unwrap(),
        "--model",
        model,
        "--layout",
        "fragments",
    ]);
    let said = cairn(&args);
    assert!(
        said.contains("meta.cairn") && said.contains("fragments in"),
        "{said}"
    );
    let layout = |d: &Path| -> Vec<(String, Vec<u8>)> {
        files(d)
            .into_iter()
            .filter(|(name, _)| !name.starts_with("model/"))
            .collect()
    };
    let (merged_layout, whole_layout) = (layout(&merged_fragments), layout(&whole_fragments));
    let names =
        |files: &[(String, Vec<u8>)]| files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert!(
        merged_layout.iter().any(|(n, _)| n == "meta.cairn")
            && !merged_layout.iter().any(|(n, _)| n == "index.cairn"),
        "{:?}",
        names(&merged_layout)
    );
    assert!(
        merged_layout == whole_layout,
        "merged fragments differ from one build's: {:?} against {:?}",
        names(&merged_layout),
        names(&whole_layout)
    );

    // A missing shard is an error that names what is there.
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "merge",
            parts[0].to_str().unwrap(),
            parts[2].to_str().unwrap(),
        ])
        .args([
            "--out",
            dir.path().join("broken").to_str().unwrap(),
            "--model",
            model,
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("1/3, 3/3"), "{said}");

    // One record edited: only the chunks whose text changed are embedded, and the result is
    // the bytes of a build from scratch.
    std::fs::write(&input, thousand_records(true)).unwrap();
    let incremental = index(&whole, &[]);
    let after = read(&whole);
    let old_texts: std::collections::HashSet<String> = before
        .chunks
        .iter()
        .map(|c| cairn::index::indexed_text(before.document_of(c), c))
        .collect();
    let changed: Vec<&cairn::index::Chunk> = after
        .chunks
        .iter()
        .filter(|c| !old_texts.contains(&cairn::index::indexed_text(after.document_of(c), c)))
        .collect();
    assert!(!changed.is_empty());
    assert!(changed
        .iter()
        .all(|c| after.documents[c.doc as usize].id == "r500"));
    let kept = after.chunks.len() - changed.len();
    assert!(
        incremental.trim_end().ends_with(&format!(
            "chunk vectors kept from the previous index {kept}"
        )),
        "{incremental}"
    );
    let fresh = dir.path().join("fresh");
    index(&fresh, &[]);
    assert!(
        bytes(&fresh) == bytes(&whole),
        "the rebuild differs from a build from scratch"
    );
}

/// A model the user brings, shaped as XLM-R (`tests/tiny-xlmr.mjs`: a Unigram tokenizer,
/// unprefixed `XLMRobertaModel` weights, 64 wide and 3 deep, positions after the padding's):
/// its tokenizer gives the ids and its encoder the vectors of an independent forward pass (not
/// those of BERT's positions), and an index built with it answers searches by meaning.
#[test]
fn an_xlm_roberta_shaped_model_embeds_as_its_reference_and_builds_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tiny-xlmr.mjs");
    let made = Command::new("node")
        .arg(&generator)
        .arg(&model)
        .status()
        .unwrap();
    assert!(made.success());
    let reference: Value =
        serde_json::from_slice(&std::fs::read(model.join("reference.json")).unwrap()).unwrap();
    let tokenizer = tokenizers::Tokenizer::from_file(model.join("tokenizer.json")).unwrap();
    let embedder = Embedder::load(ModelFiles::read_dir(&model).unwrap()).unwrap();
    assert_eq!(embedder.dimension(), 64);
    let numbers = |v: &Value| -> Vec<f32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    for case in reference["texts"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let ids: Vec<u32> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(
            tokenizer.encode(text, true).unwrap().get_ids(),
            ids,
            "{text}"
        );
        let vector = embedder.embed(text).unwrap();
        let c = cosine(&vector, &numbers(&case["embedding"]));
        assert!(c >= 0.9999, "{text:?}: cosine {c} with the reference");
        let bert = cosine(&vector, &numbers(&case["bertPositions"]));
        assert!(
            bert < 0.99,
            "{text:?}: as close to BERT's positions ({bert})"
        );
    }

    // An index of records whose texts are the reference's: each text finds its own record.
    let records: String = reference["texts"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, case)| {
            format!(
                "{}\n",
                serde_json::json!({"id": format!("r{i}"), "text": case["text"]})
            )
        })
        .collect();
    std::fs::write(dir.path().join("records.jsonl"), records).unwrap();
    let out = dir.path().join("index");
    let (records, out, model) = (
        dir.path().join("records.jsonl"),
        out.to_str().unwrap().to_string(),
        model.to_str().unwrap().to_string(),
    );
    cairn(&[
        "index",
        records.to_str().unwrap(),
        "--out",
        &out,
        "--model",
        &model,
    ]);
    for (i, case) in reference["texts"].as_array().unwrap().iter().enumerate() {
        let text = case["text"].as_str().unwrap();
        for mode in ["semantic", "hybrid"] {
            let hits: Value =
                serde_json::from_str(&cairn(&["search", &out, text, "--json", "--mode", mode]))
                    .unwrap();
            assert_eq!(
                hits[0]["citation"]["docId"],
                format!("r{i}"),
                "{mode} {text:?}"
            );
            assert!(
                hits[0]["signals"].get("semantic").is_some(),
                "{mode} {text:?}"
            );
        }
    }
}

/// `--arithmetic int8`: the chunks embedded in 8-bit products, which the index records; their
/// vectors within cosine 0.999 of an f32 build's; and a later f32 build into the same folder
/// keeps none of them (an index's vectors are all of one arithmetic).
#[test]
fn an_int8_build_records_its_arithmetic_and_stays_near_f32() {
    use cairn::index::vector::Arithmetic;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("records.jsonl");
    let records: String = thousand_records(false)
        .lines()
        .take(60)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&input, records).unwrap();
    let model = model_dir();
    let build = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "index",
            input.to_str().unwrap(),
            "--model",
            model.to_str().unwrap(),
            "--no-static",
            "--vectors",
            "f32",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        cairn(&args)
    };
    let vectors = |out: &Path| {
        let bytes = std::fs::read(out.join("index.cairn")).unwrap();
        cairn::index::format::read(&bytes).unwrap().vectors.unwrap()
    };
    let (f32_dir, int8_dir) = (dir.path().join("f32"), dir.path().join("int8"));
    build(&f32_dir, &[]);
    build(&int8_dir, &["--arithmetic", "int8"]);
    let (exact, eight) = (vectors(&f32_dir), vectors(&int8_dir));
    assert_eq!(exact.model.arithmetic, Arithmetic::F32);
    assert_eq!(eight.model.arithmetic, Arithmetic::Int8);
    let (a, b) = (exact.to_flat(), eight.to_flat());
    assert_eq!(a.len(), b.len());
    assert_ne!(a, b, "the 8-bit products gave f32's very vectors");
    for (x, y) in a.chunks_exact(384).zip(b.chunks_exact(384)) {
        let c = cosine(x, y);
        assert!(c >= 0.999, "a chunk's int8 vector at cosine {c} to f32's");
    }
    let same = build(&f32_dir, &[]);
    assert!(same.contains("kept from the previous index"), "{same}");
    let again = build(&int8_dir, &[]);
    assert!(!again.contains("kept from the previous index"), "{again}");
    assert_eq!(vectors(&int8_dir).model.arithmetic, Arithmetic::F32);
}
