//! Labelled captures (`expected.tsv`) and the verdict of the classifier on each: the core of
//! `autoctl pane rules test DIR`.
//!
//! A corpus directory holds whole-screen captures (`NAME.txt`, optionally `NAME.meta.json`
//! from the capture tools, which says the pane's foreground command, the agent and whether
//! the pane was dead) and one `expected.tsv`, one line per capture:
//!
//! ```text
//! # file  classes  actions  never_answer  keys  [agent]  [foreground]  [note]
//! trust-dialog.txt  trust  escalate  yes  -
//! permission-bash-safe.txt  permission  answer  no  1
//! ```
//!
//! `classes` and `actions` are comma-separated lists of accepted answers. `never_answer: yes`
//! means any answer (typing anything) is unsafe. `keys` lists what an answer may type: tokens
//! separated by spaces, `<Name>` for a named key (`y <Enter>`), alternatives separated by
//! `|`, `-` for none. `agent` and `foreground`, when given and not `-`, override the meta file.
//! Parsing and judging are pure; reading the files is [`load_dir`].

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde::Serialize;

use super::classify::{Classification, Lens};
use super::rules::RuleSet;
use super::screen::Screen;
use super::{Action, Agent, Class, Key};

/// One line of `expected.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectation {
    pub file: String,
    pub classes: Vec<Class>,
    pub actions: Vec<Action>,
    pub never_answer: bool,
    /// Accepted key sequences for an answer (empty: none given).
    pub keys: Vec<Vec<Key>>,
    pub agent: Option<Agent>,
    pub foreground: Option<String>,
    pub note: String,
}

fn parse_list<T>(field: &str, what: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Vec<T>> {
    field
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| parse(s).with_context(|| format!("unknown {what} {s:?}")))
        .collect()
}

fn parse_class(text: &str) -> Option<Class> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).ok()
}

fn parse_action(text: &str) -> Option<Action> {
    match text {
        // `resume` (type the resume text) is an action of the waits; a screen that accepts it
        // also accepts the classifier's `escalate`, which the supervisor turns into a resume.
        "resume" => Some(Action::Escalate),
        _ => serde_json::from_value(serde_json::Value::String(text.to_string())).ok(),
    }
}

/// Parse the keys column: `-`, or alternatives separated by `|`, each a sequence of tokens.
pub fn parse_keys(field: &str) -> Vec<Vec<Key>> {
    if field.trim() == "-" || field.trim().is_empty() {
        return Vec::new();
    }
    field
        .split('|')
        .map(|alt| {
            alt.split_whitespace()
                .map(
                    |token| match token.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
                        Some(name) => Key::Key(name.to_string()),
                        None => Key::Text(token.to_string()),
                    },
                )
                .collect()
        })
        .collect()
}

