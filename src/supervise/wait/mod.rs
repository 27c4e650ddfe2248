//! Every wait ends: the wait table ([`TABLE`]) as data, and one pure decision per tick,
//! [`decide`]`(state, observation, now, limits) -> (state', verdict)`, that says which wait
//! the run is in, whether the timeout clock pauses for it, and what happens when it ends —
//! resume the agent once, or escalate to a person.
//!
//! The kinds of waits, each with an end condition, a maximum and an outcome:
//!
//! | kind | ends when | maximum | outcome at the maximum | timeout clock |
//! | --- | --- | --- | --- | --- |
//! | agent retrying (its own countdown) | the screen moves on | `--max-retry-wait` | escalate | paused |
//! | usage limit, reset known | reset + `--resume-margin` | reset + margin + `--resume-check` | resume once per reset, then escalate | paused |
//! | usage limit, no reset | a reset time shows, or the screen moves on | `--max-quota-wait` | escalate | paused |
//! | gave up on an API error | its backoff (1, 2, 4 … 30 min) | `--max-resumes` per step | resume, then escalate | paused |
//! | StopFailure record | its backoff, as a give-up | `--max-resumes` per step | resume, then escalate | paused |
//! | stream stopped moving | never by itself | `--stream-timeout` | Esc, then resume (a stall recovery), then escalate | runs |
//! | running tool | PostToolUse, or the screen moves on | `--tool-timeout` | escalate | runs |
//! | unknown screen | the screen changes | `--unknown-after` | escalate once, with its last lines | runs |
//!
//! Weekly limits (unless `--wait-weekly`), billing and paid options are not waits: they
//! escalate at once and nothing is typed; so are StopFailure errors that cannot clear by
//! themselves (a login, an account, a bill, an invalid request: [`HookFailure::needs_person`]),
//! and a give-up whose screen a person must answer (the record and the screen must agree
//! before a resume is planned).
//!
//! Resumes are exactly once: the decision says what to type ([`Act::Resume`]) and the state
//! change it makes ([`resumed`]); the driver records that change in the registry under the
//! run's claim *before* it types, so a driver killed mid-way never types the same resume
//! again (a lost resume ends in an escalation instead, at the wait's maximum).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::pane::waiting::{AutoContinue, Input, Waiting};
use crate::pane::{Action, Class};
use crate::time::{Time, between, format_time, plus};

/// The first backoff before resuming an agent that gave up, doubled each time.
pub const BACKOFF_BASE: Duration = Duration::from_secs(60);
/// The longest backoff.
pub const BACKOFF_CAP: Duration = Duration::from_secs(30 * 60);
/// After an Esc (a wedged stream), how long the idle prompt may take to come back before a
/// person is asked.
pub const ESC_SETTLE: Duration = Duration::from_secs(2 * 60);
/// While Claude Code's own automatic continue is armed (`Continuing automatically at …`),
/// how long after the reset autoctl leaves it to fire before resuming itself: it fired at the
/// reset +64 s, +84 s and +94 s in detached tmux panes with 2.1.332 (issue 29), so a resume at
/// the reset + `--resume-margin` (1m) could come first and make two.
pub const AUTO_CONTINUE_GRACE: Duration = Duration::from_secs(4 * 60);
/// Two reset times closer than this are the same reset (the banner says 12:50pm, the status
/// line 12:50:37).
pub const SAME_RESET: Duration = Duration::from_secs(10 * 60);
/// A banner's time of day read within this long after it passed names the reset that just
/// happened, not tomorrow's: Claude Code's "resets 11pm" is still on the screen for the minute
/// or so until its automatic continue fires (live, 2026-11-28: read a minute after 11pm, it
/// was taken as tomorrow's, beyond --max-quota-wait, and escalated; Claude Code continued by
/// itself 72 s later). No 5-hour window resets a day ahead, and a banner without a date names
/// a reset within the day.
pub const JUST_PASSED: Duration = Duration::from_secs(60 * 60);

/// Defaults of the flags.
pub const DEFAULT_RESUME_TEXT: &str = "continue";
pub const DEFAULT_MAX_RESUMES: u32 = 5;
pub const DEFAULT_RESUME_MARGIN: &str = "1m";
pub const DEFAULT_RESUME_CHECK: &str = "5m";
pub const DEFAULT_MAX_RETRY_WAIT: &str = "15m";
pub const DEFAULT_MAX_QUOTA_WAIT: &str = "6h";
pub const DEFAULT_STREAM_TIMEOUT: &str = "10m";
pub const DEFAULT_TOOL_TIMEOUT: &str = "30m";
/// Three heartbeats of the default 60 s (DESIGN: every threshold is a duration).
pub const DEFAULT_UNKNOWN_AFTER: &str = "3m";

/// A kind of wait (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitKind {
    AgentRetrying,
    UsageLimit,
    UsageLimitUnknown,
    GaveUp,
    StopFailure,
    StreamStalled,
    ToolRunning,
    UnknownScreen,
    QuotaPaced,
}

impl WaitKind {
    pub const ALL: [WaitKind; 9] = [
        WaitKind::AgentRetrying,
        WaitKind::UsageLimit,
        WaitKind::UsageLimitUnknown,
        WaitKind::GaveUp,
        WaitKind::StopFailure,
        WaitKind::StreamStalled,
        WaitKind::ToolRunning,
        WaitKind::UnknownScreen,
        WaitKind::QuotaPaced,
    ];

    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// Its row of the table.
    pub fn row(self) -> &'static Row {
        TABLE
            .iter()
            .find(|row| row.kind == self)
            .expect("every kind has a row")
    }

    /// A legitimate wait pauses the timeout clock (until its maximum); a stall does not.
    pub fn pauses_clock(self) -> bool {
        self.row().pauses_clock
    }

    /// A usage-limit wait, or one the governor holds (its start and end are announced:
    /// `quota-wait-start|end`; the governor releases them in priority order).
    pub fn is_quota(self) -> bool {
        matches!(
            self,
            WaitKind::UsageLimit | WaitKind::UsageLimitUnknown | WaitKind::QuotaPaced
        )
    }
}

/// One row of the wait table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub kind: WaitKind,
    pub name: &'static str,
    pub what: &'static str,
    pub ends: &'static str,
    pub maximum: &'static str,
    pub outcome: &'static str,
    pub pauses_clock: bool,
}

