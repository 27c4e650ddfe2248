//! The agent's channels in a tick (its hooks and status line): what they recorded
//! ([`crate::hook::store`]), judged fresh or stale and cross-checked against the screen.
//!
//! Hooks first, the screen second (DESIGN "Reading a pane"): a hook state is used when it is
//! fresh — younger than the freshness bound and newer than the last screen change — and the
//! screen is the cross-check. The rules, pure functions of (typed records, screen, clock):
//!
//! - **agree**: the state's source is `hook` (or `statusline` for a usage limit read from
//!   its windows); a permission prompt both report is acted on at once, without waiting for
//!   the unchanged-capture threshold — also when the agent announced the box just before
//!   drawing it ([`DRAW_LEAD`]: Gemini's Notification comes first, so a heartbeat
//!   in between still saw it working);
//! - **disagree**: the event says so and the safer reading wins: a prompt on the screen that
//!   the hooks do not report is never answered (escalated at once); a prompt the hooks report
//!   but the screen no longer shows (a person pressed Esc, which fires no hook) is the
//!   screen's; working beats idle for anything autoctl would type;
//! - **stale or absent**: the screen alone (`source: screen`).
//!
//! **When the screen changed.** What counts is a change of what the screen shows (its
//! class: a menu appeared, work started), not of its pixels: Claude Code redraws an idle
//! screen (tips, its status line) without any hook event, and a hook state must not go stale
//! for that (in a live 2.1.332 loop the idle screen changed 4 s after the last Stop). Screens
//! are sampled, so a change is known only to lie between the last heartbeat that still saw
//! the old class and the first that saw the new one. The stall state keeps that lower bound
//! across heartbeats ([`StallState::screen_changed_after`]), and a hook event counts as newer
//! than the screen when it was recorded at or after it: an event that may have caused the
//! change is trusted, one that certainly came before it is not, however many heartbeats the
//! new screen stays — except the screen the event announced, drawn within [`DRAW_LEAD`] of
//! it (a permission event's box, a tool start's working line): a heartbeat between the event
//! and the agent's redraw still saw the old screen.
//!
//! One reading serves every driver: `run tick`/`run watch` ([`crate::supervise::tick`]) and
//! `stall check` ([`crate::supervise::driver::check`]) call [`cross_check`] and give the stall
//! core the same hints ([`Use::apply_to`]).
//!
//! Messages for the reasoning-loop check come from Stop's `last_assistant_message` whenever
//! the hooks recorded one; usage limits take the status line's exact reset time; the
//! proactive `/compact` is decided here ([`compaction`]), within the run's per-iteration
//! compaction budget ([`crate::taskai::compaction`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::hook::session::{AgentState, Channel, Record};
use crate::hook::statusline::{StatusRecord, WindowKind};
use crate::pane::Class;
use crate::pane::view::MessageMark;
use crate::pane::view::PaneView;
use crate::supervise::stall::{Hint, Sample, StallState};
use crate::supervise::wait::{HookFailure, Window};
use crate::taskai::compaction::CompactionCount;
use crate::time::{Time, between, format_time};

/// A hook state older than this is not trusted (the screen decides).
pub const DEFAULT_FRESH: Duration = Duration::from_secs(10 * 60);
/// How long after a tool starts its permission box may be on the screen while the
/// PermissionRequest hook decides (twice the hook's own default `--timeout`).
pub const PERMISSION_HOOK_GRACE: Duration = Duration::from_secs(10);
/// How long before its permission box (or its working line) shows an agent may announce it:
/// Gemini CLI fires its Notification (`ToolPermission`) and then draws the box — 0.6 s apart
/// in a live 0.61 loop on a loaded machine, so a heartbeat between the two saw the old screen
/// after the event; Codex CLI 0.171 fires PreToolUse before it draws its working line.
pub const DRAW_LEAD: Duration = Duration::from_secs(3);
/// The hook record's event when autoctl answered the permission box the hooks announced (the
/// agent runs the granted tool; see `run tick`'s driver).
pub const PERMISSION_ANSWERED: &str = "PermissionAnswered";
/// Context use (percent) at which an idle agent is sent `/compact` (seed 000).
pub const DEFAULT_COMPACT_AT: u8 = 70;

/// How a tick uses typed state (`run tick`/`run watch` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelOptions {
    /// `--hook-fresh`.
    pub fresh: Duration,
    /// `--compact-at` (None: `--compact-at 0`, never), or its default.
    pub compact_at: Option<u8>,
    /// `--compact-at` was given: it decides for every run. Without it a task's own threshold
    /// comes first ([`ChannelOptions::compaction_threshold`]).
    pub compact_at_given: bool,
    /// `--wait-weekly`: wait out a weekly limit instead of escalating it.
    pub wait_weekly: bool,
}

impl ChannelOptions {
    /// The defaults of the flags.
    pub const DEFAULT: ChannelOptions = ChannelOptions {
        fresh: DEFAULT_FRESH,
        compact_at: Some(DEFAULT_COMPACT_AT),
        compact_at_given: false,
        wait_weekly: false,
    };

