//! The classifier: a screen and its foreground command in, a class, an action and the reason
//! out (DESIGN.md "Reading a pane").
//!
//! Rules look at the bottom of the screen — the last N non-blank lines, box borders ignored
//! ([`super::screen`]) — because that is where a program waits for input; text further up is
//! history. A rule can demand companions (`with`), exclude near misses (`unless`), and declare
//! itself stale when a newer message follows (`not_followed_by`), which is how an old error
//! above a fresh spinner stops counting. The first rule that matches names the class; what
//! autoctl may do about it is the safety policy's ([`safety`]): a rule alone never makes an
//! answer.

pub mod safety;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::reset::{self, Zone};
use super::rules::{Example, Pattern, Rule, RuleSet};
use super::screen::{Menu, Screen, content, find_menu};
use super::{Action, Agent, Class, Key};
use crate::policy::screen::{Approval, ScreenDecision};

/// What the classifier needs besides the screen: whose screen it is and the clock (quota
/// reset times are relative to now).
#[derive(Debug, Clone, Copy)]
pub struct Lens {
    pub agent: Agent,
    pub now: DateTime<Utc>,
    pub zone: Zone,
    /// The approval policy a prompt is answered by ([`crate::policy::screen`]).
    pub approval: &'static Approval,
}

impl Lens {
    /// A lens with the built-in approval rules.
    pub fn new(agent: Agent, now: DateTime<Utc>, zone: Zone) -> Lens {
        Lens {
            agent,
            now,
            zone,
            approval: Approval::builtin(),
        }
    }
}

/// A destructive marker found in a prompt's subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MarkerHit {
    pub id: String,
    pub matched: String,
    #[serde(skip)]
    pub explanation: String,
}

/// A rule whose pattern matched but that did not decide, and why (for `--explain`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PassedOver {
    pub rule: String,
    pub why: String,
}

/// The answer of the classifier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Classification {
    pub class: Class,
    pub action: Action,
    /// The deciding rule and the text it matched, in one line.
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    /// 1-based line of the match on the screen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub destructive: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<MarkerHit>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<Key>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<String>,
    /// The approval policy's decision on the prompt (rules with a `policy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<ScreenDecision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreground: Option<String>,
    /// What a person is asked to decide, as 16 hex digits: the deciding rule and the lines it
    /// reads (its question, the call or text under approval, its menu), masked like the
    /// screen hash and with the glyphs a waiting prompt blinks (`●` of a pending tool line)
    /// left out. A prompt that is redrawn, flickers or ticks a timer keeps its key; another
    /// question, call or menu gets another. `None` when no rule decided (the screen hash
    /// stands for an unknown screen).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// For a shell back in front of an exited agent: what the agent left on the screen above
    /// the prompt (its exit text, the dialog it exited from), the reason it exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
    /// The program in front is not the agent: the screen is read, never answered.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub observe_only: bool,
    /// The pane's program has exited and tmux keeps the pane (`remain-on-exit`): it takes no
    /// keys; a restart is `tmux respawn-pane`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pane_dead: bool,
    /// A shell prompt line is on the screen (class `shell` decided by a prompt pattern, not
    /// only by a shell being the foreground command): the shell waits for a command.
    #[serde(skip)]
    pub prompt_visible: bool,
    /// The deciding rule's explanation.
    #[serde(skip)]
    pub explanation: String,
    #[serde(skip)]
    pub passed_over: Vec<PassedOver>,
}

impl Classification {
    /// Only a person can answer this screen, so it goes to one on the first read, not after
    /// the unchanged threshold: a folder-trust or bypass dialog, a login, API-key or
    /// credential prompt, a picker or menu (a paid option among them), and every prompt the
    /// classifier escalates (destructive, or not proven harmless). Limits, billing and errors
    /// are the wait core's, which escalates them at once itself. Another program in front
    /// keeps only its dialogs, logins and pickers escalated (the rest is observed: action
    /// `none`).
    pub fn person_only(&self) -> bool {
        self.action == Action::Escalate
            && matches!(
                self.class,
                Class::Trust | Class::Auth | Class::Picker | Class::Permission | Class::YesNo
            )
    }
}

