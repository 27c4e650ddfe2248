//! The convergence gate and next-stage decision (seed 002, Phase 4):
//!
//! - convergence > previous → ACCEPT (status → evolving → report → next stage decision);
//!   at or above the satisfaction bar (0.95) the task is SATISFIED (final report);
//! - convergence ≤ previous → ROLLBACK: the direction goes on the exclusion list and a new
//!   sub-stage target is generated; when the list reaches the allowed number of directions,
//!   they are EXHAUSTED (stop and report to the user).
//!
//! The exclusion list lives in a history document (`--history FILE`, schema
//! `converge-history`), which also remembers the last accepted convergence so `--previous`
//! can be omitted.

use serde::{Deserialize, Serialize};

use super::score::Score;

/// The seed's satisfaction bar.
pub const SATISFIED: Score = Score::from_units(9_500);

/// The history document's schema version.
pub const HISTORY_VERSION: &str = "v1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Ruling {
    /// Convergence rose; keep going with the next sub-stage.
    Accept,
    /// Convergence rose to the satisfaction bar: final report.
    Satisfied,
    /// Convergence did not rise: roll back, exclude this direction, regenerate.
    Rollback,
    /// Rolled back and every allowed direction is excluded: stop and report to the user.
    Exhausted,
}

impl Ruling {
    pub fn name(self) -> &'static str {
        match self {
            Ruling::Accept => "ACCEPT",
            Ruling::Satisfied => "SATISFIED",
            Ruling::Rollback => "ROLLBACK",
            Ruling::Exhausted => "EXHAUSTED",
        }
    }

    pub fn accepted(self) -> bool {
        matches!(self, Ruling::Accept | Ruling::Satisfied)
    }
}

/// A direction that failed to raise convergence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Excluded {
    pub direction: String,
    pub previous: ScoreValue,
    pub current: ScoreValue,
    pub at: String,
}

/// A score as JSON stores it (a number 0–1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreValue(pub Score);

impl Serialize for ScoreValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ScoreValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = f64::deserialize(d)?;
        Score::parse(&value.to_string())
            .map(ScoreValue)
            .map_err(serde::de::Error::custom)
    }
}

/// The history document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct History {
    pub schema_version: String,
    /// The convergence of the last accepted stage (the next gate's `previous`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_accepted: Option<ScoreValue>,
    #[serde(default)]
    pub excluded: Vec<Excluded>,
    pub last_update: String,
}

impl History {
    pub fn new(now: &str) -> History {
        History {
            schema_version: HISTORY_VERSION.to_string(),
            last_accepted: None,
            excluded: Vec::new(),
            last_update: now.to_string(),
        }
    }

    pub fn is_excluded(&self, direction: &str) -> bool {
        let wanted = normalize_direction(direction);
        self.excluded
            .iter()
            .any(|e| normalize_direction(&e.direction) == wanted)
    }
}