/// The wait table: what docs/waits.md shows (a test checks that it does).
pub const TABLE: &[Row] = &[
    Row {
        kind: WaitKind::AgentRetrying,
        name: "agent-retrying",
        what: "the agent retries a failed request by itself (`Retrying in 4s · attempt 1/10`)",
        ends: "the screen moves on",
        maximum: "`--max-retry-wait` (15m)",
        outcome: "escalate",
        pauses_clock: true,
    },
    Row {
        kind: WaitKind::UsageLimit,
        name: "usage-limit",
        what: "a usage limit with a reset time (status line to the second, else the banner)",
        ends: "reset + `--resume-margin` (1m; 4m while Claude Code's own automatic continue is armed): the resume text is typed once per reset if the agent still sits idle on the limit",
        maximum: "reset + margin + `--resume-check` (5m); a reset beyond `--max-quota-wait` (6h) escalates at once",
        outcome: "resume once, then escalate",
        pauses_clock: true,
    },
    Row {
        kind: WaitKind::UsageLimitUnknown,
        name: "usage-limit-unknown",
        what: "a usage limit without a reset time",
        ends: "a reset time shows, or the screen moves on",
        maximum: "`--max-quota-wait` (6h)",
        outcome: "escalate",
        pauses_clock: true,
    },
    Row {
        kind: WaitKind::GaveUp,
        name: "gave-up",
        what: "the agent gave up on an API error (529, 500, 429: `Resend your message`, `Request rejected`)",
        ends: "its backoff (1, 2, 4 … 30 min): the resume text is typed",
        maximum: "`--max-resumes` (5) per step",
        outcome: "resume, then escalate",
        pauses_clock: true,
    },
    Row {
        kind: WaitKind::StopFailure,
        name: "stop-failure",
        what: "a StopFailure hook record that is not a usage limit, the agent idle",
        ends: "a later hook event, or its backoff as for a give-up",
        maximum: "`--max-resumes` (5) per step",
        outcome: "resume, then escalate",
        pauses_clock: true,
    },
    Row {
        kind: WaitKind::StreamStalled,
        name: "stream-stalled",
        what: "a working screen unchanged (spinner and timers masked) with no tool running",
        ends: "the screen moves on",
        maximum: "`--stream-timeout` (10m)",
        outcome: "one Esc, the resume text at the idle prompt (a stall recovery), then escalate",
        pauses_clock: false,
    },
    Row {
        kind: WaitKind::ToolRunning,
        name: "tool-running",
        what: "a running tool (PreToolUse without PostToolUse, `Running…` on screen, or a child of the agent using CPU)",
        ends: "PostToolUse, or the screen moves on",
        maximum: "`--tool-timeout` (30m)",
        outcome: "escalate",
        pauses_clock: false,
    },
    Row {
        kind: WaitKind::UnknownScreen,
        name: "unknown-screen",
        what: "a screen autoctl cannot read (class `unknown`: a dialog it does not know, a REPL in front), unchanged",
        ends: "the screen changes",
        maximum: "`--unknown-after` (3m)",
        outcome: "escalate once, with the screen's last non-blank lines; nothing is typed",
        pauses_clock: false,
    },
    Row {
        kind: WaitKind::QuotaPaced,
        name: "quota-paced",
        what: "the quota governor holds a step or a resume: the account's 5-hour window is at `--pace-stop` (95%) or the step would cross it, the weekly reserve is for priority runs, or releases after a reset go one burst a minute (`--resume-burst`)",
        ends: "the window's reset, then the run's turn in priority order",
        maximum: "as a usage limit's: reset + margin + `--resume-check`, plus a minute for each burst of runs released before it",
        outcome: "escalate",
        pauses_clock: true,
    },
];

/// The table as Markdown (the "Every wait ends" section of docs/waits.md).
pub fn table_markdown() -> String {
    let mut out = String::from(
        "| wait | what it is | ends when | maximum | outcome | timeout clock |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for row in TABLE {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            row.name,
            row.what,
            row.ends,
            row.maximum,
            row.outcome,
            if row.pauses_clock { "paused" } else { "runs" }
        ));
    }
    out
}

/// The run's wait settings (`run start` flags), kept in its registry row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WaitLimits {
    /// What autoctl types to resume the agent (then Enter).
    pub resume_text: String,
    /// Resumes after a give-up, per step.
    pub max_resumes: u32,
    #[serde(with = "secs")]
    pub resume_margin: Duration,
    #[serde(with = "secs")]
    pub resume_check: Duration,
    #[serde(with = "secs")]
    pub max_retry_wait: Duration,
    #[serde(with = "secs")]
    pub max_quota_wait: Duration,
    #[serde(with = "secs")]
    pub stream_timeout: Duration,
    #[serde(with = "secs")]
    pub tool_timeout: Duration,
    /// An unknown screen unchanged this long is escalated.
    #[serde(with = "secs")]
    pub unknown_after: Duration,
}

impl Default for WaitLimits {
    fn default() -> Self {
        let d = |text: &str| crate::duration::parse(text).expect("valid default");
        WaitLimits {
            resume_text: DEFAULT_RESUME_TEXT.to_string(),
            max_resumes: DEFAULT_MAX_RESUMES,
            resume_margin: d(DEFAULT_RESUME_MARGIN),
            resume_check: d(DEFAULT_RESUME_CHECK),
            max_retry_wait: d(DEFAULT_MAX_RETRY_WAIT),
            max_quota_wait: d(DEFAULT_MAX_QUOTA_WAIT),
            stream_timeout: d(DEFAULT_STREAM_TIMEOUT),
            tool_timeout: d(DEFAULT_TOOL_TIMEOUT),
            unknown_after: d(DEFAULT_UNKNOWN_AFTER),
        }
    }
}

mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_secs())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_secs)
    }
}

/// The wait a run is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenWait {
    pub kind: WaitKind,
    #[serde(with = "crate::time::stamp")]
    pub since: Time,
    /// When it ends by itself (a resume is due), if it does.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub until: Option<Time>,
    /// Its maximum: past it, the wait escalates and the timeout clock runs again.
    #[serde(with = "crate::time::stamp")]
    pub max_at: Time,
    /// A usage limit's reset and its phrase as the screen wrote it (kept while the phrase
    /// stays: read again after the reset, "resets 12:50pm" would mean tomorrow).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub reset: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_text: Option<String>,
    pub reason: String,
}

/// An unchanged working screen, for the wedged-stream check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    pub hash: String,
    #[serde(with = "crate::time::stamp")]
    pub since: Time,
}

