//! The built-in rules as data: `rules/policy.json` is the one place a reader learns what
//! the policy approves and what it names destructive. It holds
//!
//! - `rules`: each named allow rule (`read-only`, `runner`, `mkdir`, `write-in-project`,
//!   `git-write`), what it approves in words (docs/policy.md's table is generated from it),
//!   and `match` / `not_match` examples: calls the rule approves and calls no rule approves;
//! - `destructive`: the one list of destructive ids, each with its explanation and examples
//!   the destructive set names (`match`) or does not (`not_match`); ids marked
//!   `"door": "screen"` are named only on a permission screen (`rules/pane-rules.json`);
//! - `destructive_programs`: the programs the destructive set names by their name and one
//!   argument word (infrastructure, dropping a database, publishing), each with its id,
//!   explanation and examples (the rest of the set is read by [`super::destructive`]);
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
//! start-up); the examples are checked both ways by [`super::examples`] (its tests and
//! `autoctl policy test`), against the same [`super::decide`] every door uses. The Rust that remains elsewhere is the engine: the
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

/// A program the destructive set names by its name alone (`words` empty) or with one of
/// `words` among its arguments (`kubectl delete …`, `npm publish`).
#[derive(Debug, Clone, Copy)]
pub struct DestructiveProgram {
    pub id: &'static str,
    pub programs: &'static [&'static str],
    pub words: &'static [&'static str],
    pub explanation: &'static str,
}

/// The first of [`DESTRUCTIVE_PROGRAMS`] that names `name` run with `args`.
pub fn destructive_program(name: &str, args: &[String]) -> Option<&'static DestructiveProgram> {
    DESTRUCTIVE_PROGRAMS.iter().find(|rule| {
        rule.programs.contains(&name)
            && (rule.words.is_empty() || args.iter().any(|a| rule.words.contains(&a.as_str())))
    })
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

    use serde_json::{Value, json};

    use super::*;

    // Every entry's examples are checked by `policy::examples` (and `autoctl policy test`).
    fn data() -> Value {
        serde_json::from_str(crate::policy::examples::BUILTIN_SOURCE)
            .expect("rules/policy.json is JSON")
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
