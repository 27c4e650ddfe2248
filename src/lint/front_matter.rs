//! The checks of a module's `.index.md` front matter (ai-cli-task layout): required fields,
//! their types and values, the status whitelist, dates, `depends_on` and the module name,
//! each finding placed at the key's line and column in the file.

use std::path::Path;
use std::sync::OnceLock;

use chrono::DateTime;

use serde_json::{Map, Value};

use super::rules::{self, Rule};
use super::{Context, Finding, ModuleFs, Summary, read};
use crate::protocol::index;

pub(super) struct IndexReport {
    pub(super) status: Option<String>,
    pub(super) summary: Summary,
}

pub(super) fn check_index(
    dir: &Path,
    name: &str,
    fs: &dyn ModuleFs,
    ctx: &Context,
    out: &mut Vec<Finding>,
) -> IndexReport {
    let path = dir.join(index::FILE_NAME);
    let mut outcome = IndexReport {
        status: None,
        summary: Summary::default(),
    };
    let Some(bytes) = read(fs, index::FILE_NAME, &path, out) else {
        return outcome;
    };
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        Err(err) => {
            out.push(Finding::new(
                &rules::INDEX_NOT_TEXT,
                &path,
                format!(
                    "not valid UTF-8 text (first bad byte at offset {})",
                    err.valid_up_to()
                ),
            ));
            return outcome;
        }
    };
    if let Some(offset) = text.find('\0') {
        let line = text[..offset].matches('\n').count() + 1;
        out.push(
            Finding::new(
                &rules::INDEX_NOT_TEXT,
                &path,
                "contains NUL bytes (binary content)",
            )
            .at(line, None),
        );
        return outcome;
    }
    let Some(parts) = index::split_front_matter(text) else {
        let opened = text.trim_start_matches('\u{feff}').starts_with("---");
        let message = if opened {
            "the front matter opened on line 1 is never closed by a --- line"
        } else {
            "does not start with a --- fenced YAML front matter block"
        };
        out.push(Finding::new(&rules::INDEX_NO_FRONT_MATTER, &path, message).at(1, Some(1)));
        return outcome;
    };
    let map = match index::parse_front_matter(text) {
        Ok(map) => map,
        Err(index::FrontMatterError::Yaml {
            line,
            column,
            message,
        }) => {
            let message = shift_lines(&message, parts.yaml_first_line - 1);
            out.push(
                Finding::new(
                    &rules::INDEX_YAML,
                    &path,
                    format!("YAML does not parse: {message}"),
                )
                .at(line, Some(column)),
            );
            return outcome;
        }
        Err(index::FrontMatterError::NotAMapping) => {
            out.push(
                Finding::new(
                    &rules::INDEX_YAML,
                    &path,
                    "front matter is not a mapping of fields (key: value lines)",
                )
                .at(parts.yaml_first_line, Some(1)),
            );
            return outcome;
        }
        Err(index::FrontMatterError::Missing) => {
            out.push(Finding::new(
                &rules::INDEX_NO_FRONT_MATTER,
                &path,
                "does not start with a --- fenced YAML front matter block",
            ));
            return outcome;
        }
    };
    let fields = Fields {
        map: &map,
        yaml: parts.yaml,
        first_line: parts.yaml_first_line,
        path: &path,
    };
    fields.check(name, ctx, &mut outcome, out);
    outcome
}

/// The parsed front matter with what is needed to locate its fields.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    yaml: &'a str,
    first_line: usize,
    path: &'a Path,
}

