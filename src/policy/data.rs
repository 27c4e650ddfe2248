//! The built-in rules as data: `rules/policy.json` is the one place a reader learns what
//! the policy approves and what it names destructive. It holds
//!
//! - `rules`: each named allow rule (`read-only`, `runner`, `mkdir`, `write-in-project`,
//!   `git-write`), what it approves in words (docs/policy.md's table is generated from it),
//!   and `match` / `not_match` examples: calls the rule approves and calls no rule approves;
//! - `destructive`: the one list of destructive ids, each with its explanation and examples
//!   the destructive set names (`match`) or does not (`not_match`); ids marked
//!   `"door": "screen"` are named only on a permission screen (`rules/pane-rules.json`);
//! - `read_only_programs`: every read-only program's listed flags and what its operands are,
//!   with examples;
//! - `runner_tools`: each test runner, linter and formatter's flags, subcommands and what its
//!   operands are (files it rewrites, tests it runs, files it reads), with examples;
//! - `flag_tables`: the flags of cargo (and of its test, clippy and fmt arguments after
//!   `--`), of npm/pnpm/yarn, of `python -m unittest`, and of every git subcommand a rule
//!   reads (with what a git inspection's operands are), each with examples;
//! - `secret_names` and `sensitive_names`: the path components that are secrets (never
//!   read) or that no write may touch, each with the reason a refusal gives, and examples
//!   refused for that reason beside neighbours approved;
//! - `lists`: word lists, each saying what it is and with examples it decides one way
//!   (`match_is`) and neighbours decided the other: runner targets, script subcommands,
//!   risky script words, interpreters and their flags, cargo's and go's subcommands, go's and
//!   make's flags, `npx` programs, `python -m` modules, default branches, system directories,
//!   read-only roots and files, build directories, source extensions and names, dependency
//!   directories, the names a secret may have, and the programs whose `--version` is
//!   harmless.
//!
//! build.rs compiles all of it but the examples into the binary (nothing is parsed at
//! start-up); the examples are checked both ways by this module's tests, against the same
//! [`super::decide`] every door uses. The Rust that remains elsewhere is the engine: the
//! shell reader, argument matching, path resolution and folding, and how each runner's and
//! git subcommand's arguments are read (which operand is a target, a path or a refspec).

use super::argv::Spec;

/// What a read-only program's operands are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    /// No operands at all (`pwd`; `hostname NAME` would set the name).
    None,
    /// Text that is not a path (echo's words, tr's sets).
    Text,
    /// Paths it reads.
    Paths,
    /// At most this many paths (`uniq IN OUT` writes OUT).
    MaxPaths(usize),
    /// A pattern, then paths (grep, rg) — unless the pattern came with `-e`/`-f`.
    PatternThenPaths,
}

/// A read-only program: the flags it may be given and what its operands are.
#[derive(Debug, Clone, Copy)]
pub struct ReadOnly {
    pub spec: Spec,
    pub operands: Operands,
}

/// What a runner tool's operands are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolOperands {
    /// Files it may rewrite (formatters, `--fix`): inside the project, never sensitive.
    Rewrites,
    /// Tests it imports and runs: only the project's.
    Runs,
    /// Files it reads.
    Reads,
}

/// A test runner, linter or formatter: its flags, the subcommands it needs first (none:
/// none needed) and what its operands are.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    pub spec: Spec,
    pub subcommands: &'static [&'static str],
    pub operands: ToolOperands,
}

/// What a git inspection's operands may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitOperands {
    /// Revisions only.
    Revisions,
    /// Revisions and paths (a secret is never shown).
    Paths,
    /// A pattern first (`git grep PATTERN PATHS`), unless given with `-e`/`-f`.
    PatternThenPaths,
    /// `REV:PATH` objects: the path after the colon.
    AfterColon,
}

