//! Content-based stall detectors (seed 002, "Stall Detection & Recovery" and "Silent
//! Continue"), as pure functions for `stall check`, `run tick` and `run continue` to call:
//!
//! - a reasoning loop: the same agent message three times in a row → stop with
//!   `reasoning_loop`;
//! - a step timeout: no `.status.json` update for 10 minutes;
//! - the compare-and-swap before a daemon sends a continuation: send only when
//!   `.status.json`'s `updated_at` is still the value the daemon saw, so a continuation the
//!   user already gave is never doubled.
//!
//! Messages are compared after normalization (terminal escapes removed, whitespace runs
//! collapsed), so a re-rendered but identical message still counts as the same.
//!
//! How the commands use them (the stall heartbeat in [`crate::supervise::stall`] keeps the
//! state; `stall check` and `run tick` feed it):
//! - for each new message on screen ([`crate::pane::message`]),
//!   `RepeatState::observe_seen(latest agent message, repeats visible)`; `is_loop(limit)` →
//!   `.auto-stop` with [`STOP_REASON`];
//! - per heartbeat, [`status_updated_at`] of `.status.json` (else the file's mtime) starts the
//!   step clock; past the limit (default [`STEP_TIMEOUT`]) the pane counts as stalled;
//! - before a continuation is typed (`run continue --if-unchanged UPDATED_AT`, or the
//!   heartbeat's own continuation after a step timeout), `updated_at` is read again under the
//!   pane's lock and the text is sent only on [`Continuation::Send`] (`run continue` exits 1
//!   otherwise).

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::pane::message::{normalize_message, trailing_repeats};

/// Identical consecutive messages that make a reasoning loop (seed 002).
pub const REPEAT_LIMIT: u32 = 3;

/// How long a step may go without a `.status.json` update (seed 002).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What a continuation types by default (seed 002: the user says "continue").
pub const CONTINUATION: &str = "continue";

/// The stop reason a reasoning loop writes to `.auto-stop`.
pub const STOP_REASON: &str = "reasoning_loop";

/// Is the agent in a reasoning loop: its last `limit` messages identical?
pub fn reasoning_loop<S: AsRef<str>>(messages: &[S], limit: u32) -> bool {
    limit > 0 && trailing_repeats(messages) >= limit
}

/// FNV-1a: a hash that is the same in every build, because the state is persisted between
/// ticks (std's hasher may change between Rust releases).
fn stable_hash(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The streaming form for a tick that sees one new message at a time and stores this
/// between ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepeatState {
    /// Hash of the last non-empty normalized message.
    pub last: Option<u64>,
    /// How many times in a row it has been seen.
    pub count: u32,
}

impl RepeatState {
    /// The state after one more message.
    pub fn observe(self, message: &str) -> RepeatState {
        let normalized = normalize_message(message);
        if normalized.is_empty() {
            return self;
        }
        let hash = stable_hash(&normalized);
        if self.last == Some(hash) {
            RepeatState {
                last: self.last,
                count: self.count.saturating_add(1),
            }
        } else {
            RepeatState {
                last: Some(hash),
                count: 1,
            }
        }
    }

    /// The state after a new message that the screen shows `visible` times in a row (the
    /// same text between tool calls, all still on screen): at least one more than before when
    /// it repeats the last message, and never fewer than the screen shows.
    pub fn observe_seen(self, message: &str, visible: u32) -> RepeatState {
        let next = self.observe(message);
        if next.last.is_none() {
            return next;
        }
        RepeatState {
            count: next.count.max(visible),
            ..next
        }
    }

    /// The hash of the last message as stored in text form (16 hex digits).
    pub fn last_hex(self) -> Option<String> {
        self.last.map(|hash| format!("{hash:016x}"))
    }

    /// A state read back from its text form; an unreadable hash starts over.
    pub fn from_hex(last: Option<&str>, count: u32) -> RepeatState {
        match last.and_then(|hex| u64::from_str_radix(hex, 16).ok()) {
            Some(hash) => RepeatState {
                last: Some(hash),
                count,
            },
            None => RepeatState::default(),
        }
    }