impl Fields<'_> {
    fn finding(&self, rule: &'static Rule, key: &str, message: String) -> Finding {
        let finding = Finding::new(rule, self.path, message);
        match locate_key(self.yaml, self.first_line, key) {
            Some((line, column)) => finding.at(line, Some(column)),
            None => finding,
        }
    }

    fn check(&self, name: &str, ctx: &Context, outcome: &mut IndexReport, out: &mut Vec<Finding>) {
        self.check_required(out);
        self.check_string_fields(out);
        let lists = self.lists(out);
        self.check_status(ctx, outcome, out);
        self.check_timestamps(out);
        self.check_branch(name, out);
        self.check_worktree(name, out);
        if let Some((_, deps)) = lists.iter().find(|(field, _)| *field == "depends_on") {
            outcome.summary.deps_at = locate_key(self.yaml, self.first_line, "depends_on");
            self.check_depends(name, deps, ctx, outcome, out);
        }
    }

    /// The fields every index has, present and not empty.
    fn check_required(&self, out: &mut Vec<Finding>) {
        for field in ["title", "status", "created", "updated"] {
            match self.map.get(field) {
                None | Some(Value::Null) => out.push(
                    Finding::new(
                        &rules::INDEX_REQUIRED_FIELD,
                        self.path,
                        format!("missing required field `{field}`"),
                    )
                    .at(self.first_line, Some(1)),
                ),
                Some(Value::String(text)) if text.trim().is_empty() => out.push(self.finding(
                    &rules::INDEX_REQUIRED_FIELD,
                    field,
                    format!("required field `{field}` is empty"),
                )),
                _ => {}
            }
        }
    }

    /// The fields that hold a string when present.
    fn check_string_fields(&self, out: &mut Vec<Finding>) {
        for field in ["title", "status", "branch", "worktree", "phase"] {
            if let Some(value) = self.map.get(field)
                && !value.is_string()
                && !value.is_null()
            {
                out.push(self.finding(
                    &rules::INDEX_FIELD_TYPE,
                    field,
                    format!("`{field}` must be a string, found {}", kind(value)),
                ));
            }
        }
    }

    /// The list fields (`tags`, `depends_on`) that are lists of strings (absent: empty); one
    /// that is not is a finding and left out.
    fn lists(&self, out: &mut Vec<Finding>) -> Vec<(&'static str, Vec<&str>)> {
        ["tags", "depends_on"]
            .into_iter()
            .filter_map(|field| {
                let items = match self.map.get(field) {
                    None | Some(Value::Null) => return Some((field, Vec::new())),
                    Some(Value::Array(items)) => items,
                    Some(other) => {
                        out.push(self.finding(
                            &rules::INDEX_FIELD_TYPE,
                            field,
                            format!("`{field}` must be a list of strings, found {}", kind(other)),
                        ));
                        return None;
                    }
                };
                if let Some((position, bad)) =
                    items.iter().enumerate().find(|(_, item)| !item.is_string())
                {
                    out.push(self.finding(
                        &rules::INDEX_FIELD_TYPE,
                        field,
                        format!(
                            "`{field}` must be a list of strings; item {} is {}",
                            position + 1,
                            kind(bad)
                        ),
                    ));
                    return None;
                }
                Some((field, items.iter().filter_map(Value::as_str).collect()))
            })
            .collect()
    }

    /// The status is one of the table's; a valid one is the module's.
    fn check_status(&self, ctx: &Context, outcome: &mut IndexReport, out: &mut Vec<Finding>) {
        let Some(Value::String(status)) = self.map.get("status") else {
            return;
        };
        let status = status.trim();
        if status.is_empty() {
            return;
        }
        if ctx.statuses.iter().any(|s| s == status) {
            outcome.status = Some(status.to_string());
        } else {
            out.push(self.finding(
                &rules::INDEX_STATUS,
                "status",
                format!(
                    "status {status:?} is not a status of table {} (allowed: {})",
                    ctx.table,
                    ctx.statuses.join(", ")
                ),
            ));
        }
    }

    /// `branch`, when a string, is the module's `task/<name>`.
    fn check_branch(&self, name: &str, out: &mut Vec<Finding>) {
        if let Some(Value::String(branch)) = self.map.get("branch") {
            let expected = format!("task/{name}");
            if branch.trim() != expected {
                out.push(self.finding(
                    &rules::INDEX_BRANCH,
                    "branch",
                    format!("`branch` is {branch:?}; the module's branch is {expected:?}"),
                ));
            }
        }
    }

    /// `worktree`, when a non-empty string, is the module's `.worktrees/task-<name>`.
    fn check_worktree(&self, name: &str, out: &mut Vec<Finding>) {
        if let Some(Value::String(worktree)) = self.map.get("worktree") {
            let expected = format!(".worktrees/task-{name}");
            let worktree_trimmed = worktree.trim();
            if !worktree_trimmed.is_empty() && worktree_trimmed.trim_end_matches('/') != expected {
                out.push(self.finding(
                    &rules::INDEX_WORKTREE,
                    "worktree",
                    format!(
                        "`worktree` is {worktree:?}; the module's worktree is {expected:?} (or \"\" for none)"
                    ),
                ));
            }
        }
    }

    fn check_timestamps(&self, out: &mut Vec<Finding>) {
        let mut times = Vec::new();
        for field in ["created", "updated"] {
            let parsed = match self.map.get(field) {
                None | Some(Value::Null) => None,
                Some(Value::String(text)) if text.trim().is_empty() => None,
                Some(Value::String(text)) => match DateTime::parse_from_rfc3339(text.trim()) {
                    Ok(time) => Some(time),
                    Err(err) => {
                        out.push(self.finding(
                            &rules::INDEX_TIMESTAMP,
                            field,
                            format!(
                                "`{field}` {text:?} is not an RFC 3339 timestamp ({err}; example: 2024-01-01T00:00:00Z)"
                            ),
                        ));
                        None
                    }
                },
                Some(other) => {
                    out.push(self.finding(
                        &rules::INDEX_TIMESTAMP,
                        field,
                        format!(
                            "`{field}` must be an RFC 3339 timestamp string, found {}",
                            kind(other)
                        ),
                    ));
                    None
                }
            };
            times.push(parsed);
        }
        if let [Some(created), Some(updated)] = times[..]
            && updated < created
        {
            out.push(self.finding(
                &rules::INDEX_TIMESTAMP,
                "updated",
                format!(
                    "`updated` ({}) is before `created` ({})",
                    updated.to_rfc3339(),
                    created.to_rfc3339()
                ),
            ));
        }
    }

    fn check_depends(
        &self,
        name: &str,
        deps: &[&str],
        ctx: &Context,
        outcome: &mut IndexReport,
        out: &mut Vec<Finding>,
    ) {
        for dep in deps {
            let entry = dep.trim();
            let entry = entry.strip_prefix("./").unwrap_or(entry);
            let module = entry.split('/').next().unwrap_or("");
            if module.is_empty() || entry.starts_with('/') || module == ".." || module == "." {
                let why = if entry.is_empty() {
                    "an empty name".to_string()
                } else {
                    format!("{dep:?}, which is outside the task root")
                };
                out.push(self.finding(
                    &rules::DEPENDS_MISSING,
                    "depends_on",
                    format!(
                        "depends_on names {why}; entries are module names relative to the task root"
                    ),
                ));
                continue;
            }
            if module == name {
                out.push(self.finding(
                    &rules::DEPENDS_SELF,
                    "depends_on",
                    format!("the module depends on itself ({dep:?})"),
                ));
                continue;
            }
            if let Some(modules) = ctx.modules
                && !modules.contains(module)
            {
                out.push(self.finding(
                    &rules::DEPENDS_MISSING,
                    "depends_on",
                    format!("depends_on names {module:?}, which is not a module of the task root"),
                ));
                continue;
            }
            if !outcome.summary.deps.iter().any(|d| d == module) {
                outcome.summary.deps.push(module.to_string());
            }
        }
    }
}

