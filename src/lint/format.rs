//! How findings are printed: `text` like a compiler, `json` as one array, `github` as
//! workflow commands (annotations on the pull request), `sarif` as a SARIF 2.1.0 log for
//! code-scanning UIs. Every format is a pure function of the findings and their severities.

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_encode};
use serde::Serialize;
use serde_json::{Value, json};

use super::Finding;
use super::rules::{self, RULES, Severity};

/// A finding with the severity the policy gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rated {
    pub finding: Finding,
    pub severity: Severity,
}

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// `PATH:LINE:COL: error[RULE]: message`, one line per finding
    #[default]
    Text,
    /// One JSON array of findings
    Json,
    /// GitHub Actions workflow commands (`::error file=...::...`)
    Github,
    /// A SARIF 2.1.0 log for code scanning
    Sarif,
}

/// Write the findings in a format.
pub fn write(format: Format, reported: &[Rated], out: &mut impl Write) -> io::Result<()> {
    match format {
        Format::Text => {
            for item in reported {
                writeln!(out, "{}", text_line(item))?;
            }
            Ok(())
        }
        Format::Json => {
            let items: Vec<JsonFinding> = reported.iter().map(JsonFinding::from).collect();
            serde_json::to_writer_pretty(&mut *out, &items)?;
            out.write_all(b"\n")
        }
        Format::Github => {
            for item in reported {
                writeln!(out, "{}", github_line(item))?;
            }
            Ok(())
        }
        Format::Sarif => {
            serde_json::to_writer_pretty(&mut *out, &sarif(reported))?;
            out.write_all(b"\n")
        }
    }
}

/// A path as one printable line: lossy UTF-8, control characters escaped.
pub fn display_path(path: &Path) -> String {
    crate::output::printable(&path.to_string_lossy())
}

fn position(item: &Rated) -> String {
    match (item.finding.line, item.finding.column) {
        (Some(line), Some(column)) => format!(":{line}:{column}"),
        (Some(line), None) => format!(":{line}"),
        _ => String::new(),
    }
}

/// `PATH:LINE:COL: error[RULE]: message`.
pub fn text_line(item: &Rated) -> String {
    format!(
        "{}{}: {}[{}]: {}",
        display_path(&item.finding.path),
        position(item),
        item.severity.as_str(),
        item.finding.rule.id,
        crate::output::one_line(&item.finding.message)
    )
}

#[derive(Serialize)]
struct JsonFinding {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
    severity: Severity,
    rule: &'static str,
    message: String,
}

impl From<&Rated> for JsonFinding {
    fn from(item: &Rated) -> Self {
        JsonFinding {
            path: item.finding.path.to_string_lossy().into_owned(),
            line: item.finding.line,
            column: item.finding.column,
            severity: item.severity,
            rule: item.finding.rule.id,
            message: item.finding.message.clone(),
        }
    }
}

/// Escape workflow-command data (`%`, CR, LF) and, in properties, also `:` and `,`.
fn github_escape(text: &str, property: bool) -> String {
    let mut escaped = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '%' => escaped.push_str("%25"),
            '\r' => escaped.push_str("%0D"),
            '\n' => escaped.push_str("%0A"),
            ':' if property => escaped.push_str("%3A"),
            ',' if property => escaped.push_str("%2C"),
            _ => escaped.push(ch),
        }
    }
    escaped
}

/// `::error file=PATH,line=L,col=C,title=RULE::message`.
pub fn github_line(item: &Rated) -> String {
    let finding = &item.finding;
    let mut properties = vec![format!(
        "file={}",
        github_escape(&relative_path(&finding.path).to_string_lossy(), true)
    )];
    if let Some(line) = finding.line {
        properties.push(format!("line={line}"));
    }
    if let Some(column) = finding.column {
        properties.push(format!("col={column}"));
    }
    properties.push(format!("title={}", github_escape(finding.rule.id, true)));
    format!(
        "::{} {}::{}",
        item.severity.as_str(),
        properties.join(","),
        github_escape(&finding.message, false)
    )
}

