//! The screen door: a Claude Code permission box read back into the tool call it asks about,
//! and decided by the same [`super::decide`] as the hook.
//!
//! Claude Code 2.1.332 draws a permission box as a frame line, a header naming the tool
//! ("Bash command", "Create file", "Edit file", "Read file", "Fetch"), for Bash a description
//! (or "Run shell command"), then the call between two dashed lines (`╌╌╌`): a command on one
//! line, or, when it has several lines or is wrapped at the box's edge, one `│ `-prefixed
//! line each; a file path under the header of a Write or Edit. Older releases (2.1.197) drew
//! the command as indented lines with the description last; that layout is read too.
//!
//! A wrap and a newline look the same on screen, so a command shown on several lines is read
//! every way its lines can join (a newline, a space, nothing) and allowed only when every
//! reading is; past [`MAX_LINES`] lines nothing is proven. A box whose tool cannot be read is
//! no decision.

use serde_json::{Value, json};

use super::{Context, Decision, Policy, Verdict, decide};

/// More lines than this of one command on screen are not read (3^(n-1) readings).
pub const MAX_LINES: usize = 5;

/// The tool call a permission box asks about: the tool and every reading of its input.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    pub tool: String,
    pub readings: Vec<Value>,
}

/// A dashed separator line (`╌╌╌`) of a permission box.
pub fn dashed(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && t.chars().all(|c| c == '╌' || c == '┄' || c == '┈')
}

fn frame(line: &str) -> bool {
    let t = line.trim_end();
    t.starts_with(['─', '━', '═', '╭', '┌'])
}

/// Read a permission box: `lines` are the screen lines as drawn from the box's frame line
/// down to the question. `Err` says why the call cannot be read.
pub fn read_box(lines: &[&str]) -> Result<Asked, String> {
    let (body, bordered): (Vec<&str>, bool) = match lines.iter().position(|l| frame(l)) {
        Some(at) => (
            lines[at + 1..].to_vec(),
            lines[at].trim_start().starts_with(['╭', '┌']),
        ),
        None => (lines.to_vec(), false),
    };
    // A box with side borders (`╭…╮` then `│ … │`): the borders are not the content; in a
    // box without them a `│ ` starts each line of a long or multi-line command.
    let body: Vec<&str> = if bordered {
        body.iter()
            .map(|l| {
                let t = l.trim_end();
                let t = t.strip_suffix(['│', '┃', '║']).unwrap_or(t).trim_end();
                let s = t.trim_start();
                s.strip_prefix(['│', '┃', '║']).unwrap_or(s)
            })
            .collect()
    } else {
        body
    };
    let mut rest = body.iter().copied().skip_while(|l| l.trim().is_empty());
    let Some(header) = rest.next() else {
        return Err("the permission box has no header".to_string());
    };
    let header = header.trim().trim_matches('│').trim();
    let after: Vec<&str> = rest.collect();
    let dashes: Vec<usize> = after
        .iter()
        .enumerate()
        .filter(|(_, l)| dashed(l))
        .map(|(i, _)| i)
        .collect();
    let block = |from: usize, to: usize| -> Vec<&str> { after[from + 1..to].to_vec() };
    match header {
        "Bash command" => {
            let lines = match dashes.as_slice() {
                [first, second, ..] => block(*first, *second),
                _ => older_bash_block(&after),
            };
            let readings = command_readings(&lines)?;
            Ok(Asked {
                tool: "Bash".to_string(),
                readings: readings
                    .into_iter()
                    .map(|c| json!({"command": c}))
                    .collect(),
            })
        }
        "Create file" | "Edit file" | "Write file" | "Overwrite file" => {
            let path = after
                .iter()
                .map(|l| l.trim().trim_matches('│').trim())
                .find(|l| !l.is_empty())
                .ok_or("the box names no file")?;
            if dashed(path) {
                return Err("the box names no file".to_string());
            }
            let tool = if header == "Edit file" {
                "Edit"
            } else {
                "Write"
            };
            Ok(Asked {
                tool: tool.to_string(),
                readings: vec![json!({"file_path": path})],
            })
        }
        "Read file" => {
            let inside = match dashes.as_slice() {
                [first, second, ..] => block(*first, *second),
                _ => return Err("the Read box shows no file".to_string()),
            };
            let text: String = inside.iter().map(|l| l.trim()).collect::<Vec<_>>().join("");
            let path = text
                .strip_prefix("Read(")
                .and_then(|t| t.strip_suffix(')'))
                .ok_or("the Read box shows no Read(PATH)")?;
            Ok(Asked {
                tool: "Read".to_string(),
                readings: vec![json!({"file_path": path})],
            })
        }
        "Fetch" => {
            let inside = match dashes.as_slice() {
                [first, second, ..] => block(*first, *second),
                _ => return Err("the Fetch box shows no URL".to_string()),
            };
            let url = inside
                .iter()
                .find_map(|l| l.trim().strip_prefix("url: "))
                .ok_or("the Fetch box shows no URL")?;
            Ok(Asked {
                tool: "WebFetch".to_string(),
                readings: vec![json!({"url": url})],
            })
        }
        other => Err(format!("a {other:?} box: no rule reads it")),
    }
}

