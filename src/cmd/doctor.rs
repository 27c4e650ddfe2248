//! `autoctl doctor`: gather what [`crate::doctor`] judges — the state dir, the registry, the
//! agent's version, settings.json, each run's pane, hook and status-line records and last
//! tick — and print one table per run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::cmd::args::Format;
use crate::doctor::{self, Check, Level};
use crate::error::Exit;
use crate::hook::settings;
use crate::hook::store::{Lookup, Store};
use crate::output;
use crate::registry::sqlite::SqliteRegistry;
use crate::supervise::run::Run;
use crate::supervise::store::Registry;
use crate::time::Time;
use crate::tmux::{CaptureOptions, Terminal, Tmux};

/// Say which of autoctl's channels are wired and live, with the fix for each that is not
///
/// Checks, each OK, WARN or FAIL with a one-line fix: the state directory is writable; the
/// run registry is readable; `claude --version`; autoctl's hooks and status line in the
/// project's .claude/settings.json (the current directory) and ~/.claude/settings.json;
/// then for each running run (or the one --session names, whatever its state: a run's tmux
/// session, or a Claude Code session_id): the run's state, its tmux pane and foreground
/// command, the agent process in it and the session it runs, whether the hooks' autoctl
/// resolves in the agent's own PATH (and no hook failed on its screen), the agent's hook
/// state and the age of its last event of each kind, its status line (with the 5-hour and
/// 7-day usage and reset times; judged against the agent's activity: idle is not stale), and
/// the last tick of whatever drives it (`run watch`, cron). Records of another session than
/// the one in the pane are history, never OK. Without runs, one table per Claude Code
/// session the hooks or the status line recorded. A --session that names no run and no
/// recorded session but a tmux session gets its pane judged the same way, with a warning
/// that nothing supervises it; one that names nothing fails.
///
/// Codex CLI and Gemini CLI get a section of their own when they are around (hook files,
/// recorded events, or a run of theirs): autoctl's hooks in .codex/hooks.json or
/// .gemini/settings.json (project and user), what the agent needs before it runs them (Codex:
/// a trusted project and each hook trusted in /hooks; Gemini: a trusted folder, hooks not
/// disabled), and the last event they sent.
///
/// Policy doors, for Claude Code (and Codex, Gemini when around): in each permission mode,
/// which doors bring a tool call to the approval policy (PreToolUse: every mode;
/// PermissionRequest and the screen: only where the agent asks a person), and for the mode
/// the live session last reported (the decision log) whether any does — FAIL when none does.
///
/// Exit status: 0 when every check is OK, 1 when any is WARN or FAIL, 2 when doctor itself
/// cannot run.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct DoctorArgs {
    /// Only this run (its tmux session name) or Claude Code session (its session_id)
    #[arg(long, value_name = "S")]
    pub session: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &DoctorArgs, socket: Option<String>) -> Result<Exit> {
    let now = crate::time::now()?;
    let mut checks = Vec::new();
    let state_dir = crate::supervise::state_dir()?;
    checks.push(state_dir_check(&state_dir));
    let runs = registry_check(&state_dir, &mut checks);
    checks.push(claude_check());
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    checks.push(settings_check(&cwd));
    let store = Store::new(&state_dir);
    // The running runs, and the one --session names whatever its state (how it ended).
    let runs: Vec<Run> = runs
        .into_iter()
        .filter(|run| run.status.is_active() || args.session.as_deref() == Some(&run.spec.session))
        .collect();
    let tmux = Tmux::new(socket).ok();
    let me = std::env::current_exe()
        .map(|p| crate::shell::quote_if_needed(&p.to_string_lossy()))
        .unwrap_or_else(|_| "/path/to/autoctl".to_string());
    let seen = Seen {
        tmux: tmux.as_ref(),
        store: &store,
        me: &me,
        now,
    };
    let mut matched = false;
    for run in &runs {
        matched |= run_checks(run, &seen, args.session.as_deref(), &mut checks);
    }
    match args.session.as_deref() {
        Some(session) if !matched => {
            let before = checks.len();
            sessions_without_runs(&store, Some(session), now, &mut checks);
            if checks.len() == before {
                unregistered_session(session, &seen, &cwd, &mut checks);
            }
        }
        None if runs.is_empty() => sessions_without_runs(&store, None, now, &mut checks),
        _ => {}
    }
    if args.session.is_none() {
        agent_sections(&cwd, &store, &runs, now, &mut checks);
        policy_doors(&cwd, &state_dir, &store, &runs, now, &mut checks);
    }
    let all_ok = checks.iter().all(|c| c.level == Level::Ok);
    match args.format {
        Format::Json => output::json_pretty(&serde_json::json!({
            "ok": all_ok,
            "checks": checks,
        }))?,
        Format::Text => output::text(&doctor::text(&checks))?,
    }
    Ok(Exit::from_bool(all_ok))
}

