//! The pane rules as data: `rules/pane-rules.json` embedded in the binary, optionally
//! extended or overridden by a user file (`--rules FILE`), validated by
//! `schemas/pane-rules.schema.json`.
//!
//! A user file has the same shape as the embedded one, every part optional. A rule, mask or
//! destructive marker with the id of an existing one replaces it whole; `"disabled": true`
//! removes it; new ids are added. `agents` and `shells` replace the embedded lists when given.
//! Rules run in `priority` order (lowest first; ties keep file order), the first that matches
//! decides.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, anyhow, bail};
use regex::Regex;
use serde::{Deserialize, Serialize};

use super::{Action, Agent, Class, Key};
use crate::fsx;
use crate::protocol::document;

/// The embedded rules, as checked in.
pub const EMBEDDED: &str = include_str!("../../rules/pane-rules.json");

/// How many non-blank lines from the bottom a rule looks at when it does not say.
const DEFAULT_LAST: usize = 10;

/// How many lines further up a `block` rule's view may reach to the start of its block.
pub const BLOCK_LINES: usize = 40;

/// A regular expression compiled on first use: a command that classifies one screen only
/// pays for the rules it reaches.
#[derive(Debug)]
pub struct Pattern {
    pub source: String,
    compiled: OnceLock<Regex>,
    /// The group this pattern was compiled with, and its index there (see [`Group`]).
    group: Option<(Arc<Group>, usize)>,
}

/// Patterns that are usually all tried on the same text and usually all miss (the
/// destructive markers, on every line of an approval prompt). One `RegexSet` of all of them
/// compiles several times faster than the patterns one by one, and answers "which ones match"
/// exactly as they would; a pattern is compiled alone only when the set says it matches and
/// the match itself is wanted.
#[derive(Debug)]
pub struct Group {
    sources: Vec<String>,
    set: OnceLock<Option<regex::RegexSet>>,
    /// The last text the set was run on and what matched there: the members are asked one
    /// after another about the same text, and one scan answers them all.
    last: std::sync::Mutex<Option<(String, regex::SetMatches)>>,
}

impl Group {
    /// Make `patterns` one group.
    pub fn join(patterns: &mut [&mut Pattern]) {
        let group = Arc::new(Group {
            sources: patterns.iter().map(|p| p.source.clone()).collect(),
            set: OnceLock::new(),
            last: std::sync::Mutex::new(None),
        });
        for (index, pattern) in patterns.iter_mut().enumerate() {
            pattern.group = Some((group.clone(), index));
        }
    }

    /// `None` when the set cannot be built (a size limit the single patterns stay under):
    /// the patterns are then tried one by one.
    fn set(&self) -> Option<&regex::RegexSet> {
        self.set
            .get_or_init(|| regex::RegexSet::new(&self.sources).ok())
            .as_ref()
    }

    /// Does member `index` match `text`? `None` when the set cannot answer.
    fn matches(&self, index: usize, text: &str) -> Option<bool> {
        let set = self.set()?;
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match &*last {
            Some((seen, matches)) if seen == text => Some(matches.matched(index)),
            _ => {
                let matches = set.matches(text);
                let answer = matches.matched(index);
                *last = Some((text.to_string(), matches));
                Some(answer)
            }
        }
    }
}

impl Pattern {
    fn new(source: String) -> Pattern {
        Pattern {
            source,
            compiled: OnceLock::new(),
            group: None,
        }
    }

    /// The first match in `text`, like `self.regex().find(text)`, but a grouped pattern is
    /// asked of its group first and compiled alone only when it matches.
    pub fn find<'t>(&self, text: &'t str) -> Option<regex::Match<'t>> {
        if let Some((group, index)) = &self.group
            && group.matches(*index, text) == Some(false)
        {
            return None;
        }
        self.regex().find(text)
    }

    pub fn regex(&self) -> &Regex {
        self.compiled.get_or_init(|| {
            // Validated when the rules were loaded; a failure here is a bug.
            Regex::new(&self.source).expect("pattern validated at load")
        })
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.regex().is_match(text)
    }

    fn check(&self) -> Result<(), BadPattern> {
        regex::RegexBuilder::new(&self.source)
            .build()
            .map(|_| ())
            .map_err(BadPattern)
    }
}

/// A pattern that does not compile, shown as the one line of the regex crate's message that
/// says why.
#[derive(Debug)]
struct BadPattern(regex::Error);

impl std::fmt::Display for BadPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&one_line_regex_error(&self.0))
    }
}

