//! Hand-written checks that prove an `.auto-signal` valid without compiling a JSON Schema
//! validator (and the pieces `.auto-stop`'s proof, [`crate::protocol::stop::proves_valid`],
//! shares). The reader hands the proof to [`crate::protocol::document`], so the schema module
//! knows no document.
//!
//! Compiling the library's validator costs about 4 million instructions (most of it checking
//! the schema against the draft 2020-12 meta-schema), three times everything else a
//! `signal validate` does; a loop step reads a valid signal almost every time. These checks
//! only ever say "valid": they accept a strict subset of what the schema accepts (timestamps
//! as autoctl and the loops write them, no leap second, no floats), and anything they do not
//! accept goes to the library, which then also words the problems. The unit tests prove the
//! subset against the library on generated documents.
//!
//! [`signal_text`] goes one step further for the most frequent document of all: it reads an
//! `.auto-signal` straight from its bytes into borrowed fields, without building a `Value` or
//! allocating, which is what `signal validate` of 10,000 files spends its time on besides the
//! reads themselves. It too only ever says "valid"; a document it does not decide (escaped
//! strings, a duplicate or unknown key, anything invalid) takes the full path, which words
//! the problems.

use std::fmt;

use serde::Deserializer as _;
use serde::de::{self, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::{CHECKPOINTS, MAX_ITERATION, NEXTS, STEPS, Signal, is_known_result};

/// Every key of `object` is one of `allowed` and every one of `required` is present.
pub(crate) fn keys_are(object: &Map<String, Value>, allowed: &[&str], required: &[&str]) -> bool {
    object.keys().all(|key| allowed.contains(&key.as_str()))
        && required.iter().all(|key| object.contains_key(*key))
}

pub(crate) fn string_in(value: Option<&Value>, allowed: &[&str]) -> bool {
    value
        .and_then(Value::as_str)
        .is_some_and(|s| allowed.contains(&s))
}

/// Whether the quick check proves `doc` valid by `schemas/auto-signal.schema.json`. `false`
/// says nothing: the document is outside what the check decides.
pub fn proves_valid(doc: &Value) -> bool {
    let Some(object) = doc.as_object() else {
        return false;
    };
    keys_are(
        object,
        &[
            "step",
            "result",
            "next",
            "checkpoint",
            "iteration",
            "timestamp",
        ],
        &["step", "result", "next", "timestamp"],
    ) && SignalText::from_object(object).is_some_and(|text| text.fits_schema())
}

/// The fields of an `.auto-signal` read in place from its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalText<'a> {
    pub step: &'a str,
    pub result: &'a str,
    pub next: &'a str,
    pub checkpoint: Option<&'a str>,
    pub iteration: Option<u64>,
    pub timestamp: &'a str,
}

impl<'a> SignalText<'a> {
    /// The fields of a parsed document, when each present one has the schema's type (a string;
    /// a whole number for `iteration`).
    fn from_object(object: &'a Map<String, Value>) -> Option<SignalText<'a>> {
        let text = |key: &str| object.get(key)?.as_str();
        Some(SignalText {
            step: text("step")?,
            result: text("result")?,
            next: text("next")?,
            checkpoint: match object.get("checkpoint") {
                None => None,
                Some(value) => Some(value.as_str()?),
            },
            iteration: match object.get("iteration") {
                None => None,
                Some(value) => Some(value.as_u64()?),
            },
            timestamp: text("timestamp")?,
        })
    }

    /// What the schema asks of the values, as a strict subset (see [`is_date_time_str`]): the
    /// one list of checks both quick paths use.
    fn fits_schema(&self) -> bool {
        STEPS.contains(&self.step)
            && is_known_result(self.result)
            && NEXTS.contains(&self.next)
            && self.checkpoint.is_none_or(|c| CHECKPOINTS.contains(&c))
            && self.iteration.is_none_or(|n| n <= MAX_ITERATION)
            && is_date_time_str(self.timestamp)
    }

    pub fn to_signal(&self) -> Signal {
        Signal {
            step: self.step.to_string(),
            result: self.result.to_string(),
            next: self.next.to_string(),
            checkpoint: self.checkpoint.map(str::to_string),
            iteration: self.iteration,
            timestamp: self.timestamp.to_string(),
        }
    }
}

/// The `.auto-signal` in `bytes`, when this check proves it valid: against the schema, and
/// against the checks `signal::parse` adds (an RFC 3339 timestamp chrono reads, a whole-number
/// iteration, no key twice). `None` says nothing about the document.
pub fn signal_text(bytes: &[u8]) -> Option<SignalText<'_>> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let text = deserializer.deserialize_map(SignalTextVisitor).ok()?;
    deserializer.end().ok()?;
    let valid = text.fits_schema() && chrono::DateTime::parse_from_rfc3339(text.timestamp).is_ok();
    valid.then_some(text)
}

