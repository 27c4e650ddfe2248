//! The step timeout (seed 002, "Silent Continue"): no `.status.json` update for
//! [`STEP_TIMEOUT`] (quota waits excluded) makes the pane stalled whatever its hash says, and
//! the screen decides the recovery as for any stall: a safe prompt is answered, an idle agent
//! gets the continuation prompt ([`CONTINUATION`]), anything else is escalated. An answer
//! spends the answer budget, a continuation a stall recovery; each restarts the step clock.
//!
//! A continuation is sent only after the compare-and-swap ([`continuation`]): `updated_at` is
//! read again under the pane's lock and must still be the value the heartbeat saw, so a
//! continuation the user already gave is never doubled.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{Condition, Diagnosis, Effects, Limits, Response, Sample, StallState, screen};
use crate::pane::{Action, Class};

/// How long a step may go without a `.status.json` update (seed 002).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What a continuation types by default (seed 002: the user says "continue").
pub const CONTINUATION: &str = "continue";

/// `.status.json`'s `updated_at`, when it has one. `Ok(None)` means the field is absent
/// (the caller falls back to the file's modification time); a present but unreadable value
/// is an error, because guessing would fire or mask a timeout.
pub fn status_updated_at(
    status: &serde_json::Value,
) -> Result<Option<DateTime<Utc>>, UpdatedAtError> {
    match status.get("updated_at") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(text)) => DateTime::parse_from_rfc3339(text)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|err| UpdatedAtError::NotATime {
                text: text.clone(),
                err,
            }),
        Some(other) => Err(UpdatedAtError::NotAString(other.to_string())),
    }
}

/// Why `.status.json`'s `updated_at` is not a time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdatedAtError {
    #[error("updated_at {text:?} is not an RFC 3339 timestamp: {err}")]
    NotATime {
        text: String,
        err: chrono::ParseError,
    },
    /// Another JSON value (printed as JSON).
    #[error("updated_at is {0}, not an RFC 3339 timestamp string")]
    NotAString(String),
}

/// A continuation text is typed into an agent: one line, no control characters.
pub fn check_continuation(text: &str) -> anyhow::Result<()> {
    if text.trim().is_empty() {
        anyhow::bail!("the continuation text is empty");
    }
    if text.chars().any(char::is_control) {
        anyhow::bail!(
            "the continuation text {text:?} contains a control character (it is typed as one line, then Enter)"
        );
    }
    if text.len() > 4096 {
        anyhow::bail!("the continuation text is longer than 4096 bytes");
    }
    Ok(())
}

/// The compare-and-swap before a continuation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "diagnosis", rename_all = "kebab-case")]
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

/// A step that went `limit` without a status update: a stall whatever the screen's hash
/// says; the screen decides the recovery.
pub(super) fn check(
    next: &mut StallState,
    obs: &Sample,
    limits: &Limits,
    effects: Effects,
    elapsed: Duration,
    now: DateTime<Utc>,
) -> Diagnosis {
    let limit = limits.step_timeout;
    let why = format!(
        "step timeout: no .status.json update for {} (limit {})",
        crate::duration::format(Duration::from_secs(elapsed.as_secs())),
        crate::duration::format(limit)
    );
    if obs.observe_only {
        return Diagnosis::new(
            Condition::Stalled,
            Response::None,
            format!("{why}, but the program in front is not the agent: observed, never typed into"),
        );
    }
    let diagnosis = match (obs.class, obs.action) {
        // The hooks contradict the prompt: never answered, whatever the timeout says.
        (_, Action::Answer | Action::Restart) if obs.hint == super::Hint::NowNoAnswer => {
            screen::escalate_once(
                next,
                &obs.key,
                &format!(
                    "{why}; the agent's hooks do not report this prompt: never answered, a person decides"
                ),
            )
        }
        (_, Action::Answer | Action::Restart) => screen::recover(next, obs, limits, effects, &why),
        (Class::Idle, _) => screen::recover(next, obs, limits, effects, &why),
        (_, Action::Escalate) => {
            screen::escalate_once(next, &obs.key, &format!("{why}; a person must decide"))
        }
        _ => Diagnosis::new(
            Condition::Stalled,
            Response::Escalate,
            format!(
                "{why} while the agent shows a {} screen; a person should look",
                obs.class.as_str()
            ),
        ),
    };
    let mut diagnosis = diagnosis;
    if !diagnosis.reason.starts_with(&why) {
        diagnosis.reason = format!("{why}; {}", diagnosis.reason);
    }
    // Each step-timeout recovery or report restarts the clock: the next one is a full
    // timeout later, not at the next heartbeat. A recovery restarts it when it is counted.
    if let Some(recovery) = &mut diagnosis.recovery {
        recovery.restarts_step_clock = Some(now);
    } else if diagnosis.perform || diagnosis.response == Response::Escalate {
        next.restart_step_clock(now);
    }
    diagnosis
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    #[test]
    fn the_step_timeout_is_ten_minutes_by_default() {
        assert_eq!(STEP_TIMEOUT, Duration::from_secs(600));
        let start: DateTime<Utc> = "2026-01-01T10:00:00Z".parse().unwrap();
        let mut state = StallState::default();
        state.restart_step_clock(start);
        let at = |s: &str| state.step_elapsed(s.parse().unwrap()).unwrap();
        assert!(at("2026-01-01T10:09:59Z") < STEP_TIMEOUT);
        assert_eq!(at("2026-01-01T10:10:00Z"), STEP_TIMEOUT);
        assert_eq!(
            at("2026-01-01T09:00:00Z"),
            Duration::ZERO,
            "a start in the future"
        );
    }

    proptest! {
        /// Once timed out, a later clock stays timed out.
        #[test]
        fn timeouts_are_monotone_in_time(a in 0i64..100_000, b in 0i64..100_000, limit in 1u64..50_000) {
            let start: DateTime<Utc> = "2026-01-01T00:00:00Z".parse().unwrap();
            let mut state = StallState::default();
            state.restart_step_clock(start);
            let (early, late) = (a.min(b), a.max(b));
            let limit = Duration::from_secs(limit);
            let at = |s: i64| state.step_elapsed(start + chrono::Duration::seconds(s)).unwrap();
            prop_assert!(at(early) < limit || at(late) >= limit);
        }

        #[test]
        fn cas_sends_iff_unchanged(expected in "[0-9TZ:-]{0,25}", observed in proptest::option::of("[0-9TZ:-]{0,25}")) {
            let send = continuation(&expected, observed.as_deref()) == Continuation::Send;
            prop_assert_eq!(send, observed.as_deref() == Some(expected.as_str()));
        }
    }
}