fn one_line_regex_error(err: &regex::Error) -> String {
    match err {
        regex::Error::Syntax(text) => text
            .lines()
            .rev()
            .find(|l| l.starts_with("error:"))
            .unwrap_or("invalid regular expression")
            .to_string(),
        other => other.to_string(),
    }
}

/// A volatile-text mask (see [`super::normalize`]).
#[derive(Debug)]
pub struct Mask {
    pub id: String,
    pattern: Pattern,
    pub replace: String,
    pub explanation: String,
}

impl Mask {
    pub fn regex(&self) -> &Regex {
        self.pattern.regex()
    }
}

/// All masks of the embedded rules as one set, for a one-pass "is there anything to mask"
/// test; `None` for other mask lists (user rules), which are tried one by one.
pub fn mask_set(masks: &[Mask]) -> Option<&'static regex::RegexSet> {
    static SET: OnceLock<regex::RegexSet> = OnceLock::new();
    let embedded = &RuleSet::embedded().masks;
    if !std::ptr::eq(masks, embedded.as_slice()) {
        return None;
    }
    Some(SET.get_or_init(|| {
        regex::RegexSet::new(embedded.iter().map(|m| m.pattern.source.as_str()))
            .expect("embedded masks compile")
    }))
}

/// A fact: wording that says one thing about a screen line (an agent's exit text, a usage
/// limit, a footer saying it is busy), as data so a new agent release is a data change. The
/// readers of a screen ([`super::waiting`], [`super::classify`]) ask for facts by id; every
/// fact carries examples that must match and near misses that must not
/// ([`RuleSet::check_facts`]).
#[derive(Debug)]
pub struct Fact {
    pub id: String,
    pub patterns: Vec<Pattern>,
    pub explanation: String,
    pub examples: Vec<String>,
    pub near_misses: Vec<String>,
}

impl Fact {
    /// Does one of the fact's patterns match `text`?
    pub fn is_match(&self, text: &str) -> bool {
        self.patterns.iter().any(|p| p.is_match(text))
    }

    /// The first match of the first pattern that matches `text`.
    pub fn find<'t>(&self, text: &'t str) -> Option<regex::Match<'t>> {
        self.patterns.iter().find_map(|p| p.regex().find(text))
    }

    /// What the first group of the first pattern that matches `text` captured (a fact that
    /// carries a value, e.g. `stream-retry-after`'s seconds; each of its patterns has the
    /// group, checked at load: [`VALUE_FACTS`]).
    pub fn first_group<'t>(&self, text: &'t str) -> Option<&'t str> {
        self.patterns
            .iter()
            .find_map(|p| p.regex().captures(text))
            .and_then(|c| c.get(1))
            .map(|m| m.as_str())
    }
}

/// The facts that carry a value in their first group ([`Fact::first_group`]): each of their
/// patterns must have one, or a rules file is invalid.
pub const VALUE_FACTS: &[&str] = &["stream-retry-after"];

/// The facts of a rule set, by id.
#[derive(Debug, Default)]
pub struct Facts(BTreeMap<String, Fact>);

/// The facts the readers of a screen ask for: a rules file without one of them is invalid.
pub const REQUIRED_FACTS: &[&str] = &[
    "exit-text",
    "agent-frame",
    "shell-prompt",
    "input-placeholder",
    "usage-limit",
    "weekly-window",
    "api-error",
    "billing",
    "spinner",
    "busy-footer",
    "retrying",
    "tool-running",
    "auto-continue-armed",
    "auto-continue-cancelled",
    "menu-hint",
    "question-aside",
    "no-loss",
    "prompt-echo",
    "input-glyph",
    "composer-glyph",
    "menu-cursor",
    "turn-bullet",
    "message-block",
    "rule-line",
    "stream-billing",
    "stream-error-clears",
    "stream-error-auth",
    "stream-error-invalid-request",
    "stream-retry-after",
];

impl Facts {
    /// The fact with this id. Every id in [`REQUIRED_FACTS`] is present in a loaded rule set.
    pub fn get(&self, id: &str) -> &Fact {
        self.0
            .get(id)
            .unwrap_or_else(|| panic!("fact {id:?} is required and was checked at load"))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Fact> {
        self.0.values()
    }
}

/// A fact example that did not come out as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FactFailure {
    pub fact: String,
    /// `example` (did not match) or `near-miss` (matched).
    pub kind: &'static str,
    pub text: String,
}

/// A destructive marker: text that makes the action under approval destructive.
#[derive(Debug)]
pub struct Marker {
    pub id: String,
    /// Applies only to rules that name it (a rule's default `markers` leave it out).
    pub opt_in: bool,
    /// Also tested on the path of these file tools' calls (`Read`, `Write`, `Edit`) when the
    /// approval policy read them from a permission box: a path is exact where a description
    /// is not.
    pub on_paths: Vec<String>,
    pub pattern: Pattern,
    pub explanation: String,
}

