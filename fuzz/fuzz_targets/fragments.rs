//! Hostile fragments: the input is a meta file (first byte 0), the sample meta with its numbers
//! (BM25 settings, average lengths, counts, sizes) replaced by the input's (first byte 2), or the
//! bytes a sample fragmented index's searches are fed instead of (or on top of) the fragments and
//! vector records they ask for, and the cross-encoder scores a reranked search asks for.
//! Opening, adding, searching, document search and contexts must answer or give an error, never
//! a panic, every hit's scores must be finite, and after any error the index keeps answering.
#![no_main]

use std::sync::OnceLock;

use cairn::fragment::load::{Fragmented, Step};
use cairn::fragment::write::{encode_meta, layout, Options};
use cairn::store::envelope::gunzip;
use cairn::hit::{ContextOptions, DocumentSearchOptions, Fuzzy, Rerank, SearchMode, SearchOptions};
use cairn::search::{answer, Query, QueryContext, Source};
use cairn_fuzz::{check_hit, query_vector, sample_index, write_seeds_if_asked, Vectors};
use libfuzzer_sys::fuzz_target;

/// The sample index cut small: its meta (gzip undone), each fragment's bytes as a reader
/// receives them, and a query vector.
struct Sample {
    meta: Vec<u8>,
    pieces: Vec<Vec<u8>>,
    vector: Option<Vec<f32>>,
}

fn sample() -> &'static Sample {
    static SAMPLE: OnceLock<Sample> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let index = sample_index(Vectors::Int8);
        let options = Options { shard_postings: 5, shard_words: 4, text_bytes: 100, link_bytes: 64, pack_bytes: 1 << 30, partitions: Some(3), ..Options::default() };
        let layout = layout(&index, &options).expect("the sample cuts");
        let meta = gunzip(&layout.meta, usize::MAX, "meta").expect("gzip");
        let reader = Fragmented::from_envelope(&meta).expect("the sample opens");
        let pack = &layout.packs[0].1;
        let pieces = (0..layout.fragments as u32)
            .map(|f| {
                let (_, offset, length) = reader.address(f).expect("an address");
                let bytes = &pack[offset as usize..offset as usize + length as usize];
                // A fragment's slot, or a records fragment (raw).
                let gzip = cairn::fragment::unslot(bytes).unwrap_or(bytes);
                gunzip(gzip, usize::MAX, "fragment").unwrap_or_else(|_| bytes.to_vec())
            })
            .collect();
        Sample { meta, pieces, vector: query_vector(&index, "search index") }
    })
}

fn options() -> Vec<SearchOptions> {
    let base = SearchOptions { limit: 5, now: Some(0.0), ..SearchOptions::default() };
    vec![
        base.clone(),
        SearchOptions { highlight: true, explain: true, expand: 2, prefix: true, fuzzy: Fuzzy::On(true), include_summary: false, ..base.clone() },
        SearchOptions { mode: SearchMode::Semantic, probes: Some(2), rescore: Some(3), ..base.clone() },
        // Field fragments, the dates fragment, and related documents' text, hop by hop.
        SearchOptions {
            filter: Some(serde_json::json!({ "docType": ["md", "text"], "createdAt": { "gte": "1970" } })),
            recency_weight: 1.0,
            related: true,
            related_hops: 2,
            ..base.clone()
        },
        // Reranked: the candidates' text, then their scores (from the input).
        SearchOptions { rerank: Some(Rerank { model: "cross-encoder".into(), top_n: 3 }), mode: SearchMode::Hybrid, ..base },
    ]
}