/// 2.1.197's Bash box: after the header, the command's indented lines, the description last.
/// The description is taken as one (a command never ends the block), and the whole block is
/// still searched for destructive commands by the caller's markers.
fn older_bash_block<'a>(after: &[&'a str]) -> Vec<&'a str> {
    let block: Vec<&str> = after
        .iter()
        .copied()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .collect();
    match block.len() {
        0 | 1 => block,
        n => block[..n - 1].to_vec(),
    }
}

/// The readings of a command drawn on `lines`: one line is itself; `│ ` lines join every way
/// a wrap or a newline allows.
fn command_readings(lines: &[&str]) -> Result<Vec<String>, String> {
    let parts: Vec<&str> = lines
        .iter()
        .map(|l| {
            let t = l.trim_start();
            match t.strip_prefix('│') {
                Some(rest) => rest.strip_prefix(' ').unwrap_or(rest).trim_end(),
                None => t.trim_end(),
            }
        })
        .filter(|l| !l.is_empty())
        .collect();
    match parts.len() {
        0 => Err("the box shows no command".to_string()),
        1 => Ok(vec![parts[0].to_string()]),
        n if n > MAX_LINES => Err(format!(
            "a command of {n} lines on screen: which are wraps and which newlines is not knowable"
        )),
        n => {
            let mut readings = vec![parts[0].to_string()];
            for part in &parts[1..] {
                let mut next = Vec::with_capacity(readings.len() * 3);
                for reading in &readings {
                    for joiner in ["\n", " ", ""] {
                        next.push(format!("{reading}{joiner}{part}"));
                    }
                }
                readings = next;
            }
            debug_assert_eq!(readings.len(), 3usize.pow(n as u32 - 1));
            Ok(readings)
        }
    }
}

/// What a screen rule asks of the policy (`"policy"` in a pane rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Door {
    /// A Claude Code permission box: read the tool call and decide it like the hook.
    ToolCall,
    /// A program's own yes/no question: answered only without words of loss near it
    /// ([`super::prompt`]).
    Question,
}

/// The policy's decision on a screen's prompt, with what it was about (for the decision log).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ScreenDecision {
    /// The tool of a permission box (`Bash`, `Write` …), or `question`.
    pub tool: String,
    /// A one-line summary of the call (the command, the path) or the question.
    pub input: String,
    #[serde(flatten)]
    pub decision: Decision,
}

/// The policy a supervisor reads screens with: the user's rules and where the agent runs.
#[derive(Debug, Clone, Default)]
pub struct Approval {
    pub policy: Policy,
    pub context: Context,
    /// The policy file could not be read: nothing is approved, and this says why.
    pub unusable: Option<String>,
}

/// Lines looked at above a question for words of loss: its paragraph, up to this many (a
/// package manager may list every file it would remove between "Would remove:" and its
/// question). The one lookback of a program's question: the classifier reads the same lines
/// for destructive commands (a question rule's default subject).
pub const QUESTION_WINDOW: usize = 40;

/// The question's paragraph: the last line and the lines above it up to a blank line or the
/// shell prompt the program was started at (the program's banner, its command line and an
/// earlier command's output are not part of the question).
pub fn paragraph<'a, 'b>(lines: &'a [&'b str]) -> &'a [&'b str] {
    let end = lines.len();
    let from = lines[..end.saturating_sub(1)]
        .iter()
        .rposition(|l| l.trim().is_empty() || shell_prompt(l))
        .map_or(0, |at| at + 1);
    &lines[from.max(end.saturating_sub(QUESTION_WINDOW))..]
}

