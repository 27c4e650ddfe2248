//! The lint rules: a registry of stable ids, default severities, a one-line summary and the
//! paragraph `autoctl lint --explain RULE` prints, ending with how to fix it.
//!
//! Ids are kebab-case names, never renumbered or reused: CI configurations (`--deny`,
//! `--allow`), SARIF consumers and people's muscle memory depend on them.

use serde::Serialize;

/// How bad a finding is. Errors fail the run (exit 1); warnings only when denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One rule.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// The stable id (`index-yaml`).
    pub id: &'static str,
    /// The severity unless `--deny` raises it.
    pub severity: Severity,
    /// One line: what the rule finds.
    pub summary: &'static str,
    /// Why it matters, in a paragraph.
    pub explanation: &'static str,
    /// How to make the finding go away.
    pub fix: &'static str,
}

macro_rules! rule {
    ($name:ident, $id:literal, $severity:ident, $summary:literal, $explanation:literal, $fix:literal) => {
        pub static $name: Rule = Rule {
            id: $id,
            severity: Severity::$severity,
            summary: $summary,
            explanation: $explanation,
            fix: $fix,
        };
    };
}

rule!(
    UNREADABLE,
    "unreadable",
    Error,
    "a task root, module directory or module file could not be read",
    "autoctl could not list a directory or read a file inside a task root (permission denied, \
     an I/O error, a symlink loop or a dangling symlink). The module was checked as far as \
     possible and the run went on, but whatever could not be read was not checked, so a clean \
     result would be a lie: the finding is an error. The run exits 2 instead of 1 only when \
     nothing at all could be checked.",
    "Make the path readable by the user that runs the lint (chmod, chown), remove the broken \
     symlink, or exclude the path with --allow unreadable if it is deliberately private."
);

rule!(
    MODULE_NOT_DIRECTORY,
    "module-not-directory",
    Error,
    "an entry of a task root that should be a module directory is a file",
    "Every entry of a task root (TASK/ or AiTasks/) whose name does not start with a dot is a \
     task module, and a module is a directory holding .index.md, .target.md and the plan. A \
     regular file in its place is usually a module that was flattened by a bad copy or a merge, \
     and every tool that walks the root (the agent, the daemon, autoctl next --task) will fail \
     on it.",
    "Turn the file back into a module directory (mkdir, move the content into .target.md), or \
     move it out of the task root. System files of the root start with a dot (.index.md, \
     .type-registry.md)."
);

rule!(
    MODULE_NAME,
    "module-name",
    Error,
    "a module's directory name is outside [\\p{L}\\p{N}_-]+",
    "ai-cli-task names modules with Unicode letters, digits, hyphens and underscores only \
     ([\\p{L}\\p{N}_-]+): no whitespace, no dots, no path separators, valid UTF-8. The name is \
     pasted into branch names (task/<module>), worktree paths (.worktrees/task-<module>) and \
     the command a daemon types into a terminal, where a space, a quote or a non-UTF-8 byte \
     breaks the command or the git ref.",
    "Rename the directory (git mv) to a name made of letters, digits, '-' and '_', and update \
     branch, worktree, depends_on entries that name it, and the root .index.md."
);

rule!(
    INDEX_MISSING,
    "index-missing",
    Error,
    "a module has no .index.md (and no task-ai .status.json)",
    "A module's status lives in the YAML front matter of its .index.md (ai-cli-task) or in \
     .status.json (task-ai). Without either, the loop cannot tell where the task stands and \
     `autoctl next --task` has no entry point.",
    "Create .index.md with front matter holding at least title, status, created and updated \
     (see `autoctl schema show index-front-matter`), or remove the directory if it is not a \
     task module. `autoctl task new TASK/NAME` creates a new module complete."
);

rule!(
    INDEX_NOT_TEXT,
    "index-not-text",
    Error,
    "an .index.md is binary, not UTF-8, or larger than the 1 MiB read limit",
    "Front matter is small YAML text. An .index.md that is not UTF-8, contains NUL bytes, or is \
     larger than 1 MiB is not read further (reading is bounded so a huge or hostile file \
     cannot exhaust memory), so nothing in it can be checked and no tool can read its status.",
    "Restore the file from git (git checkout -- PATH) or rewrite it as UTF-8 text with a small \
     front matter block; keep large content in other files of the module."
);

