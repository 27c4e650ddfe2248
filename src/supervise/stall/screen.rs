//! The unchanged screen (seed 000): a capture identical to the previous one (after masking)
//! counts as unchanged; at the threshold the pane is stalled and its classification decides.
//! A prompt the policy proved harmless is answered (spending the answer budget, not a
//! recovery; past it the prompt is escalated), a destructive or unknown one escalated once
//! per distinct screen; a restart or a continuation spends a recovery, and past the recovery
//! budget the diagnosis is a stop with `stall_limit`. The recovery itself is shared by the
//! step timeout ([`super::step_timeout`]).

use super::{Condition, Diagnosis, Effects, Limits, Recovery, Response, Sample, Spend, StallState};
use crate::pane::Action;

pub(super) fn escalate_once(next: &mut StallState, key: &str, why: &str) -> Diagnosis {
    if next.escalated_hash.as_deref() == Some(key) {
        return Diagnosis::new(
            Condition::Stalled,
            Response::None,
            "already escalated this prompt; waiting for a person",
        );
    }
    next.escalated_hash = Some(key.to_string());
    Diagnosis::new(Condition::Stalled, Response::Escalate, why)
}

/// Recover this screen: answer its prompt (the answer budget), restart the agent, or (an idle
/// agent after a step timeout) send the continuation (a stall recovery each). `why` says what
/// made the pane stalled, when it was not the unchanged count.
pub(super) fn recover(
    next: &mut StallState,
    obs: &Sample,
    limits: &Limits,
    effects: Effects,
    why: &str,
) -> Diagnosis {
    let hash = obs.hash.as_str();
    if next.answered_hash.as_deref() == Some(hash) || obs.answered_marker.as_deref() == Some(hash) {
        return escalate_once(
            next,
            &obs.key,
            "this screen was already answered and did not change",
        );
    }
    let answer = obs.action == Action::Answer;
    if answer && next.answers_step >= limits.max_answers {
        // Approving harmless work never stops a run: a person looks at the next one.
        let why = format!(
            "answer limit reached ({} of {} this step): a person decides",
            next.answers_step, limits.max_answers
        );
        let mut diagnosis = escalate_once(next, &obs.key, &why);
        diagnosis.condition = Condition::Limit;
        return diagnosis;
    }
    if !answer
        && (next.recoveries_iteration >= limits.recoveries_per_iteration
            || next.recoveries_total >= limits.recoveries_total)
    {
        let why = format!(
            "recovery limit reached ({} of {} this iteration, {} of {} in total)",
            next.recoveries_iteration,
            limits.recoveries_per_iteration,
            next.recoveries_total,
            limits.recoveries_total
        );
        if next.limit_reached {
            return Diagnosis::new(
                Condition::Limit,
                Response::None,
                format!("{why}; a stop was already requested"),
            );
        }
        let mut diagnosis = Diagnosis::new(Condition::Limit, Response::Stop, why);
        if effects.stop {
            next.limit_reached = true;
            diagnosis.perform = true;
        }
        return diagnosis;
    }
    let (step, perform) = match obs.action {
        Action::Restart => (Response::Restart, effects.restart),
        Action::Answer => (Response::Answer, effects.answer),
        _ => (Response::Continue, effects.answer),
    };
    let stalled = if why.is_empty() {
        "stalled".to_string()
    } else {
        why.to_string()
    };
    let reason = match step {
        Response::Continue => format!("{stalled}; the agent is idle: send the continuation"),
        _ => format!("{stalled} on a {} prompt", obs.class.as_str()),
    };
    let mut diagnosis = Diagnosis::new(Condition::Stalled, step, reason);
    if perform {
        diagnosis.perform = true;
        diagnosis.recovery = Some(Recovery {
            hash: hash.to_string(),
            spend: if answer {
                Spend::Answer
            } else {
                Spend::Recovery
            },
            restarts_step_clock: None,
        });
    }
    diagnosis
}