/// Directions are compared without case and extra whitespace, so "Use a cache" and
/// "use  a cache" are one direction.
pub fn normalize_direction(direction: &str) -> String {
    direction
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[derive(Debug, Clone)]
pub struct ConvergeInput {
    pub previous: Score,
    pub current: Score,
    pub satisfied: Score,
    /// What this stage tried (recorded on the exclusion list when it fails).
    pub direction: Option<String>,
    /// How many directions may be excluded before they count as exhausted.
    pub max_rollbacks: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConvergeDecision {
    pub verdict: Ruling,
    pub accepted: bool,
    pub previous: Score,
    pub current: Score,
    pub satisfied_bar: Score,
    /// What the loop does next: `next-stage`, `final-report`, `regenerate`, `stop`.
    pub next: &'static str,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// True when the direction was already on the exclusion list.
    pub repeated_direction: bool,
    pub excluded: Vec<String>,
}

/// Decide, and return the history after the decision (unchanged on ACCEPT except for the
/// last accepted convergence).
pub fn decide(
    input: &ConvergeInput,
    history: Option<&History>,
    now: &str,
) -> (ConvergeDecision, Option<History>) {
    let rose = input.current > input.previous;
    let repeated = match (&input.direction, history) {
        (Some(direction), Some(history)) => history.is_excluded(direction),
        _ => false,
    };
    let mut updated = history.cloned();
    let comparison = format!(
        "convergence {} {} previous {}",
        input.current,
        if rose { ">" } else { "≤" },
        input.previous
    );
    let verdict = if rose {
        accept(input, updated.as_mut(), now)
    } else {
        roll_back(input, updated.as_mut(), repeated, now)
    };
    let (next, reason) = next_and_reason(verdict, &comparison, input);
    let excluded = updated
        .as_ref()
        .map(|h| h.excluded.iter().map(|e| e.direction.clone()).collect())
        .unwrap_or_default();
    (
        ConvergeDecision {
            verdict,
            accepted: verdict.accepted(),
            previous: input.previous,
            current: input.current,
            satisfied_bar: input.satisfied,
            next,
            reason,
            direction: input.direction.clone(),
            repeated_direction: repeated,
            excluded,
        },
        updated,
    )
}

/// The score rose: the history keeps it as the last accepted; at or above the bar the task
/// is satisfied.
fn accept(input: &ConvergeInput, history: Option<&mut History>, now: &str) -> Ruling {
    if let Some(h) = history {
        h.last_accepted = Some(ScoreValue(input.current));
        h.last_update = now.to_string();
    }
    if input.current >= input.satisfied {
        Ruling::Satisfied
    } else {
        Ruling::Accept
    }
}

/// The score did not rise: the direction joins the exclusion list (once); with as many
/// exclusions as rollbacks allowed, the directions are exhausted.
fn roll_back(
    input: &ConvergeInput,
    mut history: Option<&mut History>,
    repeated: bool,
    now: &str,
) -> Ruling {
    if let Some(h) = history.as_deref_mut() {
        if !repeated {
            h.excluded.push(Excluded {
                direction: input
                    .direction
                    .clone()
                    .unwrap_or_else(|| format!("stage rolled back at {now}")),
                previous: ScoreValue(input.previous),
                current: ScoreValue(input.current),
                at: now.to_string(),
            });
        }
        h.last_update = now.to_string();
    }
    let excluded_count = history.map_or(0, |h| h.excluded.len());
    if input.max_rollbacks.is_some_and(|max| excluded_count >= max) {
        Ruling::Exhausted
    } else {
        Ruling::Rollback
    }
}

/// The next step a ruling leads to and the sentence that says why.
fn next_and_reason(
    verdict: Ruling,
    comparison: &str,
    input: &ConvergeInput,
) -> (&'static str, String) {
    match verdict {
        Ruling::Satisfied => (
            "final-report",
            format!(
                "{comparison}, at or above the satisfaction bar {}: task satisfied, final report",
                input.satisfied
            ),
        ),
        Ruling::Accept => (
            "next-stage",
            format!(
                "{comparison}, below the satisfaction bar {}: accept, then generate the next sub-stage target",
                input.satisfied
            ),
        ),
        Ruling::Rollback => (
            "regenerate",
            format!(
                "{comparison}: roll back, exclude this direction, regenerate the sub-stage target"
            ),
        ),
        Ruling::Exhausted => (
            "stop",
            format!(
                "{comparison}: all {} allowed directions are excluded; stop and report to the user",
                input.max_rollbacks.unwrap_or(0)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(t: &str) -> Score {
        Score::parse(t).unwrap()
    }

    fn input(previous: &str, current: &str) -> ConvergeInput {
        ConvergeInput {
            previous: s(previous),
            current: s(current),
            satisfied: SATISFIED,
            direction: Some("cache the parser".into()),
            max_rollbacks: None,
        }
    }

    const NOW: &str = "2026-01-01T00:00:00Z";

    /// The seed's convergence gate and next stage decision, row by row.
    #[test]
    fn the_seed_rules_row_by_row() {
        let rows = [
            ("0.50", "0.60", Ruling::Accept, "next-stage"), // > previous, < 0.95
            ("0.90", "0.95", Ruling::Satisfied, "final-report"), // > previous, ≥ 0.95
            ("0.96", "0.99", Ruling::Satisfied, "final-report"),
            ("0.60", "0.60", Ruling::Rollback, "regenerate"), // = previous is not a rise
            ("0.60", "0.55", Ruling::Rollback, "regenerate"),
            ("0.97", "0.96", Ruling::Rollback, "regenerate"), // above the bar but falling
        ];
        for (previous, current, verdict, next) in rows {
            let (decision, _) = decide(&input(previous, current), None, NOW);
            assert_eq!(decision.verdict, verdict, "{previous} -> {current}");
            assert_eq!(decision.next, next);
        }
    }

    #[test]
    fn rollbacks_build_the_exclusion_list_until_exhausted() {
        let mut history = History::new(NOW);
        let mut gate = input("0.6", "0.5");
        gate.max_rollbacks = Some(2);
        let (first, h) = decide(&gate, Some(&history), NOW);
        history = h.unwrap();
        assert_eq!(first.verdict, Ruling::Rollback);
        assert_eq!(history.excluded.len(), 1);
        // The same direction again is flagged and not listed twice.
        gate.direction = Some("Cache  the PARSER".into());
        let (again, h) = decide(&gate, Some(&history), NOW);
        history = h.unwrap();
        assert!(again.repeated_direction);
        assert_eq!(history.excluded.len(), 1);
        gate.direction = Some("rewrite the lexer".into());
        let (last, h) = decide(&gate, Some(&history), NOW);
        assert_eq!(last.verdict, Ruling::Exhausted);
        assert_eq!(last.next, "stop");
        assert_eq!(h.unwrap().excluded.len(), 2);
    }

    #[test]
    fn an_accept_records_the_new_baseline() {
        let (decision, h) = decide(&input("0.5", "0.7"), Some(&History::new(NOW)), NOW);
        assert!(decision.accepted);
        assert_eq!(h.unwrap().last_accepted, Some(ScoreValue(s("0.7"))));
    }

    proptest! {
        /// ACCEPT exactly when convergence rises; SATISFIED exactly when it also reaches the bar.
        #[test]
        fn accept_iff_rising(p in 0u32..=10_000, c in 0u32..=10_000, bar in 0u32..=10_000) {
            let gate = ConvergeInput {
                previous: Score::from_units(p),
                current: Score::from_units(c),
                satisfied: Score::from_units(bar),
                direction: None,
                max_rollbacks: None,
            };
            let (d, _) = decide(&gate, None, NOW);
            prop_assert_eq!(d.accepted, c > p);
            prop_assert_eq!(d.verdict == Ruling::Satisfied, c > p && c >= bar);
        }
    }
}
