//! The agent's typed state in a tick: what its hooks and status line recorded
//! ([`crate::hook::store`]), judged fresh or stale and cross-checked against the screen.
//!
//! Hooks first, the screen second (DESIGN "Reading a pane"): a hook state is used when it is
//! fresh — younger than the freshness bound and, when the screen changed since the previous
//! heartbeat, recorded after that heartbeat — and the screen is the cross-check. The rules,
//! pure functions of (typed records, screen, clock):
//!
//! - **agree**: the state's source is `hook` (or `statusline` for a usage limit read from
//!   its windows); a permission prompt both report is acted on at once, without waiting for
//!   the unchanged-capture threshold;
//! - **disagree**: the event says so and the safer reading wins: a prompt on the screen that
//!   the hooks do not report is never answered (escalated at once); a prompt the hooks report
//!   but the screen no longer shows (a person pressed Esc, which fires no hook) is the
//!   screen's; working beats idle for anything autoctl would type;
//! - **stale or absent**: the screen alone (`source: screen`).
//!
//! Messages for the reasoning-loop check come from Stop's `last_assistant_message` whenever
//! the hooks recorded one; usage limits take the status line's exact reset time; the
//! proactive `/compact` is decided here ([`compaction`]).

use std::time::Duration;

use serde::Serialize;

use crate::hook::session::{AgentState, Record};
use crate::hook::statusline::{StatusRecord, WindowKind};
use crate::pane::Class;
use crate::pane::view::MessageMark;
use crate::pane::view::PaneView;
use crate::supervise::wait::{HookFailure, Window};
use crate::time::{Time, between, format_time};

/// A hook state older than this is not trusted (the screen decides).
pub const DEFAULT_FRESH: Duration = Duration::from_secs(10 * 60);
/// How long after a tool starts its permission box may be on the screen while the
/// PermissionRequest hook decides (twice the hook's own default `--timeout`).
pub const PERMISSION_HOOK_GRACE: Duration = Duration::from_secs(10);
/// Context use (percent) at which an idle agent is sent `/compact` (seed 000).
pub const DEFAULT_COMPACT_AT: u8 = 70;

/// How a tick uses typed state (`run tick`/`run watch` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypedOptions {
    /// `--hook-fresh`.
    pub fresh: Duration,
    /// `--compact-at` (None: `--compact-at 0`, never).
    pub compact_at: Option<u8>,
    /// `--wait-weekly`: wait out a weekly limit instead of escalating it.
    pub wait_weekly: bool,
}

impl TypedOptions {
    /// The defaults of the flags.
    pub const DEFAULT: TypedOptions = TypedOptions {
        fresh: DEFAULT_FRESH,
        compact_at: Some(DEFAULT_COMPACT_AT),
        wait_weekly: false,
    };
}

impl Default for TypedOptions {
    fn default() -> Self {
        TypedOptions::DEFAULT
    }
}

/// What the store held for the run's agent.
#[derive(Debug, Clone, Default)]
pub struct TypedObs {
    /// Which key found it: `pane`, `session` or `cwd`.
    pub by: Option<&'static str>,
    pub hook: Option<Record>,
    pub status: Option<StatusRecord>,
}

/// The state a tick went by, for its JSON line and `run status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reading {
    /// `hook`, `statusline` or `screen`.
    pub source: &'static str,
    /// The state (a hook state, or the screen's class when the screen decides).
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Age of the hook state, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_age_ms: Option<u64>,
    /// The hook state was not used: too old, or older than the last screen change.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// The hooks and the screen disagree: what each says and which reading won.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<String>,
    /// Context use from the status line (percent, rounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_percent: Option<u32>,
    /// An exhausted usage window from the status line: `five_hour` or `seven_day`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<WindowKind>,
    /// When that window resets, to the second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<String>,
}

