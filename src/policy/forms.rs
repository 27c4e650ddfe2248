//! Reading a program's arguments against the spellings `argument_forms` of
//! `rules/policy.json` lists (docs/policy.md, "Argument forms"): which spellings of `git
//! branch`, `tag`, `remote`, `config`, `stash`, `reflog` and `worktree` only inspect, which
//! of `git switch`/`checkout` only create a branch, npm's, pnpm's and yarn's runner
//! subcommands, cargo's `+toolchain`, `--version`/`--help`, `command -v`, `date +FORMAT`,
//! `tee /dev/null`, `tee -a`, `cp -n`. The spellings are data; what a placeholder word means
//! (a branch name git accepts, a runner target, a word after a literal prefix) is here.

use super::argv;
use super::data::{FORM_PLACEHOLDERS, Form, Forms, RUNNER_TARGETS};

/// What the forms say of an argument list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// A form holds: the arguments are one of the listed spellings.
    Holds,
    /// No form holds.
    NoForm,
    /// A form refuses the call: this flag (as [`argv::parse`] names it) is not listed.
    Refused(String),
}

/// Read `args` of `program` against `forms`: the first form that holds or refuses decides.
pub fn read(forms: &Forms, program: &str, args: &[String]) -> Reading {
    let kept: Vec<String>;
    let args = if forms.drop.is_empty() {
        args
    } else {
        kept = args
            .iter()
            .filter(|a| !forms.drop.contains(&a.as_str()))
            .cloned()
            .collect();
        &kept
    };
    forms
        .forms
        .iter()
        .filter(|form| form.programs.is_empty() || form.programs.contains(&program))
        .map(|form| form.read(args))
        .find(|reading| *reading != Reading::NoForm)
        .unwrap_or(Reading::NoForm)
}

/// Do `words` (already a program's operands) take one of the spellings of `forms`?
pub fn holds_for(forms: &Forms, program: &str, words: &[&str]) -> bool {
    let args: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    read(forms, program, &args) == Reading::Holds
}

impl Form {
    fn read(&self, args: &[String]) -> Reading {
        let lead = self.lead.len();
        if args.len() < lead || !self.lead.iter().zip(args).all(|(p, a)| word_is(p, a)) {
            return Reading::NoForm;
        }
        let rest = &args[lead..];
        if self.first_is_option && rest.first().is_some_and(|a| !a.starts_with('-')) {
            return Reading::NoForm;
        }
        let Some(spec) = self.flags else {
            let words: Vec<&str> = rest.iter().map(String::as_str).collect();
            return spelled(self.args.unwrap_or(&[]), &words);
        };
        let parsed = match argv::parse(&spec, rest) {
            Ok(parsed) => parsed,
            Err(flag) if self.refuses_unlisted => return Reading::Refused(flag.to_string()),
            Err(_) => return Reading::NoForm,
        };
        let given = |flag: &&str| parsed.has(flag) || parsed.values_of(flag).next().is_some();
        if (!self.with_any.is_empty() && !self.with_any.iter().any(given))
            || self.without.iter().any(given)
        {
            return Reading::NoForm;
        }
        match self.operands {
            Some(pattern) => spelled(pattern, &parsed.operands),
            None => Reading::Holds,
        }
    }
}

/// Are `words` exactly the pattern (its last word may end in `...`: repeated zero or more
/// times)? A `REV` word starting with `-` is an unlisted flag: the call is refused.
fn spelled(pattern: &[&str], words: &[&str]) -> Reading {
    let (fixed, repeated) = match pattern.split_last() {
        Some((last, fixed)) if last.ends_with("...") => (fixed, last.strip_suffix("...")),
        _ => (pattern, None),
    };
    let fits = words.len() >= fixed.len()
        && (repeated.is_some() || words.len() == fixed.len())
        && fixed.iter().zip(words).all(|(p, w)| word_is(p, w))
        && repeated.is_none_or(|p| words[fixed.len()..].iter().all(|w| word_is(p, w)));
    if !fits {
        return Reading::NoForm;
    }
    match fixed
        .iter()
        .zip(words)
        .find(|(p, w)| **p == "REV" && w.starts_with('-'))
    {
        Some((_, flag)) => Reading::Refused(flag.to_string()),
        None => Reading::Holds,
    }
}

/// Is `word` one of the pattern's alternatives (a literal, a placeholder, or a literal
/// prefix then a placeholder: `+WORD` is a word starting with `+`)?
fn word_is(pattern: &str, word: &str) -> bool {
    pattern.split('|').any(|alt| match split_placeholder(alt) {
        Some((prefix, placeholder)) => word
            .strip_prefix(prefix)
            .is_some_and(|rest| is_placeholder(placeholder, rest)),
        None => alt == word,
    })
}

/// An alternative's literal prefix and the placeholder after it (`+WORD` is `("+",
/// "WORD")`, `REV` is `("", "REV")`); `None` for a literal (`-D`: one capital is a letter).
fn split_placeholder(alt: &str) -> Option<(&str, &str)> {
    let prefix = alt.trim_end_matches(|c: char| c.is_ascii_uppercase());
    let placeholder = &alt[prefix.len()..];
    FORM_PLACEHOLDERS
        .contains(&placeholder)
        .then_some((prefix, placeholder))
}