    /// The context use at which a run's idle agent is sent `/compact`, and where that
    /// number came from: `--compact-at` when given; else the task's own — its
    /// `.type-profile.md` `compaction_threshold`, else task-ai's 82% for a task-ai module
    /// (seed 002) — else the default 70% (seed 000). None: never.
    pub fn compaction_threshold(&self, task: &TaskCompaction) -> Option<Threshold> {
        let flag = |percent: u8| Threshold {
            percent,
            from: format!("--compact-at {percent}%"),
        };
        if self.compact_at_given {
            return self.compact_at.map(flag);
        }
        let at = self.compact_at?;
        Some(match (task.profile, task.task_ai) {
            (Some(percent), _) => Threshold {
                percent,
                from: format!("the task's compaction_threshold {percent}% (.type-profile.md)"),
            },
            (None, true) => Threshold {
                percent: TASK_AI_COMPACT_AT,
                from: format!(
                    "task-ai's compaction_threshold {TASK_AI_COMPACT_AT}% (no profile sets one)"
                ),
            },
            (None, false) => flag(at),
        })
    }
}

/// task-ai's fallback `compaction_threshold` (seed 002: "fallback 82%").
pub const TASK_AI_COMPACT_AT: u8 = 82;

/// What the task says about its own compaction threshold (seed 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskCompaction {
    /// `.type-profile.md`'s `compaction_threshold`, in whole percent (rounded up).
    pub profile: Option<u8>,
    /// A task-ai module (it has a `.status.json`): its fallback is 82%, and only its
    /// iteration's first compaction is a proactive one.
    pub task_ai: bool,
}

/// A compaction threshold in force, with where it came from (for the decision's reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Threshold {
    pub percent: u8,
    pub from: String,
}

impl Default for ChannelOptions {
    fn default() -> Self {
        ChannelOptions::DEFAULT
    }
}

/// What the store held for the run's agent.
#[derive(Debug, Clone, Default)]
pub struct ChannelObs {
    /// Which key found it: `pane`, `session` or `cwd`.
    pub by: Option<&'static str>,
    pub hook: Option<Record>,
    pub status: Option<StatusRecord>,
    /// Claude Code compacts by itself at this percentage: its environment holds an honoured
    /// `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (`run start --launch` sets it).
    pub agent_compacts_at: Option<f64>,
}

/// Where the agent's state came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Its hooks (`autoctl hook event`), fresh and newer than the screen.
    Hook,
    /// Its status line: a usage limit read from the exhausted window.
    Statusline,
    /// Codex's app-server (`autoctl run turn`): its items, approvals, limits and errors.
    AppServer,
    /// The agent's own transcript file: Codex's rollout, for a usage limit that ends a turn
    /// without a hook ([`crate::hook::rollout`]).
    Transcript,
    /// The screen: no typed state, a stale one, or one the screen contradicts.
    Screen,
}

impl Source {
    pub const ALL: [Source; 5] = [
        Source::Hook,
        Source::Statusline,
        Source::AppServer,
        Source::Transcript,
        Source::Screen,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Source::Hook => "hook",
            Source::Statusline => "statusline",
            Source::AppServer => "app-server",
            Source::Transcript => "transcript",
            Source::Screen => "screen",
        }
    }

    pub fn parse(text: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// A typed channel of the agent's own (anything but the screen).
    pub fn typed(self) -> bool {
        self != Source::Screen
    }
}

/// How many of a run's readings of its agent (one per tick that saw its pane) came from each
/// source: the typed channels' share of the decisions (`run status`, the metrics).
///
/// Start-up readings ([`Startup`]) are counted apart, in `startup`, and not in the share: they
/// were made while the agent this run launched had shown nothing of itself yet — no typed
/// event and the screen its launch left — so no channel of the agent's could have answered
/// (Gemini CLI 0.61 loads for seconds before it draws anything, and fires its first hook,
/// SessionStart, only after it drew its screen). Every reading after that counts, the screen
/// readings of a slow start among them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SourceCounts {
    pub hook: u64,
    pub statusline: u64,
    pub app_server: u64,
    pub transcript: u64,
    pub screen: u64,
    /// Screen readings before the launched agent showed itself (not a source; not in `total`).
    pub startup: u64,
}

impl SourceCounts {
    /// Count one reading.
    pub fn count(&mut self, source: Source) {
        let slot = match source {
            Source::Hook => &mut self.hook,
            Source::Statusline => &mut self.statusline,
            Source::AppServer => &mut self.app_server,
            Source::Transcript => &mut self.transcript,
            Source::Screen => &mut self.screen,
        };
        *slot = slot.saturating_add(1);
    }

    pub fn of(&self, source: Source) -> u64 {
        match source {
            Source::Hook => self.hook,
            Source::Statusline => self.statusline,
            Source::AppServer => self.app_server,
            Source::Transcript => self.transcript,
            Source::Screen => self.screen,
        }
    }

    pub fn total(&self) -> u64 {
        Source::ALL
            .iter()
            .fold(0u64, |sum, s| sum.saturating_add(self.of(*s)))
    }

    /// Readings from the agent's typed channels (hooks, status line, app-server).
    pub fn typed(&self) -> u64 {
        self.total().saturating_sub(self.screen)
    }

    /// The typed share in percent, rounded to a tenth; None before the first reading.
    pub fn typed_percent(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| (self.typed() as f64 * 1000.0 / total as f64).round() / 10.0)
    }

    pub fn is_empty(&self) -> bool {
        self.total() == 0 && self.startup == 0
    }
}