/// Why a person is needed: the kind an escalation names, stored and printed as one word
/// (`gave-up`, `weekly-limit`, `billing`, ...) for metrics and scripts. Code decides on the
/// variant; the word is only written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EscalationKind {
    /// Billing or a paid option on screen, a StopFailure `billing_error` or a credit balance
    /// too low, an HTTP 402.
    Billing,
    /// A login or an account the API refuses.
    Auth,
    /// A request the API refuses as made (a model not found, ...).
    InvalidRequest,
    /// The weekly usage limit, without `--wait-weekly`.
    WeeklyLimit,
    /// A usage-limit screen a person must decide (billing or credits).
    QuotaEscalate,
    /// A screen no rule knows stayed unchanged past its maximum.
    UnknownScreen,
    /// A paced run waited past its maximum.
    QuotaPaced,
    /// A usage-limit wait reached its maximum.
    QuotaWaitMax,
    /// The resumes after a usage limit are spent.
    QuotaResume,
    /// The agent's own retries outlasted their maximum.
    RetryWaitMax,
    /// The agent (or a step) gave up, again after its resumes.
    GaveUp,
    /// A wedged stream an Esc did not clear.
    StreamStalled,
    /// A tool ran past `--tool-timeout`.
    ToolTimeout,
    /// A prompt the answer rules leave to a person.
    Screen,
    /// A prompt past the answer budget.
    AnswerLimit,
    /// A dispatch left a half-typed line.
    HalfTyped,
    /// A shell is in front and the run has no launch command.
    NoLaunch,
    /// A word none of the above is (a row written by another release): kept as it was.
    Other(String),
}

impl EscalationKind {
    const WORDS: [(EscalationKind, &'static str); 17] = [
        (EscalationKind::Billing, "billing"),
        (EscalationKind::Auth, "auth"),
        (EscalationKind::InvalidRequest, "invalid-request"),
        (EscalationKind::WeeklyLimit, "weekly-limit"),
        (EscalationKind::QuotaEscalate, "quota-escalate"),
        (EscalationKind::UnknownScreen, "unknown-screen"),
        (EscalationKind::QuotaPaced, "quota-paced"),
        (EscalationKind::QuotaWaitMax, "quota-wait-max"),
        (EscalationKind::QuotaResume, "quota-resume"),
        (EscalationKind::RetryWaitMax, "retry-wait-max"),
        (EscalationKind::GaveUp, "gave-up"),
        (EscalationKind::StreamStalled, "stream-stalled"),
        (EscalationKind::ToolTimeout, "tool-timeout"),
        (EscalationKind::Screen, "screen"),
        (EscalationKind::AnswerLimit, "answer-limit"),
        (EscalationKind::HalfTyped, "half-typed"),
        (EscalationKind::NoLaunch, "no-launch"),
    ];

    pub fn as_str(&self) -> &str {
        match self {
            EscalationKind::Other(word) => word,
            known => {
                EscalationKind::WORDS
                    .iter()
                    .find(|(kind, _)| kind == known)
                    .expect("every kind but Other has its word")
                    .1
            }
        }
    }

    /// The kind a word names (a stored row's).
    pub fn parse(word: &str) -> EscalationKind {
        EscalationKind::WORDS
            .iter()
            .find(|(_, w)| *w == word)
            .map_or_else(
                || EscalationKind::Other(word.to_string()),
                |(kind, _)| kind.clone(),
            )
    }
}

impl std::fmt::Display for EscalationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EscalationKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EscalationKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(EscalationKind::parse(&word))
    }
}

/// A person is needed (the run's `needs-person` state).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeedsPerson {
    /// Why (stored as its word: `gave-up`, `weekly-limit`, `screen`, ...).
    pub kind: EscalationKind,
    pub why: String,
    #[serde(with = "crate::time::stamp")]
    pub since: Time,
    /// The screen it was raised on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// What the person is asked to decide ([`crate::pane::view::PaneView::key`]: the prompt's
    /// question and call, else the screen hash): a screen with another key clears it, and a
    /// redrawn or blinking prompt keeps it. Notifications about it carry it, so a receiver
    /// (the outbox) can tell one event from another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// When it was last announced (a notification), and how many times.
    #[serde(with = "crate::time::stamp")]
    pub announced_at: Time,
    pub announcements: u32,
}

impl NeedsPerson {
    /// What it was raised about: its key, or (raised by an older release) its screen hash.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref().or(self.hash.as_deref())
    }
}

/// How a driver runs the waits (`run tick`/`run watch` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    /// A run that still needs a person is announced again at most this often.
    pub renotify: Duration,
}

/// `--renotify`'s default.
pub const DEFAULT_RENOTIFY: &str = "1h";

impl WaitOptions {
    pub const DEFAULT: WaitOptions = WaitOptions {
        renotify: Duration::from_secs(3600),
    };
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions::DEFAULT
    }
}

/// What the wait core remembers about a run between ticks (one JSON column of its row).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WaitState {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenWait>,
    /// The step the resume budget counts for, and the resumes typed in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    pub resumes: u32,
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub resumed_at: Option<Time>,
    /// The usage-limit reset a resume was typed for (once per reset).
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub resumed_reset: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working: Option<Mark>,
    /// An unknown screen, for `--unknown-after`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<Mark>,
    /// When a running tool was first seen, and the CPU time of the agent's children then.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub tool_since: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub child_cpu: Option<u64>,
    /// An Esc was typed into a wedged stream at this time: the resume follows at the idle
    /// prompt.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub esc_at: Option<Time>,
    /// The dispatch (its count) whose half-typed line was cleared and typed again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retyped: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_person: Option<NeedsPerson>,
    /// The key of the screen a person acknowledged (`run ack`): not escalated again while
    /// the screen keeps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acked_hash: Option<String>,
}

impl WaitState {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("serializable")
    }

    /// Read the stored column; a value this build cannot read starts fresh (waits re-open
    /// from the screen at the next tick).
    pub fn from_json(text: &str) -> WaitState {
        serde_json::from_str(text).unwrap_or_default()
    }
}

impl WaitLimits {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("serializable")
    }

    pub fn from_json(text: &str) -> WaitLimits {
        serde_json::from_str(text).unwrap_or_default()
    }
}

/// A usage-limit window from the status line (`rate_limits`): exhausted, with its reset to
/// the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub reset: Time,
    pub weekly: bool,
}

/// A StopFailure the hooks recorded for the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFailure {
    /// `rate_limit`, `server_error`, `overloaded`, ...
    pub kind: String,
    /// It is a usage limit (its banner says so, or a status-line window is at 100%).
    pub usage_limit: bool,
    /// Its banner (`last_assistant_message`) says the credit balance is too low.
    pub credit: bool,
    pub at: Time,
}

impl HookFailure {
    /// The escalation slug of a failure that cannot clear by itself — a login, an account, a
    /// bill, a request the API refuses as made — so resuming would only fail again (issue
    /// 29: a 401 was scheduled for resuming). `None`: a transient error (`rate_limit`,
    /// `overloaded`, `server_error`, `max_output_tokens`, `unknown`), resumed with backoff.
    /// The kinds are Claude Code 2.1.332's (its SDK's `error` enum).
    pub fn needs_person(&self) -> Option<EscalationKind> {
        if self.credit {
            return Some(EscalationKind::Billing);
        }
        match self.kind.as_str() {
            "authentication_failed"
            | "oauth_org_not_allowed"
            | "account_on_hold"
            | "verification_required"
            | "cloud_credential_error" => Some(EscalationKind::Auth),
            "billing_error" => Some(EscalationKind::Billing),
            "invalid_request" | "model_not_found" => Some(EscalationKind::InvalidRequest),
            _ => None,
        }
    }
}

