//! The checks of one task module: a function of its directory listing, the files it reads
//! through [`ModuleFs`] (only those a rule needs: `.target.md` is read only past draft), and
//! the [`Context`] of its task root. No other I/O, so unit tests drive it with a fake.
//!
//! Two layouts are understood: ai-cli-task (`.index.md` front matter holds the status; every
//! file in the module directory) and task-ai (`.status.json` holds the status; system files in
//! `.working/` or the module directory itself).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::rules::{self, Rule};
use super::{Context, Entry, EntryKind, Finding, ModuleFs, Summary, read};
use crate::fsx;
use crate::protocol::document::{Location, Problem};
use crate::protocol::{index, signal, status, stop, target};
use crate::taskai::profile;

/// Statuses that promise a plan document.
const NEEDS_PLAN: &[&str] = &["review", "executing", "re-planning"];

/// Check one module. `dir` is the module's path as findings show it; `name` its directory
/// name; `entries` its listing.
pub fn check(
    dir: &Path,
    name: &OsStr,
    entries: &[Entry],
    fs: &dyn ModuleFs,
    ctx: &Context,
    out: &mut Vec<Finding>,
) -> Summary {
    let module_name = name.to_string_lossy();
    if let Err(why) = valid_module_name(name) {
        out.push(Finding::new(&rules::MODULE_NAME, dir, why.to_string()));
    }
    let has = |file: &str| entries.iter().any(|e| e.name == file);

    // Where the system files are: the module itself, or task-ai's .working/.
    let mut prefix = "";
    let mut work_entries: Vec<Entry> = Vec::new();
    if !has(index::FILE_NAME) && !has(status::FILE_NAME) && has(status::WORK_DIR) {
        match fs.list(status::WORK_DIR) {
            Ok(listing) if listing.iter().any(|e| e.name == status::FILE_NAME) => {
                prefix = ".working/";
                work_entries = listing;
            }
            Ok(_) => {}
            Err(why) => out.push(Finding::new(
                &rules::UNREADABLE,
                dir.join(status::WORK_DIR),
                format!("cannot list: {why}"),
            )),
        }
    }
    let system = if prefix.is_empty() {
        entries
    } else {
        &work_entries
    };
    let has_system = |file: &str| system.iter().any(|e| e.name == file);
    let path_of = |file: &str| dir.join(format!("{prefix}{file}"));

    let mut summary = Summary::default();
    let mut status_now: Option<String> = None;
    let mut from_index = false;
    if has(index::FILE_NAME) {
        let outcome = super::front_matter::check_index(dir, &module_name, fs, ctx, out);
        status_now = outcome.status;
        summary = outcome.summary;
        from_index = true;
    }
    if has_system(status::FILE_NAME) {
        let status_path = path_of(status::FILE_NAME);
        if let Some(bytes) = read(
            fs,
            &format!("{prefix}{}", status::FILE_NAME),
            &status_path,
            out,
        ) {
            match status::parse(&bytes) {
                Ok(doc) => {
                    if status_now.is_none() && !from_index {
                        status_now = Some(doc.status);
                    }
                }
                Err(problems) => {
                    push_problems(&rules::STATUS_JSON_INVALID, &status_path, problems, out)
                }
            }
        }
    } else if !from_index {
        out.push(Finding::new(
            &rules::INDEX_MISSING,
            dir.join(index::FILE_NAME),
            "the module has no .index.md (and no task-ai .status.json), so it has no status",
        ));
    }

    let statused = from_index || has_system(status::FILE_NAME);
    if statused {
        check_target(dir, prefix, system, fs, status_now.as_deref(), out);
    }
    if from_index && let Some(status) = &status_now {
        check_contradictions(dir, entries, status, out);
    }

    // Transient documents, where the loop writes them (the module, and .working/ for task-ai).
    check_transients(dir, "", entries, fs, out);
    if !prefix.is_empty() {
        check_transients(dir, prefix, &work_entries, fs, out);
    }
    if has_system(profile::FILE_NAME) {
        check_profile(&path_of(profile::FILE_NAME), prefix, fs, out);
    }
    summary
}

