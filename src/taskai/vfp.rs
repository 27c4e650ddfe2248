//! task-ai's VFP cycle tracking (software task types): every exec step either turns a
//! verification hole into a passing test — a VH→HS transition, one completed cycle — or does
//! not. Three steps or more without one is the anomaly that triggers a mid-exec check "with
//! note: VFP anomaly: N steps without VH→HS transition — verify test discipline".
//!
//! The seed keeps the counters in memory; here they are a small state file (`autoctl vfp
//! step --state FILE`) so they survive a compaction, and the decision is this pure function.

use serde::{Deserialize, Serialize};

/// Steps without a transition that trigger the anomaly (seed: "3+ steps").
pub const DEFAULT_ANOMALY_AFTER: u32 = 3;

/// The format version of the state file.
pub const VERSION: u32 = 1;

/// The tracker's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VfpState {
    pub version: u32,
    /// VH→HS transitions seen (`vfp_cycles_completed`).
    pub cycles_completed: u64,
    /// Exec steps since the last transition (or since the last anomaly was raised).
    pub steps_without_transition: u32,
    /// The VH stubs the plan generated, for `cycles_completed / vh_stubs_total`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vh_stubs_total: Option<u64>,
    /// Anomalies raised so far.
    pub anomalies: u64,
    pub updated_at: String,
}

impl VfpState {
    pub fn new(now: &str) -> VfpState {
        VfpState {
            version: VERSION,
            cycles_completed: 0,
            steps_without_transition: 0,
            vh_stubs_total: None,
            anomalies: 0,
            updated_at: now.to_string(),
        }
    }
}

/// A raised anomaly: the check it triggers and the seed's note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Anomaly {
    pub steps: u32,
    /// The step and checkpoint to run (`check`, `mid-exec`).
    pub next: &'static str,
    pub checkpoint: &'static str,
    pub note: String,
}

/// The seed's note.
pub fn note(steps: u32) -> String {
    format!("VFP anomaly: {steps} steps without VH→HS transition — verify test discipline")
}

/// Record one exec step. A transition completes a cycle and restarts the count; `threshold`
/// steps in a row without one raise the anomaly, and the count restarts so the next anomaly
/// needs as many steps again.
pub fn step(
    state: &VfpState,
    transition: bool,
    threshold: u32,
    now: &str,
) -> (VfpState, Option<Anomaly>) {
    let mut next = state.clone();
    next.updated_at = now.to_string();
    if transition {
        next.cycles_completed = next.cycles_completed.saturating_add(1);
        next.steps_without_transition = 0;
        return (next, None);
    }
    next.steps_without_transition = next.steps_without_transition.saturating_add(1);
    if threshold > 0 && next.steps_without_transition >= threshold {
        let steps = next.steps_without_transition;
        next.steps_without_transition = 0;
        next.anomalies = next.anomalies.saturating_add(1);
        return (
            next,
            Some(Anomaly {
                steps,
                next: "check",
                checkpoint: "mid-exec",
                note: note(steps),
            }),
        );
    }
    (next, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NOW: &str = "2026-11-26T10:00:00Z";

    #[test]
    fn three_steps_without_a_transition_trigger_a_mid_exec_check() {
        let mut s = VfpState::new(NOW);
        for _ in 0..2 {
            let (next, anomaly) = step(&s, false, DEFAULT_ANOMALY_AFTER, NOW);
            assert!(anomaly.is_none());
            s = next;
        }
        let (s, anomaly) = step(&s, false, DEFAULT_ANOMALY_AFTER, NOW);
        let anomaly = anomaly.unwrap();
        assert_eq!((anomaly.next, anomaly.checkpoint), ("check", "mid-exec"));
        assert_eq!(
            anomaly.note,
            "VFP anomaly: 3 steps without VH→HS transition — verify test discipline"
        );
        assert_eq!((s.steps_without_transition, s.anomalies), (0, 1));
        let (s, _) = step(&s, true, DEFAULT_ANOMALY_AFTER, NOW);
        assert_eq!(s.cycles_completed, 1);
    }

    proptest! {
        /// An anomaly is raised exactly when `threshold` steps in a row had no transition,
        /// and cycles only grow.
        #[test]
        fn anomalies_follow_the_runs(threshold in 1u32..5, steps in proptest::collection::vec(any::<bool>(), 0..50)) {
            let mut s = VfpState::new(NOW);
            let mut run = 0u32;
            for transition in steps {
                let before = s.cycles_completed;
                let (next, anomaly) = step(&s, transition, threshold, NOW);
                prop_assert!(next.cycles_completed >= before);
                if transition { run = 0; } else { run += 1; }
                prop_assert_eq!(anomaly.is_some(), run == threshold);
                if anomaly.is_some() { run = 0; }
                s = next;
            }
        }
    }
}