/// Where a rule looks for the action under approval (destructive markers are searched there).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SubjectDef {
    /// How many lines above the matched line belong to the subject.
    pub above: usize,
    /// The subject starts at the nearest line above the match that matches this (tested on
    /// the trimmed line, box drawing included). When no such line is within `above`, the
    /// subject is not fully visible and the prompt counts as destructive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
}

/// A sample screen for a rule's own test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Example {
    pub screen: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Agent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground: Option<String>,
}

/// A rule as written in a rules file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<Agent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    #[serde(default, rename = "match", skip_serializing_if = "Vec::is_empty")]
    pub patterns: Vec<String>,
    #[serde(default, rename = "with", skip_serializing_if = "Vec::is_empty")]
    pub with: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unless: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_followed_by: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreground: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground_required: Option<bool>,
    /// Match the live menu's highlighted option (its label, cursor and number removed)
    /// instead of lines; `match`, when also given, must then match a line in scope.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default_option: Vec<String>,
    /// The rule also decides every pane tmux reports dead (`#{pane_dead}`), whatever it shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<usize>,
    /// The rule's view reaches up through the block its first line sits in (the lines above
    /// it with no blank line between, at most [`BLOCK_LINES`] more): an error message that
    /// wraps over many lines is read whole, wherever its first line is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<Key>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<SubjectDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markers: Option<Vec<String>>,
    /// Read the subject as shell commands too ([`crate::policy::destructive`]); default true. Off for
    /// prompts whose subject is file content (an edit's diff), not a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<bool>,
    /// Ask the approval policy before answering: `tool-call` (a permission box, decided like
    /// the PermissionRequest hook) or `question` (a program's yes/no question).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<crate::policy::screen::Door>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub near_misses: Vec<Example>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MaskDef {
    id: String,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    replace: Option<String>,
    #[serde(default)]
    explanation: Option<String>,
}

/// A fact as written: named wording one line of a screen is tested for, with its examples.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FactDef {
    id: String,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    patterns: Vec<String>,
    #[serde(default)]
    explanation: Option<String>,
    #[serde(default)]
    examples: Vec<String>,
    #[serde(default)]
    near_misses: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MarkerDef {
    id: String,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    opt_in: bool,
    #[serde(default)]
    on_paths: Vec<String>,
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    explanation: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(rename = "$schema", default)]
    _schema: Option<String>,
    #[serde(default)]
    version: Option<u32>,
    #[serde(default)]
    agents: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    hosts: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    agent_screens: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    shells: Option<Vec<String>>,
    #[serde(default)]
    chrome: Option<Vec<String>>,
    #[serde(default)]
    menu_hints: Option<Vec<String>>,
    #[serde(default)]
    facts: Vec<FactDef>,
    #[serde(default)]
    boxes: Option<crate::policy::screen::BoxShapesDef>,
    #[serde(default)]
    masks: Vec<MaskDef>,
    #[serde(default)]
    destructive: Vec<MarkerDef>,
    #[serde(default)]
    rules: Vec<RuleDef>,
}

/// A compiled rule.
#[derive(Debug)]
pub struct Rule {
    pub def: RuleDef,
    pub id: String,
    pub class: Class,
    pub action: Action,
    pub priority: i64,
    pub explanation: String,
    pub last: usize,
    pub patterns: Vec<Pattern>,
    pub with: Vec<Pattern>,
    pub unless: Vec<Pattern>,
    pub not_followed_by: Vec<Pattern>,
    /// Foreground command patterns (the `@shells` reference expanded).
    pub foreground: Vec<Pattern>,
    pub foreground_required: bool,
    pub default_option: Vec<Pattern>,
    pub option: Option<Pattern>,
    pub subject_start: Option<Pattern>,
    /// Indices into [`RuleSet::markers`] that apply to this rule's subject.
    pub markers: Vec<usize>,
}

impl Rule {
    pub fn applies_to(&self, agent: Agent) -> bool {
        self.def.agents.is_empty() || self.def.agents.contains(&agent)
    }
}