/// `.auto-signal` and `.auto-stop`, when present in `listing` (the directory `place` of the
/// module), must be valid.
fn check_transients(
    dir: &Path,
    place: &str,
    listing: &[Entry],
    fs: &dyn ModuleFs,
    out: &mut Vec<Finding>,
) {
    type Parse = fn(&[u8]) -> Result<(), Vec<Problem>>;
    let documents: [(&str, &'static Rule, Parse); 2] = [
        (signal::FILE_NAME, &rules::SIGNAL_INVALID, |b| {
            signal::check(b)
        }),
        (stop::FILE_NAME, &rules::STOP_INVALID, |b| {
            stop::parse(b).map(drop)
        }),
    ];
    for entry in listing {
        if entry.kind == EntryKind::File && fsx::is_temp_name(&entry.name) {
            out.push(Finding::new(
                &rules::TRANSIENT_LEFTOVER,
                dir.join(place).join(&entry.name),
                "the temporary file of an interrupted write (the next write into the module removes it once it is a minute old)",
            ));
        }
    }
    for (file, rule, parse) in documents {
        if !listing.iter().any(|e| e.name == file) {
            continue;
        }
        let relative = format!("{place}{file}");
        let path = dir.join(&relative);
        if let Some(bytes) = read(fs, &relative, &path, out)
            && let Err(problems) = parse(&bytes)
        {
            push_problems(rule, &path, problems, out);
        }
    }
}

/// `.type-profile.md`'s Auto Adaptation section, read exactly as `autoctl gate` and
/// `autoctl profile learn` read it: what they would refuse is a finding.
fn check_profile(path: &Path, prefix: &str, fs: &dyn ModuleFs, out: &mut Vec<Finding>) {
    let Some(bytes) = read(fs, &format!("{prefix}{}", profile::FILE_NAME), path, out) else {
        return;
    };
    match std::str::from_utf8(&bytes) {
        Ok(text) => {
            if let Err(problem) = profile::parse(text) {
                out.push(
                    Finding::new(&rules::PROFILE_ADAPTATION, path, problem.message)
                        .at(problem.line, None),
                );
            }
        }
        Err(err) => out.push(Finding::new(
            &rules::PROFILE_ADAPTATION,
            path,
            format!(
                "not UTF-8 text (first bad byte at offset {}), so its Auto Adaptation section cannot be read",
                err.valid_up_to()
            ),
        )),
    }
}

/// Why a directory name is not a module name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadModuleName {
    #[error("module name {0:?} is not valid UTF-8 (allowed: letters, digits, '-' and '_')")]
    NotUtf8(String),
    /// The name and up to three of its characters outside the pattern.
    #[error("module name {name:?} has characters outside letters, digits, '-' and '_' ({bad:?})")]
    Characters { name: String, bad: String },
}

/// The module-name rule: `[\p{L}\p{N}_-]+`, valid UTF-8.
pub fn valid_module_name(name: &OsStr) -> Result<(), BadModuleName> {
    static PATTERN: OnceLock<regex::Regex> = OnceLock::new();
    let Some(text) = name.to_str() else {
        return Err(BadModuleName::NotUtf8(name.to_string_lossy().into_owned()));
    };
    let pattern = PATTERN.get_or_init(|| {
        regex::Regex::new(r"^[\p{L}\p{N}_-]+$").expect("the module-name pattern compiles")
    });
    if pattern.is_match(text) {
        Ok(())
    } else {
        let bad: String = text
            .chars()
            .filter(|c| !pattern.is_match(c.encode_utf8(&mut [0; 4])))
            .take(3)
            .collect();
        Err(BadModuleName::Characters {
            name: text.to_string(),
            bad,
        })
    }
}

fn push_problems(rule: &'static Rule, path: &Path, problems: Vec<Problem>, out: &mut Vec<Finding>) {
    for problem in problems {
        let finding = match problem.location {
            Location::Position { line, column } => {
                Finding::new(rule, path, problem.message).at(line, Some(column))
            }
            Location::Pointer { pointer } if pointer == "/" => {
                Finding::new(rule, path, problem.message)
            }
            Location::Pointer { pointer } => {
                Finding::new(rule, path, format!("{pointer}: {}", problem.message))
            }
        };
        out.push(finding);
    }
}

