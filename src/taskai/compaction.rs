//! The compaction budget of one loop iteration (seed 002: "If 3+ compactions within same
//! iteration → stop with warning: context budget insufficient for this task — consider
//! breaking into smaller sub-tasks").
//!
//! One counter for every place that compacts or sees a compaction: `hook stop` counts the
//! compactions Claude Code made by itself during a turn (the transcript's compaction
//! summaries), and a supervisor that types `/compact` proactively (seed 000: at ≥ 70 %
//! context) asks [`CompactionCount::allows_another`] first and records it the same way, so a
//! task that keeps overflowing its context is stopped once, for one reason, whoever compacted.
//! Pure: the count lives in whatever state its user keeps (the loop state, a run's row).

use serde::{Deserialize, Serialize};

/// Compactions allowed in one iteration (seed 002; `--max-compactions`).
pub const DEFAULT_MAX_COMPACTIONS: u32 = 3;

/// The seed's warning when the limit is reached.
pub const LIMIT_WARNING: &str =
    "context budget insufficient for this task — consider breaking into smaller sub-tasks";

/// Compactions counted in the current iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionCount {
    /// The iteration the count belongs to.
    pub iteration: u64,
    /// Compactions seen or made in that iteration.
    pub count: u32,
}

impl CompactionCount {
    /// The count as of `iteration`: a new iteration starts from zero, the current one keeps
    /// its count (iterations never go back; an older one is treated as new).
    pub fn at(self, iteration: u64) -> CompactionCount {
        if iteration == self.iteration {
            self
        } else {
            CompactionCount {
                iteration,
                count: 0,
            }
        }
    }

    /// Record `compactions` more in `iteration`.
    pub fn record(self, iteration: u64, compactions: u32) -> CompactionCount {
        let current = self.at(iteration);
        CompactionCount {
            count: current.count.saturating_add(compactions),
            ..current
        }
    }

    /// Whether the iteration has reached the limit: the loop stops (`max` 0 means no limit).
    pub fn exhausted(self, max: u32) -> bool {
        max > 0 && self.count >= max
    }

    /// Whether one more (proactive) compaction keeps the iteration under the limit.
    pub fn allows_another(self, iteration: u64, max: u32) -> bool {
        !self.record(iteration, 1).exhausted(max)
    }

    /// The stop message: the count, the limit and the seed's advice.
    pub fn limit_message(self, max: u32) -> String {
        format!(
            "{} context compactions in iteration {} (limit {max}): {LIMIT_WARNING}",
            self.count, self.iteration
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn three_in_one_iteration_stop_and_a_new_iteration_starts_over() {
        let c = CompactionCount::default().record(4, 1).record(4, 1);
        assert_eq!(c.count, 2);
        assert!(!c.exhausted(DEFAULT_MAX_COMPACTIONS));
        assert!(
            !c.allows_another(4, DEFAULT_MAX_COMPACTIONS),
            "a third would stop"
        );
        let c = c.record(4, 1);
        assert!(c.exhausted(DEFAULT_MAX_COMPACTIONS));
        assert!(
            c.limit_message(3)
                .starts_with("3 context compactions in iteration 4 (limit 3)")
        );
        let next = c.at(5);
        assert_eq!(
            next,
            CompactionCount {
                iteration: 5,
                count: 0
            }
        );
        assert!(next.allows_another(5, 3));
        assert!(!c.record(4, 7).exhausted(0), "0 means no limit");
    }

    proptest! {
        /// The count never goes back within an iteration, and the limit always fires once
        /// an iteration has seen `max` compactions.
        #[test]
        fn the_limit_always_fires(max in 1u32..6, steps in proptest::collection::vec((0u64..4, 0u32..3), 1..40)) {
            let mut c = CompactionCount::default();
            let mut totals = std::collections::BTreeMap::<u64, u32>::new();
            let mut iteration = 0;
            for (advance, seen) in steps {
                iteration += advance;
                let before = c.at(iteration).count;
                c = c.record(iteration, seen);
                prop_assert!(c.count >= before);
                if advance > 0 { totals.clear(); }
                *totals.entry(iteration).or_default() += seen;
                prop_assert_eq!(c.count, totals[&iteration]);
                prop_assert_eq!(c.exhausted(max), totals[&iteration] >= max);
            }
        }
    }
}
