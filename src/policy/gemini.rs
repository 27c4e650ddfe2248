//! `autoctl policy export --gemini`: autoctl's rules written as Gemini CLI's own policy-engine
//! file (TOML, `~/.gemini/policies/*.toml`, Gemini CLI 0.61's `docs/reference/policy-engine.md`),
//! so that Gemini refuses or asks for what autoctl would even where no autoctl hook runs.
//!
//! What is exported, at Gemini's user tier (its workspace tier is disabled in 0.61), every rule
//! active in every approval mode (`yolo` included: the user tier outranks Gemini's default
//! `yolo` allow-all):
//!
//! - each user **deny** rule, as `deny` with the rule's message (priority [`DENY_PRIORITY`]);
//! - the built-in **destructive set**, as `ask_user` (or `deny` with `on_destructive: "deny"`)
//!   for the programs and subcommands it names ([`DESTRUCTIVE`], priority
//!   [`DESTRUCTIVE_PRIORITY`]); Gemini checks each part of a chained command and the command
//!   inside `bash -c` by itself, so `make && rm -rf x` meets the `rm` rule;
//! - each user **allow** rule Gemini can express exactly (a Bash pattern, an absolute path, a
//!   tool without a pattern), as `allow` (priority [`ALLOW_PRIORITY`], below both); the others
//!   are listed in the file as not exported.
//!
//! Gemini's engine matches text (a command's prefix, a regular expression over the arguments'
//! JSON), not a shell's reading: `/bin/rm`, `env X=1 rm` or a computed program do not meet the
//! `rm` rule. The file is the first line; autoctl's BeforeTool hook (`hook pre-tool-use
//! --agent gemini`, which reads commands the way a shell does) stays the floor. The built-in
//! allow rules are code (they judge paths and arguments) and are not exported: what they
//! approve reaches Gemini's own confirmation, where the supervisor answers it.

use std::fmt::Write as _;

use super::rules::{Kind, OnDestructive, Policy, UserRule};

/// Gemini priority of a user deny rule (0–999 within the user tier; higher wins).
pub const DENY_PRIORITY: u32 = 900;
/// Gemini priority of the destructive set's rules.
pub const DESTRUCTIVE_PRIORITY: u32 = 800;
/// Gemini priority of a user allow rule.
pub const ALLOW_PRIORITY: u32 = 500;

/// One group of the destructive set as Gemini can match it: the marker id (as
/// [`super::destructive::dangers`] names it), the command prefixes (Gemini's
/// `commandPrefix`: the command starts with the prefix followed by a space or its end), and
/// a command of each prefix that the destructive set names (checked by the tests, so this
/// table cannot claim what the engine does not).
pub struct Group {
    pub id: &'static str,
    pub prefixes: &'static [&'static str],
    pub why: &'static str,
}