/// Runs searches, feeding each fragment or record asked for from `data`: a length byte, then
/// that many bytes to use instead (0: the real bytes with one byte flipped, at the next byte).
fn drive(index: &mut Fragmented, mut data: &[u8], real: Option<&Sample>) {
    let vector = real.and_then(|s| s.vector.clone());
    for query in ["search index", "alpha beta", "inde", "serch", ""] {
        for options in options() {
            // A search, a document search and a context, each to its answer or an error.
            let documents = DocumentSearchOptions {
                search: options.clone(),
                facets: vec!["docType".into(), "tags".into()],
                only_matching_chunks: false,
                include_full_docs: true,
                ..DocumentSearchOptions::default()
            };
            let context_options = ContextOptions { search: options.clone(), ..ContextOptions::default() };
            type Run<'a> = Box<dyn Fn(&Fragmented, QueryContext) -> Result<Step<()>, cairn::error::Error> + 'a>;
            let runs: [Run; 3] = [
                Box::new(|i, c| {
                    Ok(answer::search(i, &Query::new(&i.analyzer(), query)?, c, &options)?.map(|hits| {
                        for hit in &hits {
                            check_hit(hit);
                            assert!(hit.score.is_finite(), "a hit scored {}", hit.score);
                        }
                    }))
                }),
                Box::new(|i, c| Ok(answer::search_documents(i, &Query::new(&i.analyzer(), query)?, c, &documents, || 0.0)?.map(|_| ()))),
                Box::new(|i, c| Ok(answer::build_context(i, &Query::new(&i.analyzer(), query)?, c, &context_options)?.map(|_| ()))),
            ];
            for run in &runs {
            for _round in 0..12 {
                let context = QueryContext { vector: vector.as_deref(), vector_from_caller: false, now_ms: 0.0, ..QueryContext::default() };
                match run(index, context) {
                    Ok(Step::Done(())) => break,
                    Ok(Step::Need(cairn::search::Need { fragments, records, rows })) => {
                        let record_length = index.record_length();
                        let mut next = |real: &[u8]| -> Vec<u8> {
                            let (&n, rest) = data.split_first().unwrap_or((&0, &[]));
                            data = rest;
                            if n == 0 {
                                let mut bytes = real.to_vec();
                                if let (Some((&at, rest)), false) = (data.split_first(), bytes.is_empty()) {
                                    data = rest;
                                    let i = at as usize % bytes.len();
                                    bytes[i] ^= 0x5a;
                                }
                                bytes
                            } else {
                                let n = (n as usize).min(data.len());
                                let (taken, rest) = data.split_at(n);
                                data = rest;
                                taken.to_vec()
                            }
                        };
                        for f in fragments {
                            let real = real.and_then(|s| s.pieces.get(f as usize)).cloned().unwrap_or_default();
                            let _ = index.add(f, &next(&real));
                        }
                        for (f, r) in records {
                            let real = real
                                .and_then(|s| s.pieces.get(f as usize))
                                .and_then(|p| p.get(r as usize * record_length..(r as usize + 1) * record_length))
                                .map(<[u8]>::to_vec)
                                .unwrap_or_default();
                            let _ = index.add_record(f, r, &next(&real));
                        }
                        // A crafted meta's static rows: whatever bytes the input holds.
                        for r in rows {
                            let (&n, rest) = data.split_first().unwrap_or((&0, &[]));
                            let n = (n as usize).min(rest.len());
                            let _ = index.add_static_row(r.row, &rest[..n]);
                            data = &rest[n..];
                        }
                        if data.is_empty() && real.is_none() {
                            break;
                        }
                    }
                    Ok(Step::Score(request)) => {
                        // A byte: 0 gives a fitting score a text; else that many scores, each
                        // from the input's next four bytes (NaN, infinities, too many or few).
                        let (&n, rest) = data.split_first().unwrap_or((&0, &[]));
                        data = rest;
                        let scores: Vec<f32> = if n == 0 {
                            (0..request.texts.len()).map(|i| 1.0 / (1.0 + i as f32)).collect()
                        } else {
                            (0..n % 8)
                                .map(|_| {
                                    let (bytes, rest) = data.split_at(data.len().min(4));
                                    data = rest;
                                    let mut word = [0u8; 4];
                                    word[..bytes.len()].copy_from_slice(bytes);
                                    f32::from_le_bytes(word)
                                })
                                .collect()
                        };
                        let _ = index.add_rerank_scores(&request.model, &request.query, &request.chunks, &scores);
                        if data.is_empty() && n != 0 {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
            }
        }
    }
}

fuzz_target!(
    init: {
        write_seeds_if_asked("fragments", || {
            let s = sample();
            let mut meta = vec![0u8];
            meta.extend_from_slice(&s.meta);
            let mut numbers = vec![2u8];
            for x in [1.2f32, 0.75, 20.0, 200.0] {
                numbers.extend_from_slice(&x.to_le_bytes());
            }
            vec![("meta".into(), meta), ("numbers".into(), numbers), ("real".into(), vec![1; 64]), ("flips".into(), vec![1, 0, 7, 0, 200, 0, 3, 0, 99])]
        });
    },
    |data: &[u8]| {
        match data.split_first() {
            Some((0, meta)) => {
                if let Ok(mut index) = Fragmented::from_envelope(meta) {
                    drive(&mut index, &[], None);
                }
            }
            Some((2, numbers)) => {
                // The sample's meta, whole and sealed, with numbers from the input: a reader must
                // refuse what is out of range or answer with finite scores.
                let s = sample();
                let mut meta = Fragmented::from_envelope(&s.meta).expect("the sample opens").meta().clone();
                let mut words = numbers.chunks(4).map(|w| {
                    let mut b = [0u8; 4];
                    b[..w.len()].copy_from_slice(w);
                    b
                });
                let mut next = || words.next().unwrap_or([0; 4]);
                meta.settings.bm25.k1 = f32::from_le_bytes(next());
                meta.settings.bm25.b = f32::from_le_bytes(next());
                meta.average_chunk_length = f32::from_le_bytes(next());
                meta.average_document_length = f32::from_le_bytes(next());
                meta.max_inflated = u32::from_le_bytes(next());
                if let Some(v) = &mut meta.vectors {
                    v.scan_codes = u32::from_le_bytes(next());
                }
                if let Some(first) = meta.document_lengths.first_mut() {
                    *first = u32::from_le_bytes(next());
                }
                if let Some(first) = meta.document_chunks.first_mut() {
                    *first = u32::from_le_bytes(next()) % 64;
                }
                if let Ok(mut index) = Fragmented::from_envelope(&encode_meta(&meta).expect("encodes")) {
                    drive(&mut index, &[], Some(s));
                }
            }
            _ => {
                let s = sample();
                let mut index = Fragmented::from_envelope(&s.meta).expect("the sample opens");
                drive(&mut index, data.get(1..).unwrap_or(&[]), Some(s));
            }
        }
    }
);
