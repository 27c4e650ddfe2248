//! The policy file: the user's own allow and deny rules, per tool and pattern, and what to do
//! with the built-in destructive set (`autoctl schema show policy`).
//!
//! ```json
//! {"version": 1, "on_destructive": "ask",
//!  "allow": [{"id": "deploy-staging", "tool": "Bash", "pattern": "./scripts/deploy-staging.sh"}],
//!  "deny":  [{"id": "no-prod", "tool": "Bash", "pattern": "* --env=prod*", "message": "never prod"}]}
//! ```
//!
//! - `tool` is a tool name or a glob of names (`Bash`, `Edit`, `mcp__github__*`, `*`).
//! - `pattern` (optional: without it every call of the tool matches) is a glob. For Bash it is
//!   matched against each simple command of the line as written (quotes undone, words joined
//!   by one space), `*` matching any text; an allow rule never covers a command with a
//!   substitution or a variable, and every other part of a `&&` chain or pipeline still needs a
//!   rule of its own. For file tools it is matched against the path as given, absolute and
//!   relative to the project (`*` within one directory, `**` across directories); for other
//!   tools against the main input (the URL of WebFetch, the query of WebSearch) or the input
//!   as compact JSON.
//! - A deny rule wins over every allow; its `message` is what the model is told. A Bash deny
//!   pattern is also matched against the whole line and inside substitutions.
//! - `match` and `not_match` (optional): example calls the rule decides and neighbours it must
//!   not (`["./scripts/deploy-staging.sh --dry-run"]`, `[{"tool": "Write", "file_path":
//!   "docs/a.md"}]`), checked every time the file is read through the same decision every
//!   door uses: one decided the other way refuses the file in one line (exit 2), as Codex's
//!   execpolicy checks its rules' `match`/`not_match`.
//! - `on_destructive: "deny"` denies what the built-in destructive set names (for unattended
//!   runs, where nobody would answer); the default `"ask"` leaves it to a person.
//!
//! - `reviewer: "COMMAND"` (optional, off by default) asks a command about calls no rule
//!   decides, with `reviewer_timeout_ms` (default 4000); see [`super::reviewer`].
//!
//! Nothing in the destructive set is ever allowed, by a built-in rule, a user's or the
//! reviewer.

use anyhow::{Result, anyhow, bail};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::document;

/// What the built-in destructive set leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnDestructive {
    /// No decision: the agent's own prompt shows, or the screen is escalated.
    #[default]
    Ask,
    /// Deny, naming the marker; the model is told why.
    Deny,
}

/// One rule as written in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    pub id: String,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Calls this rule decides (an allow rule approves them, a deny rule denies them),
    /// checked when the file is read, as Codex's execpolicy checks its rules' examples: a
    /// Bash command as a string, any other call as `{"tool": NAME, …its input}`.
    #[serde(rename = "match", default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<Value>,
    /// Calls this rule must not decide (the neighbours it must leave alone), checked alike.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_match: Vec<Value>,
}

/// The policy file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    #[serde(default)]
    pub on_destructive: OnDestructive,
    #[serde(default)]
    pub allow: Vec<RuleDef>,
    #[serde(default)]
    pub deny: Vec<RuleDef>,
    /// A command asked about calls no rule decides (`sh -c COMMAND`; see
    /// [`super::reviewer`]). Off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// How long the reviewer may take, in milliseconds (default 4000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_timeout_ms: Option<u64>,
}

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Allow,
    Deny,
}

/// A compiled user rule.
#[derive(Debug, Clone)]
pub struct UserRule {
    pub def: RuleDef,
    pub kind: Kind,
    tool: Regex,
    /// Matched against a command's text (`*` is any text).
    text: Option<Regex>,
    /// Matched against a path (`*` within a directory, `**` across).
    path: Option<Regex>,
}

impl UserRule {
    fn compile(def: RuleDef, kind: Kind) -> Result<UserRule> {
        if def.id.trim().is_empty() {
            bail!("a rule needs a non-empty id");
        }
        let tool = glob_regex(&def.tool, false)?;
        let (text, path) = match &def.pattern {
            Some(pattern) => (
                Some(glob_regex(pattern, false)?),
                Some(glob_regex(pattern, true)?),
            ),
            None => (None, None),
        };
        Ok(UserRule {
            def,
            kind,
            tool,
            text,
            path,
        })
    }

    /// `user:ID`, as decisions name it.
    pub fn label(&self) -> String {
        format!("user:{}", self.def.id)
    }

    pub fn applies_to(&self, tool: &str) -> bool {
        self.tool.is_match(tool)
    }

