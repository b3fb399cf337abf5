//! Metadata filters: `{ field: value }` (equal, or contained in an array field),
//! `{ field: [a, b] }` (any of), `{ field: { gte, gt, lte, lt } }` (a range of numbers or of
//! text). `createdAt` and `updatedAt` name the document's dates; their range bounds must be
//! dates (`2024`, `2024-01`, `2024-01-15` or RFC 3339), compared as instants, and any other
//! bound is an error, since it could only match nothing.
//! A filter becomes a mask over documents (and so chunks) before retrieval, so filtered
//! searches still fill `limit`; links and `related` consult the same mask.

use std::cmp::Ordering;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::index::Index;

/// The fields that hold a document's dates.
const DATE_FIELDS: [&str; 2] = ["createdAt", "updatedAt"];

/// A range's bounds, in the order its conditions are kept.
const BOUNDS: [&str; 4] = ["gte", "gt", "lte", "lt"];

/// An instant: seconds since 1970 (UTC) and nanoseconds.
type Instant = (i64, u32);

enum Condition {
    /// Any of these values (equal, or present in an array field).
    AnyOf(Vec<Value>),
    /// A range of numbers or text: the bounds named in [`BOUNDS`], each if given.
    Range([Option<Value>; 4]),
    /// A range of a date field, its bounds as instants.
    Dates([Option<Instant>; 4]),
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
                    let bounds = BOUNDS.map(|key| range.get(key).map(|b| (key, b)));
                    if DATE_FIELDS.contains(&field.as_str()) {
                        let mut dates = [None; 4];
                        for (slot, bound) in dates.iter_mut().zip(bounds) {
                            let Some((key, bound)) = bound else {
                                continue;
                            };
                            *slot = Some(bound.as_str().and_then(instant).ok_or_else(|| {
                                bad(format!(
                                    "{field}: the bound {key} is {}, not a date; write a date as text: \"2024-01-15\", \"2024-01\", \"2024\" or an RFC 3339 date-time such as \"2024-01-15T09:30:00Z\"",
                                    shown(bound)
                                ))
                            })?);
                        }
                        Condition::Dates(dates)
                    } else {
                        if let Some((key, bound)) = bounds
                            .iter()
                            .flatten()
                            .find(|(_, b)| !b.is_number() && !b.is_string())
                        {
                            return Err(bad(format!(
                                "{field}: the bound {key} is {}; a bound is a number or text",
                                shown(bound)
                            )));
                        }
                        Condition::Range(bounds.map(|b| b.map(|(_, b)| b.clone())))
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
            let Some(value) = value(field) else {
                return false;
            };
            // A field passes when one of its values (an array's items, or the value) does.
            items(&value).iter().any(|v| match condition {
                Condition::AnyOf(wanted) => wanted.iter().any(|w| same(v, w)),
                Condition::Range(bounds) => within(bounds, &|b| compare(v, b)),
                Condition::Dates(bounds) => v
                    .as_str()
                    .and_then(instant)
                    .is_some_and(|at| within(bounds, &|b| Some(at.cmp(b)))),
            })
        })
    }
}

/// A field's values: an array's items, or the value itself.
fn items(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) => items,
        v => std::slice::from_ref(v),
    }
}

/// Whether a value is inside every bound given, `order` comparing it with a bound.
fn within<T>(bounds: &[Option<T>; 4], order: &dyn Fn(&T) -> Option<Ordering>) -> bool {
    let tests: [fn(Ordering) -> bool; 4] = [
        Ordering::is_ge,
        Ordering::is_gt,
        Ordering::is_le,
        Ordering::is_lt,
    ];
    bounds
        .iter()
        .zip(tests)
        .all(|(bound, test)| bound.as_ref().is_none_or(|b| order(b).is_some_and(test)))
}

