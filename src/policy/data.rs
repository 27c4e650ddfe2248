//! The built-in rules as data: `rules/policy.json` is the one place a reader learns what
//! the policy approves and what it names destructive. It holds
//!
//! - `rules`: each named allow rule (`read-only`, `runner`, `mkdir`, `write-in-project`,
//!   `git-write`), what it approves in words (docs/policy.md's table is generated from it),
//!   and `match` / `not_match` examples: calls the rule approves and calls no rule approves;
//! - `destructive`: the one list of destructive ids, each with its explanation and examples
//!   the destructive set names (`match`) or does not (`not_match`); ids marked
//!   `"door": "screen"` are named only on a permission screen (`rules/pane-rules.json`);
//! - `destructive_programs`: the destructive set's program table — each entry a program, the
//!   subcommand it needs and tests on its arguments ([`ArgTest`]), with its id, explanation
//!   and examples; the first entry that holds names the call (the rest of the set is read by
//!   [`super::destructive`]);
//! - `read_only_programs`: every read-only program's listed flags and what its operands are,
//!   with examples;
//! - `runner_tools`: each test runner, linter and formatter's flags, subcommands and what its
//!   operands are (files it rewrites, tests it runs, files it reads), with examples;
//! - `flag_tables`: the flags of cargo (and of its test, clippy and fmt arguments after
//!   `--`), of npm/pnpm/yarn, of `python -m unittest`, of go (in Go's flag syntax), and of
//!   every git subcommand a rule reads (with what a git inspection's operands are), with the
//!   flags whose value must be a directory of the project or is a runner's output, each
//!   with examples;
//! - `secret_names` and `sensitive_names`: the path components that are secrets (never
//!   read) or that no write may touch, each with the reason a refusal gives, and examples
//!   refused for that reason beside neighbours approved;
//! - `lists`: word lists, each saying what it is and with examples it decides one way
//!   (`match_is`) and neighbours decided the other: runner targets, script subcommands,
//!   risky script words, interpreters and their flags, cargo's and go's subcommands, make's
//!   flags (its count, directory and `=VALUE` ones), `set`'s and find's words, the report
//!   flags and their directory kinds, `npx` programs, `python -m` modules, default branches,
//!   what `git push` reads (a remote's characters, the refspec's `:`, the ref namespaces),
//!   commit's message file flags, system directories,
//!   read-only roots and files, build directories, source extensions and names, dependency
//!   directories, the names a secret may have, and the programs whose `--version` is
//!   harmless; and the words the destructive set's reading of a whole line uses
//!   (downloaders and their output flags, programs that print nothing, disk devices, prompt
//!   glyphs, root runners, SQL clients and searches, …), whose examples say the id they are
//!   named by (`"match_is": "named:ID"` or `"not_named:ID"`);
//! - `argument_forms`: the spellings in which a program or a git subcommand does only what
//!   its rule approves ([`Forms`], read by [`super::forms`]), each entry with examples.
//!
//! build.rs compiles all of it but the examples into the binary (nothing is parsed at
//! start-up); the examples are checked both ways by [`super::examples`] (its tests and
//! `autoctl policy test`), against the same [`super::decide`] every door uses. The Rust that remains elsewhere is the engine: the
//! shell reader, argument matching, path resolution and folding, and how each runner's and
//! git subcommand's operands are read (which is a target, a path or a refspec).

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
    /// A sed script that only prints (unless given with `-e`), then paths.
    SedScriptThenPaths,
    /// An awk program with none of the refused words, then paths.
    AwkProgramThenPaths,
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

/// One spelling of a program's arguments (`argument_forms` of rules/policy.json; read by
/// [`super::forms`]): for `programs` only (when given), the first words `lead`, then the
/// rest either exactly the words `args`, or read against the flag table `flags` (an unlisted
/// flag refuses the call when `refuses_unlisted`; `first_is_option`: the rest is empty or
/// starts with an option), its operands exactly `operands` (when given), one of `with_any`
/// given (when listed) and none of `without`. Words are patterns: literals, alternatives
/// split by `|`, placeholders in capitals, a last word ending in `...` repeats.
#[derive(Debug, Clone, Copy)]
pub struct Form {
    pub programs: &'static [&'static str],
    pub lead: &'static [&'static str],
    pub args: Option<&'static [&'static str]>,
    pub flags: Option<Spec>,
    pub refuses_unlisted: bool,
    pub first_is_option: bool,
    pub operands: Option<&'static [&'static str]>,
    pub with_any: &'static [&'static str],
    pub without: &'static [&'static str],
}