    /// Does the pattern match this text (a command, a URL)? A rule without a pattern
    /// matches everything.
    pub fn matches_text(&self, text: &str) -> bool {
        self.text.as_ref().is_none_or(|re| re.is_match(text))
    }

    /// Does the pattern match any of these spellings of a path?
    pub fn matches_path<'a>(&self, spellings: impl IntoIterator<Item = &'a str>) -> bool {
        match &self.path {
            None => true,
            Some(re) => spellings.into_iter().any(|p| re.is_match(p)),
        }
    }

    /// What the model is told when this rule denies.
    pub fn message(&self) -> String {
        match &self.def.message {
            Some(message) => format!("{message} (autoctl policy rule {})", self.label()),
            None => format!("denied by autoctl policy rule {}", self.label()),
        }
    }
}

/// A glob as an anchored regex: `*` any text (within a directory when `path`), `**` any text,
/// `?` one character; everything else literal.
fn glob_regex(glob: &str, path: bool) -> Result<Regex> {
    let mut re = String::from("(?s)^");
    let chars: Vec<char> = glob.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                re.push_str(".*");
                i += 2;
                continue;
            }
            '*' => re.push_str(if path { "[^/]*" } else { ".*" }),
            '?' => re.push_str(if path { "[^/]" } else { "." }),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    re.push('$');
    Regex::new(&re).map_err(|err| anyhow!("pattern {glob:?}: {err}"))
}

/// The effective user rules.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub on_destructive: OnDestructive,
    pub allow: Vec<UserRule>,
    pub deny: Vec<UserRule>,
    /// Where the rules came from (`built-in`, or a file).
    pub source: Option<String>,
    /// The optional reviewer stage: off unless the file names a command.
    pub reviewer: Option<super::reviewer::Reviewer>,
}

/// The largest policy file read (issue 23: every reader bounded). A person's rules fit in a
/// few KiB; reading a file compiles every pattern and decides every example through the whole
/// policy, so the bounds below keep that to milliseconds whatever the file holds.
pub const FILE_LIMIT: u64 = 64 * 1024;

/// The most rules (allow and deny together) a policy file may hold.
pub const MAX_RULES: usize = 256;

/// The longest pattern of a rule, in bytes: a rule names a command or a path, not a script.
pub const MAX_PATTERN: usize = 1024;

/// The most examples (`match` and `not_match`, every rule's together) a policy file may hold:
/// each is decided through the whole policy when the file is read.
pub const MAX_EXAMPLES: usize = 1024;

impl Policy {
    /// The built-in rules only.
    pub fn builtin() -> Policy {
        Policy::default()
    }

    /// Read a policy file's bytes: schema-checked, duplicate keys and ids refused, and every
    /// rule's examples decided as written ([`Policy::wrong_examples`] finds none).
    pub fn from_bytes(bytes: &[u8], source: &str) -> Result<Policy> {
        let policy = Policy::from_bytes_unchecked(bytes, source)?;
        policy.check_examples(source)?;
        Ok(policy)
    }

    /// [`Policy::from_bytes`] without checking the rules' examples (`policy test` reports
    /// every wrong one instead of refusing the file at the first).
    pub fn from_bytes_unchecked(bytes: &[u8], source: &str) -> Result<Policy> {
        if bytes.len() as u64 > FILE_LIMIT {
            bail!(
                "{source}: larger than {} (a policy file holds at most {MAX_RULES} rules)",
                crate::fsx::human_size(FILE_LIMIT)
            );
        }
        let value = document::parse_with_schema(bytes, "policy").map_err(|problems| {
            let first = problems
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            anyhow!("{source}: {first}")
        })?;
        let file: PolicyFile = document::typed_from_value(&value).map_err(|problems| {
            anyhow!(
                "{source}: {}",
                problems
                    .first()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            )
        })?;
        Policy::from_file_unchecked(file, source)
    }

    /// A parsed policy file, its examples checked.
    pub fn from_file(file: PolicyFile, source: &str) -> Result<Policy> {
        let policy = Policy::from_file_unchecked(file, source)?;
        policy.check_examples(source)?;
        Ok(policy)
    }

