//! The approval policy every door uses: Claude Code's PermissionRequest hook
//! (`autoctl hook permission-request`), the permission screens a supervisor reads, and
//! `autoctl policy check`. One pure function, [`decide`]: a tool call (tool name and input),
//! where it runs ([`Context`]) and the user's rules ([`Policy`]) in; a [`Decision`] out —
//! allow, deny, or no decision — with the rule that made it.
//!
//! Default deny: a call is allowed only when a named rule proves it harmless.
//!
//! The named rules (`read-only`, `runner`, `mkdir`, `write-in-project`, `git-write`, and the
//! user's `user:ID`), what each approves, their examples and the one list of destructive ids
//! are data: `rules/policy.json`, compiled in by build.rs ([`data`]). The engine reading
//! them is here: [`bash`] (the shell line), [`programs`] and [`git`] (a program's arguments),
//! [`paths`] (where a path is), [`destructive`] (what the destructive set names), [`rules`]
//! (the user's file).
//!
//! A shell line is allowed only when every simple command in it is ([`bash`]). Nothing the
//! built-in destructive set names ([`destructive`]) is ever allowed. Built-in rules give
//! allow or no decision; deny comes only from a user's deny rule or, with
//! `on_destructive: "deny"`, from the destructive set. AskUserQuestion, ExitPlanMode, MCP
//! tools and every other tool get no decision unless a user rule says otherwise.
//!
//! [`prompt`] judges a program's own yes/no question on a screen; [`log`] keeps the bounded
//! decision log; [`reviewer`] is the optional stage that asks a command about what no rule
//! decided.

pub mod argv;
pub mod bash;
pub mod config;
pub mod data;
pub mod destructive;
pub mod examples;
pub mod floor;
pub mod forms;
pub mod gemini;
pub mod git;
pub mod line;
pub mod log;
pub mod paths;
pub mod programs;
pub mod prompt;
pub mod request;
pub mod reviewer;
pub mod rules;
pub mod screen;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

pub use rules::{OnDestructive, Policy};

/// The outcome of a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A rule proves the call harmless: approve it.
    Allow,
    /// A deny rule refuses it; the model is told the message.
    Deny,
    /// Nothing proves it harmless: the agent's own prompt shows (hook), or a person is asked
    /// (screen).
    NoDecision,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Deny => "deny",
            Verdict::NoDecision => "no-decision",
        }
    }
}

/// A decision and the rule that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub decision: Verdict,
    /// The deciding rule: a built-in rule (`read-only`, `runner`, `mkdir`, `write-in-project`,
    /// `git-write`; rules joined with `+` when a line needed several), a user rule (`user:ID`),
    /// a destructive marker (`destructive:rm`), or what stopped a proof (`not-harmless`,
    /// `sensitive-path`, `outside-project`, `ask-user`, `plan-approval`, `mcp-tool`,
    /// `unknown-tool`, `bad-input`).
    pub rule: String,
    /// One line: what the rule saw.
    pub reason: String,
    /// For a deny: what the model is told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Decision {
    fn allow(rule: impl Into<String>, reason: impl Into<String>) -> Decision {
        Decision {
            decision: Verdict::Allow,
            rule: rule.into(),
            reason: reason.into(),
            message: None,
        }
    }

    fn none(rule: impl Into<String>, reason: impl Into<String>) -> Decision {
        Decision {
            decision: Verdict::NoDecision,
            rule: rule.into(),
            reason: reason.into(),
            message: None,
        }
    }

    fn deny(rule: impl Into<String>, reason: impl Into<String>, message: String) -> Decision {
        Decision {
            decision: Verdict::Deny,
            rule: rule.into(),
            reason: reason.into(),
            message: Some(message),
        }
    }
}

/// Where a tool call runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The working directory of the call (the hook payload's `cwd`); `None` on a screen,
    /// where a relative path that stays below it counts as inside the project.
    pub cwd: Option<PathBuf>,
    /// The project directory when known apart from the working directory (the task's repo,
    /// `$CLAUDE_PROJECT_DIR`).
    pub project: Option<PathBuf>,
    pub home: Option<PathBuf>,
    /// Never written by any rule: autoctl's configuration, rules override, state directory
    /// and policy file.
    pub protected: Vec<PathBuf>,
    /// The working directory is a git repository's top (`cwd/.git` exists), looked at by
    /// the caller on the file system (`false` on a screen, where the directory is not
    /// known). git is approved only there: a repository the agent wrote elsewhere (a bare
    /// `evil.git/` with `core.fsmonitor` in its `config`) runs its configured programs.
    pub git_top: bool,
}

impl Context {
    /// The project roots: the working directory and the project directory.
    pub fn roots(&self) -> impl Iterator<Item = &Path> {
        self.cwd
            .iter()
            .chain(self.project.iter())
            .map(PathBuf::as_path)
    }
}

/// Tools that only read.
const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LS", "NotebookRead"];
/// Tools that write one file.
const WRITE_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// What a tool call acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A shell command line.
    Command(String),
    /// Paths read (Read, Glob, Grep).
    Reads(Vec<String>),
    /// A file written.
    Writes(String),
    /// Anything else: its main input as text (a URL, a query, compact JSON).
    Other(String),
}

