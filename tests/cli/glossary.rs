//! Every word of autoctl's help a newcomer cannot look up is defined in the README's glossary
//! ("Words used here"), or named in `tests/fixtures/help-words.txt` as a name from outside
//! autoctl (a program, a format, an agent's hook event). A word is "looked up" in the system
//! dictionary (`/usr/share/dict/words`, Debian's wamerican, which `.ci/run` installs); an
//! English word autoctl gives a meaning of its own (a *heartbeat*, to *escalate*) is listed
//! in the same file as a term and must be in the glossary too.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use clap::CommandFactory;

const DICTIONARY: &str = "/usr/share/dict/words";

fn repo(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `(command path, long help)` of the root and every subcommand, as `--help` prints them.
fn help_texts() -> Vec<(String, String)> {
    fn walk(cmd: &mut clap::Command, path: String, out: &mut Vec<(String, String)>) {
        out.push((path.clone(), cmd.render_long_help().to_string()));
        for sub in cmd.get_subcommands_mut() {
            let name = format!("{path} {}", sub.get_name());
            walk(sub, name, out);
        }
    }
    let mut root = autoctl::cli::Cli::command();
    root.build();
    let mut out = Vec::new();
    walk(&mut root, "autoctl".to_owned(), &mut out);
    out
}

/// The words of a help text a reader would look up: flags, `<PLACEHOLDERS>`, environment
/// variables and file names are the command's own syntax, explained where they appear; words
/// with digits are values. Hyphenated compounds are looked up part by part.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| c.is_whitespace() || "`\"()[]{},;:!?=|*".contains(c)) {
        let token = raw.trim_matches(|c: char| !c.is_alphanumeric());
        if token.is_empty()
            || raw.starts_with(['-', '<', '$', '.'])
            || token.contains(['/', '_', '.', '@', '%', '+', '~'])
            || token.chars().any(|c| c.is_ascii_digit())
            || token.chars().all(|c| !c.is_lowercase())
        {
            continue;
        }
        let token = token
            .strip_suffix("'s")
            .or_else(|| token.strip_suffix("’s"))
            .unwrap_or(token);
        for part in token.split('-') {
            if part.chars().all(|c| c.is_alphabetic()) && part.chars().count() > 1 {
                out.push(part.to_lowercase());
            }
        }
    }
    out
}

/// The glossary's defined terms: the bold lead of each item of "Words used here", split at
/// commas and "and", and the words it sets in italics (*task root*), lower-cased.
fn glossary(readme: &str) -> Vec<String> {
    let section = readme
        .split("\n## Words used here\n")
        .nth(1)
        .expect("README has a \"Words used here\" section")
        .split("\n## ")
        .next()
        .unwrap();
    let mut terms = Vec::new();
    // An item is its "- **" line and the indented lines that continue it.
    let items = section
        .split("\n- **")
        .skip(1)
        .map(|item| item.split("\n\n").next().unwrap().replace("\n  ", " "));
    for item in items {
        let (lead, body) = item.split_once("**").unwrap();
        let italics = body.split('*').skip(1).step_by(2);
        for term in lead
            .split([',', '/'])
            .flat_map(|t| t.split(" and "))
            .chain(italics)
        {
            let term = term.trim().trim_start_matches("the ").to_lowercase();
            if !term.is_empty() {
                terms.push(term);
            }
        }
    }
    terms
}

/// Whether a glossary term defines `term`: word by word the same or inflected, either way.
fn defines(glossary_term: &str, term: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (
        glossary_term.split_whitespace().collect(),
        term.split_whitespace().collect(),
    );
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(a, b)| inflects(a, b) || inflects(b, a))
}

/// Whether `word` is `term` or one of its inflections (escalate → escalated, escalation).
fn inflects(word: &str, term: &str) -> bool {
    let stem = term.trim_end_matches('e');
    word == term
        || word.strip_prefix(stem).is_some_and(|rest| {
            [
                "s", "es", "ed", "d", "ing", "ion", "ions", "ation", "ations", "er", "ers",
            ]
            .contains(&rest)
        })
}