/// One line as the rules see it: the index on screen and its content with box borders
/// (`│ … │`) stripped. Lines that are only decoration or blank are not in the list.
struct View<'s> {
    lines: &'s [String],
    content: Vec<(usize, &'s str)>,
    /// The menu waiting for a choice at the bottom of the screen, if any.
    menu: Option<Menu>,
}

impl<'s> View<'s> {
    fn new(lines: &'s [String], hints: &[Pattern]) -> View<'s> {
        let content: Vec<(usize, &str)> = lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let c = content(l);
                (!c.is_empty()).then_some((i, c))
            })
            .collect();
        let menu = find_menu(lines, &content, hints);
        View {
            lines,
            content,
            menu,
        }
    }

    /// Is screen line `index` part of the live menu?
    fn in_menu(&self, index: usize) -> bool {
        self.menu.as_ref().is_some_and(|m| m.span.contains(&index))
    }

    /// The last `n` non-blank lines.
    fn scope(&self, n: usize) -> &[(usize, &'s str)] {
        &self.content[self.content.len().saturating_sub(n)..]
    }

    /// The last `n` non-blank lines, reaching further up (at most
    /// [`BLOCK_LINES`](crate::pane::rules::BLOCK_LINES) more) to what they belong to: the
    /// current turn, below the person's last prompt (the `prompt-echo` fact, the agent's
    /// empty input box and placeholders — its chrome — aside), else the block the first of
    /// them sits in (lines with no blank line between).
    fn block_scope(&self, n: usize, rules: &RuleSet) -> &[(usize, &'s str)] {
        let mut start = self.content.len().saturating_sub(n);
        let lowest = start.saturating_sub(crate::pane::rules::BLOCK_LINES);
        let echo = rules.facts.get("prompt-echo");
        let prompt = (lowest..start).rev().find(|&i| {
            let text = self.content[i].1;
            echo.is_match(text) && !rules.chrome.iter().any(|p| p.is_match(text))
        });
        if let Some(prompt) = prompt {
            return &self.content[prompt + 1..];
        }
        while start > lowest && self.content[start - 1].0 + 1 == self.content[start].0 {
            start -= 1;
        }
        &self.content[start..]
    }

    /// The view of `rule`: its last lines, or (a `block` rule) its turn or block.
    fn rule_scope(&self, rule: &Rule, rules: &RuleSet) -> &[(usize, &'s str)] {
        if rule.def.block == Some(true) {
            self.block_scope(rule.last, rules)
        } else {
            self.scope(rule.last)
        }
    }
}

struct Found<'s> {
    index: usize,
    text: &'s str,
    matched: String,
}

/// Classify a screen with a rule set.
pub fn classify(screen: &Screen, rules: &RuleSet, ctx: &Lens) -> Classification {
    let view = View::new(&screen.lines, &rules.menu_hints);
    let foreground = screen.foreground.as_deref().filter(|f| !f.is_empty());
    let mut passed_over = Vec::new();
    let seen = Seen {
        view: &view,
        foreground,
        agent: ctx.agent,
        dead: screen.dead,
    };
    for rule in &rules.rules {
        if let Some(found) = try_rule(rule, rules, &seen, &mut passed_over) {
            let mut result = safety::decide(rule, &found, &view, rules, ctx);
            result.reset_at = reset_at(rule, &found, &view, rules, ctx);
            result.key = Some(prompt_key(rule, &view, rules, result.approval.as_ref()));
            if result.class == Class::Shell {
                result.said = last_words(&view, found.index, rules);
                if let Some(said) = &result.said {
                    result
                        .reason
                        .push_str(&format!("; the agent left: {said:?}"));
                }
            }
            result.foreground = foreground.map(str::to_string);
            result.passed_over = passed_over;
            result.pane_dead = screen.dead || rule.def.dead == Some(true);
            if !result.pane_dead {
                safety::apply_foreground_policy(&mut result, rules, ctx.agent, foreground, &view);
            }
            return result;
        }
    }
    let mut result = Classification {
        class: Class::Unknown,
        action: Action::None,
        reason: "no rule matched".to_string(),
        rule: None,
        matched: None,
        line: None,
        destructive: false,
        markers: Vec::new(),
        keys: Vec::new(),
        reset_at: None,
        approval: None,
        foreground: foreground.map(str::to_string),
        key: None,
        said: None,
        observe_only: false,
        pane_dead: screen.dead,
        prompt_visible: false,
        explanation: "nothing on the bottom of the screen matched a rule; unchanged screens count toward a stall".to_string(),
        passed_over,
    };
    safety::apply_foreground_policy(&mut result, rules, ctx.agent, foreground, &view);
    result
}

/// What the rules are tried on.
struct Seen<'v, 's> {
    view: &'v View<'s>,
    foreground: Option<&'v str>,
    agent: Agent,
    dead: bool,
}

fn try_rule<'s>(
    rule: &Rule,
    rules: &RuleSet,
    seen: &Seen<'_, 's>,
    passed_over: &mut Vec<PassedOver>,
) -> Option<Found<'s>> {
    let view = seen.view;
    if !rule.applies_to(seen.agent) {
        return None;
    }
    // A dead pane (tmux's own flag) is decided by the rule that says so, whatever it shows.
    if seen.dead && rule.def.dead == Some(true) {
        let (index, text) = view.content.last().copied().unwrap_or((0, ""));
        return Some(Found {
            index,
            text,
            matched: "#{pane_dead}".to_string(),
        });
    }
    match seen.foreground {
        Some(command)
            if !rule.foreground.is_empty()
                && !rule.foreground.iter().any(|p| p.is_match(command)) =>
        {
            return None;
        }
        None if rule.foreground_required => return None,
        _ => {}
    }
    let scope = view.rule_scope(rule, rules);
    let found = if !rule.default_option.is_empty() {
        // The rule is about the live menu's highlighted option.
        let menu = view.menu.as_ref()?;
        if !scope.iter().any(|&(index, _)| index == menu.cursor) {
            return None;
        }
        let hit = rule
            .default_option
            .iter()
            .find_map(|p| p.regex().find(&menu.default))?;
        let text = content(&view.lines[menu.cursor]);
        let found = Found {
            index: menu.cursor,
            text,
            matched: hit.as_str().to_string(),
        };
        if !rule.patterns.is_empty()
            && !scope
                .iter()
                .any(|&(_, text)| rule.patterns.iter().any(|p| p.is_match(text)))
        {
            return None;
        }
        found
    } else if rule.patterns.is_empty() {
        let &(index, text) = scope.last()?;
        Found {
            index,
            text,
            matched: text.to_string(),
        }
    } else {
        scope.iter().rev().find_map(|&(index, text)| {
            rule.patterns.iter().find_map(|p| {
                p.regex().find(text).map(|m| Found {
                    index,
                    text,
                    matched: m.as_str().to_string(),
                })
            })
        })?
    };
    if let Some(missing) = rule
        .with
        .iter()
        .find(|p| !scope.iter().any(|&(_, text)| p.is_match(text)))
    {
        passed_over.push(PassedOver {
            rule: rule.id.clone(),
            why: format!(
                "matched {:?} but nothing matched {:?}",
                found.matched, missing.source
            ),
        });
        return None;
    }
    if let Some((_, text)) = scope
        .iter()
        .find(|&&(_, text)| rule.unless.iter().any(|p| p.is_match(text)))
    {
        passed_over.push(PassedOver {
            rule: rule.id.clone(),
            why: format!("matched {:?} but {text:?} is a near miss", found.matched),
        });
        return None;
    }
    if let Some(&(_, text)) = view
        .content
        .iter()
        .filter(|&&(index, _)| index > found.index && !view.in_menu(index))
        .filter(|&&(_, text)| !rules.chrome.iter().any(|p| p.is_match(text)))
        .find(|&&(_, text)| rule.not_followed_by.iter().any(|p| p.is_match(text)))
    {
        passed_over.push(PassedOver {
            rule: rule.id.clone(),
            why: format!(
                "matched {:?} but newer output follows: {text:?}",
                found.matched
            ),
        });
        return None;
    }
    Some(found)
}

