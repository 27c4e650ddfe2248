//! Turning the bytes of a JSON protocol document into a value, with problems located the way
//! an editor can jump to them: line and column for malformed JSON, a JSON Pointer for values
//! that break the schema.

use std::cell::RefCell;
use std::fmt;

use serde::Serialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::fsx::{self, Bounded};
use crate::schema;

/// Where in a document a problem is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Location {
    /// A JSON Pointer (`/step`), `/` for the whole document.
    Pointer { pointer: String },
    /// A position in the text (1-based).
    Position { line: usize, column: usize },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Pointer { pointer } => f.write_str(pointer),
            Location::Position { line, column } => write!(f, "{line}:{column}"),
        }
    }
}

/// One reason a document is invalid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    #[serde(flatten)]
    pub location: Location,
    pub message: String,
}

impl Problem {
    pub fn at(pointer: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            location: Location::Pointer {
                pointer: pointer.into(),
            },
            message: message.into(),
        }
    }

    pub fn whole(message: impl Into<String>) -> Problem {
        Problem::at("/", message)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Parse bytes that should hold one JSON value. An object with a key twice is refused (with the
/// pointer of the second occurrence): every protocol document is read through here.
pub fn parse_json(bytes: &[u8]) -> Result<Value, Problem> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            return Err(Problem::whole(format!(
                "not valid UTF-8 (first bad byte at offset {})",
                err.valid_up_to()
            )));
        }
    };
    if text.trim().is_empty() {
        return Err(Problem::whole("empty document"));
    }
    let path = RefCell::new(Vec::new());
    let duplicate = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = StrictValue {
        path: &path,
        duplicate: &duplicate,
    }
    .deserialize(&mut deserializer)
    .and_then(|value| deserializer.end().map(|()| value));
    parsed.map_err(|err| {
        let message = err.to_string();
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        let message = message.strip_suffix(&suffix).unwrap_or(&message);
        if let Some(pointer) = duplicate.into_inner() {
            return Problem::at(
                pointer,
                format!(
                    "{message} (line {} column {}): the document is ambiguous",
                    err.line(),
                    err.column()
                ),
            );
        }
        Problem {
            location: Location::Position {
                line: err.line(),
                column: err.column().max(1),
            },
            message: format!("invalid JSON: {message}"),
        }
    })
}

/// One step of the path from the root to the value being read.
enum Segment {
    Key(String),
    Index(usize),
}