/// Where the agent a run launched is in its start-up, for [`SourceCounts::startup`]: before
/// the run's first reading, loading (the screen its launch left, by hash), or over.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Startup {
    /// No reading yet.
    #[default]
    Before,
    /// Nothing of the agent shown yet: no typed event, and the screen (its hash) as the run's
    /// first reading saw it.
    Loading(String),
    /// The agent showed itself (a typed event or a new screen), or the run launched nothing.
    Over,
}

impl Startup {
    /// One reading of the agent: whether it is a start-up reading. `first`: the run has no
    /// reading yet (a run whose row predates this state has some, and is past its start-up);
    /// `launched`: the run typed the agent's launch command; `screen`: the screen's hash.
    pub fn observe(&mut self, first: bool, launched: bool, source: Source, screen: &str) -> bool {
        let loading = match self {
            _ if !launched || source.typed() => false,
            Startup::Before => first,
            Startup::Loading(hash) => hash == screen,
            Startup::Over => false,
        };
        *self = if loading {
            Startup::Loading(screen.to_string())
        } else {
            Startup::Over
        };
        loading
    }

    pub fn is_over(&self) -> bool {
        *self == Startup::Over
    }
}

/// What a reading says the agent is doing: its hook (or app-server) state, or the screen's
/// class when the screen decides. Printed as one word: the hook state's (`failed:<error>`
/// for a failed turn) or the class's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadState {
    /// A typed channel's state; a failed turn carries the error it named.
    Hook {
        state: AgentState,
        error: Option<String>,
    },
    /// The screen's class.
    Screen(Class),
}

impl ReadState {
    /// The state a hook record says.
    pub fn of_hook(record: &Record) -> ReadState {
        ReadState::Hook {
            state: record.state,
            error: (record.state == AgentState::Failed)
                .then(|| record.error.clone())
                .flatten(),
        }
    }

    /// The agent is at work, by its hooks or its screen.
    pub fn working(&self) -> bool {
        matches!(
            self,
            ReadState::Hook {
                state: AgentState::Working,
                ..
            } | ReadState::Screen(Class::Working)
        )
    }

    /// Its hooks say it is idle at its own prompt.
    pub fn hook_idle(&self) -> bool {
        matches!(
            self,
            ReadState::Hook {
                state: AgentState::Idle,
                ..
            }
        )
    }
}

impl std::fmt::Display for ReadState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadState::Hook {
                state: AgentState::Failed,
                error: Some(error),
            } => write!(f, "failed:{error}"),
            ReadState::Hook { state, .. } => f.write_str(state.as_str()),
            ReadState::Screen(class) => f.write_str(class.as_str()),
        }
    }
}