/// The destructive set, as prefixes. Each prefix, followed by ` x` where it needs an operand,
/// is named destructive by the engine (the drift test in this module checks every one).
pub const DESTRUCTIVE: &[Group] = &[
    Group {
        id: "rm",
        prefixes: &[
            "rm", "rimraf", "shred", "unlink", "wipefs", "truncate", "mkfs", "fdisk", "parted",
            "mv",
        ],
        why: "deletes, moves away or overwrites files or disks",
    },
    Group {
        id: "find-delete",
        prefixes: &[],
        why: "find … -delete deletes what it finds",
    },
    Group {
        id: "git",
        prefixes: &[
            "git push --force",
            "git push -f",
            "git push --mirror",
            "git push --delete",
            "git reset --hard",
            "git clean -f",
            "git clean -fd",
            "git clean -fdx",
            "git checkout --",
            "git checkout -f",
            "git restore",
            "git rm",
            "git rebase",
            "git filter-branch",
            "git commit --amend",
            "git stash drop",
            "git stash clear",
            "git branch -D",
        ],
        why: "rewrites or discards git history or work",
    },
    Group {
        id: "system-control",
        prefixes: &[
            "sudo",
            "doas",
            "su",
            "kill",
            "pkill",
            "killall",
            "reboot",
            "shutdown",
            "systemctl stop",
            "systemctl restart",
            "systemctl disable",
            "systemctl mask",
            "crontab -r",
            "crontab -e",
        ],
        why: "controls processes, the system or another host",
    },
    Group {
        id: "inline-code",
        prefixes: &[
            "python -c",
            "python3 -c",
            "node -e",
            "perl -e",
            "ruby -e",
            "bash -c",
            "sh -c",
            "eval",
        ],
        why: "runs code no rule can read",
    },
    Group {
        id: "in-place-edit",
        prefixes: &["sed -i", "perl -i", "chmod -R", "chown -R", "chgrp -R"],
        why: "rewrites files in place or changes permissions recursively",
    },
    Group {
        id: "publish",
        prefixes: &[
            "npm publish",
            "cargo publish",
            "docker push",
            "twine upload",
            "gh release create",
            "gh repo delete",
        ],
        why: "publishes or deletes beyond the project",
    },
    Group {
        id: "infrastructure",
        prefixes: &[
            "kubectl delete",
            "terraform destroy",
            "terraform apply",
            "docker rm",
            "dropdb",
        ],
        why: "changes or destroys infrastructure",
    },
    Group {
        id: "package-removal",
        prefixes: &[
            "pip uninstall",
            "npm uninstall",
            "apt remove",
            "apt-get remove",
            "apt purge",
            "brew uninstall",
        ],
        why: "removes installed packages",
    },
];

/// The regular expressions (Gemini's `commandRegex`: matched after `"command":"`, so from the
/// command's start) for what a prefix cannot say, with a command each must match.
pub const DESTRUCTIVE_REGEX: &[(&str, &str, &str)] = &[
    (
        "find-delete",
        r"find [^\x22]* -delete",
        "find . -name x -delete",
    ),
    (
        "sql-drop",
        r"[^\x22]*(DROP|drop) (TABLE|table|DATABASE|database) ",
        "psql -c 'DROP TABLE users'",
    ),
];

/// Claude Code's tool names (the policy's vocabulary) and Gemini CLI 0.61's for the same tool.
const TOOLS: &[(&str, &[&str])] = &[
    ("Bash", &["run_shell_command"]),
    ("Write", &["write_file"]),
    ("Edit", &["replace"]),
    ("MultiEdit", &["replace"]),
    ("Read", &["read_file", "read_many_files"]),
    ("LS", &["list_directory"]),
    ("Glob", &["glob"]),
    ("Grep", &["grep_search"]),
    ("WebFetch", &["web_fetch"]),
    ("WebSearch", &["google_web_search"]),
    ("AskUserQuestion", &["ask_user"]),
    ("ExitPlanMode", &["exit_plan_mode"]),
];

/// The file tools, whose pattern is a path (`file_path` in Gemini's arguments).
const FILE_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "Read"];

/// Gemini's tool names for a rule's tool glob (`*` stays `*`; `mcp__s__t` becomes `mcp_s_t`).
fn gemini_tools(rule: &UserRule) -> Vec<String> {
    let tool = rule.def.tool.as_str();
    if tool == "*" {
        return vec!["*".to_string()];
    }
    if let Some(rest) = tool.strip_prefix("mcp__") {
        return vec![format!("mcp_{}", rest.replacen("__", "_", 1))];
    }
    let mut names: Vec<String> = Vec::new();
    for (claude, gemini) in TOOLS {
        if rule.applies_to(claude) {
            for name in *gemini {
                if !names.iter().any(|n| n == name) {
                    names.push((*name).to_string());
                }
            }
        }
    }
    names
}

