//! The fragmented index against the single file it was cut from: the same hits, to the bit,
//! whatever the fragment sizes, filters, recency and related documents included, and the same
//! `searchDocuments` and `buildContext`, reranked by a cross-encoder or not; a damaged or missing fragment is an error for the
//! query that needs it while the index keeps answering others; and the CLI writes and reads
//! either layout.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cairn::embed::{Embedder, ModelFiles};
use cairn::fragment::load::native::Folder;
use cairn::fragment::load::{decode, Fragmented};
use cairn::fragment::write::{self, Options};
use cairn::fragment::{unslot, LinkedDocument, Payload, META_FILE, PACK_DIR};
use cairn::hit::DocType;
use cairn::hit::{ContextOptions, DocumentSearchOptions, Fuzzy, Rerank, SearchMode, SearchOptions};
use cairn::index::format;
use cairn::index::DocLink;
use cairn::rerank::Reranker;
use cairn::search::expand::expand;
use cairn::search::{answer, Query, QueryContext, Source};
use cairn::store::envelope::gunzip;
use cairn::Searcher;
use common::{lexical_single, ok};

const QUERIES: &[&str] = &[
    "install",
    "how do I search the index",
    "coffee in Paris",
    "café",
    "highlight offsets in the browser",
    "records with metadata",
    "東京",
    "the",
    "valley alpine archive",
    "zzzz no such word",
    "cof",
    "highl",
    "the alpi",
    // Ending in a stop word: with `prefix`, the word being typed ("the", "of") completes.
    "search the",
    "alpine archive of",
    "cofee in parris",
    "recrods with metadat",
    // A lone stop word, or one last, as a search box sees it typed: with `prefix`, it completes
    // ("in" → "install", "index") in both layouts.
    "in",
    "it",
    "their",
    "search in",
];

/// 2026-01-01, for ages.
const NOW: f64 = 1_767_225_600_000.0;

/// The name the tiny cross-encoder is loaded under (what `rerank.model` gives).
const CROSS_ENCODER: &str = "tiny-cross-encoder";

/// A tiny random cross-encoder's folder (tests/tiny-cross-encoder.mjs), written once per test run.
fn cross_encoder_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = root.join("target/test-fixtures/tiny-cross-encoder-fragments");
        let out = std::process::Command::new("node")
            .arg(root.join("tests/tiny-cross-encoder.mjs"))
            .arg(&dir)
            .current_dir(root)
            .output()
            .expect("node runs tests/tiny-cross-encoder.mjs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn cross_encoder_files() -> ModelFiles {
    ModelFiles::read_dir(cross_encoder_dir()).unwrap()
}

/// `single` with the tiny cross-encoder loaded, and the same cross-encoder for the fragments.
fn with_cross_encoder(single: &mut Searcher) -> Reranker {
    single
        .load_reranker(CROSS_ENCODER, cross_encoder_files())
        .unwrap();
    Reranker::load(cross_encoder_files()).unwrap()
}

/// A search's context with the query's vector from the model.
fn with_vector<'a>(vector: &'a [f32], embedder: &'a Embedder) -> QueryContext<'a> {
    QueryContext {
        vector: Some(vector),
        encoder: cairn::hit::Encoder::Model,
        embedder: Some(embedder),
        now_ms: NOW,
        ..QueryContext::default()
    }
}

/// Small fragments, so that one query reads several of each kind.
fn small() -> Options {
    Options {
        shard_postings: 7,
        shard_words: 5,
        text_bytes: 300,
        link_bytes: 1,
        pack_bytes: 2_000,
        ..Options::default()
    }
}