/// A wait recorded outside the screen (`hook stop-failure`'s quota-wait record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub reset: Option<Time>,
    pub why: String,
}

/// What one tick saw, as the wait core reads it.
#[derive(Debug, Clone)]
pub struct WaitObs<'a> {
    pub hash: &'a str,
    /// What a person would be asked to decide ([`crate::pane::view::PaneView::key`]): an
    /// escalation and an acknowledgement stand while the screen keeps it.
    pub key: &'a str,
    pub class: Class,
    pub action: Action,
    /// The classifier's deciding rule (`repl-prompt`, ...), when one decided.
    pub rule: Option<&'a str>,
    /// The program in front is not the agent: observed, never typed into.
    pub observe_only: bool,
    pub screen: &'a Waiting,
    /// The classifier's reset time for a quota screen.
    pub classified_reset: Option<Time>,
    pub window: Option<Window>,
    pub failure: Option<HookFailure>,
    pub recorded: Option<Recorded>,
    /// PreToolUse seen without its PostToolUse: when the tool started.
    pub tool_hook_since: Option<Time>,
    /// CPU time (clock ticks) of the agent's child processes, when it could be read.
    pub child_cpu: Option<u64>,
    /// The step the loop is on (the resume budget is per step).
    pub step: String,
    /// `--wait-weekly`: wait out a weekly limit instead of escalating it.
    pub wait_weekly: bool,
    /// A stall recovery (the Esc of a wedged stream) is still in the budget.
    pub recovery_left: bool,
    /// The quota governor holds the run ([`crate::supervise::governor`]).
    pub paced: Option<Paced>,
}

/// The governor's hold on a run, as the wait core keeps it: a `quota-paced` wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paced {
    /// When to ask again (the reset, or the next release slot).
    pub until: Time,
    /// The window's reset it waits for.
    pub reset: Time,
    /// Its maximum ([`crate::supervise::governor::max_wait`]).
    pub max_at: Time,
    pub reason: String,
}

/// What the tick does about the run's wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    /// No wait, or nothing to do now.
    None,
    /// A legitimate wait (see [`Ruling::pauses`]).
    Wait,
    /// Type the resume text and Enter at the agent's idle prompt.
    Resume(Resume),
    /// Type one Esc (a wedged stream); a stall recovery.
    Esc,
    /// A person must decide; nothing is typed.
    Escalate {
        kind: EscalationKind,
        /// The stall recovery budget is spent (announced as `stall-limit`).
        stall_limit: bool,
    },
}

/// A resume to type, and what it changes once typed ([`resumed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub kind: WaitKind,
    /// The usage-limit reset it resumes after (once per reset).
    pub reset: Option<Time>,
    /// It spends one of the step's `--max-resumes` (a give-up).
    pub counts: bool,
    /// It finishes a wedged-stream recovery (the Esc was the recovery).
    pub after_esc: bool,
}

/// The decision of one tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    pub act: Act,
    pub reason: String,
    /// The timeout clock is paused now (a legitimate wait before its maximum).
    pub pauses: bool,
}

impl Ruling {
    fn none(reason: impl Into<String>) -> Ruling {
        Ruling {
            act: Act::None,
            reason: reason.into(),
            pauses: false,
        }
    }
}

/// Count a resume that was typed (or is about to be, when recorded first).
pub fn resumed(state: &mut WaitState, resume: &Resume, now: Time) {
    state.resumed_at = Some(now);
    if resume.counts {
        state.resumes = state.resumes.saturating_add(1);
    }
    if let Some(reset) = resume.reset {
        state.resumed_reset = Some(reset);
    }
    if resume.after_esc {
        state.esc_at = None;
        state.working = None;
    }
}

/// An Esc was typed into a wedged stream.
pub fn escaped(state: &mut WaitState, now: Time) {
    state.esc_at = Some(now);
}

/// The backoff before resume number `resumes + 1`: 1, 2, 4 … minutes, at most 30.
pub fn backoff(resumes: u32) -> Duration {
    BACKOFF_BASE
        .checked_mul(1u32.checked_shl(resumes).unwrap_or(u32::MAX))
        .unwrap_or(BACKOFF_CAP)
        .min(BACKOFF_CAP)
}

fn same_reset(a: Time, b: Time) -> bool {
    between(a.min(b), a.max(b)) < SAME_RESET
}

fn human(d: Duration) -> String {
    crate::duration::format(Duration::from_secs(d.as_secs()))
}

/// One tick of the wait core. Pure: the same state, observation and clock give the same
/// verdict.
pub fn decide(
    state: &WaitState,
    obs: &WaitObs<'_>,
    now: Time,
    limits: &WaitLimits,
) -> (WaitState, Ruling) {
    let mut next = state.clone();
    if next.step.as_deref() != Some(obs.step.as_str()) {
        next.step = Some(obs.step.clone());
        next.resumes = 0;
    }
    if next.acked_hash.as_deref().is_some_and(|h| h != obs.key) {
        next.acked_hash = None;
    }
    if obs.observe_only {
        next.open = None;
        next.working = None;
        // A REPL in front is never typed into, but a person hears of it when it stays.
        let verdict = unknown_screen(&mut next, obs, now, limits)
            .unwrap_or_else(|| Ruling::none("a program other than the agent is in front"));
        let verdict = escalate_once(&mut next, obs, verdict);
        return (next, verdict);
    }
    let verdict = match decide_open(&mut next, obs, now, limits) {
        v if v.act == Act::None => unknown_screen(&mut next, obs, now, limits).unwrap_or(v),
        v => {
            next.unknown = None;
            v
        }
    };
    if !matches!(verdict.act, Act::Escalate { .. }) && !is_stream(&next) {
        next.working = match (
            &next.working,
            obs.screen.busy || obs.class == Class::Working,
        ) {
            (Some(mark), true) if mark.hash == obs.hash => Some(mark.clone()),
            (_, true) => Some(Mark {
                hash: obs.hash.to_string(),
                since: now,
            }),
            (_, false) => None,
        };
    }
    let verdict = escalate_once(&mut next, obs, verdict);
    (next, verdict)
}

fn is_stream(state: &WaitState) -> bool {
    state
        .open
        .as_ref()
        .is_some_and(|o| o.kind == WaitKind::StreamStalled)
}

/// A screen already escalated (or acknowledged) is not escalated again: the run stays in
/// `needs-person` until the screen changes or a person clears it.
fn escalate_once(next: &mut WaitState, obs: &WaitObs<'_>, verdict: Ruling) -> Ruling {
    if !matches!(verdict.act, Act::Escalate { .. }) {
        return verdict;
    }
    let raised = next
        .needs_person
        .as_ref()
        .is_some_and(|n| n.key() == Some(obs.key));
    if raised || next.acked_hash.as_deref() == Some(obs.key) {
        return Ruling::none(format!("{}; waiting for a person", verdict.reason));
    }
    verdict
}

