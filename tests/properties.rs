//! Properties over generated inputs (proptest): every range highlighting reports slices its text
//! between whole characters, whatever the text (emoji and their ZWJ sequences, combining marks,
//! CJK, right-to-left scripts, odd whitespace); and `search` answers every query with any options
//! inside their documented ranges (`cairn::search::limits`) on a small index built here, lexical
//! and with stand-in vectors (scanned int8 and an HNSW graph), with hits or the documented
//! errors, never a panic. The fuzz targets (`fuzz/`) push the same checks further.
#![cfg(not(target_arch = "wasm32"))]

use std::sync::OnceLock;

use cairn::analyze::{Analyzer, AnalyzerSettings};
use cairn::build::{build, ChunkEmbedder, VectorOptions};
use cairn::hit::{DocType, Fusion, Fuzzy, SearchMode, SearchOptions};
use cairn::index::vector::{GraphSettings, ModelIdentity, Precision};
use cairn::index::{Chunk, Document, Index, IndexSettings, Timestamp};
use cairn::ingest::{RawLink, SourceDocument};
use cairn::search::highlight::{
    best_lexical_sentence, highlights, match_range, sentences, snippet, term_matches,
};
use cairn::search::{limits, search, QueryContext};
use proptest::prelude::*;
use serde_json::json;

// ---- generated text ----

/// Pieces text is made of: words, every kind of awkward character, sentence ends and spaces.
const PIECES: &[&str] = &[
    "search",
    "Searching",
    "café",
    "CAFÉ",
    "naïve",
    "résumé",
    "index",
    "the",
    "a",
    "I",
    "x",
    "42",
    "3.14",
    "don't",
    "user’s",
    "🔍",
    "🏔️",
    "👩‍👩‍👧",
    "👍🏽",
    "🇩🇪",
    "❤\u{fe0f}",
    "e\u{301}",
    "a\u{308}\u{332}",
    "\u{301}",
    "\u{200d}",
    "\u{fe0f}",
    "東京",
    "検索",
    "日本語",
    "。",
    "한국어",
    "مرحبا",
    "שלום",
    "Ωμέγα",
    "ﬁ",
    "ß",
    "İ",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    ".",
    "!",
    "?",
    "…",
    "—",
    "\"",
    "(",
    ")",
    "Dr.",
    "e.g.",
];

fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => prop::sample::select(PIECES).prop_map(str::to_string),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
}

fn slice16(text: &str, start: u32, end: u32) -> Option<String> {
    let units: Vec<u16> = text.encode_utf16().collect();
    (start <= end && end as usize <= units.len())
        .then(|| String::from_utf16(&units[start as usize..end as usize]).ok())
        .flatten()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn highlight_match_and_snippet_ranges_slice_the_text(
        text in text(),
        query in text(),
        length in 0usize..=limits::SNIPPET_LENGTH as usize,
        stemming in any::<bool>(),
        stop_words in any::<bool>(),
    ) {
        let analyzer = Analyzer::new(AnalyzerSettings { stemming, stop_words, ..AnalyzerSettings::default() });
        let terms = analyzer.terms(&query);
        let matches = term_matches(&analyzer, &text, &terms);
        for m in &matches {
            prop_assert!(m.bytes.start < m.bytes.end && m.bytes.end <= text.len());
            prop_assert!(text.is_char_boundary(m.bytes.start) && text.is_char_boundary(m.bytes.end), "{:?}", m);
        }
        for h in highlights(&analyzer, &text, &terms) {
            let word = slice16(&text, h.start, h.end);
            prop_assert!(word.is_some(), "highlight {:?} does not slice {:?}", h, text);
            // One term, or the overlapping pairs of a run of ideographs, all matched, merged
            // into one highlight named by the first.
            let found = analyzer.terms(&word.unwrap());
            prop_assert_eq!(found.first(), Some(&h.term));
            prop_assert!(found.iter().all(|t| terms.contains(t)), "{:?} of {:?}", found, terms);
        }
        let sentences = sentences(&text);
        for s in &sentences {
            prop_assert!(s.start < s.end && text.is_char_boundary(s.start) && text.is_char_boundary(s.end), "{:?}", s);
        }
        let best = best_lexical_sentence(&sentences, &matches, |_| 1.0);
        let focus = best.or((!sentences.is_empty()).then_some(0)).map(|b| sentences[b].clone());
        if let Some(focus) = focus {
            let m = match_range(&text, &focus);
            let sentence = slice16(&text, m.start, m.start + m.length);
            prop_assert_eq!(sentence.as_deref(), Some(&text[focus.clone()]));
            let snip = snippet(&text, &focus, &matches, length);
            for h in &snip.highlights {
                let word = slice16(&snip.text, h.start, h.end);
                prop_assert!(word.is_some(), "snippet highlight {:?} does not slice {:?}", h, snip.text);
                let word = word.unwrap();
                prop_assert!(matches.iter().any(|m| text[m.bytes.clone()] == word), "{:?} is not a match", word);
            }
        }
    }
}

// ---- a small index ----

