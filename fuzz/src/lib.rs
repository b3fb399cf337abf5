//! What the fuzz targets share: a small sample collection, a stand-in embedder (so an index has
//! vectors, and an HNSW graph, without the model), the index file's framing, and a driver that
//! runs every kind of search on an index and checks the answers' offsets.

use cairn::hit::{ContextOptions, ContextOrder, DocType, DocumentSearchOptions, Fuzzy, SearchMode, SearchOptions};
use cairn::build::{build, ChunkEmbedder, VectorOptions};
use cairn::index::vector::{GraphSettings, ModelIdentity, Precision};
use cairn::index::{Chunk, Document, Index, IndexSettings, Timestamp};
use cairn::ingest::{RawLink, SourceDocument};
use cairn::search::answer::{build_context, search_documents};
use cairn::search::{answered, search, Query, QueryContext, Whole};

/// Dimension of the stand-in embeddings.
pub const DIM: usize = 8;

/// Deterministic "embeddings": each word of the text adds to a component chosen by its hash,
/// then the vector is normalized. Similar texts get similar vectors, which is all a search needs.
pub struct StandIn;

impl ChunkEmbedder for StandIn {
    fn dimension(&self) -> usize {
        DIM
    }
    fn embed(&self, text: &str) -> cairn::Result<Vec<f32>> {
        Ok(embed(text))
    }
}

