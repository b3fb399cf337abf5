//! `buildContext`: its options and its answer, the prompt and every candidate considered.

use serde::{Deserialize, Serialize};
use tsify::Tsify;

use super::options::read_apart;
use super::{Citation, Options, ScoreKind, SearchOptions};

/// How `buildContext` orders the admitted chunks in the prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum ContextOrder {
    /// Best score first.
    #[default]
    Score,
    /// By document, then position in it (reads like the sources).
    Document,
    /// Most recently updated first.
    Recency,
}

/// Options of `buildContext`: every search option, plus the budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct ContextOptions {
    /// The search; its `limit` is how many candidates are considered (default 20). (Read these
    /// options from JSON with `Options::from_json`: the derived reader leaves `search` to it.)
    #[serde(flatten, deserialize_with = "read_apart")]
    pub search: SearchOptions,
    /// The most tokens the prompt may take (default 1000), counted as characters / 4, rounded up.
    #[tsify(optional)]
    pub token_budget: u32,
    /// How admitted chunks are ordered in the prompt (default `score`).
    #[tsify(optional)]
    pub order: ContextOrder,
    /// Candidates scoring below this are not admitted (default: none), on `scoreKind`'s scale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_score: Option<f32>,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            search: SearchOptions {
                limit: 20,
                ..SearchOptions::default()
            },
            token_budget: 1000,
            order: ContextOrder::Score,
            min_score: None,
        }
    }
}

/// Why a candidate did not reach the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub enum RejectReason {
    /// Admitting it would pass the token budget.
    OverBudget,
    /// Its score is below `minScore`.
    BelowThreshold,
    /// Its text is the same as an admitted chunk's.
    Duplicate,
}

/// One candidate `buildContext` considered, admitted or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ContextCandidate {
    pub id: String,
    /// 1-based position by score across every candidate (not the prompt order).
    pub rank: u32,
    pub score: f32,
    /// Its fragment's size in tokens (characters / 4).
    pub tokens: u32,
    pub admitted: bool,
    /// Where it sits in the prompt, 0-based; admitted candidates only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_position: Option<u32>,
    /// The exact text it contributed; admitted candidates only. Joining every admitted
    /// fragment in `promptPosition` order with a blank line ("\n\n") gives `prompt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_fragment: Option<String>,
    /// Present exactly when `admitted` is false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<RejectReason>,
    pub citation: Citation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// The answer of `buildContext`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ContextResponse {
    pub prompt: String,
    /// The prompt's size in tokens (characters / 4).
    pub tokens: u32,
    pub order: ContextOrder,
    pub score_kind: ScoreKind,
    pub candidates: Vec<ContextCandidate>,
}

impl Options for ContextOptions {
    const OWN_KEYS: &'static [&'static str] = &["tokenBudget", "order", "minScore"];

    fn search_mut(&mut self) -> &mut SearchOptions {
        &mut self.search
    }
}