/// An entry of `argument_forms`: its forms, tried in order, after the `drop` words are
/// taken out wherever they stand; `listed` says the forms in a refusal's words, `refusal`
/// (when given) is the whole reason a call no form holds for is refused.
#[derive(Debug, Clone, Copy)]
pub struct Forms {
    pub listed: &'static str,
    pub refusal: &'static str,
    pub drop: &'static [&'static str],
    pub forms: &'static [Form],
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

/// A test on a command's arguments (an entry of `destructive_programs`' `all`, `any` or
/// `unless`; docs/policy.md lists them). Options are the arguments before a `--`; an
/// operand is an argument that does not start with `-`.
#[derive(Debug, Clone, Copy)]
pub enum ArgTest {
    /// The program is the command itself, not a later word tried as one (`xargs rm`).
    IsCommand,
    /// There is at least one argument.
    HasArgs,
    /// A cluster of short options (`-rf`) holds one of these letters.
    Short(&'static str),
    /// A cluster of short options ends with one of these letters (`-c`, `-Bc`: the next
    /// argument is its value).
    ShortLast(&'static str),
    /// A long option, abbreviated to at least so many letters (`--rec` is `--recursive`).
    Long(&'static [(&'static str, usize)]),
    /// An argument is one of these.
    Word(&'static [&'static str]),
    /// An argument is one of these in any letter case.
    WordAnyCase(&'static [&'static str]),
    /// An argument starts with one of these (and is not one of the exceptions).
    Prefix(&'static [&'static str], &'static [&'static str]),
    /// An argument starts with one of these in any letter case.
    PrefixAnyCase(&'static [&'static str]),
    /// An argument contains one of these in any letter case.
    ContainsAnyCase(&'static [&'static str]),
    /// The first argument is one of these.
    FirstArg(&'static [&'static str]),
    /// The first operand is one of these, or starts with one of the prefixes.
    FirstOperand(&'static [&'static str], &'static [&'static str]),
    /// The arguments are exactly these.
    Args(&'static [&'static str]),
    /// There are arguments and every one is one of these.
    Only(&'static [&'static str]),
    /// At least so many operands after the leading options, where a two-letter option
    /// whose letter is listed takes the next argument as its value (`ssh -p 22 HOST CMD`).
    Operands(usize, &'static str),
    /// The value of the first of these options (`-X POST`, `-XPOST`, `--request=POST`) is
    /// one of the words, in any letter case.
    ValueOf(&'static [&'static str], &'static [&'static str]),
}

/// Every argument in letters of one case, for the `…AnyCase` tests: lower and upper case
/// both, so a word in either spelling of a folded letter is found.
fn same_any_case(arg: &str, word: &str) -> bool {
    arg.to_lowercase() == word.to_lowercase() || arg.to_uppercase() == word.to_uppercase()
}