/// A sensitive or secret name: a path component (folded by [`super::paths::fold_name`])
/// that is one of `names`, starts with one of `prefixes` or ends with one of `suffixes`, or
/// whose stem is one of `stems` with no extension or one of `extensions`; and, when given,
/// followed by a component in `next` or starting with one of `next_prefixes`, preceded by
/// one in `after`, or the path's last (`last`).
#[derive(Debug, Clone, Copy)]
pub struct NameRule {
    pub names: &'static [&'static str],
    pub prefixes: &'static [&'static str],
    pub suffixes: &'static [&'static str],
    pub stems: &'static [&'static str],
    pub extensions: &'static [&'static str],
    pub next: &'static [&'static str],
    pub next_prefixes: &'static [&'static str],
    pub after: &'static [&'static str],
    pub last: bool,
    /// What the name holds, as a reason says it.
    pub why: &'static str,
}

impl NameRule {
    /// Does component `i` of `names` (folded) hit this rule?
    pub fn hits(&self, names: &[String], i: usize) -> bool {
        let name = names[i].as_str();
        let stem_hit = || {
            let (stem, ext) = match name.split_once('.') {
                Some((stem, ext)) => (stem, Some(ext)),
                None => (name, None),
            };
            self.stems.contains(&stem)
                && ext.is_none_or(|ext| {
                    self.extensions
                        .contains(&ext.rsplit('.').next().unwrap_or(ext))
                })
        };
        let named = self.names.contains(&name)
            || self.prefixes.iter().any(|p| name.starts_with(p))
            || self.suffixes.iter().any(|s| name.ends_with(s))
            || stem_hit();
        let next = names.get(i + 1).map(String::as_str);
        let next_ok = (self.next.is_empty() && self.next_prefixes.is_empty())
            || next.is_some_and(|n| {
                self.next.contains(&n) || self.next_prefixes.iter().any(|p| n.starts_with(p))
            });
        let after_ok =
            self.after.is_empty() || (i > 0 && self.after.contains(&names[i - 1].as_str()));
        named && next_ok && after_ok && (!self.last || i + 1 == names.len())
    }
}

/// The first rule of `rules` a component of `names` hits, component by component.
pub fn name_hit(rules: &[NameRule], names: &[String]) -> Option<&'static str> {
    (0..names.len()).find_map(|i| rules.iter().find(|r| r.hits(names, i)).map(|r| r.why))
}

include!(concat!(env!("OUT_DIR"), "/policy_rules.rs"));

/// Is this an interpreter that runs a script file or inline code (`python3.12` is `python`)?
pub fn is_interpreter(name: &str) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.contains(&base)
}