struct Listed {
    /// Names from outside autoctl, not looked up in the glossary.
    names: BTreeSet<String>,
    /// English words autoctl uses in a sense of its own: each must be defined.
    terms: BTreeSet<String>,
}

fn listed() -> Listed {
    let mut names = BTreeSet::new();
    let mut terms = BTreeSet::new();
    for line in repo("tests/fixtures/help-words.txt").lines() {
        let line = line.split('#').next().unwrap().trim();
        match line.split_once(' ') {
            Some(("name", rest)) => names.extend(rest.split_whitespace().map(str::to_owned)),
            Some(("term", rest)) => {
                terms.insert(rest.trim().to_owned());
            }
            None if line.is_empty() => {}
            _ => panic!(
                "tests/fixtures/help-words.txt: a line is `name WORD…` or `term WORDS`: {line}"
            ),
        }
    }
    Listed { names, terms }
}

#[test]
fn every_help_word_is_in_the_dictionary_or_the_glossary() {
    let dictionary = fs::read_to_string(DICTIONARY).unwrap_or_else(|_| {
        panic!("{DICTIONARY} is missing: install Debian's wamerican (.ci/run does)")
    });
    let dictionary: BTreeSet<String> = dictionary.lines().map(str::to_lowercase).collect();
    let defined = glossary(&repo("README.md"));
    let listed = listed();

    let helps = help_texts();
    // autoctl's own command names (`run ack`, `vfp`) are explained by their own help.
    let commands: BTreeSet<String> = helps
        .iter()
        .flat_map(|(path, _)| {
            path.split(' ')
                .flat_map(|w| w.split('-'))
                .map(str::to_owned)
        })
        .collect();
    let mut unknown: BTreeMap<String, String> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for (command, text) in &helps {
        for word in words(text) {
            seen.insert(word.clone());
            // The glossary is searched last: most words are in the dictionary.
            if !dictionary.contains(&word)
                && !listed.names.contains(&word)
                && !commands.contains(&word)
                && !defined
                    .iter()
                    .any(|t| t.split_whitespace().any(|part| inflects(&word, part)))
            {
                unknown.entry(word).or_insert_with(|| command.clone());
            }
        }
    }
    let mut problems: Vec<String> = unknown
        .iter()
        .map(|(word, command)| {
            format!("`{word}` (in `{command} --help`) is in neither the dictionary, the README's glossary nor tests/fixtures/help-words.txt")
        })
        .collect();

    let all_help = helps
        .iter()
        .map(|(_, text)| text.to_lowercase())
        .collect::<Vec<_>>()
        .join("\n");
    for term in &listed.terms {
        if !all_help.contains(term.as_str()) {
            problems.push(format!(
                "term `{term}` is in tests/fixtures/help-words.txt but no help text uses it"
            ));
        }
        if !defined.iter().any(|t| defines(t, term)) {
            problems.push(format!(
                "term `{term}` is used by the help but the README's glossary does not define it"
            ));
        }
    }
    for name in &listed.names {
        if !seen.contains(name) {
            problems.push(format!(
                "name `{name}` is in tests/fixtures/help-words.txt but no help text uses it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_word_reader_skips_syntax_and_splits_compounds() {
    assert_eq!(
        words(
            "Run `autoctl run tick --all` on <SESSION> (AUTOCTL_NOW, .auto-signal) at 70% — a stop-file's heartbeat."
        ),
        [
            "run",
            "autoctl",
            "run",
            "tick",
            "on",
            "at",
            "stop",
            "file",
            "heartbeat"
        ]
    );
    assert!(inflects("escalated", "escalate") && inflects("escalation", "escalate"));
    assert!(inflects("heartbeats", "heartbeat") && !inflects("heartbeat", "heart"));
}