/// The key of what the deciding rule asks a person (see [`Classification::key`]): its id, the
/// call the approval policy read, and the content lines of the rule's scope (the bottom of
/// the screen it matched in), each masked and with a leading status glyph dropped.
fn prompt_key(
    rule: &Rule,
    view: &View<'_>,
    rules: &RuleSet,
    approval: Option<&ScreenDecision>,
) -> String {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(rule.id.as_bytes());
    if let Some(approval) = approval {
        for part in [&approval.tool, &approval.input] {
            hasher.update(b"\n");
            hasher.update(part.as_bytes());
        }
    }
    for &(_, text) in view.rule_scope(rule, rules) {
        let masked = super::normalize::mask_line(text, &rules.masks);
        hasher.update(b"\n");
        hasher.update(masked.trim_start().as_bytes());
    }
    super::normalize::format_hash(hasher.digest())
}

/// What an exited agent left above the shell prompt at `prompt`: the nearest line of its exit
/// text (the `exit-text` fact: Claude Code's "didn't start because this folder isn't
/// trusted", Codex's "Disconnected from this task", Gemini's "Agent powering down"), else
/// the nearest line above the prompt that is not itself a command at a prompt. Lines further
/// up than [`LAST_WORDS`] belong to an earlier command.
fn last_words(view: &View<'_>, prompt: usize, rules: &RuleSet) -> Option<String> {
    let above: Vec<&str> = view
        .content
        .iter()
        .filter(|&&(index, _)| index < prompt)
        .rev()
        .take(LAST_WORDS)
        .map(|&(_, text)| text)
        .collect();
    let exit = rules.facts.get("exit-text");
    let shell = rules.facts.get("shell-prompt");
    // The agent's own frame (its input line, slash-command menu, logo) is what a dead pane's
    // last frame is mostly made of; none of it is what the agent said.
    let frame = rules.facts.get("agent-frame");
    above
        .iter()
        .find(|text| exit.is_match(text))
        .or_else(|| {
            above
                .iter()
                .take_while(|text| !shell.is_match(text) && !is_command_line(text))
                .find(|text| !frame.is_match(text))
        })
        .map(|text| text.to_string())
}