/// Every rule, mask and marker, ready to classify.
#[derive(Debug)]
pub struct RuleSet {
    /// Foreground commands that are the agent itself, per agent name.
    pub agents: BTreeMap<String, Vec<Pattern>>,
    /// Foreground commands that may run the agent or anything else (`node`, `npx`), per agent
    /// name: the agent only when the screen shows one of its [`RuleSet::agent_screens`] lines.
    pub hosts: BTreeMap<String, Vec<Pattern>>,
    /// Lines only the agent's own interface draws, per agent name.
    pub agent_screens: BTreeMap<String, Vec<Pattern>>,
    pub shells: Vec<Pattern>,
    /// Lines of the agent's own interface (footers, status indicators): never "newer output"
    /// for `not_followed_by`.
    pub chrome: Vec<Pattern>,
    /// Hint lines under a menu (`Enter to confirm · Esc to cancel`): a cursor line with
    /// unnumbered options above one of these is a menu.
    pub menu_hints: Vec<Pattern>,
    pub masks: Vec<Mask>,
    pub markers: Vec<Marker>,
    pub rules: Vec<Rule>,
    /// Named wording the screen readers test lines for ([`Fact`]).
    pub facts: Facts,
    /// How the agent's permission boxes are drawn ([`crate::policy::screen::BoxShapes`]).
    pub boxes: crate::policy::screen::BoxShapes,
    /// Where the user rules came from, if any (for messages).
    pub source: Option<String>,
}

impl RuleSet {
    /// The embedded rules (parsed once per process).
    pub fn embedded() -> &'static RuleSet {
        static EMBEDDED_SET: OnceLock<RuleSet> = OnceLock::new();
        EMBEDDED_SET.get_or_init(|| {
            load_from(EMBEDDED.as_bytes(), None)
                .unwrap_or_else(|err| panic!("embedded pane rules are invalid: {err:#}"))
        })
    }

    /// The embedded rules extended by a user file.
    pub fn with_user_file(path: &Path) -> Result<RuleSet> {
        let bounded = fsx::read_bounded(path, fsx::DOCUMENT_LIMIT)
            .with_context(|| format!("cannot read rules {}", path.display()))?;
        let bytes = document::bounded_bytes(bounded)
            .map_err(|problem| anyhow!("rules {}: {problem}", path.display()))?;
        let value = document::parse_json(&bytes)
            .map_err(|problem| anyhow!("rules {}: {problem}", path.display()))?;
        if let Some(violation) = crate::schema::violations("pane-rules", &value).first() {
            bail!(
                "rules {}: {}: {}",
                path.display(),
                violation.pointer,
                violation.message
            );
        }
        load_from(&bytes, Some(path.display().to_string()))
            .with_context(|| format!("rules {}", path.display()))
    }

    /// Every fact's examples and near misses, run: the failures (none for a sound file).
    pub fn check_facts(&self) -> Vec<FactFailure> {
        let mut failures = Vec::new();
        for fact in self.facts.iter() {
            if fact.examples.is_empty() {
                failures.push(FactFailure {
                    fact: fact.id.clone(),
                    kind: "missing",
                    text: "a fact needs at least one example".to_string(),
                });
            }
            for text in &fact.examples {
                if !fact.is_match(text) {
                    failures.push(FactFailure {
                        fact: fact.id.clone(),
                        kind: "example",
                        text: text.clone(),
                    });
                }
            }
            for text in &fact.near_misses {
                if fact.is_match(text) {
                    failures.push(FactFailure {
                        fact: fact.id.clone(),
                        kind: "near-miss",
                        text: text.clone(),
                    });
                }
            }
        }
        failures
    }

    /// The rule with this id.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|rule| rule.id == id)
    }

    /// Is `command` the agent itself?
    pub fn is_agent_command(&self, agent: Agent, command: &str) -> bool {
        self.agents
            .get(agent.as_str())
            .is_some_and(|patterns| patterns.iter().any(|p| p.is_match(command)))
    }

    /// Is the program in front the agent? Its own process name is; a host (`node`) is only
    /// when one of `lines` is the agent's own interface, because a host runs any program.
    pub fn is_agent<'a>(
        &self,
        agent: Agent,
        command: &str,
        lines: impl IntoIterator<Item = &'a str>,
    ) -> bool {
        if self.is_agent_command(agent, command) {
            return true;
        }
        let hosted = self
            .hosts
            .get(agent.as_str())
            .is_some_and(|patterns| patterns.iter().any(|p| p.is_match(command)));
        let Some(screens) = self.agent_screens.get(agent.as_str()) else {
            return false;
        };
        hosted
            && lines
                .into_iter()
                .any(|line| screens.iter().any(|p| p.is_match(line)))
    }

    /// Is `command` a shell?
    pub fn is_shell(&self, command: &str) -> bool {
        self.shells.iter().any(|p| p.is_match(command))
    }
}