/// What the tick does with the reading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Use {
    /// Examine the screen's prompt now, without waiting for the unchanged threshold.
    pub act_now: bool,
    /// Never answer the screen's prompt (the channels disagree): escalate it.
    pub no_answer: bool,
    /// The agent's messages from its hooks (replacing the screen's).
    pub messages: Option<MessageMark>,
    /// An exhausted usage window from the status line, with its reset to the second (the
    /// wait core decides what to do about it: [`crate::supervise::wait`]).
    pub window: Option<Window>,
    /// The agent's last turn ended on an API error (StopFailure), and whether it is a usage
    /// limit.
    pub failure: Option<HookFailure>,
    /// A tool the hooks saw start (PreToolUse) and not end: its start.
    pub tool_since: Option<Time>,
}

/// Read the typed state of one run against its screen.
pub fn read(
    typed: &TypedObs,
    view: &PaneView,
    screen_changed: bool,
    previous_check: Option<Time>,
    now: Time,
    options: &TypedOptions,
) -> (Reading, Use) {
    let screen = view.classification.class;
    let mut reading = Reading {
        source: "screen",
        state: screen.as_str().to_string(),
        tool: None,
        hook_age_ms: None,
        stale: false,
        disagreement: None,
        context_percent: typed
            .status
            .as_ref()
            .and_then(StatusRecord::context_percent)
            .map(|p| p.clamp(0.0, 1000.0).round() as u32),
        limit: None,
        reset_at: None,
    };
    let mut usage = Use {
        messages: typed.hook.as_ref().and_then(hook_messages),
        window: exhausted_window(typed.status.as_ref(), now),
        ..Use::default()
    };
    if let Some(window) = usage.window {
        reading.limit = Some(if window.weekly {
            WindowKind::SevenDay
        } else {
            WindowKind::FiveHour
        });
        reading.reset_at = Some(format_time(window.reset));
    }
    let Some(hook) = &typed.hook else {
        return (reading, usage);
    };
    let age = between(hook.at, now);
    reading.hook_age_ms = Some(u64::try_from(age.as_millis()).unwrap_or(u64::MAX));
    // A running tool is as old as its tool; a waiting state as old as its wait: both are
    // still what the agent does while no event comes.
    let newer_than_screen =
        !screen_changed || previous_check.is_none_or(|checked| hook.at >= checked);
    if age > options.fresh || !newer_than_screen {
        reading.stale = true;
        return (reading, usage);
    }
    let state = hook.state;
    reading.source = "hook";
    reading.state = hook.state_label();
    reading.tool = hook.tool.clone();
    let prompt_on_screen = matches!(
        screen,
        Class::Permission | Class::YesNo | Class::Continue | Class::Picker | Class::Trust
    );
    match state {
        AgentState::WaitingForPermission if matches!(screen, Class::Permission | Class::YesNo) => {
            usage.act_now = true;
        }
        AgentState::WaitingForPermission if screen != Class::Unknown => {
            // Esc on a permission menu fires no hook: the screen knows better.
            reading.source = "screen";
            reading.state = screen.as_str().to_string();
            reading.disagreement = Some(format!(
                "hooks say waiting-for-permission, the screen shows {}: the screen wins (the prompt was dismissed)",
                screen.as_str()
            ));
        }
        AgentState::WaitingForInput
            if matches!(screen, Class::Picker | Class::Permission | Class::YesNo) =>
        {
            // An elicitation or question: a person answers.
            usage.act_now = true;
            usage.no_answer = true;
        }
        // Claude Code draws its permission box while the PermissionRequest hook decides
        // (`hook permission-request` answers within seconds): a box right after the tool's
        // PreToolUse is that hook at work, not a disagreement. The screen's own threshold
        // applies meanwhile; past the grace the box is the hooks' disagreement below.
        AgentState::Working
            if matches!(screen, Class::Permission)
                && hook
                    .tool_started_at
                    .is_some_and(|started| between(started, now) < PERMISSION_HOOK_GRACE) =>
        {
            reading.disagreement = Some(
                "the screen shows a permission prompt right after the tool started: the PermissionRequest hook is deciding"
                    .to_string(),
            );
        }
        AgentState::Working
        | AgentState::Idle
        | AgentState::Compacting
        | AgentState::Ended
        | AgentState::Failed
            if prompt_on_screen =>
        {
            usage.act_now = true;
            usage.no_answer = true;
            reading.disagreement = Some(format!(
                "hooks say {}, the screen shows a {} prompt: not answered, a person decides",
                hook.state_label(),
                screen.as_str()
            ));
        }
        AgentState::Idle if screen == Class::Working => {
            reading.source = "screen";
            reading.state = "working".to_string();
            reading.disagreement = Some(
                "hooks say idle, the screen shows the agent working: working wins".to_string(),
            );
        }
        AgentState::Working | AgentState::Compacting if screen == Class::Idle => {
            reading.disagreement = Some(format!(
                "hooks say {}, the screen shows an idle prompt: {} wins (nothing is typed)",
                state.as_str(),
                state.as_str()
            ));
        }
        _ => {}
    }
    if state == AgentState::Working {
        usage.tool_since = hook.tool_started_at;
    }
    if state == AgentState::Failed {
        usage.failure = Some(failure(hook, usage.window.is_some()));
        if usage.window.is_some() {
            reading.source = "statusline";
        }
    }
    (reading, usage)
}