/// A line typed at a shell prompt (`$ cmd`, `dev@box:~/app$ cmd`, `❯ cmd`).
fn shell_prompt(line: &str) -> bool {
    let t = line.trim_start();
    if ["$ ", "# ", "% ", "❯ ", "➜ "]
        .iter()
        .any(|p| t.starts_with(p))
    {
        return true;
    }
    // user@host:dir$ or (venv) user@host:dir$
    let t = t
        .strip_prefix('(')
        .and_then(|r| r.split_once(") ").map(|(_, r)| r))
        .unwrap_or(t);
    t.split_once(['$', '#', '%']).is_some_and(|(head, rest)| {
        head.contains('@') && !head.contains(' ') && (rest.is_empty() || rest.starts_with(' '))
    })
}

impl Approval {
    /// The built-in rules, for screens whose working directory is not known.
    pub fn builtin() -> &'static Approval {
        static BUILTIN: std::sync::OnceLock<Approval> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(|| Approval {
            policy: Policy::builtin(),
            context: Context {
                home: std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(std::path::PathBuf::from),
                ..Context::default()
            },
            unusable: None,
        })
    }

    /// Keep an approval for the rest of the process (a command loads its policy once).
    pub fn leak(self) -> &'static Approval {
        Box::leak(Box::new(self))
    }

    /// Decide what a screen rule shows: `lines` run from the subject's first line (the frame
    /// of a permission box) to the question, as drawn.
    pub fn screen(&self, door: Door, lines: &[&str]) -> ScreenDecision {
        let (decision, tool, input) = match door {
            Door::ToolCall => {
                let (decision, asked) = decide_box(&self.policy, lines, &self.context);
                match asked {
                    Some(asked) => {
                        let input = asked
                            .readings
                            .first()
                            .map(|first| super::summary(&asked.tool, first));
                        (decision, asked.tool, input.unwrap_or_default())
                    }
                    None => (decision, "?".to_string(), String::new()),
                }
            }
            Door::Question => {
                let question = lines.last().map(|l| l.trim()).unwrap_or_default();
                (
                    super::prompt::judge_question(paragraph(lines), None),
                    "question".to_string(),
                    super::one_line(question, super::SUMMARY_CHARS),
                )
            }
        };
        let decision = match &self.unusable {
            Some(why) => Decision {
                decision: Verdict::NoDecision,
                rule: "policy-unreadable".to_string(),
                reason: why.clone(),
                message: None,
            },
            None => decision,
        };
        ScreenDecision {
            tool,
            input,
            decision,
        }
    }
}