/// The YAML parser counts lines from the first line of the front matter; findings count from
/// the first line of the file. Shift every "line N" of a parser message by `offset`.
fn shift_lines(message: &str, offset: usize) -> String {
    static LINE: OnceLock<regex::Regex> = OnceLock::new();
    let pattern = LINE.get_or_init(|| regex::Regex::new(r"\bline (\d+)").expect("compiles"));
    pattern
        .replace_all(message, |caps: &regex::Captures| {
            let line: usize = caps[1].parse().unwrap_or(0);
            format!("line {}", line + offset)
        })
        .into_owned()
}

/// "a string", "a list", ... for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The line (in the file) and the column of the value of a top-level key of the front
/// matter, found by text so findings point where the editor should jump.
pub fn locate_key(yaml: &str, first_line: usize, key: &str) -> Option<(usize, usize)> {
    for (offset, line) in yaml.lines().enumerate() {
        let rest = [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
            .iter()
            .find_map(|form| line.strip_prefix(form.as_str()).map(str::to_string));
        let Some(rest) = rest else { continue };
        let after = rest.trim_start();
        let Some(value) = after.strip_prefix(':') else {
            continue;
        };
        let value_start = line.len() - value.len() + (value.len() - value.trim_start().len());
        let column = line[..value_start].chars().count() + 1;
        return Some((first_line + offset, column));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::FileState;
    use crate::lint::module::tests::{FakeModule, TARGET, ids, run};

    #[test]
    fn parser_lines_are_shifted_to_file_lines() {
        assert_eq!(
            shift_lines("bad at line 7, column 7 (defined at line 9, column 1)", 1),
            "bad at line 8, column 7 (defined at line 10, column 1)"
        );
        let module = FakeModule::default()
            .with(".index.md", "---\ntitle: x\ntitle: y\n---\n")
            .with(".target.md", TARGET);
        let (findings, _) = run("auth", &module, &[]);
        assert_eq!(findings[0].line, Some(3));
        assert!(
            findings[0].message.contains("at line 3, column 1"),
            "{}",
            findings[0].message
        );
    }

    #[test]
    fn key_locations() {
        let yaml = "title: x\n\"status\":   draft\nstatus_extra: y\n";
        assert_eq!(locate_key(yaml, 2, "status"), Some((3, 13)));
        assert_eq!(locate_key(yaml, 2, "title"), Some((2, 8)));
        assert_eq!(locate_key(yaml, 2, "tags"), None);
    }

    #[test]
    fn front_matter_problems_are_located() {
        let module = FakeModule::default()
            .with(".index.md", "---\ntitle: x\nstatus: [draft\n---\n")
            .with(".target.md", TARGET);
        let (findings, _) = run("auth", &module, &[]);
        assert_eq!(ids(&findings), vec!["index-yaml"]);
        assert_eq!(findings[0].line, Some(3));

        let module = FakeModule::default()
            .with(".index.md", "# no front matter\n")
            .with(".target.md", TARGET);
        assert_eq!(
            ids(&run("auth", &module, &[]).0),
            vec!["index-no-front-matter"]
        );

        let module = FakeModule::default()
            .state(
                ".index.md",
                FileState::Bytes(b"---\ntitle: \xff\n---\n".to_vec()),
            )
            .with(".target.md", TARGET);
        assert_eq!(ids(&run("auth", &module, &[]).0), vec!["index-not-text"]);

        let module = FakeModule::default()
            .state(".index.md", FileState::TooLarge { limit: 1024 })
            .with(".target.md", TARGET);
        let (findings, _) = run("auth", &module, &[]);
        assert_eq!(ids(&findings), vec!["index-not-text"]);
        assert!(findings[0].message.contains("1 KiB"));
    }

    #[test]
    fn field_rules() {
        let module = FakeModule::default()
            .with(
                ".index.md",
                "---\ntitle: \"\"\nstatus: done\ncreated: 2024-01-02\nupdated: 2024-01-01T00:00:00Z\ntags: backend\nbranch: feature/auth\nworktree: .worktrees/auth\ndepends_on: [auth, ghost, ../up]\n---\n",
            )
            .with(".target.md", TARGET);
        let (findings, _) = run("auth", &module, &["auth", "db"]);
        let mut got = ids(&findings);
        got.sort_unstable();
        assert_eq!(
            got,
            vec![
                "depends-missing",
                "depends-missing",
                "depends-self",
                "index-branch",
                "index-field-type",
                "index-required-field",
                "index-status",
                "index-timestamp",
                "index-worktree",
            ]
        );
        let status = findings
            .iter()
            .find(|f| f.rule.id == "index-status")
            .unwrap();
        assert_eq!((status.line, status.column), (Some(3), Some(9)));
        assert!(
            status.message.contains("allowed: draft, planning"),
            "{}",
            status.message
        );
    }

    #[test]
    fn updated_before_created_and_missing_fields() {
        let module = FakeModule::default()
            .with(
                ".index.md",
                "---\nstatus: draft\ncreated: 2024-01-02T00:00:00Z\nupdated: 2024-01-01T00:00:00+00:00\n---\n",
            )
            .with(".target.md", TARGET);
        let (findings, _) = run("auth", &module, &[]);
        assert_eq!(
            ids(&findings),
            vec!["index-required-field", "index-timestamp"]
        );
        assert!(findings[0].message.contains("`title`"));
        assert_eq!(findings[1].line, Some(4));
        assert!(findings[1].message.contains("before"));
    }

    proptest::proptest! {
        /// Whatever an index holds, the checks do not panic and every position they report
        /// is inside the file.
        #[test]
        fn any_index_text_gives_findings_inside_the_file(
            body in r#"(---\n)?((title|status|created|updated|depends_on|tags|branch|worktree|phase|x): ?("|\[|\]|[a-z0-9:.,/ -]|&a|\*a|\n|\t|é){0,12}\n){0,8}(---\n)?[^\x00]{0,20}"#,
            status in "(draft|executing|complete|review)",
        ) {
            let text = body.replacen("status:", &format!("status: {status}\nstatus_was:"), 1);
            let module = FakeModule::default().with(".index.md", &text).with(".target.md", "# T\n");
            let (findings, summary) = run("auth", &module, &["auth", "db"]);
            let lines = text.lines().count().max(1);
            for finding in &findings {
                if let Some(line) = finding.line {
                    proptest::prop_assert!(line <= lines + 1, "{:?} in {:?}", finding, text);
                }
            }
            proptest::prop_assert!(!summary.deps.iter().any(|d| d == "auth"));
        }
    }
}