impl Serialize for ReadState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The state a tick went by, for its JSON line and `run status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reading {
    pub source: Source,
    /// The state (a hook state, or the screen's class when the screen decides).
    pub state: ReadState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Age of the hook state, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_age_ms: Option<u64>,
    /// The hook state was not used: too old, or older than the last change of what the screen
    /// shows.
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
    /// A start-up reading: the launched agent had shown nothing of itself yet
    /// ([`SourceCounts::startup`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub startup: bool,
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

impl Use {
    /// Give the stall core what the typed state says: the hooks' messages in place of the
    /// screen's, and whether the screen's prompt is decided now (and never answered).
    pub fn apply_to(&self, sample: &mut Sample) {
        if let Some(messages) = &self.messages {
            sample.messages = Some(messages.clone());
        }
        sample.hint = match (self.act_now, self.no_answer) {
            (true, true) => Hint::NowNoAnswer,
            (true, false) => Hint::Now,
            (false, _) => Hint::Screen,
        };
    }
}

/// The cross-check every driver makes: the agent's typed state (if any) against the screen
/// it captured, with the stall state saying when that screen appeared.
pub fn cross_check(
    seen: Option<&ChannelObs>,
    view: &PaneView,
    stall: &StallState,
    now: Time,
    options: &ChannelOptions,
) -> (Reading, Use) {
    let changed_after = stall.screen_changed_after(view.classification.class);
    match seen {
        Some(seen) => read(seen, view, changed_after, now, options),
        None => (screen_reading(view, None), Use::default()),
    }
}

/// The screen's reading: its class, from the screen.
fn screen_reading(view: &PaneView, context_percent: Option<u32>) -> Reading {
    Reading {
        source: Source::Screen,
        state: ReadState::Screen(view.classification.class),
        tool: None,
        hook_age_ms: None,
        stale: false,
        disagreement: None,
        context_percent,
        limit: None,
        reset_at: None,
        startup: false,
    }
}

/// Read the typed state of one agent against its screen. `changed_after`: the screen on view
/// appeared after this time (None: no earlier screen is known). The status line's context
/// and exhausted window first; then the hook record, when it is fresh and describes the
/// screen on view, weighed against that screen (`weigh_against_screen`).
pub fn read(
    seen: &ChannelObs,
    view: &PaneView,
    changed_after: Option<Time>,
    now: Time,
    options: &ChannelOptions,
) -> (Reading, Use) {
    let screen = view.classification.class;
    let (mut reading, mut usage) = status_reading(seen, view, now);
    let Some(hook) = &seen.hook else {
        return (reading, usage);
    };
    let age = between(hook.at, now);
    reading.hook_age_ms = Some(u64::try_from(age.as_millis()).unwrap_or(u64::MAX));
    if age > options.fresh || !describes_screen(hook, screen, changed_after) {
        reading.stale = true;
        return (reading, usage);
    }
    let state = hook.state;
    let typed_source = match hook.channel {
        Some(Channel::AppServer) => Source::AppServer,
        Some(Channel::Transcript) => Source::Transcript,
        None => Source::Hook,
    };
    reading.source = typed_source;
    reading.state = ReadState::of_hook(hook);
    reading.tool = hook.tool.clone();
    weigh_against_screen(hook, screen, age, now, &mut reading, &mut usage);
    if state == AgentState::Working {
        usage.tool_since = hook.tool_started_at;
    }
    if state == AgentState::Failed {
        usage.failure = Some(failure(hook, usage.window.is_some()));
        // The windows of an app-server came with its messages; an agent's own status line is
        // a channel of its own.
        if usage.window.is_some() && typed_source == Source::Hook {
            reading.source = Source::Statusline;
        }
    }
    (reading, usage)
}

/// The screen's reading with what the status line adds: the context used, the exhausted
/// window and its reset; and the agent's messages from the hooks.
fn status_reading(seen: &ChannelObs, view: &PaneView, now: Time) -> (Reading, Use) {
    let mut reading = screen_reading(
        view,
        seen.status
            .as_ref()
            .and_then(StatusRecord::context_percent)
            .map(|p| p.clamp(0.0, 1000.0).round() as u32),
    );
    let usage = Use {
        messages: seen.hook.as_ref().and_then(hook_messages),
        window: exhausted_window(seen.status.as_ref(), now),
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
    (reading, usage)
}

/// Whether the hook record describes the screen on view (`changed_after`: that screen
/// appeared after this time). An event at or after the last sighting of the old screen may
/// have caused the change; an earlier one describes a screen that is gone, except the screen
/// an event announced (a permission event's box, a tool start's working line: drawn just
/// after it) and the box autoctl answered (gone a heartbeat or two after the answer).
fn describes_screen(hook: &Record, screen: Class, changed_after: Option<Time>) -> bool {
    let newer_than_screen = changed_after.is_none_or(|after| hook.at >= after);
    // The screen the event announced, drawn just after it: the event caused the change even
    // though a heartbeat between the two still saw the old screen. A permission event and its
    // box; a tool's start and the agent's working line (Codex 0.171 in a live loop at load 9:
    // a tick woken by PreToolUse still saw the idle composer, the next one 0.3 s later the
    // working line, and called the tool's start stale).
    let announced = match hook.state {
        AgentState::WaitingForPermission => matches!(screen, Class::Permission | Class::YesNo),
        AgentState::Working => screen == Class::Working,
        _ => false,
    } && changed_after.is_some_and(|after| between(hook.at, after) <= DRAW_LEAD);
    // The box autoctl answered, gone after the answer: the answer caused the change even when
    // the agent took a heartbeat or two to redraw (Gemini 0.61 at load 20: 1.5 s).
    let answered_box_gone = hook.event == PERMISSION_ANSWERED
        && !matches!(screen, Class::Permission | Class::YesNo)
        && changed_after.is_some_and(|after| {
            after >= hook.at && between(hook.at, after) <= PERMISSION_HOOK_GRACE
        });
    newer_than_screen || announced || answered_box_gone
}

/// The hooks' state against the screen's class, one row per case: act at once on a prompt
/// they agree on, let a person decide a prompt they do not, and name every disagreement
/// with the reading that wins.
fn weigh_against_screen(
    hook: &Record,
    screen: Class,
    age: Duration,
    now: Time,
    reading: &mut Reading,
    usage: &mut Use,
) {
    let state = hook.state;
    let prompt_on_screen = matches!(
        screen,
        Class::Permission | Class::YesNo | Class::Continue | Class::Picker | Class::Trust
    );
    match state {
        AgentState::WaitingForPermission if matches!(screen, Class::Permission | Class::YesNo) => {
            usage.act_now = true;
        }
        AgentState::WaitingForPermission if screen == Class::Working && age <= DRAW_LEAD => {
            reading.disagreement = Some(
                "hooks say waiting-for-permission, the screen still shows the agent working: the box is being drawn"
                    .to_string(),
            );
        }
        AgentState::WaitingForPermission if screen != Class::Unknown => {
            // Esc on a permission menu fires no hook: the screen knows better.
            reading.source = Source::Screen;
            reading.state = ReadState::Screen(screen);
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
            reading.source = Source::Screen;
            reading.state = ReadState::Screen(Class::Working);
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
        credit: banner.contains("credit balance"),
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
        // The hooks count every Stop: their run is the whole run.
        run_known: true,
        fingerprint: format!(
            "hook{}{}",
            record.stops,
            record.session_id.as_deref().unwrap_or("")
        )
        .replace('.', ""),
    })
}

/// The compaction budget the proactive trigger spends from: the run's one per-iteration
/// counter ([`CompactionCount`], `--max-compactions`), which also counts every compaction the
/// hooks report ([`count_compactions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub count: CompactionCount,
    /// The run's current iteration.
    pub iteration: u64,
    /// `--max-compactions` (0: no limit).
    pub max: u32,
}

/// What the proactive trigger decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compaction {
    /// Type `/compact` now; why.
    Type(String),
    /// It would type `/compact`, but one more compaction would reach the iteration's limit;
    /// why.
    Capped(String),
}

