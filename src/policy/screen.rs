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
//!
//! The shapes — what starts a box, its borders, the glyph a command's continued lines start
//! with, the dashed lines, each header and where its call's value is — are data: the `boxes` section of the pane rules
//! (`rules/pane-rules.json`, [`BoxShapes`]), with examples that must read as written. What
//! stays here is how a command's lines join.

use regex::Regex;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Context, Decision, Policy, Verdict, decide};

/// Where a header's call value is in the box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValueAt {
    /// A command: between the first two dashed lines (one line, or `│ `-prefixed lines of a
    /// long or multi-line command), else (an older box) the indented lines after the header
    /// with the description last; read every way its lines can join.
    Command,
    /// The first non-blank line after the header (a file path).
    FirstLine,
    /// The lines between the first two dashed lines, trimmed and joined without a separator
    /// (a path wrapped at the box's edge), matched whole by the pattern.
    DashedJoined,
    /// The first line between the first two dashed lines the pattern matches.
    DashedLine,
}

/// One header of a permission box as written in the rules file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxToolDef {
    /// The header line as drawn ("Bash command", "Read file").
    pub header: String,
    /// The tool it asks about (`Bash`, `Read`, …), as the hook's payload names it.
    pub tool: String,
    /// The input field the value goes to (`command`, `file_path`, `url`).
    pub field: String,
    pub value: ValueAt,
    /// For the dashed values: group 1 of this pattern is the value.
    #[serde(default)]
    pub pattern: Option<String>,
}

/// An example box of the rules file: its lines read as `tool` with these readings, or (with
/// `error`) not read, for a reason containing that text.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxExample {
    pub lines: Vec<String>,
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub readings: Vec<Value>,
    #[serde(default)]
    pub error: Option<String>,
}

/// The `boxes` section of the pane rules as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxShapesDef {
    #[serde(default)]
    pub explanation: Option<String>,
    /// A line that starts a box, tested on the line as drawn (the frame starts in column 0
    /// while a command inside is indented).
    pub frame: String,
    /// A frame line of a box with side borders (`╭…╮` then `│ … │`).
    pub bordered: String,
    /// The side border glyphs.
    pub borders: String,
    /// The glyphs that start each line of a long or multi-line command in a box without side
    /// borders (`│ cargo --version`); a rules file written before this field was data gets
    /// `│`, the glyph that was read then.
    #[serde(default = "continued_before")]
    pub continued: String,
    /// The glyphs a dashed separator is drawn of.
    pub dashes: String,
    pub tools: Vec<BoxToolDef>,
    #[serde(default)]
    pub examples: Vec<BoxExample>,
    /// A line typed at a shell prompt (`$ cmd`, `dev@box:~/app$ cmd`): where a program's
    /// question's paragraph starts ([`paragraph`]). A user file's boxes without it keep the
    /// embedded ones (filled in when the rules are loaded).
    #[serde(default)]
    pub prompt_lines: Option<LinesDef>,
}

/// Lines a list of patterns recognises, with examples that must match and near misses that
/// must not (checked with the box examples, [`BoxShapes::check`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinesDef {
    #[serde(default)]
    pub explanation: Option<String>,
    pub patterns: Vec<String>,
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub near_misses: Vec<String>,
}

fn continued_before() -> String {
    "│".to_string()
}

/// A header, compiled.
#[derive(Debug, Clone)]
struct BoxTool {
    def: BoxToolDef,
    pattern: Option<Regex>,
}

/// The shapes of the agent's permission boxes (see the module doc), compiled.
#[derive(Debug, Clone)]
pub struct BoxShapes {
    frame: Regex,
    bordered: Regex,
    borders: Vec<char>,
    continued: Vec<char>,
    dashes: Vec<char>,
    tools: Vec<BoxTool>,
    pub examples: Vec<BoxExample>,
    /// `prompt_lines`, compiled, with its examples and near misses.
    prompt_lines: Vec<Regex>,
    prompt_examples: Vec<String>,
    prompt_near_misses: Vec<String>,
}

/// One box example that did not read as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BoxFailure {
    pub index: usize,
    pub got: String,
}

