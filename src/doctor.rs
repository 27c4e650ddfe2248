//! `autoctl doctor`: which channels are wired and live, with the one-line fix for each that
//! is not. Global checks (state dir, registry, the agent's version, the hooks and status line
//! in settings.json), then one table per run (its pane and foreground command, the age of its
//! last hook event of each kind, its status line, the driver's last tick) or, without runs,
//! per recorded Claude Code session.
//!
//! The judging is pure ([`judge_hooks`], [`judge_status`], [`judge_driver`]); the edge in
//! `cmd/doctor.rs` gathers what they judge.

pub mod agents;

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

/// A status line older than this is not running (Claude Code runs it after each message;
/// autoctl refreshes an unchanged record every minute).
pub const STATUS_FRESH: Duration = Duration::from_secs(5 * 60);
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

/// The hooks of one agent: its last event of each kind and their age.
pub fn judge_hooks(scope: &str, record: Option<&Record>, now: Time) -> Check {
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

/// The status line of one agent: fresh, with its windows.
pub fn judge_status(scope: &str, record: Option<&StatusRecord>, now: Time) -> Check {
    let Some(record) = record else {
        return Check::new(scope, "status line", Level::Warn, "no status line recorded")
            .fix("`autoctl hook install` wires statusLine → autoctl statusline (a status line you have is wrapped)");
    };
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
    if between(record.seen_at, now) > STATUS_FRESH {
        return Check::new(scope, "status line", Level::Warn, detail)
            .fix("the status line stopped running: is the agent still up, and statusLine still `autoctl statusline`?");
    }
    Check::new(scope, "status line", Level::Ok, detail)
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
        assert_eq!(judge_status("r", None, at(0)).level, Level::Warn);
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
