//! Dates from sources: front matter or JSONL fields (`2024-01-15`, RFC 3339, or a number of
//! seconds since 1970) and file times, normalized to a `Timestamp` (ISO 8601 text and seconds
//! since 1970, UTC).

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, OffsetDateTime};

use crate::index::Timestamp;

/// The first of `keys` in `fields` that holds a date.
pub fn from_fields(fields: Option<&Value>, keys: &[&str]) -> Option<Timestamp> {
    let fields = fields?;
    keys.iter()
        .find_map(|k| fields.get(*k).and_then(from_value))
}

/// A date from a JSON value: text as [`parse`] reads it, or a number of Unix seconds.
pub fn from_value(value: &Value) -> Option<Timestamp> {
    match value {
        Value::String(text) => parse(text),
        Value::Number(n) => from_unix_seconds(n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.floor() as i64)
        })?),
        _ => None,
    }
}

/// Seconds since 1970, if they fall within the years 1 to 9999 (milliseconds do not).
pub fn from_unix_seconds(seconds: i64) -> Option<Timestamp> {
    let at = OffsetDateTime::from_unix_timestamp(seconds)
        .ok()
        .filter(|at| at.year() >= 1)?;
    Some(Timestamp {
        iso: at.format(&Rfc3339).ok()?,
        unix_seconds: seconds,
    })
}

/// Parses `2024-01-15` (midnight UTC) or an RFC 3339 date-time.
pub fn parse(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
        return Some(Timestamp {
            iso: at.format(&Rfc3339).ok()?,
            unix_seconds: at.unix_timestamp(),
        });
    }
    let date = Date::parse(text, format_description!("[year]-[month]-[day]")).ok()?;
    let at = date.midnight().assume_utc();
    Some(Timestamp {
        iso: at.format(&Rfc3339).ok()?,
        unix_seconds: at.unix_timestamp(),
    })
}

pub fn from_system_time(at: std::time::SystemTime) -> Timestamp {
    let at = OffsetDateTime::from(at)
        .replace_nanosecond(0)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    Timestamp {
        iso: at.format(&Rfc3339).unwrap_or_default(),
        unix_seconds: at.unix_timestamp(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_dates_and_date_times() {
        assert_eq!(
            parse("2024-01-15").unwrap(),
            Timestamp {
                iso: "2024-01-15T00:00:00Z".into(),
                unix_seconds: 1705276800
            }
        );
        assert_eq!(
            parse("2024-01-20T14:45:00Z").unwrap().unix_seconds,
            1705761900
        );
        assert!(parse("last tuesday").is_none());
        let fields = serde_json::json!({"updated": "2020-02-02", "date": "2019-01-01"});
        assert_eq!(
            from_fields(Some(&fields), &["updated", "date"])
                .unwrap()
                .iso,
            "2020-02-02T00:00:00Z"
        );
    }

    #[test]
    fn numbers_are_unix_seconds_when_plausible() {
        assert_eq!(
            from_value(&serde_json::json!(1705276800)).unwrap().iso,
            "2024-01-15T00:00:00Z"
        );
        assert_eq!(
            from_value(&serde_json::json!(1705276800.9))
                .unwrap()
                .unix_seconds,
            1705276800
        );
        assert!(
            from_value(&serde_json::json!(1705276800000i64)).is_none(),
            "milliseconds"
        );
        assert!(from_value(&serde_json::json!(true)).is_none());
    }
}