/// One run's section, when `--session` (if any) names the run or the agent session in its
/// pane: the run, its pane, and for a Claude Code agent its process, session, hooks' command,
/// hooks and status line; the driver of a running run. Returns whether it was selected.
fn run_checks(run: &Run, seen: &Seen<'_>, session: Option<&str>, checks: &mut Vec<Check>) -> bool {
    let now = seen.now;
    let scope = format!("run {}", run.spec.session);
    let mut rows = vec![doctor::judge_run(&scope, run, now)];
    let (lookup, agent) = look_at_pane(run, &scope, seen.tmux, &mut rows);
    let found = seen.store.find(&lookup);
    let selected = session.is_none_or(|s| {
        s == run.spec.session
            || found.hook.as_ref().and_then(|h| h.session_id.as_deref()) == Some(s)
            || agent.as_ref().and_then(|a| a.session_id.as_deref()) == Some(s)
    });
    if !selected {
        return false;
    }
    checks.append(&mut rows);
    // The process, the session and the hooks' command in its environment are Claude
    // Code's checks; Codex and Gemini have their own section.
    let claude = run.spec.agent == crate::pane::Agent::Claude;
    let agent = agent.filter(|_| claude);
    if let Some(agent) = &agent {
        checks.push(doctor::judge_agent(&scope, agent, now));
        checks.push(doctor::judge_hook_command(&scope, agent, seen.me));
    }
    if agent.is_some() || run.status.is_active() {
        checks.push(doctor::judge_hooks(
            &scope,
            found.hook.as_ref(),
            agent.as_ref(),
            now,
        ));
        if claude {
            checks.push(doctor::judge_status(
                &scope,
                found.status.as_ref(),
                found.hook.as_ref(),
                agent.as_ref(),
                now,
            ));
        }
    }
    if run.status.is_active() {
        checks.push(doctor::judge_driver(&scope, run.last_tick_at, now));
    }
    true
}

/// The run's pane: a row for what it shows (or a failure when it is gone from a running
/// run, or tmux cannot be run), where its hook records are looked up, and the agent in it.
fn look_at_pane(
    run: &Run,
    scope: &str,
    tmux: Option<&Tmux>,
    rows: &mut Vec<Check>,
) -> (Lookup, Option<doctor::AgentSeen>) {
    let snapshot = tmux.map(|t| {
        t.snapshots(
            std::slice::from_ref(&run.spec.target),
            CaptureOptions::default(),
        )
        .map(|mut v| v.remove(0))
    });
    let mut lookup = Lookup {
        dir: Some(run.task_path().to_path_buf()),
        ..Lookup::default()
    };
    let mut agent = None;
    match snapshot {
        Some(Ok(Ok(snap))) => {
            rows.push(pane_row(scope, &snap));
            if let Some(socket) = &snap.pane.socket {
                lookup.pane = Some((socket.clone(), snap.pane.id.clone()));
            }
            agent = Some(probe(&snap, run.task_path()));
        }
        // An ended run's pane may well be gone: that is no failure of its own.
        _ if !run.status.is_active() => {}
        Some(Ok(Err(err))) | Some(Err(err)) => rows.push(
            Check::new(scope, "pane", Level::Fail, format!("{} not found: {err:#}", run.spec.target))
                .fix("the run's pane is gone: `autoctl run recover` relaunches it, `autoctl run stop` ends the run"),
        ),
        None => rows.push(Check::new(scope, "pane", Level::Fail, "tmux cannot be run")),
    }
    (lookup, agent)
}

