//! The wasm bindings in a JavaScript engine (Chromium or Node, through wasm-bindgen-test):
//! loading, searching, UTF-16 highlights as JavaScript slices them, errors as `JsError`s, and an
//! index that keeps answering after bad arguments and failed downloads.
//! The index is the fixture documents, built by the native CLI before this test compiles
//! (scripts/test.sh does it).
#![cfg(target_arch = "wasm32")]

use cairn::wasm::SearchIndex;
use js_sys::{JsString, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

const INDEX: &[u8] = include_bytes!("../target/test-fixtures/lexical/index.cairn");

fn get(value: &JsValue, path: &str) -> JsValue {
    path.split('.').fold(value.clone(), |v, key| {
        Reflect::get(&v, &key.into()).unwrap()
    })
}

fn options(json: &str) -> Option<JsValue> {
    Some(js_sys::JSON::parse(json).unwrap())
}

fn open(bytes: &[u8]) -> Result<SearchIndex, wasm_bindgen::JsError> {
    SearchIndex::from_bytes(Uint8Array::from(bytes).into())
}

/// A query, as JavaScript passes it.
fn q(text: &str) -> JsValue {
    text.into()
}

fn message(error: wasm_bindgen::JsError) -> String {
    let value: JsValue = error.into();
    value
        .dyn_into::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .unwrap_or_default()
}

#[wasm_bindgen_test]
fn loads_and_searches() {
    let index = open(INDEX).unwrap();
    assert_eq!(index.document_count(), 6);
    assert!(!index.has_vectors());
    let hits: js_sys::Array = index
        .search(q("installing the target"), options(r#"{"limit": 3}"#))
        .unwrap()
        .dyn_into()
        .unwrap();
    assert!(hits.length() >= 1 && hits.length() <= 3);
    let top = hits.get(0);
    assert_eq!(
        get(&top, "citation.docId").as_string().unwrap(),
        "guide/install.md"
    );
    assert_eq!(get(&top, "rank").as_f64(), Some(1.0));
    assert_eq!(
        get(&top, "scoreKind").as_string().unwrap(),
        "bm25",
        "hybrid falls back to lexical without vectors"
    );
    assert_eq!(get(&top, "signals.lexical.rank").as_f64(), Some(1.0));
    assert!(get(&top, "signals.semantic").is_undefined());
    // Defaults apply when options are left out.
    let all: js_sys::Array = index.search(q("cairn"), None).unwrap().dyn_into().unwrap();
    assert!(all.length() >= 2);
}

#[wasm_bindgen_test]
fn highlights_slice_in_utf16() {
    let index = open(INDEX).unwrap();
    let hits: js_sys::Array = index
        .search(
            q("cafe 東京 search developers"),
            options(r#"{"mode": "lexical", "limit": 10, "highlight": true}"#),
        )
        .unwrap()
        .dyn_into()
        .unwrap();
    let mut words = Vec::new();
    for hit in hits.iter() {
        let text: JsString = get(&hit, "text").dyn_into().unwrap();
        let highlights: js_sys::Array = get(&hit, "highlights").dyn_into().unwrap();
        for h in highlights.iter() {
            let (start, end) = (
                get(&h, "start").as_f64().unwrap() as u32,
                get(&h, "end").as_f64().unwrap() as u32,
            );
            words.push(String::from(text.slice(start, end)));
        }
    }
    for expected in ["café", "東京", "search", "developers"] {
        assert!(
            words.iter().any(|w| w == expected),
            "{expected} not in {words:?}"
        );
    }
}

#[wasm_bindgen_test]
fn damaged_bytes_and_bad_options_are_js_errors() {
    let mut flipped = INDEX.to_vec();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x5a;
    for (bytes, expected) in [
        (&INDEX[..INDEX.len() - 7], "truncated"),
        (&flipped[..], "damaged"),
        (&b"<html>not an index</html>"[..], "not a cairn index"),
    ] {
        let error = open(bytes).err().expect("an error");
        let text = message(error);
        assert!(text.contains(expected), "{text}");
    }
    let index = open(INDEX).unwrap();
    let text = message(
        index
            .search(q("x"), options(r#"{"limt": 5}"#))
            .err()
            .unwrap(),
    );
    assert!(
        text.contains("invalid search options") && text.contains("limt"),
        "{text}"
    );
    let text = message(
        index
            .search(q("cairn"), options(r#"{"mode": "semantic"}"#))
            .err()
            .unwrap(),
    );
    assert!(text.contains("no embeddings"), "{text}");
    let text = message(
        index
            .search(q("x"), options(r#"{"limit": 0}"#))
            .err()
            .unwrap(),
    );
    assert!(text.contains("limit"), "{text}");
}

/// The linked fixture documents (dates, tags, links, a duplicate paragraph), chunked small.
const LINKED: &[u8] = include_bytes!("../target/test-fixtures/linked/index.cairn");

fn array(value: JsValue) -> js_sys::Array {
    value.dyn_into().unwrap()
}

#[wasm_bindgen_test]
fn build_context_round_trips_in_javascript() {
    let index = open(LINKED).unwrap();
    for order in ["score", "document", "recency"] {
        let response = index
            .build_context(
                q("cairns alpine routes fog"),
                options(&format!(
                    r#"{{"tokenBudget": 60, "order": "{order}", "limit": 10}}"#
                )),
            )
            .unwrap();
        let candidates = array(get(&response, "candidates"));
        let mut admitted: Vec<(u32, String)> = candidates
            .iter()
            .filter(|c| get(c, "admitted").as_bool() == Some(true))
            .map(|c| {
                (
                    get(&c, "promptPosition").as_f64().unwrap() as u32,
                    get(&c, "promptFragment").as_string().unwrap(),
                )
            })
            .collect();
        admitted.sort();
        let joined: Vec<String> = admitted.into_iter().map(|(_, f)| f).collect();
        assert_eq!(
            joined.join("\n\n"),
            get(&response, "prompt").as_string().unwrap(),
            "order {order}"
        );
        assert!(candidates
            .iter()
            .all(|c| (get(&c, "admitted").as_bool() == Some(false))
                == !get(&c, "reason").is_undefined()));
    }
}

#[wasm_bindgen_test]
fn documents_links_related_and_filters_in_javascript() {
    let index = open(LINKED).unwrap();
    let response = index
        .search_documents(
            q("cairns"),
            options(r#"{"facets": ["tags"], "filter": {"tags": "shared"}}"#),
        )
        .unwrap();
    let results = array(get(&response, "results"));
    let docs: Vec<String> = results
        .iter()
        .map(|r| get(&r, "docId").as_string().unwrap())
        .collect();
    assert!(
        docs.iter().all(|d| d == "alpine.md" || d == "valley.md"),
        "{docs:?}"
    );
    assert_eq!(
        get(&response, "facets.tags.shared").as_f64(),
        Some(docs.len() as f64)
    );
    let hits = array(
        index
            .search(
                q("glacier valley"),
                options(r#"{"limit": 1, "related": true}"#),
            )
            .unwrap(),
    );
    assert_eq!(
        get(&hits.get(1), "citation.docId").as_string().unwrap(),
        "valley.md"
    );
    assert_eq!(
        get(&hits.get(1), "via.text").as_string().unwrap(),
        "see the valley notes"
    );
    assert_eq!(
        get(&hits.get(0), "links")
            .dyn_into::<js_sys::Array>()
            .unwrap()
            .length(),
        1
    );
    assert_eq!(get(&hits.get(0), "metadata.year").as_f64(), Some(2020.0));

    // A filter hides the links to what it leaves out; kind, author, rel and summary arrive.
    let hits = array(
        index
            .search(
                q("painted posts"),
                options(r#"{"limit": 1, "includeSummary": true, "filter": {"tags": ["valley", "alpine"]}}"#),
            )
            .unwrap(),
    );
    let valley = hits.get(0);
    assert_eq!(
        get(&valley, "citation.kind").as_string().unwrap(),
        "section"
    );
    assert_eq!(
        get(&valley, "links.length").as_f64(),
        Some(1.0),
        "the archive is filtered out"
    );
    assert_eq!(
        get(&valley, "links.0.targetId").as_string().unwrap(),
        "alpine.md"
    );
    assert_eq!(get(&valley, "linksElided").as_f64(), Some(0.0));
    assert!(!get(&valley, "summary").as_string().unwrap().is_empty());
    let hits = array(
        index
            .search(q("shepherds stacked stones"), options(r#"{"limit": 1}"#))
            .unwrap(),
    );
    let archive = hits.get(0);
    assert_eq!(
        get(&archive, "citation.author").as_string().unwrap(),
        "Ada Lovelace"
    );
    assert_eq!(get(&archive, "links.0.rel").as_string().unwrap(), "prev");
    assert_eq!(
        get(&archive, "links.0.targetType").as_string().unwrap(),
        "md"
    );
}

#[wasm_bindgen_test]
fn match_and_snippet_slice_in_utf16_on_accents_cjk_and_emoji() {
    let index = open(INDEX).unwrap();
    let hits = array(
        index
            .search(
                q("café 東京 search"),
                options(r#"{"mode": "lexical", "highlight": true, "snippetLength": 40}"#),
            )
            .unwrap(),
    );
    let mut checked = 0;
    for hit in hits.iter() {
        let text: JsString = get(&hit, "text").dyn_into().unwrap();
        if let Some(start) = get(&hit, "match.start").as_f64() {
            let length = get(&hit, "match.length").as_f64().unwrap();
            let sentence = String::from(text.slice(start as u32, (start + length) as u32));
            assert!(!sentence.trim().is_empty() && String::from(text.clone()).contains(&sentence));
        }
        let snippet: JsString = get(&hit, "snippet.text").dyn_into().unwrap();
        for h in array(get(&hit, "snippet.highlights")).iter() {
            let word = String::from(snippet.slice(
                get(&h, "start").as_f64().unwrap() as u32,
                get(&h, "end").as_f64().unwrap() as u32,
            ));
            assert!(
                ["café", "cafés", "東", "京", "search"].contains(&word.as_str()),
                "{word}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 3, "{checked} snippet highlights checked");
}

#[wasm_bindgen_test]
async fn errors_leave_the_index_answering() {
    let index = open(INDEX).unwrap();
    let ids = |index: &SearchIndex| -> Vec<String> {
        array(index.search(q("installing the target"), None).unwrap())
            .iter()
            .map(|h| get(&h, "id").as_string().unwrap())
            .collect()
    };
    let before = ids(&index);
    let nan = js_sys::Object::new();
    Reflect::set(&nan, &"limit".into(), &f64::NAN.into()).unwrap();
    let function: JsValue = js_sys::Function::new_no_args("return 1").into();
    let failures = [
        (
            index.search(JsValue::from(42), None).err(),
            "the query must be a string, not a number",
        ),
        (
            index.search(q("x"), Some(function)).err(),
            "options must be an object, not a function",
        ),
        (
            index.search_documents(q("x"), Some(nan.into())).err(),
            "limit must be a finite number, not NaN",
        ),
        (
            index.build_context(JsValue::NULL, None).err(),
            "the query must be a string, not null",
        ),
        (
            index
                .search_with_vector(q("x"), JsValue::from("abc"), None)
                .err(),
            "the vector must be a Float32Array",
        ),
        (
            index
                .load_model_from_bytes(JsValue::from(1), JsValue::from(2), JsValue::from(3))
                .err(),
            "the weights must be a Uint8Array",
        ),
        (
            SearchIndex::from_bytes(JsValue::from("abc")).err(),
            "the index must be a Uint8Array, not a string",
        ),
    ];
    for (error, expected) in failures {
        let text = message(error.expect(expected));
        assert!(text.contains(expected), "{text}");
        assert_eq!(ids(&index), before, "after {expected}");
    }
    // A download that cannot happen rejects, and the index still answers.
    let refused = JsFuture::from(index.load_model(q("http://127.0.0.1:1/model"), None))
        .await
        .unwrap_err();
    let text = refused
        .dyn_into::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .unwrap_or_default();
    assert!(
        text.starts_with("cannot fetch http://127.0.0.1:1/model/config.json"),
        "{text}"
    );
    let text = message(
        SearchIndex::load(q("http://127.0.0.1:1/index.cairn"), None)
            .await
            .err()
            .unwrap(),
    );
    assert!(
        text.starts_with("cannot fetch http://127.0.0.1:1/index.cairn"),
        "{text}"
    );
    assert_eq!(ids(&index), before);
    assert!(!index.model_ready());
}

/// The 8-bit product's SIMD128 kernel gives the plain kernel's bits, at shapes with a short
/// tile, a short panel and a short last block (the same check as the native kernels').
#[wasm_bindgen_test]
fn the_int8_simd128_kernel_gives_the_plain_kernels_bits() {
    use cairn::encoder::int8::Packed8;
    let mut state = 7u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state % 2001) as f32 / 1000.0 - 1.0
    };
    for (rows, k, n) in [(1, 32, 8), (5, 40, 13), (9, 384, 20), (4, 70, 8)] {
        let weight: Vec<f32> = (0..n * k).map(|_| next() * 0.1).collect();
        let bias: Vec<f32> = (0..n).map(|_| next()).collect();
        let x: Vec<f32> = (0..rows * k).map(|_| next() * 4.0).collect();
        let got = Packed8::new(&weight, &bias, n, k).forward(&x);
        let plain = Packed8::plain(&weight, &bias, n, k).forward(&x);
        assert_eq!(got, plain, "at {rows}×{k}×{n}");
    }
}

/// The browser's 8-bit weights, widened a block at a time (SIMD128), give the products of the
/// same weights widened at load, to the bit.
#[wasm_bindgen_test]
fn eight_bit_panels_give_the_widened_weights_products_in_wasm() {
    use cairn::encoder::matmul::{Packed, Q8_BLOCK};
    let (n, k, rows) = (21, 1088, 6); // a short panel; blocks of 1,024 inputs and a short one
    let values: Vec<i8> = (0..n * k)
        .map(|i| ((i * 37 % 255) as i32 - 127) as i8)
        .collect();
    let scales: Vec<f32> = (0..n * k / Q8_BLOCK)
        .map(|i| 0.001 + i as f32 * 1e-4)
        .collect();
    let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.01 - 0.2).collect();
    let x: Vec<f32> = (0..rows * k)
        .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
        .collect();
    let widened: Vec<f32> = (0..n * k)
        .map(|i| values[i] as f32 * scales[(i / k) * (k / Q8_BLOCK) + (i % k) / Q8_BLOCK])
        .collect();
    let q8 = Packed::from_q8(&values, &scales, &bias, n, k);
    assert_eq!(
        q8.forward(&x),
        Packed::new(&widened, &bias, n, k).forward(&x)
    );
}