rule!(
    INDEX_NO_FRONT_MATTER,
    "index-no-front-matter",
    Error,
    "an .index.md does not start with a --- fenced YAML front matter block",
    "The module's metadata is the YAML block between a first line '---' and the next '---' \
     line. Without it there is no status, so routing falls back to nothing and the module is \
     invisible to the loop.",
    "Start the file with '---', the fields (title, status, created, updated, ...) one per \
     line, and a closing '---' line; the Markdown body goes after it."
);

rule!(
    INDEX_YAML,
    "index-yaml",
    Error,
    "the front matter of an .index.md is not valid YAML (or not a mapping)",
    "The front matter must parse as a YAML mapping. The finding points at the line and column \
     where the parser gave up: an unclosed bracket or quote, a tab in the indentation, a \
     duplicated key, or an alias bomb (nested aliases that would expand to billions of nodes \
     are refused by a parse budget instead of being expanded).",
    "Fix the YAML at the reported position; quote values that contain ': ' or start with a \
     special character ('[', '{', '*', '&', '!', '%', '@', '`')."
);

rule!(
    INDEX_REQUIRED_FIELD,
    "index-required-field",
    Error,
    "a required front-matter field (title, status, created, updated) is missing or empty",
    "`autoctl task new` (like ai-cli-task's init) writes title, status, created and updated \
     into every .index.md, and \
     every later step reads them: status drives routing, the timestamps order work and detect \
     staleness, the title names the task in reports and in the root index.",
    "Add the missing field; created and updated are RFC 3339 timestamps such as \
     2024-01-01T00:00:00Z, status is one of the routing table's statuses."
);

rule!(
    INDEX_FIELD_TYPE,
    "index-field-type",
    Error,
    "a front-matter field has the wrong type (tags or depends_on not a list of strings, ...)",
    "title, status, branch, worktree and phase are strings; tags and depends_on are lists of \
     strings. A YAML scalar where a list is expected (tags: backend) or a nested structure \
     where a string is expected is read differently by every consumer, so it is refused.",
    "Write lists in flow form (tags: [feature, backend]) or block form ('- feature' lines), \
     and quote scalars YAML would read as numbers, booleans or null."
);

rule!(
    INDEX_STATUS,
    "index-status",
    Error,
    "the status is not one of the statuses of the routing table in use",
    "The status in the front matter selects the loop's entry step through the routing table \
     (--table, default ai-cli-task: draft, planning, review, executing, re-planning, complete, \
     blocked, cancelled). A status the table does not know leaves the loop without an entry \
     point: autoctl next --task fails and an agent guesses.",
    "Set status to one of the table's statuses (`autoctl table show NAME` lists them), or lint \
     with the table this module follows (--table task-ai, --table FILE)."
);

rule!(
    INDEX_TIMESTAMP,
    "index-timestamp",
    Error,
    "created or updated is not an RFC 3339 timestamp, or updated is before created",
    "created and updated are RFC 3339 date-times with a time zone (2024-01-01T00:00:00Z or \
     2024-01-01T09:00:00+09:00). A date without a time, a time without an offset, or an \
     updated earlier than created breaks ordering, staleness checks and reports.",
    "Write full timestamps with an offset; set updated to the time of the last change (never \
     earlier than created)."
);

rule!(
    DEPENDS_MISSING,
    "depends-missing",
    Error,
    "depends_on names a module that does not exist in the task root",
    "depends_on lists task-root-relative module names (auth-refactor, or api/endpoints for a \
     path inside a module). A dependency on a module that does not exist can never be \
     satisfied, so a scheduler that runs tasks level by level waits forever or skips the task.",
    "Fix the name (module names are directory names in the task root), create the module, or \
     remove the entry."
);

rule!(
    DEPENDS_SELF,
    "depends-self",
    Error,
    "a module lists itself in depends_on",
    "A module that depends on itself can never start: its dependency is never complete before \
     it is.",
    "Remove the module's own name from its depends_on."
);