/// Content lines above a shell prompt read for an exited agent's last words.
const LAST_WORDS: usize = 15;

/// A command typed at a shell prompt (`dev@box:~/app$ claude`): the start of the agent's
/// run, above which nothing is its exit text.
fn is_command_line(text: &str) -> bool {
    text.split_once(['$', '#', '%'])
        .is_some_and(|(head, rest)| {
            (head.contains('@') || head.is_empty() || head.ends_with(['~', '/']))
                && !head.contains(' ')
                && rest.starts_with(' ')
        })
}

/// When a limit resets, for a rule whose banner names the time (`reset_at`).
fn reset_at(
    rule: &Rule,
    found: &Found<'_>,
    view: &View<'_>,
    rules: &RuleSet,
    ctx: &Lens,
) -> Option<String> {
    if !rule.def.reset_at.unwrap_or(false) {
        return None;
    }
    let following = view
        .content
        .iter()
        .filter(|&&(index, _)| index > found.index)
        .take(1)
        .map(|&(_, text)| text);
    // The banner that says when is the matched line, the one below it, or (when the
    // match is a later notice such as "Automatic continue cancelled") the nearest line
    // above it within the rule's view.
    let above = view
        .rule_scope(rule, rules)
        .iter()
        .rev()
        .filter(|&&(index, _)| index < found.index)
        .map(|&(_, text)| text);
    std::iter::once(found.text)
        .chain(following)
        .chain(above)
        .find_map(|text| reset::reset_at(text, ctx.now, ctx.zone))
        .map(|at| at.to_rfc3339())
}

/// One failed rule example (see [`check_examples`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExampleFailure {
    pub rule: String,
    pub kind: &'static str,
    pub index: usize,
    pub got: String,
}