    fn from_file_unchecked(file: PolicyFile, source: &str) -> Result<Policy> {
        if file.version.is_some_and(|v| v != 1) {
            bail!(
                "{source}: version {} is not supported (use 1)",
                file.version.unwrap_or(0)
            );
        }
        let rules = file.allow.len() + file.deny.len();
        if rules > MAX_RULES {
            bail!("{source}: {rules} rules; a policy file holds at most {MAX_RULES}");
        }
        let examples: usize = file
            .allow
            .iter()
            .chain(&file.deny)
            .map(|d| d.matches.len() + d.not_match.len())
            .sum();
        if examples > MAX_EXAMPLES {
            bail!("{source}: {examples} examples; a policy file holds at most {MAX_EXAMPLES}");
        }
        if let Some(def) = file
            .allow
            .iter()
            .chain(&file.deny)
            .find(|d| d.pattern.as_ref().is_some_and(|p| p.len() > MAX_PATTERN))
        {
            bail!(
                "{source}: rule {}: a pattern of {} bytes; at most {MAX_PATTERN}",
                def.id,
                def.pattern.as_ref().map_or(0, String::len)
            );
        }
        let mut seen = std::collections::HashSet::new();
        for def in file.allow.iter().chain(&file.deny) {
            if !seen.insert(def.id.clone()) {
                bail!("{source}: rule id {:?} is used twice", def.id);
            }
        }
        let compile = |defs: Vec<RuleDef>, kind| {
            defs.into_iter()
                .map(|def| {
                    let id = def.id.clone();
                    UserRule::compile(def, kind)
                        .map_err(|err| anyhow!("{source}: rule {id}: {err}"))
                })
                .collect::<Result<Vec<_>>>()
        };
        if file
            .reviewer
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            bail!("{source}: reviewer is an empty command");
        }
        if file.reviewer.is_none() && file.reviewer_timeout_ms.is_some() {
            bail!("{source}: reviewer_timeout_ms without a reviewer");
        }
        let reviewer = file
            .reviewer
            .clone()
            .map(|command| super::reviewer::Reviewer {
                command,
                timeout: file.reviewer_timeout_ms.map_or(
                    super::reviewer::DEFAULT_TIMEOUT,
                    std::time::Duration::from_millis,
                ),
            });
        let policy = Policy {
            reviewer,
            on_destructive: file.on_destructive,
            allow: compile(file.allow, Kind::Allow)?,
            deny: compile(file.deny, Kind::Deny)?,
            source: Some(source.to_string()),
        };
        Ok(policy)
    }

    /// Every rule's `match` examples are decided by that rule (an allow rule's approved
    /// with it among the proof, a deny rule's denied by it) and none of its `not_match`
    /// examples is, through the same [`super::decide`] every door uses with this whole
    /// policy, in [`super::examples::example_context`]. The first example decided the other
    /// way refuses the file.
    fn check_examples(&self, source: &str) -> Result<()> {
        match self.wrong_examples(source).wrong.into_iter().next() {
            Some(first) => Err(anyhow!(first)),
            None => Ok(()),
        }
    }

    /// Every example of every user rule checked as reading the file checks them, each one
    /// decided the other way as one line (`autoctl policy test` prints them all).
    pub fn wrong_examples(&self, source: &str) -> super::examples::Report {
        let ctx = super::examples::example_context();
        let mut report = super::examples::Report::default();
        for rule in self.allow.iter().chain(&self.deny) {
            let label = rule.label();
            let examples = rule
                .def
                .matches
                .iter()
                .map(|e| ("match", e, true))
                .chain(rule.def.not_match.iter().map(|e| ("not_match", e, false)));
            for (key, example, wanted) in examples {
                report.examples += 1;
                let (tool, input) = match super::examples::example_call(example) {
                    Ok(call) => call,
                    Err(why) => {
                        report.wrong.push(format!(
                            "{source}: rule {}: {key} example {example}: {why}",
                            rule.def.id
                        ));
                        continue;
                    }
                };
                let d = super::decide(self, &tool, &input, &ctx);
                let verdict = match rule.kind {
                    Kind::Allow => super::Verdict::Allow,
                    Kind::Deny => super::Verdict::Deny,
                };
                let decided = d.decision == verdict && d.rule.split('+').any(|r| r == label);
                if decided != wanted {
                    let what = match (rule.kind, wanted) {
                        (Kind::Allow, true) => "is not approved by it",
                        (Kind::Allow, false) => "is approved by it",
                        (Kind::Deny, true) => "is not denied by it",
                        (Kind::Deny, false) => "is denied by it",
                    };
                    report.wrong.push(format!(
                        "{source}: rule {}: {key} example {example} {what} ({} {}: {})",
                        rule.def.id,
                        d.decision.as_str(),
                        d.rule,
                        d.reason
                    ));
                }
            }
        }
        report
    }

    /// The user's allow rules for a tool.
    pub fn allows_for(&self, tool: &str) -> Vec<&UserRule> {
        self.allow.iter().filter(|r| r.applies_to(tool)).collect()
    }

    /// The user's deny rules for a tool.
    pub fn denies_for(&self, tool: &str) -> Vec<&UserRule> {
        self.deny.iter().filter(|r| r.applies_to(tool)).collect()
    }

    /// The file form of the effective user rules (for `policy show`).
    pub fn to_file(&self) -> PolicyFile {
        PolicyFile {
            schema: None,
            version: Some(1),
            on_destructive: self.on_destructive,
            allow: self.allow.iter().map(|r| r.def.clone()).collect(),
            deny: self.deny.iter().map(|r| r.def.clone()).collect(),
            reviewer: self.reviewer.as_ref().map(|r| r.command.clone()),
            reviewer_timeout_ms: self
                .reviewer
                .as_ref()
                .filter(|r| r.timeout != super::reviewer::DEFAULT_TIMEOUT)
                .map(|r| u64::try_from(r.timeout.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_text_and_paths() {
        let text = glob_regex("./scripts/deploy-staging.sh *", false).unwrap();
        assert!(text.is_match("./scripts/deploy-staging.sh --dry-run"));
        assert!(!text.is_match("./scripts/deploy-staging.sh"));
        let path = glob_regex("docs/*.md", true).unwrap();
        assert!(path.is_match("docs/a.md"));
        assert!(!path.is_match("docs/x/a.md"));
        assert!(glob_regex("docs/**", true).unwrap().is_match("docs/x/a.md"));
        assert!(
            glob_regex("mcp__github__*", false)
                .unwrap()
                .is_match("mcp__github__get_issue")
        );
        assert!(glob_regex("a.b", false).unwrap().is_match("a.b"));
        assert!(!glob_regex("a.b", false).unwrap().is_match("axb"));
    }

    #[test]
    fn ids_are_unique_and_versions_known() {
        let file = |json: &str| Policy::from_bytes(json.as_bytes(), "p.json");
        assert!(
            file(r#"{"version":1,"allow":[{"id":"a","tool":"Bash","pattern":"make deploy"}]}"#)
                .is_ok()
        );
        let twice =
            file(r#"{"allow":[{"id":"a","tool":"Bash"}],"deny":[{"id":"a","tool":"Bash"}]}"#);
        assert!(twice.unwrap_err().to_string().contains("used twice"));
        assert!(file(r#"{"version":2}"#).is_err());
        assert!(file(r#"{"allow":[{"id":"a","tool":"Bash","extra":1}]}"#).is_err());
        assert!(file(r#"{"on_destructive":"sometimes"}"#).is_err());
        assert!(file(r#"{"allow":[],"allow":[]}"#).is_err());
    }

    #[test]
    fn a_rules_examples_are_checked_both_ways_when_the_file_is_read() {
        let file = |json: &str| Policy::from_bytes(json.as_bytes(), "p.json");
        let good = file(
            r#"{"allow":[{"id":"stage","tool":"Bash","pattern":"./scripts/deploy-staging.sh *",
                "match":["./scripts/deploy-staging.sh --dry-run", "cargo test && ./scripts/deploy-staging.sh now"],
                "not_match":["./scripts/deploy-prod.sh --dry-run", "./scripts/deploy-staging.sh $(cat x)"]}],
               "deny":[{"id":"no-prod","tool":"Bash","pattern":"* --env=prod*","message":"never prod",
                "match":["make deploy --env=prod"], "not_match":["make deploy --env=staging"]},
               {"id":"no-docs","tool":"Write","pattern":"docs/**",
                "match":[{"tool":"Write","file_path":"docs/a/b.md","content":"x"}],
                "not_match":[{"tool":"Write","file_path":"src/a.md","content":"x"}]}]}"#,
        );
        assert!(good.is_ok(), "{good:?}");
        // An allow rule's match it does not approve: one line naming the rule and example.
        let err = file(
            r#"{"allow":[{"id":"stage","tool":"Bash","pattern":"./scripts/deploy-staging.sh",
                "match":["./scripts/deploy-staging.sh --dry-run"]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("p.json: rule stage: match example \"./scripts/deploy-staging.sh --dry-run\" is not approved by it"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        // A not_match it does approve.
        let err = file(
            r#"{"allow":[{"id":"make","tool":"Bash","pattern":"make *","not_match":["make deploy"]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("rule make: not_match example \"make deploy\" is approved by it"),
            "{err}"
        );
        // Nothing approves what the destructive set names, whatever a match says.
        let err = file(r#"{"allow":[{"id":"all","tool":"Bash","match":["rm -rf build"]}]}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("is not approved by it (no-decision destructive:"),
            "{err}"
        );
        // A deny rule's examples, and an example that is not a call.
        let err = file(
            r#"{"deny":[{"id":"no-prod","tool":"Bash","pattern":"* --env=prod*","not_match":["make x --env=production"]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("is denied by it (deny user:no-prod"), "{err}");
        assert!(
            file(r#"{"allow":[{"id":"a","tool":"Bash","match":[{"file_path":"x"}]}]}"#).is_err()
        );
    }
}
