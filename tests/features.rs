//! Every field and option of the SearchHit, searchDocuments and buildContext, through the CLI's
//! JSON (the same JSON JavaScript receives), on small linked documents written for the purpose
//! (tests/fixtures/linked: dates, tags, links between pages, a duplicate paragraph).
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

mod common;
use common::ok as cairn;

fn index() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/linked");
    cairn(&[
        "index",
        input.to_str().unwrap(),
        "--no-embed",
        "--summaries",
        "--chunk-words",
        "12",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    dir
}

/// 2025-01-01T00:00:00Z, so ages do not depend on the day the test runs.
const NOW: f64 = 1735689600000.0;

fn run(index: &Path, query: &str, output: &str, options: Value) -> Value {
    let mut options = options;
    options
        .as_object_mut()
        .unwrap()
        .entry("now")
        .or_insert(json!(NOW));
    let out = cairn(&[
        "search",
        index.to_str().unwrap(),
        query,
        "--json",
        "--mode",
        "lexical",
        "--output",
        output,
        "--options",
        &options.to_string(),
    ]);
    serde_json::from_str(&out).unwrap()
}

fn slice(text: &str, start: u64, end: u64) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    String::from_utf16(&units[start as usize..end as usize]).unwrap()
}

fn hit_for<'a>(hits: &'a Value, doc: &str) -> &'a Value {
    hits.as_array()
        .unwrap()
        .iter()
        .find(|h| h["citation"]["docId"] == doc)
        .unwrap_or_else(|| panic!("no hit for {doc}: {hits}"))
}