/// Run every rule's own test: each example must be decided by that rule, each near miss must
/// not. A rule without both is a failure too. The facts' examples run too (reported as rule
/// `fact ID`).
pub fn check_examples(rules: &RuleSet, now: DateTime<Utc>) -> Vec<ExampleFailure> {
    let mut failures: Vec<ExampleFailure> = rules
        .check_facts()
        .into_iter()
        .map(|f| ExampleFailure {
            rule: format!("fact {}", f.fact),
            kind: f.kind,
            index: 0,
            got: f.text,
        })
        .chain(rules.boxes.check().into_iter().map(|f| ExampleFailure {
            rule: "boxes".to_string(),
            kind: "example",
            index: f.index,
            got: f.got,
        }))
        .collect();
    let run = |example: &Example| {
        let screen = Screen::from_text(&example.screen, example.foreground.clone());
        let ctx = Lens::new(example.agent.unwrap_or_default(), now, Zone::Utc);
        classify(&screen, rules, &ctx)
    };
    for rule in &rules.rules {
        if rule.def.examples.is_empty() || rule.def.near_misses.is_empty() {
            failures.push(ExampleFailure {
                rule: rule.id.clone(),
                kind: "missing",
                index: 0,
                got: "a rule needs at least one example and one near miss".to_string(),
            });
        }
        for (index, example) in rule.def.examples.iter().enumerate() {
            let got = run(example);
            if got.rule.as_deref() != Some(&rule.id) {
                failures.push(ExampleFailure {
                    rule: rule.id.clone(),
                    kind: "example",
                    index,
                    got: got.reason,
                });
            }
        }
        for (index, example) in rule.def.near_misses.iter().enumerate() {
            let got = run(example);
            if got.rule.as_deref() == Some(&rule.id) {
                failures.push(ExampleFailure {
                    rule: rule.id.clone(),
                    kind: "near-miss",
                    index,
                    got: got.reason,
                });
            }
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2025-06-23T15:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    pub(super) fn classify_text(
        text: &str,
        agent: Agent,
        foreground: Option<&str>,
    ) -> Classification {
        let ctx = Lens::new(agent, now(), Zone::Utc);
        classify(
            &Screen::from_text(text, foreground.map(str::to_string)),
            RuleSet::embedded(),
            &ctx,
        )
    }

    #[test]
    fn every_rule_passes_its_examples_and_near_misses() {
        let failures = check_examples(RuleSet::embedded(), now());
        assert!(failures.is_empty(), "{failures:#?}");
    }

    /// What a person must decide keys an escalation: the pending tool line's blinking `●`,
    /// the hash's masks (timers, spinners) and the history above the prompt leave it alone;
    /// another command, question or menu changes it.
    #[test]
    fn a_prompt_keeps_its_key_when_redrawn_and_another_prompt_gets_another() {
        let shown = include_str!(
            "../../../tests/fixtures/panes/claude-code-2.1.332/permission-bash-rm-rf.txt"
        );
        let key = |text: &str| classify_text(text, Agent::Claude, Some("claude")).key;
        let hash = |text: &str| crate::pane::normalize::hash(text, &RuleSet::embedded().masks);
        let dimmed = shown.replacen("● Bash(rm -rf build)", "  Bash(rm -rf build)", 1);
        assert_ne!(shown, dimmed);
        assert!(key(shown).is_some());
        assert_eq!(key(shown), key(&dimmed));
        assert_eq!(hash(shown), hash(&dimmed), "the blinking dot is masked");
        assert_ne!(
            key(shown),
            key(&shown.replace("rm -rf build", "rm -rf dist"))
        );
        assert_ne!(
            key(shown),
            key(&shown.replace("Do you want to proceed?", "Do you want to continue?"))
        );
        // An unknown screen has no key (the screen hash stands for it).
        assert_eq!(key("compiling...\n  foo.rs"), None);
    }

    /// A dead pane's last words are what the agent said, not its own frame: Claude Code's
    /// last frame after `/exit` is its logo, its input line and the slash-command menu, and it
    /// said nothing (issue 28: the reason read "the agent left: /context Show what fills the
    /// context"). Words above the frame and exit texts are still found.
    #[test]
    fn a_dead_panes_last_words_are_not_the_agents_frame() {
        let dead = |text: &str| {
            let mut screen = Screen::from_text(text, Some("sh".to_string()));
            screen.dead = true;
            classify(
                &screen,
                RuleSet::embedded(),
                &Lens::new(Agent::Claude, now(), Zone::Utc),
            )
        };
        for shown in [
            include_str!(
                "../../../tests/fixtures/panes/claude-code-2.1.332-fresh/narrow-dead-pane-after-exit.txt"
            ),
            include_str!(
                "../../../tests/fixtures/panes/claude-code-2.1.332/dead-pane-after-exit.txt"
            ),
        ] {
            let got = dead(shown);
            assert_eq!((got.class, got.action), (Class::Shell, Action::Restart));
            assert_eq!(got.said, None, "{}", got.reason);
            assert!(!got.reason.contains("/context"), "{}", got.reason);
            let replied = shown.replacen("────", "⏺ Done. The tests pass.\n\n────", 1);
            assert_eq!(
                dead(&replied).said.as_deref(),
                Some("⏺ Done. The tests pass.")
            );
        }
        let gemini = include_str!(
            "../../../tests/fixtures/panes/gemini-0.61-fresh/dead-pane-after-ctrl-c.txt"
        );
        assert_eq!(
            dead(gemini).said.as_deref(),
            Some("Agent powering down. Goodbye!")
        );
    }

    #[test]
    fn an_unknown_screen_is_unknown() {
        let got = classify_text("compiling...\n  foo.rs\n", Agent::Claude, None);
        assert_eq!((got.class, got.action), (Class::Unknown, Action::None));
        assert_eq!(classify_text("", Agent::Claude, None).class, Class::Unknown);
    }

    #[test]
    fn quota_banners_carry_their_reset_time() {
        let got = classify_text(
            "> go on\n  ⎿  Claude usage limit reached. Your limit will reset at 3pm (America/Bogota).\n\n> ",
            Agent::Claude,
            Some("claude"),
        );
        assert_eq!((got.class, got.action), (Class::Quota, Action::Wait));
        assert_eq!(got.reset_at.as_deref(), Some("2025-06-23T15:00:00-05:00"));
    }

    #[test]
    fn markdown_quotes_and_html_are_not_shell_prompts() {
        for text in ["> quoted text", "<div class=\"x\">", "<br/>", ">", "a > b"] {
            let got = classify_text(text, Agent::Generic, None);
            assert_ne!(got.class, Class::Shell, "{text}");
        }
        for text in [
            "dev@box:~/app$",
            "$",
            "bash-5.2#",
            "~/src %",
            "(venv) me@host:/x$ ",
        ] {
            let got = classify_text(text, Agent::Generic, None);
            assert_eq!(got.class, Class::Shell, "{text}");
        }
    }

    #[test]
    fn a_shell_in_front_without_a_prompt_line_shows_no_prompt() {
        // Mid-output, a heredoc continuation, a half-typed command: the shell is busy reading.
        for screen in [
            "$ cat <<EOF\n> ",
            "$ for i in 1 2; do\n> ",
            "building 3 of 9 targets",
            "$ echo half-typed",
        ] {
            let got = classify_text(screen, Agent::Claude, Some("bash"));
            assert!(!got.prompt_visible, "{screen:?}: {}", got.reason);
        }
        for screen in ["done\ndev@box:~/app$ ", "$ ", "~/app on main\n❯"] {
            let got = classify_text(screen, Agent::Claude, Some("zsh"));
            assert!(got.prompt_visible, "{screen:?}: {}", got.reason);
        }
    }

    #[test]
    fn binary_garbage_classifies_as_unknown() {
        let garbage: Vec<u8> = (1u8..=255).cycle().take(4096).collect();
        let screen = Screen::from_reader(&garbage[..], None).unwrap();
        let ctx = Lens::new(Agent::Claude, now(), Zone::Utc);
        let got = classify(&screen, RuleSet::embedded(), &ctx);
        assert_eq!(got.action, Action::None);
    }
}