/// Does `word` stand for the placeholder?
fn is_placeholder(placeholder: &str, word: &str) -> bool {
    match placeholder {
        "NAME" => !word.starts_with('-'),
        "WORD" | "REV" => true,
        "BRANCH" => valid_branch(word),
        "TARGET" => RUNNER_TARGETS.contains(&word),
        "TOOLCHAIN" => word.strip_prefix('+').is_some_and(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        }),
        _ => false,
    }
}

/// A name git accepts for a new branch (`git check-ref-format`'s rules, over-strict).
pub fn valid_branch(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && !name.starts_with('/')
        && !name.ends_with('/')
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("@{")
        && name
            .chars()
            .all(|c| !c.is_control() && !" ~^:?*[\\".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn forms(name: &str) -> &'static Forms {
        super::super::data::argument_forms(name).expect("an entry of argument_forms")
    }

    #[test]
    fn a_spelling_holds_or_not_and_a_rev_flag_refuses() {
        let switch = forms("git switch");
        assert_eq!(read(switch, "git", &args("-c x")), Reading::Holds);
        assert_eq!(
            read(switch, "git", &args("-q -c x --no-track y")),
            Reading::Holds
        );
        assert_eq!(
            read(switch, "git", &args("-c x -f")),
            Reading::Refused("-f".into())
        );
        assert_eq!(read(switch, "git", &args("-c x y z")), Reading::NoForm);
        assert_eq!(read(switch, "git", &args("-c x..y")), Reading::NoForm);
        let worktree = forms("git worktree");
        assert_eq!(read(worktree, "git", &args("list")), Reading::Holds);
        assert_eq!(
            read(worktree, "git", &args("list -v -v --porcelain")),
            Reading::Holds
        );
        assert_eq!(read(worktree, "git", &args("list x")), Reading::NoForm);
        assert_eq!(read(worktree, "git", &args("")), Reading::NoForm);
    }

    #[test]
    fn flag_tables_lead_first_and_operands() {
        let branch = forms("git branch");
        assert_eq!(read(branch, "git", &args("-a")), Reading::Holds);
        assert_eq!(read(branch, "git", &args("-a x")), Reading::NoForm);
        assert_eq!(read(branch, "git", &args("-l x")), Reading::Holds);
        assert_eq!(
            read(branch, "git", &args("-D x")),
            Reading::Refused("-D".into())
        );
        let tag = forms("git tag");
        assert_eq!(read(tag, "git", &args("-d x")), Reading::NoForm);
        let reflog = forms("git reflog");
        assert_eq!(read(reflog, "git", &args("show -5")), Reading::Holds);
        assert_eq!(read(reflog, "git", &args("-n 5 HEAD")), Reading::Holds);
        assert_eq!(read(reflog, "git", &args("expire --all")), Reading::NoForm);
        let config = forms("git config");
        assert_eq!(read(config, "git", &args("--get a.b")), Reading::Holds);
        assert_eq!(read(config, "git", &args("get a.b")), Reading::Holds);
        assert_eq!(
            read(config, "git", &args("--get a.b get x")),
            Reading::NoForm
        );
        assert_eq!(read(config, "git", &args("a.b c")), Reading::NoForm);
    }

    #[test]
    fn programs_and_placeholders() {
        let version = forms("version");
        assert_eq!(read(version, "go", &args("version")), Reading::Holds);
        assert_eq!(read(version, "make", &args("version")), Reading::NoForm);
        assert_eq!(read(version, "make", &args("--help")), Reading::Holds);
        let toolchain = forms("cargo toolchain");
        for (word, holds) in [
            ("+nightly", true),
            ("+1.80", true),
            ("+", false),
            ("+a/b", false),
            ("nightly", false),
        ] {
            assert_eq!(
                read(toolchain, "cargo", &args(word)) == Reading::Holds,
                holds,
                "{word}"
            );
        }
        let date = forms("date");
        for (line, reading) in [
            ("+%s", Reading::Holds),
            ("-u +", Reading::Holds),
            ("", Reading::Holds),
            ("%s", Reading::NoForm),
            ("+%s +%s", Reading::NoForm),
            ("-s x", Reading::Refused("-s".into())),
        ] {
            assert_eq!(read(date, "date", &args(line)), reading, "{line}");
        }
        assert_eq!(split_placeholder("+WORD"), Some(("+", "WORD")));
        assert_eq!(split_placeholder("REV"), Some(("", "REV")));
        assert_eq!(split_placeholder("-D"), None, "one capital is a letter");
        assert!(holds_for(forms("npm"), "npm", &["run", "lint"]));
        assert!(!holds_for(forms("npm"), "npm", &["run", "deploy"]));
        assert!(holds_for(forms("yarn"), "yarn", &[]));
        assert!(!holds_for(forms("npm"), "npm", &[]));
    }

    /// The list of placeholders is build.rs's; each must stand for something here, or a form
    /// using it would hold for no word at all.
    #[test]
    fn every_placeholder_build_rs_accepts_stands_for_a_word() {
        let words = ["x", "HEAD", "feature", "+stable", RUNNER_TARGETS[0]];
        for placeholder in FORM_PLACEHOLDERS {
            assert!(
                words.iter().any(|w| is_placeholder(placeholder, w)),
                "{placeholder} stands for no word"
            );
        }
    }
}
