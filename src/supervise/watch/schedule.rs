//! When `run watch` looks at a run again: the pure timing core of the watcher.
//!
//! Two kinds of deadline per run, keyed by session:
//! - a **check**, set by a file notification and due one debounce window after the *first*
//!   notification of a burst, so a rename-write, a truncate-then-write or an editor's save
//!   (several events within a millisecond or two) costs one look, and no burst delays a look by
//!   more than the window;
//! - a **retry**, a tick repeated with exponential backoff while a run needs another look that
//!   no file event will announce: a dispatch step due while the pane is not ready yet (seed
//!   001's "retry with exponential backoff"), a run held by another tick, a tick that failed;
//! - a **wake**, one tick at a time a run's wait named: a resume due after a usage limit's
//!   reset or a backoff, a wait's maximum (so a resume is typed then, not at the next
//!   sweep).
//!
//! Time is an [`Instant`] passed in by the caller, so the schedule is a function of the
//! notifications and the clock and is tested without sleeping.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The first retry delay; each later one doubles it.
pub const RETRY_FIRST: Duration = Duration::from_millis(25);
/// The longest retry delay (seed 001's terminal-ready backoff tops out at 30 s).
pub const RETRY_MAX: Duration = Duration::from_secs(30);

/// The delay before retry number `step` (0-based): 25 ms doubling to at most 30 s.
pub fn backoff(step: u32) -> Duration {
    RETRY_FIRST
        .checked_mul(1u32.checked_shl(step.min(31)).unwrap_or(u32::MAX))
        .unwrap_or(RETRY_MAX)
        .min(RETRY_MAX)
}

/// Why a run is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Files changed: look at them and tick if they differ from what the last tick saw.
    Check,
    /// Tick again whatever the files say.
    Retry,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Retry {
    at: Instant,
    /// How many retries came before this one (the next delay is `backoff(step + 1)`).
    step: u32,
}

/// The pending checks and retries of every watched run.
#[derive(Debug, Clone)]
pub struct Schedule<K> {
    debounce: Duration,
    checks: BTreeMap<K, Instant>,
    retries: BTreeMap<K, Retry>,
    wakes: BTreeMap<K, Instant>,
}

impl<K: Ord + Clone> Schedule<K> {
    pub fn new(debounce: Duration) -> Schedule<K> {
        Schedule {
            debounce,
            checks: BTreeMap::new(),
            retries: BTreeMap::new(),
            wakes: BTreeMap::new(),
        }
    }

    /// Tick `key` at `at` (a time its wait named); the latest tick's deadline replaces an
    /// earlier one.
    pub fn wake(&mut self, key: &K, at: Instant) {
        self.wakes.insert(key.clone(), at);
    }

    /// A file of `key` changed at `now`: check it at the end of the burst's window. A check
    /// already pending keeps its (earlier) deadline.
    pub fn notice(&mut self, key: &K, now: Instant) {
        self.checks
            .entry(key.clone())
            .or_insert_with(|| now + self.debounce);
    }

    /// `key` needs another tick that no event will announce. `fresh` starts the backoff over
    /// (the need arose from new news, e.g. a new signal); otherwise the delay doubles from the
    /// last retry's. Returns the delay.
    pub fn retry(&mut self, key: &K, now: Instant, fresh: bool) -> Duration {
        let step = match self.retries.get(key) {
            Some(last) if !fresh => last.step.saturating_add(1),
            _ => 0,
        };
        let delay = backoff(step);
        self.retries.insert(
            key.clone(),
            Retry {
                at: now + delay,
                step,
            },
        );
        delay
    }

    /// The need for retries is over (the step was dispatched, the run was ticked).
    pub fn settle(&mut self, key: &K) {
        self.retries.remove(key);
    }

    /// Drop everything about `key` (the run ended or left the registry).
    pub fn forget(&mut self, key: &K) {
        self.checks.remove(key);
        self.retries.remove(key);
        self.wakes.remove(key);
    }

    pub fn has_retry(&self, key: &K) -> bool {
        self.retries.contains_key(key)
    }

    /// The earliest deadline, if any.
    pub fn next(&self) -> Option<Instant> {
        let checks = self.checks.values().copied();
        let retries = self.retries.values().map(|r| r.at);
        let wakes = self.wakes.values().copied();
        checks.chain(retries).chain(wakes).min()
    }

    /// Take every run due at `now`, once each, in key order. A run with both a check and a
    /// retry due is a retry (it ticks anyway). A retry stays remembered (for its backoff step)
    /// until [`Schedule::retry`] or [`Schedule::settle`]; only its deadline is consumed.
    pub fn take_due(&mut self, now: Instant) -> Vec<(K, Due)> {
        let mut due: BTreeMap<K, Due> = BTreeMap::new();
        self.checks.retain(|key, at| {
            if *at <= now {
                due.insert(key.clone(), Due::Check);
                false
            } else {
                true
            }
        });
        self.wakes.retain(|key, at| {
            if *at <= now {
                due.insert(key.clone(), Due::Retry);
                false
            } else {
                true
            }
        });
        for (key, retry) in &mut self.retries {
            if retry.at <= now {
                due.insert(key.clone(), Due::Retry);
                // Parked until the caller decides what comes next.
                retry.at = far_future(now);
            }
        }
        due.into_iter().collect()
    }
}

