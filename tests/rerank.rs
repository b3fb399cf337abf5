//! The cross-encoder reranker on a tiny random model in the BertForSequenceClassification
//! layout, written by tests/tiny-cross-encoder.mjs (node) with all-MiniLM-L6-v2's real
//! tokenizer: scores are bounded, deterministic, independent of batching and padding, survive
//! f16 weights and exports without the `bert.` prefix; broken models are clear errors.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use cairn::embed::{write_f16_weights, ModelFiles};
use cairn::rerank::Reranker;
use candle_core::{Device, Tensor};

const QUERY: &str = "how do I reset a forgotten password";
const TEXTS: &[&str] = &[
    "To reset your password, open Settings and choose Forgot password.",
    "The Eiffel Tower is 330 metres tall.",
    "Passwords must be at least twelve characters long.",
    "",
    "A recipe for lentil soup with cumin and lemon.",
    "Reset the router by holding the button for ten seconds.",
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-fixtures")
}

/// The tiny cross-encoder's folder, written once per test run.
fn tiny() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert!(
            root.join("models/all-MiniLM-L6-v2/tokenizer.json").exists(),
            "run scripts/setup.sh first: the tiny cross-encoder borrows all-MiniLM-L6-v2's tokenizer"
        );
        let dir = fixtures().join("tiny-cross-encoder");
        let out = Command::new("node")
            .arg(root.join("tests/tiny-cross-encoder.mjs"))
            .arg(&dir)
            .current_dir(root)
            .output()
            .expect("node runs (the tiny cross-encoder is written by tests/tiny-cross-encoder.mjs)");
        assert!(
            out.status.success(),
            "tests/tiny-cross-encoder.mjs failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn files() -> ModelFiles {
    ModelFiles::read_dir(tiny()).unwrap()
}

fn reranker() -> Reranker {
    Reranker::load(files()).unwrap()
}

fn load_error(files: ModelFiles) -> String {
    match Reranker::load(files) {
        Ok(_) => panic!("a broken model loaded"),
        Err(e) => e.to_string(),
    }
}

/// The tiny model's tensors, renamed and changed by `edit`, saved as another model folder's
/// weights; that folder's files (the tiny model's config and tokenizer).
fn variant(name: &str, edit: impl FnOnce(&mut HashMap<String, Tensor>)) -> ModelFiles {
    let mut tensors =
        candle_core::safetensors::load(tiny().join(ModelFiles::WEIGHTS), &Device::Cpu).unwrap();
    edit(&mut tensors);
    let dir = fixtures().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let weights = dir.join(ModelFiles::WEIGHTS);
    candle_core::safetensors::save(&tensors, &weights).unwrap();
    ModelFiles {
        weights: std::fs::read(weights).unwrap(),
        ..files()
    }
}

fn assert_close(a: &[f32], b: &[f32], tolerance: f32, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tolerance,
            "{what}: text {i} scores {x} and {y}"
        );
    }
}

#[test]
fn scores_are_bounded_deterministic_and_distinct() {
    let reranker = reranker();
    let scores = reranker.score(QUERY, TEXTS).unwrap();
    assert_eq!(scores.len(), TEXTS.len());
    for s in &scores {
        assert!(s.is_finite() && (0.0..=1.0).contains(s), "score {s}");
    }
    let again = reranker.score(QUERY, TEXTS).unwrap();
    let bits = |v: &[f32]| v.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&scores),
        bits(&again),
        "the same call scored differently"
    );
    for i in 0..scores.len() {
        for j in i + 1..scores.len() {
            assert_ne!(scores[i], scores[j], "texts {i} and {j} got the same score");
        }
    }
    assert_eq!(reranker.score(QUERY, &[]).unwrap(), Vec::<f32>::new());
    assert_eq!(reranker.weights_sha256().len(), 64);
    assert_eq!(
        reranker.weights_sha256(),
        cairn::store::pack::sha256_hex(&files().weights)
    );
}

#[test]
fn batching_and_padding_do_not_change_a_score() {
    let reranker = reranker();
    // More than one batch of 16, with texts of very different lengths.
    let long = "a passage about passwords and accounts ".repeat(20);
    let texts: Vec<&str> = TEXTS
        .iter()
        .copied()
        .chain(std::iter::repeat_n(long.as_str(), 3))
        .cycle()
        .take(20)
        .collect();
    let together = reranker.score(QUERY, &texts).unwrap();
    let alone: Vec<f32> = texts
        .iter()
        .map(|t| reranker.score(QUERY, &[t]).unwrap()[0])
        .collect();
    assert_close(&together, &alone, 1e-5, "batched vs one by one");
}

