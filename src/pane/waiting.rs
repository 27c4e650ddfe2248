//! What an agent's screen says about waiting: the facts the wait core
//! ([`crate::supervise::wait`]) decides on, read once per capture beside the classification.
//!
//! The classifier names one class for the whole screen; a wait needs a few more facts that
//! the class does not carry, each read from the live bottom of a Claude Code screen (the
//! current turn above the input box, the input box, the footer):
//!
//! - the **input box**: absent, empty (or showing a placeholder such as `Resend your message
//!   to try again`, which Claude Code 2.1.33x puts there after it gave up), or holding typed
//!   text — autoctl types only into an empty box;
//! - **busy**: the footer says `esc to interrupt` or a spinner line is up;
//! - the agent's own **retry countdown** (`API error · Retrying in 4s · attempt 1/10`);
//! - a **running tool** (`⎿  Running… (4s)` under a tool call);
//! - the current turn ended on an **API error** (`● API Error: …`, `Request rejected (429)`)
//!   — with an empty box and no spinner, the agent gave up;
//! - a **usage limit** (`You've hit your 5-hour limit · resets 12:50pm (UTC)`, `Usage limit
//!   reached`), whether it is weekly, and its reset time;
//! - Claude Code's own **automatic continue** at the reset: armed (`Continuing automatically
//!   at 12:50pm · Esc to cancel`) or cancelled (`Automatic continue cancelled`);
//! - a **menu** waiting for a choice, and words of **billing** (credits, usage credits, credit
//!   balance too low): a person decides, autoctl never picks.
//!
//! Old text stays on screen: an error or a limit counts only when nothing the agent said
//! after it replaced it (a later reply clears it).
//!
//! The wording is data: each phrase is a fact of the rules file (`rules/pane-rules.json`,
//! [`super::rules::Fact`], with its examples) — `input-placeholder`, `usage-limit`,
//! `weekly-window`, `api-error`, `billing`, `spinner`, `busy-footer`, `retrying`,
//! `tool-running`, `auto-continue-armed`, `auto-continue-cancelled`, `menu-hint`; and so are
//! the glyphs the layout is drawn with: `input-glyph` (`❯`, `>`, `›`), `composer-glyph`,
//! `menu-cursor`, `turn-bullet` (`●`, `⏺`, `⎿`), `rule-line`. What stays here is the layout:
//! where the input box, the current turn and the footer are.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::normalize::clean_line;
use super::reset::{self, Zone};
use super::rules::{Fact, Facts, RuleSet};

/// The agent's input box.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(tag = "state", content = "text", rename_all = "kebab-case")]
pub enum Input {
    /// No input box on the screen (another program, a menu in its place, a generic agent).
    #[default]
    Absent,
    /// Empty, or showing one of the agent's placeholders.
    Empty,
    /// Holding text someone typed (a person, or a half-typed command).
    Typed(String),
}

/// Claude Code's own automatic continue at a usage limit's reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AutoContinue {
    #[default]
    None,
    /// `Continuing automatically at 12:50pm · Esc to cancel`.
    Armed,
    /// `Automatic continue cancelled · /rate-limit-options to wait again`.
    Cancelled,
}

/// A usage limit on screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Limit {
    /// The line that says so.
    pub text: String,
    /// A weekly (7-day) limit.
    pub weekly: bool,
    /// The reset phrase as written (`resets 12:50pm (UTC)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_text: Option<String>,
    /// The reset, placed in time (the next occurrence after the capture's clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<DateTime<Utc>>,
}

/// What one capture says about waiting (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Waiting {
    pub input: Input,
    pub busy: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retrying: Option<String>,
    pub tool_running: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    pub auto_continue: AutoContinue,
    pub menu: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub billing: Option<String>,
    /// The last non-blank line (a shell's prompt line with whatever is typed after it).
    #[serde(skip)]
    pub last_line: String,
    /// The last [`TAIL_SHOWN`] non-blank lines, trimmed: what a person is shown of a screen
    /// nobody can read (an unknown screen escalated).
    #[serde(skip)]
    pub tail: Vec<String>,
}

/// Non-blank lines kept in [`Waiting::tail`].
pub const TAIL_SHOWN: usize = 5;

impl Waiting {
    /// The agent gave up on an API error: the turn ended on it, the box is empty, nothing
    /// runs.
    pub fn gave_up(&self) -> Option<&str> {
        match (&self.error, &self.input, self.busy, &self.retrying) {
            (Some(error), Input::Empty, false, None) => Some(error),
            _ => None,
        }
    }