impl ArgTest {
    /// Does the test hold for `args` (the program's arguments, or a subcommand's)?
    pub fn holds(&self, args: &[String], is_command: bool) -> bool {
        let options = || args.iter().take_while(|a| a.as_str() != "--");
        let cluster = |a: &&String| a.starts_with('-') && !a.starts_with("--");
        let first_operand = || args.iter().find(|a| !a.starts_with('-'));
        match *self {
            ArgTest::IsCommand => is_command,
            ArgTest::HasArgs => !args.is_empty(),
            ArgTest::Short(letters) => options()
                .filter(cluster)
                .any(|a| a[1..].chars().any(|c| letters.contains(c))),
            ArgTest::ShortLast(letters) => options()
                .filter(cluster)
                .any(|a| a.chars().last().is_some_and(|c| letters.contains(c))),
            ArgTest::Long(names) => options().any(|a| {
                names
                    .iter()
                    .any(|(name, min)| crate::shell::is_long_option(a, name, *min))
            }),
            ArgTest::Word(words) => args.iter().any(|a| words.contains(&a.as_str())),
            ArgTest::WordAnyCase(words) => args
                .iter()
                .any(|a| words.iter().any(|w| same_any_case(a, w))),
            ArgTest::Prefix(prefixes, except) => args.iter().any(|a| {
                prefixes.iter().any(|p| a.starts_with(p)) && !except.contains(&a.as_str())
            }),
            ArgTest::PrefixAnyCase(prefixes) => args.iter().any(|a| {
                let lower = a.to_lowercase();
                prefixes.iter().any(|p| lower.starts_with(p))
            }),
            ArgTest::ContainsAnyCase(parts) => args.iter().any(|a| {
                let lower = a.to_lowercase();
                parts.iter().any(|p| lower.contains(p))
            }),
            ArgTest::FirstArg(words) => args.first().is_some_and(|a| words.contains(&a.as_str())),
            ArgTest::FirstOperand(words, prefixes) => first_operand().is_some_and(|a| {
                words.contains(&a.as_str()) || prefixes.iter().any(|p| a.starts_with(p))
            }),
            ArgTest::Args(words) => args.iter().map(String::as_str).eq(words.iter().copied()),
            ArgTest::Only(words) => {
                !args.is_empty() && args.iter().all(|a| words.contains(&a.as_str()))
            }
            ArgTest::Operands(at_least, valued) => {
                let mut i = 0;
                while i < args.len() && args[i].starts_with('-') {
                    let a = &args[i];
                    if a.len() == 2 && a[1..].chars().next().is_some_and(|c| valued.contains(c)) {
                        i += 1;
                    }
                    i += 1;
                }
                args.len() >= i + at_least
            }
            ArgTest::ValueOf(names, values) => {
                let separate = args
                    .windows(2)
                    .find(|w| names.contains(&w[0].as_str()))
                    .map(|w| w[1].as_str());
                let value = separate.or_else(|| {
                    args.iter().find_map(|a| {
                        names.iter().find_map(|n| {
                            if n.starts_with("--") {
                                a.strip_prefix(n)?.strip_prefix('=')
                            } else {
                                a.strip_prefix(n).filter(|v| !v.is_empty())
                            }
                        })
                    })
                });
                value.is_some_and(|v| values.iter().any(|w| same_any_case(v, w)))
            }
        }
    }
}

/// What a program that runs another command runs, judged as a command of its own.
#[derive(Debug, Clone, Copy)]
pub enum Runs {
    /// Nothing.
    Nothing,
    /// The command from its first operand on (`npx rimraf .`).
    FromFirstOperand,
    /// The command after its first argument (`pnpm dlx rimraf .`).
    AfterFirstArg,
    /// The command after each of these actions, up to one of the ends (`find -exec rm {} ;`).
    Actions(&'static [&'static str], &'static [&'static str]),
}

/// An entry of the destructive set's program table (`destructive_programs` of
/// rules/policy.json): a program (by name or name prefix), the subcommand it needs (git's
/// global options are skipped to find it), and tests on the arguments — all of `all`, one
/// of `any` (when given) and none of `unless`. The first entry that holds names the call
/// with its id; later entries are not tried. An entry that `runs` another command holds on
/// its program, subcommand, `all` and `unless` alone: the command it runs is judged, and
/// the entry's id is named when `any` holds or that command is destructive.
#[derive(Debug, Clone, Copy)]
pub struct DestructiveProgram {
    /// The destructive id; empty for a runner that names nothing itself (`npx`).
    pub id: &'static str,
    pub programs: &'static [&'static str],
    pub program_prefixes: &'static [&'static str],
    /// Named only as the command itself: a later word of the line is not tried as this
    /// program (`grep kill src` is a search).
    pub command_only: bool,
    pub subcommands: &'static [&'static str],
    pub all: &'static [ArgTest],
    pub any: &'static [ArgTest],
    pub unless: &'static [ArgTest],
    pub runs: Runs,
    pub explanation: &'static str,
}

impl DestructiveProgram {
    fn names_program(&self, name: &str) -> bool {
        self.programs.contains(&name) || self.program_prefixes.iter().any(|p| name.starts_with(p))
    }