/// Decide a permission box: allowed only when every reading of its call is.
pub fn decide_box(policy: &Policy, lines: &[&str], ctx: &Context) -> (Decision, Option<Asked>) {
    let asked = match read_box(lines) {
        Ok(asked) => asked,
        Err(why) => {
            return (
                Decision {
                    decision: Verdict::NoDecision,
                    rule: "unreadable-screen".to_string(),
                    reason: why,
                    message: None,
                },
                None,
            );
        }
    };
    let mut first = None;
    for input in &asked.readings {
        let decision = decide(policy, &asked.tool, input, ctx);
        if decision.decision != Verdict::Allow {
            return (decision, Some(asked));
        }
        first.get_or_insert(decision);
    }
    (first.expect("a box has at least one reading"), Some(asked))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HARMLESS: &str = include_str!("../../tests/fixtures/policy/screens/bash-harmless.txt");
    const MULTILINE: &str = include_str!("../../tests/fixtures/policy/screens/bash-multiline.txt");
    const LONG: &str = include_str!("../../tests/fixtures/policy/screens/bash-long.txt");
    const NO_DESCRIPTION: &str =
        include_str!("../../tests/fixtures/policy/screens/bash-no-description.txt");
    const WRITE: &str = include_str!("../../tests/fixtures/policy/screens/write-new.txt");
    const EDIT: &str = include_str!("../../tests/fixtures/policy/screens/edit-existing.txt");
    const SENSITIVE: &str = include_str!("../../tests/fixtures/policy/screens/write-sensitive.txt");
    const READ: &str = include_str!("../../tests/fixtures/policy/screens/read-outside.txt");
    const FETCH: &str = include_str!("../../tests/fixtures/policy/screens/webfetch.txt");

    /// The box of a captured screen: from its frame line to the question.
    fn the_box(screen: &str) -> Vec<&str> {
        let lines: Vec<&str> = screen.lines().collect();
        let question = lines
            .iter()
            .rposition(|l| l.trim_start().starts_with("Do you want to"))
            .expect("a question");
        let start = lines[..question]
            .iter()
            .rposition(|l| frame(l))
            .expect("a frame");
        lines[start..=question].to_vec()
    }

    fn screen_ctx() -> Context {
        Context {
            home: Some("/home/dev".into()),
            ..Context::default()
        }
    }

    #[test]
    fn the_real_boxes_of_2_1_332_are_read() {
        let read = |screen| read_box(&the_box(screen)).unwrap();
        assert_eq!(
            read(HARMLESS).readings,
            [json!({"command": "cargo test --workspace"})]
        );
        assert_eq!(
            read(NO_DESCRIPTION).readings,
            [json!({"command": "make deploy"})]
        );
        let multi = read(MULTILINE);
        assert_eq!(multi.readings.len(), 3);
        assert!(
            multi
                .readings
                .contains(&json!({"command": "cargo --version\nrm -rf build"}))
        );
        let long = read(LONG);
        assert!(long.readings.iter().any(|r| r["command"]
            == "git log --oneline --decorate --graph --all --since=2020-01-01 --author=someone --grep=fix -- src tests docs scripts | head -n 40 && rm -rf build/cache/old"));
        assert_eq!(read(WRITE).tool, "Write");
        assert_eq!(read(WRITE).readings, [json!({"file_path": "hello.py"})]);
        assert_eq!(
            (
                read(EDIT).tool.as_str(),
                read(EDIT).readings[0]["file_path"].as_str()
            ),
            ("Edit", Some("notes.txt"))
        );
        assert_eq!(read(READ).readings, [json!({"file_path": "/etc/hostname"})]);
        assert_eq!(
            read(FETCH).readings,
            [json!({"url": "https://example.com/docs"})]
        );
    }

    #[test]
    fn the_real_boxes_are_decided_like_the_hook() {
        let policy = Policy::builtin();
        let decided = |screen| decide_box(&policy, &the_box(screen), &screen_ctx()).0;
        assert_eq!(decided(HARMLESS).decision, Verdict::Allow);
        assert_eq!(decided(WRITE).rule, "write-in-project");
        assert_eq!(decided(EDIT).decision, Verdict::Allow);
        assert_eq!(decided(READ).rule, "read-only");
        for screen in [MULTILINE, LONG, NO_DESCRIPTION, SENSITIVE, FETCH] {
            assert_ne!(decided(screen).decision, Verdict::Allow);
        }
    }

    #[test]
    fn a_question_is_read_with_its_paragraph_only() {
        let screen = [
            "Aider v0.86.1 with diff edit format",
            "dev@box:~/app$ ./agent --danger-at 3",
            "Collecting left-pad",
            "Install left-pad? [y/N]",
        ];
        assert_eq!(paragraph(&screen), &screen[2..]);
        let pip = [
            "$ pip uninstall numpy",
            "Found existing installation: numpy 1.26",
            "  Would remove:",
            "    /usr/lib/python3/numpy/*",
            "Proceed (Y/n)?",
        ];
        assert_eq!(paragraph(&pip), &pip[1..]);
        let approval = Approval::builtin();
        assert_eq!(
            approval.screen(Door::Question, &screen).decision.decision,
            Verdict::Allow
        );
        assert_eq!(
            approval.screen(Door::Question, &pip).decision.rule,
            "words-of-loss"
        );
    }

    #[test]
    fn every_way_the_lines_of_a_command_can_join_must_be_harmless() {
        let policy = Policy::builtin();
        let boxed = |lines: &[&str]| {
            let mut screen = vec!["────────", " Bash command", " A step", " ╌╌╌╌╌╌"];
            screen.extend(lines.iter().copied());
            screen.extend([" ╌╌╌╌╌╌", " Do you want to proceed?"]);
            decide_box(&policy, &screen, &screen_ctx()).0
        };
        assert_eq!(boxed(&[" mkdir -p a"]).decision, Verdict::Allow);
        // Each line alone is harmless, but joined without a space it is `rm -rf x`.
        assert_ne!(boxed(&[" │ echo r", " │ m -rf x"]).decision, Verdict::Allow);
        // A newline between two harmless parts, or a wrap: `cargo test\ncargo build` read as
        // one line is `cargo test cargo build`, which no rule proves.
        assert_ne!(
            boxed(&[" │ cargo test", " │ cargo build"]).decision,
            Verdict::Allow
        );
        let six = [" │ ls"; 6];
        assert_eq!(boxed(&six).rule, "unreadable-screen");
    }
}