/// Open (or keep) a wait of `kind` and return it.
fn open<'s>(next: &'s mut WaitState, kind: WaitKind, now: Time, reason: &str) -> &'s mut OpenWait {
    let keep = next.open.as_ref().is_some_and(|o| o.kind == kind);
    if !keep {
        // One quota wait turning into another (a limit the governor holds, then resumes)
        // is the same wait: it began when the first did.
        let since = match &next.open {
            Some(o) if o.kind.is_quota() && kind.is_quota() => o.since,
            _ => now,
        };
        next.open = Some(OpenWait {
            kind,
            since,
            until: None,
            max_at: now,
            reset: None,
            reset_text: None,
            reason: String::new(),
        });
    }
    let wait = next.open.as_mut().expect("just set");
    wait.reason = reason.to_string();
    wait
}

fn waiting(wait: &OpenWait, now: Time) -> Ruling {
    Ruling {
        act: Act::Wait,
        reason: wait.reason.clone(),
        pauses: wait.kind.pauses_clock() && now < wait.max_at,
    }
}

fn escalate(next: &mut WaitState, kind: EscalationKind, reason: String) -> Ruling {
    // The wait is over: the clock runs again.
    next.open = None;
    Ruling {
        act: Act::Escalate {
            kind,
            stall_limit: false,
        },
        reason,
        pauses: false,
    }
}

fn decide_open(next: &mut WaitState, obs: &WaitObs<'_>, now: Time, limits: &WaitLimits) -> Ruling {
    let s = obs.screen;
    // A usage limit's own banner that names a paid way out beside its reset (Codex 0.171:
    // "Upgrade to Pro … to purchase more credits or try again at 1:18 PM.") offers nothing to
    // pick: the reset is waited for, as the banner says, and nothing is typed before it. A
    // menu, or such words with no reset, is a person's.
    let advice_beside_reset =
        !s.menu && limit_seen(obs, now).is_some_and(|limit| limit.reset.is_some());
    if let Some(billing) = s.billing.as_ref().filter(|_| !advice_beside_reset) {
        return escalate(
            next,
            EscalationKind::Billing,
            format!(
                "billing or a paid option on screen ({billing:?}): a person decides, autoctl never picks one"
            ),
        );
    }
    if let Some(failure) = &obs.failure
        && let Some(kind) = failure.needs_person()
    {
        return escalate(
            next,
            kind,
            format!(
                "the agent's turn failed with StopFailure {}{}: it cannot clear by itself; a person decides, nothing is typed",
                failure.kind,
                if failure.credit {
                    " (credit balance too low)"
                } else {
                    ""
                }
            ),
        );
    }
    let seen = limit_seen(obs, now);
    let weekly = seen.as_ref().is_some_and(|l| l.weekly);
    if weekly && !obs.wait_weekly {
        return escalate(
            next,
            EscalationKind::WeeklyLimit,
            "weekly usage limit: a person decides (--wait-weekly waits it out)".to_string(),
        );
    }
    if obs.class == Class::Quota && obs.action == Action::Escalate && !weekly {
        return escalate(
            next,
            EscalationKind::QuotaEscalate,
            "a usage-limit screen a person must decide (billing or credits)".to_string(),
        );
    }
    if let Some(paced) = &obs.paced {
        return quota_paced(next, paced, now);
    }
    if let Some(v) = usage_limit(next, obs, seen, now, limits) {
        return v;
    }
    if let Some(v) = retrying(next, obs, now, limits) {
        return v;
    }
    if let Some(v) = gave_up(next, obs, now, limits) {
        return v;
    }
    if let Some(v) = stream(next, obs, now, limits) {
        return v;
    }
    next.open = None;
    Ruling::none("no wait")
}

/// Unknown never means waiting forever: a screen nobody can read (class `unknown`: a dialog
/// autoctl does not know, a REPL in front of the agent) that stays unchanged for
/// `--unknown-after` is escalated once, with its last non-blank lines. Another program in
/// front (a command a dispatched step runs) is not: it may be quiet for a long time.
fn unknown_screen(
    next: &mut WaitState,
    obs: &WaitObs<'_>,
    now: Time,
    limits: &WaitLimits,
) -> Option<Ruling> {
    let repl = obs.rule.is_some_and(|r| r.starts_with("repl"));
    if obs.class != Class::Unknown || (obs.observe_only && !repl) {
        next.unknown = None;
        return None;
    }
    let since = match &next.unknown {
        Some(mark) if mark.hash == obs.hash => mark.since,
        _ => {
            next.unknown = Some(Mark {
                hash: obs.hash.to_string(),
                since: now,
            });
            now
        }
    };
    let what = if repl {
        "an interpreter (REPL) in front of the agent"
    } else {
        "a screen autoctl cannot read"
    };
    let max_at = plus(since, limits.unknown_after);
    let wait = open(next, WaitKind::UnknownScreen, now, "");
    wait.since = since;
    wait.max_at = max_at;
    wait.reason = format!(
        "{what}, unchanged for {}; escalated at {} (--unknown-after)",
        human(between(since, now)),
        format_time(max_at)
    );
    if now < max_at {
        // Not a wait that pauses anything, and nothing to report yet.
        return Some(Ruling {
            act: Act::None,
            reason: wait.reason.clone(),
            pauses: false,
        });
    }
    let lines: Vec<String> = obs.screen.tail.iter().map(|l| format!("{l:?}")).collect();
    let why = format!(
        "{what}, unchanged for {} (--unknown-after {}); its last lines: {}",
        human(between(since, now)),
        human(limits.unknown_after),
        if lines.is_empty() {
            "(none)".to_string()
        } else {
            lines.join(" | ")
        }
    );
    Some(escalate(next, EscalationKind::UnknownScreen, why))
}

/// The governor holds the run: a `quota-paced` wait until its release, a legitimate wait
/// (the timeout clock is paused) that escalates past its maximum.
fn quota_paced(next: &mut WaitState, paced: &Paced, now: Time) -> Ruling {
    let wait = open(next, WaitKind::QuotaPaced, now, &paced.reason);
    wait.until = Some(paced.until);
    wait.reset = Some(paced.reset);
    wait.reset_text = None;
    // The maximum only moves later (more runs queued before it), never closer.
    wait.max_at = wait.max_at.max(paced.max_at);
    if now >= wait.max_at {
        let why = format!(
            "paced by the quota governor since {}, past its maximum {}: {}",
            format_time(wait.since),
            format_time(wait.max_at),
            paced.reason
        );
        return escalate(next, EscalationKind::QuotaPaced, why);
    }
    waiting(next.open.as_ref().expect("open"), now)
}

