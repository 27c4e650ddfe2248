//! Claude Code's status line: the JSON it pipes to the `statusLine` command, what autoctl
//! keeps of it ([`StatusRecord`]: the model, `context_window` and `rate_limits`), and the one
//! short line printed for the person.
//!
//! The status line is the only channel that carries exact usage-limit windows:
//! `rate_limits.five_hour|seven_day.{used_percentage, resets_at}` with `resets_at` in epoch
//! seconds (subscription logins only; with an API key the object is absent). A window at
//! 100 % is the limit that is hit and its `resets_at` is when the wait ends, to the second;
//! the banner on screen only says "resets 8:06am". `context_window.used_percentage` drives
//! proactive compaction.
//!
//! The command is run by Claude Code after every message (throttled), so the record is
//! written only when something in it changed, or at most once a minute to show the status
//! line is alive ([`REFRESH`]).

use std::time::Duration;

use chrono::{DateTime, Local, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use super::session::Time;

/// An unchanged record is rewritten after this long, so readers can tell a live status line
/// from one that stopped running.
pub const REFRESH: Duration = Duration::from_secs(60);

/// The fields of the status-line input autoctl reads. Everything is optional: fields come and
/// go between releases, and `context_window.used_percentage` is `null` before the first reply.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct StatusInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub model: Option<Model>,
    #[serde(default)]
    pub workspace: Option<Workspace>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub context_window: Option<ContextWindow>,
    #[serde(default)]
    pub rate_limits: Option<RateLimits>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Model {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub display_name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Workspace {
    #[serde(default)]
    pub current_dir: Option<String>,
    #[serde(default)]
    pub project_dir: Option<String>,
}

/// `context_window`, as recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextWindow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_percentage: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_output_tokens: Option<u64>,
}

/// `rate_limits`: the two subscription windows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RateLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub five_hour: Option<Window>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seven_day: Option<Window>,
}

/// One usage window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub used_percentage: f64,
    /// Epoch seconds.
    pub resets_at: i64,
}

impl Window {
    pub fn reset_time(&self) -> Option<Time> {
        DateTime::from_timestamp(self.resets_at, 0)
    }

    /// The window is used up.
    pub fn exhausted(&self) -> bool {
        self.used_percentage >= 100.0
    }
}

/// Which window a limit is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowKind {
    FiveHour,
    SevenDay,
}

impl RateLimits {
    /// The exhausted window that decides the wait: the one that resets last (both at 100 %
    /// means waiting for the later one). `seven_day` is a weekly limit.
    pub fn exhausted(&self) -> Option<(WindowKind, &Window)> {
        [
            (WindowKind::FiveHour, self.five_hour.as_ref()),
            (WindowKind::SevenDay, self.seven_day.as_ref()),
        ]
        .into_iter()
        .filter_map(|(kind, w)| w.filter(|w| w.exhausted()).map(|w| (kind, w)))
        .max_by_key(|(_, w)| w.resets_at)
    }
}

/// `<stem>.status.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusRecord {
    pub version: u32,
    /// The record's generation (see [`Record::seq`](crate::hook::session::Record::seq)).
    #[serde(default)]
    pub seq: u64,
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_dir: Option<String>,
    /// Claude Code's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<ContextWindow>,
    /// Absent for API-key users (the banner on screen is then the only source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limits: Option<RateLimits>,
    /// When the content last changed.
    pub changed_at: Time,
    /// When the status line last ran (refreshed at most every [`REFRESH`] while unchanged).
    pub seen_at: Time,
}

impl StatusRecord {
    /// The record for one input. `changed_at` is `now`; [`next`] keeps the old one when
    /// nothing changed.
    pub fn of(input: &StatusInput, key: &str, now: Time) -> StatusRecord {
        let model = input.model.as_ref();
        StatusRecord {
            version: super::session::VERSION,
            seq: 0,
            key: key.to_string(),
            session_id: input.session_id.clone(),
            cwd: input
                .workspace
                .as_ref()
                .and_then(|w| w.current_dir.clone())
                .or_else(|| input.cwd.clone()),
            project_dir: input.workspace.as_ref().and_then(|w| w.project_dir.clone()),
            claude_version: input.version.clone(),
            model: model
                .and_then(|m| m.display_name.clone())
                .or_else(|| model.and_then(|m| m.id.clone())),
            context_window: input.context_window.clone(),
            rate_limits: input.rate_limits.clone(),
            changed_at: now,
            seen_at: now,
        }
    }

    /// Context use in percent, when known.
    pub fn context_percent(&self) -> Option<f64> {
        self.context_window.as_ref()?.used_percentage
    }
}

/// What to write after one status-line run: `None` when the stored record is still right.
pub fn next(previous: Option<&StatusRecord>, mut new: StatusRecord) -> Option<StatusRecord> {
    let Some(old) = previous else {
        return Some(new);
    };
    let same = StatusRecord {
        seq: old.seq,
        changed_at: old.changed_at,
        seen_at: old.seen_at,
        ..new.clone()
    } == *old;
    if !same {
        return Some(new);
    }
    new.changed_at = old.changed_at;
    let age = (new.seen_at - old.seen_at)
        .to_std()
        .unwrap_or(Duration::ZERO);
    (age >= REFRESH).then_some(new)
}

/// The loop's progress, for the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Iteration {
    pub current: u64,
    pub max: u64,
}

