//! `.index.md`: a task module's index, whose YAML front matter carries its lifecycle status
//! (title, status, created, updated, depends_on, tags, branch, worktree, phase).

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use crate::fsx::{self, Bounded};

/// The file name inside a task module.
pub const FILE_NAME: &str = ".index.md";

/// Front matter is small; a bigger index is read only up to this bound.
pub const INDEX_LIMIT: u64 = fsx::DOCUMENT_LIMIT;

/// The two parts of a Markdown file with front matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontMatterParts<'a> {
    /// The YAML between the `---` fences.
    pub yaml: &'a str,
    /// Everything after the closing fence.
    pub body: &'a str,
    /// 1-based line number of the first YAML line in the file.
    pub yaml_first_line: usize,
}

/// Split `---\nYAML\n---\nbody`. `None` when the text does not start with a front-matter fence
/// or the fence is never closed.
pub fn split_front_matter(text: &str) -> Option<FrontMatterParts<'_>> {
    let text_after_bom = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text_after_bom
        .strip_prefix("---\n")
        .or_else(|| text_after_bom.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let trimmed = line.trim_end_matches(['\n', '\r']);
        if trimmed == "---" || trimmed == "..." {
            return Some(FrontMatterParts {
                yaml: &rest[..offset],
                body: &rest[offset + line.len()..],
                yaml_first_line: 2,
            });
        }
        offset += line.len();
    }
    None
}

/// Why front matter could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontMatterError {
    /// The file does not start with a `---` fenced block.
    Missing,
    /// The YAML does not parse (position in the file, 1-based, when known).
    Yaml {
        line: usize,
        column: usize,
        message: String,
    },
    /// It parses but is not a mapping.
    NotAMapping,
}

impl std::fmt::Display for FrontMatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrontMatterError::Missing => f.write_str("no YAML front matter (--- fenced block)"),
            FrontMatterError::Yaml {
                line,
                column,
                message,
            } => write!(f, "{line}:{column}: YAML does not parse: {message}"),
            FrontMatterError::NotAMapping => f.write_str("front matter is not a YAML mapping"),
        }
    }
}

/// Parse the front matter of an `.index.md` text into a JSON-shaped mapping (YAML scalars such
/// as dates stay strings). serde-saphyr's default budget bounds aliases and nesting, so a YAML
/// bomb is an error, not an allocation.
pub fn parse_front_matter(text: &str) -> Result<Map<String, Value>, FrontMatterError> {
    let parts = split_front_matter(text).ok_or(FrontMatterError::Missing)?;
    if parts.yaml.trim().is_empty() {
        return Ok(Map::new());
    }
    let value: Value = serde_saphyr::from_str(parts.yaml).map_err(|err| {
        let (line, column) = err
            .location()
            .map(|loc| (loc.line() as usize, loc.column() as usize))
            .unwrap_or((0, 0));
        let message = err.without_snippet().to_string();
        FrontMatterError::Yaml {
            line: line + parts.yaml_first_line - 1,
            column: column.max(1),
            message: crate::output::one_line(&message),
        }
    })?;
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        _ => Err(FrontMatterError::NotAMapping),
    }
}

/// The fields routing needs from a module's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifecycle {
    pub status: String,
    pub phase: String,
}

/// Read `DIR/.index.md` and return its status and phase.
pub fn read_lifecycle(dir: &Path) -> Result<Lifecycle> {
    let path = dir.join(FILE_NAME);
    let bytes = match fsx::read_bounded(&path, INDEX_LIMIT)
        .with_context(|| format!("cannot read {}", path.display()))?
    {
        Bounded::Complete(bytes) => bytes,
        Bounded::TooLarge { limit } => bail!(
            "{}: larger than the {} limit",
            path.display(),
            fsx::human_size(limit)
        ),
    };
    let text = std::str::from_utf8(&bytes)
        .with_context(|| format!("{}: not valid UTF-8", path.display()))?;
    let map =
        parse_front_matter(text).map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))?;
    let field = |name: &str| match map.get(name) {
        Some(Value::String(text)) => Some(text.trim().to_string()),
        _ => None,
    };
    let status = field("status")
        .filter(|status| !status.is_empty())
        .with_context(|| format!("{}: front matter has no status", path.display()))?;
    Ok(Lifecycle {
        status,
        phase: field("phase").unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_front_matter() {
        let parts = split_front_matter("---\nstatus: draft\n---\n# Title\n").unwrap();
        assert_eq!(parts.yaml, "status: draft\n");
        assert_eq!(parts.body, "# Title\n");
        assert!(split_front_matter("# no front matter\n").is_none());
        assert!(split_front_matter("---\nstatus: draft\n").is_none());
    }

    #[test]
    fn parses_fields_and_reports_positions() {
        let map = parse_front_matter("---\ntitle: X\nstatus: draft\ntags: [a, b]\n---\n").unwrap();
        assert_eq!(map["status"], "draft");
        assert_eq!(map["tags"], serde_json::json!(["a", "b"]));
        match parse_front_matter("---\ntitle: X\nstatus: [unclosed\n---\n") {
            Err(FrontMatterError::Yaml { line, .. }) => assert!(line >= 3, "line {line}"),
            other => panic!("expected a YAML error, got {other:?}"),
        }
    }

    #[test]
    fn yaml_bomb_is_an_error_not_an_allocation() {
        let mut yaml = String::from(
            "---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (name, prev) in [
            ("b", "a"),
            ("c", "b"),
            ("d", "c"),
            ("e", "d"),
            ("f", "e"),
            ("g", "f"),
            ("h", "g"),
            ("i", "h"),
        ] {
            yaml.push_str(&format!("{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
        }
        yaml.push_str("---\n");
        assert!(parse_front_matter(&yaml).is_err());
    }
}
