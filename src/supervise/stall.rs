//! One stall heartbeat as a pure function: `heartbeat(state, observation, now, limits,
//! effects) -> (state', decision)`.
//!
//! Storage-agnostic on purpose: `stall check` keeps [`StallState`] in a JSON file, `run tick`
//! keeps the same fields in SQLite rows. The observation is a plain struct built from one
//! capture (hash, classification, the pane's own answered-marker, the task's signal); later
//! stall kinds (content-based loops) add fields to it without changing the callers.
//!
//! The rules, from seed 000 and DESIGN.md:
//! - a screen identical to the previous capture (after masking) counts as unchanged; at
//!   `threshold` unchanged captures the pane is stalled and the classification decides;
//! - `wait` (quota, rate limits) is never a stall: the count restarts, no recovery is spent,
//!   and `quota_wait_since` records when the wait began (the timeout clock pauses);
//! - an answer or a restart spends one recovery; past `per_iteration` or `total` the decision
//!   is `stop` (the caller writes `.auto-stop` with `stall_limit`); a new signal iteration
//!   restores the per-iteration budget;
//! - a screen that was already answered and did not change is escalated, not answered again;
//!   an escalation is reported once per distinct screen.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::pane::{Action, Class};

/// What one stall monitor remembers between heartbeats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StallState {
    /// Normalized hash of the last capture.
    #[serde(default)]
    pub last_hash: Option<String>,
    /// Consecutive captures equal to the one before.
    #[serde(default)]
    pub unchanged: u32,
    #[serde(default)]
    pub recoveries_iteration: u32,
    #[serde(default)]
    pub recoveries_total: u32,
    /// When the current quota or rate-limit wait began (RFC 3339).
    #[serde(default)]
    pub quota_wait_since: Option<String>,
    /// Seconds spent in finished waits (the timeout clock does not count them).
    #[serde(default)]
    pub quota_waited_seconds: u64,
    /// The signal iteration seen last (or, for signals without one, its timestamp).
    #[serde(default)]
    pub signal_iteration: Option<u64>,
    #[serde(default)]
    pub signal_timestamp: Option<String>,
    /// The screen last answered or restarted (its hash).
    #[serde(default)]
    pub answered_hash: Option<String>,
    /// The screen last escalated (its hash): escalations are reported once per screen.
    #[serde(default)]
    pub escalated_hash: Option<String>,
    /// A stop was requested for the recovery limits (not requested again until the budget
    /// is restored by a new iteration).
    #[serde(default)]
    pub limit_reached: bool,
    #[serde(default)]
    pub checks: u64,
    #[serde(default)]
    pub last_check_at: Option<String>,
}

/// The identity of the task's latest signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalMark {
    pub iteration: Option<u64>,
    pub timestamp: String,
}

/// What one capture showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// Normalized screen hash.
    pub hash: String,
    pub class: Class,
    /// The classification's action (already `escalate` for destructive prompts and `none`
    /// for observe-only screens).
    pub action: Action,
    /// The program in front is not the agent: never acted on.
    pub observe_only: bool,
    /// The screen hash the pane itself remembers as answered (by any supervisor).
    pub answered_marker: Option<String>,
    /// The task's latest signal, when a task is supervised.
    pub signal: Option<SignalMark>,
}

/// Thresholds and recovery budgets (seed defaults 3, 3, 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub threshold: u32,
    pub per_iteration: u32,
    pub total: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            threshold: 3,
            per_iteration: 3,
            total: 10,
        }
    }
}

/// Which decisions the caller will carry out. A recovery is only spent (and a stop only
/// remembered) when it is carried out, so a dry run never consumes the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Effects {
    pub answer: bool,
    pub restart: bool,
    pub stop: bool,
}

/// How the pane is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The screen changed since the last capture.
    Progress,
    /// Unchanged, below the threshold.
    Unchanged,
    /// Unchanged at or past the threshold.
    Stalled,
    /// A quota or rate-limit wait: not a stall.
    Waiting,
    /// A recovery was due but the budget is spent.
    Limit,
}

/// What to do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    None,
    Wait,
    Answer,
    Escalate,
    Restart,
    /// Request a stop (`.auto-stop`, reason `stall_limit`).
    Stop,
}

/// The decision of one heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub verdict: Verdict,
    pub step: Step,
    /// The caller will carry the step out (per [`Effects`]); the state already counts it.
    pub perform: bool,
    pub reason: String,
}

impl Decision {
    fn new(verdict: Verdict, step: Step, reason: impl Into<String>) -> Decision {
        Decision {
            verdict,
            step,
            perform: false,
            reason: reason.into(),
        }
    }
}