impl BoxShapes {
    /// Compile the shapes; `Err` names the bad pattern.
    pub fn compile(def: BoxShapesDef) -> Result<BoxShapes, ShapeError> {
        let regex = |what: &str, source: &str| {
            Regex::new(source).map_err(|err| ShapeError::Pattern {
                what: what.to_string(),
                pattern: source.to_string(),
                err: Box::new(err),
            })
        };
        let tools = def
            .tools
            .iter()
            .map(|tool| {
                let pattern = match (&tool.pattern, tool.value) {
                    (Some(source), _) => Some(regex(&format!("tools.{}", tool.header), source)?),
                    (None, ValueAt::DashedJoined | ValueAt::DashedLine) => {
                        return Err(ShapeError::DashedNeedsPattern(tool.header.clone()));
                    }
                    (None, _) => None,
                };
                Ok(BoxTool {
                    def: tool.clone(),
                    pattern,
                })
            })
            .collect::<Result<Vec<_>, ShapeError>>()?;
        let prompt = def.prompt_lines.unwrap_or(LinesDef {
            explanation: None,
            patterns: Vec::new(),
            examples: Vec::new(),
            near_misses: Vec::new(),
        });
        Ok(BoxShapes {
            frame: regex("frame", &def.frame)?,
            bordered: regex("bordered", &def.bordered)?,
            borders: def.borders.chars().collect(),
            continued: def.continued.chars().collect(),
            dashes: def.dashes.chars().collect(),
            tools,
            examples: def.examples,
            prompt_lines: prompt
                .patterns
                .iter()
                .map(|source| regex("prompt_lines", source))
                .collect::<Result<Vec<_>, ShapeError>>()?,
            prompt_examples: prompt.examples,
            prompt_near_misses: prompt.near_misses,
        })
    }

    /// No shapes at all: no box is read (a placeholder until a rules file's are compiled).
    pub fn empty() -> BoxShapes {
        BoxShapes {
            frame: Regex::new("$^").expect("valid"),
            bordered: Regex::new("$^").expect("valid"),
            borders: Vec::new(),
            continued: Vec::new(),
            dashes: Vec::new(),
            tools: Vec::new(),
            examples: Vec::new(),
            prompt_lines: Vec::new(),
            prompt_examples: Vec::new(),
            prompt_near_misses: Vec::new(),
        }
    }

    /// A line typed at a shell prompt (`prompt_lines`): a program's question's paragraph
    /// starts below it.
    pub fn prompt_line(&self, line: &str) -> bool {
        self.prompt_lines.iter().any(|p| p.is_match(line))
    }

    /// The shapes of a rules file's text (its `boxes` section), for callers without a rule set.
    pub fn from_rules_file(text: &str) -> Result<BoxShapes, ShapeError> {
        #[derive(Deserialize)]
        struct File {
            boxes: BoxShapesDef,
        }
        let file: File = serde_json::from_str(text).map_err(ShapeError::Json)?;
        BoxShapes::compile(file.boxes)
    }

    /// A dashed separator line (`╌╌╌`) of a permission box.
    pub fn dashed(&self, line: &str) -> bool {
        let t = line.trim();
        !t.is_empty() && t.chars().all(|c| self.dashes.contains(&c))
    }

    fn frame(&self, line: &str) -> bool {
        self.frame.is_match(line.trim_end())
    }

    /// Run every example: the failures (none for sound shapes).
    pub fn check(&self) -> Vec<BoxFailure> {
        let mut failures = Vec::new();
        for (index, example) in self.examples.iter().enumerate() {
            let lines: Vec<&str> = example.lines.iter().map(String::as_str).collect();
            let got = read_box(&lines, self);
            let fine = match (&got, &example.error) {
                (Ok(asked), None) => {
                    example.tool.as_deref() == Some(asked.tool.as_str())
                        && asked.readings == example.readings
                }
                (Err(why), Some(expected)) => why.to_string().contains(expected.as_str()),
                _ => false,
            };
            if !fine {
                failures.push(BoxFailure {
                    index,
                    got: match got {
                        Ok(asked) => format!("{} {:?}", asked.tool, asked.readings),
                        Err(why) => why.to_string(),
                    },
                });
            }
        }
        if self.examples.is_empty() {
            failures.push(BoxFailure {
                index: 0,
                got: "the boxes need at least one example".to_string(),
            });
        }
        for (index, text) in self.prompt_examples.iter().enumerate() {
            if !self.prompt_line(text) {
                failures.push(BoxFailure {
                    index,
                    got: format!("prompt_lines example {text:?} is not a prompt line"),
                });
            }
        }
        for (index, text) in self.prompt_near_misses.iter().enumerate() {
            if self.prompt_line(text) {
                failures.push(BoxFailure {
                    index,
                    got: format!("prompt_lines near miss {text:?} is a prompt line"),
                });
            }
        }
        failures
    }
}