fn load_from(user: &[u8], source: Option<String>) -> Result<RuleSet> {
    let base: RulesFile = serde_json::from_str(EMBEDDED).context("embedded rules do not parse")?;
    let user: Option<RulesFile> = match source {
        Some(_) => Some(serde_json::from_slice(user).map_err(|err| anyhow!("{err}"))?),
        None => None,
    };
    let mut agents = base.agents.clone().unwrap_or_default();
    let mut hosts = base.hosts.clone().unwrap_or_default();
    let mut agent_screens = base.agent_screens.clone().unwrap_or_default();
    let mut shells = base.shells.clone().unwrap_or_default();
    let mut chrome = base.chrome.clone().unwrap_or_default();
    let mut menu_hints = base.menu_hints.clone().unwrap_or_default();
    let mut masks = base.masks;
    let mut markers = base.destructive;
    let mut facts = base.facts;
    let mut boxes = base.boxes;
    let mut rules = base.rules;
    if let Some(user) = user {
        if user.version.is_some_and(|v| v != 1) {
            bail!(
                "version {} is not supported (use 1)",
                user.version.unwrap_or(0)
            );
        }
        if let Some(user_agents) = user.agents {
            agents.extend(user_agents);
        }
        if let Some(user_hosts) = user.hosts {
            hosts.extend(user_hosts);
        }
        if let Some(user_screens) = user.agent_screens {
            agent_screens.extend(user_screens);
        }
        if let Some(user_shells) = user.shells {
            shells = user_shells;
        }
        if let Some(user_chrome) = user.chrome {
            chrome = user_chrome;
        }
        if let Some(user_hints) = user.menu_hints {
            menu_hints = user_hints;
        }
        merge(&mut masks, user.masks, |m| &m.id, |m| m.disabled);
        merge(&mut facts, user.facts, |f| &f.id, |f| f.disabled);
        if let Some(mut user_boxes) = user.boxes {
            // A file written before the prompt lines were data keeps the embedded ones.
            if user_boxes.prompt_lines.is_none() {
                user_boxes.prompt_lines = boxes.and_then(|b| b.prompt_lines);
            }
            boxes = Some(user_boxes);
        }
        merge(&mut markers, user.destructive, |m| &m.id, |m| m.disabled);
        merge(
            &mut rules,
            user.rules,
            |r| &r.id,
            |r| r.disabled.unwrap_or(false),
        );
    }
    // User files get every pattern compiled while loading, so a bad one is a clear error
    // before anything runs; the embedded patterns are compiled by a unit test and lazily at
    // run time.
    let validate = source.is_some();
    let set = compile(
        Lists {
            agents,
            hosts,
            agent_screens,
            shells,
            chrome,
            menu_hints,
        },
        masks,
        markers,
        facts,
        rules,
        source,
        validate,
    )?;
    let boxes = crate::policy::screen::BoxShapes::compile(
        boxes.ok_or_else(|| anyhow!("the rules have no boxes section"))?,
    )
    .map_err(|err| anyhow!("{err}"))?;
    let mut set = set;
    set.boxes = boxes;
    // A user file's facts are held to their examples at load, like the embedded ones in the
    // unit tests: a fact that does not say what its examples say is an error, not a guess.
    if validate && let Some(failure) = set.boxes.check().first() {
        bail!("boxes: example {} reads as {}", failure.index, failure.got);
    }
    if validate && let Some(failure) = set.check_facts().first() {
        bail!(
            "fact {}: {} {:?} {}",
            failure.fact,
            failure.kind,
            failure.text,
            match failure.kind {
                "near-miss" => "matches",
                "missing" => "",
                _ => "does not match",
            }
        );
    }
    Ok(set)
}

/// Replace entries with the same id, drop disabled ones, append new ones.
fn merge<T>(
    base: &mut Vec<T>,
    user: Vec<T>,
    id: impl Fn(&T) -> &String,
    disabled: impl Fn(&T) -> bool,
) {
    for entry in user {
        match base.iter().position(|b| id(b) == id(&entry)) {
            Some(at) if disabled(&entry) => {
                base.remove(at);
            }
            Some(at) => base[at] = entry,
            None if disabled(&entry) => {}
            None => base.push(entry),
        }
    }
}

fn pattern(source: &str, what: &str, validate: bool) -> Result<Pattern> {
    let pattern = Pattern::new(source.to_string());
    if validate {
        pattern
            .check()
            .map_err(|err| anyhow!("{what}: invalid pattern {source:?}: {err}"))?;
    }
    Ok(pattern)
}

fn patterns(sources: &[String], what: &str, validate: bool) -> Result<Vec<Pattern>> {
    sources.iter().map(|s| pattern(s, what, validate)).collect()
}

