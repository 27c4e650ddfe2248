//! The per-checkpoint score gate (seed 002, "Threshold & Retry Limits — Adaptive" and the
//! state machine): compare the D1–D6 overall score with the checkpoint's threshold and the
//! attempt with its retry limit, and answer the check's verdict with the reason.
//!
//! | checkpoint | fallback threshold | fallback retry limit | pass | fail | limit exceeded |
//! | post-plan  | 0.70 | 3 replans    | PASS     | NEEDS_REVISION      | stop, notify |
//! | mid-exec   | 0.60 | 2 fixes      | CONTINUE | NEEDS_FIX (REPLAN)  | stop, notify |
//! | post-exec  | 0.75 | 3 fix/replan | ACCEPT   | NEEDS_FIX (REPLAN)  | stop, notify |
//!
//! "Stop, notify" is answered as `BLOCKED` (the task-ai table routes check BLOCKED to
//! `(stop)`, status blocked = awaiting user intervention) with the seed's notification text.

use std::fmt;

use serde::Serialize;

use super::score::{Overall, Score};

/// A checkpoint at which `check` scores the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Checkpoint {
    /// After planning (Phase 2)
    PostPlan,
    /// In the middle of execution (Phase 3)
    MidExec,
    /// After execution (Phase 3 done, Phase 4 acceptance)
    PostExec,
}

impl Checkpoint {
    pub const ALL: [Checkpoint; 3] = [
        Checkpoint::PostPlan,
        Checkpoint::MidExec,
        Checkpoint::PostExec,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Checkpoint::PostPlan => "post-plan",
            Checkpoint::MidExec => "mid-exec",
            Checkpoint::PostExec => "post-exec",
        }
    }

    pub fn from_name(name: &str) -> Option<Checkpoint> {
        Checkpoint::ALL.into_iter().find(|c| c.name() == name)
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// The seed's fallback threshold (used when no profile sets one).
    pub fn fallback_threshold(self) -> Score {
        Score::from_units(match self {
            Checkpoint::PostPlan => 7_000,
            Checkpoint::MidExec => 6_000,
            Checkpoint::PostExec => 7_500,
        })
    }

    /// The seed's fallback retry limit.
    pub fn fallback_retry_limit(self) -> u32 {
        match self {
            Checkpoint::PostPlan => 3,
            Checkpoint::MidExec => 2,
            Checkpoint::PostExec => 3,
        }
    }

    /// What a retry is called at this checkpoint (for reasons).
    fn retry_noun(self, count: u32) -> &'static str {
        match (self, count == 1) {
            (Checkpoint::PostPlan, true) => "replan",
            (Checkpoint::PostPlan, false) => "replans",
            (Checkpoint::MidExec, true) => "fix",
            (Checkpoint::MidExec, false) => "fixes",
            (Checkpoint::PostExec, true) => "fix/replan",
            (Checkpoint::PostExec, false) => "fixes/replans",
        }
    }

    /// The seed's "On Limit Exceeded" column.
    pub fn notification(self) -> &'static str {
        match self {
            Checkpoint::PostPlan => "Plan repeatedly failed review, manual intervention needed",
            Checkpoint::MidExec => {
                "Mid-exec fixes exhausted: current step stopped, manual intervention needed"
            }
            Checkpoint::PostExec => {
                "Execution repeatedly failed acceptance, manual intervention needed"
            }
        }
    }

    fn pass_verdict(self) -> Grade {
        match self {
            Checkpoint::PostPlan => Grade::Pass,
            Checkpoint::MidExec => Grade::Continue,
            Checkpoint::PostExec => Grade::Accept,
        }
    }

    fn fail_verdict(self) -> Grade {
        match self {
            Checkpoint::PostPlan => Grade::NeedsRevision,
            Checkpoint::MidExec | Checkpoint::PostExec => Grade::NeedsFix,
        }
    }
}

impl fmt::Display for Checkpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The check's answer, spelled the way `.auto-signal` results are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Grade {
    Pass,
    NeedsRevision,
    Continue,
    NeedsFix,
    Replan,
    Accept,
    /// The retry limit is exceeded: stop and notify the user.
    Blocked,
}