/// Why the box shapes of a rules file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ShapeError {
    #[error("boxes.{what}: invalid pattern {pattern:?}: {err}")]
    Pattern {
        what: String,
        pattern: String,
        err: Box<regex::Error>,
    },
    #[error("boxes.tools.{0}: a dashed value needs a pattern")]
    DashedNeedsPattern(String),
    #[error("{0}")]
    Json(serde_json::Error),
}

/// Why a permission box cannot be read (the decision's reason, and what a box example's
/// `error` is matched against).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("the permission box has no header")]
    NoHeader,
    #[error("a {0:?} box: no rule reads it")]
    NoRule(String),
    #[error("the {0:?} box shows no call between dashed lines")]
    NoCall(String),
    #[error("the box names no file")]
    NoFile,
    #[error("the {0:?} box shows no value")]
    NoValue(String),
    #[error("the box shows no command")]
    NoCommand,
    #[error("a command of {0} lines on screen: which are wraps and which newlines is not knowable")]
    TooManyLines(usize),
}

/// More lines than this of one command on screen are not read (3^(n-1) readings).
pub const MAX_LINES: usize = 5;

/// The tool call a permission box asks about: the tool and every reading of its input.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    pub tool: String,
    pub readings: Vec<Value>,
}

/// Read a permission box: `lines` are the screen lines as drawn from the box's frame line
/// down to the question. `Err` says why the call cannot be read. Its steps: the box's body
/// without its frame and borders, the header that names the tool, and the values its rule
/// reads.
pub fn read_box(lines: &[&str], shapes: &BoxShapes) -> Result<Asked, Unreadable> {
    let body = box_body(lines, shapes);
    let borders = shapes.borders.as_slice();
    let mut rest = body.iter().copied().skip_while(|l| l.trim().is_empty());
    let Some(header) = rest.next() else {
        return Err(Unreadable::NoHeader);
    };
    let header = header.trim().trim_matches(borders).trim();
    let after: Vec<&str> = rest.collect();
    let Some(known) = shapes.tools.iter().find(|t| t.def.header == header) else {
        return Err(Unreadable::NoRule(header.to_string()));
    };
    let field = known.def.field.as_str();
    Ok(Asked {
        tool: known.def.tool.clone(),
        readings: box_values(known, header, &after, shapes)?
            .into_iter()
            .map(|value| json!({ field: value }))
            .collect(),
    })
}

/// The lines below a box's frame line (all of them when none is found); in a box with side
/// borders (`╭…╮` then `│ … │`) without the borders, which are not the content (in a box
/// without them a `│ ` starts each line of a long or multi-line command).
fn box_body<'a>(lines: &[&'a str], shapes: &BoxShapes) -> Vec<&'a str> {
    let (body, bordered): (Vec<&str>, bool) = match lines.iter().position(|l| shapes.frame(l)) {
        Some(at) => (
            lines[at + 1..].to_vec(),
            shapes.bordered.is_match(lines[at]),
        ),
        None => (lines.to_vec(), false),
    };
    if !bordered {
        return body;
    }
    let borders = shapes.borders.as_slice();
    body.iter()
        .map(|l| {
            let t = l.trim_end();
            let t = t.strip_suffix(borders).unwrap_or(t).trim_end();
            let s = t.trim_start();
            s.strip_prefix(borders).unwrap_or(s)
        })
        .collect()
}