/// A JSON Pointer (RFC 6901) for a path.
fn pointer(path: &[Segment]) -> String {
    if path.is_empty() {
        return "/".to_string();
    }
    let mut out = String::new();
    for segment in path {
        out.push('/');
        match segment {
            Segment::Key(key) => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
            Segment::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

/// Reads a [`Value`] like serde_json does, but refuses an object with the same key twice:
/// serde_json keeps the last occurrence silently, so `{"steps":[…],"steps":[]}` would show a
/// guard one document and a reader another. `duplicate` receives the pointer of the repeated
/// member, since the error type can only carry a message and a position.
struct StrictValue<'a> {
    path: &'a RefCell<Vec<Segment>>,
    duplicate: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            self.path.borrow_mut().push(Segment::Index(items.len()));
            let item = seq.next_element_seed(StrictValue {
                path: self.path,
                duplicate: self.duplicate,
            })?;
            self.path.borrow_mut().pop();
            match item {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let mut path = self.path.borrow_mut();
                let message = format!("duplicate key {key:?}");
                path.push(Segment::Key(key));
                *self.duplicate.borrow_mut() = Some(pointer(&path));
                return Err(de::Error::custom(message));
            }
            self.path.borrow_mut().push(Segment::Key(key));
            let value = map.next_value_seed(StrictValue {
                path: self.path,
                duplicate: self.duplicate,
            })?;
            let Some(Segment::Key(key)) = self.path.borrow_mut().pop() else {
                unreachable!("the key pushed above")
            };
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Bytes that are the content of a document, or the reason they are not.
pub fn bounded_bytes(bounded: Bounded) -> Result<Vec<u8>, Problem> {
    match bounded {
        Bounded::Complete(bytes) => Ok(bytes),
        Bounded::TooLarge { limit } => Err(Problem::whole(format!(
            "document is larger than the {} limit",
            fsx::human_size(limit)
        ))),
    }
}

/// Deserialize an already schema-checked document into its Rust type, straight from the text
/// so duplicate keys are caught; errors carry their position.
pub fn parse_typed<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Vec<Problem>> {
    serde_json::from_slice(bytes).map_err(|err| {
        let message = err.to_string();
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        vec![Problem {
            location: Location::Position {
                line: err.line(),
                column: err.column().max(1),
            },
            message: message
                .strip_suffix(&suffix)
                .unwrap_or(&message)
                .to_string(),
        }]
    })
}

/// Deserialize a document already read by [`parse_json`] (which refused duplicate keys) into
/// its Rust type, without parsing the text a second time.
pub fn typed_from_value<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, Vec<Problem>> {
    T::deserialize(value).map_err(|err| vec![Problem::whole(err.to_string())])
}

/// Parse and validate a JSON document against an embedded schema.
pub fn parse_with_schema(bytes: &[u8], schema_name: &str) -> Result<Value, Vec<Problem>> {
    let value = parse_json(bytes).map_err(|problem| vec![problem])?;
    check_schema(&value, schema_name)?;
    Ok(value)
}

/// [`parse_with_schema`] for a document with a hand-written proof of validity (a signal's, a
/// stop file's): what the proof accepts never compiles the schema library's validator, the
/// rest goes to the library, which also words the problems.
pub fn parse_with_quick_schema(
    bytes: &[u8],
    schema_name: &str,
    proves_valid: fn(&Value) -> bool,
) -> Result<Value, Vec<Problem>> {
    let value = parse_json(bytes).map_err(|problem| vec![problem])?;
    if !proves_valid(&value) {
        check_schema(&value, schema_name)?;
    }
    Ok(value)
}

/// Validate an already parsed document against an embedded schema.
pub fn check_schema(value: &Value, schema_name: &str) -> Result<(), Vec<Problem>> {
    let violations = schema::violations(schema_name, value);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(violations
            .into_iter()
            .map(|violation| Problem::at(violation.pointer, violation.message))
            .collect())
    }
}

/// Replace the schema library's terse enum messages ("is not one of "plan", "check" or 3 other
/// candidates") with the whole whitelist, for the fields whose allowed values people need to see.
pub fn explain_whitelists(
    problems: Vec<Problem>,
    doc: &Value,
    whitelists: &[(&str, &[&str])],
) -> Vec<Problem> {
    problems
        .into_iter()
        .map(|problem| {
            let Location::Pointer { pointer } = &problem.location else {
                return problem;
            };
            let Some((_, allowed)) = whitelists.iter().find(|(p, _)| p == pointer) else {
                return problem;
            };
            let Some(value) = doc.pointer(pointer) else {
                return problem;
            };
            let shown: Vec<String> = allowed
                .iter()
                .map(|a| {
                    if a.is_empty() {
                        "\"\"".to_string()
                    } else {
                        a.to_string()
                    }
                })
                .collect();
            Problem::at(
                pointer.clone(),
                format!("{value} is not allowed (allowed: {})", shown.join(", ")),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_json_has_a_position_and_no_duplicated_suffix() {
        let problem = parse_json(b"{\n  \"a\": 1,\n}").unwrap_err();
        assert_eq!(problem.location, Location::Position { line: 3, column: 1 });
        assert!(problem.message.starts_with("invalid JSON: "));
        assert!(!problem.message.contains("at line"));
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth_with_their_pointer() {
        let top = parse_json(br#"{"steps":["git push -f origin main"],"steps":[]}"#).unwrap_err();
        assert_eq!(top.location.to_string(), "/steps");
        assert!(
            top.message
                .starts_with("duplicate key \"steps\" (line 1 column "),
            "{top}"
        );
        let deep = parse_json(br#"{"a":[{"x":1},{"b/c":{"k":1,"k":2}}]}"#).unwrap_err();
        assert_eq!(deep.location.to_string(), "/a/1/b~1c/k");
        // The same key in sibling objects is not a duplicate, and values come through intact.
        let value = parse_json(br#"{"a":{"k":1},"b":{"k":[1.5,-2,null,true,"s"]}}"#).unwrap();
        assert_eq!(
            value["b"]["k"],
            serde_json::json!([1.5, -2, null, true, "s"])
        );
        // Trailing data is still refused.
        assert!(parse_json(b"{} {}").is_err());
    }

    #[test]
    fn empty_and_non_utf8_are_named() {
        assert_eq!(parse_json(b"  \n").unwrap_err().message, "empty document");
        assert!(
            parse_json(b"{\"a\":\"\xff\"}")
                .unwrap_err()
                .message
                .contains("UTF-8")
        );
    }
}
