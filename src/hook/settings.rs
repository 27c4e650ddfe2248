//! `autoctl hook install`: merge autoctl's hooks and status line into a Claude Code
//! `settings.json`, keeping every other key, every hook of the user's and the order of both —
//! and, with `--agent`, autoctl's hooks into Codex CLI's `hooks.json` or Gemini CLI's
//! `settings.json`, which hold hooks in the same shape (`hooks.<Event>[].hooks[]` of `{"type":
//! "command", "command": …}`) under their own event names ([`wiring_for`]).
//!
//! What is installed ([`wiring`]): `PreToolUse` (matcher `*`) → `hook pre-tool-use` (the
//! policy's floor in every permission mode, which also records the state);
//! `PermissionRequest` → `hook permission-request` (the policy's answer, which also records
//! the state); `Stop` → `hook stop` and `StopFailure` →
//! `hook stop-failure` (both also record the state); every other event autoctl reads →
//! `hook event`; `statusLine` → `autoctl statusline`, wrapping a status line the user already
//! has (`autoctl statusline --then CMD`) instead of dropping it.
//!
//! The file is read into an order-preserving tree ([`Json`]), changed, and printed the way
//! Claude Code writes it (two-space indentation), so a second install changes no byte and an
//! uninstall gives back the user's entries as they were. A file that is not a JSON object, has
//! duplicate keys, or holds `hooks`/`statusLine` of the wrong shape is refused, untouched.

use std::fmt::Write as _;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::hook::agents::HookAgent;