fn options(mode: SearchMode, probes: Option<u32>) -> Vec<SearchOptions> {
    let base = SearchOptions {
        mode,
        probes,
        rescore: probes.map(|_| u32::MAX),
        now: Some(NOW),
        ..SearchOptions::default()
    };
    vec![
        base.clone(),
        SearchOptions {
            limit: 3,
            highlight: true,
            explain: true,
            expand: 1,
            prefix_headings: true,
            ..base.clone()
        },
        SearchOptions {
            limit: 50,
            max_links: 2,
            ..base.clone()
        },
        // As `<cairn-search>` searches: the word being typed completed, typos tolerated (both
        // look words up in word shards), no links shown (so none fetched).
        SearchOptions {
            prefix: true,
            fuzzy: Fuzzy::On(true),
            highlight: true,
            explain: true,
            max_links: 0,
            max_documents: Some(3),
            max_per_document: Some(2),
            ..base.clone()
        },
        // Filters: each field's fragment fetched, the same documents masked (links to the
        // others left out).
        SearchOptions {
            filter: Some(serde_json::json!({ "tags": ["alpine", "wasm"] })),
            max_links: 5,
            ..base.clone()
        },
        SearchOptions {
            filter: Some(
                serde_json::json!({ "year": { "gte": 1990, "lt": 2021 }, "docType": ["markdown", "text"] }),
            ),
            ..base.clone()
        },
        SearchOptions {
            filter: Some(serde_json::json!({ "createdAt": { "gte": "2020" } })),
            ..base.clone()
        },
        // Related documents, one and two links away, filtered or not.
        SearchOptions {
            limit: 2,
            related: true,
            related_hops: 2,
            max_links: 2,
            ..base.clone()
        },
        SearchOptions {
            limit: 1,
            related: true,
            ..base.clone()
        },
        SearchOptions {
            related: true,
            filter: Some(serde_json::json!({ "tags": "shared" })),
            ..base.clone()
        },
        // Recency: each candidate aged by its document's date (the dates fragment).
        SearchOptions {
            recency_weight: 2.0,
            recency_half_life_days: 400.0,
            explain: true,
            ..base.clone()
        },
        // Reranked: the best candidates' text fetched, then scored by the cross-encoder.
        SearchOptions {
            rerank: Some(Rerank {
                model: CROSS_ENCODER.into(),
                top_n: 7,
            }),
            limit: 5,
            explain: true,
            ..base.clone()
        },
        SearchOptions {
            rerank: Some(Rerank {
                model: format!("{CROSS_ENCODER}/"),
                top_n: 3,
            }),
            filter: Some(serde_json::json!({ "tags": ["alpine", "wasm"] })),
            related: true,
            ..base
        },
    ]
}

/// `query` analyzed as the fragments' engine reads it.
fn query_of<'q>(index: &Fragmented, query: &'q str) -> cairn::Result<Query<'q>> {
    Query::new(&index.analyzer(), query)
}