impl Grade {
    pub fn name(self) -> &'static str {
        match self {
            Grade::Pass => "PASS",
            Grade::NeedsRevision => "NEEDS_REVISION",
            Grade::Continue => "CONTINUE",
            Grade::NeedsFix => "NEEDS_FIX",
            Grade::Replan => "REPLAN",
            Grade::Accept => "ACCEPT",
            Grade::Blocked => "BLOCKED",
        }
    }

    /// Does the work go forward?
    pub fn passes(self) -> bool {
        matches!(self, Grade::Pass | Grade::Continue | Grade::Accept)
    }

    /// An order in which a higher score never gives a lower rank (for the monotonicity
    /// property): stopping < going back to planning < fixing in place < passing.
    pub fn rank(self) -> u8 {
        match self {
            Grade::Blocked => 0,
            Grade::Replan => 1,
            Grade::NeedsRevision | Grade::NeedsFix => 2,
            Grade::Pass | Grade::Continue | Grade::Accept => 3,
        }
    }
}

impl fmt::Display for Grade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a limit came from, so a surprising verdict can be traced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    Flag,
    Profile,
    Fallback,
}

/// Everything the gate decides on.
#[derive(Debug, Clone)]
pub struct GateInput {
    pub checkpoint: Checkpoint,
    /// One overall score, or the six D1–D6 scores (the overall is their mean).
    pub scores: Vec<Score>,
    /// 1 for the first check at this checkpoint; N = retry_count + 1.
    pub attempt: u32,
    pub threshold: Score,
    pub threshold_source: Source,
    pub retry_limit: u32,
    pub retry_limit_source: Source,
    /// Below this overall score a failing mid-exec/post-exec check answers REPLAN instead
    /// of NEEDS_FIX (the seed leaves the choice to the checker; without a floor it is NEEDS_FIX).
    pub replan_below: Option<Score>,
}

/// One D1–D6 dimension in the decision.
#[derive(Debug, Clone, Serialize)]
pub struct Dimension {
    pub name: String,
    pub score: Score,
    pub below_threshold: bool,
}

/// The gate's answer.
#[derive(Debug, Clone, Serialize)]
pub struct GateDecision {
    pub checkpoint: Checkpoint,
    pub verdict: Grade,
    pub pass: bool,
    /// True when the loop must stop and notify the user.
    pub stop: bool,
    pub score: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<Vec<Dimension>>,
    pub threshold: Score,
    pub threshold_source: Source,
    pub attempt: u32,
    pub retry_limit: u32,
    pub retry_limit_source: Source,
    /// Retries still allowed after this verdict.
    pub retries_left: u32,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notify: Option<String>,
}

/// The dimension names of a six-score check.
pub const DIMENSIONS: [&str; 6] = ["D1", "D2", "D3", "D4", "D5", "D6"];

/// Decide. `scores` has one or six entries and `attempt` ≥ 1 (the command checks both).
pub fn decide(input: &GateInput) -> GateDecision {
    let cp = input.checkpoint;
    let overall = Overall::of(&input.scores);
    let passes = overall.at_least(input.threshold);
    let dimensions = dimensions(input);
    let mean = overall.mean();
    let comparison = format!(
        "{} score {mean} {} threshold {}",
        cp,
        if passes { "≥" } else { "<" },
        input.threshold
    );
    let failing = failing(dimensions.as_deref());
    let limit = input.retry_limit;
    let (verdict, reason, retries_left) = if passes {
        (
            cp.pass_verdict(),
            comparison,
            limit.saturating_sub(input.attempt - 1),
        )
    } else if input.attempt > limit {
        (
            Grade::Blocked,
            format!(
                "{comparison}{failing}; retry limit exceeded ({limit} {} already tried): stop and notify the user",
                cp.retry_noun(limit),
            ),
            0,
        )
    } else {
        retry(input, &overall, &comparison, &failing)
    };
    GateDecision {
        checkpoint: cp,
        verdict,
        pass: verdict.passes(),
        stop: verdict == Grade::Blocked,
        score: mean,
        dimensions,
        threshold: input.threshold,
        threshold_source: input.threshold_source,
        attempt: input.attempt,
        retry_limit: limit,
        retry_limit_source: input.retry_limit_source,
        retries_left,
        reason,
        notify: (verdict == Grade::Blocked).then(|| cp.notification().to_string()),
    }
}