    /// The agent sits idle at its empty input box (no spinner, no menu): typing goes to it.
    pub fn idle_at_input(&self) -> bool {
        self.input == Input::Empty && !self.busy && !self.menu
    }
}

/// Lines read from the bottom of a capture.
const TAIL_LINES: usize = 120;

/// Text Claude Code shows in an empty input box.
fn placeholder(text: &str, facts: &Facts) -> bool {
    text.is_empty() || facts.get("input-placeholder").is_match(text)
}

/// A prompt the person (or autoctl) sent: not a menu option (`1. Yes`) and not a slash
/// command the agent runs for itself (`/rate-limit-options`).
fn person_prompt(text: &str) -> bool {
    !text.is_empty() && !text.starts_with('/') && !numbered(text)
}

fn numbered(text: &str) -> bool {
    text.split_once(['.', ')']).is_some_and(|(n, _)| {
        !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The glyphs of a screen's layout, by their facts (see the module doc).
struct Glyphs<'f> {
    input: &'f Fact,
    composer: &'f Fact,
    menu_cursor: &'f Fact,
    bullet: &'f Fact,
    rule: &'f Fact,
}

impl<'f> Glyphs<'f> {
    fn of(facts: &'f Facts) -> Glyphs<'f> {
        Glyphs {
            input: facts.get("input-glyph"),
            composer: facts.get("composer-glyph"),
            menu_cursor: facts.get("menu-cursor"),
            bullet: facts.get("turn-bullet"),
            rule: facts.get("rule-line"),
        }
    }

    fn is_rule(&self, line: &str) -> bool {
        self.rule.is_match(line.trim())
    }

    /// The text of an agent's input line (`❯ text`, Codex's `› text`), trimmed.
    fn input_line<'l>(&self, line: &'l str) -> Option<&'l str> {
        let found = self.input.find(line)?;
        Some(line[found.end()..].trim_matches(|c: char| c.is_whitespace()))
    }

    /// Codex CLI's composer (0.171): a `›` line with no rule above it, and under it only its
    /// footer — the model and directory line and the shortcuts line (a picker's `› 1. …`
    /// has its options under it).
    fn codex_composer(&self, from: &[String]) -> bool {
        self.composer.is_match(&from[0])
            && from[1..].iter().filter(|l| !l.trim().is_empty()).count() <= 2
    }

    /// A message's text after its bullets.
    fn strip_bullet(&self, text: &str) -> String {
        self.bullet
            .find(text)
            .map_or(text, |found| &text[found.end()..])
            .to_string()
    }

    fn bullet(&self, text: &str) -> bool {
        self.bullet.is_match(text)
    }
}

/// Read the waiting facts of one screen (`now` and `zone` place a reset phrase in time) with
/// the embedded rules' wording.
pub fn read(text: &str, now: DateTime<Utc>, zone: Zone) -> Waiting {
    read_with(text, now, zone, &RuleSet::embedded().facts)
}

/// [`read`] with the wording of a rule set (the embedded rules extended by a user file).
pub fn read_with(text: &str, now: DateTime<Utc>, zone: Zone, facts: &Facts) -> Waiting {
    let limit = facts.get("usage-limit");
    let weekly = facts.get("weekly-window");
    let api_error = facts.get("api-error");
    let billing = facts.get("billing");
    let spinner = facts.get("spinner");
    let busy = facts.get("busy-footer");
    let retrying = facts.get("retrying");
    let tool_running = facts.get("tool-running");
    let armed = facts.get("auto-continue-armed");
    let cancelled = facts.get("auto-continue-cancelled");
    let menu_hint = facts.get("menu-hint");
    let glyphs = Glyphs::of(facts);
    // The live part of a screen is its bottom; a long capture's history is not read.
    let mut lines: Vec<String> = text
        .rsplit('\n')
        .take(TAIL_LINES)
        .map(|l| clean_line(l.as_bytes()))
        .collect();
    lines.reverse();
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    let Some(last) = last else {
        return Waiting::default();
    };
    let mut tail: Vec<String> = lines[..=last]
        .iter()
        .rev()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(TAIL_SHOWN)
        .map(str::to_string)
        .collect();
    tail.reverse();
    let mut w = Waiting {
        last_line: lines[last].clone(),
        tail,
        ..Waiting::default()
    };
    // The input box: the lowest `❯` line with a rule right above it, or Codex's composer.
    let input_at = (1..=last).rev().take(12).find(|&i| {
        glyphs.input_line(&lines[i]).is_some()
            && (glyphs.is_rule(&lines[i - 1]) || glyphs.codex_composer(&lines[i..=last]))
    });
    let (region_end, footer): (usize, &[String]) = match input_at {
        Some(i) => {
            let text = glyphs.input_line(&lines[i]).unwrap_or_default();
            w.input = if placeholder(text, facts) {
                Input::Empty
            } else {
                Input::Typed(text.to_string())
            };
            (i - 1, &lines[i + 1..=last])
        }
        None => (last + 1, &[]),
    };
    // Claude Code says it in its footer, Codex in its status line above the composer
    // (`• Working (5s • esc to interrupt)`): either way the agent is busy.
    w.busy = footer.iter().any(|line| busy.is_match(line));
    if footer.iter().any(|line| armed.is_match(line)) {
        w.auto_continue = AutoContinue::Armed;
    } else if footer.iter().any(|line| cancelled.is_match(line)) {
        w.auto_continue = AutoContinue::Cancelled;
    }
    // The current turn: from the person's last prompt (a `❯ text` line) to the input box.
    let start = (0..region_end)
        .rev()
        .take(60)
        .find(|&i| glyphs.input_line(&lines[i]).is_some_and(person_prompt))
        .map_or(region_end.saturating_sub(20), |i| i + 1);
    #[derive(PartialEq)]
    enum Said {
        Nothing,
        Error,
        Limit,
        Reply,
    }
    let mut said = Said::Nothing;
    for line in &lines[start..region_end] {
        let t = line.trim();
        if t.is_empty() || glyphs.is_rule(t) {
            continue;
        }
        if spinner.is_match(t) || busy.is_match(t) {
            w.busy = true;
        }
        if retrying.is_match(t) {
            w.retrying = Some(t.to_string());
        }
        if tool_running.is_match(t) {
            w.tool_running = true;
        }
        if let Some(m) = billing.find(t) {
            w.billing = Some(m.as_str().to_string());
        }
        if cancelled.is_match(t) {
            w.auto_continue = AutoContinue::Cancelled;
            continue;
        }
        if armed.is_match(t) {
            if w.auto_continue == AutoContinue::None {
                w.auto_continue = AutoContinue::Armed;
            }
            continue;
        }
        if !glyphs.bullet(t) {
            continue;
        }
        if limit.is_match(t) {
            let found = reset::find(t, now, zone);
            // The first limit line of a turn names the window and its reset; the lines
            // after it ("Usage limit reached · set to continue…") repeat it.
            if said != Said::Limit || w.limit.as_ref().is_some_and(|l| l.reset_text.is_none()) {
                w.limit = Some(Limit {
                    text: glyphs.strip_bullet(t),
                    weekly: weekly.is_match(t),
                    reset_text: found.as_ref().map(|f| f.text.clone()),
                    reset_at: found.and_then(|f| f.at).map(|at| at.with_timezone(&Utc)),
                });
            }
            said = Said::Limit;
            w.error = None;
        } else if api_error.is_match(t) {
            w.error = Some(glyphs.strip_bullet(t));
            said = Said::Error;
        } else {
            said = Said::Reply;
            w.error = None;
            w.limit = None;
            w.auto_continue = AutoContinue::None;
        }
    }
    let _ = said;
    // A menu at the bottom: numbered options under a cursor, or its hint line.
    let tail_start = last.saturating_sub(14);
    for line in &lines[tail_start..=last] {
        let t = line.trim();
        let numbered_cursor = glyphs.menu_cursor.is_match(t);
        // The armed automatic continue's "Esc to cancel" is no menu.
        let hint = menu_hint.is_match(t) && !armed.is_match(t);
        if numbered_cursor || hint {
            w.menu = true;
        }
        if let Some(m) = billing.find(t) {
            w.billing = Some(m.as_str().to_string());
        }
    }
    if w.menu {
        // The box a menu replaces is not an input box.
        if input_at.is_none() {
            w.input = Input::Absent;
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/panes/claude-code/{name}.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn now() -> DateTime<Utc> {
        "2026-11-26T03:00:00Z".parse().unwrap()
    }

    fn read_fixture(name: &str) -> Waiting {
        read(&fixture(name), now(), Zone::Utc)
    }

    fn codex(name: &str) -> Waiting {
        let path = format!(
            "{}/tests/fixtures/panes/codex-0.171/{name}.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        read(&std::fs::read_to_string(&path).unwrap(), now(), Zone::Utc)
    }

    #[test]
    fn codexs_composer_is_its_input_box() {
        // Codex 0.171 draws `› Ask Codex to do anything` with no rule above it: after a usage
        // limit it sits idle there, and that is where a resume is typed.
        for name in [
            "usage-limit-try-again-at",
            "idle-after-reply",
            "idle-fresh-start",
        ] {
            let w = codex(name);
            assert_eq!(w.input, Input::Empty, "{name}");
            assert!(w.idle_at_input(), "{name}: {w:?}");
        }
        // Its status line above the composer says it is busy.
        let w = codex("rate-limit-retrying");
        assert_eq!(w.input, Input::Empty);
        assert!(w.busy && !w.idle_at_input(), "{w:?}");
        // A picker's cursor line is no composer.
        for name in ["picker-permissions", "picker-model", "trust-folder"] {
            let w = codex(name);
            assert!(!w.idle_at_input(), "{name}: {w:?}");
        }
        // Text a person typed stays theirs.
        let typed = std::fs::read_to_string(format!(
            "{}/tests/fixtures/panes/codex-0.171/usage-limit-try-again-at.txt",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
        .replace("› Ask Codex to do anything", "› wait for me");
        let w = read(&typed, now(), Zone::Utc);
        assert_eq!(w.input, Input::Typed("wait for me".into()));
        assert!(!w.idle_at_input());
    }

    #[test]
    fn a_given_up_error_is_an_error_at_an_empty_box() {
        for name in ["api-529-gave-up", "api-500-gave-up", "api-429-gave-up"] {
            let w = read_fixture(name);
            assert_eq!(w.input, Input::Empty, "{name}");
            assert!(!w.busy, "{name}");
            assert!(w.gave_up().is_some(), "{name}: {w:?}");
            assert!(w.limit.is_none(), "{name}");
        }
    }

    #[test]
    fn the_agents_own_retry_is_busy_and_not_a_give_up() {
        for name in ["api-529-retrying", "api-500-retrying", "api-429-retrying"] {
            let w = read_fixture(name);
            assert!(w.busy, "{name}");
            assert!(w.retrying.is_some(), "{name}");
            assert_eq!(w.gave_up(), None, "{name}");
        }
    }

    #[test]
    fn working_idle_and_a_running_tool() {
        let w = read_fixture("working-no-response-66s");
        assert!(w.busy && !w.tool_running && w.error.is_none());
        let w = read_fixture("working-bash-child-running");
        assert!(w.busy && w.tool_running);
        let w = read_fixture("idle-after-reply");
        assert!(w.idle_at_input() && w.error.is_none() && w.limit.is_none());
        // Old errors above a live spinner are not current.
        let w = read_fixture("mixed-old-errors-then-working");
        assert!(w.busy && w.gave_up().is_none(), "{w:?}");
    }

    #[test]
    fn usage_limits_with_their_reset_and_menus() {
        let w = read_fixture("quota-session-limit-waiting");
        let limit = w.limit.clone().expect("a limit");
        assert!(!limit.weekly);
        assert_eq!(
            limit.reset_at,
            Some("2026-11-26T05:43:00Z".parse().unwrap())
        );
        assert!(w.idle_at_input(), "{w:?}");
        let w = read_fixture("quota-session-limit-menu");
        assert!(w.limit.is_some() && w.menu && !w.idle_at_input(), "{w:?}");
        let w = read_fixture("quota-weekly-limit-menu-dismissed");
        assert!(w.limit.as_ref().unwrap().weekly);
        let w = read_fixture("quota-weekly-limit-menu");
        assert!(w.menu && w.limit.as_ref().unwrap().weekly, "{w:?}");
    }

    #[test]
    fn claude_code_2_1_332_automatic_continue() {
        let w = read_fixture("../claude-code-2.1.332/quota-auto-continue-armed");
        assert_eq!(w.auto_continue, AutoContinue::Armed);
        assert!(!w.menu, "Esc to cancel of the armed continue is no menu");
        let limit = w.limit.clone().unwrap();
        assert_eq!(
            limit.reset_at,
            Some("2026-11-26T12:50:00Z".parse().unwrap())
        );
        assert!(w.idle_at_input());
        let w = read_fixture("../claude-code-2.1.332/quota-auto-continue-cancelled");
        assert_eq!(w.auto_continue, AutoContinue::Cancelled);
        assert_eq!(
            w.limit.as_ref().unwrap().reset_text.as_deref(),
            Some("resets 12:50pm (UTC)")
        );
        assert!(w.idle_at_input());
    }

    /// Every real capture of both releases, read by its name: what a wait needs to know.
    #[test]
    fn every_real_capture_reads_as_its_name_says() {
        for dir in ["claude-code", "claude-code-2.1.332"] {
            let path = format!("{}/tests/fixtures/panes/{dir}", env!("CARGO_MANIFEST_DIR"));
            for entry in std::fs::read_dir(&path).unwrap() {
                let name = entry.unwrap().file_name().into_string().unwrap();
                let Some(stem) = name.strip_suffix(".txt") else {
                    continue;
                };
                if stem.ends_with(".escapes") {
                    continue;
                }
                let w = read_fixture(&format!("../{dir}/{stem}"));
                let what = format!("{dir}/{stem}: {w:?}");
                // x-should-retry: false: the agent stops at once, like after its retries.
                let gave_up =
                    stem.ends_with("-gave-up") || stem == "api-429-oauth-no-unified-headers";
                // An API-key login sees a usage limit as a plain 429 after the retries: a give-up.
                if gave_up {
                    assert!(w.gave_up().is_some(), "{what}");
                } else {
                    assert!(w.gave_up().is_none(), "{what}");
                }
                if stem.ends_with("-retrying") && !stem.starts_with("quota") {
                    assert!(w.busy && w.retrying.is_some(), "{what}");
                }
                // A limit the agent retries by itself is its own countdown (busy).
                if stem.starts_with("quota-") && stem.ends_with("-retrying") {
                    assert!(w.busy && w.retrying.is_some(), "{what}");
                } else if stem.starts_with("quota-") && !gave_up {
                    assert!(w.limit.is_some(), "{what}");
                    assert_eq!(
                        w.limit.as_ref().unwrap().weekly,
                        stem.contains("weekly"),
                        "{what}"
                    );
                }
                if stem.starts_with("working-") {
                    assert!(w.busy && w.limit.is_none(), "{what}");
                }
                if stem.starts_with("idle-") {
                    assert!(
                        w.idle_at_input() && w.error.is_none() && w.limit.is_none(),
                        "{what}"
                    );
                }
                if stem.starts_with("credit-balance") {
                    assert!(w.billing.is_some(), "{what}");
                }
            }
        }
    }

    #[test]
    fn placeholders_are_empty_and_typed_text_is_kept() {
        let screen = "● API Error: Repeated 529 Overloaded errors.\n──────────────\n❯ Resend your message to try again\n──────────────\n  ? for shortcuts";
        let w = read(screen, now(), Zone::Utc);
        assert_eq!(w.input, Input::Empty);
        assert!(w.gave_up().is_some());
        let typed = screen.replace("Resend your message to try again", "/ai-cli-task exec");
        let w = read(&typed, now(), Zone::Utc);
        assert_eq!(w.input, Input::Typed("/ai-cli-task exec".into()));
        assert_eq!(w.gave_up(), None);
    }

    #[test]
    fn a_later_reply_clears_an_error_and_billing_is_seen() {
        let screen = "❯ go\n● API Error: 500 Internal server error\n● Done. I fixed it.\n──────────────\n❯ \n──────────────\n  ? for shortcuts";
        assert_eq!(read(screen, now(), Zone::Utc).error, None);
        let screen = "❯ go\n● API Error: Your credit balance is too low to access the Anthropic API.\n──────────────\n❯ \n──────────────\n  ? for shortcuts";
        let w = read(screen, now(), Zone::Utc);
        assert_eq!(w.billing.as_deref(), Some("credit balance is too low"));
        assert_eq!(read("", now(), Zone::Utc), Waiting::default());
    }

    /// What every checked-in capture says about waiting, as recorded in
    /// `tests/fixtures/panes/waiting.jsonl` (`AUTOCTL_UPDATE=1 cargo test --lib waiting`
    /// rewrites it): wording moved between Rust and the rules file must not change a reading.
    #[test]
    fn every_capture_reads_as_recorded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/panes");
        let mut files = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() && !path.ends_with("capture-tools") {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "txt") {
                    files.push(path);
                }
            }
        }
        files.sort();
        assert!(files.len() >= 500, "{} captures", files.len());
        let mut got = String::new();
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            let w = read(&String::from_utf8_lossy(&bytes), now(), Zone::Utc);
            let line = serde_json::json!({
                "file": path.strip_prefix(&root).unwrap().to_string_lossy(),
                "waiting": w,
                "last_line": w.last_line,
            });
            got.push_str(&line.to_string());
            got.push('\n');
        }
        let recorded = root.join("waiting.jsonl");
        if std::env::var_os("AUTOCTL_UPDATE").is_some_and(|v| v == "1") {
            std::fs::write(&recorded, &got).unwrap();
        }
        let want = std::fs::read_to_string(&recorded).unwrap_or_default();
        let differ: Vec<&str> = got
            .lines()
            .filter(|line| !want.lines().any(|w| w == *line))
            .take(5)
            .collect();
        assert!(
            got == want,
            "{} captures; readings that differ from {}:\n{}",
            files.len(),
            recorded.display(),
            differ.join("\n")
        );
    }
}
