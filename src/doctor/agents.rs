//! `doctor`'s section for Codex CLI and Gemini CLI: whether autoctl's hooks are wired in the
//! agent's own hook files (`hook install --agent`), whether the agent will run them (what a
//! person must still do by hand: Codex's `/hooks` trust, the project and folder trust both
//! agents ask for), and whether they have been seen firing.
//!
//! Pure judging of the files' text, the way each agent reads them (checked against Codex 0.171
//! and Gemini 0.61):
//!
//! - **Codex** loads `.codex/hooks.json` of a project only when the project is trusted
//!   (`[projects."DIR"] trust_level = "trusted"` in `~/.codex/config.toml`), and runs a
//!   non-managed hook only once a person trusted it in `/hooks` (or at the "Hooks need review"
//!   prompt at start): it records `[hooks.state."FILE:EVENT:GROUP:INDEX"] trusted_hash = …` in
//!   the same config.toml. A hook changed since is untrusted again, which only Codex can tell
//!   (it hashes the definition): the events seen firing are the proof.
//! - **Gemini** runs a project's hooks only in a folder it trusts (`~/.gemini/trustedFolders.json`,
//!   the longest matching rule; `TRUST_PARENT` trusts the rule's parent; folder trust can be
//!   turned off in settings), trusts new project hooks by itself the first time (with a
//!   warning), and skips hooks named in `hooksConfig.disabled` or all of them with
//!   `hooksConfig.enabled: false`.

use std::path::Path;

use crate::doctor::{Check, Level, age};
use crate::hook::agents::HookAgent;
use crate::hook::session::Record;
use crate::hook::settings::{self, Json};
use crate::time::Time;

/// One of the agent's hook files as doctor found it.
#[derive(Debug, Clone)]
pub struct HookFile {
    /// `project` or `user`.
    pub layer: &'static str,
    pub path: String,
    /// Its text, when it could be read.
    pub text: Option<String>,
}

/// What doctor read for one agent.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The project directory doctor looks at (the current directory), canonical.
    pub project: String,
    pub files: Vec<HookFile>,
    /// Codex: `~/.codex/config.toml`. Gemini: `~/.gemini/trustedFolders.json`.
    pub trust: Option<String>,
    /// Gemini: the user's `~/.gemini/settings.json` (folder trust and `hooksConfig`).
    pub user_settings: Option<String>,
    /// The agent's newest hook record.
    pub newest: Option<Record>,
}

impl Found {
    /// Nothing of the agent is around: no hook file, no record.
    pub fn is_empty(&self) -> bool {
        self.newest.is_none() && self.files.iter().all(|f| f.text.is_none())
    }
}

/// The checks of one agent's section.
pub fn checks(agent: HookAgent, found: &Found, run_uses_it: bool, now: Time) -> Vec<Check> {
    if agent == HookAgent::Claude || (found.is_empty() && !run_uses_it) {
        return Vec::new();
    }
    let scope = agent.as_str();
    let mut checks = Vec::new();
    let wired = wired_files(agent, found);
    checks.push(wiring_check(agent, scope, found, &wired));
    match agent {
        HookAgent::Codex => checks.extend(codex_trust(scope, found, &wired)),
        HookAgent::Gemini => checks.extend(gemini_trust(scope, found, &wired)),
        HookAgent::Claude => {}
    }
    checks.push(fired_check(agent, scope, found.newest.as_ref(), now));
    checks
}

/// A file with autoctl's hooks in it: its layer, path, parsed text and the wires present.
struct Wired {
    layer: &'static str,
    path: String,
    settings: Json,
    events: Vec<&'static str>,
}

fn wired_files(agent: HookAgent, found: &Found) -> Vec<Wired> {
    let mut out = Vec::new();
    for file in &found.files {
        let Some(text) = &file.text else { continue };
        let Ok(settings) = settings::parse(text) else {
            continue;
        };
        let events: Vec<&'static str> = settings::wiring_for(agent)
            .iter()
            .filter(|w| {
                settings::wires(&settings, w.event, w.subcommand)
                    || w.fallback
                        .is_some_and(|f| settings::wires(&settings, w.event, f))
            })
            .map(|w| w.event)
            .collect();
        if !events.is_empty() {
            out.push(Wired {
                layer: file.layer,
                path: file.path.clone(),
                settings,
                events,
            });
        }
    }
    out
}