#[test]
fn any_input_is_scored() {
    let reranker = reranker();
    let long = "word ".repeat(3000);
    let cases: &[(&str, &[&str])] = &[
        ("", &["", "text"]),
        (QUERY, &[long.as_str()]),
        // The query alone is longer than the model reads: both sides are cut.
        (long.as_str(), &["", "short", long.as_str()]),
        ("\u{0}\u{feff} \t\n", &["🦀 ünïcödé 漢字", "\u{fffd}"]),
    ];
    for (query, texts) in cases {
        let scores = reranker.score(query, texts).unwrap();
        assert_eq!(scores.len(), texts.len());
        assert!(scores
            .iter()
            .all(|s| s.is_finite() && (0.0..=1.0).contains(s)));
    }
}

#[test]
fn f16_weights_score_like_f32() {
    let f32_scores = reranker().score(QUERY, TEXTS).unwrap();
    let dir = fixtures().join("tiny-cross-encoder-f16");
    std::fs::create_dir_all(&dir).unwrap();
    for name in [ModelFiles::CONFIG, ModelFiles::TOKENIZER] {
        std::fs::copy(tiny().join(name), dir.join(name)).unwrap();
    }
    write_f16_weights(&files().weights, &dir.join(ModelFiles::WEIGHTS)).unwrap();
    let f16 = Reranker::load(ModelFiles::read_dir(&dir).unwrap()).unwrap();
    assert_close(
        &f16.score(QUERY, TEXTS).unwrap(),
        &f32_scores,
        1e-2,
        "f16 vs f32",
    );
}

#[test]
fn weights_without_the_bert_prefix_score_the_same() {
    let prefixed = reranker().score(QUERY, TEXTS).unwrap();
    let files = variant("tiny-cross-encoder-unprefixed", |tensors| {
        *tensors = tensors
            .drain()
            .map(|(name, t)| match name.strip_prefix("bert.") {
                Some(bare) => (bare.to_owned(), t),
                None => (name, t),
            })
            .collect();
        assert!(tensors.contains_key("embeddings.word_embeddings.weight"));
        assert!(tensors.contains_key("pooler.dense.weight"));
        assert!(tensors.contains_key("classifier.weight"));
    });
    let bare = Reranker::load(files).unwrap().score(QUERY, TEXTS).unwrap();
    let bits = |v: &[f32]| v.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&bare), bits(&prefixed));
}

#[test]
fn a_two_label_head_scores_with_its_last_label() {
    let one = reranker().score(QUERY, TEXTS).unwrap();
    // Label 0 ("irrelevant") gets other weights; label 1 ("relevant") is the one-label head.
    let mut files = variant("tiny-cross-encoder-two-labels", |tensors| {
        let w = &tensors["classifier.weight"];
        let b = &tensors["classifier.bias"];
        let w = Tensor::cat(&[&(w * -3.0).unwrap(), w], 0).unwrap();
        let b = Tensor::cat(&[&(b + 1.0).unwrap(), b], 0).unwrap();
        tensors.insert("classifier.weight".into(), w);
        tensors.insert("classifier.bias".into(), b);
    });
    let mut config: serde_json::Value = serde_json::from_slice(&files.config).unwrap();
    config.as_object_mut().unwrap().remove("num_labels");
    config["id2label"] = serde_json::json!({"0": "irrelevant", "1": "relevant"});
    files.config = serde_json::to_vec(&config).unwrap();
    let two = Reranker::load(files).unwrap().score(QUERY, TEXTS).unwrap();
    assert_close(&two, &one, 1e-6, "two labels vs one");
}

#[test]
fn a_config_with_no_attention_heads_is_a_clear_error() {
    let mut files = files();
    let mut config: serde_json::Value = serde_json::from_slice(&files.config).unwrap();
    config["num_attention_heads"] = 0.into();
    files.config = serde_json::to_vec(&config).unwrap();
    let e = load_error(files);
    assert!(e.contains("num_attention_heads is 0"), "{e}");
}

#[test]
fn weights_without_a_classifier_are_a_clear_error() {
    let files = variant("tiny-cross-encoder-headless", |tensors| {
        tensors.remove("classifier.weight");
    });
    let e = load_error(files);
    assert!(e.contains("no classifier.weight"), "{e}");
}