/// A six-score check's dimensions, each marked when below the threshold.
fn dimensions(input: &GateInput) -> Option<Vec<Dimension>> {
    (input.scores.len() == DIMENSIONS.len()).then(|| {
        input
            .scores
            .iter()
            .zip(DIMENSIONS)
            .map(|(score, name)| Dimension {
                name: name.to_string(),
                score: *score,
                below_threshold: *score < input.threshold,
            })
            .collect::<Vec<_>>()
    })
}

/// " (below threshold: D2, D5)" when some dimensions are below it, else nothing.
fn failing(dimensions: Option<&[Dimension]>) -> String {
    dimensions
        .map(|dims| {
            dims.iter()
                .filter(|d| d.below_threshold)
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
        })
        .filter(|names| !names.is_empty())
        .map(|names| format!(" (below threshold: {})", names.join(", ")))
        .unwrap_or_default()
}

/// A failed check with retries left: back to planning below the replan floor (not after
/// planning itself), else the checkpoint's own fix; the verdict, its reason and the retries
/// left after this one.
fn retry(
    input: &GateInput,
    overall: &Overall,
    comparison: &str,
    failing: &str,
) -> (Grade, String, u32) {
    let cp = input.checkpoint;
    let limit = input.retry_limit;
    let replan =
        cp != Checkpoint::PostPlan && input.replan_below.is_some_and(|floor| overall.below(floor));
    let verdict = if replan {
        Grade::Replan
    } else {
        cp.fail_verdict()
    };
    let what = match verdict {
        Grade::Replan => format!(
            "below the replan floor {}: back to planning",
            input.replan_below.unwrap_or(Score::ZERO)
        ),
        Grade::NeedsRevision => "revise the plan".to_string(),
        _ => "fix".to_string(),
    };
    (
        verdict,
        format!(
            "{comparison}{failing}; {what} ({} {} of {limit})",
            cp.retry_noun(1),
            input.attempt
        ),
        limit - input.attempt,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(text: &str) -> Score {
        Score::parse(text).unwrap()
    }

    fn input(cp: Checkpoint, score: &str, attempt: u32) -> GateInput {
        GateInput {
            checkpoint: cp,
            scores: vec![s(score)],
            attempt,
            threshold: cp.fallback_threshold(),
            threshold_source: Source::Fallback,
            retry_limit: cp.fallback_retry_limit(),
            retry_limit_source: Source::Fallback,
            replan_below: None,
        }
    }

    /// The seed's table, row by row: fallback threshold and retry limit, the verdict just
    /// at and just below the threshold, the last allowed retry and the first refused one.
    #[test]
    fn the_seed_table_row_by_row() {
        let rows = [
            (
                Checkpoint::PostPlan,
                "0.70",
                3,
                "PASS",
                "NEEDS_REVISION",
                "Plan repeatedly failed review, manual intervention needed",
            ),
            (
                Checkpoint::MidExec,
                "0.60",
                2,
                "CONTINUE",
                "NEEDS_FIX",
                "Mid-exec fixes exhausted: current step stopped, manual intervention needed",
            ),
            (
                Checkpoint::PostExec,
                "0.75",
                3,
                "ACCEPT",
                "NEEDS_FIX",
                "Execution repeatedly failed acceptance, manual intervention needed",
            ),
        ];
        for (cp, threshold, limit, pass, fail, notify) in rows {
            assert_eq!(cp.fallback_threshold(), s(threshold), "{cp}");
            assert_eq!(cp.fallback_retry_limit(), limit, "{cp}");
            let at = decide(&input(cp, threshold, 1));
            assert_eq!(at.verdict.name(), pass, "{cp} at the threshold passes");
            assert!(at.pass && !at.stop);
            let below = Score::from_units(s(threshold).units() - 1).to_string();
            let first = decide(&input(cp, &below, 1));
            assert_eq!(first.verdict.name(), fail, "{cp} just below");
            assert_eq!(first.retries_left, limit - 1);
            let last = decide(&input(cp, &below, limit));
            assert_eq!(last.verdict.name(), fail, "{cp} last allowed retry");
            assert_eq!(last.retries_left, 0);
            let over = decide(&input(cp, &below, limit + 1));
            assert_eq!(over.verdict, Grade::Blocked, "{cp} limit exceeded");
            assert!(over.stop && !over.pass);
            assert_eq!(over.notify.as_deref(), Some(notify));
            assert!(
                over.reason.contains("retry limit exceeded"),
                "{}",
                over.reason
            );
        }
    }

    #[test]
    fn six_dimensions_gate_on_their_mean_and_name_the_failing_ones() {
        let mut gate = input(Checkpoint::PostExec, "0", 1);
        gate.scores = ["0.9", "0.9", "0.9", "0.6", "0.6", "0.6"].map(s).to_vec();
        let decision = decide(&gate);
        assert_eq!(decision.verdict, Grade::Accept, "mean 0.75 = threshold");
        gate.scores[0] = s("0.8999");
        let decision = decide(&gate);
        assert_eq!(decision.verdict, Grade::NeedsFix);
        assert!(
            decision.reason.contains("below threshold: D4, D5, D6"),
            "{}",
            decision.reason
        );
        let dims = decision.dimensions.unwrap();
        assert_eq!(dims.iter().filter(|d| d.below_threshold).count(), 3);
    }

    #[test]
    fn the_replan_floor_applies_after_planning_only() {
        for cp in [Checkpoint::MidExec, Checkpoint::PostExec] {
            let mut gate = input(cp, "0.30", 1);
            gate.replan_below = Some(s("0.4"));
            assert_eq!(decide(&gate).verdict, Grade::Replan, "{cp}");
            gate.scores = vec![s("0.4")];
            assert_eq!(
                decide(&gate).verdict,
                Grade::NeedsFix,
                "{cp}: at the floor is a fix"
            );
            gate.attempt = 9;
            assert_eq!(
                decide(&gate).verdict,
                Grade::Blocked,
                "{cp}: replans count as retries"
            );
        }
        let mut gate = input(Checkpoint::PostPlan, "0.1", 1);
        gate.replan_below = Some(s("0.5"));
        assert_eq!(decide(&gate).verdict, Grade::NeedsRevision);
    }

    #[test]
    fn a_zero_retry_limit_stops_at_the_first_failure() {
        let mut gate = input(Checkpoint::MidExec, "0.1", 1);
        gate.retry_limit = 0;
        assert_eq!(decide(&gate).verdict, Grade::Blocked);
        gate.scores = vec![s("0.9")];
        assert_eq!(decide(&gate).verdict, Grade::Continue);
    }

    fn checkpoint() -> impl Strategy<Value = Checkpoint> {
        prop_oneof![
            Just(Checkpoint::PostPlan),
            Just(Checkpoint::MidExec),
            Just(Checkpoint::PostExec)
        ]
    }

    proptest! {
        /// A higher score never gives a worse verdict, whatever the other inputs.
        #[test]
        fn verdicts_are_monotone_in_the_score(
            cp in checkpoint(),
            a in 0u32..=10_000,
            b in 0u32..=10_000,
            threshold in 0u32..=10_000,
            limit in 0u32..6,
            attempt in 1u32..9,
            floor in proptest::option::of(0u32..=10_000),
            six in any::<bool>(),
        ) {
            let (low, high) = (a.min(b), a.max(b));
            let gate = |units: u32| {
                decide(&GateInput {
                    checkpoint: cp,
                    scores: vec![Score::from_units(units); if six { 6 } else { 1 }],
                    attempt,
                    threshold: Score::from_units(threshold),
                    threshold_source: Source::Flag,
                    retry_limit: limit,
                    retry_limit_source: Source::Flag,
                    replan_below: floor.map(Score::from_units),
                })
            };
            let (lo, hi) = (gate(low), gate(high));
            prop_assert!(lo.verdict.rank() <= hi.verdict.rank(), "{:?} at {} vs {:?} at {}", lo.verdict, low, hi.verdict, high);
            // The pass boundary is exactly the threshold.
            prop_assert_eq!(hi.pass, high >= threshold);
        }
    }
}