rule!(
    DEPENDS_CYCLE,
    "depends-cycle",
    Error,
    "depends_on entries form a cycle between modules",
    "Dependencies must form a directed acyclic graph so tasks can run level by level. A cycle \
     (a -> b -> c -> a) means none of its modules can ever start. The finding prints one cycle \
     and is reported once per strongly connected group of modules.",
    "Break the cycle: remove the depends_on entry that is not a real prerequisite, or merge the \
     modules that truly depend on each other."
);

rule!(
    INDEX_BRANCH,
    "index-branch",
    Error,
    "branch is not task/<module>",
    "Every task module works on its own branch named task/<module> (ai-cli-task's branch \
     convention); merge, cancel and report find the task's commits through it. Another name \
     means those steps operate on the wrong branch or none.",
    "Set branch to task/<module directory name>, and rename the git branch if it was created \
     under another name (git branch -m OLD task/<module>)."
);

rule!(
    INDEX_WORKTREE,
    "index-worktree",
    Error,
    "worktree is set but is not .worktrees/task-<module>",
    "When a task runs in its own git worktree, the worktree lives at .worktrees/task-<module> \
     (ai-cli-task's convention, which cancel --cleanup and merge rely on). An empty worktree \
     means the task does not use one and is fine.",
    "Set worktree to .worktrees/task-<module>, or to \"\" when the task has no worktree, and \
     move the worktree with git worktree move if needed."
);

rule!(
    TARGET_MISSING,
    "target-missing",
    Error,
    "a module has no .target.md",
    ".target.md is the human-authored statement of what the task must achieve; plan and check \
     read it at every step, and auto refuses to plan a draft without it.",
    "Create .target.md with the objective, requirements and constraints of the task."
);

rule!(
    TARGET_TEMPLATE,
    "target-template",
    Error,
    ".target.md is still the template while the status is past draft",
    "A module past draft (planning, executing, ...) has been planned against its target, but \
     its .target.md holds only the template: headings, comments and placeholders ({...}, \
     <...>, TODO), fewer than three words of real content. An agent working from it plans and \
     builds from nothing.",
    "Write the real objective and requirements into .target.md, or set the status back to \
     draft until it is written."
);

rule!(
    TARGET_EMPTY,
    "target-empty",
    Warning,
    "a draft's .target.md says too little to plan, so the loop would stop at once",
    "`autoctl next --task` plans a draft only when its .target.md holds at least three words \
     of real content besides headings, comments and placeholders ({...}, <...>, TODO). Until \
     then it answers (stop): a loop started on the module ends before its first step. A stub \
     waiting to be written is normal; this says why the loop would not run.",
    "Write what to build into .target.md (the goal, the requirements, how to check it is done)."
);

rule!(
    STATUS_CONTRADICTED,
    "status-contradicted",
    Warning,
    "the module's files contradict its status",
    "Some statuses promise files: complete means the report step ran (.report.md exists); \
     review, executing and re-planning mean a plan exists (a non-dot .md plan document in the \
     module). When the file is missing, either the status moved without the work or the work \
     was lost.",
    "Restore the missing document from git, regenerate it (plan, report), or set the status \
     to the step the module really is at."
);

rule!(
    SIGNAL_INVALID,
    "signal-invalid",
    Error,
    "an .auto-signal is present and invalid",
    "A loop's progress report must pass `autoctl signal validate`: JSON with step, result, \
     next and timestamp from the protocol's whitelists, an RFC 3339 timestamp and a whole \
     iteration. A daemon or a resuming session that reads an invalid signal cannot tell where \
     the loop stands.",
    "Run `autoctl signal validate DIR` for details, then rewrite it with `autoctl signal write` \
     or remove it with `autoctl signal clear DIR` (it is transient)."
);

rule!(
    STOP_INVALID,
    "stop-invalid",
    Error,
    "an .auto-stop is present and invalid",
    "A stop request is {\"reason\", \"timestamp\", \"message\"?} with a reason from timeout, \
     max_iterations, user_stop, stall_limit, reasoning_loop, compaction_limit. An invalid stop file still stops \
     the loop (fail safe), but nobody can tell why it stopped.",
    "Rewrite it with `autoctl stop write DIR --reason R`, or remove it with `autoctl stop clear \
     DIR` if the loop should run."
);

