//! The notification outbox: what a tick announces is stored with its decision before anything
//! is delivered, so a tick killed between saving and announcing loses nothing.
//!
//! 1. The tick that decides a change adds its notices to the run's outbox
//!    ([`crate::supervise::tick::notice::add`]) and saves them in the same registry write as
//!    the decision (the `outbox` column). Each entry has a stable id
//!    ([`crate::supervise::tick::notice::id_of`]) and a delivery lease held by that tick.
//! 2. It delivers them (`--notify`, the run's own command), each command seeing the id in the
//!    event's `id` and in `AUTOCTL_EVENT_ID`.
//! 3. It marks them delivered ([`crate::supervise::store::Registry::settle`]).
//!
//! A tick that finds an entry not delivered whose lease has expired — its deliverer was killed
//! between 1 and 3 — takes the lease and delivers it
//! ([`crate::supervise::store::Registry::take_outbox`]), ended runs included (a `finish` is
//! the last thing a run says). Delivery is therefore at least once: a deliverer killed after
//! running a command and before marking it delivered has it delivered again, with the same id,
//! for the receiver to dedupe on. An escalation's id is its escalation key
//! ([`crate::pane::view::PaneView::key`]) in its iteration, so a prompt announced twice (a
//! redraw the wait core read as a new escalation) is one entry, announced once.
//!
//! Notices of no single run's change go through it too, stored in a run's outbox with an id
//! every host and run computes alike ([`crate::supervise::tick::notice::once_id`]), so whichever stores it first, the outbox
//! keeps it once: the weekly reserve (in the outbox of the run whose tick reached it, with
//! its decision; settled undelivered when the account says another run told first) and a
//! lost host (in its first running run's outbox, before the loss is marked announced).
//!
//! A delivered entry is kept a while ([`KEEP_DELIVERED`]) so that a concurrent writer's older
//! copy of the outbox cannot bring it back: every writer [`merge`]s its copy with the stored
//! one (union by id, delivered wins), so entries only ever go from pending to delivered.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::time::{Time, plus};

/// How long a delivered entry stays in the outbox: past any claim a concurrent writer could
/// still hold on an older copy of the row (its save is refused once its lease is gone).
pub const KEEP_DELIVERED: Duration = Duration::from_secs(2 * DELIVERY_LEASE.as_secs());

/// How long the tick that added an entry has to deliver it before another tick may: a run's
/// claim lease ([`crate::supervise::store::LEASE`], the same length; a test holds them
/// equal), so the outbox, which the registry stores, needs nothing of the store.
pub const DELIVERY_LEASE: Duration = Duration::from_secs(120);

/// One notification of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Stable across redeliveries: what a receiver dedupes on (16 hex digits).
    pub id: String,
    pub event: String,
    pub reason: String,
    /// The notify-event object, as the deciding tick built it (one line of JSON).
    pub payload: String,
    pub created: Time,
    /// Until when the tick delivering it holds it; after that another tick may.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered: Option<Time>,
}

impl Entry {
    pub fn pending(&self) -> bool {
        self.delivered.is_none()
    }

    /// Pending and nobody holds it at `now`.
    pub fn due(&self, now: Time) -> bool {
        self.pending() && self.lease_until.is_none_or(|until| until <= now)
    }
}

/// Merge a writer's copy of an outbox into the stored one: every entry of either, by id; an
/// entry delivered in either is delivered (the earlier time); the later lease holds. Order:
/// the stored entries first, then the writer's new ones.
pub fn merge(stored: &[Entry], ours: &[Entry]) -> Vec<Entry> {
    let mut merged: Vec<Entry> = stored.to_vec();
    for entry in ours {
        match merged.iter_mut().find(|kept| kept.id == entry.id) {
            Some(kept) => {
                kept.delivered = match (kept.delivered, entry.delivered) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                kept.lease_until = kept.lease_until.max(entry.lease_until);
            }
            None => merged.push(entry.clone()),
        }
    }
    merged
}

/// Mark `ids` delivered at `now`, and drop entries delivered longer ago than
/// [`KEEP_DELIVERED`]. Returns whether anything changed.
pub fn settle(outbox: &mut Vec<Entry>, ids: &[String], now: Time) -> bool {
    let before = outbox.clone();
    for entry in outbox.iter_mut() {
        if entry.delivered.is_none() && ids.contains(&entry.id) {
            entry.delivered = Some(now);
            entry.lease_until = None;
        }
    }
    outbox.retain(|entry| {
        entry
            .delivered
            .is_none_or(|at| plus(at, KEEP_DELIVERED) > now)
    });
    *outbox != before
}