#[test]
fn match_snippet_and_prefixed_text_keep_offsets_right() {
    let index = index();
    let hits = run(
        index.path(),
        "painted posts",
        "hits",
        json!({"highlight": true, "prefixHeadings": true, "snippetLength": 30}),
    );
    let hit = hit_for(&hits, "valley.md");
    let text = hit["text"].as_str().unwrap();
    assert!(text.starts_with("Valley notes › Trails\n\n"), "{text}");
    for h in hit["highlights"].as_array().unwrap() {
        let word = slice(
            text,
            h["start"].as_u64().unwrap(),
            h["end"].as_u64().unwrap(),
        );
        assert!(word == "painted" || word == "posts", "{word}");
    }
    let m = &hit["match"];
    let sentence = slice(
        text,
        m["start"].as_u64().unwrap(),
        m["start"].as_u64().unwrap() + m["length"].as_u64().unwrap(),
    );
    assert_eq!(
        sentence,
        "The valley trails are marked with painted posts, not cairns."
    );
    let snippet = &hit["snippet"];
    let snippet_text = snippet["text"].as_str().unwrap();
    assert!(snippet_text.chars().count() <= 30 + 22, "{snippet_text}");
    let words: Vec<String> = snippet["highlights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            slice(
                snippet_text,
                h["start"].as_u64().unwrap(),
                h["end"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        words.contains(&"painted".to_string()),
        "{snippet_text}: {words:?}"
    );

    // Highlighting is on request, and changes neither results nor order.
    let plain = run(
        index.path(),
        "painted posts",
        "hits",
        json!({"highlight": false}),
    );
    assert!(plain[0].get("match").is_none() && plain[0]["highlights"] == json!([]));
    let with: Vec<&Value> = hits.as_array().unwrap().iter().map(|h| &h["id"]).collect();
    let without: Vec<&Value> = plain.as_array().unwrap().iter().map(|h| &h["id"]).collect();
    assert_eq!(with, without);
}

#[test]
fn explain_retrieval_rank_and_the_recency_boost() {
    let index = index();
    let hits = run(index.path(), "cairns fog", "hits", json!({"explain": true}));
    for hit in hits.as_array().unwrap() {
        let explain = &hit["explain"];
        assert_eq!(explain["foundBy"], json!(["lexical"]));
        assert_eq!(explain["method"], "bm25");
        assert_eq!(hit["retrievalRank"], hit["rank"]);
        let sum: f64 = explain["terms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["contribution"].as_f64().unwrap())
            .sum();
        assert!((sum - hit["retrievalScore"].as_f64().unwrap()).abs() < 1e-4);
        assert!(explain["matchedTerms"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t == "cairn" || t == "fog"));
    }
    // The boost favours the newest documents; retrievalRank still says where retrieval put them.
    let boosted = run(
        index.path(),
        "cairns fog",
        "hits",
        json!({"explain": true, "recencyWeight": 50, "recencyHalfLifeDays": 100}),
    );
    let top = &boosted[0];
    assert_eq!(top["citation"]["docId"], "valley.md", "{boosted}");
    assert!(top["retrievalRank"].as_u64().unwrap() > 1);
    assert!(top["explain"]["recencyFactor"].as_f64().unwrap() > 1.0);
    assert!(top["score"].as_f64().unwrap() > top["retrievalScore"].as_f64().unwrap());
}

#[test]
fn neighbors_links_dates_metadata_and_staleness() {
    let index = index();
    let hits = run(
        index.path(),
        "numbered map",
        "hits",
        json!({"expand": 1, "staleDays": 1000}),
    );
    let hit = hit_for(&hits, "archive.md");
    assert_eq!(hit["text"], "Each one was numbered on a map.");
    let neighbors = &hit["neighbors"];
    assert_eq!(neighbors["before"].as_array().unwrap().len(), 1);
    assert!(
        neighbors["before"][0]
            .as_str()
            .unwrap()
            .contains("surveyors"),
        "{neighbors}"
    );
    assert!(
        neighbors["after"][0]
            .as_str()
            .unwrap()
            .contains("Hikers today"),
        "{neighbors}"
    );
    assert_eq!(hit["createdAt"], "2022-05-05T00:00:00Z");
    assert_eq!(hit["updatedAt"], "2022-05-05T00:00:00Z");
    assert_eq!(hit["ageDays"], 972);
    assert_eq!(hit["stale"], false);
    assert_eq!(hit["metadata"]["tags"], json!(["archive"]));
    // The archive is linked from the valley notes.
    assert_eq!(
        hit["links"],
        json!([{"targetId": "valley.md", "targetType": "md", "title": "Valley notes", "text": "continued in the archive", "direction": "in", "rel": "prev"}])
    );

    // maxLinks 0 lists none and counts none (a fragmented index then fetches no links).
    let hits = run(index.path(), "glacier", "hits", json!({"maxLinks": 0}));
    let alpine = hit_for(&hits, "alpine.md");
    assert_eq!(
        (
            alpine["links"].as_array().unwrap().len(),
            alpine["linksElided"].as_u64()
        ),
        (0, Some(0))
    );
    assert_eq!(
        alpine["stale"], true,
        "updated 2020-06-01, more than 365 days before now"
    );
}

#[test]
fn at_most_so_many_documents_and_hits_a_document_as_a_results_page_shows() {
    let index = index();
    let ids = |hits: &Value| -> Vec<(String, String)> {
        hits.as_array()
            .unwrap()
            .iter()
            .map(|h| {
                let doc = h["citation"]["docId"].as_str().unwrap().to_string();
                (doc, h["id"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let all = ids(&run(index.path(), "valley", "hits", json!({"limit": 100})));
    let documents: std::collections::HashSet<&String> = all.iter().map(|(d, _)| d).collect();
    assert!(
        documents.len() >= 3 && all.len() > documents.len(),
        "{all:?}"
    );
    // The best hit of each of the first two documents, in the same order.
    let mut first_two: Vec<&String> = Vec::new();
    let mut expected: Vec<(String, String)> = Vec::new();
    for (doc, id) in &all {
        if !first_two.contains(&doc) && first_two.len() < 2 {
            first_two.push(doc);
            expected.push((doc.clone(), id.clone()));
        }
    }
    let capped = run(
        index.path(),
        "valley",
        "hits",
        json!({"limit": 100, "maxDocuments": 2, "maxPerDocument": 1}),
    );
    assert_eq!(ids(&capped), expected);
    // `limit` still bounds them.
    let one = run(
        index.path(),
        "valley",
        "hits",
        json!({"limit": 1, "maxDocuments": 2}),
    );
    assert_eq!(ids(&one), all[..1].to_vec());
}

#[test]
fn related_follows_links_without_touching_direct_scores() {
    let index = index();
    let direct = run(index.path(), "glacier valley", "hits", json!({"limit": 1}));
    let related = run(
        index.path(),
        "glacier valley",
        "hits",
        json!({"limit": 1, "related": true, "relatedHops": 2}),
    );
    assert_eq!(related[0]["score"], direct[0]["score"]);
    // A lexical score is the passage's BM25 plus its document's; both parts are positive.
    let lexical = &direct[0]["signals"]["lexical"];
    let (score, document) = (
        lexical["score"].as_f64().unwrap(),
        lexical["documentScore"].as_f64().unwrap(),
    );
    assert!(document > 0.0 && document < score, "{lexical}");
    assert_eq!(related[0]["citation"]["docId"], "alpine.md");
    assert!(related[0].get("via").is_none());
    let valley = &related[1];
    assert_eq!(
        (
            valley["citation"]["docId"].as_str(),
            valley["rank"].as_u64()
        ),
        (Some("valley.md"), Some(2))
    );
    assert_eq!(
        valley["via"],
        json!({"text": "see the valley notes", "path": "see the valley notes", "fromId": related[0]["id"], "hops": 1})
    );
    let archive = &related[2];
    assert_eq!(archive["citation"]["docId"], "archive.md");
    assert_eq!(
        archive["via"]["path"],
        "see the valley notes → continued in the archive"
    );
    assert_eq!(archive["via"]["hops"], 2);
}

#[test]
fn what_kind_of_claim_who_wrote_it_and_its_summary() {
    let index = index();
    let hits = run(
        index.path(),
        "shepherds stacked stones",
        "hits",
        json!({"limit": 1}),
    );
    let citation = &hits[0]["citation"];
    assert_eq!(
        (citation["docId"].as_str(), citation["kind"].as_str()),
        (Some("archive.md"), Some("section"))
    );
    assert_eq!(citation["author"], "Ada Lovelace", "front matter author");
    assert!(hits[0].get("summary").is_none(), "only with includeSummary");
    let hits = run(
        index.path(),
        "shepherds stacked stones",
        "hits",
        json!({"limit": 1, "includeSummary": true}),
    );
    let summary = hits[0]["summary"].as_str().unwrap();
    assert!(
        summary.len() <= 330 && summary.contains("cairn"),
        "{summary}"
    );
    // The archive's own sentences, in its order: each is one of the document's.
    let archive = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/linked/archive.md"),
    )
    .unwrap();
    assert!(
        summary
            .split(". ")
            .all(|s| archive.contains(s.trim_end_matches('.'))),
        "{summary}"
    );
    let documents = run(
        index.path(),
        "shepherds",
        "documents",
        json!({"includeSummary": true}),
    );
    assert_eq!(documents["results"][0]["summary"].as_str(), Some(summary));

    // Each kind of source says what its text is, and who wrote it when the source names someone.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    std::fs::write(input.join("page.html"), r#"<html><head><title>Page</title><meta name="author" content="Grace  Hopper"></head><body><main><p>Compilers translate programs. See the <a href="notes.txt" rel="Help">notes</a>.</p></main></body></html>"#).unwrap();
    std::fs::write(input.join("notes.txt"), "Compilers are programs too.").unwrap();
    std::fs::write(input.join("records.jsonl"), concat!(r#"{"_id": "r1", "title": "Record", "text": "Compilers optimise loops.", "author": ["Ada", "Charles"]}"#, "\n", r#"{"_id": "r2", "text": "Compilers by metadata.", "metadata": {"author": {"name": "Alan"}}}"#, "\n")).unwrap();
    let out = dir.path().join("index");
    cairn(&[
        "index",
        input.to_str().unwrap(),
        "--no-embed",
        "--out",
        out.to_str().unwrap(),
    ]);
    let hits = run(&out, "compilers", "hits", json!({"maxLinks": 5}));
    let by_doc = |id: &str| hit_for(&hits, id)["citation"].clone();
    let kinds: Vec<(Value, Value)> = ["page.html", "notes.txt", "r1", "r2"]
        .iter()
        .map(|d| (by_doc(d)["kind"].clone(), by_doc(d)["author"].clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (json!("page"), json!("Grace Hopper")),
            (json!("passage"), Value::Null),
            (json!("recordField"), json!("Ada, Charles")),
            (json!("recordField"), json!("Alan")),
        ]
    );
    assert_eq!(
        hit_for(&hits, "page.html")["links"],
        json!([{"targetId": "notes.txt", "targetType": "text", "title": "notes", "text": "notes", "direction": "out", "rel": "help"}])
    );
    let refused = common::cairn(&[
        "search",
        out.to_str().unwrap(),
        "compilers",
        "--options",
        r#"{"includeSummary": true}"#,
    ]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && said.contains("rebuild it with `cairn index --summaries`"),
        "{said}"
    );
    assert_eq!(
        hit_for(&hits, "notes.txt")["links"][0]["rel"],
        "help of",
        "read from the target's side"
    );
}

#[test]
fn links_and_related_leave_out_what_a_filter_hides() {
    let index = index();
    // The valley notes link out to the archive and in from the alpine page.
    let all = run(
        index.path(),
        "painted posts",
        "hits",
        json!({"limit": 1, "maxLinks": 1}),
    );
    assert_eq!(all[0]["citation"]["docId"], "valley.md");
    assert_eq!(all[0]["linksElided"], 1, "two links, one listed");
    let filtered = run(
        index.path(),
        "painted posts",
        "hits",
        json!({"limit": 1, "filter": {"tags": ["valley", "alpine"]}}),
    );
    let targets: Vec<&str> = filtered[0]["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["targetId"].as_str().unwrap())
        .collect();
    assert_eq!(targets, vec!["alpine.md"], "the archive is filtered out");
    let filtered = run(
        index.path(),
        "painted posts",
        "hits",
        json!({"limit": 1, "maxLinks": 1, "filter": {"tags": ["valley", "alpine"]}}),
    );
    assert_eq!(
        filtered[0]["linksElided"], 0,
        "a hidden link is not counted"
    );
    // Two hops from the alpine page reach the archive, unless the filter hides it.
    let related = run(
        index.path(),
        "glacier valley",
        "hits",
        json!({"limit": 1, "related": true, "relatedHops": 2}),
    );
    assert!(related
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["citation"]["docId"] == "archive.md"));
    let related = run(
        index.path(),
        "glacier valley",
        "hits",
        json!({"limit": 1, "related": true, "relatedHops": 2, "filter": {"tags": "shared"}}),
    );
    let docs: Vec<&str> = related
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["citation"]["docId"].as_str().unwrap())
        .collect();
    assert_eq!(docs, vec!["alpine.md", "valley.md"]);
}

#[test]
fn filters_on_metadata_values_arrays_ranges_and_dates() {
    let index = index();
    let docs = |filter: Value| -> Vec<String> {
        let hits = run(
            index.path(),
            "cairns",
            "hits",
            json!({"limit": 20, "filter": filter}),
        );
        let mut ids: Vec<String> = hits
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["citation"]["docId"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids.dedup();
        ids
    };
    assert_eq!(
        docs(json!({"tags": "shared"})),
        vec!["alpine.md", "valley.md"]
    );
    assert_eq!(
        docs(json!({"tags": ["archive", "valley"]})),
        vec!["archive.md", "valley.md"]
    );
    assert_eq!(
        docs(json!({"year": {"gte": 2021, "lt": 2024}})),
        vec!["archive.md"]
    );
    assert_eq!(
        docs(json!({"updatedAt": {"gte": "2022-01-01"}})),
        vec!["archive.md", "valley.md"]
    );
    assert_eq!(
        docs(json!({"tags": "alpine", "year": 2019})),
        vec!["duplicate.md"]
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "search",
            index.path().to_str().unwrap(),
            "x",
            "--options",
            r#"{"filter": {"year": {"above": 1}}}"#,
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown range bound"));
}

#[test]
fn search_documents_groups_chunks_and_counts_facets() {
    let index = index();
    let response = run(
        index.path(),
        "cairns stones",
        "documents",
        json!({"facets": ["tags", "year"], "onlyMatchingChunks": false, "includeFullDocs": true, "chunkThreshold": 1.0, "highlight": true}),
    );
    let results = response["results"].as_array().unwrap();
    assert_eq!(response["total"].as_u64().unwrap() as usize, results.len());
    assert!(response["timing"].as_f64().unwrap() >= 0.0);
    assert_eq!(response["scoreKind"], "bm25");
    let archive = results.iter().find(|r| r["docId"] == "archive.md").unwrap();
    let chunks = archive["chunks"].as_array().unwrap();
    assert!(
        chunks.len() >= 4,
        "every chunk of the archive, matching or not"
    );
    assert_eq!(archive["score"], chunks[0]["score"]);
    assert!(chunks
        .iter()
        .any(|c| c["isRelevant"] == false && c["score"] == 0.0));
    assert!(
        archive["content"].as_str().unwrap().contains("shepherds")
            && archive["content"].as_str().unwrap().contains("Rangers")
    );
    assert_eq!(response["facets"]["tags"]["shared"], 2);
    assert_eq!(response["facets"]["year"]["2022"], 1);
    let ranks: Vec<u64> = results
        .iter()
        .map(|r| r["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, (1..=results.len() as u64).collect::<Vec<_>>());
}

#[test]
fn build_context_round_trips_and_says_why() {
    let index = index();
    for order in ["score", "document", "recency"] {
        let response = run(
            index.path(),
            "cairns alpine routes fog",
            "context",
            json!({"tokenBudget": 60, "order": order, "limit": 10}),
        );
        let candidates = response["candidates"].as_array().unwrap();
        let mut admitted: Vec<&Value> = candidates
            .iter()
            .filter(|c| c["admitted"] == true)
            .collect();
        admitted.sort_by_key(|c| c["promptPosition"].as_u64().unwrap());
        let joined: Vec<&str> = admitted
            .iter()
            .map(|c| c["promptFragment"].as_str().unwrap())
            .collect();
        assert_eq!(
            joined.join("\n\n"),
            response["prompt"].as_str().unwrap(),
            "order {order}"
        );
        assert!(response["tokens"].as_u64().unwrap() <= 60);
        let ranks: Vec<u64> = candidates
            .iter()
            .map(|c| c["rank"].as_u64().unwrap())
            .collect();
        assert_eq!(ranks, (1..=candidates.len() as u64).collect::<Vec<_>>());
        for c in candidates {
            assert_eq!(c["admitted"] == false, c.get("reason").is_some(), "{c}");
        }
        let reasons: Vec<&str> = candidates
            .iter()
            .filter_map(|c| c["reason"].as_str())
            .collect();
        assert!(
            reasons.contains(&"duplicate"),
            "the copied paragraph is a duplicate: {reasons:?}"
        );
        assert!(reasons.contains(&"overBudget"), "{reasons:?}");
        if order == "recency" {
            let dates: Vec<&str> = admitted
                .iter()
                .map(|c| c["updatedAt"].as_str().unwrap())
                .collect();
            assert!(dates.windows(2).all(|w| w[0] >= w[1]), "{dates:?}");
        }
    }
    let response = run(
        index.path(),
        "cairns",
        "context",
        json!({"minScore": 1000.0}),
    );
    assert!(response["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["reason"] == "belowThreshold"));
    assert_eq!(response["prompt"], "");
}