/// docs/policy.md with its table of built-in rules regenerated from [`RULES`]: the rows
/// between the table's header and the `user:ID` row are replaced. `None` when the page has
/// no such table.
pub fn rule_table_in(page: &str) -> Option<String> {
    let lines: Vec<&str> = page.lines().collect();
    let header = lines.iter().position(|l| *l == "| rule | approves |")?;
    let user = header
        + lines[header..]
            .iter()
            .position(|l| l.starts_with("| `user:ID`"))?;
    let mut out: Vec<String> = lines[..header + 2].iter().map(|l| l.to_string()).collect();
    for (id, approves) in RULES {
        out.push(format!("| `{id}` | {} |", approves.replace('|', "\\|")));
    }
    out.extend(lines[user..].iter().map(|l| l.to_string()));
    let mut text = out.join("\n");
    if page.ends_with('\n') {
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    use serde_json::{Value, json};

    use super::*;
    use crate::policy::{
        Context, Policy, Verdict, decide, destructive, destructive_marker, subject,
    };

    const DATA: &str = include_str!("../../rules/policy.json");

    fn data() -> Value {
        serde_json::from_str(DATA).expect("rules/policy.json is JSON")
    }

    /// The context every example is judged in: a project at /home/dev/proj, its repository's
    /// top (as the policy's own table tests use).
    fn ctx() -> Context {
        Context {
            cwd: Some(PathBuf::from("/home/dev/proj")),
            project: None,
            home: Some(PathBuf::from("/home/dev")),
            protected: vec![PathBuf::from("/home/dev/.config/autoctl")],
            git_top: true,
        }
    }

    /// An example as a tool call: a string is a Bash command, an object names its tool and
    /// carries the tool's input.
    fn call(example: &Value) -> (String, Value) {
        match example {
            Value::String(command) => ("Bash".to_string(), json!({ "command": command })),
            Value::Object(fields) => {
                let tool = fields["tool"]
                    .as_str()
                    .expect("an example's tool")
                    .to_string();
                let mut input = fields.clone();
                input.remove("tool");
                (tool, Value::Object(input))
            }
            other => panic!("an example is a command or a tool call: {other}"),
        }
    }

    fn examples<'a>(entry: &'a Value, key: &str) -> &'a [Value] {
        entry[key].as_array().map(Vec::as_slice).unwrap_or(&[])
    }

    /// `match`: approved, this rule among the proof; `not_match`: approved by no rule.
    fn check_allow_examples(id: &str, entry: &Value, wrong: &mut Vec<String>) {
        let policy = Policy::builtin();
        if examples(entry, "match").is_empty() || examples(entry, "not_match").is_empty() {
            wrong.push(format!("{id}: needs match and not_match examples"));
        }
        for example in examples(entry, "match") {
            let (tool, input) = call(example);
            let d = decide(&policy, &tool, &input, &ctx());
            if d.decision != Verdict::Allow || !d.rule.split('+').any(|r| r == id) {
                wrong.push(format!(
                    "{id}: match {example} was {} {}: {}",
                    d.decision.as_str(),
                    d.rule,
                    d.reason
                ));
            }
        }
        for example in examples(entry, "not_match") {
            let (tool, input) = call(example);
            let d = decide(&policy, &tool, &input, &ctx());
            if d.decision == Verdict::Allow {
                wrong.push(format!(
                    "{id}: not_match {example} was allowed by {}",
                    d.rule
                ));
            }
        }
    }

    #[test]
    fn every_rule_approves_its_matches_and_nothing_of_its_not_matches() {
        let data = data();
        let mut wrong = Vec::new();
        for rule in data["rules"].as_array().unwrap() {
            check_allow_examples(rule["id"].as_str().unwrap(), rule, &mut wrong);
        }
        for program in data["read_only_programs"].as_array().unwrap() {
            let names = program["programs"].to_string();
            check_allow_examples("read-only", program, &mut wrong);
            // Each example runs one of the entry's own programs (the first word).
            for example in examples(program, "match") {
                let first = example.as_str().unwrap().split_whitespace().next().unwrap();
                if !program["programs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p == first)
                {
                    wrong.push(format!("{names}: match {example} runs another program"));
                }
            }
        }
        assert!(wrong.is_empty(), "rules/policy.json:\n{}", wrong.join("\n"));
    }

    #[test]
    fn every_runner_tool_and_flag_table_approves_its_matches_and_nothing_of_its_not_matches() {
        let data = data();
        let mut wrong = Vec::new();
        for tool in data["runner_tools"].as_array().unwrap() {
            check_allow_examples("runner", tool, &mut wrong);
            for example in examples(tool, "match") {
                let first = example.as_str().unwrap().split_whitespace().next().unwrap();
                if !tool["programs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p == first)
                {
                    wrong.push(format!(
                        "{}: match {example} runs another program",
                        tool["programs"]
                    ));
                }
            }
        }
        for (name, table) in data["flag_tables"].as_object().unwrap() {
            let rule = table["rule"].as_str().unwrap();
            let before = wrong.len();
            check_allow_examples(rule, table, &mut wrong);
            for line in &mut wrong[before..] {
                *line = format!("flag_tables.{name}: {line}");
            }
        }
        assert!(wrong.is_empty(), "rules/policy.json:\n{}", wrong.join("\n"));
    }

    /// A list's examples: with `"match_is": "allow"` its matches are approved and its
    /// not_matches are not; with `"refuse"` the other way round.
    #[test]
    fn every_list_decides_its_examples_both_ways() {
        let data = data();
        let policy = Policy::builtin();
        let mut wrong = Vec::new();
        for (name, list) in data["lists"].as_object().unwrap() {
            let allow = match list["match_is"].as_str() {
                Some("allow") => true,
                Some("refuse") => false,
                other => panic!("lists.{name}: match_is {other:?}"),
            };
            if examples(list, "match").is_empty() || examples(list, "not_match").is_empty() {
                wrong.push(format!("lists.{name}: needs match and not_match examples"));
            }
            for (key, approved) in [("match", allow), ("not_match", !allow)] {
                for example in examples(list, key) {
                    let (tool, input) = call(example);
                    let d = decide(&policy, &tool, &input, &ctx());
                    if (d.decision == Verdict::Allow) != approved {
                        wrong.push(format!(
                            "lists.{name}: {key} {example} was {} {}: {}",
                            d.decision.as_str(),
                            d.rule,
                            d.reason
                        ));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "rules/policy.json:\n{}", wrong.join("\n"));
    }

    /// A secret or sensitive name's matches are refused for its reason; its not_matches
    /// (neighbours that only look alike) are approved.
    #[test]
    fn every_sensitive_and_secret_name_refuses_its_matches_and_approves_its_neighbours() {
        let data = data();
        let policy = Policy::builtin();
        let mut wrong = Vec::new();
        for field in ["secret_names", "sensitive_names"] {
            for entry in data[field].as_array().unwrap() {
                let why = entry["why"].as_str().unwrap();
                if examples(entry, "match").is_empty() || examples(entry, "not_match").is_empty() {
                    wrong.push(format!("{field} {why}: needs match and not_match examples"));
                }
                for example in examples(entry, "match") {
                    let (tool, input) = call(example);
                    let d = decide(&policy, &tool, &input, &ctx());
                    if d.decision == Verdict::Allow || !d.reason.contains(why) {
                        wrong.push(format!(
                            "{field} {why}: match {example} was {} {}: {}",
                            d.decision.as_str(),
                            d.rule,
                            d.reason
                        ));
                    }
                }
                for example in examples(entry, "not_match") {
                    let (tool, input) = call(example);
                    let d = decide(&policy, &tool, &input, &ctx());
                    if d.decision != Verdict::Allow {
                        wrong.push(format!(
                            "{field} {why}: not_match {example} was {} {}: {}",
                            d.decision.as_str(),
                            d.rule,
                            d.reason
                        ));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "rules/policy.json:\n{}", wrong.join("\n"));
    }

    /// The destructive ids a call hits (the whole set for a command, the sensitive-path
    /// marker for a write).
    fn named(example: &Value) -> Vec<String> {
        let (tool, input) = call(example);
        match subject(&tool, &input).expect("an example is a whole call") {
            crate::policy::Subject::Command(script) => destructive::dangers(&script)
                .into_iter()
                .map(|d| d.id.to_string())
                .collect(),
            other => destructive_marker(&other, &ctx())
                .into_iter()
                .map(|(id, _)| id)
                .collect(),
        }
    }

    #[test]
    fn every_destructive_id_names_its_matches_and_not_its_not_matches() {
        let data = data();
        let mut wrong = Vec::new();
        for entry in data["destructive"].as_array().unwrap() {
            let id = entry["id"].as_str().unwrap();
            if entry["door"] == "screen" {
                continue;
            }
            if id != "unreadable" && examples(entry, "match").is_empty() {
                wrong.push(format!("{id}: no match example"));
            }
            for example in examples(entry, "match") {
                let ids = named(example);
                if !ids.iter().any(|i| i == id) {
                    wrong.push(format!("{id}: match {example} was named {ids:?}"));
                }
                let (tool, input) = call(example);
                let d = decide(&Policy::builtin(), &tool, &input, &ctx());
                if d.decision == Verdict::Allow {
                    wrong.push(format!("{id}: match {example} was allowed by {}", d.rule));
                }
            }
            for example in examples(entry, "not_match") {
                if named(example).iter().any(|i| i == id) {
                    wrong.push(format!("{id}: not_match {example} was named {id}"));
                }
            }
        }
        // `unreadable` cannot be written down: a line nested deeper than the reader reads.
        let deep = format!(
            "{}x{}",
            "$(".repeat(crate::shell::MAX_NESTING + 2),
            ")".repeat(crate::shell::MAX_NESTING + 2)
        );
        assert_eq!(
            named(&json!(deep)).first().map(String::as_str),
            Some("unreadable")
        );
        assert!(wrong.is_empty(), "rules/policy.json:\n{}", wrong.join("\n"));
    }

    /// The ids written in the engine's code: `add(found, "ID", …)`, `id: "ID"` and the
    /// sensitive-path marker of a write.
    fn ids_in_code() -> BTreeSet<String> {
        let code = [include_str!("destructive.rs"), include_str!("mod.rs")];
        let re = regex::Regex::new(
            r#"(?s)(?:add\(\s*found,\s*|\bid:\s*|\(\s*)"([a-z][a-z-]*)"(?:\s*,\s*words|,\n\s*command|\.to_string\(\),\n\s*format!\("writes)"#,
        )
        .unwrap();
        code.iter()
            .flat_map(|c| {
                re.captures_iter(c)
                    .map(|m| m[1].to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn one_list_of_destructive_ids() {
        let data = data();
        let listed: Vec<&str> = data["destructive"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap())
            .collect();
        assert_eq!(listed, DESTRUCTIVE_IDS, "build.rs compiled the same list");
        let unique: BTreeSet<&str> = listed.iter().copied().collect();
        assert_eq!(unique.len(), listed.len(), "an id is listed twice");
        let policy_ids: BTreeSet<String> = data["destructive"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["door"] != "screen")
            .map(|d| d["id"].as_str().unwrap().to_string())
            .collect();
        // Every id the engine can name is listed (and every listed one is named by one of
        // its examples, above).
        let code = ids_in_code();
        assert_eq!(code.len(), 29, "the scan found the engine's ids: {code:?}");
        let unlisted: Vec<&String> = code.difference(&policy_ids).collect();
        assert!(
            unlisted.is_empty(),
            "named in the code, not in rules/policy.json: {unlisted:?}"
        );
        // A permission screen's markers are on the same list.
        let panes: Value =
            serde_json::from_str(include_str!("../../rules/pane-rules.json")).unwrap();
        for marker in panes["destructive"].as_array().unwrap() {
            let id = marker["id"].as_str().unwrap();
            assert!(
                unique.contains(id),
                "rules/pane-rules.json's {id} is not in rules/policy.json"
            );
        }
    }

    #[test]
    fn the_program_table_and_lists_are_the_data_files() {
        let data = data();
        assert_eq!(
            data["lists"]["runner_targets"]["words"],
            json!(RUNNER_TARGETS)
        );
        assert_eq!(data["lists"]["interpreters"]["words"], json!(INTERPRETERS));
        assert_eq!(
            data["lists"]["secret_samples"]["words"],
            json!(SECRET_SAMPLES)
        );
        assert_eq!(
            data["secret_names"].as_array().unwrap().len(),
            SECRET_NAMES.len()
        );
        assert_eq!(
            data["sensitive_names"].as_array().unwrap().len(),
            SENSITIVE_NAMES.len()
        );
        assert!(runner_tool("pytest").is_some() && runner_tool("rm").is_none());
        assert_eq!(
            git_inspection("whatchanged").map(|(_, operands)| operands),
            Some(GitOperands::Paths)
        );
        assert!(git_inspection("push").is_none());
        let programs = data["read_only_programs"].as_array().unwrap();
        let mut seen = BTreeSet::new();
        for program in programs {
            for name in program["programs"].as_array().unwrap() {
                let name = name.as_str().unwrap();
                assert!(seen.insert(name), "{name} has two entries");
                let compiled = read_only_program(name).expect("compiled in");
                assert_eq!(program["short"], compiled.spec.short, "{name}");
                assert_eq!(program["long"], json!(compiled.spec.long), "{name}");
            }
        }
        assert!(read_only_program("rm").is_none());
        assert!(is_interpreter("python3.12") && !is_interpreter("make"));
    }

    #[test]
    fn the_rule_table_is_regenerated_in_place() {
        let page = "# P\n\n| rule | approves |\n| --- | --- |\n| `old` | x |\n| `user:ID` | yours |\n\nafter\n";
        let text = rule_table_in(page).unwrap();
        assert!(text.starts_with("# P\n\n| rule | approves |\n| --- | --- |\n| `read-only` | "));
        assert!(!text.contains("`old`"));
        assert!(text.ends_with("| `user:ID` | yours |\n\nafter\n"));
        assert!(
            text.contains("`cargo build\\|test"),
            "a | in a cell is escaped"
        );
        assert_eq!(rule_table_in("no table"), None);
    }
}