/// Take the lease of every due entry for `now +` [`DELIVERY_LEASE`]; returns them.
pub fn lease_due(outbox: &mut [Entry], now: Time) -> Vec<Entry> {
    let mut taken = Vec::new();
    for entry in outbox.iter_mut() {
        if entry.due(now) {
            entry.lease_until = Some(plus(now, DELIVERY_LEASE));
            taken.push(entry.clone());
        }
    }
    taken
}

/// Entries a run's outbox holds, read leniently: a column this build cannot read is empty
/// (what it held is lost, never a run that cannot be ticked).
pub fn parse(text: Option<&str>) -> Vec<Entry> {
    text.and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

/// Entries of one run to deliver, with where they go.
#[derive(Debug, Clone)]
pub struct Pending {
    pub session: String,
    pub task: String,
    /// The run's own notify command (`run start --notify`).
    pub notify_command: Option<String>,
    pub entries: Vec<Entry>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;
    use proptest::prelude::*;

    fn at(secs: i64) -> Time {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    fn entry(id: &str, delivered: Option<i64>, lease: Option<i64>) -> Entry {
        Entry {
            id: id.to_string(),
            event: "finish".to_string(),
            reason: "done".to_string(),
            payload: "{}".to_string(),
            created: at(0),
            lease_until: lease.map(at),
            delivered: delivered.map(at),
        }
    }

    #[test]
    fn an_entry_is_leased_as_long_as_a_claim() {
        assert_eq!(DELIVERY_LEASE, crate::supervise::store::LEASE);
    }

    #[test]
    fn a_delivered_entry_stays_delivered_whatever_copy_is_saved_after() {
        let stored = vec![entry("a", Some(5), None)];
        let stale_copy = vec![entry("a", None, Some(120)), entry("b", None, Some(130))];
        let merged = merge(&stored, &stale_copy);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].delivered, Some(at(5)));
        assert!(merged[1].pending());
    }

    #[test]
    fn an_entry_is_due_once_its_lease_has_expired() {
        let mut outbox = vec![entry("a", None, Some(120)), entry("b", Some(3), None)];
        assert!(lease_due(&mut outbox, at(60)).is_empty());
        let taken = lease_due(&mut outbox, at(121));
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].id, "a");
        assert_eq!(outbox[0].lease_until, Some(plus(at(121), DELIVERY_LEASE)));
        // Leased again: the next tick does not take it too.
        assert!(lease_due(&mut outbox, at(122)).is_empty());
    }

    #[test]
    fn settled_entries_are_kept_a_while_then_dropped() {
        let mut outbox = vec![entry("a", None, Some(120))];
        assert!(settle(&mut outbox, &["a".to_string()], at(10)));
        assert_eq!(outbox[0].delivered, Some(at(10)));
        assert!(!settle(&mut outbox, &[], at(11)));
        let later = 10 + i64::try_from(KEEP_DELIVERED.as_secs()).unwrap() + 1;
        assert!(settle(&mut outbox, &[], at(later)));
        assert!(outbox.is_empty());
    }

    fn arb_entry() -> impl Strategy<Value = Entry> {
        (
            0..6u8,
            proptest::option::of(0..100i64),
            proptest::option::of(0..300i64),
        )
            .prop_map(|(id, delivered, lease)| entry(&format!("{id}"), delivered, lease))
    }

    fn by_id(
        entries: &[Entry],
    ) -> std::collections::BTreeMap<String, (Option<Time>, Option<Time>)> {
        entries
            .iter()
            .map(|e| (e.id.clone(), (e.delivered, e.lease_until)))
            .collect()
    }

    proptest! {
        /// Writers may save in any order: the merged outbox is the same, and an entry
        /// delivered in any copy is delivered in it.
        #[test]
        fn merge_is_order_free_and_never_undelivers(
            a in proptest::collection::vec(arb_entry(), 0..6),
            b in proptest::collection::vec(arb_entry(), 0..6),
        ) {
            let dedup = |v: Vec<Entry>| merge(&[], &v);
            let (a, b) = (dedup(a), dedup(b));
            let ab = merge(&a, &b);
            let ba = merge(&b, &a);
            prop_assert_eq!(by_id(&ab), by_id(&ba));
            for entry in a.iter().chain(&b) {
                let merged = ab.iter().find(|m| m.id == entry.id).unwrap();
                if entry.delivered.is_some() {
                    prop_assert!(merged.delivered.is_some());
                }
            }
        }
    }
}