fn wiring_check(agent: HookAgent, scope: &str, found: &Found, wired: &[Wired]) -> Check {
    let invalid: Vec<String> = found
        .files
        .iter()
        .filter_map(|f| {
            let text = f.text.as_ref()?;
            settings::parse(text)
                .err()
                .map(|err| format!("{} is invalid ({err})", f.path))
        })
        .collect();
    let fix = format!(
        "`autoctl hook install --agent {}` (this project) or `autoctl hook install --agent {} --user --yes`",
        agent.as_str(),
        agent.as_str()
    );
    if wired.is_empty() {
        let mut detail = format!("autoctl's hooks are not in {}'s hook files", agent.title());
        if !invalid.is_empty() {
            detail = format!("{detail}; {}", invalid.join("; "));
        }
        return Check::new(scope, "hooks", Level::Warn, detail).fix(fix);
    }
    let all: Vec<&'static str> = settings::wiring_for(agent)
        .iter()
        .map(|w| w.event)
        .collect();
    let missing: Vec<&str> = all
        .iter()
        .filter(|e| !wired.iter().any(|w| w.events.contains(e)))
        .copied()
        .collect();
    let mut detail = wired
        .iter()
        .map(|w| format!("{}: {} hooks in {}", w.layer, w.events.len(), w.path))
        .collect::<Vec<_>>()
        .join("; ");
    if !invalid.is_empty() {
        detail = format!("{detail}; {}", invalid.join("; "));
    }
    if missing.is_empty() && invalid.is_empty() {
        Check::new(scope, "hooks", Level::Ok, detail)
    } else {
        if !missing.is_empty() {
            detail = format!("{detail}; not wired: {}", missing.join(", "));
        }
        Check::new(scope, "hooks", Level::Warn, detail).fix(fix)
    }
}

/// Codex's two trust steps: the project (for project hooks) and each hook (`/hooks`).
fn codex_trust(scope: &str, found: &Found, wired: &[Wired]) -> Vec<Check> {
    let mut checks = Vec::new();
    let config = found.trust.as_deref().unwrap_or("");
    if wired.iter().any(|w| w.layer == "project") {
        if codex_project_trusted(config, &found.project) {
            checks.push(Check::new(
                scope,
                "project trust",
                Level::Ok,
                format!(
                    "{} is a trusted project: Codex loads its .codex/hooks.json",
                    found.project
                ),
            ));
        } else {
            checks.push(
                Check::new(
                    scope,
                    "project trust",
                    Level::Warn,
                    format!(
                        "{} is not a trusted project in ~/.codex/config.toml: Codex ignores its .codex/hooks.json",
                        found.project
                    ),
                )
                .fix("start codex in the project and trust it when it asks (a person's choice; autoctl never answers that prompt)"),
            );
        }
    }
    if wired.is_empty() {
        return checks;
    }
    let mut total = 0;
    let mut trusted = 0;
    for file in wired {
        for (event, group, index) in our_positions(&file.settings) {
            total += 1;
            let key = format!("{}:{}:{group}:{index}", file.path, snake(&event));
            if codex_hook_trusted(config, &key) {
                trusted += 1;
            }
        }
    }
    let check = if total > 0 && trusted == total {
        Check::new(
            scope,
            "hook trust",
            Level::Ok,
            format!(
                "all {total} of autoctl's hooks were trusted in /hooks (Codex asks again after a hook changes)"
            ),
        )
    } else {
        Check::new(
            scope,
            "hook trust",
            Level::Warn,
            format!(
                "{trusted} of autoctl's {total} hooks are trusted: Codex skips the others"
            ),
        )
        .fix("start codex, open /hooks (or answer its \"Hooks need review\" prompt) and trust autoctl's hooks; `codex --dangerously-bypass-hook-trust` runs them without that, for automation that vets its hook files itself")
    };
    checks.push(check);
    checks
}

/// Where autoctl's hooks sit in a hook file: (event, group index, index in the group).
fn our_positions(settings: &Json) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let value: serde_json::Value =
        serde_json::from_str(&settings.pretty()).unwrap_or(serde_json::Value::Null);
    let Some(events) = value.get("hooks").and_then(|h| h.as_object()) else {
        return out;
    };
    for (event, groups) in events {
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            for (i, hook) in group
                .get("hooks")
                .and_then(|h| h.as_array())
                .into_iter()
                .flatten()
                .enumerate()
            {
                let command = hook.get("command").and_then(|c| c.as_str()).unwrap_or("");
                if settings::is_ours(command) {
                    out.push((event.clone(), g, i));
                }
            }
        }
    }
    out
}