/// The start of a value as JSON, for a message.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// A date as ISO 8601 text, as the instant it begins: a year (`2024`), a month (`2024-01`) or a
/// day (`2024-01-15`), in UTC as ingestion reads a date, or an RFC 3339 date-time
/// (`2024-01-15T09:30:00Z`, `2024-01-15T11:30:00.5+02:00`), the form documents' dates are
/// stored in. Written here rather than taken from `time`, which the wasm does not link.
fn instant(text: &str) -> Option<Instant> {
    let rest = &mut text.trim().as_bytes();
    let mut date = [digits(rest, 4)?, 1, 1];
    let mut parts = 1;
    while parts < 3 && byte(rest, b"-").is_some() {
        date[parts] = digits(rest, 2)?;
        parts += 1;
    }
    let [year, month, day] = date;
    if !(1..=12).contains(&month) || !(1..=days_in_month(year, month)).contains(&day) {
        return None;
    }
    let mut seconds = days_from_civil(year, month, day) * 86_400;
    if rest.is_empty() {
        return Some((seconds, 0));
    }
    if parts < 3 {
        return None;
    }
    byte(rest, b"Tt ")?;
    let hour = digits(rest, 2)?;
    byte(rest, b":")?;
    let minute = digits(rest, 2)?;
    byte(rest, b":")?;
    let second = digits(rest, 2)?;
    // RFC 3339 allows a leap second, 60.
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    seconds += hour * 3600 + minute * 60 + second;
    let mut nanos = 0;
    if byte(rest, b".").is_some() {
        let count = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if count == 0 {
            return None;
        }
        for (i, &d) in rest[..count].iter().enumerate().take(9) {
            nanos += u32::from(d - b'0') * 10u32.pow(8 - i as u32);
        }
        *rest = &rest[count..];
    }
    match byte(rest, b"Zz+-")? {
        b'Z' | b'z' => {}
        sign => {
            let hours = digits(rest, 2)?;
            byte(rest, b":")?;
            let minutes = digits(rest, 2)?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = hours * 3600 + minutes * 60;
            seconds -= if sign == b'+' { offset } else { -offset };
        }
    }
    rest.is_empty().then_some((seconds, nanos))
}

/// Takes `n` ASCII digits from the front of `rest`, as a number.
fn digits(rest: &mut &[u8], n: usize) -> Option<i64> {
    let taken = rest.get(..n)?;
    if !taken.iter().all(u8::is_ascii_digit) {
        return None;
    }
    *rest = &rest[n..];
    Some(taken.iter().fold(0, |v, d| v * 10 + i64::from(d - b'0')))
}

/// Takes one of `allowed` from the front of `rest`.
fn byte(rest: &mut &[u8], allowed: &[u8]) -> Option<u8> {
    let (&first, tail) = rest.split_first()?;
    allowed.contains(&first).then(|| {
        *rest = tail;
        first
    })
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The fields a filter can name on `doc`: its dates, `docType`, its metadata keys.
pub fn field_names(index: &Index, doc: u32) -> Vec<String> {
    let mut names: Vec<String> = ["createdAt", "updatedAt", "docType"]
        .map(String::from)
        .into();
    if let Some(Value::Object(m)) = index.metadata(doc) {
        names.extend(m.keys().cloned());
    }
    crate::order::sort(&mut names);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_read_as_the_instant_they_begin() {
        let day = instant("2024-01-15").unwrap();
        assert_eq!(day, (1_705_276_800, 0));
        assert_eq!(instant("2024-01-15T00:00:00Z"), Some(day));
        assert_eq!(instant("2024-01-15T02:00:00+02:00"), Some(day));
        assert_eq!(
            instant("2024-01-14T23:00:00.250-01:00"),
            Some((day.0, 250_000_000))
        );
        assert_eq!(instant("2024-01"), Some((1_704_067_200, 0)));
        assert_eq!(instant("2024"), Some((1_704_067_200, 0)));
        assert_eq!(instant("1970-01-01T00:00:00Z"), Some((0, 0)));
        assert_eq!(instant("0001-01-01"), Some((-62_135_596_800, 0)));
        assert_eq!(instant("2024-02-29"), Some((1_709_164_800, 0)));
        for bad in [
            "garbage",
            "2026-13-45",
            "2023-02-29",
            "2024-00-10",
            "2024-1-5",
            "12",
            "2024-01-15T",
            "2024-01-15T25:00:00Z",
            "2024-01-15T10:00:00",
            "2024-01T10:00:00Z",
            "2024-01-15Z",
            "2024-01-15T10:00:00.Z",
            "2024-01-15T10:00:00Zjunk",
            "",
        ] {
            assert_eq!(instant(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_bound_that_cannot_match_is_an_error() {
        for filter in [
            serde_json::json!({"updatedAt": {"gte": "garbage"}}),
            serde_json::json!({"createdAt": {"lt": "2026-13-45"}}),
            serde_json::json!({"updatedAt": {"gte": "2024-01-01", "lte": 12}}),
            serde_json::json!({"year": {"gte": true}}),
        ] {
            let Err(Error::InvalidInput(message)) = Filter::parse(&filter) else {
                panic!("{filter} is accepted");
            };
            assert!(message.starts_with("invalid filter: "), "{message}");
        }
        let date = Filter::parse(&serde_json::json!({"updatedAt": {"gt": "2024-01-15", "lte": "2024-01-16T00:00:00+01:00"}})).unwrap();
        let passes = |iso: &str| date.matches_values(&|_| Some(Value::String(iso.into())));
        assert!(!passes("2024-01-15T00:00:00Z"));
        assert!(passes("2024-01-15T00:00:01Z"));
        assert!(passes("2024-01-15T23:00:00Z"));
        assert!(!passes("2024-01-15T23:00:00.5Z"));
    }
}