/// Whether to type `/compact` now: the status line's context use is at or past `threshold`,
/// the agent is idle at its own prompt by both channels, this crossing of the threshold has
/// not been compacted yet (`requested`: a `/compact` was typed since the use last went over
/// it), the iteration has had no compaction yet (seed 002: "only the first compaction is
/// active", and seed 000 checks the context once per iteration: a second crossing in one
/// iteration is left to the agent), and the iteration's budget allows one more compaction. The trigger never spends the
/// compaction that reaches `--max-compactions`: that one would stop the loop (seed 002), and
/// only a compaction the agent needed for itself may do so.
pub fn compaction(
    reading: &Reading,
    screen: Class,
    requested: bool,
    budget: Budget,
    threshold: Option<&Threshold>,
) -> Option<Compaction> {
    let threshold = threshold?;
    let at = threshold.percent;
    let used = reading.context_percent?;
    if used < u32::from(at) || requested {
        return None;
    }
    let idle = reading.source == Source::Hook
        && reading.state.hook_idle()
        && reading.disagreement.is_none()
        && screen == Class::Idle;
    if !idle {
        return None;
    }
    let why = format!("context {used}% >= {}", threshold.from);
    let count = budget.count.at(budget.iteration).count;
    if !budget.count.allows_another(budget.iteration, budget.max) {
        return Some(Compaction::Capped(format!(
            "{why}, but iteration {} has had {count} compaction(s) and one more would reach --max-compactions {}: no /compact typed",
            budget.iteration, budget.max
        )));
    }
    if count > 0 {
        return Some(Compaction::Capped(format!(
            "{why}, but iteration {} has had {count} compaction(s) already and only its first is a proactive one (seed 002): no /compact typed",
            budget.iteration
        )));
    }
    let limit = match budget.max {
        0 => "no limit".to_string(),
        max => format!("limit {max}"),
    };
    Some(Compaction::Type(format!(
        "{why}: /compact at the idle prompt (compaction {} of iteration {}, {limit})",
        count + 1,
        budget.iteration
    )))
}