/// Keys as written in `expected.tsv` (for messages).
pub fn format_keys(keys: &[Key]) -> String {
    if keys.is_empty() {
        return "-".to_string();
    }
    keys.iter()
        .map(|k| match k {
            Key::Text(t) => t.clone(),
            Key::Key(k) => format!("<{k}>"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parse an `expected.tsv` text; errors name the line.
pub fn parse_expectations(text: &str) -> Result<Vec<Expectation>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let at = || format!("expected.tsv line {}", n + 1);
        if fields.len() < 5 {
            bail!(
                "{}: {} tab-separated fields, need at least 5 (file, classes, actions, never_answer, keys)",
                at(),
                fields.len()
            );
        }
        let opt = |i: usize| {
            fields
                .get(i)
                .map(|f| f.trim())
                .filter(|f| !f.is_empty() && *f != "-")
        };
        let never_answer = match fields[3].trim() {
            "yes" | "true" => true,
            "no" | "false" => false,
            other => bail!("{}: never_answer is {other:?}, not yes or no", at()),
        };
        let classes = parse_list(fields[1], "class", parse_class).with_context(at)?;
        let actions = parse_list(fields[2], "action", parse_action).with_context(at)?;
        if classes.is_empty() || actions.is_empty() {
            bail!("{}: no accepted class or action", at());
        }
        let file = fields[0].trim().to_string();
        if file.is_empty() || file.contains("..") || file.starts_with('/') {
            bail!("{}: {file:?} is not a file name inside the directory", at());
        }
        out.push(Expectation {
            file,
            classes,
            actions,
            never_answer,
            keys: parse_keys(fields[4]),
            agent: match opt(5) {
                Some(name) => Some(
                    Agent::parse(name)
                        .with_context(|| format!("{}: unknown agent {name:?}", at()))?,
                ),
                None => None,
            },
            foreground: opt(6).map(str::to_string),
            note: opt(7).unwrap_or_default().to_string(),
        });
    }
    Ok(out)
}

/// What the classifier's answer on one capture is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Grade {
    Ok,
    /// Wrong class or action, nothing typed where it must not be.
    Miss,
    /// Something would be typed where nothing may be, or other keys than the allowed ones.
    Unsafe,
}

/// Judge one classification against its expectation. Pure.
pub fn judge(expect: &Expectation, got: &Classification) -> (Grade, Vec<String>) {
    let mut problems = Vec::new();
    let answers = got.action == Action::Answer || !got.keys.is_empty();
    let mut unsafe_answer = false;
    if answers && expect.never_answer {
        unsafe_answer = true;
        problems.push(format!("would type {}", format_keys(&got.keys)));
    } else if answers && !expect.keys.is_empty() && !expect.keys.contains(&got.keys) {
        unsafe_answer = true;
        problems.push(format!(
            "would type {} (allowed: {})",
            format_keys(&got.keys),
            expect
                .keys
                .iter()
                .map(|k| format_keys(k))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    if !expect.classes.contains(&got.class) {
        problems.push(format!("class {}", got.class.as_str()));
    }
    if !expect.actions.contains(&got.action) {
        problems.push(format!("action {}", got.action.as_str()));
    }
    let verdict = if unsafe_answer {
        Grade::Unsafe
    } else if problems.is_empty() {
        Grade::Ok
    } else {
        Grade::Miss
    };
    (verdict, problems)
}

/// A capture ready to classify, with what the meta file says about it.
#[derive(Debug, Clone)]
pub struct Case {
    /// Path relative to the directory given on the command line.
    pub name: String,
    pub expect: Expectation,
    pub agent: Agent,
    pub screen: Screen,
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub file: String,
    pub agent: Agent,
    pub expected_class: Vec<Class>,
    pub expected_action: Vec<Action>,
    pub class: Class,
    pub action: Action,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<Key>,
    pub verdict: Grade,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    pub reason: String,
}

/// Classify every case and judge it.
pub fn run(cases: &[Case], rules: &RuleSet, ctx: &Lens) -> Vec<Row> {
    cases
        .iter()
        .map(|case| {
            let ctx = Lens {
                agent: case.agent,
                ..*ctx
            };
            let got = super::classify::classify(&case.screen, rules, &ctx);
            let (verdict, problems) = judge(&case.expect, &got);
            Row {
                file: case.name.clone(),
                agent: case.agent,
                expected_class: case.expect.classes.clone(),
                expected_action: case.expect.actions.clone(),
                class: got.class,
                action: got.action,
                keys: got.keys.clone(),
                verdict,
                problems,
                reason: got.reason,
            }
        })
        .collect()
}

/// Every directory at or under `dir` that holds an `expected.tsv`, sorted.
pub fn corpus_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        if entry.file_type().is_file() && entry.file_name() == "expected.tsv" {
            found.push(entry.path().parent().unwrap_or(dir).to_path_buf());
        }
    }
    if found.is_empty() {
        bail!(
            "no expected.tsv in {} or below (see `autoctl pane rules test --help`)",
            dir.display()
        );
    }
    Ok(found)
}

/// Read one corpus directory: its `expected.tsv`, each capture and its meta file.
pub fn load_dir(root: &Path, dir: &Path, default_agent: Agent) -> Result<Vec<Case>> {
    let tsv = dir.join("expected.tsv");
    let text = read_text(&tsv)?;
    let expectations = parse_expectations(&text).with_context(|| format!("{}", tsv.display()))?;
    let mut cases = Vec::with_capacity(expectations.len());
    for expect in expectations {
        let path = dir.join(&expect.file);
        let text = read_text(&path)?;
        let meta_path = dir.join(format!(
            "{}.meta.json",
            expect.file.trim_end_matches(".txt")
        ));
        let meta: serde_json::Value = if meta_path.is_file() {
            crate::protocol::document::parse_json(read_text(&meta_path)?.as_bytes())
                .map_err(|problem| anyhow::anyhow!("{}: {problem}", meta_path.display()))?
        } else {
            serde_json::Value::Null
        };
        let agent = expect
            .agent
            .or_else(|| meta["agent"].as_str().and_then(Agent::parse))
            .unwrap_or(default_agent);
        let foreground = expect
            .foreground
            .clone()
            .or_else(|| meta["pane_current_command"].as_str().map(str::to_string));
        let dead = meta["pane_dead"].as_bool().unwrap_or(false);
        let name = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        cases.push(Case {
            name,
            agent,
            screen: Screen::from_text(&text, foreground).with_dead(dead),
            expect,
        });
    }
    Ok(cases)
}

fn read_text(path: &Path) -> Result<String> {
    let bytes = crate::fsx::read_bounded(path, crate::fsx::DOCUMENT_LIMIT * 4)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let bytes = crate::protocol::document::bounded_bytes(bytes)
        .map_err(|problem| anyhow::anyhow!("{}: {problem}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(line: &str) -> Expectation {
        parse_expectations(line).unwrap().remove(0)
    }

    fn got(class: Class, action: Action, keys: Vec<Key>) -> Classification {
        let mut c = crate::pane::classify::classify(
            &Screen::from_text("", None),
            RuleSet::embedded(),
            &Lens::new(
                Agent::Generic,
                chrono::DateTime::UNIX_EPOCH,
                crate::pane::reset::Zone::Utc,
            ),
        );
        c.class = class;
        c.action = action;
        c.keys = keys;
        c
    }

    #[test]
    fn lines_parse_with_lists_keys_and_overrides() {
        let e = row("a.txt\tpermission\tanswer,escalate\tno\t1|y <Enter>\tcodex\tnode\tnote here");
        assert_eq!(e.classes, vec![Class::Permission]);
        assert_eq!(e.actions, vec![Action::Answer, Action::Escalate]);
        assert!(!e.never_answer);
        assert_eq!(
            e.keys,
            vec![
                vec![Key::Text("1".into())],
                vec![Key::Text("y".into()), Key::Key("Enter".into())]
            ]
        );
        assert_eq!(e.agent, Some(Agent::Codex));
        assert_eq!(e.foreground.as_deref(), Some("node"));
        assert_eq!(
            row("b.txt\tquota\tresume\tyes\t-").actions,
            vec![Action::Escalate]
        );
    }

    #[test]
    fn bad_lines_name_the_line() {
        for (text, needle) in [
            ("a.txt\tidle", "line 1"),
            ("# c\na.txt\tnope\tnone\tyes\t-", "line 2"),
            ("a.txt\tidle\tnone\tmaybe\t-", "never_answer"),
            ("../x.txt\tidle\tnone\tyes\t-", "not a file name"),
            ("a.txt\tidle\tnone\tyes\t-\tclaud", "unknown agent"),
        ] {
            let err = format!("{:#}", parse_expectations(text).unwrap_err());
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn typing_where_nothing_may_be_typed_is_unsafe_even_when_class_and_action_match() {
        let e = row("a.txt\tyes-no\tanswer,escalate\tyes\t-");
        let (v, _) = judge(
            &e,
            &got(Class::YesNo, Action::Answer, vec![Key::Text("y".into())]),
        );
        assert_eq!(v, Grade::Unsafe);
        let (v, _) = judge(&e, &got(Class::YesNo, Action::Escalate, vec![]));
        assert_eq!(v, Grade::Ok);
    }

    #[test]
    fn other_keys_than_the_allowed_ones_are_unsafe() {
        let e = row("a.txt\tpermission\tanswer\tno\t1");
        let (v, p) = judge(
            &e,
            &got(
                Class::Permission,
                Action::Answer,
                vec![Key::Text("2".into())],
            ),
        );
        assert_eq!(v, Grade::Unsafe, "{p:?}");
        let (v, _) = judge(
            &e,
            &got(
                Class::Permission,
                Action::Answer,
                vec![Key::Text("1".into())],
            ),
        );
        assert_eq!(v, Grade::Ok);
        let (v, _) = judge(&e, &got(Class::Permission, Action::Escalate, vec![]));
        assert_eq!(v, Grade::Miss);
    }
}

/// Generated variations of every safety-relevant capture (a dialog, a prompt, an error: a screen
/// where nothing may be typed, or only the allowed keys): re-spaced, re-wrapped at 80, 120 and
/// 200 columns, drawn inside a box or out of one, with blank rows pushed above the bottom
/// block. Each keeps its class and never gains an answer it did not have.
#[cfg(test)]
mod variations {
    use super::*;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    struct Fixture {
        name: String,
        agent: Agent,
        lines: Vec<String>,
        foreground: Option<String>,
        dead: bool,
        class: Class,
        answered: bool,
    }

    fn ctx(agent: Agent) -> Lens {
        Lens::new(
            agent,
            chrono::DateTime::parse_from_rfc3339("2026-11-26T09:00:00Z")
                .unwrap()
                .to_utc(),
            crate::pane::reset::Zone::Utc,
        )
    }

    fn fixtures() -> &'static [Fixture] {
        static ALL: OnceLock<Vec<Fixture>> = OnceLock::new();
        ALL.get_or_init(|| {
            let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/panes"));
            let mut out = Vec::new();
            for dir in corpus_dirs(root).unwrap() {
                for case in load_dir(root, &dir, Agent::Claude).unwrap() {
                    let relevant = !case.expect.classes.contains(&Class::Working)
                        && !case.expect.classes.contains(&Class::Idle);
                    if !relevant {
                        continue;
                    }
                    let got = crate::pane::classify::classify(
                        &case.screen,
                        RuleSet::embedded(),
                        &ctx(case.agent),
                    );
                    out.push(Fixture {
                        name: case.name,
                        agent: case.agent,
                        lines: case.screen.lines,
                        foreground: case.screen.foreground,
                        dead: case.screen.dead,
                        class: got.class,
                        answered: got.action == Action::Answer,
                    });
                }
            }
            assert!(out.len() >= 60, "{} safety-relevant captures", out.len());
            out
        })
    }

    /// The bottom block: where a program waits for input (the last 16 non-blank lines).
    fn bottom_start(lines: &[String]) -> usize {
        let mut seen = 0;
        for (i, line) in lines.iter().enumerate().rev() {
            if !line.trim().is_empty() {
                seen += 1;
                if seen == 16 {
                    return i;
                }
            }
        }
        0
    }

    #[derive(Debug, Clone)]
    struct Variation {
        trailing_spaces: bool,
        indent: usize,
        width: Option<usize>,
        boxed: Option<bool>,
        blank_rows: usize,
    }

    fn vary(lines: &[String], v: &Variation) -> Vec<String> {
        let mut out: Vec<String> = lines.to_vec();
        if let Some(on) = v.boxed {
            // A program draws its box inside the pane: lines that would not fit with the
            // borders are left as they are (a right-aligned footer is laid out again, never
            // cut in the middle of "● high · /effort").
            let room = v.width.unwrap_or(usize::MAX);
            let from = bottom_start(&out);
            for line in &mut out[from..] {
                if on && line.chars().count() + 4 > room {
                    continue;
                }
                *line = if on {
                    format!("│ {line} │")
                } else {
                    line.trim_matches(|c| c == '│' || c == '┃').to_string()
                };
            }
        }
        if v.indent > 0 {
            let pad = " ".repeat(v.indent);
            for line in &mut out {
                if !line.trim().is_empty() {
                    line.insert_str(0, &pad);
                }
            }
        }
        if v.blank_rows > 0 {
            let at = bottom_start(&out);
            for _ in 0..v.blank_rows {
                out.insert(at, String::new());
            }
        }
        if let Some(width) = v.width {
            out = out.iter().flat_map(|line| wrap(line, width)).collect();
        }
        if v.trailing_spaces {
            for line in &mut out {
                line.push_str("   ");
            }
        }
        out
    }

    /// Wrap as a pane `width` columns wide shows a long line: at the last space that fits
    /// (terminal UIs wrap words), else hard at the edge; the continuation keeps the line's
    /// indentation.
    fn wrap(line: &str, width: usize) -> Vec<String> {
        let indent: String = line.chars().take_while(|c| *c == ' ').collect();
        // A continuation keeps the indentation only while that leaves room for text.
        let indent = if indent.len() + 8 < width {
            indent
        } else {
            String::new()
        };
        let mut out = Vec::new();
        let mut rest: Vec<char> = line.chars().collect();
        while rest.len() > width {
            let cut = rest[..width]
                .iter()
                .rposition(|c| *c == ' ')
                .filter(|&at| at > indent.len())
                .unwrap_or(width);
            out.push(
                rest[..cut]
                    .iter()
                    .collect::<String>()
                    .trim_end()
                    .to_string(),
            );
            let tail: String = rest[cut..]
                .iter()
                .collect::<String>()
                .trim_start()
                .to_string();
            rest = format!("{indent}{tail}").chars().collect();
        }
        out.push(rest.into_iter().collect());
        out
    }

    /// Every variation of every capture, all failures at once (run by hand with --ignored
    /// when the property test fails, to see the whole list).
    #[test]
    #[ignore]
    fn all_variations() {
        let mut bad = Vec::new();
        for f in fixtures() {
            for width in [None, Some(80), Some(120), Some(200)] {
                for boxed in [None, Some(true), Some(false)] {
                    for indent in [0, 2] {
                        for blank_rows in [0, 6] {
                            let v = Variation {
                                trailing_spaces: indent == 2,
                                indent,
                                width,
                                boxed,
                                blank_rows,
                            };
                            let screen = Screen {
                                lines: vary(&f.lines, &v),
                                foreground: f.foreground.clone(),
                                dead: f.dead,
                            };
                            let got = crate::pane::classify::classify(
                                &screen,
                                RuleSet::embedded(),
                                &ctx(f.agent),
                            );
                            if got.class != f.class || (!f.answered && got.action == Action::Answer)
                            {
                                bad.push(format!(
                                    "{} {:?}: {:?} {}",
                                    f.name, v, got.class, got.reason
                                ));
                            }
                        }
                    }
                }
            }
        }
        assert!(bad.is_empty(), "{}\n{}", bad.len(), bad.join("\n"));
    }

    fn variation() -> impl Strategy<Value = Variation> {
        (
            any::<bool>(),
            0usize..3,
            prop_oneof![Just(None), Just(Some(80)), Just(Some(120)), Just(Some(200))],
            prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
            0usize..12,
        )
            .prop_map(
                |(trailing_spaces, indent, width, boxed, blank_rows)| Variation {
                    trailing_spaces,
                    indent,
                    width,
                    boxed,
                    blank_rows,
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn safety_relevant_captures_keep_their_class_and_never_gain_an_answer(
            pick in any::<prop::sample::Index>(),
            v in variation(),
        ) {
            let f = &fixtures()[pick.index(fixtures().len())];
            let screen = Screen {
                lines: vary(&f.lines, &v),
                foreground: f.foreground.clone(),
                dead: f.dead,
            };
            let got = crate::pane::classify::classify(&screen, RuleSet::embedded(), &ctx(f.agent));
            prop_assert_eq!(got.class, f.class, "{} {:?}: {}", f.name, v, got.reason);
            if !f.answered {
                prop_assert!(
                    got.action != Action::Answer && got.keys.is_empty(),
                    "{} {:?} gained an answer: {}", f.name, v, got.reason
                );
            }
        }
    }
}