    pub fn is_loop(self, limit: u32) -> bool {
        limit > 0 && self.count >= limit
    }
}

/// How long a step has gone without a status update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepTimeout {
    pub elapsed_secs: u64,
    pub limit_secs: u64,
    pub timed_out: bool,
}

/// Has the step timed out? An `updated_at` in the future (clock skew) counts as just now.
pub fn step_timeout(updated_at: DateTime<Utc>, now: DateTime<Utc>, limit: Duration) -> StepTimeout {
    let elapsed = (now - updated_at).to_std().unwrap_or(Duration::ZERO);
    StepTimeout {
        elapsed_secs: elapsed.as_secs(),
        limit_secs: limit.as_secs(),
        timed_out: elapsed >= limit,
    }
}

/// `.status.json`'s `updated_at`, when it has one. `Ok(None)` means the field is absent
/// (the caller falls back to the file's modification time); a present but unreadable value
/// is an error, because guessing would fire or mask a timeout.
pub fn status_updated_at(status: &serde_json::Value) -> Result<Option<DateTime<Utc>>, String> {
    match status.get("updated_at") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(text)) => DateTime::parse_from_rfc3339(text)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|e| format!("updated_at {text:?} is not an RFC 3339 timestamp: {e}")),
        Some(other) => Err(format!(
            "updated_at is {other}, not an RFC 3339 timestamp string"
        )),
    }
}

/// The compare-and-swap before a continuation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "kebab-case")]
pub enum Continuation {
    /// `updated_at` is unchanged: nobody moved the task since the daemon looked; send.
    Send,
    /// Someone (the user, the agent) updated the task: do not send.
    Abort { reason: String },
}