/// `PreToolUse` → `pre_tool_use`, as Codex keys its hook trust.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The TOML tables of a config file: (header, body lines), in order. Enough of TOML for the
/// two tables doctor reads; anything it does not follow reads as absent.
fn tables(config: &str) -> Vec<(String, Vec<&str>)> {
    let mut out: Vec<(String, Vec<&str>)> = vec![(String::new(), Vec::new())];
    for line in config.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && !trimmed.starts_with("[[") && trimmed.ends_with(']') {
            out.push((trimmed[1..trimmed.len() - 1].trim().to_string(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(trimmed);
        }
    }
    out
}

fn toml_key(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn codex_project_trusted(config: &str, project: &str) -> bool {
    let header = format!("projects.{}", toml_key(project));
    tables(config).iter().any(|(name, body)| {
        *name == header
            && body.iter().any(|line| {
                let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
                compact == "trust_level=\"trusted\"" || compact == "trust_level='trusted'"
            })
    })
}

fn codex_hook_trusted(config: &str, key: &str) -> bool {
    let header = format!("hooks.state.{}", toml_key(key));
    tables(config).iter().any(|(name, body)| {
        *name == header
            && body
                .iter()
                .any(|line| line.trim_start().starts_with("trusted_hash"))
    })
}

/// Gemini: hooks on, not disabled by name, and (for project hooks) a trusted folder.
fn gemini_trust(scope: &str, found: &Found, wired: &[Wired]) -> Vec<Check> {
    let mut checks = Vec::new();
    let layers: Vec<serde_json::Value> = wired
        .iter()
        .map(|w| w.settings.pretty())
        .chain(found.user_settings.clone())
        .filter_map(|t| serde_json::from_str(&t).ok())
        .collect();
    let off = layers.iter().any(|s| {
        s.pointer("/hooksConfig/enabled") == Some(&serde_json::Value::Bool(false))
            || s.pointer("/hooks/enabled") == Some(&serde_json::Value::Bool(false))
    });
    if off {
        checks.push(
            Check::new(
                scope,
                "hooks enabled",
                Level::Fail,
                "hooksConfig.enabled is false: Gemini runs no hook",
            )
            .fix("remove \"hooksConfig\": {\"enabled\": false} from Gemini's settings.json"),
        );
    }
    let disabled: Vec<String> = layers
        .iter()
        .filter_map(|s| {
            s.pointer("/hooksConfig/disabled")
                .and_then(|d| d.as_array())
        })
        .flatten()
        .filter_map(|d| d.as_str())
        .filter(|name| name.starts_with("autoctl") || settings::is_ours(name))
        .map(str::to_string)
        .collect();
    if !disabled.is_empty() {
        checks.push(
            Check::new(
                scope,
                "hooks enabled",
                Level::Warn,
                format!("disabled in hooksConfig.disabled: {}", disabled.join(", ")),
            )
            .fix("`/hooks enable NAME` in Gemini, or remove them from hooksConfig.disabled"),
        );
    }
    if wired.iter().any(|w| w.layer == "project") {
        let trust_off = found
            .user_settings
            .as_deref()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
            .and_then(|s| s.pointer("/security/folderTrust/enabled").cloned())
            == Some(serde_json::Value::Bool(false));
        let trusted = trust_off
            || gemini_folder_trusted(found.trust.as_deref().unwrap_or(""), &found.project);
        checks.push(if trusted {
            Check::new(
                scope,
                "folder trust",
                Level::Ok,
                format!("{} is trusted: Gemini runs its project hooks", found.project),
            )
        } else {
            Check::new(
                scope,
                "folder trust",
                Level::Warn,
                format!(
                    "{} is not a trusted folder: Gemini ignores its .gemini/settings.json hooks",
                    found.project
                ),
            )
            .fix("start gemini in the project and trust the folder when it asks (a person's choice; autoctl never answers that prompt)")
        });
    }
    checks
}

/// `trustedFolders.json`: the longest rule path that contains `project` decides
/// (`TRUST_PARENT` stands for the rule's parent directory).
fn gemini_folder_trusted(text: &str, project: &str) -> bool {
    let Ok(serde_json::Value::Object(rules)) = serde_json::from_str(text) else {
        return false;
    };
    let project = Path::new(project);
    let mut best: Option<(usize, &str)> = None;
    for (rule, level) in &rules {
        let Some(level) = level.as_str() else {
            continue;
        };
        let effective = if level == "TRUST_PARENT" {
            Path::new(rule).parent().unwrap_or(Path::new(rule))
        } else {
            Path::new(rule)
        };
        if project.starts_with(effective) && best.is_none_or(|(len, _)| rule.len() > len) {
            best = Some((rule.len(), level));
        }
    }
    matches!(best, Some((_, "TRUST_FOLDER" | "TRUST_PARENT")))
}

fn fired_check(agent: HookAgent, scope: &str, newest: Option<&Record>, now: Time) -> Check {
    match newest {
        Some(record) => Check::new(
            scope,
            "events",
            Level::Ok,
            format!(
                "last {} {} ago ({}, session {})",
                record.event,
                age(record.at, now),
                record.state_label(),
                record.session_id.as_deref().unwrap_or("?")
            ),
        ),
        None => Check::new(
            scope,
            "events",
            Level::Warn,
            format!("no {} hook event recorded yet", agent.title()),
        )
        .fix(match agent {
            HookAgent::Codex => "start codex in the project (hooks load at start) and trust autoctl's hooks in /hooks",
            _ => "start gemini in the project (hooks load at start) in a folder it trusts",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Time {
        chrono::DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    fn installed(agent: HookAgent) -> String {
        let mut s = settings::parse("").unwrap();
        settings::install_for(agent, &mut s, "autoctl", &|_| true);
        settings::render(&s, "")
    }

    fn codex_found(config: &str) -> Found {
        Found {
            project: "/p".into(),
            files: vec![HookFile {
                layer: "project",
                path: "/p/.codex/hooks.json".into(),
                text: Some(installed(HookAgent::Codex)),
            }],
            trust: Some(config.to_string()),
            user_settings: None,
            newest: None,
        }
    }

    fn level(checks: &[Check], name: &str) -> Level {
        checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name}: {checks:?}"))
            .level
    }

    #[test]
    fn nothing_of_the_agent_means_no_section() {
        assert!(checks(HookAgent::Codex, &Found::default(), false, at(0)).is_empty());
        let shown = checks(HookAgent::Codex, &Found::default(), true, at(0));
        assert_eq!(
            level(&shown, "hooks"),
            Level::Warn,
            "a run uses it: {shown:?}"
        );
    }

    #[test]
    fn codex_needs_the_project_and_every_hook_trusted() {
        let none = checks(HookAgent::Codex, &codex_found(""), false, at(0));
        assert_eq!(level(&none, "hooks"), Level::Ok);
        assert_eq!(level(&none, "project trust"), Level::Warn);
        assert_eq!(level(&none, "hook trust"), Level::Warn);
        assert!(
            none.iter()
                .any(|c| c.fix.as_deref().is_some_and(|f| f.contains("/hooks")))
        );
        assert_eq!(level(&none, "events"), Level::Warn);
        // The config.toml Codex 0.171 wrote after "Trust all and continue".
        let mut config = String::from(
            "model = \"m\"\n\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n\n[hooks.state]\n",
        );
        for (event, _, _) in our_positions(&settings::parse(&installed(HookAgent::Codex)).unwrap())
        {
            config.push_str(&format!(
                "\n[hooks.state.\"/p/.codex/hooks.json:{}:0:0\"]\ntrusted_hash = \"sha256:00\"\n",
                snake(&event)
            ));
        }
        let all = checks(HookAgent::Codex, &codex_found(&config), false, at(0));
        assert_eq!(level(&all, "project trust"), Level::Ok, "{all:?}");
        assert_eq!(level(&all, "hook trust"), Level::Ok, "{all:?}");
        // One hook short.
        let cut = config.replace("hooks.json:stop:0:0", "hooks.json:stop:0:9");
        let some = checks(HookAgent::Codex, &codex_found(&cut), false, at(0));
        assert_eq!(level(&some, "hook trust"), Level::Warn);
        assert_eq!(snake("PreToolUse"), "pre_tool_use");
    }

    #[test]
    fn gemini_needs_a_trusted_folder_and_hooks_on() {
        let found = |trust: &str, user: Option<&str>| Found {
            project: "/w/p".into(),
            files: vec![HookFile {
                layer: "project",
                path: "/w/p/.gemini/settings.json".into(),
                text: Some(installed(HookAgent::Gemini)),
            }],
            trust: Some(trust.to_string()),
            user_settings: user.map(str::to_string),
            newest: None,
        };
        let c = checks(
            HookAgent::Gemini,
            &found(r#"{"/w/p":"TRUST_FOLDER"}"#, None),
            false,
            at(0),
        );
        assert_eq!(level(&c, "folder trust"), Level::Ok);
        let c = checks(
            HookAgent::Gemini,
            &found(r#"{"/w/x":"TRUST_PARENT"}"#, None),
            false,
            at(0),
        );
        assert_eq!(
            level(&c, "folder trust"),
            Level::Ok,
            "the parent of /w/x is /w"
        );
        let c = checks(
            HookAgent::Gemini,
            &found(r#"{"/w":"TRUST_FOLDER","/w/p":"DO_NOT_TRUST"}"#, None),
            false,
            at(0),
        );
        assert_eq!(
            level(&c, "folder trust"),
            Level::Warn,
            "the longest rule wins"
        );
        let c = checks(
            HookAgent::Gemini,
            &found(
                "{}",
                Some(
                    r#"{"security":{"folderTrust":{"enabled":false}},"hooksConfig":{"enabled":false}}"#,
                ),
            ),
            false,
            at(0),
        );
        assert_eq!(level(&c, "folder trust"), Level::Ok, "folder trust off");
        assert_eq!(level(&c, "hooks enabled"), Level::Fail);
    }
}