/// A search of the fragments in `folder`, fetching what each step needs.
fn search(
    folder: &mut Folder,
    query: &str,
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> cairn::Result<Vec<cairn::hit::SearchHit>> {
    folder.run(context.reranker, |i| {
        answer::search(i, &query_of(i, query)?, context, options)
    })
}

/// Asserts that the fragments in `dir` answer every query as `single` does.
fn same_answers(
    single: &Searcher,
    dir: &Path,
    embedder: Option<&Embedder>,
    reranker: &Reranker,
    modes: &[SearchMode],
) {
    let mut folder = Folder::open(dir).unwrap();
    let partitions = folder.index.meta().vectors.as_ref().map(|v| v.partitions);
    for &mode in modes {
        // Every partition probed and every candidate re-scored: the vector search is then
        // exact, as the single file's is.
        for options in options(mode, partitions) {
            for query in QUERIES {
                let expected = single.search(query, &options).unwrap();
                // The text the single file's encoder reads: with `fuzzy`, its typos corrected
                // (a fragmented index's shell embeds the query as typed, before any word shard
                // is in; the engines are compared on the same vector).
                let index = single.index();
                let corrected = options
                    .fuzzy
                    .is_on()
                    .then(|| {
                        let analyzed = Query::new(&index.analyzer(), query).unwrap();
                        expand(&index.lexical, &analyzed, &options).corrected(query)
                    })
                    .flatten();
                let vector = match embedder {
                    Some(e) if mode != SearchMode::Lexical => {
                        Some(e.embed(corrected.as_deref().unwrap_or(query)).unwrap())
                    }
                    _ => None,
                };
                let context = QueryContext {
                    vector: vector.as_deref(),
                    vector_from_caller: false,
                    encoder: cairn::hit::Encoder::Model,
                    embedder: embedder.map(|e| e as &dyn cairn::search::SentenceEncoder),
                    now_ms: NOW,
                    reranker: Some(reranker),
                    expanded: None,
                };
                let got = folder
                    .run(context.reranker, |i| {
                        answer::search(i, &query_of(i, query)?, context, &options)
                    })
                    .unwrap();
                assert_eq!(
                    serde_json::to_value(&got).unwrap(),
                    serde_json::to_value(&expected).unwrap(),
                    "{query:?} with {options:?}"
                );
                // A prompt's context, built from the same search.
                let budget = ContextOptions {
                    search: options.clone(),
                    token_budget: 60,
                    ..ContextOptions::default()
                };
                assert_eq!(
                    serde_json::to_value(
                        folder
                            .run(context.reranker, |i| answer::build_context(
                                i,
                                &query_of(i, query)?,
                                context,
                                &budget
                            ))
                            .unwrap()
                    )
                    .unwrap(),
                    serde_json::to_value(single.build_context(query, &budget).unwrap()).unwrap(),
                    "buildContext {query:?} with {options:?}"
                );
                // Document search: the same documents, chunks and facets (`timing` aside).
                for (whole, facets) in [(false, vec!["tags", "docType", "year"]), (true, vec![])] {
                    let documents = DocumentSearchOptions {
                        // A search's shape of hits is refused by document search.
                        search: SearchOptions {
                            max_documents: None,
                            max_per_document: None,
                            ..options.clone()
                        },
                        only_matching_chunks: !whole,
                        include_full_docs: whole,
                        facets: facets.into_iter().map(String::from).collect(),
                        ..DocumentSearchOptions::default()
                    };
                    let untimed = |mut r: cairn::hit::DocumentSearchResponse| {
                        r.timing = 0.0;
                        serde_json::to_value(r).unwrap()
                    };
                    assert_eq!(
                        untimed(
                            folder
                                .run(context.reranker, |i| {
                                    answer::search_documents(
                                        i,
                                        &query_of(i, query)?,
                                        context,
                                        &documents,
                                        || 0.0,
                                    )
                                })
                                .unwrap()
                        ),
                        untimed(single.search_documents(query, &documents).unwrap()),
                        "searchDocuments {query:?} with {documents:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn fragments_answer_as_the_single_file_does_to_the_bit() {
    let dir = tempfile::tempdir().unwrap();
    // Lexical, with links and summaries.
    let linked = dir.path().join("linked");
    ok(&[
        "index",
        "tests/fixtures/linked",
        "tests/fixtures/docs",
        "--no-embed",
        "--summaries",
        "--chunk-words",
        "12",
        "--layout",
        "single",
        "--out",
        linked.to_str().unwrap(),
    ]);
    let bytes = std::fs::read(linked.join("index.cairn")).unwrap();
    let mut single = Searcher::from_bytes(&bytes).unwrap();
    let reranker = with_cross_encoder(&mut single);
    let fragments = dir.path().join("linked-fragments");
    let layout = write::write(&format::read(&bytes).unwrap(), &fragments, &small(), &[]).unwrap();
    assert!(
        layout.fragments > 10 && layout.packs.len() > 2,
        "{} fragments",
        layout.fragments
    );
    // A term shard holds at most `shard_postings` postings, or a single term of more: a query
    // for a common term fetches no other term's postings.
    let meta = std::fs::read(fragments.join(META_FILE)).unwrap();
    let meta = Fragmented::open(&meta).unwrap();
    let mut alone = 0;
    for f in 0..meta.meta().terms.len() as u32 {
        let (pack, offset, length) = meta.address(f).unwrap();
        let pack = std::fs::read(fragments.join(PACK_DIR).join(pack)).unwrap();
        let slot = &pack[offset as usize..][..length as usize];
        let Payload::Terms(shard) = decode(
            f,
            &gunzip(unslot(slot).unwrap(), usize::MAX, "a term shard").unwrap(),
        )
        .unwrap()
        .payload
        else {
            panic!("fragment {f} is not a term shard");
        };
        let postings: usize = shard.postings.iter().map(|p| p.freqs.len()).sum();
        assert!(
            postings <= small().shard_postings || shard.terms.len() == 1,
            "shard {f}: {} terms, {postings} postings",
            shard.terms.len()
        );
        alone += (postings > small().shard_postings) as usize;
    }
    assert!(alone > 0, "no term has a shard of its own");
    same_answers(&single, &fragments, None, &reranker, &[SearchMode::Lexical]);
    let summaries = SearchOptions {
        include_summary: true,
        now: Some(NOW),
        ..SearchOptions::default()
    };
    let mut folder = Folder::open(&fragments).unwrap();
    let hits = search(
        &mut folder,
        "alpine",
        QueryContext {
            now_ms: NOW,
            ..QueryContext::default()
        },
        &summaries,
    )
    .unwrap();
    assert_eq!(
        serde_json::to_value(&hits).unwrap(),
        serde_json::to_value(single.search("alpine", &summaries).unwrap()).unwrap()
    );

    // With vectors: hybrid and semantic too.
    let embedded = dir.path().join("embedded");
    ok(&[
        "index",
        "tests/fixtures/docs",
        "--chunk-words",
        "40",
        "--layout",
        "single",
        "--out",
        embedded.to_str().unwrap(),
    ]);
    let bytes = std::fs::read(embedded.join("index.cairn")).unwrap();
    let files = || ModelFiles::read_dir(&embedded.join("model")).unwrap();
    let mut single = Searcher::from_bytes(&bytes).unwrap();
    single.load_model(files()).unwrap();
    let reranker = with_cross_encoder(&mut single);
    let statics = single.index().statics.clone().expect("a static tier");
    single.set_statics(cairn::store::rows::read_all(&statics, &embedded).unwrap());
    let embedder = Embedder::load(files()).unwrap();
    let fragments = dir.path().join("embedded-fragments");
    let rows = cairn::store::rows::read_packs(&statics, &embedded).unwrap();
    write::write(&format::read(&bytes).unwrap(), &fragments, &small(), &rows).unwrap();
    same_answers(
        &single,
        &fragments,
        Some(&embedder),
        &reranker,
        &[
            SearchMode::Lexical,
            SearchMode::Hybrid,
            SearchMode::Semantic,
        ],
    );

    // With the static tier instead of the model: its rows fetched by the fragmented index.
    let mut folder = Folder::open(&fragments).unwrap();
    let partitions = folder.index.meta().vectors.as_ref().map(|v| v.partitions);
    for mode in [SearchMode::Hybrid, SearchMode::Semantic] {
        for options in options(mode, partitions) {
            let options = SearchOptions {
                encoder: Some(cairn::hit::Encoder::Static),
                ..options
            };
            for query in QUERIES {
                // The model still picks a meaning-only hit's closest sentence, as in the single file.
                let context = QueryContext {
                    now_ms: NOW,
                    embedder: Some(&embedder),
                    reranker: Some(&reranker),
                    ..QueryContext::default()
                };
                let expected = single.search(query, &options);
                let got = folder.run(context.reranker, |i| {
                    answer::search(i, &query_of(i, query)?, context, &options)
                });
                match (got, expected) {
                    (Ok(got), Ok(expected)) => assert_eq!(
                        serde_json::to_value(&got).unwrap(),
                        serde_json::to_value(&expected).unwrap(),
                        "{query:?} with {options:?}"
                    ),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                    (got, expected) => {
                        panic!("{query:?}: {got:?} but the single file gave {expected:?}")
                    }
                }
            }
        }
    }

    // The static rows come in the round of the terms (their buckets found by the terms' text):
    // a hybrid search takes that round, the partitions' and the hits' text, as with the model.
    let static_hybrid = SearchOptions {
        encoder: Some(cairn::hit::Encoder::Static),
        now: Some(NOW),
        ..SearchOptions::default()
    };
    for query in ["install", "how do I search the index", "coffee in Paris"] {
        let mut fresh = Folder::open(&fragments).unwrap();
        let hits = fresh
            .run(None, |i| {
                answer::search(
                    i,
                    &query_of(i, query)?,
                    QueryContext::default(),
                    &static_hybrid,
                )
            })
            .unwrap();
        assert!(hits.iter().any(|h| h.signals.semantic.is_some()), "{query}");
        assert!(
            fresh.rounds <= 3,
            "{query}: {} rounds of fragments",
            fresh.rounds
        );
    }

    // By default a query re-scores only the scan's best 5 × `limit` (here 5 of the fixture's
    // chunks); the rest of the pool keeps its estimates, never above a re-scored score, so a
    // semantic search's hits are re-scored ones, with the single file's scores.
    let all = SearchOptions {
        mode: SearchMode::Semantic,
        limit: 1_000,
        candidates: Some(1_000),
        now: Some(NOW),
        ..SearchOptions::default()
    };
    for query in QUERIES {
        let vector = embedder.embed(query).unwrap();
        let context = with_vector(&vector, &embedder);
        let exact: std::collections::HashMap<String, f32> = single
            .search(query, &all)
            .unwrap()
            .into_iter()
            .map(|h| (h.id, h.score))
            .collect();
        let options = SearchOptions {
            mode: SearchMode::Semantic,
            limit: 1,
            now: Some(NOW),
            ..SearchOptions::default()
        };
        let hits = folder
            .run(context.reranker, |i| {
                answer::search(i, &query_of(i, query)?, context, &options)
            })
            .unwrap();
        assert_eq!(hits.len(), exact.len().min(1), "{query:?}");
        for h in &hits {
            assert_eq!(exact.get(&h.id), Some(&h.score), "{query:?}: {}", h.id);
        }
    }

    // A hybrid search re-scores none by default: the scan's estimates are fused as they are, and
    // the round of the records is gone.
    let rounds = |rescore: Option<u32>| {
        let mut fresh = Folder::open(&fragments).unwrap();
        let options = SearchOptions {
            mode: SearchMode::Hybrid,
            rescore,
            now: Some(NOW),
            ..SearchOptions::default()
        };
        let query = "coffee in Paris";
        let vector = embedder.embed(query).unwrap();
        let context = with_vector(&vector, &embedder);
        let hits = fresh
            .run(context.reranker, |i| {
                answer::search(i, &query_of(i, query)?, context, &options)
            })
            .unwrap();
        assert!(!hits.is_empty());
        fresh.rounds
    };
    assert_eq!(rounds(None) + 1, rounds(Some(5)));

    // A search that asks for more candidates than the scan budget holds (here a budget of one
    // code: 4 partitions) scans partitions that hold twice them: here all, so that asked to
    // re-score them all, its hits are the exact scan's without naming `probes`.
    let narrow = dir.path().join("narrow-fragments");
    let budget = Options {
        scan_codes: 1,
        ..small()
    };
    write::write(&format::read(&bytes).unwrap(), &narrow, &budget, &rows).unwrap();
    let mut narrow = Folder::open(&narrow).unwrap();
    let every = SearchOptions {
        rescore: Some(u32::MAX),
        ..all
    };
    for query in QUERIES {
        let vector = embedder.embed(query).unwrap();
        let context = with_vector(&vector, &embedder);
        assert_eq!(
            serde_json::to_value(
                narrow
                    .run(context.reranker, |i| answer::search(
                        i,
                        &query_of(i, query)?,
                        context,
                        &every
                    ))
                    .unwrap()
            )
            .unwrap(),
            serde_json::to_value(single.search(query, &every).unwrap()).unwrap(),
            "{query:?}"
        );
    }
}

#[test]
fn a_damaged_or_missing_fragment_fails_its_query_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let single = lexical_single(dir.path(), "single");
    let index = format::read(&std::fs::read(single.join("index.cairn")).unwrap()).unwrap();
    let fragments = dir.path().join("fragments");
    let options = Options {
        pack_bytes: 1,
        ..small()
    };
    write::write(&index, &fragments, &options, &[]).unwrap();
    let plain = SearchOptions::default();
    let mut folder = Folder::open(&fragments).unwrap();
    // The term shard of "coffee" is damaged, and the text of chunk 0 is missing.
    let coffee = &index.analyzer().terms("coffee")[0];
    let shard = folder.index.meta().term_shard(coffee).unwrap();
    let (pack, offset, _) = folder.index.address(shard).unwrap();
    let pack = fragments.join("p").join(pack);
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[offset as usize + 30] ^= 0xff;
    std::fs::write(&pack, &bytes).unwrap();
    let text = folder.index.text_fragment(0);
    let (pack, ..) = folder.index.address(text).unwrap();
    std::fs::remove_file(fragments.join("p").join(pack)).unwrap();

    let error = search(&mut folder, "coffee", QueryContext::default(), &plain)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("damaged") && error.contains("build the index again"),
        "{error}"
    );
    // Another query answers; the damaged one keeps failing, and so does a query whose hit's
    // text is missing, each with an error.
    assert!(
        !search(&mut folder, "東京", QueryContext::default(), &plain)
            .unwrap()
            .is_empty()
    );
    assert!(search(&mut folder, "coffee", QueryContext::default(), &plain).is_err());
    let first = &index.chunks[0].text;
    let word = first.split_whitespace().find(|w| w.len() > 4).unwrap();
    assert!(search(
        &mut folder,
        word,
        QueryContext::default(),
        &SearchOptions {
            limit: 1000,
            ..plain.clone()
        }
    )
    .is_err());
    assert!(
        !search(&mut folder, "東京", QueryContext::default(), &plain)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_fragment_naming_a_document_the_index_lacks_is_refused() {
    // A crafted text or links fragment naming a document past the meta's count (a related or
    // filtered search would index by it) is refused, and the index keeps answering.
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single");
    ok(&[
        "index",
        "tests/fixtures/linked",
        "--no-embed",
        "--layout",
        "single",
        "--out",
        single.to_str().unwrap(),
    ]);
    let index = format::read(&std::fs::read(single.join("index.cairn")).unwrap()).unwrap();
    let fragments = dir.path().join("fragments");
    write::write(&index, &fragments, &small(), &[]).unwrap();
    let mut folder = Folder::open(&fragments).unwrap();
    let plain_bytes = |slot: &[u8]| gunzip(unslot(slot).unwrap(), usize::MAX, "fragment").unwrap();
    let plain = |number: u32| {
        let (pack, offset, length) = folder.index.address(number).unwrap();
        let packed = std::fs::read(fragments.join("p").join(pack)).unwrap();
        plain_bytes(&packed[offset as usize..(offset + length as u64) as usize])
    };
    let text = folder.index.text_fragment(0);
    let links = folder
        .index
        .links_fragment(0)
        .expect("the fixture's pages link");
    let (real_text, real_links) = (plain(text), plain(links));
    let far = index.documents.len() as u32 + 4_000_000;
    let stranger = || LinkedDocument {
        id: "x".into(),
        doc_type: DocType::Md,
        title: "x".into(),
    };
    for forge in 0..3 {
        let (number, mut fragment) = if forge == 1 {
            (text, decode(text, &real_text).unwrap())
        } else {
            (links, decode(links, &real_links).unwrap())
        };
        match &mut fragment.payload {
            Payload::Links(l) => {
                l.linked.push((far, stranger()));
                if forge == 0 {
                    l.links.push(DocLink {
                        from: l.first_document,
                        to: far,
                        text: "away".into(),
                        rel: None,
                    });
                }
            }
            Payload::Text(t) => t.documents[0].0 = far,
            _ => panic!("fragment {number} is neither text nor links"),
        }
        let error = folder
            .index
            .add(number, &plain_bytes(&write::encode(&fragment).unwrap().0))
            .unwrap_err();
        assert!(
            error.to_string().contains("does not agree with the meta"),
            "{error}"
        );
    }
    let related = SearchOptions {
        related: true,
        related_hops: 2,
        now: Some(NOW),
        ..SearchOptions::default()
    };
    assert!(
        !search(&mut folder, "alpine", QueryContext::default(), &related)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_search_that_shows_no_links_reads_none() {
    // Links are fragments of their own: the box's search (`maxLinks: 0`) reads the same hits
    // and fewer bytes than one that lists links.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    ok(&[
        "index",
        "tests/fixtures/linked",
        "--no-embed",
        "--layout",
        "fragments",
        "--out",
        out.to_str().unwrap(),
    ]);
    let read = |max_links: u32| {
        let mut folder = Folder::open(&out).unwrap();
        let options = SearchOptions {
            max_links,
            now: Some(NOW),
            ..SearchOptions::default()
        };
        let hits = search(&mut folder, "alpine", QueryContext::default(), &options).unwrap();
        (hits, folder.bytes)
    };
    let (without, fewer) = read(0);
    let (with, more) = read(5);
    assert!(
        fewer < more,
        "{fewer} bytes read without links, {more} with"
    );
    assert!(with.iter().any(|h| !h.links.is_empty()));
    assert!(without
        .iter()
        .all(|h| h.links.is_empty() && h.links_elided == 0));
    let ids =
        |hits: &[cairn::hit::SearchHit]| hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&without), ids(&with));
}

#[test]
fn a_typed_word_and_its_completions_cost_one_round_before_the_text() {
    // The term shards a typed word's completions stand for come with its word shards, so a
    // prefix search takes the round of its terms and the round of its hits' text, as a search
    // of whole words does (with a term shard a term, they are other shards than the word's).
    let dir = tempfile::tempdir().unwrap();
    let out = lexical_single(dir.path(), "single");
    let bytes = std::fs::read(out.join("index.cairn")).unwrap();
    let single = Searcher::from_bytes(&bytes).unwrap();
    let fragments = dir.path().join("fragments");
    let one_a_shard = Options {
        shard_postings: 1,
        ..small()
    };
    write::write(
        &format::read(&bytes).unwrap(),
        &fragments,
        &one_a_shard,
        &[],
    )
    .unwrap();
    let options = SearchOptions {
        prefix: true,
        now: Some(NOW),
        ..SearchOptions::default()
    };
    for query in ["instal", "coffe", "markd", "search the ind"] {
        let mut folder = Folder::open(&fragments).unwrap();
        let hits = search(&mut folder, query, QueryContext::default(), &options).unwrap();
        let expected = single.search(query, &options).unwrap();
        assert!(!hits.is_empty(), "{query}");
        let ids =
            |hits: &[cairn::hit::SearchHit]| hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&hits), ids(&expected), "{query}");
        assert_eq!(folder.rounds, 2, "{query}: rounds of fragments");
    }
}

#[test]
fn the_cli_writes_and_searches_either_layout() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let build = |layout: &str| {
        ok(&[
            "index",
            "tests/fixtures/docs",
            "--no-embed",
            "--layout",
            layout,
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let search = || ok(&["search", out.to_str().unwrap(), "coffee", "--json"]);
    let reranked = || {
        let model = cross_encoder_dir().to_str().unwrap();
        ok(&[
            "search",
            out.to_str().unwrap(),
            "coffee",
            "--json",
            "--rerank",
            model,
            "--rerank-top-n",
            "3",
        ])
    };
    build("single");
    let (from_single, reranked_single) = (search(), reranked());
    assert!(
        reranked_single.contains("\"scoreKind\": \"reranker\"")
            || reranked_single.contains("\"scoreKind\":\"reranker\"")
    );
    build("fragments");
    assert!(out.join("meta.cairn").is_file() && !out.join("index.cairn").exists());
    assert_eq!(search(), from_single);
    assert_eq!(reranked(), reranked_single);
    // Back to one file: the fragments go.
    build("single");
    assert!(!out.join("meta.cairn").exists() && !out.join("p").exists());
    assert_eq!(search(), from_single);
}

#[test]
fn a_rebuild_of_fragments_keeps_their_vectors_and_writes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let build = || {
        ok(&[
            "index",
            "tests/fixtures/docs",
            "--summaries",
            "--layout",
            "fragments",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let first = build();
    assert!(!first.contains("kept from the previous index"), "{first}");
    let meta = std::fs::read(out.join("meta.cairn")).unwrap();
    let chunks = Folder::open(&out).unwrap().index.chunk_count();
    let second = build();
    assert!(
        second.contains(&format!(
            "chunk vectors kept from the previous index {chunks}"
        )),
        "{second}"
    );
    assert_eq!(std::fs::read(out.join("meta.cairn")).unwrap(), meta);
}