/// The line for the person: model, context use, the two windows with their reset in local
/// time, the loop's iteration. Never more than one line.
pub fn render<Tz: TimeZone>(
    record: &StatusRecord,
    iteration: Option<Iteration>,
    now: Time,
    zone: &Tz,
) -> String
where
    Tz::Offset: std::fmt::Display,
{
    let mut parts: Vec<String> = Vec::new();
    if let Some(model) = &record.model {
        parts.push(model.clone());
    }
    if let Some(percent) = record.context_percent() {
        parts.push(format!("ctx {}%", percent.round()));
    }
    if let Some(limits) = &record.rate_limits {
        for (name, window) in [("5h", &limits.five_hour), ("7d", &limits.seven_day)] {
            if let Some(window) = window {
                let mut text = format!("{name} {}%", window.used_percentage.round());
                if let Some(reset) = window.reset_time() {
                    text.push_str(&format!(" ↻{}", local_reset(reset, now, zone)));
                }
                parts.push(text);
            }
        }
    }
    if let Some(it) = iteration {
        parts.push(format!("loop {}/{}", it.current, it.max));
    }
    let line = parts.join(" · ");
    crate::output::one_line(&line)
}

/// A reset time as a person reads it: `14:02` today, `Tue 09:12` within a week, else a date.
/// A reset already past is `passed`: the window has reset and its percentage is from before,
/// so a weekday there would read as next week.
fn local_reset<Tz: TimeZone>(reset: Time, now: Time, zone: &Tz) -> String
where
    Tz::Offset: std::fmt::Display,
{
    if reset <= now {
        return "passed".to_owned();
    }
    let local = reset.with_timezone(zone);
    let today = now.with_timezone(zone).date_naive();
    if local.date_naive() == today {
        local.format("%H:%M").to_string()
    } else if (reset - now).num_days() < 6 {
        local.format("%a %H:%M").to_string()
    } else {
        local.format("%b %-d %H:%M").to_string()
    }
}

/// The machine's zone for the line.
pub fn local_zone() -> Local {
    Local
}

/// Utc, for tests and `TZ=UTC`.
pub fn utc() -> Utc {
    Utc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: &str) -> StatusInput {
        serde_json::from_str(json).unwrap()
    }

    fn at(secs: i64) -> Time {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    const SUB: &str = r#"{"session_id":"s","model":{"id":"claude-sonnet-5-5","display_name":"Sonnet 5.5"},
        "context_window":{"used_percentage":12.4,"context_window_size":1000000,"total_input_tokens":1200},
        "rate_limits":{"five_hour":{"used_percentage":42,"resets_at":1795689758},
                       "seven_day":{"used_percentage":17,"resets_at":1796082758}}}"#;

    #[test]
    fn the_line_has_model_context_windows_and_loop() {
        let record = StatusRecord::of(&input(SUB), "k", at(1_795_680_000));
        let line = render(
            &record,
            Some(Iteration {
                current: 3,
                max: 20,
            }),
            at(1_795_680_000),
            &Utc,
        );
        assert_eq!(
            line,
            "Sonnet 5.5 · ctx 12% · 5h 42% ↻10:42 · 7d 17% ↻Mon 23:52 · loop 3/20"
        );
    }

    #[test]
    fn a_reset_in_the_past_reads_as_passed_never_as_next_week() {
        let record = StatusRecord::of(&input(SUB), "k", at(1_795_680_000));
        // A day after the five-hour reset, two days before the weekly one.
        let line = render(&record, None, at(1_795_689_758 + 86_400), &Utc);
        assert_eq!(
            line,
            "Sonnet 5.5 · ctx 12% · 5h 42% ↻passed · 7d 17% ↻Mon 23:52"
        );
        // The second the window resets is past too.
        let line = render(&record, None, at(1_795_689_758), &Utc);
        assert!(line.contains("5h 42% ↻passed"), "{line}");
    }

    #[test]
    fn api_key_users_have_no_windows_and_null_context() {
        let record = StatusRecord::of(
            &input(
                r#"{"model":{"display_name":"Opus 5.5"},"context_window":{"used_percentage":null}}"#,
            ),
            "k",
            at(0),
        );
        assert_eq!(render(&record, None, at(0), &Utc), "Opus 5.5");
        assert!(record.rate_limits.is_none());
    }

    #[test]
    fn the_exhausted_window_decides_and_weekly_is_told_apart() {
        let limits: RateLimits = serde_json::from_str(
            r#"{"five_hour":{"used_percentage":100,"resets_at":10},"seven_day":{"used_percentage":80,"resets_at":99}}"#,
        )
        .unwrap();
        assert_eq!(limits.exhausted().unwrap().0, WindowKind::FiveHour);
        let both: RateLimits = serde_json::from_str(
            r#"{"five_hour":{"used_percentage":100,"resets_at":10},"seven_day":{"used_percentage":100,"resets_at":99}}"#,
        )
        .unwrap();
        assert_eq!(both.exhausted().unwrap().0, WindowKind::SevenDay);
        let none: RateLimits =
            serde_json::from_str(r#"{"five_hour":{"used_percentage":99.5,"resets_at":10}}"#)
                .unwrap();
        assert!(none.exhausted().is_none());
    }

    #[test]
    fn written_only_on_change_or_after_the_refresh() {
        let first = StatusRecord::of(&input(SUB), "k", at(0));
        assert!(next(None, first.clone()).is_some());
        let again = StatusRecord::of(&input(SUB), "k", at(30));
        assert!(next(Some(&first), again).is_none());
        let later = next(Some(&first), StatusRecord::of(&input(SUB), "k", at(61))).unwrap();
        assert_eq!(
            later.changed_at,
            at(0),
            "unchanged content keeps its change time"
        );
        assert_eq!(later.seen_at, at(61));
        let changed = input(&SUB.replace("42", "43"));
        let written = next(Some(&first), StatusRecord::of(&changed, "k", at(5))).unwrap();
        assert_eq!(written.changed_at, at(5));
    }
}