/// The values a box's rule reads from the lines `after` its header: a command's readings,
/// the first line, or what its pattern captures between the dashed lines.
fn box_values(
    known: &BoxTool,
    header: &str,
    after: &[&str],
    shapes: &BoxShapes,
) -> Result<Vec<String>, Unreadable> {
    let borders = shapes.borders.as_slice();
    let dashes: Vec<usize> = after
        .iter()
        .enumerate()
        .filter(|(_, l)| shapes.dashed(l))
        .map(|(i, _)| i)
        .collect();
    let block = |from: usize, to: usize| -> Vec<&str> { after[from + 1..to].to_vec() };
    let inside = || match dashes.as_slice() {
        [first, second, ..] => Ok(block(*first, *second)),
        _ => Err(Unreadable::NoCall(header.to_string())),
    };
    let captured = |text: &str| {
        known
            .pattern
            .as_ref()
            .and_then(|p| p.captures(text))
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().to_string())
    };
    Ok(match known.def.value {
        ValueAt::Command => {
            let lines = match dashes.as_slice() {
                [first, second, ..] => block(*first, *second),
                _ => older_bash_block(after),
            };
            command_readings(&lines, &shapes.continued)?
        }
        ValueAt::FirstLine => {
            let value = after
                .iter()
                .map(|l| l.trim().trim_matches(borders).trim())
                .find(|l| !l.is_empty())
                .ok_or(Unreadable::NoFile)?;
            if shapes.dashed(value) {
                return Err(Unreadable::NoFile);
            }
            vec![value.to_string()]
        }
        ValueAt::DashedJoined => {
            let text: String = inside()?.iter().map(|l| l.trim()).collect();
            vec![captured(&text).ok_or_else(|| Unreadable::NoValue(header.to_string()))?]
        }
        ValueAt::DashedLine => {
            let value = inside()?
                .iter()
                .find_map(|l| captured(l.trim()))
                .ok_or_else(|| Unreadable::NoValue(header.to_string()))?;
            vec![value]
        }
    })
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

