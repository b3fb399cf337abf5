//! The static query encoder: a query vector without a transformer. It holds one vector per
//! indexed term, in the sentence model's own output space, so a query's vector (the
//! IDF-weighted mean of its terms' rows, normalized) searches the chunk vectors the index
//! already has. The query's terms are the lexical index's own (`analyze`), so the static tier
//! needs no tokenizer or vocabulary of its own: a browser fetches the rows of the query's terms
//! (a few hundred bytes each, by range request) and answers by meaning at once, while the model
//! downloads. `build::distill` (native, with the model) fits the rows at index time so that they
//! reproduce the model's embeddings of the site's own text.
//!
//! The rows live in the row store (`store::rows`): records in packs under `p/`, beside either
//! layout; the index (or meta file) carries `StaticRows`, which says which terms have a row and
//! where each row is. This module owns what a row means: the terms' weights and, in `distill`,
//! how the rows are fitted.

use std::collections::HashMap;

use crate::index::lexical::LexicalIndex;
use crate::store::rows::Weighted;

/// How much a term weighs in a text's static vector: its count times its IDF over chunks, so
/// words most chunks have say little (the same weights distillation fits the rows with).
pub fn weight(count: u32, idf: f32) -> f32 {
    count as f32 * idf.max(0.0)
}

/// A text's terms as (term id, weight), each term once, in first-seen order, from each
/// occurrence's (term id, IDF).
pub fn weigh(occurrences: impl IntoIterator<Item = (u32, f32)>) -> Vec<(u32, f32)> {
    let mut position: HashMap<u32, usize> = HashMap::new();
    let mut counted: Vec<(u32, u32, f32)> = Vec::new();
    for (id, idf) in occurrences {
        match position.get(&id) {
            Some(&i) => counted[i].1 += 1,
            None => {
                position.insert(id, counted.len());
                counted.push((id, 1, idf));
            }
        }
    }
    counted
        .into_iter()
        .map(|(t, n, idf)| (t, weight(n, idf)))
        .collect()
}

/// A query's terms (analyzed) as `weigh` gives them, each with its text (which finds its row):
/// `weight_of` a term is its id and IDF, `None` for a term the index does not have.
pub fn weigh_query<'a>(
    terms: &'a [String],
    weight_of: impl Fn(&str) -> Option<(u32, f32)>,
) -> Vec<Weighted<'a>> {
    let found: Vec<(u32, f32, &str)> = terms
        .iter()
        .filter_map(|t| weight_of(t).map(|(id, idf)| (id, idf, t.as_str())))
        .collect();
    weigh(found.iter().map(|&(id, idf, _)| (id, idf)))
        .into_iter()
        .map(|(id, w)| (id, w, found.iter().find(|f| f.0 == id).map_or("", |f| f.2)))
        .collect()
}

/// A text's terms (analyzed) as `weigh` gives them; terms the index does not have are left out.
pub fn query_terms(lexical: &LexicalIndex, terms: &[String]) -> Vec<(u32, f32)> {
    weigh(terms.iter().filter_map(|term| {
        let t = lexical.term_id(term)?;
        Some((t, lexical.idf[t as usize]))
    }))
}
