//! `autoctl doctor`: which channels are wired and live, with the one-line fix for each that
//! is not. Global checks (state dir, registry, the agent's version, the hooks and status line
//! in settings.json), then one table per run (its state, its pane and foreground command, the
//! agent in it, whether the hooks' command runs in the agent's own environment, the age of its
//! last hook event of each kind, its status line, the driver's last tick) or, without runs,
//! per recorded Claude Code session.
//!
//! **The truth about the live session** (issue 29: doctor said OK about a session whose
//! hooks could not run). The hooks run `autoctl` through `/bin/sh` in Claude Code's own
//! environment, not doctor's: the command must resolve in the agent's `PATH` (read from the
//! process), and a hook that failed on screen (`/bin/sh: 1: autoctl: not found`) is a failure
//! whatever else is found ([`judge_hook_command`]). Records are judged against the session
//! now in the pane — Claude Code's own record of its session (`~/.claude/sessions/PID.json`),
//! else the process's start — so the records of a session that ended are history, never
//! "OK" ([`judge_hooks`]). A status line is judged against the agent's activity: Claude Code
//! runs it only when something changes, so an idle agent's old status line is not stale; one
//! that stopped while the hooks saw activity is ([`judge_status`]).
//!
//! The judging is pure ([`judge_run`], [`judge_hook_command`], [`judge_hooks`],
//! [`judge_status`], [`judge_driver`]); the edge in `cmd/doctor.rs` gathers what they judge.

pub mod agents;
pub mod doors;

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::hook::session::Record;
use crate::hook::settings::{self, Json};
use crate::hook::statusline::StatusRecord;
use crate::time::{Time, between};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    Warn,
    Fail,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Ok => "OK",
            Level::Warn => "WARN",
            Level::Fail => "FAIL",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// `global`, or `run <session>` / `session <id>`.
    pub scope: String,
    pub name: String,
    pub level: Level,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub fn new(scope: &str, name: &str, level: Level, detail: impl Into<String>) -> Check {
        Check {
            scope: scope.to_string(),
            name: name.to_string(),
            level,
            detail: detail.into(),
            fix: None,
        }
    }

    pub fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }
}

/// A status line that last ran this long before the agent's last hook event stopped running
/// (Claude Code runs it after each message, around the same events).
pub const STATUS_GRACE: Duration = Duration::from_secs(2 * 60);
/// A run whose last tick is older than this has no driver.
pub const DRIVER_FRESH: Duration = Duration::from_secs(3 * 60);

/// Which of autoctl's hooks a settings file wires: (wired events, missing events, status line
/// wired).
pub fn wired(settings: &Json) -> (Vec<&'static str>, Vec<&'static str>, bool) {
    let text = settings.pretty();
    let (mut yes, mut no) = (Vec::new(), Vec::new());
    for wire in settings::wiring() {
        if settings::wires(settings, wire.event, wire.subcommand) {
            yes.push(wire.event);
        } else {
            no.push(wire.event);
        }
    }
    (yes, no, text.contains("statusline"))
}

/// What doctor learns about the agent in a run's pane: the process, the session Claude Code
/// says it runs, its environment's `PATH`, the settings it reads and the screen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentSeen {
    /// The agent's process id and command name, when a program runs in the pane.
    pub process: Option<(u32, String)>,
    /// When that process started.
    pub started_at: Option<Time>,
    /// The session Claude Code says the process runs (`~/.claude/sessions/PID.json`).
    pub session_id: Option<String>,
    /// The `PATH` the hooks run with, and whose it is (`the agent's`, `the pane shell's`);
    /// `None`: not readable.
    pub path: Option<(String, &'static str)>,
    /// The settings files the agent reads that exist, each with the autoctl programs its
    /// hooks and status line run (empty: none of autoctl's).
    pub settings: Vec<(String, Vec<String>)>,
    /// Settings files that exist but cannot be read, with why.
    pub unreadable: Vec<String>,
    /// Each program, and the executable it resolves to (`None`: nowhere).
    pub resolved: Vec<(String, Option<String>)>,
    /// Lines of the screen where a hook could not run autoctl.
    pub failed_on_screen: Vec<String>,
}