/// What the screen and the typed channels say about a usage limit.
struct LimitSeen {
    weekly: bool,
    reset: Option<Time>,
    reset_text: Option<String>,
    source: LimitSource,
}

/// Where a usage limit's reset was read (said in the wait's reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LimitSource {
    /// The status line's window: exact to the second.
    StatusLine,
    /// The banner's phrase ("resets 5:43am"), read from the screen.
    Banner,
    /// `hook stop-failure`'s quota-wait record.
    Record,
    /// The screen shows a limit without a reset.
    Screen,
}

impl std::fmt::Display for LimitSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LimitSource::StatusLine => "status line",
            LimitSource::Banner => "banner",
            LimitSource::Record => "quota-wait record",
            LimitSource::Screen => "screen",
        })
    }
}

fn limit_seen(obs: &WaitObs<'_>, now: Time) -> Option<LimitSeen> {
    let s = obs.screen;
    // A status-line window counts only while the agent is on a limit (its screen, a hook
    // failure, a record); a window alone may be a minute old.
    let on_limit = s.limit.is_some()
        || obs.class == Class::Quota
        || obs.failure.as_ref().is_some_and(|f| f.usage_limit)
        || obs.recorded.is_some();
    if !on_limit || s.busy {
        return None;
    }
    let window = obs.window.filter(|w| w.reset > now || s.limit.is_some());
    let banner = s.limit.as_ref();
    let weekly = window.is_some_and(|w| w.weekly) || banner.is_some_and(|l| l.weekly);
    let (reset, source) = match (
        window,
        banner.and_then(|l| l.reset_at),
        obs.classified_reset,
    ) {
        (Some(w), _, _) => (Some(w.reset), LimitSource::StatusLine),
        (None, Some(at), _) => (Some(at), LimitSource::Banner),
        (None, None, Some(at)) => (Some(at), LimitSource::Banner),
        (None, None, None) => match obs.recorded.as_ref().and_then(|r| r.reset) {
            Some(at) => (Some(at), LimitSource::Record),
            None => (None, LimitSource::Screen),
        },
    };
    Some(LimitSeen {
        weekly,
        reset,
        reset_text: banner.and_then(|l| l.reset_text.clone()),
        source,
    })
}

/// A reset read from a time of day (a banner's "resets 11pm", a hook message's) is placed at
/// its next occurrence, so read just after it passed it is tomorrow's. Within [`JUST_PASSED`]
/// of the time it names, it is the reset that just happened: the wait resumes (or sees the
/// agent continue by itself) instead of escalating a limit a day away. A status-line reset is
/// exact and kept.
fn just_passed(mut seen: LimitSeen, now: Time) -> LimitSeen {
    if seen.source != LimitSource::StatusLine {
        seen.reset = seen.reset.map(|read| time_of_day_reset(read, now));
    }
    seen
}

/// A reset placed from a time of day at its next occurrence: the one that just happened when
/// it is tomorrow's and its time passed within [`JUST_PASSED`], else as read.
pub fn time_of_day_reset(read: Time, now: Time) -> Time {
    let passed = read - chrono::TimeDelta::days(1);
    if passed <= now && plus(passed, JUST_PASSED) > now {
        passed
    } else {
        read
    }
}

/// A usage limit on the screen or a channel: wait to its reset (a reset beyond
/// `--max-quota-wait` or none known past that maximum escalates), then resume once the agent
/// is idle at its input box; a resume that did not take, or an agent not idle by the
/// maximum, escalates.
fn usage_limit(
    next: &mut WaitState,
    obs: &WaitObs<'_>,
    seen: Option<LimitSeen>,
    now: Time,
    limits: &WaitLimits,
) -> Option<Ruling> {
    let seen = just_passed(seen?, now);
    let previous = next.open.clone().filter(|o| o.kind.is_quota());
    let Some(reset) = kept_reset(previous.as_ref(), &seen, next.resumed_reset) else {
        return Some(unknown_reset(next, now, limits));
    };
    if !seen.weekly && reset > plus(now, limits.max_quota_wait) {
        let why = format!(
            "usage limit resets at {} ({}), beyond --max-quota-wait {}",
            format_time(reset),
            seen.source,
            human(limits.max_quota_wait)
        );
        return Some(escalate(next, EscalationKind::QuotaWaitMax, why));
    }
    let times = ResumeTimes::of(next, previous.as_ref(), obs, reset, now, limits);
    let reason = format!(
        "usage limit: resets at {} ({}); resume at {}{}",
        format_time(reset),
        seen.source,
        format_time(times.resume_at),
        if times.armed {
            " unless Claude Code's own automatic continue fires first"
        } else {
            ""
        }
    );
    let wait = open(next, WaitKind::UsageLimit, now, &reason);
    wait.reset = Some(reset);
    wait.reset_text = seen.reset_text.clone();
    wait.until = Some(times.resume_at);
    wait.max_at = times.max_at;
    if now >= times.max_at {
        let why = if times.resumed {
            format!(
                "resumed once after the reset at {}, but the agent is still on its limit",
                format_time(reset)
            )
        } else {
            format!(
                "the limit reset at {} and the agent is not idle at its prompt (a menu or text is in the way)",
                format_time(reset)
            )
        };
        return Some(escalate(next, EscalationKind::QuotaResume, why));
    }
    if now < times.resume_at || times.resumed {
        return Some(waiting(next.open.as_ref().expect("open"), now));
    }
    if !obs.screen.idle_at_input() {
        // Maybe a person is at it; the maximum escalates.
        let wait = next.open.as_mut().expect("open");
        wait.reason = format!("{reason}; the agent is not idle at an empty prompt yet");
        return Some(waiting(wait, now));
    }
    Some(Ruling {
        act: Act::Resume(Resume {
            kind: WaitKind::UsageLimit,
            reset: Some(reset),
            counts: false,
            after_esc: false,
        }),
        reason: format!(
            "the usage limit reset at {} ({}): resume once",
            format_time(reset),
            seen.source
        ),
        pauses: now < times.max_at,
    })
}

/// The reset the wait goes by. It stays the one first read while the banner's phrase stays
/// (read after the reset, "resets 12:50pm" is tomorrow's); a status-line time is exact and
/// wins. A time of day read without its phrase (Codex's "try again at 5:10 PM", placed by
/// the screen rules) is the same reset when it reads as exactly a day later: the minute has
/// passed. So is the banner autoctl resumed past, still on the screen above the new turn
/// (Codex keeps it): the resume's own check decides, not a new limit a day away.
fn kept_reset(
    previous: Option<&OpenWait>,
    seen: &LimitSeen,
    resumed_reset: Option<Time>,
) -> Option<Time> {
    let day_after = |first: Option<Time>| {
        first
            .zip(seen.reset)
            .is_some_and(|(first, read)| read - first == chrono::TimeDelta::days(1))
    };
    let from_screen = seen.source != LimitSource::StatusLine;
    match previous {
        Some(p)
            if from_screen
                && p.reset.is_some()
                && ((p.reset_text.is_some() && p.reset_text == seen.reset_text)
                    || day_after(p.reset)) =>
        {
            p.reset
        }
        None if from_screen && day_after(resumed_reset) => resumed_reset,
        _ => seen.reset,
    }
}