/// The readings of a command drawn on `lines`: one line is itself; lines that start with a
/// `continued` glyph (`│ `) join every way a wrap or a newline allows.
fn command_readings(lines: &[&str], continued: &[char]) -> Result<Vec<String>, Unreadable> {
    let parts: Vec<&str> = lines
        .iter()
        .map(|l| {
            let t = l.trim_start();
            match t.strip_prefix(continued) {
                Some(rest) => rest.strip_prefix(' ').unwrap_or(rest).trim_end(),
                None => t.trim_end(),
            }
        })
        .filter(|l| !l.is_empty())
        .collect();
    match parts.len() {
        0 => Err(Unreadable::NoCommand),
        1 => Ok(vec![parts[0].to_string()]),
        n if n > MAX_LINES => Err(Unreadable::TooManyLines(n)),
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
/// shell prompt the program was started at (a line `shapes` read as typed at a prompt, the
/// pane rules' `boxes.prompt_lines`; the program's banner, its command line and an earlier
/// command's output are not part of the question), at most [`QUESTION_WINDOW`] lines.
pub fn paragraph<'a, 'b>(lines: &'a [&'b str], shapes: &BoxShapes) -> &'a [&'b str] {
    let end = lines.len();
    let window = end.saturating_sub(QUESTION_WINDOW);
    let from = lines[window..end.saturating_sub(1).max(window)]
        .iter()
        .rposition(|l| l.trim().is_empty() || shapes.prompt_line(l))
        .map_or(window, |at| window + at + 1);
    &lines[from..]
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
    /// of a permission box) to the question, as drawn; `shapes` say how a box is drawn.
    pub fn screen(&self, door: Door, lines: &[&str], shapes: &BoxShapes) -> ScreenDecision {
        let (decision, tool, input) = match door {
            Door::ToolCall => {
                let (decision, asked) = decide_box(&self.policy, lines, &self.context, shapes);
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
                    super::prompt::judge_question(paragraph(lines, shapes), None),
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
pub fn decide_box(
    policy: &Policy,
    lines: &[&str],
    ctx: &Context,
    shapes: &BoxShapes,
) -> (Decision, Option<Asked>) {
    let asked = match read_box(lines, shapes) {
        Ok(asked) => asked,
        Err(why) => {
            return (
                Decision {
                    decision: Verdict::NoDecision,
                    rule: "unreadable-screen".to_string(),
                    reason: why.to_string(),
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
pub(crate) mod tests {
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

    /// The box shapes of the embedded pane rules.
    pub(crate) fn shapes() -> &'static BoxShapes {
        static SHAPES: std::sync::OnceLock<BoxShapes> = std::sync::OnceLock::new();
        SHAPES.get_or_init(|| {
            BoxShapes::from_rules_file(include_str!("../../rules/pane-rules.json"))
                .expect("the embedded box shapes compile")
        })
    }

    /// The box of a captured screen: from its frame line to the question.
    fn the_box(screen: &str) -> Vec<&str> {
        let lines: Vec<&str> = screen.lines().collect();
        let question = lines
            .iter()
            .rposition(|l| l.trim_start().starts_with("Do you want to"))
            .expect("a question");
        let start = lines[..question]
            .iter()
            .rposition(|l| shapes().frame(l))
            .expect("a frame");
        lines[start..=question].to_vec()
    }

    /// The shapes of the rules file read their own examples as written.
    #[test]
    fn the_box_shapes_read_their_examples() {
        assert_eq!(shapes().check(), Vec::new());
        assert!(shapes().examples.len() >= 5);
    }

    fn screen_ctx() -> Context {
        Context {
            home: Some("/home/dev".into()),
            ..Context::default()
        }
    }

    #[test]
    fn the_real_boxes_of_2_1_332_are_read() {
        let read = |screen| read_box(&the_box(screen), shapes()).unwrap();
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
        let decided = |screen| decide_box(&policy, &the_box(screen), &screen_ctx(), shapes()).0;
        assert_eq!(decided(HARMLESS).decision, Verdict::Allow);
        assert_eq!(decided(WRITE).rule, "write-in-project");
        assert_eq!(decided(EDIT).decision, Verdict::Allow);
        assert_eq!(decided(READ).rule, "read-only");
        for screen in [MULTILINE, LONG, NO_DESCRIPTION, SENSITIVE, FETCH] {
            assert_ne!(decided(screen).decision, Verdict::Allow);
        }
    }

    /// The reader `boxes.prompt_lines` replaced: a line typed at a shell prompt.
    fn typed_at_prompt(line: &str) -> bool {
        let t = line.trim_start();
        if ["$ ", "# ", "% ", "❯ ", "➜ "]
            .iter()
            .any(|p| t.starts_with(p))
        {
            return true;
        }
        let t = t
            .strip_prefix('(')
            .and_then(|r| r.split_once(") ").map(|(_, r)| r))
            .unwrap_or(t);
        t.split_once(['$', '#', '%']).is_some_and(|(head, rest)| {
            head.contains('@') && !head.contains(' ') && (rest.is_empty() || rest.starts_with(' '))
        })
    }

    /// The prompt lines read every line of every captured screen as the Rust reader did, and
    /// their own examples as written.
    #[test]
    fn the_prompt_lines_read_the_captures_as_the_reader_did() {
        assert_eq!(shapes().check(), Vec::new());
        let (mut lines, mut prompts) = (0, 0);
        for line in crate::fixtures::fixture_lines("") {
            let old = typed_at_prompt(&line);
            assert_eq!(shapes().prompt_line(&line), old, "{line:?}");
            lines += 1;
            prompts += usize::from(old);
        }
        assert!(
            lines > 10_000 && prompts > 50,
            "{lines} lines, {prompts} prompts"
        );
    }

    proptest::proptest! {
        #[test]
        fn the_prompt_lines_agree_with_the_reader_on_any_line(
            line in "[ \t\u{a0}()@$#%a:~/❯➜]{0,14}"
        ) {
            proptest::prop_assert_eq!(shapes().prompt_line(&line), typed_at_prompt(&line), "{:?}", line);
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
        assert_eq!(paragraph(&screen, shapes()), &screen[2..]);
        let pip = [
            "$ pip uninstall numpy",
            "Found existing installation: numpy 1.26",
            "  Would remove:",
            "    /usr/lib/python3/numpy/*",
            "Proceed (Y/n)?",
        ];
        assert_eq!(paragraph(&pip, shapes()), &pip[1..]);
        let approval = Approval::builtin();
        assert_eq!(
            approval
                .screen(Door::Question, &screen, shapes())
                .decision
                .decision,
            Verdict::Allow
        );
        assert_eq!(
            approval
                .screen(Door::Question, &pip, shapes())
                .decision
                .rule,
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
            decide_box(&policy, &screen, &screen_ctx(), shapes()).0
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