fn timestamp(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// One heartbeat.
pub fn heartbeat(
    state: &StallState,
    obs: &Observation,
    now: DateTime<Utc>,
    limits: &Limits,
    effects: Effects,
) -> (StallState, Decision) {
    let mut next = state.clone();
    next.checks = next.checks.saturating_add(1);
    next.last_check_at = Some(timestamp(now));

    if let Some(signal) = &obs.signal {
        // A loop that numbers its iterations is identified by the number; one that does
        // not, by each signal it writes.
        let new_iteration = match signal.iteration {
            Some(iteration) => next.signal_iteration != Some(iteration),
            None => {
                next.signal_iteration.is_some()
                    || next.signal_timestamp.as_deref() != Some(&signal.timestamp)
            }
        };
        if new_iteration {
            next.recoveries_iteration = 0;
            next.limit_reached = false;
        }
        next.signal_iteration = signal.iteration;
        next.signal_timestamp = Some(signal.timestamp.clone());
    }

    if obs.action == Action::Wait {
        if next.quota_wait_since.is_none() {
            next.quota_wait_since = Some(timestamp(now));
        }
        next.unchanged = 0;
        next.last_hash = Some(obs.hash.clone());
        let reason = format!("{}: waiting; not a stall", obs.class.as_str());
        return (next, Decision::new(Verdict::Waiting, Step::Wait, reason));
    }
    if let Some(since) = next.quota_wait_since.take() {
        let waited = DateTime::parse_from_rfc3339(&since)
            .map(|since| (now - since.with_timezone(&Utc)).num_seconds().max(0) as u64)
            .unwrap_or(0);
        next.quota_waited_seconds = next.quota_waited_seconds.saturating_add(waited);
    }

    if next.last_hash.as_deref() != Some(obs.hash.as_str()) {
        next.last_hash = Some(obs.hash.clone());
        next.unchanged = 0;
        return (
            next,
            Decision::new(Verdict::Progress, Step::None, "the screen changed"),
        );
    }
    next.unchanged = next.unchanged.saturating_add(1);
    if next.unchanged < limits.threshold {
        let reason = format!(
            "unchanged {} of {} captures",
            next.unchanged, limits.threshold
        );
        return (next, Decision::new(Verdict::Unchanged, Step::None, reason));
    }

    if obs.observe_only {
        return (
            next,
            Decision::new(
                Verdict::Stalled,
                Step::None,
                "stalled, but the program in front is not the agent: observed, never typed into",
            ),
        );
    }
    let decision = match obs.action {
        Action::None | Action::Wait => Decision::new(
            Verdict::Stalled,
            Step::None,
            format!(
                "stalled on a {} screen; no recovery applies",
                obs.class.as_str()
            ),
        ),
        Action::Escalate => escalate_once(&mut next, &obs.hash, "a person must decide"),
        Action::Answer | Action::Restart => recover(&mut next, obs, limits, effects),
    };
    (next, decision)
}

fn escalate_once(next: &mut StallState, hash: &str, why: &str) -> Decision {
    if next.escalated_hash.as_deref() == Some(hash) {
        return Decision::new(
            Verdict::Stalled,
            Step::None,
            "already escalated this screen; waiting for a person",
        );
    }
    next.escalated_hash = Some(hash.to_string());
    Decision::new(Verdict::Stalled, Step::Escalate, why)
}

fn recover(
    next: &mut StallState,
    obs: &Observation,
    limits: &Limits,
    effects: Effects,
) -> Decision {
    let hash = obs.hash.as_str();
    if next.answered_hash.as_deref() == Some(hash) || obs.answered_marker.as_deref() == Some(hash) {
        return escalate_once(
            next,
            hash,
            "this screen was already answered and did not change",
        );
    }
    if next.recoveries_iteration >= limits.per_iteration || next.recoveries_total >= limits.total {
        let why = format!(
            "recovery limit reached ({} of {} this iteration, {} of {} in total)",
            next.recoveries_iteration, limits.per_iteration, next.recoveries_total, limits.total
        );
        if next.limit_reached {
            return Decision::new(
                Verdict::Limit,
                Step::None,
                format!("{why}; a stop was already requested"),
            );
        }
        let mut decision = Decision::new(Verdict::Limit, Step::Stop, why);
        if effects.stop {
            next.limit_reached = true;
            decision.perform = true;
        }
        return decision;
    }
    let (step, perform) = match obs.action {
        Action::Restart => (Step::Restart, effects.restart),
        _ => (Step::Answer, effects.answer),
    };
    let mut decision = Decision::new(
        Verdict::Stalled,
        step,
        format!("stalled on a {} prompt", obs.class.as_str()),
    );
    if perform {
        next.recoveries_iteration += 1;
        next.recoveries_total += 1;
        next.answered_hash = Some(hash.to_string());
        next.unchanged = 0;
        decision.perform = true;
    }
    decision
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;
    use proptest::prelude::*;

    const ALL: Effects = Effects {
        answer: true,
        restart: true,
        stop: true,
    };

    fn t0() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn obs(hash: &str, class: Class, action: Action) -> Observation {
        Observation {
            hash: hash.to_string(),
            class,
            action,
            observe_only: false,
            answered_marker: None,
            signal: None,
        }
    }

    fn run(
        state: &mut StallState,
        o: &Observation,
        minute: i64,
        limits: &Limits,
        effects: Effects,
    ) -> Decision {
        let (next, decision) =
            heartbeat(state, o, t0() + Duration::minutes(minute), limits, effects);
        *state = next;
        decision
    }

    #[test]
    fn three_unchanged_captures_make_a_stall_and_the_prompt_is_answered() {
        let limits = Limits::default();
        let mut state = StallState::default();
        let prompt = obs("h1", Class::Permission, Action::Answer);
        let steps: Vec<(Verdict, Step)> = (0..4)
            .map(|m| {
                let d = run(&mut state, &prompt, m, &limits, ALL);
                (d.verdict, d.step)
            })
            .collect();
        assert_eq!(
            steps,
            vec![
                (Verdict::Progress, Step::None),
                (Verdict::Unchanged, Step::None),
                (Verdict::Unchanged, Step::None),
                (Verdict::Stalled, Step::Answer),
            ]
        );
        assert_eq!((state.recoveries_iteration, state.recoveries_total), (1, 1));
        assert_eq!(state.unchanged, 0);
        // The same screen again (the answer did not take): escalate once, then stay quiet.
        for m in 4..6 {
            run(&mut state, &prompt, m, &limits, ALL);
        }
        let d = run(&mut state, &prompt, 6, &limits, ALL);
        assert_eq!(d.step, Step::Escalate, "{}", d.reason);
        let d = run(&mut state, &prompt, 7, &limits, ALL);
        assert_eq!(d.step, Step::None);
        assert_eq!(state.recoveries_total, 1);
    }

    #[test]
    fn a_dry_run_spends_nothing() {
        let limits = Limits::default();
        let mut state = StallState::default();
        let prompt = obs("h1", Class::YesNo, Action::Answer);
        for m in 0..10 {
            let d = run(&mut state, &prompt, m, &limits, Effects::default());
            assert!(!d.perform);
        }
        assert_eq!(state.recoveries_total, 0);
        assert_eq!(state.unchanged, 9);
    }

    #[test]
    fn the_pane_marker_prevents_answering_what_another_supervisor_answered() {
        let limits = Limits {
            threshold: 1,
            ..Limits::default()
        };
        let mut state = StallState {
            last_hash: Some("h".into()),
            ..StallState::default()
        };
        let mut prompt = obs("h", Class::YesNo, Action::Answer);
        prompt.answered_marker = Some("h".into());
        let d = run(&mut state, &prompt, 0, &limits, ALL);
        assert_eq!(d.step, Step::Escalate);
        assert_eq!(state.recoveries_total, 0);
    }

    #[test]
    fn limits_fire_and_a_new_iteration_restores_the_per_iteration_budget() {
        let limits = Limits {
            threshold: 1,
            per_iteration: 2,
            total: 3,
        };
        let mut state = StallState::default();
        let mut minute = 0;
        let mut answers = 0;
        let mut stops = 0;
        for iteration in 0..3u64 {
            for screen in 0..4 {
                let mut o = obs(
                    &format!("i{iteration}s{screen}"),
                    Class::YesNo,
                    Action::Answer,
                );
                o.signal = Some(SignalMark {
                    iteration: Some(iteration),
                    timestamp: format!("t{iteration}"),
                });
                // Two captures per screen: the first is progress, the second a stall.
                run(&mut state, &o, minute, &limits, ALL);
                let d = run(&mut state, &o, minute + 1, &limits, ALL);
                minute += 2;
                match d.step {
                    Step::Answer => answers += 1,
                    Step::Stop => stops += 1,
                    _ => {}
                }
            }
        }
        assert_eq!(answers, 3, "the total budget");
        assert_eq!(state.recoveries_total, 3);
        assert!(stops >= 2, "a stop per iteration once the budget is gone");
    }

    #[test]
    fn quota_waits_pause_and_are_accounted() {
        let limits = Limits::default();
        let mut state = StallState::default();
        let quota = obs("q", Class::Quota, Action::Wait);
        for m in 0..5 {
            let d = run(&mut state, &quota, m, &limits, ALL);
            assert_eq!((d.verdict, d.step), (Verdict::Waiting, Step::Wait));
        }
        assert_eq!(
            state.quota_wait_since.as_deref(),
            Some("2026-01-01T00:00:00Z")
        );
        assert_eq!(state.unchanged, 0);
        run(
            &mut state,
            &obs("after", Class::Idle, Action::None),
            30,
            &limits,
            ALL,
        );
        assert_eq!(state.quota_wait_since, None);
        assert_eq!(state.quota_waited_seconds, 30 * 60);
    }

    #[test]
    fn observe_only_screens_stall_but_are_never_acted_on() {
        let limits = Limits {
            threshold: 1,
            ..Limits::default()
        };
        let mut state = StallState::default();
        let mut o = obs("c", Class::YesNo, Action::None);
        o.observe_only = true;
        run(&mut state, &o, 0, &limits, ALL);
        let d = run(&mut state, &o, 1, &limits, ALL);
        assert_eq!((d.verdict, d.step), (Verdict::Stalled, Step::None));
    }

    fn any_observation() -> impl Strategy<Value = Observation> {
        (
            0u8..4,
            prop_oneof![
                Just((Class::Unknown, Action::None)),
                Just((Class::Working, Action::None)),
                Just((Class::Permission, Action::Answer)),
                Just((Class::Trust, Action::Escalate)),
                Just((Class::Quota, Action::Wait)),
                Just((Class::RateLimit, Action::Wait)),
                Just((Class::Shell, Action::Restart)),
            ],
            any::<bool>(),
            prop::option::of(0u64..3),
            any::<bool>(),
        )
            .prop_map(|(hash, (class, action), observe_only, iteration, marked)| {
                Observation {
                    hash: format!("h{hash}"),
                    class,
                    action,
                    observe_only,
                    answered_marker: marked.then(|| format!("h{hash}")),
                    signal: iteration.map(|i| SignalMark {
                        iteration: Some(i),
                        timestamp: format!("t{i}"),
                    }),
                }
            })
    }

    fn any_limits() -> impl Strategy<Value = Limits> {
        (1u32..5, 0u32..4, 0u32..6).prop_map(|(threshold, per_iteration, total)| Limits {
            threshold,
            per_iteration,
            total,
        })
    }

    proptest! {
        #[test]
        fn the_unchanged_counter_never_goes_backwards_on_the_same_screen(
            observations in prop::collection::vec(any_observation(), 1..60),
            limits in any_limits(),
        ) {
            let mut state = StallState::default();
            for (i, o) in observations.iter().enumerate() {
                let before = state.clone();
                let d = run(&mut state, o, i as i64, &limits, ALL);
                let same_screen = before.last_hash.as_deref() == Some(o.hash.as_str());
                if same_screen && o.action != Action::Wait && !d.perform {
                    prop_assert_eq!(state.unchanged, before.unchanged + 1);
                }
                prop_assert!(state.recoveries_total >= before.recoveries_total);
                prop_assert!(state.checks == before.checks + 1);
            }
        }

        #[test]
        fn limits_always_fire(
            observations in prop::collection::vec(any_observation(), 1..80),
            limits in any_limits(),
        ) {
            let mut state = StallState::default();
            for (i, o) in observations.iter().enumerate() {
                let before = state.clone();
                let d = run(&mut state, o, i as i64, &limits, ALL);
                prop_assert!(state.recoveries_total <= limits.total);
                prop_assert!(state.recoveries_iteration <= limits.per_iteration);
                if matches!(d.step, Step::Answer | Step::Restart) {
                    // A new signal iteration in this very observation restores the
                    // per-iteration budget before the decision.
                    let new_iteration = state.signal_iteration != before.signal_iteration
                        || state.signal_timestamp != before.signal_timestamp;
                    let used = if new_iteration { 0 } else { before.recoveries_iteration };
                    prop_assert!(used < limits.per_iteration);
                    prop_assert!(before.recoveries_total < limits.total);
                }
                // A due recovery with no budget left is a stop (or one was already asked).
                if d.verdict == Verdict::Limit {
                    prop_assert!(d.step == Step::Stop || before.limit_reached);
                }
            }
        }

        #[test]
        fn quota_time_never_counts_toward_a_stall(
            observations in prop::collection::vec(any_observation(), 1..60),
            limits in any_limits(),
        ) {
            let mut state = StallState::default();
            let mut since_wait: Option<u32> = None;
            for (i, o) in observations.iter().enumerate() {
                let d = run(&mut state, o, i as i64, &limits, ALL);
                if o.action == Action::Wait {
                    prop_assert_eq!(state.unchanged, 0);
                    prop_assert_eq!(d.verdict, Verdict::Waiting);
                    prop_assert!(!d.perform);
                    since_wait = Some(0);
                } else if let Some(n) = since_wait.as_mut() {
                    *n += 1;
                    // The count after a wait only includes captures taken after it.
                    prop_assert!(state.unchanged <= *n);
                }
            }
        }
    }
}
