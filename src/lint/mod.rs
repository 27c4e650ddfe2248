//! `autoctl lint`: check task modules the way a compiler checks source files.
//!
//! The pieces, from pure to effectful:
//! - [`rules`]: the registry of rule ids, severities and explanations;
//! - [`module`]: the checks of one module, a function of its directory listing and the files
//!   it reads through [`ModuleFs`] (a fake in unit tests, the file system in the walk);
//! - [`deps`]: the `depends_on` graph and its cycles; [`root_index`]: the root `.index.md`;
//! - [`git`]: transient files tracked by or not ignored by git (the only part that runs git);
//! - [`walk`]: finds task roots and modules under the PATHs and drives the checks;
//! - [`format`](mod@format): text, JSON, GitHub workflow commands and SARIF 2.1.0.

pub mod deps;
pub mod format;
pub mod front_matter;
pub mod git;
pub mod module;
pub mod root_index;
pub mod rules;
pub mod walk;

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rules::{Rule, Severity};

use crate::fsx;
use crate::protocol::{index, signal, status, stop};
use crate::taskai::profile;

/// Directory names that are task roots (ai-cli-task v1 used `TASK/`, later versions
/// `AiTasks/`).
pub const ROOT_NAMES: &[&str] = &["TASK", "AiTasks"];

/// The transient files of a module: never committed, always in `.gitignore`.
pub const TRANSIENT_FILES: &[&str] = &[
    ".auto-signal",
    ".auto-stop",
    ".auto-retry",
    ".tmp-annotations.json",
];

/// The `.gitignore` line that covers the temporary files a crashed write leaves
/// (`..auto-signal.aB3xYz.tmp`, see [`crate::fsx::is_temp_name`]).
pub const TEMP_LEFTOVER_PATTERN: &str = ".*.tmp";

/// One thing wrong with a module, located as precisely as the rule can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static Rule,
    /// The file (or directory) the finding is about, as the user would open it.
    pub path: PathBuf,
    /// 1-based line and column (Unicode scalar values) when the rule knows them.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl Finding {
    pub fn new(rule: &'static Rule, path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Finding {
            rule,
            path: path.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// Locate the finding at a line (and column, when known).
    pub fn at(mut self, line: usize, column: Option<usize>) -> Self {
        if line > 0 {
            self.line = Some(line);
            self.column = column.filter(|c| *c > 0);
        }
        self
    }

    /// The order findings are printed in: by path, then position, then rule.
    fn sort_key(&self) -> (&std::ffi::OsStr, usize, usize, &str) {
        (
            self.path.as_os_str(),
            self.line.unwrap_or(0),
            self.column.unwrap_or(0),
            self.rule.id,
        )
    }
}

/// The module names of a task root, sorted, for membership tests (a sorted vector, not a set:
/// memory per module stays small at ten thousand modules).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleNames(Vec<String>);

impl ModuleNames {
    pub fn new(mut names: Vec<String>) -> Self {
        names.sort_unstable();
        names.dedup();
        ModuleNames(names)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0
            .binary_search_by(|probe| probe.as_str().cmp(name))
            .is_ok()
    }

    /// Where `name` is in the sorted order (for per-module flags).
    pub fn position(&self, name: &str) -> Option<usize> {
        self.0
            .binary_search_by(|probe| probe.as_str().cmp(name))
            .ok()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Sort findings into their printing order and drop exact duplicates (two PATHs that name
/// the same module).
pub fn sort_findings(findings: &mut Vec<Finding>) {
    findings.sort_by(|a, b| {
        a.sort_key()
            .cmp(&b.sort_key())
            .then(a.message.cmp(&b.message))
    });
    findings.dedup();
}

/// `--deny` and `--allow`: which rules are silenced and which warnings fail the run.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    deny: HashSet<&'static str>,
    allow: HashSet<&'static str>,
    deny_warnings: bool,
}

impl Policy {
    /// Build a policy from rule ids (`warnings` denies every warning). Unknown ids and a rule
    /// both denied and allowed are errors, with the message to show.
    pub fn new(deny: &[String], allow: &[String]) -> Result<Policy, RuleIdError> {
        let mut policy = Policy::default();
        for id in deny {
            if id == rules::ALL_WARNINGS {
                policy.deny_warnings = true;
            } else {
                policy.deny.insert(lookup(id)?.id);
            }
        }
        for id in allow {
            let rule = lookup(id)?;
            if policy.deny.contains(rule.id) {
                return Err(RuleIdError::Both(id.clone()));
            }
            policy.allow.insert(rule.id);
        }
        Ok(policy)
    }

    /// The severity a rule's findings are reported with, or `None` when it is allowed.
    pub fn severity(&self, rule: &Rule) -> Option<Severity> {
        if self.allow.contains(rule.id) {
            None
        } else if self.deny.contains(rule.id) || self.deny_warnings {
            Some(Severity::Error)
        } else {
            Some(rule.severity)
        }
    }
}

fn lookup(id: &str) -> Result<&'static Rule, RuleIdError> {
    rules::find(id).ok_or_else(|| RuleIdError::Unknown(id.to_string()))
}

/// A `--deny`/`--allow` rule id that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleIdError {
    #[error("no lint rule named {0:?} (rules: {ids})", ids = rules::ids())]
    Unknown(String),
    #[error("rule {0} is both denied and allowed")]
    Both(String),
}