/// A deadline that never comes in practice, for a retry whose next step is not decided yet.
fn far_future(now: Instant) -> Instant {
    now + Duration::from_secs(100 * 365 * 24 * 3600)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const WINDOW: Duration = Duration::from_millis(20);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn backoff_doubles_from_25ms_up_to_30s() {
        let delays: Vec<u64> = (0..14).map(|s| backoff(s).as_millis() as u64).collect();
        assert_eq!(
            delays,
            [
                25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000
            ]
        );
        assert_eq!(backoff(u32::MAX), RETRY_MAX);
    }

    #[test]
    fn a_burst_is_one_check_at_the_end_of_the_first_events_window() {
        let t0 = Instant::now();
        let mut s = Schedule::new(WINDOW);
        for offset in [0, 1, 5, 19] {
            s.notice(&"a", t0 + ms(offset));
        }
        assert_eq!(s.next(), Some(t0 + WINDOW));
        assert!(s.take_due(t0 + ms(19)).is_empty());
        assert_eq!(s.take_due(t0 + WINDOW), [("a", Due::Check)]);
        assert!(s.take_due(t0 + ms(1000)).is_empty(), "taken once");
        // An event after the check opens a new window.
        s.notice(&"a", t0 + ms(30));
        assert_eq!(s.next(), Some(t0 + ms(50)));
    }

    #[test]
    fn a_wake_ticks_once_at_its_time_and_a_later_one_replaces_it() {
        let t0 = Instant::now();
        let mut s = Schedule::new(WINDOW);
        s.wake(&"a", t0 + ms(500));
        s.wake(&"a", t0 + ms(300));
        assert_eq!(s.next(), Some(t0 + ms(300)));
        assert!(s.take_due(t0 + ms(299)).is_empty());
        assert_eq!(s.take_due(t0 + ms(300)), [("a", Due::Retry)]);
        assert_eq!(s.next(), None, "taken once");
        s.wake(&"a", t0 + ms(900));
        s.forget(&"a");
        assert_eq!(s.next(), None);
    }

    #[test]
    fn retries_back_off_and_start_over_on_fresh_news() {
        let t0 = Instant::now();
        let mut s = Schedule::new(WINDOW);
        s.retry(&"a", t0, true);
        assert_eq!(s.next(), Some(t0 + ms(25)));
        assert_eq!(s.take_due(t0 + ms(25)), [("a", Due::Retry)]);
        assert!(s.has_retry(&"a"), "remembered for its step");
        assert_eq!(s.next().map(|n| n > t0 + ms(3_600_000)), Some(true));
        s.retry(&"a", t0 + ms(25), false);
        assert_eq!(s.next(), Some(t0 + ms(75)));
        s.retry(&"a", t0 + ms(75), false);
        assert_eq!(s.next(), Some(t0 + ms(175)));
        s.retry(&"a", t0 + ms(175), true);
        assert_eq!(s.next(), Some(t0 + ms(200)));
        s.settle(&"a");
        assert_eq!(s.next(), None);
    }

    #[test]
    fn a_check_and_a_retry_due_together_are_one_retry() {
        let t0 = Instant::now();
        let mut s = Schedule::new(WINDOW);
        s.retry(&"a", t0, true);
        s.notice(&"a", t0 + ms(10));
        s.notice(&"b", t0);
        assert_eq!(
            s.take_due(t0 + ms(40)),
            [("a", Due::Retry), ("b", Due::Check)]
        );
        s.forget(&"a");
        assert!(!s.has_retry(&"a"));
        assert_eq!(s.next(), None);
    }

    proptest! {
        /// Whatever the notifications, every run noticed is checked exactly once per window,
        /// never before its first event's window ends and never later than that.
        #[test]
        fn every_event_is_checked_within_one_window(
            events in prop::collection::vec((0u8..4, 0u64..200), 1..60),
            step in 1u64..15,
        ) {
            let t0 = Instant::now();
            let mut events = events;
            events.sort_by_key(|(_, at)| *at);
            let mut s = Schedule::new(WINDOW);
            let mut pending: BTreeMap<u8, Instant> = BTreeMap::new();
            let mut i = 0;
            let mut now = t0;
            let end = t0 + ms(260);
            while now <= end {
                while i < events.len() && t0 + ms(events[i].1) <= now {
                    let at = t0 + ms(events[i].1);
                    s.notice(&events[i].0, at);
                    pending.entry(events[i].0).or_insert(at);
                    i += 1;
                }
                for (key, due) in s.take_due(now) {
                    prop_assert_eq!(due, Due::Check);
                    let first = pending.remove(&key).expect("a check follows an event");
                    prop_assert!(now >= first + WINDOW);
                    prop_assert!(now < first + WINDOW + ms(step));
                }
                if let Some(next) = s.next() {
                    prop_assert!(next > now);
                }
                now += ms(step);
            }
            prop_assert!(pending.is_empty(), "unchecked: {:?}", pending);
        }

        /// Retry delays never shrink unless started over, and never exceed the cap.
        #[test]
        fn retry_delays_grow_to_the_cap(fresh in prop::collection::vec(any::<bool>(), 1..40)) {
            let t0 = Instant::now();
            let mut s = Schedule::new(WINDOW);
            let mut now = t0;
            let mut last = Duration::ZERO;
            for (n, fresh) in fresh.into_iter().enumerate() {
                s.retry(&0u8, now, fresh);
                let delay = s.next().unwrap() - now;
                prop_assert!(delay <= RETRY_MAX);
                if fresh || n == 0 {
                    prop_assert_eq!(delay, RETRY_FIRST);
                } else {
                    prop_assert!(delay >= last);
                }
                last = delay;
                now += delay;
                prop_assert_eq!(s.take_due(now), vec![(0u8, Due::Retry)]);
            }
        }
    }
}