rule!(
    TRANSIENT_TRACKED,
    "transient-tracked",
    Error,
    "a transient file (.auto-signal, .auto-stop, .auto-retry, .tmp-annotations.json) is tracked by git",
    "Signals, stop requests and annotation transports describe one run on one machine. \
     Committed, they travel: a checkout brings a stale .auto-stop that halts someone else's \
     loop, or an old .auto-signal that resumes a loop at the wrong step.",
    "git rm --cached the file and add the transient names to .gitignore (e.g. \
     TASK/**/.auto-signal, TASK/**/.auto-stop, TASK/**/.auto-retry, TASK/**/.tmp-annotations.json)."
);

rule!(
    TRANSIENT_NOT_IGNORED,
    "transient-not-ignored",
    Warning,
    "git would not ignore the transient files of some modules",
    "The seeds require .auto-signal, .auto-stop and .tmp-annotations.json to be in \
     .gitignore (autoctl adds .auto-retry, its merge-retry counter). When git would not ignore them, the next `git add -A` (which agents run) \
     commits them. The check asks git (check-ignore) about every module of the root and \
     reports each transient name once per task root.",
    "Add the transient names to .gitignore, e.g. .auto-signal, .auto-stop, .auto-retry and \
     .tmp-annotations.json, or TASK/**/.auto-signal and so on."
);

rule!(
    TRANSIENT_LEFTOVER,
    "transient-leftover",
    Warning,
    "a temporary file left by an interrupted write (..auto-signal.XXXXXX.tmp) is in a module",
    "autoctl writes every file through a temporary file in the same directory and a rename \
     (.NAME.XXXXXX.tmp, six letters or digits). A process killed between the two leaves the \
     temporary file behind; it holds a partial or superseded document and nothing reads it. \
     The next autoctl write into that directory removes such files once they are a minute \
     old; one younger than that may belong to a write in progress.",
    "Delete it (or let the next write remove it), and keep .*.tmp in .gitignore so a stray one \
     is never committed."
);

rule!(
    STATUS_JSON_INVALID,
    "status-json-invalid",
    Error,
    "a task-ai .status.json is invalid against its schema",
    "task-ai keeps a module's state in .status.json: status (draft, planning, re-planning, \
     review, executing, blocked, evolving, satisfied, cancelled) and updated_at (RFC 3339, \
     which the daemon compares before sending a continuation). An invalid document stops phase \
     derivation and the compare-and-swap.",
    "Fix the fields reported (`autoctl schema show task-status` has the schema)."
);

rule!(
    PROFILE_ADAPTATION,
    "profile-adaptation",
    Error,
    "the Auto Adaptation section of .type-profile.md is malformed or out of range",
    "task-ai reads per-checkpoint score thresholds and retry limits from the '## Auto \
     Adaptation' section of .type-profile.md, and `autoctl gate` and `autoctl profile learn` \
     refuse a section they cannot read rather than silently fall back to the defaults. The \
     section is a list of '- key: value' lines: threshold.CHECKPOINT (0 to 1), \
     retry_limit.CHECKPOINT (a whole number up to 100), mid_exec_check_interval, \
     compaction_threshold (0 to 1 or a percentage) and the observed.* metrics profile learn \
     writes; CHECKPOINT is post-plan, mid-exec or post-exec. A threshold of 70 never passes; \
     an unknown key or a key set twice is a typo that would otherwise go unnoticed.",
    "Fix the line reported; `autoctl profile show --profile FILE` reads the section the same way."
);

rule!(
    ROOT_INDEX_MISSING,
    "root-index-missing",
    Warning,
    "a task root has no .index.md module listing",
    "The root .index.md lists every module ('- [name](./name/.index.md) — title'); `autoctl \
     task new` (like ai-cli-task's init) creates and appends to it, and people and the \
     frontend browse tasks through it.",
    "Create TASK/.index.md with one '- [<module>](./<module>/.index.md) — <title>' line per \
     module; `autoctl task new TASK/NAME` adds the line for each module it creates."
);