/// What a call's input lacks for its subject to be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoSubject {
    #[error("Bash input without a command string")]
    Command,
    /// A tool that writes or reads a file (named) without its path.
    #[error("{0} input without a file_path")]
    FilePath(String),
}

/// Read the subject of a call from its input; `Err` names what is missing.
pub fn subject(tool: &str, input: &Value) -> Result<Subject, NoSubject> {
    let field = |name: &str| input.get(name).and_then(Value::as_str);
    if tool == "Bash" {
        return field("command")
            .map(|c| Subject::Command(c.to_string()))
            .ok_or(NoSubject::Command);
    }
    if WRITE_TOOLS.contains(&tool) {
        return field("file_path")
            .or_else(|| field("notebook_path"))
            .map(|p| Subject::Writes(p.to_string()))
            .ok_or_else(|| NoSubject::FilePath(tool.to_string()));
    }
    if READ_TOOLS.contains(&tool) {
        let mut paths: Vec<String> = ["file_path", "notebook_path", "path"]
            .iter()
            .filter_map(|f| field(f))
            .map(str::to_string)
            .collect();
        // A Glob pattern or a Grep glob names files too (`**/.env`).
        for f in ["pattern", "glob"] {
            if let Some(p) = field(f).filter(|_| tool != "Grep" || f == "glob") {
                paths.push(p.to_string());
            }
        }
        if tool == "Read" && paths.is_empty() {
            return Err(NoSubject::FilePath(tool.to_string()));
        }
        return Ok(Subject::Reads(paths));
    }
    let main = ["url", "query", "command", "file_path", "path"]
        .iter()
        .find_map(|f| field(f))
        .map(str::to_string)
        .unwrap_or_else(|| serde_json::to_string(input).unwrap_or_default());
    Ok(Subject::Other(main))
}

/// Longest summary of an input written to the decision log.
pub const SUMMARY_CHARS: usize = 400;

/// A one-line summary of a call's input for the decision log: the command, the path, the
/// URL or the query — never a file's content or an edit's text.
pub fn summary(tool: &str, input: &Value) -> String {
    let text = match subject(tool, input) {
        Ok(Subject::Command(c)) => c,
        Ok(Subject::Writes(p)) => p,
        Ok(Subject::Reads(paths)) => paths.join(" "),
        Ok(Subject::Other(main)) if tool.starts_with("mcp__") => {
            // MCP inputs may carry anything: only their keys.
            let _ = main;
            input
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(","))
                .unwrap_or_default()
        }
        Ok(Subject::Other(main)) => {
            if ["AskUserQuestion", "ExitPlanMode", "TodoWrite", "Task"].contains(&tool) {
                String::new()
            } else {
                main
            }
        }
        Err(_) => String::new(),
    };
    one_line(&text, SUMMARY_CHARS)
}

/// Newlines shown as `⏎`, control characters dropped, cut to `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == max {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push('⏎'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Decide one tool call.
pub fn decide(policy: &Policy, tool: &str, input: &Value, ctx: &Context) -> Decision {
    let subject = match subject(tool, input) {
        Ok(subject) => subject,
        Err(why) => return Decision::none("bad-input", why.to_string()),
    };
    // A command longer than a shell tool can run (`shell::MAX_LINE`) is not read at all, not
    // even by the user's deny rules: the destructive set names it `unreadable` at once.
    let unrunnable = matches!(&subject, Subject::Command(s) if s.len() > crate::shell::MAX_LINE);
    // 1. The user's deny rules win over everything.
    let denies = policy.denies_for(tool);
    if let Some(rule) = denies
        .iter()
        .find(|r| !unrunnable && subject_matches(r, &subject, ctx))
    {
        return Decision::deny(
            rule.label(),
            format!("the user's deny rule {} matches", rule.def.id),
            rule.message(),
        );
    }
    // 2. The destructive set: never allowed; denied when the policy says so.
    if let Some((marker, what)) = destructive_marker(&subject, ctx) {
        let rule = format!("destructive:{marker}");
        return match policy.on_destructive {
            OnDestructive::Deny => Decision::deny(
                rule.clone(),
                what.clone(),
                format!(
                    "autoctl policy ({rule}): {what}. Nobody is watching this run to approve it; find a way that does not need it."
                ),
            ),
            OnDestructive::Ask => Decision::none(rule, what),
        };
    }
    let allows = policy.allows_for(tool);
    match &subject {
        Subject::Command(script) => match bash::judge(script, ctx, &allows) {
            Ok(proof) if !proof.is_empty() => {
                let rule = proof.join("+");
                Decision::allow(
                    rule,
                    format!("every part is proven harmless: {}", one_line(script, 200)),
                )
            }
            Ok(_) => Decision::none("not-harmless", "nothing to run"),
            Err(blocked) => Decision::none(
                blocked.rule,
                format!("{}: {}", one_line(&blocked.part, 200), blocked.why),
            ),
        },
        _ => {
            if let Some(rule) = allows.iter().find(|r| subject_matches(r, &subject, ctx)) {
                return Decision::allow(
                    rule.label(),
                    format!("the user's allow rule {} matches", rule.def.id),
                );
            }
            builtin(tool, &subject, ctx)
        }
    }
}

