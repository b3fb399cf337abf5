//! Metadata filters: `{ field: value }` (equal, or contained in an array field),
//! `{ field: [a, b] }` (any of), `{ field: { gte, gt, lte, lt } }` (a range of numbers, or of
//! ISO 8601 dates compared as text). `createdAt` and `updatedAt` name the document's dates.
//! A filter becomes a mask over documents (and so chunks) before retrieval, so filtered
//! searches still fill `limit`; links and `related` consult the same mask.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::index::Index;

enum Condition {
    /// Any of these values (equal, or present in an array field).
    AnyOf(Vec<Value>),
    Range {
        gte: Option<Value>,
        gt: Option<Value>,
        lte: Option<Value>,
        lt: Option<Value>,
    },
}

pub struct Filter {
    fields: Vec<(String, Condition)>,
}

impl Filter {
    pub fn parse(filter: &Value) -> Result<Self> {
        let bad = |m: String| Error::InvalidInput(format!("invalid filter: {m}"));
        let object = filter
            .as_object()
            .ok_or_else(|| bad("it must be an object of field: condition".into()))?;
        let mut fields = Vec::new();
        for (field, condition) in object {
            let condition = match condition {
                Value::Array(values) => Condition::AnyOf(values.clone()),
                Value::Object(range) => {
                    if let Some(key) = range
                        .keys()
                        .find(|k| !["gte", "gt", "lte", "lt"].contains(&k.as_str()))
                    {
                        return Err(bad(format!(
                            "{field}: unknown range bound {key:?} (use gte, gt, lte, lt)"
                        )));
                    }
                    Condition::Range {
                        gte: range.get("gte").cloned(),
                        gt: range.get("gt").cloned(),
                        lte: range.get("lte").cloned(),
                        lt: range.get("lt").cloned(),
                    }
                }
                value => Condition::AnyOf(vec![value.clone()]),
            };
            fields.push((field.clone(), condition));
        }
        Ok(Filter { fields })
    }

    /// A mask over the index's documents: true where the document passes the filter.
    pub fn document_mask(&self, index: &Index) -> Vec<bool> {
        (0..index.documents.len() as u32)
            .map(|d| self.matches(index, d))
            .collect()
    }

    pub fn matches(&self, index: &Index, doc: u32) -> bool {
        self.matches_values(&|field| field_value(index, doc, field))
    }

    /// The fields the filter names.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(f, _)| f.as_str())
    }

    /// Whether a document whose field values `value` gives passes.
    /// (`dyn`: one copy of this code in the wasm for every caller.)
    pub fn matches_values(&self, value: &dyn Fn(&str) -> Option<Value>) -> bool {
        self.fields.iter().all(|(field, condition)| {
            let value = value(field);
            match (condition, value) {
                (_, None) => false,
                (Condition::AnyOf(wanted), Some(value)) => {
                    wanted.iter().any(|w| equals_or_contains(&value, w))
                }
                (Condition::Range { gte, gt, lte, lt }, Some(value)) => {
                    let values = match &value {
                        Value::Array(items) => items.clone(),
                        v => vec![v.clone()],
                    };
                    values.iter().any(|v| {
                        gte.as_ref()
                            .is_none_or(|b| compare(v, b).is_some_and(|o| o.is_ge()))
                            && gt
                                .as_ref()
                                .is_none_or(|b| compare(v, b).is_some_and(|o| o.is_gt()))
                            && lte
                                .as_ref()
                                .is_none_or(|b| compare(v, b).is_some_and(|o| o.is_le()))
                            && lt
                                .as_ref()
                                .is_none_or(|b| compare(v, b).is_some_and(|o| o.is_lt()))
                    })
                }
            }
        })
    }
}

/// The fields a filter can name on `doc`: its dates, `docType`, its metadata keys.
pub fn field_names(index: &Index, doc: u32) -> Vec<String> {
    let mut names: Vec<String> = ["createdAt", "updatedAt", "docType"].map(String::from).into();
    if let Some(Value::Object(m)) = index.metadata(doc) {
        names.extend(m.keys().cloned());
    }
    super::order::sort(&mut names);
    names.dedup();
    names
}

/// A document's value for a field: its dates, or a metadata field.
pub fn field_value(index: &Index, doc: u32, field: &str) -> Option<Value> {
    let document = &index.documents[doc as usize];
    match field {
        "createdAt" => document
            .created
            .as_ref()
            .map(|t| Value::String(t.iso.clone())),
        "updatedAt" => document
            .updated
            .as_ref()
            .map(|t| Value::String(t.iso.clone())),
        "docType" => serde_json::to_value(document.doc_type).ok(),
        _ => index.metadata(doc).and_then(|m| m.get(field)).cloned(),
    }
}

fn equals_or_contains(value: &Value, wanted: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|i| same(i, wanted)),
        v => same(v, wanted),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.as_str().cmp(y.as_str())),
        _ => None,
    }
}