rule!(
    ROOT_INDEX_STALE,
    "root-index-stale",
    Error,
    "the root .index.md lists a module that does not exist",
    "A listing that points at a missing module is a broken link for people and a wrong task \
     list for tools that read the root index.",
    "Remove the line, or restore the module directory it names."
);

rule!(
    ROOT_INDEX_UNLISTED,
    "root-index-unlisted",
    Warning,
    "a module exists but the root .index.md does not list it",
    "`autoctl task new` (like ai-cli-task's init) appends every new module to the root \
     .index.md. A module missing from it was \
     created by hand or lost its line in a merge, and is invisible to whoever browses the \
     listing.",
    "Add '- [<module>](./<module>/.index.md) — <title>' to the root .index.md."
);

/// Every rule, in `--list-rules` and SARIF order.
pub static RULES: &[&Rule] = &[
    &UNREADABLE,
    &MODULE_NOT_DIRECTORY,
    &MODULE_NAME,
    &INDEX_MISSING,
    &INDEX_NOT_TEXT,
    &INDEX_NO_FRONT_MATTER,
    &INDEX_YAML,
    &INDEX_REQUIRED_FIELD,
    &INDEX_FIELD_TYPE,
    &INDEX_STATUS,
    &INDEX_TIMESTAMP,
    &DEPENDS_MISSING,
    &DEPENDS_SELF,
    &DEPENDS_CYCLE,
    &INDEX_BRANCH,
    &INDEX_WORKTREE,
    &TARGET_MISSING,
    &TARGET_TEMPLATE,
    &TARGET_EMPTY,
    &STATUS_CONTRADICTED,
    &SIGNAL_INVALID,
    &STOP_INVALID,
    &TRANSIENT_TRACKED,
    &TRANSIENT_NOT_IGNORED,
    &TRANSIENT_LEFTOVER,
    &STATUS_JSON_INVALID,
    &PROFILE_ADAPTATION,
    &ROOT_INDEX_MISSING,
    &ROOT_INDEX_STALE,
    &ROOT_INDEX_UNLISTED,
];

/// `--deny warnings` denies every warning.
pub const ALL_WARNINGS: &str = "warnings";

/// Look a rule up by id.
pub fn find(id: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|rule| rule.id == id)
}

/// The ids, comma-separated, for error messages.
pub fn ids() -> String {
    RULES.iter().map(|r| r.id).collect::<Vec<_>>().join(", ")
}

/// The index of a rule in [`RULES`] (SARIF's `ruleIndex`).
pub fn index_of(rule: &Rule) -> usize {
    RULES
        .iter()
        .position(|r| r.id == rule.id)
        .expect("every rule is registered")
}

/// What `--explain RULE` prints.
pub fn explain(rule: &Rule) -> String {
    format!(
        "{} ({}): {}\n\n{}\n\nFix: {}\n",
        rule.id,
        rule.severity.as_str(),
        rule.summary,
        rule.explanation,
        rule.fix
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_documented() {
        let mut seen = std::collections::HashSet::new();
        for rule in RULES {
            assert!(seen.insert(rule.id), "duplicate id {}", rule.id);
            assert!(
                rule.id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                rule.id
            );
            assert_ne!(rule.id, ALL_WARNINGS);
            assert!(!rule.summary.ends_with('.'), "{}", rule.id);
            assert!(
                rule.explanation.len() > 80,
                "{} explains too little",
                rule.id
            );
            assert!(rule.fix.len() > 20, "{} has no real fix", rule.id);
            // Continuation lines are joined with one space: no double spaces from the macro.
            assert!(!rule.explanation.contains("  "), "{}", rule.id);
        }
    }

    #[test]
    fn explain_names_the_rule_and_the_fix() {
        let text = explain(&INDEX_YAML);
        assert!(text.starts_with("index-yaml (error): "));
        assert!(text.contains("\n\nFix: "));
        assert_eq!(find("index-yaml"), Some(&INDEX_YAML));
        assert_eq!(find("nope"), None);
        assert_eq!(index_of(&INDEX_YAML), 6);
    }
}