/// A literal as it appears inside a JSON string, escaped for a regular expression (the
/// characters Gemini's own `escapeRegex` escapes).
fn literal(text: &str) -> String {
    let json = serde_json::to_string(text).unwrap_or_default();
    let inner = &json[1..json.len().saturating_sub(1)];
    let mut out = String::new();
    for c in inner.chars() {
        if "-[]{}()*+?.,\\^$|#\"".contains(c) || c.is_whitespace() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A glob as a regular expression over the JSON-encoded text. For an allow rule `*` never
/// crosses a quote, a backslash or (for commands) a shell operator or substitution, so the
/// regex is at most as wide as autoctl's reading of the glob; `path`: `*` stays within a
/// directory, `**` crosses. For a deny rule (`wide`) `*` is any text: at least as wide.
fn glob(pattern: &str, path: bool, wide: bool) -> String {
    let any = if wide {
        ".*"
    } else if path {
        r#"[^/"\\]*"#
    } else {
        r#"[^"\\$`;&|<>()]*"#
    };
    let mut out = String::new();
    let mut run = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => {
                out.push_str(&literal(&run));
                run.clear();
                if c == '*' && chars.peek() == Some(&'*') {
                    chars.next();
                    out.push_str(r#"[^"\\]*"#);
                } else if c == '*' {
                    out.push_str(any);
                } else {
                    out.push_str(if path { r#"[^/"\\]"# } else { r#"[^"\\]"# });
                }
            }
            c => run.push(c),
        }
    }
    out.push_str(&literal(&run));
    out
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    // JSON's escapes are TOML's for a basic string (\" \\ \n \t \uXXXX).
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| toml_string(s)).collect();
    format!("[{}]", quoted.join(", "))
}

/// How a rule reads in Gemini's terms: the argument match (`commandRegex` or `argsPattern`
/// with its value), or why it cannot be exported exactly.
enum Match {
    Any,
    Command(String),
    Args(String),
}

fn rule_match(rule: &UserRule) -> Result<Match, &'static str> {
    let Some(pattern) = rule.def.pattern.as_deref() else {
        return Ok(Match::Any);
    };
    let tool = rule.def.tool.as_str();
    if tool == "Bash" {
        // `"command":"` comes before it; the closing quote anchors the end.
        return Ok(Match::Command(match rule.kind {
            Kind::Allow => format!("{}\"", glob(pattern, false, false)),
            // Gemini also checks each part of a chain by itself: a deny met anywhere in one.
            Kind::Deny => glob(pattern, false, true),
        }));
    }
    if FILE_TOOLS.contains(&tool) {
        if pattern.starts_with('/') {
            return Ok(Match::Args(format!(
                "\"file_path\":\"{}\"",
                glob(pattern, true, rule.kind == Kind::Deny)
            )));
        }
        if rule.kind == Kind::Deny {
            // Gemini sends absolute paths: a relative pattern is matched at any directory
            // (wider than autoctl's reading, which is the safe side for a deny).
            return Ok(Match::Args(format!(
                "\"file_path\":\".*{}\"",
                glob(pattern, true, true)
            )));
        }
        return Err(
            "a relative path: Gemini sends absolute paths and the project is not known here",
        );
    }
    if rule.kind == Kind::Deny {
        // Anywhere in the arguments' JSON: wider than autoctl's reading, safe for a deny.
        return Ok(Match::Args(glob(pattern, false, true)));
    }
    Err("a pattern over this tool's input has no exact form in Gemini's engine")
}

/// The exported file. `source`: where the rules came from (for the header). Its sections:
/// the user's deny rules, the destructive set, the user's allow rules, and what was not
/// exported.
pub fn export(policy: &Policy, source: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Gemini CLI policy generated by `autoctl policy export --gemini` from {source}."
    );
    out.push_str(
        "# Do not edit: change autoctl's policy and export again. autoctl's BeforeTool hook\n\
         # (`autoctl hook install --agent gemini`) stays the floor: this file matches text, the\n\
         # hook reads commands the way a shell does.\n",
    );
    let mut skipped: Vec<String> = Vec::new();
    export_denies(policy, &mut out, &mut skipped);
    export_destructive(policy, &mut out);
    export_allows(policy, &mut out, &mut skipped);
    if !skipped.is_empty() {
        out.push_str("\n# Not exported (autoctl's hook still applies them):\n");
        for line in skipped {
            let _ = writeln!(out, "#   {line}");
        }
    }
    out
}