/// The path without `.` components (`./TASK/a` is `TASK/a`).
fn relative_path(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// Characters kept as they are in a URI path: unreserved characters and `/`.
const URI_PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// A SARIF `artifactLocation`: relative paths against `%SRCROOT%`, absolute ones as
/// `file://` URIs, every other byte percent-encoded (so non-UTF-8 names survive).
pub fn artifact_location(path: &Path) -> Value {
    let path = relative_path(path);
    let encoded = percent_encode(path.as_os_str().as_bytes(), URI_PATH).to_string();
    if path.is_absolute() {
        json!({ "uri": format!("file://{encoded}") })
    } else {
        json!({ "uri": encoded, "uriBaseId": "%SRCROOT%" })
    }
}

/// The SARIF 2.1.0 log of a run.
pub fn sarif(reported: &[Rated]) -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|rule| {
            json!({
                "id": rule.id,
                "shortDescription": { "text": rule.summary },
                "fullDescription": { "text": rule.explanation },
                "help": { "text": format!("{}\n\nFix: {}", rule.explanation, rule.fix) },
                "defaultConfiguration": { "level": rule.severity.as_str() },
            })
        })
        .collect();
    let results: Vec<Value> = reported
        .iter()
        .map(|item| {
            let finding = &item.finding;
            let mut physical = json!({ "artifactLocation": artifact_location(&finding.path) });
            if let Some(line) = finding.line {
                let mut region = json!({ "startLine": line });
                if let Some(column) = finding.column {
                    region["startColumn"] = json!(column);
                }
                physical["region"] = region;
            }
            json!({
                "ruleId": finding.rule.id,
                "ruleIndex": rules::index_of(finding.rule),
                "level": item.severity.as_str(),
                "message": { "text": finding.message },
                "locations": [{ "physicalLocation": physical }],
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "autoctl",
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::ffi::OsStr;

    fn item(path: &str, line: Option<usize>, message: &str) -> Rated {
        let mut finding = Finding::new(&rules::INDEX_STATUS, path, message);
        if let Some(line) = line {
            finding = finding.at(line, Some(9));
        }
        Rated {
            finding,
            severity: Severity::Error,
        }
    }

    #[test]
    fn text_is_compiler_style() {
        assert_eq!(
            text_line(&item(
                "TASK/a/.index.md",
                Some(3),
                "status \"done\"\nis bad"
            )),
            "TASK/a/.index.md:3:9: error[index-status]: status \"done\" is bad"
        );
        assert_eq!(
            text_line(&item("TASK/a\nb", None, "m")),
            "TASK/a\\nb: error[index-status]: m"
        );
    }

    #[test]
    fn github_commands_escape_data_and_properties() {
        assert_eq!(
            github_line(&item("./TASK/a,b:c/.index.md", Some(3), "100% bad\nreally")),
            "::error file=TASK/a%2Cb%3Ac/.index.md,line=3,col=9,title=index-status::100%25 bad%0Areally"
        );
    }

    #[test]
    fn sarif_uris_are_percent_encoded_references() {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(OsStr::from_bytes(b"./TASK/a b/\xff\xe7\x94\xa8/.index.md"));
        assert_eq!(
            artifact_location(path),
            json!({"uri": "TASK/a%20b/%FF%E7%94%A8/.index.md", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact_location(Path::new("/tmp/x y")),
            json!({"uri": "file:///tmp/x%20y"})
        );
    }

    proptest! {
        #[test]
        fn one_line_per_finding_whatever_the_message(message in "\\PC*[\r\n%:,]?\\PC*", path in "[a-z\n%/ ]{1,12}") {
            let reported = [item(&path, Some(1), &message)];
            for format in [Format::Text, Format::Github] {
                let mut out = Vec::new();
                write(format, &reported, &mut out).unwrap();
                let text = String::from_utf8(out).unwrap();
                prop_assert_eq!(text.lines().count(), 1, "{:?}", text);
            }
        }
    }
}