impl AgentSeen {
    /// The records of a session are history when another session runs in the pane now, or
    /// (no session known) when they are older than the process in the pane. `None`: current
    /// or unknown.
    fn history(&self, session: Option<&str>, last: Time, now: Time) -> Option<String> {
        match (&self.session_id, session) {
            (Some(live), Some(recorded)) if live != recorded => {
                return Some(format!(
                    "session {recorded}'s, not {live}'s now in the pane"
                ));
            }
            (Some(_), _) => return None,
            (None, _) => {}
        }
        // A start after `now` means a clock that cannot be compared (AUTOCTL_NOW in tests).
        let started = self.started_at.filter(|started| *started <= now)?;
        (last < started).then(|| {
            format!(
                "from before the agent now in the pane started ({} ago)",
                age(started, now)
            )
        })
    }

    fn programs(&self) -> Vec<&str> {
        let mut all: Vec<&str> = Vec::new();
        for (_, programs) in &self.settings {
            for p in programs {
                if !all.contains(&p.as_str()) {
                    all.push(p);
                }
            }
        }
        all
    }
}

/// Screen lines that show a hook failing to run autoctl: `/bin/sh: 1: autoctl: not found`
/// (dash), `autoctl: command not found` (bash), a path that does not exist or cannot run.
pub fn hook_failures(screen: &str) -> Vec<String> {
    const WORDS: [&str; 5] = [
        ": not found",
        "command not found",
        "No such file or directory",
        "Permission denied",
        "cannot execute",
    ];
    let mut lines: Vec<String> = Vec::new();
    for line in screen.lines() {
        let line = line.trim();
        if line.contains("autoctl") && WORDS.iter().any(|w| line.contains(w)) {
            let line = line.to_string();
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    lines
}

/// Where `program` resolves as `/bin/sh` would run it: a name with a `/` as it is (relative
/// to `cwd`), a bare name in the directories of `path` (an empty entry is `cwd`).
/// `executable` says whether a file exists and may be run. `None`: a bare name and no PATH.
pub fn resolve(
    program: &str,
    path: Option<&str>,
    cwd: &Path,
    executable: &dyn Fn(&Path) -> bool,
) -> Option<Option<String>> {
    if program.contains('/') {
        let file = cwd.join(program);
        return Some(executable(&file).then(|| file.display().to_string()));
    }
    let path = path?;
    Some(path.split(':').find_map(|dir| {
        let dir = if dir.is_empty() { cwd } else { Path::new(dir) };
        let file = dir.join(program);
        executable(&file).then(|| file.display().to_string())
    }))
}

/// The fix for hooks that cannot run autoctl; `me` is this autoctl's absolute path.
fn path_fix(me: &str) -> String {
    format!(
        "put autoctl on the agent's PATH, or write its absolute path into the hooks: `autoctl hook install --autoctl {me}`; then restart the agent (hooks load at start)"
    )
}

/// The run itself: running, or how it ended.
pub fn judge_run(scope: &str, run: &crate::supervise::run::Run, now: Time) -> Check {
    if run.status.is_active() {
        return Check::new(
            scope,
            "run",
            Level::Ok,
            format!(
                "{} since {} ago ({} mode, iteration {})",
                run.status.as_str(),
                age(run.started_at, now),
                run.spec.mode.as_str(),
                run.iteration_count
            ),
        );
    }
    let ended = run
        .ended_at
        .map(|at| format!(" {} ago", age(at, now)))
        .unwrap_or_default();
    let mut detail = format!(
        "{}: {}{ended}; nothing supervises its pane",
        run.status.as_str(),
        run.stop_reason.as_ref().map_or("?", |r| r.as_str())
    );
    if let Some(message) = &run.stop_message {
        detail.push_str(&format!(" ({message})"));
    }
    Check::new(scope, "run", Level::Warn, detail).fix(format!(
        "`autoctl run status --session {}` says more; `autoctl run start` supervises the pane again",
        run.spec.session
    ))
}

/// The agent in the pane: the process and the session it runs.
pub fn judge_agent(scope: &str, agent: &AgentSeen, now: Time) -> Check {
    match &agent.process {
        Some((pid, name)) => {
            let mut detail = format!("{name} (pid {pid})");
            if let Some(started) = agent.started_at.filter(|s| *s <= now) {
                detail.push_str(&format!(", up {}", age(started, now)));
            }
            match &agent.session_id {
                Some(id) => detail.push_str(&format!(", session {id}")),
                None => detail.push_str(", its session id unknown (no ~/.claude/sessions record)"),
            }
            Check::new(scope, "agent", Level::Ok, detail)
        }
        None => Check::new(
            scope,
            "agent",
            Level::Warn,
            "no agent process in the pane: only a shell",
        )
        .fix("start the agent in the pane (or `autoctl run recover` with the run's --launch)"),
    }
}

/// Whether the hooks' command runs in the agent's own environment: a failed hook on screen,
/// no autoctl hooks in the settings the agent reads, or a program that does not resolve in
/// its `PATH` is a failure. `me`: this autoctl's absolute path, for the fix.
pub fn judge_hook_command(scope: &str, agent: &AgentSeen, me: &str) -> Check {
    if let Some(line) = agent.failed_on_screen.first() {
        return Check::new(
            scope,
            "hook command",
            Level::Fail,
            format!("a hook could not run autoctl; on screen: {line:?}"),
        )
        .fix(path_fix(me));
    }
    let programs = agent.programs();
    if programs.is_empty() {
        let files: Vec<&str> = agent.settings.iter().map(|(f, _)| f.as_str()).collect();
        let mut detail = format!(
            "no autoctl hooks in the settings this agent reads ({})",
            if files.is_empty() {
                "none exist".to_string()
            } else {
                files.join(", ")
            }
        );
        for problem in &agent.unreadable {
            detail.push_str(&format!("; {problem}"));
        }
        return Check::new(scope, "hook command", Level::Fail, detail).fix(
            "`autoctl hook install` in the agent's project (or `--user --yes`), then restart the agent (hooks load at start)",
        );
    }
    let whose = agent
        .path
        .as_ref()
        .map_or("the agent's", |(_, whose)| whose);
    let mut found = Vec::new();
    for program in programs {
        match agent.resolved.iter().find(|(p, _)| p == program) {
            Some((_, Some(at))) => found.push(if at == program {
                format!("{program} exists")
            } else {
                format!("{program} → {at}")
            }),
            Some((_, None)) if program.contains('/') => {
                return Check::new(
                    scope,
                    "hook command",
                    Level::Fail,
                    format!("the hooks run {program}, which does not exist or cannot be run"),
                )
                .fix(path_fix(me));
            }
            Some((_, None)) => {
                let path = agent.path.as_ref().map_or("", |(p, _)| p.as_str());
                return Check::new(
                    scope,
                    "hook command",
                    Level::Fail,
                    format!("`{program}` is not on {whose} PATH ({path}): every hook fails"),
                )
                .fix(path_fix(me));
            }
            None => {
                return Check::new(
                    scope,
                    "hook command",
                    Level::Warn,
                    format!(
                        "cannot read the agent's environment: whether `{program}` resolves in it is unknown"
                    ),
                )
                .fix(format!(
                    "run doctor as the agent's user, or write the absolute path: `autoctl hook install --autoctl {me}`"
                ));
            }
        }
    }
    Check::new(
        scope,
        "hook command",
        Level::Ok,
        format!("{} (in {whose} PATH)", found.join(", ")),
    )
}

/// The hooks of one agent: its last event of each kind and their age. With what is known of
/// the agent in the pane, records of another session are history: a warning, never OK.
pub fn judge_hooks(
    scope: &str,
    record: Option<&Record>,
    agent: Option<&AgentSeen>,
    now: Time,
) -> Check {
    let Some(record) = record else {
        return Check::new(scope, "hooks", Level::Warn, "no hook event recorded for this agent")
            .fix("run `autoctl hook install` in the agent's project and restart the agent (hooks load at start)");
    };
    let mut events: Vec<(&String, &Time)> = record.events.iter().collect();
    events.sort_by(|a, b| b.1.cmp(a.1));
    let list = events
        .iter()
        .map(|(name, at)| format!("{name} {} ago", age(**at, now)))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(whose) = agent.and_then(|a| a.history(record.session_id.as_deref(), record.at, now))
    {
        return Check::new(
            scope,
            "hooks",
            Level::Warn,
            format!(
                "no hook event from the session now in the pane; the last records are {whose}, last event {} ago (history)",
                age(record.at, now)
            ),
        )
        .fix("the hooks do not run for this session: see `hook command`; after `autoctl hook install`, restart the agent (hooks load at start)");
    }
    Check::new(
        scope,
        "hooks",
        Level::Ok,
        format!(
            "{} since {} ago (session {}); last events: {list}",
            record.state_label(),
            age(record.since, now),
            record.session_id.as_deref().unwrap_or("?")
        ),
    )
}

/// The status line of one agent, with its windows. Its age is judged against the agent's
/// activity (`hook`: the hook record of the same session): Claude Code runs the status line
/// only when something changes, so an idle agent's is never stale, while one that last ran
/// [`STATUS_GRACE`] before the agent's last hook event stopped running. A status line of
/// another session than the one in the pane is history.
pub fn judge_status(
    scope: &str,
    record: Option<&StatusRecord>,
    hook: Option<&Record>,
    agent: Option<&AgentSeen>,
    now: Time,
) -> Check {
    let Some(record) = record else {
        return Check::new(scope, "status line", Level::Warn, "no status line recorded")
            .fix("`autoctl hook install` wires statusLine → autoctl statusline (a status line you have is wrapped)");
    };
    if let Some(whose) =
        agent.and_then(|a| a.history(record.session_id.as_deref(), record.seen_at, now))
    {
        return Check::new(
            scope,
            "status line",
            Level::Warn,
            format!(
                "no status line from the session now in the pane; the last one is {whose}, seen {} ago (history)",
                age(record.seen_at, now)
            ),
        )
        .fix("is statusLine still `autoctl statusline`, and can the agent run it (see `hook command`)?");
    }
    let mut detail = format!("seen {} ago", age(record.seen_at, now));
    if let Some(percent) = record.context_percent() {
        detail.push_str(&format!("; context {}%", percent.round()));
    }
    match &record.rate_limits {
        Some(limits) => {
            for (name, window) in [("5h", &limits.five_hour), ("7d", &limits.seven_day)] {
                if let Some(w) = window {
                    let reset = w
                        .reset_time()
                        .map(crate::time::format_time)
                        .unwrap_or_default();
                    detail.push_str(&format!(
                        "; {name} {}% resets {reset}",
                        w.used_percentage.round()
                    ));
                }
            }
        }
        None => detail.push_str(
            "; no rate_limits (an API-key login: the screen's banner is the only reset time)",
        ),
    }
    let same_session = |h: &&Record| {
        h.session_id.is_none() || record.session_id.is_none() || h.session_id == record.session_id
    };
    match hook.filter(same_session) {
        Some(hook) if hook.at > record.seen_at && between(record.seen_at, hook.at) > STATUS_GRACE => {
            Check::new(
                scope,
                "status line",
                Level::Warn,
                format!(
                    "{detail}; but the agent was active {} ago ({}): the status line stopped running",
                    age(hook.at, now),
                    hook.event
                ),
            )
            .fix("is the agent still up, and statusLine still `autoctl statusline`?")
        }
        Some(hook) => {
            if between(record.seen_at, now) > STATUS_GRACE {
                detail.push_str(&format!(
                    "; no activity since (last hook event {} ago): Claude Code runs its status line only when something changes",
                    age(hook.at, now)
                ));
            }
            Check::new(scope, "status line", Level::Ok, detail)
        }
        None => Check::new(scope, "status line", Level::Ok, detail),
    }
}

/// The driver of a run: its last tick.
pub fn judge_driver(scope: &str, last_tick: Option<Time>, now: Time) -> Check {
    match last_tick {
        Some(at) if between(at, now) <= DRIVER_FRESH => Check::new(
            scope,
            "driver",
            Level::Ok,
            format!("last tick {} ago", age(at, now)),
        ),
        Some(at) => Check::new(
            scope,
            "driver",
            Level::Warn,
            format!("last tick {} ago", age(at, now)),
        )
        .fix("start `autoctl run watch --all` (or a cron line `* * * * * autoctl run tick --all`)"),
        None => Check::new(scope, "driver", Level::Warn, "never ticked").fix(
            "start `autoctl run watch --all` (or a cron line `* * * * * autoctl run tick --all`)",
        ),
    }
}

/// An age for people (`12s`, `3m`, `2h5m`).
pub fn age(at: Time, now: Time) -> String {
    crate::duration::format(Duration::from_secs(between(at, now).as_secs()))
}

/// The report as text: one table per scope.
pub fn text(checks: &[Check]) -> String {
    let mut out = String::new();
    let mut scope = "";
    for check in checks {
        if check.scope != scope {
            scope = &check.scope;
            out.push_str(&format!("{scope}\n"));
        }
        out.push_str(&format!(
            "  {:<5} {:<12} {}\n",
            check.level.as_str(),
            check.name,
            crate::output::printable(&check.detail)
        ));
        if let Some(fix) = &check.fix {
            out.push_str(&format!(
                "        {:<12} fix: {}\n",
                "",
                crate::output::printable(fix)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Time {
        chrono::DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    #[test]
    fn the_driver_and_status_line_go_stale() {
        assert_eq!(judge_driver("r", Some(at(0)), at(60)).level, Level::Ok);
        assert_eq!(judge_driver("r", Some(at(0)), at(600)).level, Level::Warn);
        assert!(judge_driver("r", None, at(0)).fix.is_some());
        assert_eq!(
            judge_status("r", None, None, None, at(0)).level,
            Level::Warn
        );
    }

    const NOT_FOUND: &str =
        include_str!("../tests/fixtures/hook/claude-code/path/screen-autoctl-not-found.txt");

    #[test]
    fn failed_hooks_are_read_from_the_real_screen() {
        assert_eq!(
            hook_failures(NOT_FOUND),
            ["/bin/sh: 1: autoctl: not found"],
            "each line once"
        );
        for line in [
            "bash: line 1: autoctl: command not found",
            "/bin/sh: 1: /opt/autoctl/bin/autoctl: Permission denied",
            "/bin/sh: 1: /usr/local/bin/autoctl: No such file or directory",
        ] {
            assert_eq!(hook_failures(line), [line]);
        }
        for fine in [
            "● Ran autoctl next: plan",
            "  ⎿  /bin/sh: 1: jq: not found",
            "autoctl hook event",
        ] {
            assert!(hook_failures(fine).is_empty(), "{fine}");
        }
    }

    #[test]
    fn programs_resolve_as_sh_runs_them() {
        let exists = |p: &Path| {
            [
                "/usr/local/bin/autoctl",
                "/home/dev/proj/bin/autoctl",
                "/opt/x/autoctl",
            ]
            .contains(&p.to_str().unwrap())
        };
        let cwd = Path::new("/home/dev/proj");
        let path = Some("/usr/bin:/usr/local/bin");
        assert_eq!(
            resolve("autoctl", path, cwd, &exists),
            Some(Some("/usr/local/bin/autoctl".into()))
        );
        assert_eq!(
            resolve("autoctl", Some("/usr/bin:/bin"), cwd, &exists),
            Some(None)
        );
        // An empty PATH entry is the working directory; a path is taken as it is.
        assert_eq!(
            resolve("autoctl", Some(":/usr/bin"), Path::new("/opt/x"), &exists),
            Some(Some("/opt/x/autoctl".into()))
        );
        assert_eq!(
            resolve("bin/autoctl", None, cwd, &exists),
            Some(Some("/home/dev/proj/bin/autoctl".into()))
        );
        assert_eq!(resolve("/gone/autoctl", path, cwd, &exists), Some(None));
        assert_eq!(resolve("autoctl", None, cwd, &exists), None, "PATH unknown");
    }

    fn agent(path: &str, resolved: Option<&str>) -> AgentSeen {
        AgentSeen {
            process: Some((42, "claude".into())),
            path: Some((path.into(), "the agent's")),
            settings: vec![("/p/.claude/settings.json".into(), vec!["autoctl".into()])],
            resolved: vec![("autoctl".into(), resolved.map(str::to_string))],
            ..AgentSeen::default()
        }
    }

    #[test]
    fn the_hook_command_is_judged_in_the_agents_environment() {
        let ok = judge_hook_command(
            "r",
            &agent("/usr/local/bin", Some("/usr/local/bin/autoctl")),
            "/me",
        );
        assert_eq!(ok.level, Level::Ok, "{ok:?}");
        let off = judge_hook_command("r", &agent("/usr/bin:/bin", None), "/me/autoctl");
        assert_eq!(off.level, Level::Fail);
        assert!(off.detail.contains("/usr/bin:/bin"), "{off:?}");
        assert!(
            off.fix
                .as_deref()
                .unwrap()
                .contains("hook install --autoctl /me/autoctl"),
            "{off:?}"
        );
        // A failed hook on screen fails whatever the PATH says.
        let seen = AgentSeen {
            failed_on_screen: vec!["/bin/sh: 1: autoctl: not found".into()],
            ..agent("/usr/local/bin", Some("/usr/local/bin/autoctl"))
        };
        assert_eq!(judge_hook_command("r", &seen, "/me").level, Level::Fail);
        // No autoctl hooks where the agent looks.
        let none = AgentSeen {
            settings: vec![("/p/.claude/settings.json".into(), vec![])],
            ..agent("/usr/local/bin", None)
        };
        let none = judge_hook_command("r", &none, "/me");
        assert_eq!(none.level, Level::Fail);
        assert!(none.detail.contains("/p/.claude/settings.json"), "{none:?}");
        // An environment doctor cannot read: unknown, not OK.
        let unknown = AgentSeen {
            path: None,
            resolved: vec![],
            ..agent("", None)
        };
        assert_eq!(judge_hook_command("r", &unknown, "/me").level, Level::Warn);
    }

    fn record(session: &str, event: &str, secs: i64) -> Record {
        let mut r: Record = serde_json::from_value(serde_json::json!({
            "version": crate::hook::session::VERSION, "key": "pane:x", "state": "idle",
            "since": at(secs), "at": at(secs), "event": event, "session_id": session,
        }))
        .unwrap();
        r.events.insert(event.to_string(), at(secs));
        r
    }

    fn status(session: &str, secs: i64) -> StatusRecord {
        serde_json::from_value(serde_json::json!({
            "version": crate::hook::session::VERSION, "key": "pane:x", "session_id": session,
            "changed_at": at(secs), "seen_at": at(secs),
        }))
        .unwrap()
    }

    #[test]
    fn records_of_another_session_are_history() {
        let live = AgentSeen {
            session_id: Some("new".into()),
            ..AgentSeen::default()
        };
        let old = record("old", "Stop", 0);
        let check = judge_hooks("r", Some(&old), Some(&live), at(40));
        assert_eq!(check.level, Level::Warn);
        assert!(
            check.detail.contains("history") && check.detail.contains("old"),
            "{check:?}"
        );
        let check = judge_status(
            "r",
            Some(&status("old", 0)),
            Some(&old),
            Some(&live),
            at(40),
        );
        assert_eq!(check.level, Level::Warn, "{check:?}");
        // The live session's own records are current.
        let current = record("new", "Stop", 0);
        assert_eq!(
            judge_hooks("r", Some(&current), Some(&live), at(40)).level,
            Level::Ok
        );
        // Without Claude Code's session record: records older than the process are history,
        // and a start after `now` (a clock not to compare with) decides nothing.
        let started = |secs| AgentSeen {
            started_at: Some(at(secs)),
            ..AgentSeen::default()
        };
        assert_eq!(
            judge_hooks("r", Some(&old), Some(&started(10)), at(40)).level,
            Level::Warn
        );
        assert_eq!(
            judge_hooks("r", Some(&old), Some(&started(-10)), at(40)).level,
            Level::Ok
        );
        assert_eq!(
            judge_hooks("r", Some(&old), Some(&started(90)), at(40)).level,
            Level::Ok
        );
    }

    #[test]
    fn idle_is_not_stale() {
        // Idle for an hour after the last event: the status line is as fresh as the agent.
        let hook = record("s", "Stop", 0);
        let line = status("s", 1);
        let check = judge_status("r", Some(&line), Some(&hook), None, at(3600));
        assert_eq!(check.level, Level::Ok, "{check:?}");
        assert!(check.detail.contains("no activity since"), "{check:?}");
        // Activity the status line did not follow.
        let busy = record("s", "PreToolUse", 600);
        let check = judge_status("r", Some(&line), Some(&busy), None, at(610));
        assert_eq!(check.level, Level::Warn, "{check:?}");
        assert!(check.detail.contains("stopped running"), "{check:?}");
        // Within the grace it is the same activity.
        let soon = record("s", "PreToolUse", 60);
        assert_eq!(
            judge_status("r", Some(&line), Some(&soon), None, at(3600)).level,
            Level::Ok
        );
    }

    #[test]
    fn wiring_is_read_from_settings() {
        let mut s = settings::parse("{}").unwrap();
        let (yes, no, line) = wired(&s);
        assert!(yes.is_empty() && !no.is_empty() && !line);
        settings::install(&mut s, "autoctl", &|_| true);
        let (yes, no, line) = wired(&s);
        assert!(no.is_empty() && line, "{yes:?} {no:?}");
    }
}