// The types the checks of one module share (its files, its surroundings, what the root
// checks need from it) and the bounded read every check goes through: [`module`] and
// [`front_matter`] both use them, so they live here rather than in either.

/// What a directory entry is (from the listing, without following symlinks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

/// One entry of a module's directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: OsString,
    pub kind: EntryKind,
}

impl Entry {
    pub fn new(name: impl Into<OsString>, kind: EntryKind) -> Entry {
        Entry {
            name: name.into(),
            kind,
        }
    }
}

/// What a bounded read of a module file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    Missing,
    Bytes(Vec<u8>),
    TooLarge { limit: u64 },
    Failed(String),
}

/// The module's files, as the checks may read them.
pub trait ModuleFs {
    /// Read a file of the module (a path relative to the module directory), bounded.
    fn read(&self, relative: &str) -> FileState;
    /// List a subdirectory of the module (task-ai's `.working/`).
    fn list(&self, relative: &str) -> std::io::Result<Vec<Entry>>;
}

/// What the checks know about the module's surroundings.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// The routing table whose statuses are allowed.
    pub table: &'a str,
    pub statuses: &'a [String],
    /// The module names of the task root, when the root could be listed.
    pub modules: Option<&'a ModuleNames>,
}

/// What the root-level checks need from a module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Modules this one depends on (first path component, deduplicated, valid ones only).
    pub deps: Vec<String>,
    /// Where `depends_on` is written (line, column of its value) in `.index.md`.
    pub deps_at: Option<(usize, usize)>,
}

/// Read a module file the check needs; problems reading it become findings.
pub(crate) fn read(
    fs: &dyn ModuleFs,
    relative: &str,
    path: &Path,
    out: &mut Vec<Finding>,
) -> Option<Vec<u8>> {
    match fs.read(relative) {
        FileState::Bytes(bytes) => Some(bytes),
        FileState::Missing => {
            out.push(Finding::new(
                &rules::UNREADABLE,
                path,
                "listed in the module but cannot be opened (a dangling symlink?)",
            ));
            None
        }
        FileState::Failed(why) => {
            out.push(Finding::new(
                &rules::UNREADABLE,
                path,
                format!("cannot read: {why}"),
            ));
            None
        }
        FileState::TooLarge { limit } => {
            let rule = match relative.rsplit('/').next() {
                Some(index::FILE_NAME) => &rules::INDEX_NOT_TEXT,
                Some(signal::FILE_NAME) => &rules::SIGNAL_INVALID,
                Some(stop::FILE_NAME) => &rules::STOP_INVALID,
                Some(status::FILE_NAME) => &rules::STATUS_JSON_INVALID,
                Some(profile::FILE_NAME) => &rules::PROFILE_ADAPTATION,
                _ => &rules::UNREADABLE,
            };
            out.push(Finding::new(
                rule,
                path,
                format!(
                    "larger than the {} read limit; not read",
                    fsx::human_size(limit)
                ),
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_denies_allows_and_refuses_contradictions() {
        let policy = Policy::new(&["status-contradicted".into()], &["index-yaml".into()]).unwrap();
        assert_eq!(
            policy.severity(&rules::STATUS_CONTRADICTED),
            Some(Severity::Error)
        );
        assert_eq!(policy.severity(&rules::INDEX_YAML), None);
        assert_eq!(
            policy.severity(&rules::ROOT_INDEX_UNLISTED),
            Some(Severity::Warning)
        );
        let all = Policy::new(&["warnings".into()], &[]).unwrap();
        assert_eq!(
            all.severity(&rules::ROOT_INDEX_UNLISTED),
            Some(Severity::Error)
        );
        assert!(
            Policy::new(&["index-yaml".into()], &["index-yaml".into()])
                .unwrap_err()
                .to_string()
                .contains("both")
        );
        assert!(
            Policy::new(&["nope".into()], &[])
                .unwrap_err()
                .to_string()
                .contains("nope")
        );
    }

    #[test]
    fn findings_sort_by_path_then_position_and_dedup() {
        let a = Finding::new(&rules::INDEX_YAML, "b/.index.md", "x").at(3, Some(1));
        let b = Finding::new(&rules::INDEX_YAML, "a/.index.md", "x").at(9, None);
        let c = Finding::new(&rules::INDEX_STATUS, "b/.index.md", "y").at(2, Some(1));
        let mut all = vec![a.clone(), b.clone(), c.clone(), a.clone()];
        sort_findings(&mut all);
        assert_eq!(all, vec![b, c, a]);
    }
}