/// Reads the members of one object into [`SignalText`]; refuses (as "not decided here") every
/// key it does not know, a key seen twice, a string with escapes (it cannot be borrowed) and
/// any value of another type, `null` included.
struct SignalTextVisitor;

impl<'de> Visitor<'de> for SignalTextVisitor {
    type Value = SignalText<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an .auto-signal object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        fn once<T, E: de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
            match slot.replace(value) {
                None => Ok(()),
                Some(_) => Err(E::custom("a key twice")),
            }
        }
        let (mut step, mut result, mut next, mut timestamp) = (None, None, None, None);
        let (mut checkpoint, mut iteration) = (None, None);
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "step" => once(&mut step, map.next_value::<&'de str>()?)?,
                "result" => once(&mut result, map.next_value::<&'de str>()?)?,
                "next" => once(&mut next, map.next_value::<&'de str>()?)?,
                "checkpoint" => once(&mut checkpoint, map.next_value::<&'de str>()?)?,
                "iteration" => once(&mut iteration, map.next_value::<u64>()?)?,
                "timestamp" => once(&mut timestamp, map.next_value::<&'de str>()?)?,
                _ => return Err(de::Error::custom("a key the quick check does not know")),
            }
        }
        let missing = || de::Error::custom("a required key is missing");
        Ok(SignalText {
            step: step.ok_or_else(missing)?,
            result: result.ok_or_else(missing)?,
            next: next.ok_or_else(missing)?,
            checkpoint,
            iteration,
            timestamp: timestamp.ok_or_else(missing)?,
        })
    }
}

/// A string in the RFC 3339 form `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`, upper-case
/// `T` and `Z`, with a real calendar date and seconds below 60.
pub(crate) fn is_date_time(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(is_date_time_str)
}

/// [`is_date_time`] of a string.
fn is_date_time_str(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(range)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        digits(0..4),
        digits(5..7),
        digits(8..10),
        digits(11..13),
        digits(14..16),
        digits(17..19),
    ) else {
        return false;
    };
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || minute > 59 || second > 59 {
        return false;
    }
    let mut rest = &b[19..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = fraction.iter().take_while(|d| d.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest {
        b"Z" => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit())
                && (h1 - b'0') * 10 + (h2 - b'0') <= 23
                && (m1 - b'0') * 10 + (m2 - b'0') <= 59
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::protocol::stop::REASONS;

    /// The library's verdict.
    fn library_valid(schema: &str, doc: &Value) -> bool {
        crate::schema::violations(schema, doc).is_empty()
    }

    /// The quick proof of the named schema, as each document's reader hands it in.
    fn proves_valid(schema: &str, doc: &Value) -> bool {
        match schema {
            "auto-signal" => super::proves_valid(doc),
            "auto-stop" => crate::protocol::stop::proves_valid(doc),
            _ => false,
        }
    }

    fn check(schema: &str, doc: &Value) {
        if proves_valid(schema, doc) {
            assert!(
                library_valid(schema, doc),
                "the quick check accepts what {schema} refuses: {doc}"
            );
        }
    }

    #[test]
    fn what_autoctl_and_the_loops_write_is_proved_valid_without_the_library() {
        for doc in [
            json!({"step":"check","result":"PASS","next":"exec","checkpoint":"","iteration":3,"timestamp":"2026-11-25T10:00:00Z"}),
            json!({"step":"exec","result":"(step-12)","next":"check","timestamp":"2024-02-29T23:59:59.123+05:30"}),
            json!({"step":"merge","result":"conflict","next":"merge","checkpoint":"post-exec","iteration":9007199254740991_u64,"timestamp":"2026-01-01T00:00:00-08:00"}),
        ] {
            assert!(proves_valid("auto-signal", &doc), "{doc}");
            assert!(library_valid("auto-signal", &doc), "{doc}");
        }
        for doc in [
            json!({"reason":"user_stop","timestamp":"2026-11-25T10:00:00Z"}),
            json!({"reason":"stall_limit","timestamp":"2026-11-25T10:00:00Z","message":"é".repeat(4096)}),
        ] {
            assert!(proves_valid("auto-stop", &doc), "{doc}");
            assert!(library_valid("auto-stop", &doc), "{doc}");
        }
    }

    #[test]
    fn what_autoctl_and_the_loops_write_is_read_in_place() {
        let doc = json!({"step":"check","result":"PASS","next":"exec","checkpoint":"","iteration":3,"timestamp":"2026-11-25T10:00:00Z"});
        for text in [
            serde_json::to_string(&doc).unwrap(),
            serde_json::to_string_pretty(&doc).unwrap(),
            r#"{"step":"exec","result":"(step-12)","next":"check","timestamp":"2024-02-29T23:59:59.123+05:30"}"#.to_string(),
        ] {
            let read = signal_text(text.as_bytes()).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                Ok(read.to_signal()),
                crate::protocol::signal::parse_in_full(text.as_bytes())
            );
        }
        let read = signal_text(br#"{"step":"check","result":"PASS","next":"exec","checkpoint":"","iteration":3,"timestamp":"2026-11-25T10:00:00Z"}"#).unwrap();
        assert_eq!(
            (read.step, read.checkpoint, read.iteration),
            ("check", Some(""), Some(3))
        );
    }

    #[test]
    fn edges_the_in_place_reading_leaves_to_the_full_parse() {
        let valid =
            r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z"}"#;
        assert!(signal_text(valid.as_bytes()).is_some());
        for text in [
            // Valid, but not decided here: an escape, and a key twice (the full parse refuses).
            r#"{"step":"ch\u0065ck","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z"}"#,
            r#"{"step":"check","step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z"}"#,
            r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z","checkpoint":null}"#,
            r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z","iteration":3.0}"#,
            r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z","iteration":-1}"#,
            r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z","mood":"great"}"#,
            r#"{"step":"exec","result":"(step-N)","next":"check","timestamp":"2026-11-25T10:00:00Z"}"#,
            r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00"}"#,
            r#"{"step":"check","result":"PASS","next":"exec"}"#,
            r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z"} x"#,
            r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z""#,
            r#"[]"#,
            "",
        ] {
            assert_eq!(signal_text(text.as_bytes()), None, "{text}");
        }
        // What the schema refuses, both paths refuse (before this check, both took the
        // placeholder `(step-N)` for a result).
        let placeholder = br#"{"step":"exec","result":"(step-N)","next":"check","timestamp":"2026-11-25T10:00:00Z"}"#;
        assert!(crate::protocol::signal::parse_in_full(placeholder).is_err());
        assert!(crate::protocol::signal::parse(placeholder).is_err());
        // Invalid UTF-8 in a value of an otherwise valid document.
        let mut bytes = valid.as_bytes().to_vec();
        let at = valid.find("PASS").expect("the result");
        bytes[at + 1] = 0xff;
        assert!(signal_text(&bytes).is_none());
        assert!(crate::protocol::signal::parse_in_full(&bytes).is_err());
    }

    #[test]
    fn edges_the_quick_check_leaves_to_the_library() {
        let signal = |field: &str, value: Value| {
            let mut doc = json!({"step":"check","result":"PASS","next":"exec","timestamp":"2026-11-25T10:00:00Z"});
            doc[field] = value;
            doc
        };
        for doc in [
            signal("iteration", json!(3.0)),
            signal("iteration", json!(9007199254740992_u64)),
            signal("iteration", json!(-1)),
            signal("timestamp", json!("2026-11-25t10:00:00z")),
            signal("timestamp", json!("2026-12-31T23:59:60Z")),
            signal("timestamp", json!("2025-02-29T10:00:00Z")),
            signal("timestamp", json!("2026-11-25T10:00:00")),
            signal("timestamp", json!("2026-11-25T10:00:00.Z")),
            signal("result", json!("(step-01)")),
            // The whitelist's name for the (step-<n>) results is not a result itself.
            signal("result", json!("(step-N)")),
            signal("result", json!("(step-1234567890)")),
            signal("checkpoint", Value::Null),
            signal("mood", json!("great")),
            json!({"step":"check"}),
            json!([]),
        ] {
            assert!(!proves_valid("auto-signal", &doc), "{doc}");
        }
        let long = json!({"reason":"user_stop","timestamp":"2026-11-25T10:00:00Z","message":"a".repeat(4097)});
        assert!(!proves_valid("auto-stop", &long));
        assert!(!library_valid("auto-stop", &long));
        assert!(!proves_valid("auto-state", &json!({})));
    }

    fn word() -> impl Strategy<Value = Value> {
        prop_oneof![
            prop::sample::select(
                [STEPS, NEXTS, CHECKPOINTS, REASONS]
                    .concat()
                    .into_iter()
                    .chain([
                        "PASS",
                        "(done)",
                        "(step-0)",
                        "(step-7)",
                        "(step-N)",
                        "(step-007)",
                        "(step-)",
                        "Plan",
                        "pass",
                        " plan",
                    ])
                    .collect::<Vec<_>>()
            )
            .prop_map(Value::from),
            "[a-z()_ -]{0,12}".prop_map(Value::from),
        ]
    }

    fn timestamp() -> impl Strategy<Value = Value> {
        (
            (0u32..10000, 0u32..14, 0u32..33),
            (0u32..26, 0u32..62, 0u32..62),
            prop::sample::select(vec!["", ".5", ".123456789", "."]),
            prop::sample::select(vec![
                "Z", "z", "+00:00", "-08:00", "+23:59", "+24:00", "+05:60", "", "+0530",
            ]),
            prop::sample::select(vec!["T", "t", " "]),
        )
            .prop_map(|((y, mo, d), (h, mi, s), fraction, zone, sep)| {
                Value::from(format!(
                    "{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{fraction}{zone}"
                ))
            })
    }

    fn anything() -> impl Strategy<Value = Value> {
        prop_oneof![
            word(),
            timestamp(),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (0u64..20).prop_map(|n| Value::from(n as f64)),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            Just(json!([])),
            Just(json!({})),
            ".{0,5000}".prop_map(Value::from),
        ]
    }

    /// A value for one field: mostly one that fits (`fitting`), sometimes anything at all.
    fn field(
        fitting: impl Strategy<Value = Value> + 'static,
    ) -> impl Strategy<Value = Option<Value>> {
        prop::option::weighted(0.85, prop_oneof![6 => fitting, 1 => anything()])
    }

    fn one_of(values: &'static [&'static str]) -> impl Strategy<Value = Value> {
        prop::sample::select(values).prop_map(Value::from)
    }

    /// A document with the schema's keys each present or not (`fields`), with a fitting or
    /// random value, and now and then a stranger key.
    fn document(
        fields: Vec<(&'static str, BoxedStrategy<Option<Value>>)>,
    ) -> impl Strategy<Value = Value> {
        let stranger = prop::option::weighted(
            0.1,
            (prop::sample::select(vec!["mood", "Step", ""]), anything()),
        );
        (fields, stranger).prop_map(|(values, stranger)| {
            let mut object = Map::new();
            for (key, value) in values {
                if let Some(value) = value {
                    object.insert(key.to_string(), value);
                }
            }
            if let Some((key, value)) = stranger {
                object.insert(key.to_string(), value);
            }
            Value::Object(object)
        })
    }

    fn signal_document() -> impl Strategy<Value = Value> {
        let iteration = prop_oneof![
            (0u64..1000).prop_map(Value::from),
            prop::sample::select(vec![(1u64 << 53) - 1, 1 << 53, u64::MAX]).prop_map(Value::from),
            (-5i64..0).prop_map(Value::from),
        ];
        document(vec![
            ("step", field(one_of(STEPS)).boxed()),
            (
                "result",
                field(prop_oneof![
                    word(),
                    "\\(step-[0-9]{1,11}\\)".prop_map(Value::from)
                ])
                .boxed(),
            ),
            ("next", field(one_of(NEXTS)).boxed()),
            ("checkpoint", field(one_of(CHECKPOINTS)).boxed()),
            ("iteration", field(iteration).boxed()),
            ("timestamp", field(timestamp()).boxed()),
        ])
    }

    fn stop_document() -> impl Strategy<Value = Value> {
        document(vec![
            ("reason", field(one_of(REASONS)).boxed()),
            ("timestamp", field(timestamp()).boxed()),
            ("message", field(".{0,5000}".prop_map(Value::from)).boxed()),
        ])
    }

    /// The text of a generated signal document, written in one of the ways a file can hold
    /// it: compact, pretty, with a member twice, with an escape, cut short, or followed by
    /// more.
    fn signal_bytes() -> impl Strategy<Value = Vec<u8>> {
        (signal_document(), 0..6usize).prop_map(|(doc, way)| {
            let compact = serde_json::to_string(&doc).expect("a Value serializes");
            match way {
                0 => compact,
                1 => serde_json::to_string_pretty(&doc).expect("a Value serializes"),
                2 => format!("{{\"step\":\"plan\",{}", &compact[1..]),
                3 => compact.replacen('e', "\\u0065", 1),
                4 => compact[..compact.len() - 1].to_string(),
                _ => format!("{compact} {{}}"),
            }
            .into_bytes()
        })
    }

    /// A signal as autoctl and the loops write it: whitelisted values, a whole-number
    /// iteration, an RFC 3339 UTC timestamp as chrono formats it.
    fn written_signal() -> impl Strategy<Value = Value> {
        (
            (
                one_of(STEPS),
                prop_oneof![
                    prop::sample::select(
                        crate::protocol::signal::RESULTS
                            .iter()
                            .copied()
                            .filter(|r| *r != crate::protocol::signal::STEP_N)
                            .collect::<Vec<_>>()
                    )
                    .prop_map(Value::from),
                    (0u32..1_000_000_000).prop_map(|n| Value::from(format!("(step-{n})"))),
                ],
                one_of(NEXTS),
            ),
            prop::option::of(one_of(CHECKPOINTS)),
            prop::option::of(0..=MAX_ITERATION),
            (0i64..4_102_444_800, 0u32..1_000_000_000, any::<bool>()),
        )
            .prop_map(
                |((step, result, next), checkpoint, iteration, (secs, nanos, millis))| {
                    let at = chrono::DateTime::from_timestamp(secs, nanos).expect("in range");
                    let precision = if millis {
                        chrono::SecondsFormat::Millis
                    } else {
                        chrono::SecondsFormat::Secs
                    };
                    let mut doc = json!({"step": step, "result": result, "next": next,
                    "timestamp": at.to_rfc3339_opts(precision, true)});
                    if let Some(checkpoint) = checkpoint {
                        doc["checkpoint"] = checkpoint;
                    }
                    if let Some(iteration) = iteration {
                        doc["iteration"] = Value::from(iteration);
                    }
                    doc
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        #[test]
        fn a_signal_as_written_is_read_in_place(doc in written_signal(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&doc)
            } else {
                serde_json::to_string(&doc)
            }
            .expect("a Value serializes");
            let read = signal_text(text.as_bytes());
            prop_assert!(read.is_some(), "{}", text);
            prop_assert_eq!(
                Ok(read.expect("checked").to_signal()),
                crate::protocol::signal::parse_in_full(text.as_bytes())
            );
        }

        #[test]
        fn reading_a_signal_in_place_never_accepts_what_the_full_parse_refuses(bytes in signal_bytes()) {
            if let Some(read) = signal_text(&bytes) {
                prop_assert_eq!(
                    Ok(read.to_signal()),
                    crate::protocol::signal::parse_in_full(&bytes),
                    "{}", String::from_utf8_lossy(&bytes)
                );
            }
        }

        #[test]
        fn the_quick_signal_check_never_accepts_what_the_schema_refuses(doc in signal_document()) {
            check("auto-signal", &doc);
        }

        #[test]
        fn the_quick_stop_check_never_accepts_what_the_schema_refuses(doc in stop_document()) {
            check("auto-stop", &doc);
        }

        #[test]
        fn the_quick_timestamp_check_never_accepts_what_the_schema_refuses(ts in timestamp()) {
            let doc = json!({"reason": "timeout", "timestamp": ts});
            check("auto-stop", &doc);
        }
    }
}