pub fn embed(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIM];
    v[0] = 0.01;
    for word in text.split_whitespace() {
        let h = word.to_lowercase().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
        v[(h % DIM as u64) as usize] += 1.0 + (h >> 60) as f32 / 16.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn identity() -> ModelIdentity {
    ModelIdentity {
        name: "stand-in".into(),
        dimension: DIM as u32,
        source_weights_sha256: "0".repeat(64),
        web_weights_sha256: "0".repeat(64),
        web_weights_file: "model.gguf".into(),
        config_sha256: "0".repeat(64),
        tokenizer_sha256: "0".repeat(64),
        arithmetic: Default::default(),
    }
}

fn chunk(index: u32, headings: &[&str], text: &str, line: u32, offset: u64) -> Chunk {
    Chunk {
        doc: 0,
        chunk_index: index,
        heading_path: headings.iter().map(|h| h.to_string()).collect(),
        anchor: headings.last().map(|h| h.to_lowercase().replace(' ', "-")),
        text: text.into(),
        line_start: line,
        line_end: line + 1,
        source_offset: offset,
        pages: None,
    }
}

fn date(iso: &str, unix_seconds: i64) -> Option<Timestamp> {
    Some(Timestamp { iso: iso.into(), unix_seconds })
}

/// A few documents of every type, with metadata, dates, links, headings and non-ASCII text.
pub fn sample_sources() -> Vec<SourceDocument> {
    let doc = |id: &str, doc_type, title: &str, metadata: Option<&str>, created, updated| Document {
        id: id.into(),
        doc_type,
        title: title.into(),
        url: Some(format!("https://example.org/{id}")),
        metadata: metadata.map(str::to_string),
        created,
        updated,
        author: (doc_type == DocType::Md).then(|| "Ada Lovelace".into()),
        summary: Some(format!("{title}: a sample.")),
    };
    let link = |target: &str, text: &str| RawLink { target: target.into(), text: text.into(), rel: (text.len() % 2 == 0).then(|| "next".into()) };
    vec![
        SourceDocument {
            document: doc(
                "guide/install.md",
                DocType::Md,
                "Installing cairn",
                Some(r#"{"tags":["setup","cli"],"year":2023,"lang":"en"}"#),
                date("2023-01-05T00:00:00Z", 1_672_876_800),
                date("2024-03-01T00:00:00Z", 1_709_251_200),
            ),
            chunks: vec![
                chunk(0, &["Installing cairn"], "Install the command-line tool with cargo. It builds an index from your files.", 1, 0),
                chunk(1, &["Installing cairn", "Build an index"], "Run cairn index docs to build the search index. 🔍 Search is instant.", 5, 120),
                chunk(2, &["Installing cairn", "Troubleshooting"], "If the build fails, check the Rust version. Rebuild the index after upgrading.", 9, 260),
            ],
            links: vec![link("../notes.txt", "the notes"), link("../international.md#café", "international text")],
            origin: "guide/install.md".into(),
            language: None,
        },
        SourceDocument {
            document: doc(
                "international.md",
                DocType::Md,
                "Café culture in Zürich",
                Some(r#"{"tags":["travel"],"year":2021,"lang":"de"}"#),
                date("2021-06-01T00:00:00Z", 1_622_505_600),
                None,
            ),
            chunks: vec![
                chunk(0, &["Café"], "Das Café in Zürich serviert seltene Kaffeebohnen. Naïve résumés, 東京 and 🏔️ mountains.", 1, 0),
                chunk(1, &["Café", "Coffee"], "Coffee beans from Ethiopia; e\u{301}tude with a combining accent. Ünïcödé everywhere.", 4, 90),
            ],
            links: vec![link("guide/install.md", "install guide")],
            origin: "international.md".into(),
            language: None,
        },
        SourceDocument {
            document: doc("notes.txt", DocType::Text, "notes", None, None, date("2020-02-02T00:00:00Z", 1_580_601_600)),
            chunks: vec![chunk(0, &[], "Plain notes about search, ranking and BM25 scores.\n\nA second paragraph on embeddings.", 1, 0)],
            links: vec![link("guide/install.md", "install")],
            origin: "notes.txt".into(),
            language: None,
        },
        SourceDocument {
            document: doc("records.jsonl#r1", DocType::Jsonl, "A record", Some(r#"{"tags":"single","year":"2019-05-01"}"#), None, None),
            chunks: vec![chunk(0, &[], "Records carry their own ids and metadata, like a BEIR corpus.", 1, 0)],
            links: vec![],
            origin: "records.jsonl:1".into(),
            language: None,
        },
        SourceDocument {
            document: doc("site/index.html", DocType::Html, "Site home", None, date("2024-12-31T00:00:00Z", 1_735_603_200), None),
            chunks: vec![
                chunk(0, &["Welcome"], "Welcome to the site. Search the documentation from the box above.", 3, 40),
                chunk(1, &["Welcome", "API"], "The API returns hits with highlights, snippets and citations in UTF-16.", 8, 200),
                chunk(2, &["Welcome", "API"], "", 12, 400),
            ],
            links: vec![link("../guide/install.md", "install"), link("../notes.txt", "notes")],
            origin: "site/index.html".into(),
            language: None,
        },
        SourceDocument {
            document: doc("paper.pdf", DocType::Pdf, "", None, None, None),
            chunks: vec![Chunk { pages: Some((1, 2)), ..chunk(0, &[], "Page one text continues onto page two about ranking.", 1, 0) }],
            links: vec![],
            origin: "paper.pdf".into(),
            language: None,
        },
    ]
}

/// Which vectors an index built by [`sample_index`] has.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Vectors {
    None,
    Int8,
    F32,
    Graph,
}

/// The stand-in's vectors, int8 and scanned, as `build` takes them.
pub fn stand_in_vectors() -> VectorOptions<'static> {
    VectorOptions {
        embedder: &StandIn,
        identity: identity(),
        graph_from: usize::MAX,
        graph: GraphSettings::default(),
        precision: Precision::Int8,
        previous: None,
    }
}

pub fn sample_index(vectors: Vectors) -> Index {
    let options = |precision, graph_from| VectorOptions {
        embedder: &StandIn,
        identity: identity(),
        graph_from,
        graph: GraphSettings::default(),
        precision,
        previous: None,
    };
    let v = match vectors {
        Vectors::None => None,
        Vectors::Int8 => Some(options(Precision::Int8, usize::MAX)),
        Vectors::F32 => Some(options(Precision::F32, usize::MAX)),
        Vectors::Graph => Some(options(Precision::F32, 1)),
    };
    let mut index = build(sample_sources(), IndexSettings { summaries: true, ..IndexSettings::default() }, v, |_, _| {}).expect("the sample index builds");
    // With vectors, a static tier's directory too: a row for every term, made by the stand-in
    // (the rows themselves are not in the file; a target feeds them).
    if let Some(dim) = index.vectors.as_ref().map(|v| v.dimension()) {
        let n = index.lexical.term_count() as u32;
        let rows: Vec<f32> = (0..n).flat_map(|t| StandIn.embed(index.lexical.term(t)).expect("the stand-in embeds")).collect();
        let names: Vec<&str> = (0..n).map(|t| index.lexical.term(t)).collect();
        index.statics = Some(cairn::store::rows::write_terms(dim, n as usize, &(0..n).collect::<Vec<_>>(), &names, &rows).0);
    }
    index
}

/// The bytes of an index file around the postcard `payload` (header, the payload's length and
/// its deflate stream, CRC-32), as `cairn::index::format` documents it. Level 1: fuzzing wants
/// speed, and any level inflates the same.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut body = (payload.len() as u64).to_le_bytes().to_vec();
    body.extend(miniz_oxide::deflate::compress_to_vec(payload, 1));
    let mut out = Vec::with_capacity(body.len() + 24);
    out.extend_from_slice(cairn::store::envelope::MAGIC);
    out.extend_from_slice(&cairn::store::envelope::FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_le_bytes());
    out
}

/// CRC-32 (IEEE), bit by bit: small, and independent of the crate under test.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// The postcard payload of an index file: what follows the 20-byte header and the inflated
/// length, less the CRC, inflated.
pub fn payload(file: &[u8]) -> Vec<u8> {
    miniz_oxide::inflate::decompress_to_vec(&file[28..file.len() - 4]).expect("a written index inflates")
}

/// UTF-16 length of a string.
pub fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Panics unless `start..end` (UTF-16 units) slices `text` between whole characters.
pub fn check_utf16_range(text: &str, start: u32, end: u32, what: &str) {
    let units: Vec<u16> = text.encode_utf16().collect();
    assert!(start <= end && end as usize <= units.len(), "{what}: {start}..{end} outside a text of {} UTF-16 units: {text:?}", units.len());
    assert!(
        String::from_utf16(&units[start as usize..end as usize]).is_ok(),
        "{what}: {start}..{end} splits a surrogate pair in {text:?}"
    );
}

/// Checks every offset a hit reports against its own text.
pub fn check_hit(hit: &cairn::SearchHit) {
    for h in &hit.highlights {
        check_utf16_range(&hit.text, h.start, h.end, "highlight");
    }
    if let Some(m) = &hit.match_range {
        check_utf16_range(&hit.text, m.start, m.start.checked_add(m.length).expect("match end overflows"), "match");
    }
    if let Some(s) = &hit.snippet {
        for h in &s.highlights {
            check_utf16_range(&s.text, h.start, h.end, "snippet highlight");
        }
    }
}

/// A query vector of the index's dimension (a chunk's own vector when there is one, so the
/// semantic branch finds something), or a deliberately wrong one when the dimension is too
/// large to allocate sensibly (a crafted file may claim any dimension when it has no vectors).
pub fn query_vector(index: &Index, text: &str) -> Option<Vec<f32>> {
    let vectors = index.vectors.as_ref()?;
    let dim = vectors.dimension();
    if dim > 4096 {
        return Some(vec![0.5; 3]);
    }
    if dim == DIM {
        return Some(embed(text));
    }
    let mut v: Vec<f32> = (0..dim).map(|i| ((i * 7 + text.len()) % 13) as f32 - 6.0).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter_mut().for_each(|x| *x /= norm);
    Some(v)
}

/// Runs `search`, `search_documents` and `build_context` with `options` (as given, and in each
/// mode), checking what they return. Errors are fine; panics and bad offsets are findings.
pub fn exercise(index: &Index, query: &str, options: &SearchOptions, vector: Option<&[f32]>, from_caller: bool) {
    let context = QueryContext { vector, vector_from_caller: from_caller, now_ms: 1_750_000_000_000.0, ..Default::default() };
    for mode in [None, Some(SearchMode::Lexical), Some(SearchMode::Semantic), Some(SearchMode::Hybrid)] {
        let options = SearchOptions { mode: mode.unwrap_or(options.mode), ..options.clone() };
        if let Ok(hits) = search(index, query, context, &options) {
            assert!(hits.len() <= options.limit as usize * (1 + options.max_links.max(1) as usize), "too many hits");
            for (i, hit) in hits.iter().enumerate() {
                assert_eq!(hit.rank as usize, i + 1, "ranks are 1, 2, 3…");
                check_hit(hit);
            }
        }
    }
    exercise_documents(index, query, &DocumentSearchOptions { search: options.clone(), ..Default::default() }, context);
    exercise_documents(
        index,
        query,
        &DocumentSearchOptions {
            search: options.clone(),
            chunk_threshold: 0.01,
            only_matching_chunks: false,
            include_full_docs: true,
            facets: vec!["tags".into(), "year".into(), "createdAt".into()],
        },
        context,
    );
    for order in [ContextOrder::Score, ContextOrder::Document, ContextOrder::Recency] {
        let options = ContextOptions { search: options.clone(), token_budget: 60, order, min_score: None };
        exercise_context(index, query, &options, context);
    }
}

pub fn exercise_documents(index: &Index, query: &str, options: &DocumentSearchOptions, context: QueryContext<'_>) {
    if let Ok(response) = Query::new(&index.analyzer(), query).and_then(|q| search_documents(&Whole { index, statics: None }, &q, context, options, || 0.0)).and_then(answered) {
        assert!(response.results.len() <= options.search.limit as usize);
        for result in &response.results {
            for chunk in &result.chunks {
                for h in &chunk.highlights {
                    check_utf16_range(&chunk.content, h.start, h.end, "document chunk highlight");
                }
            }
        }
    }
}

pub fn exercise_context(index: &Index, query: &str, options: &ContextOptions, context: QueryContext<'_>) {
    if let Ok(response) = Query::new(&index.analyzer(), query).and_then(|q| build_context(&Whole { index, statics: None }, &q, context, options)).and_then(answered) {
        // The documented invariant: the admitted fragments in prompt order, joined by a blank
        // line, are the prompt.
        let mut admitted: Vec<_> = response.candidates.iter().filter(|c| c.admitted).collect();
        admitted.sort_by_key(|c| c.prompt_position);
        let joined: Vec<&str> = admitted.iter().map(|c| c.prompt_fragment.as_deref().expect("admitted has a fragment")).collect();
        assert_eq!(joined.join("\n\n"), response.prompt, "prompt is not its fragments joined");
        assert!(response.candidates.iter().all(|c| c.admitted == c.reason.is_none()), "reason iff not admitted");
    }
}

/// Options that turn on every part of a hit.
pub fn everything() -> SearchOptions {
    SearchOptions {
        limit: 5,
        highlight: true,
        prefix_headings: true,
        snippet_length: 40,
        explain: true,
        expand: 2,
        related: true,
        related_hops: 2,
        max_links: 3,
        recency_weight: 0.5,
        prefix: true,
        fuzzy: Fuzzy::On(true),
        include_summary: true,
        ..SearchOptions::default()
    }
}

/// Words to search an index for: a few from its first chunks' text and titles.
pub fn queries_for(index: &Index) -> Vec<String> {
    let mut out = vec!["search index".to_string()];
    for c in index.chunks.iter().take(2) {
        let words: Vec<&str> = c.text.split_whitespace().take(4).collect();
        if !words.is_empty() {
            out.push(words.join(" ").chars().take(200).collect());
        }
    }
    if let Some(d) = index.documents.first() {
        out.push(d.title.chars().take(200).collect());
    }
    out
}

/// Every search on `index`: each query, with default options and with everything on.
pub fn search_everything(index: &Index) {
    for query in queries_for(index) {
        let vector = query_vector(index, &query);
        exercise(index, &query, &everything(), vector.as_deref(), false);
        exercise(index, &query, &SearchOptions::default(), vector.as_deref(), true);
    }
}

/// Writes the seed corpora a target starts from, when `CAIRN_FUZZ_SEEDS` names a folder
/// (`corpus/` of the fuzz crate): run each target once with it set to regenerate them.
pub fn write_seeds_if_asked(target: &str, seeds: impl FnOnce() -> Vec<(String, Vec<u8>)>) {
    let Ok(dir) = std::env::var("CAIRN_FUZZ_SEEDS") else { return };
    let dir = std::path::Path::new(&dir).join(target);
    std::fs::create_dir_all(&dir).expect("seed folder");
    for (name, bytes) in seeds() {
        std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("seed written");
    }
}

/// Index files of the sample collection, one for each kind of vectors.
pub fn sample_files() -> Vec<(String, Vec<u8>)> {
    [Vectors::None, Vectors::Int8, Vectors::F32, Vectors::Graph]
        .into_iter()
        .map(|v| (format!("{v:?}").to_lowercase(), cairn::index::format::write(&sample_index(v)).expect("written")))
        .collect()
}