fn state_dir_check(dir: &Path) -> Check {
    let probe = std::fs::create_dir_all(dir).and_then(|()| tempfile::tempfile_in(dir).map(drop));
    match probe {
        Ok(()) => Check::new(
            "global",
            "state dir",
            Level::Ok,
            format!("{} is writable", dir.display()),
        ),
        Err(err) => Check::new(
            "global",
            "state dir",
            Level::Fail,
            format!("{}: {err}", dir.display()),
        )
        .fix("set AUTOCTL_STATE_DIR to a writable directory (hooks record nothing otherwise)"),
    }
}

fn registry_check(dir: &Path, checks: &mut Vec<Check>) -> Vec<Run> {
    match SqliteRegistry::open_existing(dir).and_then(|r| match r {
        Some(mut registry) => registry.list().map(Some),
        None => Ok(None),
    }) {
        Ok(Some(runs)) => {
            let running = runs.iter().filter(|r| r.status.is_active()).count();
            checks.push(Check::new(
                "global",
                "registry",
                Level::Ok,
                format!("{} runs, {running} running", runs.len()),
            ));
            runs
        }
        Ok(None) => {
            checks.push(Check::new(
                "global",
                "registry",
                Level::Ok,
                "no runs registered yet",
            ));
            Vec::new()
        }
        Err(err) => {
            checks.push(
                Check::new("global", "registry", Level::Fail, format!("{err:#}"))
                    .fix("check the permissions of $AUTOCTL_STATE_DIR/autoctl.db"),
            );
            Vec::new()
        }
    }
}

fn claude_check() -> Check {
    let child = Command::new("claude")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return Check::new("global", "claude", Level::Warn, "`claude` is not on PATH")
            .fix("install Claude Code (npm install -g @anthropic-ai/claude-code), or ignore for other agents");
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Check::new(
                    "global",
                    "claude",
                    Level::Warn,
                    "`claude --version` did not answer in 10s",
                );
            }
        }
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        use std::io::Read;
        let _ = stdout.read_to_string(&mut out);
    }
    Check::new("global", "claude", Level::Ok, out.trim().to_string())
}