/// A usage limit without a reset time: waited on up to `--max-quota-wait`, then escalated.
fn unknown_reset(next: &mut WaitState, now: Time, limits: &WaitLimits) -> Ruling {
    let wait = open(
        next,
        WaitKind::UsageLimitUnknown,
        now,
        "usage limit without a reset time; waiting",
    );
    wait.max_at = plus(wait.since, limits.max_quota_wait);
    if now >= wait.max_at {
        let why = format!(
            "usage limit without a reset time for {} (--max-quota-wait)",
            human(limits.max_quota_wait)
        );
        return escalate(next, EscalationKind::QuotaWaitMax, why);
    }
    waiting(wait, now)
}

/// When a known reset is resumed past, and by when the resume must have taken.
struct ResumeTimes {
    /// The reset plus the margin (longer while Claude Code's own automatic continue is armed).
    resume_at: Time,
    /// Past it a person is asked.
    max_at: Time,
    /// This reset was resumed already.
    resumed: bool,
    /// Claude Code's own automatic continue is armed.
    armed: bool,
}

impl ResumeTimes {
    fn of(
        next: &WaitState,
        previous: Option<&OpenWait>,
        obs: &WaitObs<'_>,
        reset: Time,
        now: Time,
        limits: &WaitLimits,
    ) -> ResumeTimes {
        // Claude Code's own automatic continue goes first while it is armed; autoctl's resume
        // is the fallback (cancelled, not firing, or an agent without one).
        let armed = obs.screen.auto_continue == AutoContinue::Armed;
        let margin = if armed {
            limits.resume_margin.max(AUTO_CONTINUE_GRACE)
        } else {
            limits.resume_margin
        };
        let resume_at = plus(reset, margin);
        let resumed = next.resumed_reset.is_some_and(|r| same_reset(r, reset));
        let max_at = plus(
            if resumed {
                next.resumed_at.unwrap_or(resume_at).max(resume_at)
            } else {
                resume_at
            },
            limits.resume_check,
        );
        // A resume the governor held past the reset has its check counted from its release.
        let max_at = match previous {
            Some(p) if p.kind == WaitKind::QuotaPaced => max_at.max(plus(now, limits.resume_check)),
            _ => max_at,
        };
        ResumeTimes {
            resume_at,
            max_at,
            resumed,
            armed,
        }
    }
}

fn retrying(
    next: &mut WaitState,
    obs: &WaitObs<'_>,
    now: Time,
    limits: &WaitLimits,
) -> Option<Ruling> {
    let s = obs.screen;
    // The agent's own countdown, or any other screen the classifier calls a wait: every
    // one of them ends by its maximum.
    let countdown = s.retrying.is_some() || (obs.action == Action::Wait && s.gave_up().is_none());
    if !countdown {
        return None;
    }
    let what = s
        .retrying
        .clone()
        .unwrap_or_else(|| format!("{} screen", obs.class.as_str()));
    let wait = open(
        next,
        WaitKind::AgentRetrying,
        now,
        &format!("the agent retries by itself ({what})"),
    );
    wait.max_at = plus(wait.since, limits.max_retry_wait);
    if now >= wait.max_at {
        let why = format!(
            "the agent has been retrying for {} (--max-retry-wait)",
            human(limits.max_retry_wait)
        );
        return Some(escalate(next, EscalationKind::RetryWaitMax, why));
    }
    Some(waiting(wait, now))
}

fn gave_up(
    next: &mut WaitState,
    obs: &WaitObs<'_>,
    now: Time,
    limits: &WaitLimits,
) -> Option<Ruling> {
    let s = obs.screen;
    let (kind, what) = match (s.gave_up(), &obs.failure) {
        (Some(error), _) => (WaitKind::GaveUp, error.to_string()),
        (None, Some(f)) if !f.usage_limit && s.input == Input::Empty && !s.busy => {
            (WaitKind::StopFailure, format!("StopFailure {}", f.kind))
        }
        _ => return None,
    };
    // A resume is planned only when the typed record and the screen agree that the agent
    // gave up on an error it may get past: a screen a person must answer (a login, a
    // dialog, a menu) is theirs, whatever the record says.
    if !resumable_screen(obs.class) {
        return Some(escalate(
            next,
            EscalationKind::GaveUp,
            format!(
                "the agent gave up ({what}) but the screen shows {}: no resume, a person decides",
                obs.class.as_str()
            ),
        ));
    }
    if next.resumes >= limits.max_resumes {
        let why = format!(
            "the agent gave up again ({what}) after {} resumes this step (--max-resumes)",
            next.resumes
        );
        return Some(escalate(next, EscalationKind::GaveUp, why));
    }
    let opened = open(next, kind, now, "").since;
    let resumes = next.resumes;
    // The backoff counts from the give-up, or from the last resume when the agent gave up
    // again before a tick saw it work.
    let since = next.resumed_at.map_or(opened, |at| at.max(opened));
    let due = plus(since, backoff(resumes));
    let wait = next.open.as_mut().expect("open");
    wait.until = Some(due);
    wait.max_at = due;
    wait.reason = format!(
        "the agent gave up ({what}); resume {} of {} at {}",
        resumes + 1,
        limits.max_resumes,
        format_time(due)
    );
    if now < due {
        return Some(waiting(wait, now));
    }
    Some(Ruling {
        act: Act::Resume(Resume {
            kind,
            reset: None,
            counts: true,
            after_esc: false,
        }),
        reason: format!(
            "the agent gave up ({what}); backoff {} passed: resume {} of {}",
            human(backoff(resumes)),
            resumes + 1,
            limits.max_resumes
        ),
        // Its maximum is the backoff: the clock runs again from the resume on.
        pauses: false,
    })
}

/// Screens a resume may be typed into after a give-up: the idle prompt, or the error the
/// agent gave up on (the classifier's action there is `escalate`; the wait core resumes it
/// within `--max-resumes`). A login, a dialog, a menu or a prompt is a person's.
fn resumable_screen(class: Class) -> bool {
    matches!(class, Class::Idle | Class::ApiError | Class::RateLimit)
}