const DIM: usize = 8;

/// Deterministic stand-in embeddings: words hashed into components, normalized.
struct StandIn;

impl ChunkEmbedder for StandIn {
    fn dimension(&self) -> usize {
        DIM
    }
    fn embed(&self, text: &str) -> cairn::Result<Vec<f32>> {
        Ok(embed(text))
    }
}

fn embed(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIM];
    v[0] = 0.01;
    for word in text.split_whitespace() {
        let h = word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
        v[(h % DIM as u64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

fn sources() -> Vec<SourceDocument> {
    let texts = [
        (
            "guide/install.md",
            DocType::Md,
            "Installing cairn",
            Some(r#"{"tags":["setup"],"year":2023}"#),
            Some(1_700_000_000),
            &[
                "Install with cargo. It builds an index.",
                "Run cairn index docs. 🔍 Search is instant.",
                "",
            ][..],
        ),
        (
            "international.md",
            DocType::Md,
            "Café in Zürich",
            Some(r#"{"tags":["travel","de"],"year":2021}"#),
            Some(1_600_000_000),
            &[
                "Das Café serviert Kaffee. Naïve résumés, 東京 and 🏔️.",
                "e\u{301}tude, 👩‍👩‍👧 families search",
            ][..],
        ),
        (
            "notes.txt",
            DocType::Text,
            "notes",
            None,
            None,
            &["Notes about search, ranking and BM25.\n\nEmbeddings too."][..],
        ),
        (
            "site/index.html",
            DocType::Html,
            "Home",
            Some(r#"{"tags":"single"}"#),
            Some(1_735_000_000),
            &[
                "Welcome. Search the docs.",
                "The API returns highlights in UTF-16.",
            ][..],
        ),
    ];
    texts
        .iter()
        .map(
            |(id, doc_type, title, metadata, time, chunks)| SourceDocument {
                document: Document {
                    id: id.to_string(),
                    doc_type: *doc_type,
                    title: title.to_string(),
                    url: Some(format!("https://example.org/{id}")),
                    metadata: metadata.map(str::to_string),
                    created: time.map(|t| Timestamp {
                        iso: format!("@{t}"),
                        unix_seconds: t,
                    }),
                    updated: None,
                    author: None,
                    summary: None,
                },
                chunks: chunks
                    .iter()
                    .enumerate()
                    .map(|(i, text)| Chunk {
                        doc: 0,
                        chunk_index: i as u32,
                        heading_path: vec![title.to_string(), format!("Part {i}")],
                        anchor: Some(format!("part-{i}")),
                        text: text.to_string(),
                        line_start: 1 + 3 * i as u32,
                        line_end: 2 + 3 * i as u32,
                        source_offset: 50 * i as u64,
                        pages: None,
                    })
                    .collect(),
                links: vec![
                    RawLink {
                        target: "/guide/install.md".into(),
                        text: "install".into(),
                        rel: None,
                    },
                    RawLink {
                        target: "/notes.txt".into(),
                        text: "notes".into(),
                        rel: None,
                    },
                    RawLink {
                        target: "/international.md".into(),
                        text: "café".into(),
                        rel: None,
                    },
                ],
                origin: id.to_string(),
                language: None,
            },
        )
        .collect()
}

fn identity() -> ModelIdentity {
    ModelIdentity {
        name: "stand-in".into(),
        dimension: DIM as u32,
        source_weights_sha256: String::new(),
        web_weights_sha256: String::new(),
        web_weights_file: String::new(),
        config_sha256: String::new(),
        tokenizer_sha256: String::new(),
        arithmetic: Default::default(),
    }
}

/// The same collection three ways: lexical only, scanned int8 vectors, an HNSW graph.
fn indexes() -> &'static [Index] {
    static INDEXES: OnceLock<Vec<Index>> = OnceLock::new();
    INDEXES.get_or_init(|| {
        let vectors = |graph_from| VectorOptions {
            embedder: &StandIn,
            identity: identity(),
            graph_from,
            graph: GraphSettings::default(),
            precision: Precision::Int8,
            previous: None,
        };
        [None, Some(vectors(usize::MAX)), Some(vectors(1))]
            .into_iter()
            .map(|v| {
                build(
                    sources(),
                    IndexSettings {
                        summaries: true,
                        ..IndexSettings::default()
                    },
                    v,
                    |_, _| {},
                )
                .unwrap()
            })
            .collect()
    })
}

#[test]
fn the_indexes_are_what_the_properties_need() {
    let [lexical, scanned, graph] = indexes() else {
        panic!()
    };
    assert!(lexical.vectors.is_none());
    assert!(!scanned.vectors.as_ref().unwrap().has_graph());
    assert!(graph.vectors.as_ref().unwrap().has_graph());
}

// ---- options within their documented ranges ----

fn finite(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    prop_oneof![Just(lo), Just(hi), lo..=hi]
}

fn options() -> impl Strategy<Value = SearchOptions> {
    let filter = prop::sample::select(vec![
        None,
        Some(json!({})),
        Some(json!({"tags": "setup"})),
        Some(json!({"tags": ["travel", "single"]})),
        Some(json!({"year": {"gte": 2021, "lt": 2024}})),
        Some(json!({"createdAt": {"gte": "2020-01-01"}})),
        Some(json!({"nothing": 1})),
    ]);
    (
        (
            1u32..=limits::LIMIT,
            prop::sample::select(vec![
                SearchMode::Lexical,
                SearchMode::Semantic,
                SearchMode::Hybrid,
            ]),
            prop::sample::select(vec![Fusion::Rrf, Fusion::Weighted]),
            finite(0.0, 1e30),
            finite(0.0, 1.0),
            prop::option::of(0u32..=limits::CANDIDATES),
        ),
        (
            any::<bool>(),
            any::<bool>(),
            0u32..=limits::SNIPPET_LENGTH,
            any::<bool>(),
            0u32..=limits::EXPAND,
            any::<bool>(),
            1u32..=2,
            0u32..=limits::MAX_LINKS,
        ),
        (
            filter,
            any::<u32>(),
            finite(0.0, 1e30),
            finite(1e-30, 1e30),
            prop::option::of(finite(-1e300, 1e300)),
            prop::option::of(1u32..=20),
            prop::option::of(1u32..=20),
        ),
        (
            any::<bool>(),
            prop_oneof![
                any::<bool>().prop_map(Fuzzy::On),
                (0u32..=2).prop_map(Fuzzy::MaxDistance)
            ],
            any::<bool>(),
        ),
    )
        .prop_map(|(a, b, c, d)| SearchOptions {
            limit: a.0,
            mode: a.1,
            fusion: a.2,
            rrf_k: a.3 as f32,
            semantic_weight: a.4 as f32,
            candidates: a.5,
            highlight: b.0,
            prefix_headings: b.1,
            snippet_length: b.2,
            explain: b.3,
            expand: b.4,
            related: b.5,
            related_hops: b.6,
            max_links: b.7,
            max_documents: c.5,
            max_per_document: c.6,
            filter: c.0,
            stale_days: c.1,
            recency_weight: c.2 as f32,
            recency_half_life_days: (c.3 as f32).max(f32::MIN_POSITIVE),
            now: c.4,
            prefix: d.0,
            fuzzy: d.1,
            include_summary: d.2,
            rerank: None,
            probes: None,
            rescore: None,
            encoder: None,
        })
}

fn query() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => text(),
        1 => any::<String>(),
        1 => prop::collection::vec(prop::sample::select(vec!["search", "café", "index", "東京", "the", "🔍", "instal", "serch", "rankng", "caf", "e\u{301}t"]), 0..80).prop_map(|w| w.join(" ")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn search_answers_any_query_with_options_in_range(
        query in query(),
        options in options(),
        from_caller in any::<bool>(),
        now in finite(0.0, 4e12),
    ) {
        for index in indexes() {
            let vector = index.vectors.as_ref().map(|_| embed(&query));
            let context = QueryContext { vector: vector.as_deref(), vector_from_caller: from_caller, now_ms: now, ..Default::default() };
            let result = search(index, &query, context, &options);
            // The documented errors: a query past its limits; a semantic search of an index
            // with no vectors (unless there is nothing to search for, which has no hits).
            let query_ok = cairn::search::Query::new(&index.analyzer(), &query).is_ok();
            let no_vectors = options.mode == SearchMode::Semantic && index.vectors.is_none();
            match result {
                Ok(hits) => {
                    prop_assert!(query_ok, "no error for a query past the limits: {:?}", query);
                    prop_assert!(!no_vectors || hits.is_empty());
                    let direct: Vec<_> = hits.iter().filter(|h| h.via.is_none()).collect();
                    prop_assert!(direct.len() <= options.limit as usize);
                    let mut per_document = std::collections::HashMap::new();
                    for h in &direct {
                        *per_document.entry(&h.citation.doc_id).or_insert(0u32) += 1;
                    }
                    prop_assert!(per_document.len() as u32 <= options.max_documents.unwrap_or(u32::MAX));
                    prop_assert!(per_document.values().all(|&n| n <= options.max_per_document.unwrap_or(u32::MAX)));
                    for (i, hit) in hits.iter().enumerate() {
                        prop_assert_eq!(hit.rank as usize, i + 1);
                        for h in &hit.highlights {
                            prop_assert!(slice16(&hit.text, h.start, h.end).is_some(), "{:?} in {:?}", h, hit.text);
                        }
                        if let Some(m) = &hit.match_range {
                            prop_assert!(slice16(&hit.text, m.start, m.start + m.length).is_some(), "{:?}", m);
                        }
                        if let Some(s) = &hit.snippet {
                            for h in &s.highlights {
                                prop_assert!(slice16(&s.text, h.start, h.end).is_some(), "{:?} in {:?}", h, s.text);
                            }
                        }
                    }
                }
                Err(e) => prop_assert!(!query_ok || no_vectors, "{} for {:?} with {:?}", e, query, options),
            }
        }
    }
}