/// A JSON value that keeps the order of object keys.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn set(&mut self, key: &str, value: Json) {
        if let Json::Object(entries) = self {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => entries.push((key.to_string(), value)),
            }
        }
    }

    fn remove(&mut self, key: &str) {
        if let Json::Object(entries) = self {
            entries.retain(|(k, _)| k != key);
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    fn str(text: &str) -> Json {
        Json::String(text.to_string())
    }

    fn object(entries: Vec<(&str, Json)>) -> Json {
        Json::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    /// Print the way Claude Code writes settings (`JSON.stringify(value, null, 2)`).
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out
    }

    fn write(&self, out: &mut String, depth: usize) {
        let pad = |out: &mut String, depth: usize| out.push_str(&"  ".repeat(depth));
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => {
                let _ = write!(out, "{n}");
            }
            Json::String(s) => {
                out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()))
            }
            Json::Array(items) if items.is_empty() => out.push_str("[]"),
            Json::Object(entries) if entries.is_empty() => out.push_str("{}"),
            Json::Array(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    pad(out, depth + 1);
                    item.write(out, depth + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(out, depth);
                out.push(']');
            }
            Json::Object(entries) => {
                out.push_str("{\n");
                for (i, (key, value)) in entries.iter().enumerate() {
                    pad(out, depth + 1);
                    out.push_str(&serde_json::to_string(key).unwrap_or_default());
                    out.push_str(": ");
                    value.write(out, depth + 1);
                    out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
                }
                pad(out, depth);
                out.push('}');
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(n)
                    .map(Json::Number)
                    .ok_or_else(|| E::custom("a number JSON cannot hold"))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::String(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Json, E> {
                Ok(Json::String(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut entries: Vec<(String, Json)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Json>()? {
                    if entries.iter().any(|(k, _)| *k == key) {
                        return Err(de::Error::custom(format!("duplicate key {key:?}")));
                    }
                    entries.push((key, value));
                }
                Ok(Json::Object(entries))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// One hook autoctl installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire {
    pub event: &'static str,
    /// The `autoctl hook` subcommand.
    pub subcommand: &'static str,
    /// Seconds the agent gives the hook.
    pub timeout: u64,
    /// Another subcommand to wire when this binary lacks `subcommand` (a PreToolUse that
    /// only records, before `hook pre-tool-use` existed).
    pub fallback: Option<&'static str>,
    /// The group's tool matcher (`*`: every tool), for the events that take one.
    pub matcher: Option<&'static str>,
}

/// The events `hook event` records for Claude Code (PreToolUse is recorded by `hook
/// pre-tool-use`, which answers it; a PermissionDenied also goes to the decision log).
pub const EVENT_HOOKS: [&str; 9] = [
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionDenied",
    "Notification",
    "PreCompact",
    "PostCompact",
];

/// The events `hook event` records for Codex CLI (its `Interrupt`: Esc ended the turn).
pub const CODEX_EVENT_HOOKS: [&str; 7] = [
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Interrupt",
];

/// The events `hook event` records for Gemini CLI (its names for Claude Code's
/// UserPromptSubmit and PostToolUse; PreCompress comes before every context check).
pub const GEMINI_EVENT_HOOKS: [&str; 6] = [
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterTool",
    "Notification",
    "PreCompress",
];

impl Wire {
    const fn new(event: &'static str, subcommand: &'static str, timeout: u64) -> Wire {
        Wire {
            event,
            subcommand,
            timeout,
            fallback: None,
            matcher: None,
        }
    }

    /// The subcommand this binary can run for the wire, if any.
    pub fn chosen(&self, available: &dyn Fn(&str) -> bool) -> Option<&'static str> {
        if available(self.subcommand) {
            Some(self.subcommand)
        } else {
            self.fallback.filter(|sub| available(sub))
        }
    }
}

/// Everything `hook install` wires into Claude Code, in the order it adds them.
pub fn wiring() -> Vec<Wire> {
    wiring_for(HookAgent::Claude)
}

/// Everything `hook install --agent AGENT` wires, in the order it adds them: every event the
/// typed state reads → `hook event`, the turn's end → `hook stop`, the tool doors → `hook
/// permission-request` (Claude Code, Codex) and `hook pre-tool-use` (Codex's PreToolUse,
/// Gemini's BeforeTool; `hook event` where this binary has no `hook pre-tool-use`).
pub fn wiring_for(agent: HookAgent) -> Vec<Wire> {
    let events: &[&'static str] = match agent {
        HookAgent::Claude => &EVENT_HOOKS,
        HookAgent::Codex => &CODEX_EVENT_HOOKS,
        HookAgent::Gemini => &GEMINI_EVENT_HOOKS,
    };
    let mut wires: Vec<Wire> = events
        .iter()
        .map(|event| Wire::new(event, "event", 10))
        .collect();
    match agent {
        HookAgent::Claude => {
            // The policy's floor, before every tool call in every permission mode.
            wires.push(Wire {
                fallback: Some("event"),
                matcher: Some("*"),
                ..Wire::new("PreToolUse", "pre-tool-use", 30)
            });
            wires.push(Wire::new("PermissionRequest", "permission-request", 30));
            wires.push(Wire::new("Stop", "stop", 30));
            wires.push(Wire::new("StopFailure", "stop-failure", 10));
        }
        HookAgent::Codex => {
            wires.push(Wire {
                fallback: Some("event"),
                ..Wire::new("PreToolUse", "pre-tool-use", 30)
            });
            wires.push(Wire::new("PermissionRequest", "permission-request", 30));
            wires.push(Wire::new("Stop", "stop", 30));
        }
        HookAgent::Gemini => {
            wires.push(Wire {
                fallback: Some("event"),
                ..Wire::new("BeforeTool", "pre-tool-use", 30)
            });
            wires.push(Wire::new("AfterAgent", "stop", 30));
        }
    }
    wires
}

/// A settings file that cannot be changed safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

/// Parse a settings file (empty or whitespace only: an empty object).
pub fn parse(text: &str) -> Result<Json, Invalid> {
    if text.trim().is_empty() {
        return Ok(Json::Object(Vec::new()));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Json::deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|err| Invalid(format!("not valid JSON ({err})")))?;
    if !matches!(value, Json::Object(_)) {
        return Err(Invalid("not a JSON object".to_string()));
    }
    check_shape(&value)?;
    Ok(value)
}

fn check_shape(settings: &Json) -> Result<(), Invalid> {
    if let Some(hooks) = settings.get("hooks") {
        let Json::Object(events) = hooks else {
            return Err(Invalid("\"hooks\" is not an object".to_string()));
        };
        for (event, groups) in events {
            let Json::Array(groups) = groups else {
                return Err(Invalid(format!("\"hooks.{event}\" is not an array")));
            };
            for group in groups {
                match group.get("hooks") {
                    Some(Json::Array(_)) => {}
                    _ => {
                        return Err(Invalid(format!(
                            "an entry of \"hooks.{event}\" has no \"hooks\" array"
                        )));
                    }
                }
            }
        }
    }
    match settings.get("statusLine") {
        None | Some(Json::Object(_)) => Ok(()),
        Some(_) => Err(Invalid("\"statusLine\" is not an object".to_string())),
    }
}

/// The words of a command line, split on whitespace (enough to recognise autoctl's own).
fn words(command: &str) -> Vec<&str> {
    command.split_whitespace().collect()
}

fn is_autoctl(word: &str) -> bool {
    let word = word.trim_matches(['\'', '"']);
    word == "autoctl" || word.ends_with("/autoctl")
}

/// The `autoctl hook` subcommand a hook command runs, if it is one of autoctl's.
fn our_subcommand(command: &str) -> Option<String> {
    let words = words(command);
    let start = words.iter().position(|w| is_autoctl(w))?;
    (words.get(start + 1) == Some(&"hook")).then(|| words.get(start + 2).map(|s| s.to_string()))?
}

/// The foreign command inside `autoctl statusline --then CMD`, or `Some(None)` for a plain
/// `autoctl statusline`; `None` when the command is not autoctl's.
fn our_statusline(command: &str) -> Option<Option<String>> {
    let words = words(command);
    let start = words.iter().position(|w| is_autoctl(w))?;
    if words.get(start + 1) != Some(&"statusline") {
        return None;
    }
    let rest = command.split_once("statusline").map(|(_, r)| r.trim())?;
    match rest.strip_prefix("--then") {
        Some(quoted) => Some(Some(unquote(quoted.trim()))),
        None => Some(None),
    }
}

/// Whether a hook command is one of autoctl's (`autoctl hook …`, by any path to autoctl).
pub fn is_ours(command: &str) -> bool {
    our_subcommand(command).is_some()
}

/// Whether `settings` runs `autoctl hook SUBCOMMAND` on `event` (by any path to autoctl).
pub fn wires(settings: &Json, event: &str, subcommand: &str) -> bool {
    let Some(Json::Array(groups)) = settings.get("hooks").and_then(|h| h.get(event)) else {
        return false;
    };
    groups.iter().any(|group| match group.get("hooks") {
        Some(Json::Array(hooks)) => hooks.iter().any(|hook| {
            hook.get("command")
                .and_then(Json::as_str)
                .and_then(our_subcommand)
                .is_some_and(|sub| sub == subcommand)
        }),
        _ => false,
    })
}

/// How the hooks and the status line of `settings` name autoctl (`autoctl`,
/// `/usr/local/bin/autoctl`, a quoted path), each once, in the order found: what must resolve
/// in the agent's environment for them to run (`doctor`'s `hook command` check).
pub fn autoctl_programs(settings: &Json) -> Vec<String> {
    let mut commands: Vec<&str> = Vec::new();
    if let Some(Json::Object(events)) = settings.get("hooks") {
        for (_, groups) in events {
            let Json::Array(groups) = groups else {
                continue;
            };
            for group in groups {
                if let Some(Json::Array(hooks)) = group.get("hooks") {
                    commands.extend(
                        hooks
                            .iter()
                            .filter_map(|h| h.get("command").and_then(Json::as_str)),
                    );
                }
            }
        }
    }
    if let Some(command) = settings
        .get("statusLine")
        .and_then(|line| line.get("command"))
        .and_then(Json::as_str)
    {
        commands.push(command);
    }
    let mut programs: Vec<String> = Vec::new();
    for command in commands {
        // The shell's own reading (quotes removed), as `/bin/sh` runs the command.
        let program = crate::shell::commands(command)
            .into_iter()
            .flat_map(|c| c.words)
            .find(|w| is_autoctl(w));
        if let Some(program) = program
            && !programs.contains(&program)
        {
            programs.push(program);
        }
    }
    programs
}

fn unquote(text: &str) -> String {
    // The inverse of shell::quote_if_needed for what it produces.
    match text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        Some(inner) => inner.replace(r"'\''", "'"),
        None => text.to_string(),
    }
}

/// What `install`/`uninstall` did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Changes {
    /// Lines for the person: "added Stop → autoctl hook stop", ...
    pub notes: Vec<String>,
}

/// Install autoctl's hooks and status line; `autoctl` is how the commands name the binary.
/// `available` says which `autoctl hook` subcommands this binary has: a hook it lacks is not
/// installed (a command that does not exist would fail on every event).
pub fn install(settings: &mut Json, autoctl: &str, available: &dyn Fn(&str) -> bool) -> Changes {
    install_for(HookAgent::Claude, settings, autoctl, available)
}

/// [`install`] for `agent`'s hook file: Codex CLI's and Gemini CLI's commands carry `--agent`
/// (so each is read in its own vocabulary), Gemini's entries a `name` (its `/hooks enable|disable
/// NAME` and the key it trusts a project's hooks by) and a timeout in milliseconds, and only
/// Claude Code gets the status line.
pub fn install_for(
    agent: HookAgent,
    settings: &mut Json,
    autoctl: &str,
    available: &dyn Fn(&str) -> bool,
) -> Changes {
    let mut changes = Changes::default();
    let wires: Vec<(Wire, &'static str)> = wiring_for(agent)
        .into_iter()
        .filter_map(|w| w.chosen(available).map(|sub| (w, sub)))
        .collect();
    if settings.get("hooks").is_none() {
        settings.set("hooks", Json::Object(Vec::new()));
    }
    let hooks = settings.get_mut("hooks").expect("just set");
    remove_unwired(hooks, &wires, &mut changes);
    for (wire, subcommand) in &wires {
        let (command, wanted) = hook_entry(agent, autoctl, wire, subcommand);
        wire_hook(hooks, wire, subcommand, &command, wanted, &mut changes);
    }
    if agent == HookAgent::Claude {
        wrap_statusline(settings, autoctl, &mut changes);
    }
    changes
}

/// Our entries on events we do not wire there (hook event on PermissionRequest, an old
/// layout) go first.
fn remove_unwired(hooks: &mut Json, wires: &[(Wire, &'static str)], changes: &mut Changes) {
    let Json::Object(events) = hooks else {
        return;
    };
    for (event, groups) in events.iter_mut() {
        let keep = |sub: &str| {
            wires
                .iter()
                .any(|(w, chosen)| w.event == event && *chosen == sub)
        };
        let removed = retain_hooks(groups, |command| {
            our_subcommand(command).is_none_or(|sub| keep(&sub))
        });
        for command in removed {
            changes.notes.push(format!("removed {event} → {command}"));
        }
    }
}

/// The command and the hook entry `agent` is given for `subcommand`: Codex's and Gemini's
/// commands carry `--agent`, Gemini's entry a `name` and a timeout in milliseconds.
fn hook_entry(agent: HookAgent, autoctl: &str, wire: &Wire, subcommand: &str) -> (String, Json) {
    let command = match agent {
        HookAgent::Claude => format!("{autoctl} hook {subcommand}"),
        other => format!("{autoctl} hook {subcommand} --agent {}", other.as_str()),
    };
    let wanted = match agent {
        HookAgent::Gemini => Json::object(vec![
            ("name", Json::str(&format!("autoctl-{subcommand}"))),
            ("type", Json::str("command")),
            ("command", Json::str(&command)),
            ("timeout", Json::Number((wire.timeout * 1000).into())),
        ]),
        _ => Json::object(vec![
            ("type", Json::str("command")),
            ("command", Json::str(&command)),
            ("timeout", Json::Number(wire.timeout.into())),
        ]),
    };
    (command, wanted)
}

/// One wire: exactly our entry kept once where it is there (other copies of the same
/// subcommand dropped), else any old copy replaced by a group with the wire's matcher.
fn wire_hook(
    hooks: &mut Json,
    wire: &Wire,
    subcommand: &str,
    command: &str,
    wanted: Json,
    changes: &mut Changes,
) {
    if hooks.get(wire.event).is_none() {
        hooks.set(wire.event, Json::Array(Vec::new()));
    }
    let groups = hooks.get_mut(wire.event).expect("just set");
    let matcher = wire.matcher.map(Json::str);
    let present = match &*groups {
        Json::Array(list) => list.iter().any(|g| {
            g.get("matcher") == matcher.as_ref()
                && matches!(g.get("hooks"), Some(Json::Array(hs)) if hs.contains(&wanted))
        }),
        _ => false,
    };
    if present {
        // Exactly ours is there; drop any other copy of the same subcommand.
        let mut seen = false;
        retain_hooks(groups, |c| {
            if our_subcommand(c).as_deref() != Some(subcommand) {
                return true;
            }
            if c == command && !seen {
                seen = true;
                return true;
            }
            false
        });
        return;
    }
    retain_hooks(groups, |c| our_subcommand(c).as_deref() != Some(subcommand));
    if let Json::Array(list) = groups {
        let mut group = Vec::new();
        if let Some(matcher) = matcher {
            group.push(("matcher", matcher));
        }
        group.push(("hooks", Json::Array(vec![wanted])));
        list.push(Json::object(group));
    }
    changes
        .notes
        .push(format!("added {} → {command}", wire.event));
}

/// Claude Code's status line runs `autoctl statusline`: added where there is none, a
/// foreign one wrapped (`--then` runs it after).
fn wrap_statusline(settings: &mut Json, autoctl: &str, changes: &mut Changes) {
    let ours = format!("{autoctl} statusline");
    match settings.get("statusLine") {
        None => {
            settings.set(
                "statusLine",
                Json::object(vec![
                    ("type", Json::str("command")),
                    ("command", Json::str(&ours)),
                    ("padding", Json::Number(0.into())),
                ]),
            );
            changes.notes.push(format!("added statusLine → {ours}"));
        }
        Some(line) => {
            let command = line.get("command").and_then(Json::as_str).unwrap_or("");
            if our_statusline(command).is_none() {
                let wrapped = if command.trim().is_empty() {
                    ours.clone()
                } else {
                    format!("{ours} --then {}", crate::shell::quote_if_needed(command))
                };
                let line = settings.get_mut("statusLine").expect("present");
                line.set("type", Json::str("command"));
                line.set("command", Json::str(&wrapped));
                changes
                    .notes
                    .push(format!("wrapped statusLine → {wrapped}"));
            }
        }
    }
}

/// Remove every autoctl hook and give the status line back.
pub fn uninstall(settings: &mut Json) -> Changes {
    let mut changes = Changes::default();
    if let Some(Json::Object(events)) = settings.get_mut("hooks") {
        for (event, groups) in events.iter_mut() {
            for command in retain_hooks(groups, |c| our_subcommand(c).is_none()) {
                changes.notes.push(format!("removed {event} → {command}"));
            }
        }
        events.retain(|(_, groups)| !matches!(groups, Json::Array(list) if list.is_empty()));
        if events.is_empty() {
            settings.remove("hooks");
        }
    }
    let restored = settings
        .get("statusLine")
        .and_then(|l| l.get("command"))
        .and_then(Json::as_str)
        .and_then(our_statusline);
    match restored {
        Some(Some(foreign)) => {
            if let Some(line) = settings.get_mut("statusLine") {
                line.set("command", Json::String(foreign.clone()));
            }
            changes
                .notes
                .push(format!("restored statusLine → {foreign}"));
        }
        Some(None) => {
            settings.remove("statusLine");
            changes.notes.push("removed statusLine".to_string());
        }
        None => {}
    }
    changes
}

/// Keep the hook entries whose command passes `keep`; drop groups left empty. Returns the
/// commands removed.
fn retain_hooks(groups: &mut Json, mut keep: impl FnMut(&str) -> bool) -> Vec<String> {
    let mut removed = Vec::new();
    let Json::Array(list) = groups else {
        return removed;
    };
    list.retain_mut(|group| {
        let Some(Json::Array(hooks)) = group.get_mut("hooks") else {
            return true;
        };
        let before = hooks.len();
        hooks.retain(|hook| {
            let command = hook.get("command").and_then(Json::as_str).unwrap_or("");
            let kept = keep(command);
            if !kept {
                removed.push(command.to_string());
            }
            kept
        });
        !(before > 0 && hooks.is_empty())
    });
    removed
}

/// The settings printed back, ending with a newline when the original did (or was new).
pub fn render(settings: &Json, original: &str) -> String {
    let mut text = settings.pretty();
    if original.is_empty() || original.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// A unified diff of two texts, with three lines of context.
pub fn diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // Longest common subsequence table (settings files are small).
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // The edit script: (tag, old line index, new line index).
    let mut ops: Vec<(char, usize, usize)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', i, j));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] > lcs[i + 1][j]) {
            ops.push(('+', i, j));
            j += 1;
        } else {
            ops.push(('-', i, j));
            i += 1;
        }
    }
    let mut out = String::new();
    if ops.iter().all(|(tag, _, _)| *tag == ' ') {
        return out;
    }
    let _ = writeln!(out, "--- {old_name}\n+++ {new_name}");
    let context = 3;
    let mut k = 0;
    while k < ops.len() {
        if ops[k].0 == ' ' {
            k += 1;
            continue;
        }
        // A hunk: from `context` lines before this change to `context` after the last change
        // that is within 2*context of the previous one.
        let start = k.saturating_sub(context);
        let mut end = k;
        let mut last_change = k;
        while end < ops.len() {
            if ops[end].0 != ' ' {
                last_change = end;
            } else if end - last_change > 2 * context {
                break;
            }
            end += 1;
        }
        let end = (last_change + context + 1).min(ops.len());
        let old_start = ops[start].1;
        let new_start = ops[start].2;
        let old_len = ops[start..end].iter().filter(|o| o.0 != '+').count();
        let new_len = ops[start..end].iter().filter(|o| o.0 != '-').count();
        let _ = writeln!(
            out,
            "@@ -{},{old_len} +{},{new_len} @@",
            old_start + usize::from(old_len > 0),
            new_start + usize::from(new_len > 0)
        );
        for &(tag, i, j) in &ops[start..end] {
            let line = if tag == '+' { b[j] } else { a[i] };
            let _ = writeln!(out, "{tag}{line}");
        }
        k = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_gets_its_own_hook_entry() {
        let wire = Wire {
            event: "Stop",
            subcommand: "event",
            timeout: 10,
            fallback: None,
            matcher: None,
        };
        let (command, json) = hook_entry(HookAgent::Claude, "/bin/autoctl", &wire, "event");
        assert_eq!(command, "/bin/autoctl hook event");
        assert_eq!(json.get("command"), Some(&Json::str(&command)));
        assert_eq!(json.get("timeout"), Some(&Json::Number(10u64.into())));
        assert_eq!(json.get("name"), None);
        let (command, _) = hook_entry(HookAgent::Codex, "/bin/autoctl", &wire, "event");
        assert_eq!(command, "/bin/autoctl hook event --agent codex");
        let (command, json) = hook_entry(HookAgent::Gemini, "/bin/autoctl", &wire, "event");
        assert_eq!(command, "/bin/autoctl hook event --agent gemini");
        assert_eq!(json.get("name"), Some(&Json::str("autoctl-event")));
        assert_eq!(json.get("timeout"), Some(&Json::Number(10_000u64.into())));
    }

    const USER: &str = r#"{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm test)"]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/audit.sh"
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "jq -r '.model.display_name'",
    "padding": 1
  }
}
"#;

    fn installed(text: &str) -> String {
        let mut s = parse(text).unwrap();
        install(&mut s, "autoctl", &|_| true);
        render(&s, text)
    }

    #[test]
    fn the_programs_the_hooks_run_are_listed_once() {
        let mut s = parse("{}").unwrap();
        install(&mut s, "autoctl", &|_| true);
        assert_eq!(autoctl_programs(&s), ["autoctl"]);
        let s = parse(
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"'/opt/my tools/autoctl' hook stop"},
               {"type":"command","command":"jq . >/dev/null"}]}]},
               "statusLine":{"type":"command","command":"/usr/local/bin/autoctl statusline"}}"#,
        )
        .unwrap();
        assert_eq!(
            autoctl_programs(&s),
            ["/opt/my tools/autoctl", "/usr/local/bin/autoctl"].map(String::from),
            "unquoted as the shell reads them"
        );
        assert!(autoctl_programs(&parse(r#"{"hooks":{}}"#).unwrap()).is_empty());
    }

    #[test]
    fn install_keeps_the_users_keys_and_hooks_and_is_idempotent() {
        let once = installed(USER);
        assert_eq!(installed(&once), once, "a second install changes no byte");
        let s = parse(&once).unwrap();
        assert_eq!(s.get("model"), Some(&Json::str("opus")));
        let pre = s.get("hooks").unwrap().get("PreToolUse").unwrap();
        let Json::Array(groups) = pre else { panic!() };
        assert_eq!(groups.len(), 2);
        assert_eq!(
            groups[0].get("matcher"),
            Some(&Json::str("Bash")),
            "the user's stays first"
        );
        let keys: Vec<&str> = match &s {
            Json::Object(e) => e.iter().map(|(k, _)| k.as_str()).collect(),
            _ => panic!(),
        };
        assert_eq!(keys, ["model", "permissions", "hooks", "statusLine"]);
        let line = s.get("statusLine").unwrap();
        assert_eq!(
            line.get("command").and_then(Json::as_str),
            Some(r#"autoctl statusline --then 'jq -r '\''.model.display_name'\'''"#)
        );
        assert_eq!(line.get("padding"), Some(&Json::Number(1.into())));
        for wire in wiring() {
            assert!(once.contains(&format!("autoctl hook {}", wire.subcommand)));
        }
        assert!(
            !parse(&once)
                .unwrap()
                .get("hooks")
                .unwrap()
                .get("PermissionRequest")
                .unwrap()
                .pretty()
                .contains("hook event"),
            "hook event is not installed for PermissionRequest"
        );
    }

    #[test]
    fn uninstall_gives_back_the_original() {
        let once = installed(USER);
        let mut s = parse(&once).unwrap();
        uninstall(&mut s);
        assert_eq!(render(&s, &once), parse_and_render(USER));
        let mut empty = parse("{}").unwrap();
        install(&mut empty, "/opt/bin/autoctl", &|_| true);
        uninstall(&mut empty);
        assert_eq!(empty.pretty(), "{}");
    }

    fn parse_and_render(text: &str) -> String {
        render(&parse(text).unwrap(), text)
    }

    #[test]
    fn a_changed_binary_path_replaces_the_old_entries() {
        let mut s = parse(&installed("{}")).unwrap();
        install(&mut s, "/new/autoctl", &|_| true);
        let text = s.pretty();
        assert!(!text.contains("\"autoctl hook"), "{text}");
        assert_eq!(text.matches("/new/autoctl hook stop\"").count(), 1);
    }

    #[test]
    fn invalid_files_are_refused() {
        for bad in [
            "[1]",
            "{",
            r#"{"a":1,"a":2}"#,
            r#"{"hooks":[]}"#,
            r#"{"hooks":{"Stop":{}}}"#,
            r#"{"hooks":{"Stop":[{"command":"x"}]}}"#,
            r#"{"statusLine":"x"}"#,
            "{} trailing",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse("  \n").unwrap(), Json::Object(Vec::new()));
    }

    #[test]
    fn the_diff_shows_what_changes() {
        let d = diff("a\nb\nc\n", "a\nB\nc\nd\n", "old", "new");
        assert_eq!(d, "--- old\n+++ new\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n");
        assert_eq!(diff("same\n", "same\n", "a", "b"), "");
    }

    #[test]
    fn the_example_settings_are_what_install_writes() {
        let example = include_str!("../../examples/claude/settings.json");
        assert_eq!(
            installed(""),
            example,
            "regenerate examples/claude/settings.json"
        );
    }

    #[test]
    fn a_subcommand_this_binary_lacks_is_not_installed() {
        let mut s = parse("{}").unwrap();
        install(&mut s, "autoctl", &|sub| sub != "permission-request");
        assert!(s.get("hooks").unwrap().get("PermissionRequest").is_none());
    }

    #[test]
    fn quoting_round_trips() {
        for cmd in ["plain", "jq -r '.x'", "a \"b\" 'c'", ""] {
            assert_eq!(unquote(&crate::shell::quote_if_needed(cmd)), cmd);
        }
    }
}