/// The agent's stream: after an Esc, the idle prompt (resume) or a person; a working screen
/// with a tool running is no stall but has `--tool-timeout`; one unchanged past
/// `--stream-timeout` gets one Esc (a stall recovery), or a person once the budget is spent.
fn stream(
    next: &mut WaitState,
    obs: &WaitObs<'_>,
    now: Time,
    limits: &WaitLimits,
) -> Option<Ruling> {
    let s = obs.screen;
    if let Some(esc_at) = next.esc_at {
        return Some(after_esc(next, s, esc_at, now));
    }
    let working = s.busy || obs.class == Class::Working;
    if !working {
        next.tool_since = None;
        return None;
    }
    // A running tool is not a stall (but it has its own maximum).
    let cpu_moved = matches!((next.child_cpu, obs.child_cpu), (Some(a), Some(b)) if b > a);
    if obs.child_cpu.is_some() {
        next.child_cpu = obs.child_cpu;
    }
    if obs.tool_hook_since.is_some() || s.tool_running || cpu_moved {
        return Some(tool_running(next, obs, now, limits));
    }
    next.tool_since = None;
    let since = match &next.working {
        Some(mark) if mark.hash == obs.hash => mark.since,
        _ => {
            next.open = None;
            return Some(Ruling::none("the agent is working"));
        }
    };
    Some(unchanged_stream(next, obs, since, now, limits))
}

/// After the Esc: the resume follows at the idle prompt, or a person is asked once
/// [`ESC_SETTLE`] passed without it.
fn after_esc(next: &mut WaitState, s: &Waiting, esc_at: Time, now: Time) -> Ruling {
    if s.idle_at_input() {
        return Ruling {
            act: Act::Resume(Resume {
                kind: WaitKind::StreamStalled,
                reset: None,
                counts: false,
                after_esc: true,
            }),
            reason: "the idle prompt is back after the Esc: resume".to_string(),
            pauses: false,
        };
    }
    if between(esc_at, now) >= ESC_SETTLE {
        next.esc_at = None;
        next.working = None;
        return escalate(
            next,
            EscalationKind::StreamStalled,
            format!(
                "an Esc to a wedged stream brought no idle prompt within {}",
                human(ESC_SETTLE)
            ),
        );
    }
    let wait = open(
        next,
        WaitKind::StreamStalled,
        now,
        "Esc typed; waiting for the idle prompt",
    );
    wait.max_at = plus(esc_at, ESC_SETTLE);
    waiting(wait, now)
}

/// A tool runs (its hook says so, the screen shows it, or the pane's children use CPU):
/// waited on from its start up to `--tool-timeout`, then a person is asked.
fn tool_running(next: &mut WaitState, obs: &WaitObs<'_>, now: Time, limits: &WaitLimits) -> Ruling {
    let since = obs.tool_hook_since.or(next.tool_since).unwrap_or(now);
    next.tool_since = Some(since);
    next.working = None;
    let max_at = plus(since, limits.tool_timeout);
    if now >= max_at {
        let why = format!(
            "a tool has been running for {} (--tool-timeout)",
            human(between(since, now))
        );
        return escalate(next, EscalationKind::ToolTimeout, why);
    }
    let wait = open(
        next,
        WaitKind::ToolRunning,
        now,
        "a tool is running; not a stall",
    );
    wait.since = since;
    wait.max_at = max_at;
    waiting(wait, now)
}

/// A working screen unchanged `since`: nothing before `--stream-timeout`; then one Esc
/// while a stall recovery is left, else a person (the stall limit).
fn unchanged_stream(
    next: &mut WaitState,
    obs: &WaitObs<'_>,
    since: Time,
    now: Time,
    limits: &WaitLimits,
) -> Ruling {
    let unchanged = between(since, now);
    if unchanged < limits.stream_timeout {
        next.open = None;
        return Ruling::none(format!(
            "the working screen has not changed for {}",
            human(unchanged)
        ));
    }
    if !obs.recovery_left {
        let mut v = escalate(
            next,
            EscalationKind::StreamStalled,
            format!(
                "the stream has not moved for {} and the stall recovery budget is spent",
                human(unchanged)
            ),
        );
        v.act = Act::Escalate {
            kind: EscalationKind::StreamStalled,
            stall_limit: true,
        };
        return v;
    }
    let reason = format!(
        "the stream has not moved for {} (--stream-timeout {}) and no tool runs: one Esc, then the resume text at the idle prompt",
        human(unchanged),
        human(limits.stream_timeout)
    );
    let wait = open(next, WaitKind::StreamStalled, now, &reason);
    wait.since = since;
    wait.max_at = plus(since, limits.stream_timeout);
    Ruling {
        act: Act::Esc,
        reason,
        pauses: false,
    }
}

/// The prompt line holds `text` autoctl typed without its Enter (a driver killed between
/// the two): the line ends with the whole command, with the prompt before it.
pub fn half_typed(prompt_line: &str, text: &str) -> bool {
    let line = prompt_line.trim_end();
    let text = text.trim();
    !text.is_empty() && line.len() > text.len() && line.ends_with(text)
}

/// One tick of the wait core with its timeout clock: [`decide`], then the clock settled for
/// its ruling (`settle_clock`, up to the maximum of the wait that paused it). The one owner
/// of the paused clock: `run tick`, `run watch` and `stall check` all decide their waits
/// here. `since` is the open pause and `waited` the seconds of closed pauses
/// ([`crate::supervise::stall::StallState::clock_paused_since`] and `clock_paused_seconds`).
pub fn rule(
    before: &WaitState,
    obs: &WaitObs<'_>,
    now: Time,
    limits: &WaitLimits,
    since: &mut Option<Time>,
    waited: &mut u64,
) -> (WaitState, Ruling) {
    let (next, ruling) = decide(before, obs, now, limits);
    // A pause that goes on runs to the open wait's maximum; one that ends, to the maximum of
    // the wait that was open.
    let max_at = if ruling.pauses { &next } else { before }
        .open
        .as_ref()
        .map(|o| o.max_at);
    settle_clock(since, waited, ruling.pauses, max_at, now);
    (next, ruling)
}

/// The timeout clock's bookkeeping for a verdict: open a pause while the wait pauses it,
/// close it when it stops — at the wait's maximum when that has passed, so a wait past its
/// maximum never keeps the clock paused. `since` is the open pause (in the stall state),
/// `waited` the seconds of closed pauses. Only [`rule`] calls it (and tests that simulate it).
pub(in crate::supervise) fn settle_clock(
    since: &mut Option<Time>,
    waited: &mut u64,
    pauses: bool,
    max_at: Option<Time>,
    now: Time,
) {
    match (pauses, *since) {
        (true, Some(_)) => {}
        (true, None) => *since = Some(now),
        (false, Some(start)) => {
            let end = max_at.map_or(now, |max| max.clamp(start, now));
            *waited = waited.saturating_add(between(start, end).as_secs());
            *since = None;
        }
        (false, None) => *since = None,
    }
}

#[cfg(test)]
mod tests;