/// The user's deny rules; one with no exact form or no Gemini tool is `skipped`.
fn export_denies(policy: &Policy, out: &mut String, skipped: &mut Vec<String>) {
    for rule in &policy.deny {
        let tools = gemini_tools(rule);
        let Ok(matched) = rule_match(rule) else {
            skipped.push(format!("{} (deny)", rule.label()));
            continue;
        };
        if tools.is_empty() {
            skipped.push(format!("{}: no Gemini tool has this name", rule.label()));
            continue;
        }
        push_rule(
            out,
            &format!("{}: deny", rule.label()),
            &tools,
            &matched,
            "deny",
            DENY_PRIORITY,
            Some(&rule.message()),
        );
    }
}

/// The destructive set: each group's command prefixes, then the regular expressions, with
/// the decision `on_destructive` says.
fn export_destructive(policy: &Policy, out: &mut String) {
    let decision = match policy.on_destructive {
        OnDestructive::Ask => "ask_user",
        OnDestructive::Deny => "deny",
    };
    let shell = vec!["run_shell_command".to_string()];
    for group in DESTRUCTIVE.iter().filter(|g| !g.prefixes.is_empty()) {
        let _ = writeln!(
            out,
            "\n# destructive:{}: {} (on_destructive: {})",
            group.id,
            group.why,
            match policy.on_destructive {
                OnDestructive::Ask => "ask",
                OnDestructive::Deny => "deny",
            }
        );
        out.push_str("[[rule]]\n");
        let _ = writeln!(out, "toolName = \"run_shell_command\"");
        let prefixes: Vec<String> = group.prefixes.iter().map(|p| p.to_string()).collect();
        let _ = writeln!(out, "commandPrefix = {}", toml_list(&prefixes));
        let _ = writeln!(out, "decision = \"{decision}\"");
        let _ = writeln!(out, "priority = {DESTRUCTIVE_PRIORITY}");
        let _ = writeln!(
            out,
            "denyMessage = {}",
            toml_string(&format!(
                "{} (autoctl destructive set: {})",
                group.why, group.id
            ))
        );
    }
    for (id, regex, _) in DESTRUCTIVE_REGEX {
        let why = DESTRUCTIVE
            .iter()
            .find(|g| g.id == *id)
            .map_or("drops or empties a database", |g| g.why);
        push_rule(
            out,
            &format!("destructive:{id}: {why}"),
            &shell,
            &Match::Command((*regex).to_string()),
            decision,
            DESTRUCTIVE_PRIORITY,
            Some(&format!("{why} (autoctl destructive set: {id})")),
        );
    }
}

/// The user's allow rules; one with no exact form or no Gemini tool is `skipped`.
fn export_allows(policy: &Policy, out: &mut String, skipped: &mut Vec<String>) {
    for rule in &policy.allow {
        let tools = gemini_tools(rule);
        match rule_match(rule) {
            Ok(matched) if !tools.is_empty() => push_rule(
                out,
                &format!("{}: allow", rule.label()),
                &tools,
                &matched,
                "allow",
                ALLOW_PRIORITY,
                None,
            ),
            Ok(_) => skipped.push(format!("{}: no Gemini tool has this name", rule.label())),
            Err(why) => skipped.push(format!("{}: {why}", rule.label())),
        }
    }
}

