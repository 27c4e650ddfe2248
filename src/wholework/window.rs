//! How the sub-issues of one level are started, with at most N running at once: wholework's
//! fixed batches (start N, wait for all, start the next N) or a sliding window (`wait -n`:
//! start the next one as soon as any finishes). Pure: the runner reports finishes and asks
//! what to start; the levels and the skipping of dependents stay in [`super::graph`].

use std::collections::VecDeque;

use serde::Serialize;

/// The scheduling discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// Start the next issue as soon as a running one finishes (`wait -n`)
    Window,
    /// Start N, wait for all of them, then the next N (the batches `graph levels` prints)
    Batches,
}

/// The queue of one level.
#[derive(Debug, Clone)]
pub struct Slots {
    schedule: Schedule,
    max: usize,
    pending: VecDeque<u64>,
    running: usize,
}

impl Slots {
    /// A level whose issues are `issues`, in the order they start; `max` ≥ 1.
    pub fn new(schedule: Schedule, max: usize, issues: impl IntoIterator<Item = u64>) -> Slots {
        Slots {
            schedule,
            max: max.max(1),
            pending: issues.into_iter().collect(),
            running: 0,
        }
    }

    /// The issues to start now (they count as running).
    pub fn start(&mut self) -> Vec<u64> {
        let room = match self.schedule {
            Schedule::Window => self.max - self.running,
            Schedule::Batches if self.running == 0 => self.max,
            Schedule::Batches => 0,
        };
        let n = room.min(self.pending.len());
        self.running += n;
        self.pending.drain(..n).collect()
    }

    /// A running issue finished.
    pub fn finished(&mut self) {
        self.running = self.running.saturating_sub(1);
    }

    pub fn running(&self) -> usize {
        self.running
    }

    /// Nothing is left to start or to wait for.
    pub fn is_done(&self) -> bool {
        self.running == 0 && self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_window_refills_at_once_and_batches_wait_for_all() {
        let mut w = Slots::new(Schedule::Window, 2, [1, 2, 3, 4]);
        assert_eq!(w.start(), [1, 2]);
        w.finished();
        assert_eq!(w.start(), [3], "a freed slot is used at once");
        let mut b = Slots::new(Schedule::Batches, 2, [1, 2, 3, 4]);
        assert_eq!(b.start(), [1, 2]);
        b.finished();
        assert!(b.start().is_empty(), "the batch is not over");
        b.finished();
        assert_eq!(b.start(), [3, 4]);
    }

    proptest! {
        /// Whatever order issues finish in: never more than max at once, every issue starts
        /// exactly once, and a window never leaves a slot empty while work is pending.
        #[test]
        fn slots_are_bounded_and_complete(
            max in 1usize..5,
            n in 0u64..20,
            batches: bool,
            finishes in proptest::collection::vec(0usize..5, 0..60),
        ) {
            let schedule = if batches { Schedule::Batches } else { Schedule::Window };
            let mut slots = Slots::new(schedule, max, 0..n);
            let mut started = Vec::new();
            let mut finishes = finishes.into_iter();
            while !slots.is_done() {
                started.extend(slots.start());
                prop_assert!(slots.running() <= max);
                if schedule == Schedule::Window && slots.running() < max {
                    prop_assert!(slots.pending.is_empty());
                }
                // Finish one or more (at least one, so the loop ends).
                let k = finishes.next().unwrap_or(1).clamp(1, slots.running().max(1));
                for _ in 0..k.min(slots.running()) {
                    slots.finished();
                }
            }
            prop_assert_eq!(started, (0..n).collect::<Vec<_>>());
        }
    }
}