/// The status line's exhausted window that decides a usage limit's reset, while it is still
/// ahead (`seven_day` at 100 % is a weekly limit).
fn exhausted_window(status: Option<&StatusRecord>, now: Time) -> Option<Window> {
    let (kind, window) = status?.rate_limits.as_ref()?.exhausted()?;
    let reset = window.reset_time().filter(|reset| *reset > now)?;
    Some(Window {
        reset,
        weekly: kind == WindowKind::SevenDay,
    })
}

/// StopFailure `rate_limit` is the same for a 429 and a usage limit: it is a usage limit when
/// the banner says so ("You've hit your … limit") or a status-line window is at 100 %;
/// otherwise a transient limit (and every other kind an API error the agent gave up on).
fn failure(hook: &Record, window_exhausted: bool) -> HookFailure {
    let kind = hook.error.clone().unwrap_or_else(|| "unknown".to_string());
    let banner = hook.error_message.as_deref().unwrap_or("").to_lowercase();
    let says_limit = banner.contains("hit your") || banner.contains("usage limit");
    HookFailure {
        usage_limit: kind == "rate_limit" && (says_limit || window_exhausted),
        kind,
        at: hook.since,
    }
}

/// The agent's messages as its Stop hooks recorded them: one new "block" per Stop, so a
/// message counts once per turn, and the run of identical ones the hooks counted.
pub fn hook_messages(record: &Record) -> Option<MessageMark> {
    let message = record.message.as_ref()?;
    Some(MessageMark {
        latest: Some(message.text.clone()),
        visible: record.repeats.max(1),
        fingerprint: format!(
            "hook{}{}",
            record.stops,
            record.session_id.as_deref().unwrap_or("")
        )
        .replace('.', ""),
    })
}