fn push_rule(
    out: &mut String,
    comment: &str,
    tools: &[String],
    matched: &Match,
    decision: &str,
    priority: u32,
    message: Option<&str>,
) {
    let _ = writeln!(out, "\n# {comment}");
    out.push_str("[[rule]]\n");
    let _ = if tools.len() == 1 {
        writeln!(out, "toolName = {}", toml_string(&tools[0]))
    } else {
        writeln!(out, "toolName = {}", toml_list(tools))
    };
    match matched {
        Match::Any => {}
        Match::Command(re) => {
            let _ = writeln!(out, "commandRegex = {}", toml_string(re));
        }
        Match::Args(re) => {
            let _ = writeln!(out, "argsPattern = {}", toml_string(re));
        }
    }
    let _ = writeln!(out, "decision = \"{decision}\"");
    let _ = writeln!(out, "priority = {priority}");
    if let Some(message) = message {
        let _ = writeln!(out, "denyMessage = {}", toml_string(message));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::destructive::dangers;
    use regex::Regex;

    /// Gemini's `commandPrefix` match (its `buildArgsPatterns`): the stable JSON of the
    /// arguments contains `"command":"PREFIX` followed by whitespace, a quote or `\"`.
    fn prefix_matches(prefix: &str, command: &str) -> bool {
        let json = serde_json::json!({ "command": command }).to_string();
        let encoded = serde_json::to_string(prefix).unwrap();
        let open = &encoded[..encoded.len() - 1];
        let re = format!(
            "{}(?:[\\s\"]|\\\\\")",
            regex::escape(&format!("\"command\":{open}"))
        );
        Regex::new(&re).unwrap().is_match(&json)
    }

    fn regex_matches(regex: &str, command: &str) -> bool {
        let json = serde_json::json!({ "command": command }).to_string();
        Regex::new(&format!("\"command\":\"{regex}"))
            .unwrap()
            .is_match(&json)
    }

    /// The drift test: every prefix and regex the export names is destructive to the engine
    /// (a prefix with an operand where the program needs one), so the exported file never
    /// claims more than autoctl's rules.
    #[test]
    fn every_exported_prefix_is_in_the_destructive_set() {
        for group in DESTRUCTIVE {
            for prefix in group.prefixes {
                let command = format!("{prefix} x");
                assert!(
                    !dangers(&command).is_empty(),
                    "{}: {command:?} is not in the destructive set",
                    group.id
                );
                assert!(prefix_matches(prefix, &command), "{prefix}");
            }
        }
        for (id, regex, sample) in DESTRUCTIVE_REGEX {
            assert!(!dangers(sample).is_empty(), "{id}: {sample:?}");
            assert!(regex_matches(regex, sample), "{id}: {regex} on {sample}");
        }
    }

    /// And the look-alikes the destructive set leaves alone are not met by a prefix.
    #[test]
    fn look_alikes_are_not_met() {
        let all: Vec<&str> = DESTRUCTIVE
            .iter()
            .flat_map(|g| g.prefixes.iter().copied())
            .collect();
        for harmless in [
            "rmdir empty",
            "git push origin feature",
            "git status",
            "grep -rf list .",
            "chmod 644 file",
            "sudoku",
            "killer-app --help",
            "git clean -n",
            "sshd -t",
        ] {
            assert!(dangers(harmless).is_empty(), "{harmless} is destructive");
            let met: Vec<&&str> = all.iter().filter(|p| prefix_matches(p, harmless)).collect();
            assert!(met.is_empty(), "{harmless} met by {met:?}");
            for (id, regex, _) in DESTRUCTIVE_REGEX {
                assert!(!regex_matches(regex, harmless), "{harmless} met by {id}");
            }
        }
    }

    /// The file's rules as JSON objects, parsed by a TOML parser (what Gemini's loader does).
    fn parse(text: &str) -> Vec<serde_json::Value> {
        let doc: toml_edit::DocumentMut = text.parse().unwrap();
        let value = |v: &toml_edit::Value| match v {
            toml_edit::Value::String(s) => serde_json::json!(s.value()),
            toml_edit::Value::Integer(i) => serde_json::json!(i.value()),
            toml_edit::Value::Array(a) => serde_json::Value::Array(
                a.iter()
                    .map(|x| serde_json::json!(x.as_str().unwrap()))
                    .collect(),
            ),
            other => panic!("unexpected {other}"),
        };
        doc["rule"]
            .as_array_of_tables()
            .unwrap()
            .iter()
            .map(|t| {
                serde_json::Value::Object(
                    t.iter()
                        .map(|(k, v)| (k.to_string(), value(v.as_value().unwrap())))
                        .collect(),
                )
            })
            .collect()
    }

    fn policy(json: &str) -> Policy {
        Policy::from_bytes(json.as_bytes(), "p.json").unwrap()
    }

    #[test]
    fn user_rules_become_gemini_rules() {
        let p = policy(
            r#"{"on_destructive":"deny",
                "allow":[{"id":"deploy","tool":"Bash","pattern":"./scripts/deploy-staging.sh *"},
                         {"id":"docs","tool":"Write","pattern":"docs/*.md"},
                         {"id":"etc","tool":"Read","pattern":"/srv/data/**"}],
                "deny":[{"id":"no-prod","tool":"Bash","pattern":"* --env=prod*","message":"never prod"},
                        {"id":"secrets","tool":"Read","pattern":"secrets/*"},
                        {"id":"gh","tool":"mcp__github__*"}]}"#,
        );
        let text = export(&p, "p.json");
        let rules = parse(&text);
        let by = |needle: &str| {
            rules
                .iter()
                .find(|r| r.to_string().contains(needle))
                .unwrap_or_else(|| panic!("no rule with {needle}:\n{text}"))
        };
        let prod = by("never prod");
        assert_eq!(prod["decision"].as_str(), Some("deny"));
        assert_eq!(prod["priority"].as_i64(), Some(900));
        let re = prod["commandRegex"].as_str().unwrap();
        assert!(regex_matches(re, "kubectl apply --env=production"));
        assert!(!regex_matches(re, "kubectl apply --env=staging"));
        assert!(regex_matches(re, "kubectl apply --env=prod $(date)"));
        let deploy = rules
            .iter()
            .find(|r| r["decision"].as_str() == Some("allow") && r.get("commandRegex").is_some())
            .unwrap();
        let re = deploy["commandRegex"].as_str().unwrap();
        assert!(regex_matches(re, "./scripts/deploy-staging.sh --dry-run"));
        // `*` never covers a substitution, an operator or a quote.
        assert!(!regex_matches(
            re,
            "./scripts/deploy-staging.sh $(rm -rf /)"
        ));
        assert!(!regex_matches(
            re,
            "./scripts/deploy-staging.sh x; rm -rf /"
        ));
        let secrets = by("secrets");
        let re = Regex::new(secrets["argsPattern"].as_str().unwrap()).unwrap();
        assert!(re.is_match(r#"{"file_path":"/home/u/proj/secrets/key.txt"}"#));
        assert_eq!(by("mcp_github_*")["decision"].as_str(), Some("deny"));
        let srv = by("/srv/data");
        assert_eq!(srv["toolName"].as_array().unwrap().len(), 2);
        assert_eq!(srv["decision"].as_str(), Some("allow"));
        // A relative allow is named as not exported.
        assert!(text.contains("#   user:docs: a relative path"));
        // on_destructive: deny denies the set.
        let rm = by("\"rimraf\"");
        assert_eq!(rm["decision"].as_str(), Some("deny"));
        assert_eq!(rm["priority"].as_i64(), Some(800));
        // Every rule is one Gemini's schema takes: a tool, a decision, a priority in 0–999,
        // and no field outside its schema.
        // Gemini drops a pattern its `isSafeRegExp` calls a ReDoS risk.
        let nested = Regex::new(r"\([^)]*[*+?{].*\)[*+?{]").unwrap();
        for rule in rules {
            let table = rule.as_object().unwrap();
            for key in table.keys() {
                assert!(
                    [
                        "toolName",
                        "commandPrefix",
                        "commandRegex",
                        "argsPattern",
                        "decision",
                        "priority",
                        "denyMessage"
                    ]
                    .contains(&key.as_str()),
                    "{key}"
                );
            }
            assert!(rule["priority"].as_i64().unwrap() <= 999);
            for key in ["commandRegex", "argsPattern"] {
                if let Some(p) = rule.get(key).and_then(|p| p.as_str()) {
                    assert!(!nested.is_match(p) && p.len() <= 2048, "{p}");
                }
            }
        }
    }

    #[test]
    fn built_in_rules_ask_for_the_destructive_set() {
        let text = export(&Policy::builtin(), "built-in rules");
        let rules = parse(&text);
        assert!(
            rules
                .iter()
                .all(|r| r["decision"].as_str() == Some("ask_user"))
        );
        assert_eq!(rules.len(), DESTRUCTIVE.len() - 1 + DESTRUCTIVE_REGEX.len());
    }
}