fn builtin(tool: &str, subject: &Subject, ctx: &Context) -> Decision {
    let line = line::Line::new(ctx);
    match subject {
        Subject::Reads(paths) => {
            for path in paths {
                if let Err(blocked) = line.read(path) {
                    return Decision::none(blocked.rule, format!("{tool} {path}: {}", blocked.why));
                }
            }
            Decision::allow("read-only", format!("{tool} only reads"))
        }
        Subject::Writes(path) => match line.write(path, false) {
            Ok(()) => Decision::allow(
                "write-in-project",
                format!("{tool} {path}: inside the project, not a sensitive path"),
            ),
            Err(blocked) => Decision::none(blocked.rule, format!("{tool} {}", blocked.why)),
        },
        Subject::Other(_) => match tool {
            "AskUserQuestion" => Decision::none(
                "ask-user",
                "the agent asks the person a question: only a person answers it",
            ),
            "ExitPlanMode" => {
                Decision::none("plan-approval", "approving a plan is a person's call")
            }
            _ if tool.starts_with("mcp__") => Decision::none(
                "mcp-tool",
                format!("{tool}: MCP tools are approved only by a user rule"),
            ),
            _ => Decision::none("unknown-tool", format!("{tool} is on no harmless rule")),
        },
        Subject::Command(_) => unreachable!("judged by the caller"),
    }
}

/// The marker of the built-in destructive set the subject hits, with its explanation.
pub fn destructive_marker(subject: &Subject, ctx: &Context) -> Option<(String, String)> {
    match subject {
        Subject::Command(script) => {
            // The whole line: a destructive command at the end of a long one is still named
            // (and a line the reader cannot read whole is named `unreadable`).
            destructive::dangers(script).into_iter().next().map(|d| {
                (
                    d.id.to_string(),
                    format!("{}: {}", one_line(&d.command, 200), d.explanation),
                )
            })
        }
        Subject::Writes(path) => {
            let place = paths::resolve(path, ctx);
            paths::sensitive(&place, ctx)
                .filter(|_| place != paths::Place::Unknown)
                .map(|why| {
                    (
                        "sensitive-path".to_string(),
                        format!("writes {path}: {why}"),
                    )
                })
        }
        _ => None,
    }
}

/// The longest prefix of `text` no longer than `max` bytes that ends on a character boundary.
pub fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn subject_matches(rule: &rules::UserRule, subject: &Subject, ctx: &Context) -> bool {
    match subject {
        Subject::Command(script) => match rule.kind {
            rules::Kind::Deny => deny_texts(script).iter().any(|t| rule.matches_text(t)),
            rules::Kind::Allow => false,
        },
        Subject::Writes(path) => {
            rule.matches_path(path_spellings(path, ctx).iter().map(String::as_str))
        }
        Subject::Reads(paths) => {
            !paths.is_empty()
                && paths
                    .iter()
                    .all(|p| rule.matches_path(path_spellings(p, ctx).iter().map(String::as_str)))
        }
        Subject::Other(text) => rule.matches_text(text),
    }
}

/// A path as given, absolute, and relative to each project root.
fn path_spellings(path: &str, ctx: &Context) -> Vec<String> {
    let mut out = vec![path.to_string()];
    if let paths::Place::Absolute(abs) | paths::Place::Below(abs) = paths::resolve(path, ctx) {
        out.push(abs.display().to_string());
        for root in ctx.roots() {
            if let Ok(rel) = abs.strip_prefix(root) {
                out.push(rel.display().to_string());
            }
        }
    }
    out
}

/// The texts a Bash deny pattern is matched against: the whole line, and each simple
/// command as written, with its redirections, and without its runners — inside
/// substitutions and quoted command strings too, as deep and as far as a
/// [`crate::shell::Reader`] reads.
fn deny_texts(script: &str) -> Vec<String> {
    let mut reader = crate::shell::Reader::new(script);
    let mut texts = vec![script.to_string()];
    // Breadth first: a body is read as a substitution before it comes back inside its word.
    let mut pending = std::collections::VecDeque::from([(script.to_string(), 0)]);
    while let Some((text, depth)) = pending.pop_front() {
        let Some(commands) = reader.read(&text, depth, "") else {
            continue;
        };
        for command in commands {
            texts.push(command.words.join(" "));
            texts.push(command.tokens().join(" "));
            let peeled = crate::shell::strip_runners(&command.words);
            texts.push(peeled.join(" "));
            for word in &command.words {
                if word.contains(char::is_whitespace) {
                    pending.push_back((word.clone(), depth + 1));
                }
            }
            pending.extend(command.substitutions.into_iter().map(|b| (b, depth + 1)));
        }
    }
    texts
}