    /// Does the entry hold for `name` run with `args`; `is_command` when it is the command
    /// itself? With it, the arguments its tests read (those after the subcommand, if it
    /// needs one).
    pub fn holds<'a>(
        &self,
        name: &str,
        args: &'a [String],
        is_command: bool,
    ) -> Option<&'a [String]> {
        if !self.names_program(name) || (self.command_only && !is_command) {
            return None;
        }
        let args = if self.subcommands.is_empty() {
            args
        } else {
            let at = subcommand_at(name, args)?;
            if !self.subcommands.contains(&args[at].as_str()) {
                return None;
            }
            &args[at + 1..]
        };
        let holds = |t: &ArgTest| t.holds(args, is_command);
        let any = self.any.is_empty()
            || !matches!(self.runs, Runs::Nothing)
            || self.any.iter().any(holds);
        (self.all.iter().all(holds) && any && !self.unless.iter().any(holds)).then_some(args)
    }

    /// Does the entry's `any` hold (an empty `any` holds)?
    pub fn any_holds(&self, args: &[String], is_command: bool) -> bool {
        self.any.is_empty() || self.any.iter().any(|t| t.holds(args, is_command))
    }
}

/// Where a program's subcommand is: its first operand, past git's global options and their
/// values (`git -C repo push`).
fn subcommand_at(name: &str, args: &[String]) -> Option<usize> {
    let valued: &[&str] = if name == "git" {
        &crate::shell::GIT_GLOBAL_WITH_VALUE
    } else {
        &[]
    };
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        if valued.contains(&args[i].as_str()) {
            i += 1;
        }
        i += 1;
    }
    (i < args.len()).then_some(i)
}

/// The first of [`DESTRUCTIVE_PROGRAMS`] that holds for `name` run with `args`, with the
/// arguments its tests read.
pub fn destructive_program<'a>(
    name: &str,
    args: &'a [String],
    is_command: bool,
) -> Option<(&'static DestructiveProgram, &'a [String])> {
    DESTRUCTIVE_PROGRAMS
        .iter()
        .find_map(|rule| rule.holds(name, args, is_command).map(|a| (rule, a)))
}

/// Is `name` tried as a program when it stands after the command's own program (`parallel
/// rm -rf`, `watch git push -f`)? Only for the entries not marked `command_only`.
pub fn judged_anywhere(name: &str) -> bool {
    // Asked for every word of every command: a set, not a walk over the whole table (a
    // 128 KiB command of 26,000 words spent 20 ms walking it).
    type Anywhere = (std::collections::HashSet<&'static str>, Vec<&'static str>);
    static ANYWHERE: std::sync::OnceLock<Anywhere> = std::sync::OnceLock::new();
    let (programs, prefixes) = ANYWHERE.get_or_init(|| {
        let mut programs = std::collections::HashSet::new();
        let mut prefixes = Vec::new();
        for rule in DESTRUCTIVE_PROGRAMS.iter().filter(|r| !r.command_only) {
            programs.extend(rule.programs.iter().copied());
            prefixes.extend(rule.program_prefixes.iter().copied());
        }
        (programs, prefixes)
    });
    programs.contains(name) || prefixes.iter().any(|p| name.starts_with(p))
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

    /// [`judged_anywhere`]'s set answers as the walk over the table it replaced, for every
    /// name the table holds, its prefixes extended, and names it does not.
    #[test]
    fn judged_anywhere_answers_as_the_table_walk() {
        let walk = |name: &str| {
            DESTRUCTIVE_PROGRAMS
                .iter()
                .any(|rule| !rule.command_only && rule.names_program(name))
        };
        let mut names: Vec<String> = ["", "ls", "x", "gitx", "rmdir", "mkfs", "mkfs.ext4"]
            .iter()
            .map(|n| n.to_string())
            .collect();
        for rule in DESTRUCTIVE_PROGRAMS.iter() {
            for name in rule.programs.iter().chain(rule.program_prefixes) {
                names.push(name.to_string());
                names.push(format!("{name}x"));
                let mut shorter = name.to_string();
                shorter.pop();
                names.push(shorter);
            }
        }
        for name in &names {
            assert_eq!(judged_anywhere(name), walk(name), "{name:?}");
        }
    }

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
        // Every id the engine and the program table can name is listed (and every listed
        // one is named by one of its examples, above).
        let code = ids_in_code();
        assert_eq!(code.len(), 7, "the scan found the engine's ids: {code:?}");
        let table: BTreeSet<String> = DESTRUCTIVE_PROGRAMS
            .iter()
            .filter(|p| !p.id.is_empty())
            .map(|p| p.id.to_string())
            .collect();
        let unlisted: Vec<&String> = code
            .union(&table)
            .filter(|id| !policy_ids.contains(*id))
            .collect();
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