fn check_target(
    dir: &Path,
    prefix: &str,
    system: &[Entry],
    fs: &dyn ModuleFs,
    status: Option<&str>,
    out: &mut Vec<Finding>,
) {
    let relative = format!("{prefix}{}", target::FILE_NAME);
    let path: PathBuf = dir.join(&relative);
    if !system.iter().any(|e| e.name == target::FILE_NAME) {
        out.push(Finding::new(
            &rules::TARGET_MISSING,
            path,
            "the module has no .target.md, so it has no stated target",
        ));
        return;
    }
    let Some(status) = status else { return };
    if status == "cancelled" {
        return;
    }
    let Some(bytes) = read(fs, &relative, &path, out) else {
        return;
    };
    if status == "draft" {
        // Not planned yet, so not wrong; but `next` would stop the loop at once.
        if let Ok(text) = std::str::from_utf8(&bytes)
            && !target::has_substantive_content(text)
        {
            let words = target::substantive_words(text);
            out.push(Finding::new(
                &rules::TARGET_EMPTY,
                path,
                format!(
                    "{words} word{} of content ({} needed): `autoctl next` answers (stop) for this draft until .target.md says what to build",
                    if words == 1 { "" } else { "s" },
                    target::MIN_WORDS
                ),
            ));
        }
        return;
    }
    let message = match std::str::from_utf8(&bytes) {
        Ok(text) if target::has_substantive_content(text) => return,
        Ok(text) => format!(
            "still the template ({} word{} of content, {} needed) while the status is {status}",
            target::substantive_words(text),
            if target::substantive_words(text) == 1 {
                ""
            } else {
                "s"
            },
            target::MIN_WORDS
        ),
        Err(_) => {
            format!("not UTF-8 text, so it has no readable target, while the status is {status}")
        }
    };
    out.push(Finding::new(&rules::TARGET_TEMPLATE, path, message));
}

fn check_contradictions(dir: &Path, entries: &[Entry], status: &str, out: &mut Vec<Finding>) {
    let path = dir.join(index::FILE_NAME);
    if status == "complete" && !entries.iter().any(|e| e.name == ".report.md") {
        out.push(Finding::new(
            &rules::STATUS_CONTRADICTED,
            path,
            "status is complete but the module has no .report.md",
        ));
    } else if NEEDS_PLAN.contains(&status) && !entries.iter().any(is_plan_document) {
        out.push(Finding::new(
            &rules::STATUS_CONTRADICTED,
            path,
            format!("status is {status} but the module has no plan document (a .md file whose name does not start with a dot)"),
        ));
    }
}

