//! The unchanged screen (seed 000): a capture identical to the previous one (after masking)
//! counts as unchanged; at the threshold the pane is stalled and its classification decides.
//! A safe prompt is answered (spending a recovery), a destructive or unknown one escalated
//! once per distinct screen, and past the recovery budget the decision is a stop with
//! `stall_limit`. The recovery itself is shared by the step timeout ([`super::step_timeout`]).

use super::{Decision, Effects, Limits, Observation, Recovery, StallState, Step, Verdict};
use crate::pane::Action;

pub(super) fn escalate_once(next: &mut StallState, hash: &str, why: &str) -> Decision {
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

/// Spend a recovery on this screen: answer it, restart the agent, or (an idle agent after a
/// step timeout) send the continuation. `why` says what made the pane stalled, when it was
/// not the unchanged count.
pub(super) fn recover(
    next: &mut StallState,
    obs: &Observation,
    limits: &Limits,
    effects: Effects,
    why: &str,
) -> Decision {
    let hash = obs.hash.as_str();
    if next.answered_hash.as_deref() == Some(hash) || obs.answered_marker.as_deref() == Some(hash) {
        return escalate_once(
            next,
            hash,
            "this screen was already answered and did not change",
        );
    }
    if next.recoveries_iteration >= limits.recoveries_per_iteration
        || next.recoveries_total >= limits.recoveries_total
    {
        let why = format!(
            "recovery limit reached ({} of {} this iteration, {} of {} in total)",
            next.recoveries_iteration,
            limits.recoveries_per_iteration,
            next.recoveries_total,
            limits.recoveries_total
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
        Action::Answer => (Step::Answer, effects.answer),
        _ => (Step::Continue, effects.answer),
    };
    let stalled = if why.is_empty() {
        "stalled".to_string()
    } else {
        why.to_string()
    };
    let reason = match step {
        Step::Continue => format!("{stalled}; the agent is idle: send the continuation"),
        _ => format!("{stalled} on a {} prompt", obs.class.as_str()),
    };
    let mut decision = Decision::new(Verdict::Stalled, step, reason);
    if perform {
        decision.perform = true;
        decision.recovery = Some(Recovery {
            hash: hash.to_string(),
            restarts_step_clock: None,
        });
    }
    decision
}