/// The plain pattern lists of a rules file.
struct Lists {
    agents: BTreeMap<String, Vec<String>>,
    hosts: BTreeMap<String, Vec<String>>,
    agent_screens: BTreeMap<String, Vec<String>>,
    shells: Vec<String>,
    chrome: Vec<String>,
    menu_hints: Vec<String>,
}

fn compile(
    lists: Lists,
    masks: Vec<MaskDef>,
    markers: Vec<MarkerDef>,
    facts: Vec<FactDef>,
    rules: Vec<RuleDef>,
    source: Option<String>,
    v: bool,
) -> Result<RuleSet> {
    let Lists {
        agents,
        hosts,
        agent_screens,
        shells,
        chrome,
        menu_hints,
    } = lists;
    let per_agent = |lists: BTreeMap<String, Vec<String>>, what: &str| {
        lists
            .into_iter()
            .map(|(name, list)| Ok((name.clone(), patterns(&list, &format!("{what}.{name}"), v)?)))
            .collect::<Result<BTreeMap<_, _>>>()
    };
    let hosts = per_agent(hosts, "hosts")?;
    let agent_screens = per_agent(agent_screens, "agent_screens")?;
    let chrome = patterns(&chrome, "chrome", v)?;
    let menu_hints = patterns(&menu_hints, "menu_hints", v)?;
    let agents = agents
        .into_iter()
        .map(|(name, list)| Ok((name.clone(), patterns(&list, &format!("agents.{name}"), v)?)))
        .collect::<Result<BTreeMap<_, _>>>()?;
    let shell_patterns = patterns(&shells, "shells", v)?;
    let masks = masks
        .into_iter()
        .map(|m| {
            let what = format!("mask {}", m.id);
            Ok(Mask {
                pattern: pattern(
                    m.pattern
                        .as_deref()
                        .ok_or_else(|| anyhow!("{what}: no pattern"))?,
                    &what,
                    v,
                )?,
                replace: m.replace.unwrap_or_default(),
                explanation: m.explanation.unwrap_or_default(),
                id: m.id,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let markers = markers
        .into_iter()
        .map(|m| {
            let what = format!("destructive marker {}", m.id);
            Ok(Marker {
                pattern: pattern(
                    m.pattern
                        .as_deref()
                        .ok_or_else(|| anyhow!("{what}: no pattern"))?,
                    &what,
                    v,
                )?,
                explanation: m.explanation.unwrap_or_default(),
                opt_in: m.opt_in,
                on_paths: m.on_paths,
                id: m.id,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut markers = markers;
    Group::join(
        &mut markers
            .iter_mut()
            .map(|m| &mut m.pattern)
            .collect::<Vec<_>>(),
    );
    let facts = compile_facts(facts, v)?;
    let mut compiled = Vec::with_capacity(rules.len());
    for def in rules {
        compiled.push(compile_rule(def, &shells, &markers, &facts, v)?);
    }
    // Stable: equal priorities keep file order.
    compiled.sort_by_key(|rule| rule.priority);
    Ok(RuleSet {
        agents,
        hosts,
        agent_screens,
        shells: shell_patterns,
        chrome,
        menu_hints,
        masks,
        markers,
        rules: compiled,
        facts,
        boxes: crate::policy::screen::BoxShapes::empty(),
        source,
    })
}

fn compile_facts(defs: Vec<FactDef>, v: bool) -> Result<Facts> {
    let mut facts = BTreeMap::new();
    for def in defs {
        let what = format!("fact {}", def.id);
        if def.patterns.is_empty() {
            bail!("{what}: no patterns");
        }
        if VALUE_FACTS.contains(&def.id.as_str())
            && let Some(source) = def
                .patterns
                .iter()
                .find(|source| regex::Regex::new(source).is_ok_and(|re| re.captures_len() < 2))
        {
            bail!("{what}: pattern {source:?} captures no group (its first group is the value)");
        }
        let fact = Fact {
            patterns: patterns(&def.patterns, &what, v)?,
            explanation: def.explanation.unwrap_or_default(),
            examples: def.examples,
            near_misses: def.near_misses,
            id: def.id.clone(),
        };
        facts.insert(def.id, fact);
    }
    if let Some(missing) = REQUIRED_FACTS.iter().find(|id| !facts.contains_key(**id)) {
        bail!("fact {missing:?} is required (it cannot be disabled)");
    }
    Ok(Facts(facts))
}

/// A rule's pattern list with `@FACT` entries replaced by that fact's patterns.
fn expand(sources: &[String], facts: &Facts, what: &str, v: bool) -> Result<Vec<Pattern>> {
    let mut out = Vec::with_capacity(sources.len());
    for source in sources {
        match source.strip_prefix('@') {
            Some(id) => {
                let fact = facts
                    .0
                    .get(id)
                    .ok_or_else(|| anyhow!("{what}: unknown fact {source:?}"))?;
                out.extend(fact.patterns.iter().map(|p| Pattern::new(p.source.clone())));
            }
            None => out.push(pattern(source, what, v)?),
        }
    }
    Ok(out)
}

fn compile_rule(
    def: RuleDef,
    shells: &[String],
    markers: &[Marker],
    facts: &Facts,
    v: bool,
) -> Result<Rule> {
    let what = format!("rule {}", def.id);
    let class = def.class.ok_or_else(|| anyhow!("{what}: no class"))?;
    let action = def.action.ok_or_else(|| anyhow!("{what}: no action"))?;
    let priority = def.priority.ok_or_else(|| anyhow!("{what}: no priority"))?;
    let explanation = def
        .explanation
        .clone()
        .ok_or_else(|| anyhow!("{what}: no explanation"))?;
    if def.patterns.is_empty()
        && def.default_option.is_empty()
        && !def.foreground_required.unwrap_or(false)
        && def.dead != Some(true)
    {
        bail!(
            "{what}: a rule without `match` or `default_option` patterns must set foreground_required or dead"
        );
    }
    let mut foreground = Vec::new();
    for source in &def.foreground {
        if source == "@shells" {
            foreground.extend(patterns(shells, &what, v)?);
        } else {
            foreground.push(pattern(source, &what, v)?);
        }
    }
    // `@all` names every marker that is not opt-in; `!ID` takes one out of the list (a rule
    // whose subject the shell reading judges better than a pattern: `!sql-drop` on a command
    // box, where SQL words count only as an SQL client's input).
    let all = || (0..markers.len()).filter(|&i| !markers[i].opt_in);
    let marker_ids: Vec<usize> = match &def.markers {
        None => all().collect(),
        Some(ids) => {
            let mut list = Vec::new();
            let mut without = Vec::new();
            for id in ids {
                if id == "@all" {
                    list.extend(all());
                    continue;
                }
                let (into, id) = match id.strip_prefix('!') {
                    Some(id) => (&mut without, id),
                    None => (&mut list, id.as_str()),
                };
                into.push(
                    markers
                        .iter()
                        .position(|m| m.id == id)
                        .ok_or_else(|| anyhow!("{what}: unknown destructive marker {id:?}"))?,
                );
            }
            list.retain(|i| !without.contains(i));
            list.sort_unstable();
            list.dedup();
            list
        }
    };
    Ok(Rule {
        id: def.id.clone(),
        class,
        action,
        priority,
        explanation,
        last: def.last.unwrap_or(DEFAULT_LAST).max(1),
        patterns: expand(&def.patterns, facts, &what, v)?,
        with: patterns(&def.with, &what, v)?,
        unless: patterns(&def.unless, &what, v)?,
        not_followed_by: patterns(&def.not_followed_by, &what, v)?,
        foreground,
        foreground_required: def.foreground_required.unwrap_or(false),
        default_option: patterns(&def.default_option, &what, v)?,
        option: def
            .option
            .as_deref()
            .map(|s| pattern(s, &what, v))
            .transpose()?,
        subject_start: def
            .subject
            .as_ref()
            .and_then(|s| s.start.as_deref())
            .map(|s| pattern(s, &what, v))
            .transpose()?,
        markers: marker_ids,
        def,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grouped pattern finds exactly what it finds alone, on every line of every captured
    /// screen and on destructive commands, and the group set is built (not silently skipped).
    #[test]
    fn grouped_markers_find_what_they_find_alone() {
        let set = RuleSet::embedded();
        let mut lines: Vec<String> = [
            "rm -rf /",
            "git push --force origin main",
            "sudo rm -r build",
            "DROP TABLE users;",
            "git reset --hard HEAD~3",
            "chmod -R 777 /",
            "mkfs.ext4 /dev/sda1",
            "ls -la",
        ]
        .map(str::to_string)
        .to_vec();
        lines.extend(crate::fixtures::fixture_lines("panes"));
        let mut hits = 0;
        for marker in &set.markers {
            let (group, _) = marker.pattern.group.as_ref().expect("markers are grouped");
            assert!(group.set().is_some(), "the marker set compiles");
            for line in &lines {
                let grouped = marker.pattern.find(line).map(|m| (m.start(), m.end()));
                let alone = marker
                    .pattern
                    .regex()
                    .find(line)
                    .map(|m| (m.start(), m.end()));
                assert_eq!(grouped, alone, "{} on {line:?}", marker.id);
                hits += usize::from(alone.is_some());
            }
        }
        assert!(hits > 5, "the lines exercise the markers ({hits} hits)");
    }

    proptest::proptest! {
        #[test]
        fn grouped_markers_agree_on_any_text(text in "[ -~]{0,60}") {
            for marker in &RuleSet::embedded().markers {
                proptest::prop_assert_eq!(
                    marker.pattern.find(&text).map(|m| m.range()),
                    marker.pattern.regex().find(&text).map(|m| m.range())
                );
            }
        }
    }

    /// A fact that carries a value must capture it: a pattern without a group is refused at
    /// load, not read as "no value" at every tick.
    #[test]
    fn a_value_fact_without_a_group_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rules.json");
        std::fs::write(
            &file,
            r#"{"version": 1, "facts": [{"id": "stream-retry-after",
                "explanation": "no group", "patterns": ["retry after [0-9]+s"],
                "examples": ["retry after 5s"]}]}"#,
        )
        .unwrap();
        let err = format!("{:#}", RuleSet::with_user_file(&file).unwrap_err());
        assert!(err.contains("captures no group"), "{err}");
    }

    #[test]
    fn the_embedded_rules_are_valid_against_their_schema_and_complete() {
        let value: serde_json::Value = serde_json::from_str(EMBEDDED).unwrap();
        let violations = crate::schema::violations("pane-rules", &value);
        assert!(violations.is_empty(), "{violations:?}");
        let set = RuleSet::embedded();
        assert!(!set.rules.is_empty() && !set.masks.is_empty() && !set.markers.is_empty());
        let mut ids: Vec<&str> = set.rules.iter().map(|r| r.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), set.rules.len(), "rule ids are unique");
        // Every pattern compiles (they are compiled lazily at run time).
        for rule in &set.rules {
            for p in rule
                .patterns
                .iter()
                .chain(&rule.with)
                .chain(&rule.unless)
                .chain(&rule.not_followed_by)
                .chain(&rule.default_option)
                .chain(&rule.foreground)
            {
                let _ = p.regex();
            }
        }
        for p in set.chrome.iter().chain(&set.menu_hints).chain(&set.shells) {
            let _ = p.regex();
        }
    }

    #[test]
    fn user_files_replace_disable_and_add_by_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.json");
        std::fs::write(
            &path,
            r#"{"version": 1, "rules": [
                {"id": "press-enter", "disabled": true},
                {"id": "rate-limit", "class": "api-error", "action": "escalate", "priority": 60,
                 "match": ["(?i)rate limit"], "explanation": "ours"},
                {"id": "deploy-confirm", "class": "yes-no", "action": "escalate", "priority": 0,
                 "match": ["^Deploy to production\\?"], "last": 1, "explanation": "never deploy"}
            ]}"#,
        )
        .unwrap();
        let set = RuleSet::with_user_file(&path).unwrap();
        assert!(set.rule("press-enter").is_none());
        assert_eq!(set.rule("rate-limit").unwrap().explanation, "ours");
        assert_eq!(set.rules[0].id, "deploy-confirm", "sorted by priority");
    }

    #[test]
    fn bad_user_files_are_one_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.json");
        for (text, expected) in [
            (
                r#"{"version": 1, "rules": [{"id": "x", "class": "nope"}]}"#,
                "/rules/0",
            ),
            (
                r#"{"version": 1, "rules": [{"id": "x", "class": "idle", "action": "none", "priority": 1, "match": ["("], "explanation": "e"}]}"#,
                "invalid pattern",
            ),
            ("{", "invalid JSON"),
            // A fact must say what its examples say, at load.
            (
                r#"{"version": 1, "facts": [{"id": "exit-text", "patterns": ["^Bye$"], "explanation": "e", "examples": ["Goodbye!"]}]}"#,
                "fact exit-text: example \"Goodbye!\" does not match",
            ),
            (
                r#"{"version": 1, "facts": [{"id": "busy-footer", "disabled": true}]}"#,
                "fact \"busy-footer\" is required",
            ),
            // Box shapes replace the embedded ones whole, and their examples must read.
            (
                r#"{"version": 1, "boxes": {"frame": "^─", "bordered": "^╭", "borders": "│", "dashes": "╌", "tools": [{"header": "Bash command", "tool": "Bash", "field": "command", "value": "command"}], "examples": [{"lines": ["────", " Bash command", " ╌╌╌", " ls", " ╌╌╌", " Do you want to proceed?"], "tool": "Bash", "readings": [{"command": "rm -rf /"}]}]}}"#,
                "boxes: example 0 reads as Bash",
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = format!("{:#}", RuleSet::with_user_file(&path).unwrap_err());
            assert!(err.contains(expected), "{err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