#[test]
fn a_head_of_the_wrong_shape_is_a_clear_error() {
    let mut files = files();
    let mut config: serde_json::Value = serde_json::from_slice(&files.config).unwrap();
    config["num_labels"] = 3.into();
    files.config = serde_json::to_vec(&config).unwrap();
    let e = load_error(files);
    assert!(
        e.contains("classifier.weight is [1, 32], expected [num_labels, hidden_size] = [3, 32]"),
        "{e}"
    );
    let files = variant("tiny-cross-encoder-transposed-head", |tensors| {
        let w = tensors["classifier.weight"]
            .t()
            .unwrap()
            .contiguous()
            .unwrap();
        tensors.insert("classifier.weight".into(), w);
    });
    let e = load_error(files);
    assert!(e.contains("classifier.weight is [32, 1]"), "{e}");
}

mod common;

/// `cairn search --rerank`: the top N are reordered by the cross-encoder's own scores (the same
/// the library gives for each (query, title + headings + text) pair), the rest keep their
/// retrieval order after them, and every field says what reranking moved.
#[test]
fn the_cli_reranks_the_top_n_by_the_cross_encoder() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/docs");
    common::ok(&[
        "index",
        input.to_str().unwrap(),
        "--no-embed",
        "--chunk-words",
        "20",
        "--out",
        index.to_str().unwrap(),
    ]);
    let search = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "search",
            index.to_str().unwrap(),
            "cairn index query",
            "--json",
            "--mode",
            "lexical",
            "--options",
            r#"{"limit": 8}"#,
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&common::ok(&args)).unwrap()
    };
    let plain = search(&[]);
    let reranked = search(&["--rerank", tiny().to_str().unwrap(), "--rerank-top-n", "5"]);
    let (plain, hits) = (plain.as_array().unwrap(), reranked.as_array().unwrap());
    assert_eq!(hits.len(), plain.len());
    assert!(
        plain.len() > 5,
        "more hits than topN, to see the rest keep their order"
    );

    let id = |h: &serde_json::Value| h["id"].as_str().unwrap().to_string();
    let top: Vec<&serde_json::Value> = hits[..5].iter().collect();
    // The first five are the retrieval's first five, reordered by the reranker's score.
    let mut scored: Vec<String> = top.iter().map(|h| id(h)).collect();
    let mut first: Vec<String> = plain[..5].iter().map(id).collect();
    scored.sort();
    first.sort();
    assert_eq!(scored, first);
    let scores: Vec<f64> = top
        .iter()
        .map(|h| h["rerankerScore"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    for (rank, hit) in hits.iter().enumerate() {
        assert_eq!(hit["scoreKind"], "reranker");
        assert_eq!(hit["rank"], rank as u64 + 1);
        let original = plain.iter().position(|p| id(p) == id(hit)).unwrap();
        assert_eq!(hit["retrievalRank"], original as u64 + 1);
        assert_eq!(hit["retrievalScore"], plain[original]["score"]);
    }
    for hit in &top {
        assert_eq!(hit["score"], hit["rerankerScore"]);
        let s = hit["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&s));
    }
    // The rest: unscored, in their retrieval order.
    assert!(hits[5..].iter().all(|h| h.get("rerankerScore").is_none()));
    assert_eq!(
        hits[5..].iter().map(id).collect::<Vec<_>>(),
        plain[5..].iter().map(id).collect::<Vec<_>>()
    );

    // The scores are the cross-encoder's for the text it reads: title, headings and text.
    let bytes = std::fs::read(index.join("index.cairn")).unwrap();
    let loaded = cairn::index::format::read(&bytes).unwrap();
    let reranker = reranker();
    for hit in &top {
        let chunk = loaded
            .chunks
            .iter()
            .find(|c| format!("{}#{}", loaded.document_of(c).id, c.chunk_index) == id(hit))
            .unwrap();
        let text = cairn::index::indexed_text(loaded.document_of(chunk), chunk);
        let direct = reranker.score("cairn index query", &[&text]).unwrap()[0];
        assert!(
            (direct as f64 - hit["rerankerScore"].as_f64().unwrap()).abs() < 1e-5,
            "{} {direct}",
            hit["rerankerScore"]
        );
    }

    // Without the model loaded, an option naming one is a clear error, as is topN 0.
    let out = common::cairn(&[
        "search",
        index.to_str().unwrap(),
        "x",
        "--options",
        r#"{"rerank": {"model": "/nowhere"}}"#,
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cross-encoder /nowhere"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::cairn(&[
        "search",
        index.to_str().unwrap(),
        "x",
        "--rerank",
        tiny().to_str().unwrap(),
        "--rerank-top-n",
        "0",
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rerank.topN must be at least 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