fn settings_check(project: &Path) -> Check {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let files: Vec<(String, PathBuf)> = [
        Some(("project".to_string(), project.join(".claude/settings.json"))),
        home.map(|h| ("user".to_string(), h.join(".claude/settings.json"))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut wired_events = std::collections::BTreeSet::new();
    let mut line = false;
    let mut notes = Vec::new();
    for (name, path) in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        match settings::parse(&text) {
            Ok(value) => {
                let (yes, _, status) = doctor::wired(&value);
                notes.push(format!(
                    "{name}: {} hooks{}",
                    yes.len(),
                    if status { " + status line" } else { "" }
                ));
                wired_events.extend(yes);
                line |= status;
            }
            Err(err) => notes.push(format!("{name}: {} is invalid ({err})", path.display())),
        }
    }
    let missing: Vec<&str> = settings::wiring()
        .iter()
        .filter(|w| crate::cmd::hook::has_subcommand(w.subcommand))
        .map(|w| w.event)
        .filter(|e| !wired_events.contains(e))
        .collect();
    let detail = if notes.is_empty() {
        "no settings.json with autoctl's hooks".to_string()
    } else {
        notes.join("; ")
    };
    if missing.is_empty() && line {
        Check::new("global", "settings", Level::Ok, detail)
    } else {
        let what = if missing.is_empty() {
            "the status line is not wired".to_string()
        } else {
            format!(
                "not wired: {}{}",
                missing.join(", "),
                if line { "" } else { ", statusLine" }
            )
        };
        Check::new(
            "global",
            "settings",
            Level::Warn,
            format!("{detail}; {what}"),
        )
        .fix("`autoctl hook install` (this project) or `autoctl hook install --user --yes`")
    }
}

/// Codex CLI's and Gemini CLI's own section (their hook files, their trust steps, their events
/// seen), for each agent that is around: its hook files exist, its hooks recorded something,
/// or a run uses it.
fn agent_sections(cwd: &Path, store: &Store, runs: &[Run], now: Time, checks: &mut Vec<Check>) {
    use crate::doctor::agents::{self, Found, HookFile};
    use crate::hook::agents::HookAgent;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let project = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let read = |path: &Path| std::fs::read_to_string(path).ok();
    let records = store.list();
    for agent in [HookAgent::Codex, HookAgent::Gemini] {
        let (relative, user_file, trust_file) = match agent {
            HookAgent::Codex => {
                let codex_home = std::env::var_os("CODEX_HOME")
                    .filter(|h| !h.is_empty())
                    .map(PathBuf::from)
                    .or_else(|| home.as_ref().map(|h| h.join(".codex")));
                (
                    ".codex/hooks.json",
                    codex_home.as_ref().map(|c| c.join("hooks.json")),
                    codex_home.as_ref().map(|c| c.join("config.toml")),
                )
            }
            _ => (
                ".gemini/settings.json",
                home.as_ref().map(|h| h.join(".gemini/settings.json")),
                home.as_ref().map(|h| h.join(".gemini/trustedFolders.json")),
            ),
        };
        let mut files = vec![HookFile {
            layer: "project",
            path: project.join(relative).display().to_string(),
            text: read(&project.join(relative)),
        }];
        if let Some(user) = &user_file {
            files.push(HookFile {
                layer: "user",
                path: user.display().to_string(),
                text: read(user),
            });
        }
        let found = Found {
            project: project.display().to_string(),
            files,
            trust: trust_file.as_deref().and_then(read),
            user_settings: match agent {
                HookAgent::Gemini => user_file.as_deref().and_then(read),
                _ => None,
            },
            newest: records
                .iter()
                .filter(|(_, r)| r.agent == Some(agent))
                .max_by_key(|(_, r)| r.at)
                .map(|(_, r)| r.clone()),
        };
        let run_uses_it = runs.iter().any(|r| r.spec.agent.as_str() == agent.as_str());
        checks.extend(agents::checks(agent, &found, run_uses_it, now));
    }
}

/// Each agent's policy doors (issue 24 item 5): which doors reach the approval policy in
/// each of its permission modes, and whether any does in the mode its live session last
/// reported (the newest decision-log entry of one of its sessions). Claude Code always; Codex
/// and Gemini when they are around (a hook file, a record or a run of theirs).
fn policy_doors(
    cwd: &Path,
    state_dir: &Path,
    store: &Store,
    runs: &[Run],
    now: Time,
    checks: &mut Vec<Check>,
) {
    use crate::doctor::doors;
    use crate::hook::agents::HookAgent;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let codex_home = std::env::var_os("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".codex")));
    let records = store.list();
    let (log, _) = crate::policy::log::read(state_dir).unwrap_or_default();
    for agent in [HookAgent::Claude, HookAgent::Codex, HookAgent::Gemini] {
        let files: Vec<PathBuf> = match agent {
            HookAgent::Claude => vec![
                Some(cwd.join(".claude/settings.json")),
                Some(cwd.join(".claude/settings.local.json")),
                home.as_ref().map(|h| h.join(".claude/settings.json")),
            ],
            HookAgent::Codex => vec![
                Some(cwd.join(".codex/hooks.json")),
                codex_home.as_ref().map(|c| c.join("hooks.json")),
            ],
            HookAgent::Gemini => vec![
                Some(cwd.join(".gemini/settings.json")),
                home.as_ref().map(|h| h.join(".gemini/settings.json")),
            ],
        }
        .into_iter()
        .flatten()
        .collect();
        let texts: Vec<String> = files
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .collect();
        let sessions: Vec<&str> = records
            .iter()
            .filter(|(_, r)| r.agent.unwrap_or_default() == agent)
            .filter_map(|(_, r)| r.session_id.as_deref())
            .collect();
        let runs_it = runs
            .iter()
            .any(|r| r.spec.agent.as_str() == agent.as_str() && r.status.is_active());
        if agent != HookAgent::Claude && texts.is_empty() && sessions.is_empty() && !runs_it {
            continue;
        }
        let mut wiring = doors::wiring_in(agent, &texts);
        wiring.screen = runs_it;
        // The newest logged mode of one of the agent's sessions.
        let live = log
            .iter()
            .rev()
            .filter(|e| e.session.as_deref().is_some_and(|s| sessions.contains(&s)))
            .find_map(|e| {
                let mode = e.mode.as_deref()?;
                Some((mode, crate::time::parse_time(&e.time)?))
            });
        checks.push(doors::judge(agent.as_str(), agent, wiring, live, now));
    }
}

/// Without runs (or when --session names a Claude Code session): one table per recorded
/// session, a status line recorded without any hook event included.
fn sessions_without_runs(store: &Store, only: Option<&str>, now: Time, checks: &mut Vec<Check>) {
    for (stem, record, status) in store.agents() {
        let session = record
            .as_ref()
            .and_then(|r| r.session_id.as_deref())
            .or_else(|| status.as_ref().and_then(|s| s.session_id.as_deref()));
        if only.is_some_and(|s| session != Some(s)) {
            continue;
        }
        let key = record
            .as_ref()
            .map(|r| r.key.as_str())
            .or_else(|| status.as_ref().map(|s| s.key.as_str()))
            .unwrap_or(&stem);
        let scope = format!("session {} ({key})", session.unwrap_or("?"));
        checks.push(doctor::judge_hooks(&scope, record.as_ref(), None, now));
        // Only Claude Code has a status line.
        if record
            .as_ref()
            .and_then(|r| r.agent)
            .is_none_or(|a| a == crate::hook::agents::HookAgent::Claude)
        {
            checks.push(doctor::judge_status(
                &scope,
                status.as_ref(),
                record.as_ref(),
                None,
                now,
            ));
        }
    }
}

/// What doctor reads an unregistered pane with.
struct Seen<'a> {
    tmux: Option<&'a Tmux>,
    store: &'a Store,
    /// How the hooks would name this autoctl (for the fix).
    me: &'a str,
    now: Time,
}

/// `--session S` names no run and no agent session the hooks recorded (issue 29: doctor
/// printed the global checks only and exited 0, though the agent in S may have hooks that
/// cannot run). A tmux session S is judged as a run's pane is — its agent, the hooks'
/// command in the agent's environment, its records — beside a warning that nothing
/// supervises it; a name that is nothing at all fails.
fn unregistered_session(session: &str, seen: &Seen<'_>, cwd: &Path, checks: &mut Vec<Check>) {
    let scope = format!("session {session}");
    let snap = seen.tmux.and_then(|t| {
        t.snapshots(&[session.to_string()], CaptureOptions::default())
            .ok()
            .and_then(|mut v| v.remove(0).ok())
    });
    let Some(snap) = snap else {
        checks.push(
            Check::new(
                &scope,
                "run",
                Level::Fail,
                format!("no run, tmux session or agent session is named {session}"),
            )
            .fix("`autoctl run status` lists the runs; `autoctl run start --session S --task DIR` registers one"),
        );
        return;
    };
    checks.push(
        Check::new(
            &scope,
            "run",
            Level::Warn,
            format!("no run is registered for the tmux session {session}: nothing supervises it"),
        )
        .fix(format!(
            "`autoctl run start --session {session} --task DIR` supervises it"
        )),
    );
    checks.push(pane_row(&scope, &snap));
    let agent = probe(&snap, cwd);
    let lookup = Lookup {
        pane: snap
            .pane
            .socket
            .as_ref()
            .map(|socket| (socket.clone(), snap.pane.id.clone())),
        session_id: agent.session_id.clone(),
        dir: None,
    };
    let found = seen.store.find(&lookup);
    checks.push(doctor::judge_agent(&scope, &agent, seen.now));
    checks.push(doctor::judge_hook_command(&scope, &agent, seen.me));
    checks.push(doctor::judge_hooks(
        &scope,
        found.hook.as_ref(),
        Some(&agent),
        seen.now,
    ));
    checks.push(doctor::judge_status(
        &scope,
        found.status.as_ref(),
        found.hook.as_ref(),
        Some(&agent),
        seen.now,
    ));
}

/// The row saying which pane a session's screen was read from and what runs in front of it.
fn pane_row(scope: &str, snap: &crate::tmux::Snapshot) -> Check {
    Check::new(
        scope,
        "pane",
        Level::Ok,
        format!(
            "{} ({}): {} in front",
            snap.pane.address, snap.pane.id, snap.pane.command
        ),
    )
}

/// What doctor can learn about the agent in a pane: its process (from `/proc`), the session
/// Claude Code says it runs, the `PATH` its hooks run with, the settings files it reads and
/// the autoctl programs they name, where each resolves, and failed hooks on the screen.
fn probe(snap: &crate::tmux::Snapshot, fallback_dir: &Path) -> doctor::AgentSeen {
    let mut seen = doctor::AgentSeen {
        failed_on_screen: doctor::hook_failures(&snap.text),
        ..doctor::AgentSeen::default()
    };
    let processes = crate::proc::pane_processes(snap.pane.pid);
    let (shell, agent) = match &processes {
        Some((shell, agent)) => (Some(shell), agent.as_ref()),
        None => (None, None),
    };
    if let Some(agent) = agent {
        seen.process = Some((agent.pid, agent.comm.clone()));
        seen.started_at = agent.started.map(Time::from);
    }
    // The hooks run with the agent's environment; before one starts, the shell's is what it
    // would inherit.
    let env = match (
        agent.and_then(|a| a.env.as_ref()),
        shell.and_then(|s| s.env.as_ref()),
    ) {
        (Some(env), _) => Some((env, "the agent's")),
        (None, Some(env)) => Some((env, "the pane shell's")),
        (None, None) => None,
    };
    seen.path = env.and_then(|(env, whose)| env.get("PATH").map(|p| (p.clone(), whose)));
    let var = |name: &str| {
        env.and_then(|(env, _)| env.get(name).cloned())
            .or_else(|| std::env::var(name).ok())
            .filter(|v| !v.is_empty())
    };
    // Claude Code's config dir: $CLAUDE_CONFIG_DIR, else ~/.claude.
    let config = var("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".claude")));
    if let (Some(config), Some(agent)) = (&config, agent) {
        seen.session_id = claude_session(&config.join("sessions"), agent.pid);
    }
    let cwd = agent
        .and_then(|a| a.cwd.clone())
        .or_else(|| shell.and_then(|s| s.cwd.clone()))
        .unwrap_or_else(|| fallback_dir.to_path_buf());
    let mut files = vec![
        cwd.join(".claude/settings.json"),
        cwd.join(".claude/settings.local.json"),
    ];
    files.extend(config.map(|c| c.join("settings.json")));
    files.push(PathBuf::from("/etc/claude-code/managed-settings.json"));
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        match settings::parse(&text) {
            Ok(value) => seen.settings.push((
                file.display().to_string(),
                settings::autoctl_programs(&value),
            )),
            Err(err) => seen
                .unreadable
                .push(format!("{} is invalid ({err})", file.display())),
        }
    }
    let path = seen.path.as_ref().map(|(p, _)| p.as_str());
    let programs: Vec<String> = seen
        .settings
        .iter()
        .flat_map(|(_, programs)| programs.iter().cloned())
        .collect();
    for program in programs {
        if seen.resolved.iter().any(|(p, _)| *p == program) {
            continue;
        }
        if let Some(at) = doctor::resolve(&program, path, &cwd, &executable) {
            seen.resolved.push((program, at));
        }
    }
    seen
}

/// A regular file this user may run.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The session Claude Code's process `pid` runs, from its own record of its live sessions
/// (`<config>/sessions/<pid>.json`, `{"pid":…,"sessionId":…}` in 2.1.332).
fn claude_session(dir: &Path, pid: u32) -> Option<String> {
    let crate::fsx::Bounded::Complete(bytes) =
        crate::fsx::read_bounded(&dir.join(format!("{pid}.json")), 64 * 1024).ok()?
    else {
        return None;
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    if value.get("pid").and_then(serde_json::Value::as_u64) != Some(u64::from(pid)) {
        return None;
    }
    value
        .get("sessionId")
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
}
