//! The root `.index.md` of a task root: init's module listing, one
//! `- [<module>](./<module>/.index.md) — <title>` line per module. A module counts as listed
//! when any link in the file points at `<module>/.index.md` or `<module>/` (relative,
//! percent-encoded or not), so hand-edited listings keep working.

use std::collections::BTreeSet;
use std::path::Path;

use super::module::FileState;
use super::rules;
use super::{Finding, ModuleNames};
use crate::fsx;

/// A module named by the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    /// 1-based line and column of the link target.
    pub line: usize,
    pub column: usize,
}

/// The modules a root listing links to, in order of appearance.
pub fn listed(text: &str) -> Vec<Listed> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(open) = rest.find("](") {
            let target_start = line.len() - rest.len() + open + 2;
            let after = &line[target_start..];
            let Some(close) = after.find(')') else { break };
            if let Some(name) = module_of(&after[..close]) {
                found.push(Listed {
                    name,
                    line: number + 1,
                    column: line[..target_start].chars().count() + 1,
                });
            }
            rest = &after[close..];
        }
    }
    found
}

fn module_of(target: &str) -> Option<String> {
    let target = target.trim().trim_start_matches('<');
    // A link title ("...") follows the destination after a space.
    let target = target.split_whitespace().next()?.trim_end_matches('>');
    if target.contains("://") || target.starts_with('#') || target.starts_with('/') {
        return None;
    }
    let decoded = percent_encoding::percent_decode_str(target).decode_utf8_lossy();
    let path = decoded.strip_prefix("./").unwrap_or(&decoded);
    let module = path
        .strip_suffix("/.index.md")
        .or_else(|| path.strip_suffix('/'))?;
    (!module.is_empty() && !module.contains('/') && module != "." && module != "..")
        .then(|| module.to_string())
}

/// Check a root listing against the module directories of the root.
pub fn check(root: &Path, state: FileState, modules: &ModuleNames, out: &mut Vec<Finding>) {
    let path = root.join(".index.md");
    let bytes = match state {
        FileState::Missing => {
            if !modules.is_empty() {
                out.push(Finding::new(
                    &rules::ROOT_INDEX_MISSING,
                    root,
                    format!(
                        "the task root has no .index.md listing its {} module{}",
                        modules.len(),
                        if modules.len() == 1 { "" } else { "s" }
                    ),
                ));
            }
            return;
        }
        FileState::Failed(why) => {
            out.push(Finding::new(
                &rules::UNREADABLE,
                path,
                format!("cannot read: {why}"),
            ));
            return;
        }
        FileState::TooLarge { limit } => {
            out.push(Finding::new(
                &rules::INDEX_NOT_TEXT,
                path,
                format!(
                    "larger than the {} read limit; not read",
                    fsx::human_size(limit)
                ),
            ));
            return;
        }
        FileState::Bytes(bytes) => bytes,
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        out.push(Finding::new(
            &rules::INDEX_NOT_TEXT,
            path,
            "not valid UTF-8 text",
        ));
        return;
    };
    let entries = listed(text);
    let mut seen = BTreeSet::new();
    for entry in &entries {
        if !modules.contains(&entry.name) {
            out.push(
                Finding::new(
                    &rules::ROOT_INDEX_STALE,
                    &path,
                    format!(
                        "lists {:?}, which is not a module directory of the task root",
                        entry.name
                    ),
                )
                .at(entry.line, Some(entry.column)),
            );
        }
        seen.insert(entry.name.as_str());
    }
    for module in modules.iter() {
        if !seen.contains(module) {
            out.push(Finding::new(
                &rules::ROOT_INDEX_UNLISTED,
                &path,
                format!("module {module:?} is not listed (add '- [{module}](./{module}/.index.md) — <title>')"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_init_listings_and_hand_edits() {
        let text = "# TASK\n\n- [auth-refactor](./auth-refactor/.index.md) — User auth\n- [用户认证重构](./%E7%94%A8%E6%88%B7%E8%AE%A4%E8%AF%81%E9%87%8D%E6%9E%84/.index.md) — 重构\n- see [db](db/) and [docs](https://example.com/x/) and [notes](notes.md)\n";
        let names: Vec<(String, usize, usize)> = listed(text)
            .into_iter()
            .map(|l| (l.name, l.line, l.column))
            .collect();
        assert_eq!(
            names,
            vec![
                ("auth-refactor".to_string(), 3, 19),
                ("用户认证重构".to_string(), 4, 12),
                ("db".to_string(), 5, 12),
            ]
        );
    }

    #[test]
    fn stale_and_unlisted() {
        let modules = ModuleNames::new(vec!["b".to_string(), "a".to_string()]);
        let mut out = Vec::new();
        check(
            Path::new("TASK"),
            FileState::Bytes(b"- [a](./a/.index.md)\n- [gone](./gone/.index.md)\n".to_vec()),
            &modules,
            &mut out,
        );
        let got: Vec<(&str, Option<usize>)> = out.iter().map(|f| (f.rule.id, f.line)).collect();
        assert_eq!(
            got,
            vec![("root-index-stale", Some(2)), ("root-index-unlisted", None)]
        );
        assert!(out[1].message.contains("\"b\""));

        let mut out = Vec::new();
        check(Path::new("TASK"), FileState::Missing, &modules, &mut out);
        assert_eq!(out[0].rule.id, "root-index-missing");
        let mut out = Vec::new();
        check(
            Path::new("TASK"),
            FileState::Missing,
            &ModuleNames::default(),
            &mut out,
        );
        assert!(out.is_empty());
    }
}