fn is_plan_document(entry: &Entry) -> bool {
    let name = entry.name.to_string_lossy();
    matches!(entry.kind, EntryKind::File | EntryKind::Symlink)
        && !name.starts_with('.')
        && name.len() > 3
        && name[name.len() - 3..].eq_ignore_ascii_case(".md")
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::lint::{FileState, ModuleNames};
    use std::collections::HashMap;

    /// A module in memory: file contents by relative path.
    #[derive(Default)]
    pub(in crate::lint) struct FakeModule {
        files: HashMap<String, FileState>,
        reads: std::cell::RefCell<Vec<String>>,
    }

    impl FakeModule {
        pub(in crate::lint) fn with(mut self, path: &str, text: &str) -> Self {
            self.files
                .insert(path.to_string(), FileState::Bytes(text.as_bytes().to_vec()));
            self
        }
        pub(in crate::lint) fn state(mut self, path: &str, state: FileState) -> Self {
            self.files.insert(path.to_string(), state);
            self
        }
        fn entries(&self, under: &str) -> Vec<Entry> {
            let mut names: Vec<Entry> = self
                .files
                .keys()
                .filter_map(|path| {
                    let rest = path.strip_prefix(under)?;
                    Some(match rest.split_once('/') {
                        Some((dir, _)) => Entry::new(dir, EntryKind::Dir),
                        None => Entry::new(rest, EntryKind::File),
                    })
                })
                .collect();
            names.sort_by(|a, b| a.name.cmp(&b.name));
            names.dedup();
            names
        }
    }

    impl ModuleFs for FakeModule {
        fn read(&self, relative: &str) -> FileState {
            self.reads.borrow_mut().push(relative.to_string());
            self.files
                .get(relative)
                .cloned()
                .unwrap_or(FileState::Missing)
        }
        fn list(&self, relative: &str) -> std::io::Result<Vec<Entry>> {
            Ok(self.entries(&format!("{relative}/")))
        }
    }

    fn statuses() -> Vec<String> {
        crate::routing::builtin("ai-cli-task")
            .unwrap()
            .status_names()
            .into_iter()
            .map(String::from)
            .collect()
    }

    pub(in crate::lint) fn run(
        name: &str,
        module: &FakeModule,
        modules: &[&str],
    ) -> (Vec<Finding>, Summary) {
        let statuses = statuses();
        let set = ModuleNames::new(modules.iter().map(|m| m.to_string()).collect());
        let ctx = Context {
            table: "ai-cli-task",
            statuses: &statuses,
            modules: Some(&set),
        };
        let mut out = Vec::new();
        let summary = check(
            &Path::new("TASK").join(name),
            OsStr::new(name),
            &module.entries(""),
            module,
            &ctx,
            &mut out,
        );
        (out, summary)
    }

    pub(in crate::lint) fn ids(findings: &[Finding]) -> Vec<&'static str> {
        findings.iter().map(|f| f.rule.id).collect()
    }

    fn index(status: &str, extra: &str) -> String {
        format!(
            "---\ntitle: \"Auth\"\nstatus: {status}\ncreated: 2024-01-01T00:00:00Z\nupdated: 2024-01-02T00:00:00Z\n{extra}---\n# Auth\n"
        )
    }

    pub(in crate::lint) const TARGET: &str = "# Target\n\nAdd OAuth login to the admin panel.\n";

    #[test]
    fn a_clean_module_has_no_findings_and_reads_only_what_it_needs() {
        let module = FakeModule::default()
            .with(
                ".index.md",
                &index(
                    "draft",
                    "depends_on: [db]\ntags: []\nbranch: \"task/auth\"\nworktree: \"\"\n",
                ),
            )
            .with(".target.md", TARGET);
        let (findings, summary) = run("auth", &module, &["auth", "db"]);
        assert_eq!(findings, vec![]);
        assert_eq!(summary.deps, vec!["db"]);
        assert_eq!(summary.deps_at, Some((6, 13)));
        // A draft's target is read (is there enough to plan?), and nothing else.
        assert_eq!(*module.reads.borrow(), vec![".index.md", ".target.md"]);
    }

    #[test]
    fn target_and_status_contradictions() {
        let module = FakeModule::default().with(".index.md", &index("executing", ""));
        let (findings, _) = run("auth", &module, &[]);
        assert_eq!(
            ids(&findings),
            vec!["target-missing", "status-contradicted"]
        );

        let module = FakeModule::default()
            .with(".index.md", &index("executing", ""))
            .with(
                ".target.md",
                "# Task Target: Auth\n\n## Objective\n\n<!-- Describe the goal of this task -->\n",
            )
            .with("plan.md", "# Plan\n");
        let (findings, _) = run("auth", &module, &[]);
        assert_eq!(ids(&findings), vec!["target-template"]);
        assert!(
            findings[0]
                .message
                .contains("while the status is executing")
        );

        let module = FakeModule::default()
            .with(".index.md", &index("complete", ""))
            .with(".target.md", TARGET);
        let (findings, _) = run("auth", &module, &[]);
        assert_eq!(ids(&findings), vec!["status-contradicted"]);
        assert!(findings[0].message.contains(".report.md"));
    }

    #[test]
    fn transient_documents_are_validated() {
        let module = FakeModule::default()
            .with(".index.md", &index("draft", ""))
            .with(".target.md", TARGET)
            .with(".auto-signal", r#"{"step":"deploy","result":"PASS","next":"exec","timestamp":"2024-01-01T00:00:00Z"}"#)
            .with(".auto-stop", "{\"reason\": \"lunch\",\n \"timestamp\": 3}");
        let (findings, _) = run("auth", &module, &[]);
        assert_eq!(
            ids(&findings),
            vec!["signal-invalid", "stop-invalid", "stop-invalid"]
        );
        assert!(
            findings[0].message.starts_with("/step: "),
            "{}",
            findings[0].message
        );
    }

    #[test]
    fn task_ai_layout_reads_working_dir() {
        let module = FakeModule::default()
            .with(".working/.status.json", r#"{"status":"executing"}"#)
            .with(".working/.target.md", TARGET)
            .with(
                ".working/.type-profile.md",
                "## Auto Adaptation\n- post-plan threshold: 70\n",
            );
        let (findings, _) = run("notebook", &module, &[]);
        assert_eq!(
            ids(&findings),
            vec!["status-json-invalid", "profile-adaptation"]
        );
        assert_eq!(
            findings[0].path,
            Path::new("TASK/notebook/.working/.status.json")
        );
        assert_eq!(findings[1].line, Some(2));

        let module = FakeModule::default().with("notes.md", "x");
        assert_eq!(ids(&run("notebook", &module, &[]).0), vec!["index-missing"]);
    }

    #[test]
    fn module_names() {
        assert!(valid_module_name(OsStr::new("auth-refactor_2")).is_ok());
        assert!(valid_module_name(OsStr::new("用户认证重构")).is_ok());
        assert!(valid_module_name(OsStr::new("has space")).is_err());
        assert!(valid_module_name(OsStr::new("dot.ted")).is_err());
        // A combining mark is alphabetic but not a letter (\p{L}).
        assert!(valid_module_name(OsStr::new("a\u{0903}")).is_err());
        use std::os::unix::ffi::OsStrExt;
        let err = valid_module_name(OsStr::from_bytes(b"bad\xff")).unwrap_err();
        assert!(matches!(err, BadModuleName::NotUtf8(_)), "{err}");
    }
}