/// Decide on a continuation. `observed` is the current `updated_at` string of
/// `.status.json` (`None` when the file or the field is gone). The comparison is on the exact
/// text: a rewrite that happens to name the same instant is still a write by someone else.
pub fn continuation(expected: &str, observed: Option<&str>) -> Continuation {
    match observed {
        Some(now) if now == expected => Continuation::Send,
        Some(now) => Continuation::Abort {
            reason: format!(
                "updated_at changed from {expected:?} to {now:?}: the task moved on (a continuation was already given)"
            ),
        },
        None => Continuation::Abort {
            reason: format!(
                "updated_at {expected:?} can no longer be confirmed (status file or field missing)"
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn three_identical_messages_in_a_row_are_a_loop() {
        let m = [
            "plan the fix",
            "Let me check the tests.",
            "Let me check the tests.",
            "Let me check the tests.",
        ];
        assert!(reasoning_loop(&m, REPEAT_LIMIT));
        assert!(!reasoning_loop(&m[..3], REPEAT_LIMIT));
        let broken = ["same", "same", "other", "same"];
        assert!(!reasoning_loop(&broken, REPEAT_LIMIT));
        assert_eq!(trailing_repeats::<&str>(&[]), 0);
        assert!(
            !reasoning_loop(&["a", "a", "a"], 0),
            "a zero limit never fires"
        );
    }

    #[test]
    fn rerendered_text_is_the_same_message() {
        let m = [
            "Let me check\nthe tests.",
            "\u{1b}[1mLet me check the tests.\u{1b}[0m",
            "  Let  me check the tests.  ",
        ];
        assert!(reasoning_loop(&m, 3));
        assert_eq!(
            normalize_message("\u{1b}]0;title\u{7}hi\tthere\r\n"),
            "hi there"
        );
        // Empty messages neither count nor break the run.
        assert!(reasoning_loop(&["x", "", "x", "   ", "x"], 3));
    }

    #[test]
    fn the_step_timeout_is_ten_minutes_by_default() {
        let updated: DateTime<Utc> = "2026-01-01T10:00:00Z".parse().unwrap();
        let at = |s: &str| -> DateTime<Utc> { s.parse().unwrap() };
        assert!(!step_timeout(updated, at("2026-01-01T10:09:59Z"), STEP_TIMEOUT).timed_out);
        let t = step_timeout(updated, at("2026-01-01T10:10:00Z"), STEP_TIMEOUT);
        assert!(t.timed_out);
        assert_eq!((t.elapsed_secs, t.limit_secs), (600, 600));
        assert!(
            !step_timeout(updated, at("2026-01-01T09:00:00Z"), STEP_TIMEOUT).timed_out,
            "future"
        );
    }

    #[test]
    fn updated_at_is_read_or_refused() {
        use serde_json::json;
        assert_eq!(status_updated_at(&json!({"status": "executing"})), Ok(None));
        assert!(
            status_updated_at(&json!({"updated_at": "2026-01-01T00:00:00+02:00"}))
                .unwrap()
                .is_some()
        );
        assert!(status_updated_at(&json!({"updated_at": "yesterday"})).is_err());
        assert!(status_updated_at(&json!({"updated_at": 17})).is_err());
    }

    #[test]
    fn the_continuation_cas() {
        assert_eq!(
            continuation("2026-01-01T00:00:00Z", Some("2026-01-01T00:00:00Z")),
            Continuation::Send
        );
        assert!(matches!(
            continuation("2026-01-01T00:00:00Z", Some("2026-01-01T00:00:00+00:00")),
            Continuation::Abort { .. }
        ));
        assert!(matches!(
            continuation("2026-01-01T00:00:00Z", None),
            Continuation::Abort { .. }
        ));
    }

    fn message() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("a".to_string()),
            Just(" a ".to_string()),
            Just("b".to_string()),
            Just("".to_string()),
            "[a-c ]{0,4}"
        ]
    }

    proptest! {
        /// The streaming state and the slice function agree on every sequence.
        #[test]
        fn streaming_agrees_with_the_slice(messages in proptest::collection::vec(message(), 0..20)) {
            let mut state = RepeatState::default();
            for (i, m) in messages.iter().enumerate() {
                state = state.observe(m);
                prop_assert_eq!(state.count, trailing_repeats(&messages[..=i]));
                prop_assert_eq!(state.is_loop(REPEAT_LIMIT), reasoning_loop(&messages[..=i], REPEAT_LIMIT));
            }
        }

        /// Once timed out, a later clock stays timed out.
        #[test]
        fn timeouts_are_monotone_in_time(a in 0i64..100_000, b in 0i64..100_000, limit in 1u64..50_000) {
            let updated: DateTime<Utc> = "2026-01-01T00:00:00Z".parse().unwrap();
            let (early, late) = (a.min(b), a.max(b));
            let limit = Duration::from_secs(limit);
            let t1 = step_timeout(updated, updated + chrono::Duration::seconds(early), limit);
            let t2 = step_timeout(updated, updated + chrono::Duration::seconds(late), limit);
            prop_assert!(!t1.timed_out || t2.timed_out);
        }

        /// The screen-aware form never counts fewer than the screen shows, and with one
        /// visible copy it is the plain streaming form.
        #[test]
        fn observe_seen_extends_observe(
            messages in proptest::collection::vec((message(), 1u32..5), 0..20),
        ) {
            let (mut plain, mut seen) = (RepeatState::default(), RepeatState::default());
            for (m, visible) in &messages {
                let once = seen.observe_seen(m, 1);
                prop_assert_eq!(once, seen.observe(m));
                plain = plain.observe(m);
                seen = seen.observe_seen(m, *visible);
                if !normalize_message(m).is_empty() {
                    prop_assert!(seen.count >= *visible);
                    prop_assert!(seen.count >= plain.count);
                }
                prop_assert_eq!(RepeatState::from_hex(seen.last_hex().as_deref(), seen.count), seen);
            }
        }

        #[test]
        fn cas_sends_iff_unchanged(expected in "[0-9TZ:-]{0,25}", observed in proptest::option::of("[0-9TZ:-]{0,25}")) {
            let send = continuation(&expected, observed.as_deref()) == Continuation::Send;
            prop_assert_eq!(send, observed.as_deref() == Some(expected.as_str()));
        }
    }
}