/// Fold the compactions the hooks counted (the record's running total, `total`) into the
/// run's counter for `iteration`. `seen` is the total already counted. A record seen for
/// the first time, or a new one (its total went down: a new agent in the pane), counts what
/// it recorded since the run started (`since_start`, from its compaction times): compactions
/// before the run are not its, and those the hooks recorded before a tick first looked are,
/// whatever the ticks' timing. Returns the counter and the new `seen`.
pub fn count_compactions(
    count: CompactionCount,
    seen: Option<u64>,
    total: Option<u64>,
    since_start: u64,
    iteration: u64,
) -> (CompactionCount, Option<u64>) {
    let add = |count: CompactionCount, more: u64| {
        count.record(iteration, u32::try_from(more).unwrap_or(u32::MAX))
    };
    match (seen, total) {
        (Some(seen), Some(total)) if total >= seen => (add(count, total - seen), Some(total)),
        (_, Some(total)) => (add(count, since_start.min(total)), Some(total)),
        (seen, None) => (count, seen),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::session::{Key, apply, parse};
    use crate::pane::classify::Classification;

    fn at(secs: i64) -> Time {
        chrono::DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    fn ms(n: i64) -> chrono::TimeDelta {
        chrono::TimeDelta::milliseconds(n)
    }

    fn view(class: Class) -> PaneView {
        PaneView {
            pane_id: "%1".into(),
            pid: 0,
            waiting: Default::default(),
            text: String::new(),
            foreground: "claude".into(),
            foreground_is_shell: false,
            hash: "h".into(),
            key: "h".into(),
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
                key: None,
                said: None,
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

    fn hook(events: &[&str], when: i64) -> ChannelObs {
        let key = Key::Session("s".into());
        let mut record = None;
        for e in events {
            record = Some(apply(record, &key, &parse(e.as_bytes()).unwrap(), at(when)).record);
        }
        ChannelObs {
            by: Some("pane"),
            hook: record,
            status: None,
            agent_compacts_at: None,
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
            Some(at(-30)),
            at(5),
            &ChannelOptions::default(),
        );
        assert_eq!(
            (r.source, r.state.to_string().as_str()),
            (Source::Hook, "waiting-for-permission")
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
            None,
            at(3600),
            &ChannelOptions::default(),
        );
        assert_eq!((r.source, r.stale), (Source::Screen, true));
        assert!(!u.act_now);
        // Older than a screen change since the previous heartbeat: stale too.
        let (r, _) = read(
            &old,
            &view(Class::Permission),
            Some(at(10)),
            at(20),
            &ChannelOptions::default(),
        );
        assert!(r.stale);
    }

    #[test]
    fn idle_hooks_and_a_menu_on_screen_escalate_at_once() {
        let (r, u) = read(
            &hook(&[STOP], 0),
            &view(Class::Permission),
            None,
            at(5),
            &ChannelOptions::default(),
        );
        assert!(u.act_now && u.no_answer);
        assert!(r.disagreement.unwrap().contains("a person decides"));
    }

    #[test]
    fn a_box_right_after_a_tool_starts_is_the_permission_hook_deciding() {
        const PRE: &str = r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
        const PROMPT: &str =
            r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"go"}"#;
        let options = ChannelOptions::default();
        // Within the grace of PreToolUse: the hook decides, the screen's own threshold waits.
        let (r, u) = read(
            &hook(&[PRE], 0),
            &view(Class::Permission),
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
            None,
            at(11),
            &options,
        );
        assert!(u.act_now && u.no_answer);
        // Working without a tool (a prompt was submitted): no grace at all.
        let (_, u) = read(
            &hook(&[PROMPT], 0),
            &view(Class::Permission),
            None,
            at(1),
            &options,
        );
        assert!(u.act_now && u.no_answer);
    }

    #[test]
    fn a_box_drawn_just_after_its_permission_event_is_the_hooks() {
        // Gemini 0.61: Notification at 0, a heartbeat at 0.6 s still sees it working, the box
        // is drawn by the next one.
        let options = ChannelOptions::default();
        let announced = hook(&[PERMISSION], 0);
        let (r, u) = read(
            &announced,
            &view(Class::Working),
            None,
            at(0) + ms(600),
            &options,
        );
        assert_eq!(
            (r.source, r.state.to_string().as_str()),
            (Source::Hook, "waiting-for-permission")
        );
        assert!(r.disagreement.unwrap().contains("being drawn"));
        assert!(!u.act_now && !u.no_answer);
        let (r, u) = read(
            &announced,
            &view(Class::Permission),
            Some(at(0) + ms(600)),
            at(2),
            &options,
        );
        assert_eq!(
            (r.source, r.state.to_string().as_str(), r.stale),
            (Source::Hook, "waiting-for-permission", false)
        );
        assert!(u.act_now && !u.no_answer);
        // Working long after the event: the box was dismissed, the screen's.
        let (r, _) = read(&announced, &view(Class::Working), None, at(4), &options);
        assert_eq!(r.source, Source::Screen);
        // An event well before the change describes another screen: stale.
        let (r, u) = read(
            &announced,
            &view(Class::Permission),
            Some(at(4)),
            at(6),
            &options,
        );
        assert_eq!((r.source, r.stale), (Source::Screen, true));
        assert!(!u.act_now);
        // Only a permission announces a box.
        let (r, _) = read(
            &hook(&[STOP], 0),
            &view(Class::Permission),
            Some(at(0) + ms(600)),
            at(2),
            &options,
        );
        assert!(r.stale);
    }

    #[test]
    fn a_working_line_drawn_just_after_its_tool_started_is_the_hooks() {
        // Codex 0.171, live: PreToolUse at 0; a tick woken by it 0.106 s later still saw the
        // idle composer (working wins); the next, 0.321 s after the event, saw the working
        // line, which appeared after that tick.
        const PRE: &str = r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
        let options = ChannelOptions::default();
        let started = hook(&[PRE], 0);
        let (r, _) = read(
            &started,
            &view(Class::Idle),
            Some(at(-5)),
            at(0) + ms(106),
            &options,
        );
        assert_eq!(
            (r.source, r.state.to_string().as_str()),
            (Source::Hook, "working")
        );
        let (r, _) = read(
            &started,
            &view(Class::Working),
            Some(at(0) + ms(106)),
            at(0) + ms(321),
            &options,
        );
        assert_eq!(
            (r.source, r.state.to_string().as_str(), r.stale),
            (Source::Hook, "working", false)
        );
        // A working line that appeared well after the event is another turn's: stale.
        let (r, _) = read(
            &started,
            &view(Class::Working),
            Some(at(4)),
            at(5),
            &options,
        );
        assert_eq!((r.source, r.stale), (Source::Screen, true));
        // A tool's start announces no idle screen.
        let (r, _) = read(
            &started,
            &view(Class::Idle),
            Some(at(0) + ms(106)),
            at(0) + ms(321),
            &options,
        );
        assert_eq!((r.source, r.stale), (Source::Screen, true));
    }

    #[test]
    fn the_box_autoctl_answered_going_away_is_the_answers_doing() {
        let options = ChannelOptions::default();
        let mut answered = hook(&[PERMISSION], 0);
        let record = answered.hook.as_mut().unwrap();
        record.state = AgentState::Working;
        record.event = PERMISSION_ANSWERED.to_string();
        record.tool = Some("run_shell_command".into());
        record.at = at(10);
        record.tool_started_at = Some(at(10));
        // The box was still seen 1.5 s after the answer, then the tool ran.
        let (r, u) = read(
            &answered,
            &view(Class::Working),
            Some(at(11) + ms(500)),
            at(12),
            &options,
        );
        assert_eq!(
            (r.source, r.state.to_string().as_str(), r.stale),
            (Source::Hook, "working", false)
        );
        assert_eq!(r.tool.as_deref(), Some("run_shell_command"));
        assert!(!u.act_now);
        // A change long after the answer is another screen's: the screen decides.
        let (r, _) = read(
            &answered,
            &view(Class::Idle),
            Some(at(40)),
            at(42),
            &options,
        );
        assert_eq!((r.source, r.stale), (Source::Screen, true));
        // Any other working record is not granted the grace (past the lead within which a
        // tool's start announces its working line).
        let mut other = answered.clone();
        other.hook.as_mut().unwrap().event = "PreToolUse".into();
        let (r, _) = read(
            &other,
            &view(Class::Working),
            Some(at(14)),
            at(15),
            &options,
        );
        assert_eq!((r.source, r.stale), (Source::Screen, true));
    }

    #[test]
    fn a_dismissed_permission_is_the_screens() {
        let (r, u) = read(
            &hook(&[PERMISSION], 0),
            &view(Class::Idle),
            None,
            at(5),
            &ChannelOptions::default(),
        );
        assert_eq!(
            (r.source, r.state.to_string().as_str()),
            (Source::Screen, "idle")
        );
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
            None,
            at(5),
            &ChannelOptions::default(),
        );
        assert_eq!(r.source, Source::Statusline);
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
            None,
            at(5),
            &ChannelOptions::default(),
        );
        assert!(u.window.unwrap().weekly);
        // A window whose reset has passed says nothing.
        let (_, u) = read(
            &typed,
            &view(Class::Quota),
            None,
            at(90_000),
            &ChannelOptions {
                fresh: Duration::from_secs(100_000),
                ..ChannelOptions::default()
            },
        );
        assert_eq!(u.window, None);
        // No window at 100% (an API-key login): the banner tells a usage limit.
        typed.status = None;
        let (r, u) = read(
            &typed,
            &view(Class::Quota),
            None,
            at(5),
            &ChannelOptions::default(),
        );
        assert_eq!(r.source, Source::Hook);
        assert!(u.failure.unwrap().usage_limit);
        // A rate_limit without either is a transient limit.
        const TRANSIENT: &str = r#"{"hook_event_name":"StopFailure","session_id":"s","error":"rate_limit","last_assistant_message":"API Error: Request rejected (429)"}"#;
        let (_, u) = read(
            &hook(&[TRANSIENT], 0),
            &view(Class::RateLimit),
            None,
            at(5),
            &ChannelOptions::default(),
        );
        let failure = u.failure.unwrap();
        assert_eq!(
            (failure.kind.as_str(), failure.usage_limit),
            ("rate_limit", false)
        );
    }

    #[test]
    fn app_server_records_read_as_their_own_source_and_every_reading_is_counted() {
        let mut typed = hook(&[STOP], 0);
        typed.hook.as_mut().unwrap().channel = Some(Channel::AppServer);
        let (r, _) = read(
            &typed,
            &view(Class::Idle),
            None,
            at(5),
            &ChannelOptions::default(),
        );
        assert_eq!(r.source, Source::AppServer);
        let mut counts = SourceCounts::default();
        assert_eq!(counts.typed_percent(), None);
        for source in [
            Source::Screen,
            Source::Hook,
            Source::AppServer,
            Source::Hook,
        ] {
            counts.count(source);
        }
        assert_eq!((counts.total(), counts.typed()), (4, 3));
        assert_eq!(counts.typed_percent(), Some(75.0));
        counts.count(Source::Statusline);
        assert_eq!(counts.typed_percent(), Some(80.0));
        assert_eq!(Source::parse("app-server"), Some(Source::AppServer));
        assert_eq!(
            serde_json::to_string(&Source::AppServer).unwrap(),
            "\"app-server\""
        );
    }

    /// The threshold of a task that says nothing about its own.
    fn plain(options: &ChannelOptions) -> Option<Threshold> {
        options.compaction_threshold(&TaskCompaction::default())
    }

    #[test]
    fn the_flag_then_the_tasks_profile_then_task_ai_then_70_decide_the_threshold() {
        let default = ChannelOptions::default();
        let profile = TaskCompaction {
            profile: Some(75),
            task_ai: true,
        };
        let task_ai = TaskCompaction {
            profile: None,
            task_ai: true,
        };
        let percent =
            |o: &ChannelOptions, t: &TaskCompaction| o.compaction_threshold(t).map(|t| t.percent);
        assert_eq!(percent(&default, &TaskCompaction::default()), Some(70));
        assert_eq!(percent(&default, &task_ai), Some(TASK_AI_COMPACT_AT));
        assert_eq!(percent(&default, &profile), Some(75));
        let flag = ChannelOptions {
            compact_at: Some(60),
            compact_at_given: true,
            ..default
        };
        assert_eq!(percent(&flag, &profile), Some(60));
        let never = ChannelOptions {
            compact_at: None,
            compact_at_given: true,
            ..default
        };
        assert_eq!(percent(&never, &profile), None);
    }

    fn budget(count: u32) -> Budget {
        Budget {
            count: CompactionCount {
                iteration: 4,
                count,
            },
            iteration: 4,
            max: 3,
        }
    }

    #[test]
    fn compaction_once_per_crossing_when_idle_by_both() {
        let mut typed = hook(&[STOP], 0);
        typed.status = Some(status(r#"{"context_window":{"used_percentage":72.4}}"#));
        let options = ChannelOptions::default();
        let (r, _) = read(&typed, &view(Class::Idle), None, at(5), &options);
        assert_eq!(r.context_percent, Some(72));
        assert!(matches!(
            compaction(&r, Class::Idle, false, budget(0), plain(&options).as_ref()),
            Some(Compaction::Type(why)) if why.contains("compaction 1 of iteration 4, limit 3")
        ));
        assert!(
            compaction(&r, Class::Idle, true, budget(0), plain(&options).as_ref()).is_none(),
            "once per crossing"
        );
        assert!(
            compaction(
                &r,
                Class::Working,
                false,
                budget(0),
                plain(&options).as_ref()
            )
            .is_none()
        );
        let never = ChannelOptions {
            compact_at: None,
            ..options
        };
        assert!(compaction(&r, Class::Idle, false, budget(0), plain(&never).as_ref()).is_none());
        typed.status = Some(status(r#"{"context_window":{"used_percentage":69.4}}"#));
        let (r, _) = read(&typed, &view(Class::Idle), None, at(5), &options);
        assert!(compaction(&r, Class::Idle, false, budget(0), plain(&options).as_ref()).is_none());
    }

    #[test]
    fn the_iterations_compaction_budget_caps_the_trigger() {
        let mut typed = hook(&[STOP], 0);
        typed.status = Some(status(r#"{"context_window":{"used_percentage":90}}"#));
        let options = ChannelOptions::default();
        let (r, _) = read(&typed, &view(Class::Idle), None, at(5), &options);
        // One already in this iteration: only its first compaction is a proactive one.
        assert!(matches!(
            compaction(&r, Class::Idle, false, budget(1), plain(&options).as_ref()),
            Some(Compaction::Capped(why)) if why.contains("only its first")
        ));
        // Two already: a third would reach the limit and stop the loop.
        assert!(matches!(
            compaction(&r, Class::Idle, false, budget(2), plain(&options).as_ref()),
            Some(Compaction::Capped(why)) if why.contains("--max-compactions 3")
        ));
        // The count of an earlier iteration does not hold against this one.
        let earlier = Budget {
            count: CompactionCount {
                iteration: 3,
                count: 2,
            },
            ..budget(0)
        };
        assert!(matches!(
            compaction(&r, Class::Idle, false, earlier, plain(&options).as_ref()),
            Some(Compaction::Type(_))
        ));
        let unlimited = Budget {
            max: 0,
            ..budget(0)
        };
        assert!(matches!(
            compaction(&r, Class::Idle, false, unlimited, plain(&options).as_ref()),
            Some(Compaction::Type(why)) if why.contains("no limit")
        ));
    }

    #[test]
    fn compactions_the_hooks_report_are_counted_once() {
        let zero = CompactionCount::default();
        // First sighting: of the 5 recorded, the 2 made since the run started are its.
        let (c, seen) = count_compactions(zero, None, Some(5), 2, 2);
        assert_eq!((c.at(2).count, seen), (2, Some(5)));
        let (c, seen) = count_compactions(c, seen, Some(7), 4, 2);
        assert_eq!((c.at(2).count, seen), (4, Some(7)));
        let (c, seen) = count_compactions(c, seen, Some(7), 4, 2);
        assert_eq!((c.at(2).count, seen), (4, Some(7)), "no new ones");
        let (c, seen) = count_compactions(c, seen, None, 0, 2);
        assert_eq!((c.at(2).count, seen), (4, Some(7)), "no record this tick");
        // A new agent in the pane starts its total over: what it recorded counts.
        let (c, seen) = count_compactions(c, seen, Some(1), 1, 3);
        assert_eq!((c.at(3).count, seen), (1, Some(1)));
        let (c, _) = count_compactions(c, seen, Some(2), 2, 3);
        assert_eq!(c.at(3).count, 2);
    }

    proptest::proptest! {
        /// Whatever the ticks' timing — however many compactions the hooks record before a
        /// tick first looks, between two ticks, or while no record is found — every
        /// compaction since the run started is counted once, and none from before it.
        #[test]
        fn every_compaction_since_the_start_counts_once_whatever_the_timing(
            before in 0u64..5,
            events in proptest::collection::vec(0u8..3, 0..40),
        ) {
            let mut count = CompactionCount::default();
            let mut seen = None;
            let mut since = 0u64;
            let mut last = 0u32;
            for event in events.iter().copied().chain([1]) {
                match event {
                    // The hooks record a compaction.
                    0 => since += 1,
                    // A tick looks at the record.
                    1 => (count, seen) = count_compactions(count, seen, Some(before + since), since, 1),
                    // A tick that found no record.
                    _ => (count, seen) = count_compactions(count, seen, None, 0, 1),
                }
                proptest::prop_assert!(count.at(1).count >= last);
                last = count.at(1).count;
            }
            proptest::prop_assert_eq!(u64::from(count.at(1).count), since);
        }
    }

    #[test]
    fn start_up_readings_end_at_the_agents_first_sign() {
        // Launched: the screen the launch left, unchanged and no typed event, is start-up.
        let mut s = Startup::default();
        assert!(s.observe(true, true, Source::Screen, "launch"));
        assert!(s.observe(false, true, Source::Screen, "launch"));
        // The agent drew its screen: over, and the screen readings after count again even
        // when the screen goes back to what the launch left.
        assert!(!s.observe(false, true, Source::Screen, "drawn"));
        assert!(!s.observe(false, true, Source::Screen, "launch"));
        assert!(s.is_over());
        // A hook event ends it too.
        let mut s = Startup::default();
        assert!(s.observe(true, true, Source::Screen, "launch"));
        assert!(!s.observe(false, true, Source::Hook, "launch"));
        assert!(!s.observe(false, true, Source::Screen, "launch"));
        // A run that launched nothing has no start-up: every reading counts.
        let mut s = Startup::default();
        assert!(!s.observe(true, false, Source::Screen, "x"));
        assert!(!s.observe(false, false, Source::Screen, "x"));
        // A run with readings from before this state (its row has none) is past its start-up.
        let mut s = Startup::default();
        assert!(!s.observe(false, true, Source::Screen, "x"));
        assert!(s.is_over());
        // The share leaves the start-up readings out, and reports them.
        let mut counts = SourceCounts {
            startup: 6,
            ..SourceCounts::default()
        };
        assert!(!counts.is_empty());
        assert_eq!(counts.typed_percent(), None);
        counts.count(Source::Hook);
        counts.count(Source::Screen);
        assert_eq!((counts.total(), counts.typed_percent()), (2, Some(50.0)));
    }
}