/// Whether to type `/compact` now: the status line's context use is at or past `compact_at`,
/// the agent is idle at its own prompt by both channels, and this crossing of the threshold
/// has not been compacted yet (`requested`: the context use when the last `/compact` was
/// typed, cleared once the use is back under the threshold).
pub fn compaction(
    reading: &Reading,
    screen: Class,
    requested: bool,
    options: &TypedOptions,
) -> Option<String> {
    let at = options.compact_at?;
    let used = reading.context_percent?;
    if used < u32::from(at) || requested {
        return None;
    }
    let idle = reading.source == "hook"
        && reading.state == "idle"
        && reading.disagreement.is_none()
        && screen == Class::Idle;
    idle.then(|| format!("context {used}% >= --compact-at {at}%: /compact at the idle prompt"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::session::{Key, apply, parse};
    use crate::pane::classify::Classification;

    fn at(secs: i64) -> Time {
        chrono::DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    fn view(class: Class) -> PaneView {
        PaneView {
            pane_id: "%1".into(),
            pid: 0,
            waiting: Default::default(),
            foreground: "claude".into(),
            foreground_is_shell: false,
            hash: "h".into(),
            classification: Classification {
                class,
                action: crate::pane::Action::None,
                reason: String::new(),
                rule: None,
                matched: None,
                line: None,
                destructive: false,
                markers: Vec::new(),
                keys: Vec::new(),
                reset_at: None,
                approval: None,
                foreground: None,
                observe_only: false,
                pane_dead: false,
                prompt_visible: false,
                explanation: String::new(),
                passed_over: Vec::new(),
            },
            answered_marker: None,
            messages: None,
            socket: None,
            dead: false,
        }
    }

    fn hook(events: &[&str], when: i64) -> TypedObs {
        let key = Key::Session("s".into());
        let mut record = None;
        for e in events {
            record = Some(apply(record, &key, &parse(e.as_bytes()).unwrap(), at(when)).record);
        }
        TypedObs {
            by: Some("pane"),
            hook: record,
            status: None,
        }
    }

    const PERMISSION: &str = r#"{"hook_event_name":"Notification","session_id":"s","notification_type":"permission_prompt"}"#;
    const STOP: &str =
        r#"{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"m"}"#;

    #[test]
    fn a_permission_both_report_is_acted_on_at_once() {
        let (r, u) = read(
            &hook(&[PERMISSION], 0),
            &view(Class::Permission),
            true,
            Some(at(-30)),
            at(5),
            &TypedOptions::default(),
        );
        assert_eq!(
            (r.source, r.state.as_str()),
            ("hook", "waiting-for-permission")
        );
        assert!(u.act_now && !u.no_answer);
        assert!(r.disagreement.is_none());
    }

    #[test]
    fn a_stale_hook_state_falls_back_to_the_screen() {
        let old = hook(&[PERMISSION], 0);
        let (r, u) = read(
            &old,
            &view(Class::Permission),
            false,
            None,
            at(3600),
            &TypedOptions::default(),
        );
        assert_eq!((r.source, r.stale), ("screen", true));
        assert!(!u.act_now);
        // Older than a screen change since the previous heartbeat: stale too.
        let (r, _) = read(
            &old,
            &view(Class::Permission),
            true,
            Some(at(10)),
            at(20),
            &TypedOptions::default(),
        );
        assert!(r.stale);
    }

    #[test]
    fn idle_hooks_and_a_menu_on_screen_escalate_at_once() {
        let (r, u) = read(
            &hook(&[STOP], 0),
            &view(Class::Permission),
            false,
            None,
            at(5),
            &TypedOptions::default(),
        );
        assert!(u.act_now && u.no_answer);
        assert!(r.disagreement.unwrap().contains("a person decides"));
    }

    #[test]
    fn a_box_right_after_a_tool_starts_is_the_permission_hook_deciding() {
        const PRE: &str = r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
        const PROMPT: &str =
            r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}"#;
        let options = TypedOptions::default();
        // Within the grace of PreToolUse: the hook decides, the screen's own threshold waits.
        let (r, u) = read(
            &hook(&[PRE], 0),
            &view(Class::Permission),
            false,
            None,
            at(2),
            &options,
        );
        assert!(!u.act_now && !u.no_answer, "{r:?}");
        assert!(r.disagreement.unwrap().contains("hook is deciding"));
        // Past the grace, the box contradicts the hooks: a person decides.
        let (_, u) = read(
            &hook(&[PRE], 0),
            &view(Class::Permission),
            false,
            None,
            at(11),
            &options,
        );
        assert!(u.act_now && u.no_answer);
        // Working without a tool (a prompt was submitted): no grace at all.
        let (_, u) = read(
            &hook(&[PROMPT], 0),
            &view(Class::Permission),
            false,
            None,
            at(1),
            &options,
        );
        assert!(u.act_now && u.no_answer);
    }

    #[test]
    fn a_dismissed_permission_is_the_screens() {
        let (r, u) = read(
            &hook(&[PERMISSION], 0),
            &view(Class::Idle),
            false,
            None,
            at(5),
            &TypedOptions::default(),
        );
        assert_eq!((r.source, r.state.as_str()), ("screen", "idle"));
        assert!(r.disagreement.is_some());
        assert!(!u.act_now);
    }

    #[test]
    fn hook_messages_count_once_per_stop() {
        let typed = hook(&[STOP, STOP], 0);
        let m = hook_messages(typed.hook.as_ref().unwrap()).unwrap();
        assert_eq!(m.visible, 2);
        assert_eq!(m.latest.as_deref(), Some("m"));
        assert!(!m.fingerprint.contains('.'));
    }

    fn status(json: &str) -> StatusRecord {
        let input = serde_json::from_str(json).unwrap();
        StatusRecord::of(&input, "k", at(0))
    }

    const LIMIT: &str = r#"{"hook_event_name":"StopFailure","session_id":"s","error":"rate_limit","last_assistant_message":"You've hit your limit · resets 10:42am (UTC)"}"#;

    #[test]
    fn usage_limits_take_the_status_lines_reset_to_the_second() {
        let mut typed = hook(&[LIMIT], 0);
        let five = format!(
            r#"{{"rate_limits":{{"five_hour":{{"used_percentage":100,"resets_at":{}}}}}}}"#,
            1_800_000_000 + 3723
        );
        typed.status = Some(status(&five));
        let (r, u) = read(
            &typed,
            &view(Class::Quota),
            false,
            None,
            at(5),
            &TypedOptions::default(),
        );
        assert_eq!(r.source, "statusline");
        assert_eq!(r.reset_at.as_deref(), Some("2027-01-15T09:02:03.000Z"));
        assert_eq!(
            u.window,
            Some(Window {
                reset: at(3723),
                weekly: false
            })
        );
        assert!(u.failure.as_ref().unwrap().usage_limit);
        let seven = format!(
            r#"{{"rate_limits":{{"seven_day":{{"used_percentage":100,"resets_at":{}}}}}}}"#,
            1_800_000_000 + 86_400
        );
        typed.status = Some(status(&seven));
        let (_, u) = read(
            &typed,
            &view(Class::Quota),
            false,
            None,
            at(5),
            &TypedOptions::default(),
        );
        assert!(u.window.unwrap().weekly);
        // A window whose reset has passed says nothing.
        let (_, u) = read(
            &typed,
            &view(Class::Quota),
            false,
            None,
            at(90_000),
            &TypedOptions {
                fresh: Duration::from_secs(100_000),
                ..TypedOptions::default()
            },
        );
        assert_eq!(u.window, None);
        // No window at 100% (an API-key login): the banner tells a usage limit.
        typed.status = None;
        let (r, u) = read(
            &typed,
            &view(Class::Quota),
            false,
            None,
            at(5),
            &TypedOptions::default(),
        );
        assert_eq!(r.source, "hook");
        assert!(u.failure.unwrap().usage_limit);
        // A rate_limit without either is a transient limit.
        const TRANSIENT: &str = r#"{"hook_event_name":"StopFailure","session_id":"s","error":"rate_limit","last_assistant_message":"API Error: Request rejected (429)"}"#;
        let (_, u) = read(
            &hook(&[TRANSIENT], 0),
            &view(Class::RateLimit),
            false,
            None,
            at(5),
            &TypedOptions::default(),
        );
        let failure = u.failure.unwrap();
        assert_eq!(
            (failure.kind.as_str(), failure.usage_limit),
            ("rate_limit", false)
        );
    }

    #[test]
    fn compaction_once_per_crossing_when_idle_by_both() {
        let mut typed = hook(&[STOP], 0);
        typed.status = Some(status(r#"{"context_window":{"used_percentage":72.4}}"#));
        let options = TypedOptions::default();
        let (r, _) = read(&typed, &view(Class::Idle), false, None, at(5), &options);
        assert_eq!(r.context_percent, Some(72));
        assert!(compaction(&r, Class::Idle, false, &options).is_some());
        assert!(
            compaction(&r, Class::Idle, true, &options).is_none(),
            "once per crossing"
        );
        assert!(compaction(&r, Class::Working, false, &options).is_none());
        let never = TypedOptions {
            compact_at: None,
            ..options
        };
        assert!(compaction(&r, Class::Idle, false, &never).is_none());
        typed.status = Some(status(r#"{"context_window":{"used_percentage":69.4}}"#));
        let (r, _) = read(&typed, &view(Class::Idle), false, None, at(5), &options);
        assert!(compaction(&r, Class::Idle, false, &options).is_none());
    }
}
