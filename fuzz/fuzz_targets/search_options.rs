//! Arbitrary options: the input is `query\njson`. When the JSON parses it is used as it is;
//! otherwise the bytes build a JSON object from the options' own field names (`arbitrary`), so
//! most inputs reach the searches. The value is read as `SearchOptions`, `DocumentSearchOptions`
//! and `ContextOptions` (with `Options::from_json`, as the CLI and wasm read them); those that
//! deserialize run on small indexes (lexical, int8, f32, HNSW) and must answer with hits or an
//! error, never a panic.
#![no_main]

use std::sync::OnceLock;

use arbitrary::{Arbitrary, Unstructured};
use cairn::hit::{ContextOptions, DocumentSearchOptions, Options, SearchOptions};
use cairn::index::Index;
use cairn::search::QueryContext;
use cairn_fuzz::{check_hit, exercise_context, exercise_documents, query_vector, sample_index, write_seeds_if_asked, Vectors};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

fn indexes() -> &'static [Index] {
    static INDEXES: OnceLock<Vec<Index>> = OnceLock::new();
    INDEXES.get_or_init(|| [Vectors::None, Vectors::Int8, Vectors::F32, Vectors::Graph].into_iter().map(sample_index).collect())
}

const KEYS: &[&str] = &[
    "limit", "mode", "fusion", "rrfK", "semanticWeight", "candidates", "highlight", "prefixHeadings", "snippetLength",
    "explain", "expand", "related", "relatedHops", "maxLinks", "filter", "staleDays", "recencyWeight",
    "recencyHalfLifeDays", "now", "chunkThreshold", "onlyMatchingChunks", "includeFullDocs", "facets", "tokenBudget",
    "order", "minScore", "prefix", "fuzzy",
];
const WORDS: &[&str] = &[
    "hybrid", "lexical", "semantic", "rrf", "weighted", "score", "document", "recency", "tags", "year", "lang",
    "createdAt", "updatedAt", "gte", "gt", "lte", "lt", "setup", "travel", "2021-01-01", "2024-03-01T00:00:00Z", "en",
];

fn number(u: &mut Unstructured) -> arbitrary::Result<Value> {
    Ok(match u.int_in_range(0..=6)? {
        0 => json!(u.int_in_range(0u32..=10)?),
        1 => json!(u32::arbitrary(u)?),
        2 => json!(u64::arbitrary(u)?),
        3 => json!(i64::arbitrary(u)?),
        4 => json!(f64::arbitrary(u)?), // NaN and infinities become null
        5 => json!(*u.choose(&[0.0, -0.0, 0.5, 1.0, 1.5, -1.0, 1e-30, 1e30, 4294967296.0, 1e300])?),
        _ => json!(u.int_in_range(1000u32..=100_001)?),
    })
}

fn value(u: &mut Unstructured, depth: u32) -> arbitrary::Result<Value> {
    let leaf = depth >= 3;
    Ok(match u.int_in_range(0..=if leaf { 3 } else { 5 })? {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(u)?),
        2 => number(u)?,
        3 => match u.int_in_range(0..=1)? {
            0 => Value::String(u.choose(WORDS)?.to_string()),
            _ => Value::String(String::arbitrary(u)?),
        },
        4 => Value::Array((0..u.int_in_range(0..=4)?).map(|_| value(u, depth + 1)).collect::<arbitrary::Result<_>>()?),
        _ => object(u, depth + 1, WORDS)?,
    })
}

fn object(u: &mut Unstructured, depth: u32, keys: &[&str]) -> arbitrary::Result<Value> {
    let mut map = Map::new();
    for _ in 0..u.int_in_range(0..=6)? {
        let key = if u.ratio(1, 16)? { String::arbitrary(u)? } else { u.choose(keys)?.to_string() };
        map.insert(key, value(u, depth)?);
    }
    Ok(Value::Object(map))
}

fn seeds() -> Vec<(String, Vec<u8>)> {
    let seed = |name: &str, query: &str, options: Value| (name.to_string(), format!("{query}\n{options}").into_bytes());
    vec![
        seed("default", "search index", json!({})),
        seed("everything", "café search", json!({"limit": 5, "highlight": true, "prefixHeadings": true, "snippetLength": 30, "explain": true, "expand": 2, "related": true, "relatedHops": 2, "maxLinks": 2, "recencyWeight": 1.0, "now": 1.7e12})),
        seed("weighted", "ranking bm25", json!({"mode": "hybrid", "fusion": "weighted", "semanticWeight": 0.7, "candidates": 3})),
        seed("filter-range", "index", json!({"filter": {"year": {"gte": 2021, "lt": 2024}, "updatedAt": {"gte": "2023-01-01"}}, "highlight": true})),
        seed("filter-any", "text", json!({"filter": {"tags": ["setup", "travel"], "lang": "en"}, "mode": "lexical"})),
        seed("limits", "search", json!({"limit": 1000, "candidates": 100000, "snippetLength": 10000, "expand": 100, "maxLinks": 1000, "related": true, "relatedHops": 2, "highlight": true})),
        seed("over-limits", "search", json!({"limit": 4294967295u64, "candidates": 4294967295u64, "snippetLength": 4294967295u64, "expand": 4294967295u64, "maxLinks": 4294967295u64, "staleDays": 4294967295u64})),
        seed("documents", "install index", json!({"chunkThreshold": 0.1, "onlyMatchingChunks": false, "includeFullDocs": true, "facets": ["tags", "year", "nope"]})),
        seed("context", "search", json!({"tokenBudget": 40, "order": "recency", "minScore": 0.001, "limit": 20})),
        seed("semantic", "", json!({"mode": "semantic", "limit": 3})),
        seed("as-you-type", "instal caf", json!({"prefix": true, "fuzzy": true, "highlight": true, "explain": true})),
        seed("fuzzy-distance", "serch indx rankng", json!({"fuzzy": 2, "mode": "lexical", "highlight": true})),
        seed("extreme-floats", "bm25", json!({"rrfK": 1e38, "recencyWeight": 3e38, "recencyHalfLifeDays": 1e-38, "now": -1e300})),
    ]
}

fn run(query: &str, options: &Value) {
    // As both shells read options: unknown keys refused.
    let search = SearchOptions::from_json(options.clone()).ok();
    let documents = DocumentSearchOptions::from_json(options.clone()).ok();
    let context = ContextOptions::from_json(options.clone()).ok();
    if search.is_none() && documents.is_none() && context.is_none() {
        return;
    }
    for (i, index) in indexes().iter().enumerate() {
        let vector = query_vector(index, query);
        let qc = QueryContext { vector: vector.as_deref(), vector_from_caller: i % 2 == 1, now_ms: 1_750_000_000_000.0, ..Default::default() };
        if let Some(options) = &search {
            if let Ok(hits) = cairn::search::search(index, query, qc, options) {
                hits.iter().for_each(check_hit);
            }
        }
        if let Some(options) = &documents {
            exercise_documents(index, query, options, qc);
        }
        if let Some(options) = &context {
            exercise_context(index, query, options, qc);
        }
    }
}

fuzz_target!(
    init: {
        write_seeds_if_asked("search_options", seeds);
        indexes();
    },
    |data: &[u8]| {
        let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
        let query: String = String::from_utf8_lossy(&data[..split]).chars().take(300).collect();
        let rest = data.get(split + 1..).unwrap_or_default();
        let options = match serde_json::from_slice::<Value>(rest) {
            Ok(v) => v,
            Err(_) => match object(&mut Unstructured::new(rest), 0, KEYS) {
                Ok(v) => v,
                Err(_) => return,
            },
        };
        run(&query, &options);
    }
);
