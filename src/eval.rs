//! Retrieval quality on BEIR-style collections: nDCG@10 (linear gain, as pytrec_eval and BEIR
//! report it), MRR@10 and recall@100, averaged over the queries that have judgments.

use std::collections::HashMap;

use serde::Serialize;

use crate::error::{Error, Result};

/// Relevance judgments: query id → document id → grade.
pub type Qrels = HashMap<String, HashMap<String, u32>>;

/// Reads a BEIR `qrels/*.tsv` (a header line, then `query-id<TAB>corpus-id<TAB>score`).
pub fn parse_qrels(text: &str) -> Result<Qrels> {
    let mut qrels: Qrels = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        if line.trim().is_empty()
            || (i == 0 && fields.get(2).is_some_and(|s| s.parse::<f64>().is_err()))
        {
            continue;
        }
        let [query, doc, score] = fields[..] else {
            return Err(Error::InvalidInput(format!(
                "qrels line {}: expected query-id, corpus-id and score separated by tabs",
                i + 1
            )));
        };
        let score: f64 = score.parse().map_err(|_| {
            Error::InvalidInput(format!(
                "qrels line {}: score {score:?} is not a number",
                i + 1
            ))
        })?;
        if score > 0.0 {
            qrels
                .entry(query.to_string())
                .or_default()
                .insert(doc.to_string(), score as u32);
        }
    }
    Ok(qrels)
}

#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    pub ndcg_at_10: f64,
    pub mrr_at_10: f64,
    pub recall_at_100: f64,
}

/// Scores one ranking (document ids, best first, no repeats) against one query's judgments.
pub fn score_query(ranking: &[String], judged: &HashMap<String, u32>) -> Metrics {
    let gain = |doc: &String| judged.get(doc).copied().unwrap_or(0) as f64;
    let dcg: f64 = ranking
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, d)| gain(d) / (i as f64 + 2.0).log2())
        .sum();
    let mut ideal: Vec<f64> = judged.values().map(|&g| g as f64).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, g)| g / (i as f64 + 2.0).log2())
        .sum();
    let mrr = ranking
        .iter()
        .take(10)
        .position(|d| gain(d) > 0.0)
        .map_or(0.0, |p| 1.0 / (p as f64 + 1.0));
    let relevant = judged.values().filter(|&&g| g > 0).count();
    let found = ranking.iter().take(100).filter(|d| gain(d) > 0.0).count();
    Metrics {
        ndcg_at_10: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        mrr_at_10: mrr,
        recall_at_100: if relevant > 0 {
            found as f64 / relevant as f64
        } else {
            0.0
        },
    }
}

/// The mean of the metrics of every judged query; `rankings` maps query id → document ranking.
/// A judged query with no ranking counts as all zeros.
pub fn evaluate(rankings: &HashMap<String, Vec<String>>, qrels: &Qrels) -> (Metrics, usize) {
    let mut total = Metrics::default();
    let mut n = 0;
    for (query, judged) in qrels {
        let m = rankings
            .get(query)
            .map_or(Metrics::default(), |r| score_query(r, judged));
        total.ndcg_at_10 += m.ndcg_at_10;
        total.mrr_at_10 += m.mrr_at_10;
        total.recall_at_100 += m.recall_at_100;
        n += 1;
    }
    let d = n.max(1) as f64;
    (
        Metrics {
            ndcg_at_10: total.ndcg_at_10 / d,
            mrr_at_10: total.mrr_at_10 / d,
            recall_at_100: total.recall_at_100 / d,
        },
        n,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_match_hand_computed_values() {
        let qrels = parse_qrels("query-id\tcorpus-id\tscore\nq\ta\t1\nq\tb\t1\nq\tz\t0\n").unwrap();
        let ranking: Vec<String> = ["x", "a", "y", "b"].iter().map(|s| s.to_string()).collect();
        let m = score_query(&ranking, &qrels["q"]);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!((m.ndcg_at_10 - dcg / idcg).abs() < 1e-12);
        assert_eq!(m.mrr_at_10, 0.5);
        assert_eq!(m.recall_at_100, 1.0);
        assert!(parse_qrels("q\ta\n").is_err());
    }
}
