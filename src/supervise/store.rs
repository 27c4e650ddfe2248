//! What supervision needs from storage: the [`Registry`] trait (implemented by
//! [`crate::registry`]: SQLite, and an in-memory fake for unit tests) and the claim rule
//! every implementation shares.
//!
//! Concurrency model: a tick *claims* a run (a lease: `claimed_by`, `claimed_until`) in a short
//! write transaction, observes and acts with no database lock held, then *saves* the new row
//! only if it still holds the claim. So two overlapping ticks never make two decisions for one
//! run, a slow tmux call never blocks `run start`/`run stop`, and a tick that dies mid-way only
//! freezes its runs until the lease ([`LEASE`]) expires. `run stop` does not wait for a claim:
//! it ends the run and drops the claim, and the claimed tick's save then finds the claim gone
//! and is discarded.

use std::time::Duration;

use anyhow::Result;

use crate::supervise::governor;
use crate::supervise::run::{NewRun, Run, Status};
use crate::time::{Time, format_time};

/// How long a claim protects a run from other ticks. A tick's work on one run takes
/// milliseconds; the lease only matters when a tick is killed mid-way.
pub const LEASE: Duration = Duration::from_secs(120);

/// How long a host's lease lasts by default (`--host-lease`): a host whose ticks and watcher
/// stopped renewing it for this long is host-lost.
pub const HOST_LEASE: Duration = Duration::from_secs(120);

/// Why a run was not claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotClaimed {
    /// The run has ended; there is nothing to tick.
    Ended(Status),
    /// Another tick holds it.
    Busy { owner: String, until: Time },
    /// Its pane is on another host: only that host observes and types into it.
    Foreign { host: String },
}

impl std::fmt::Display for NotClaimed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotClaimed::Ended(status) => write!(f, "the run has ended ({})", status.as_str()),
            NotClaimed::Busy { owner, until } => write!(
                f,
                "another tick ({owner}) holds the run until {}",
                format_time(*until)
            ),
            NotClaimed::Foreign { host } => write!(
                f,
                "the run's pane is on host {host:?}: only that host ticks it"
            ),
        }
    }
}

/// The claim rule, shared by every [`Registry`] implementation: a running run of this
/// `host` (or of none yet: the claim adopts it) whose claim is free or expired can be
/// claimed.
pub fn claimable(run: &Run, host: &str, now: Time) -> Result<(), NotClaimed> {
    if !run.status.is_active() {
        return Err(NotClaimed::Ended(run.status));
    }
    if !run.spec.host.is_empty() && run.spec.host != host {
        return Err(NotClaimed::Foreign {
            host: run.spec.host.clone(),
        });
    }
    match (&run.claimed_by, run.claimed_until) {
        (Some(owner), Some(until)) if until > now => Err(NotClaimed::Busy {
            owner: owner.clone(),
            until,
        }),
        _ => Ok(()),
    }
}

/// The result of trying to claim one run.
#[derive(Debug, Clone)]
pub enum Claim {
    /// Ours until the lease ends; the row as it was when claimed.
    Claimed(Box<Run>),
    /// Not ours, with the row so the tick can still report on it.
    Skipped(Box<Run>, NotClaimed),
}

/// Which runs a claim covers.
#[derive(Debug, Clone, Copy)]
pub enum Selection<'a> {
    Session(&'a str),
    /// Every running run of the claiming host.
    All,
}

/// The permit a dispatch or resume record asks the governor for, decided again on the
/// stored account in the record's transaction.
#[derive(Debug, Clone)]
pub struct PermitAsk {
    pub asker: governor::Asker,
    pub options: governor::Options,
}

/// What [`Registry::record`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    /// Stored, the claim kept (and the permit granted, when one was asked).
    Stored,
    /// Nothing stored: the claim is no longer the owner's (stopped, or taken over).
    NotHeld,
    /// Nothing stored: the governor refused the permit on the stored state (another run
    /// took the last one first), with its reason.
    Refused(String),
}

/// What the governor reads of an account: its stored state and its running runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AccountView {
    pub state: governor::Account,
    pub fleet: governor::Fleet,
}

/// A host of the fleet: when its ticks or watcher last renewed its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub seen_at: Time,
    /// Past it, the host is lost: its runs are shown `host-lost`, never typed into from
    /// elsewhere.
    pub lease_until: Time,
    /// When its loss was announced (once per loss).
    pub lost_announced_at: Option<Time>,
}

impl Host {
    pub fn lost(&self, now: Time) -> bool {
        self.lease_until <= now
    }
}

/// A `run start` that collides with a live run (exit 3). Its message names the owner.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StartConflict {
    #[error(
        "session {session:?} already runs a loop on {task_dir}; stop it first with `autoctl run stop`"
    )]
    Session { session: String, task_dir: String },
    #[error(
        "task dir {task_dir} already has a loop running in session {owner:?}; stop it first with `autoctl run stop`"
    )]
    TaskDir { task_dir: String, owner: String },
}

impl StartConflict {
    /// The conflict of starting `new` while `owner` runs, as an exit-3 error.
    pub fn error(new: &NewRun, owner: &Run) -> anyhow::Error {
        let conflict = if owner.spec.session == new.session {
            StartConflict::Session {
                session: owner.spec.session.clone(),
                task_dir: owner.spec.task_dir.clone(),
            }
        } else {
            StartConflict::TaskDir {
                task_dir: owner.spec.task_dir.clone(),
                owner: owner.spec.session.clone(),
            }
        };
        anyhow::Error::new(crate::error::Conflict(conflict.to_string()))
    }
}

/// Storage of runs. Every method is one atomic step: a concurrent caller sees the registry
/// before or after it, never in between.
pub trait Registry {
    /// Insert a running row. A live run for the same session or task dir is a
    /// [`StartConflict`] (in the error chain); an ended one is replaced.
    fn start(&mut self, new: &NewRun, now: Time) -> Result<Run>;
    /// The row of a session, if any.
    fn get(&mut self, session: &str) -> Result<Option<Run>>;
    /// The row that owns a task dir (canonical path), if any.
    fn find_task(&mut self, task_dir: &str) -> Result<Option<Run>>;
    /// Every row, ordered by session name.
    fn list(&mut self) -> Result<Vec<Run>>;
    /// Claim the selected running runs of `host` for `owner` until `now + LEASE`. Ended
    /// runs and other hosts' runs are not returned for [`Selection::All`]; for a session
    /// they come back as skipped. A run of no host yet is adopted by `host`.
    fn claim(
        &mut self,
        selection: Selection<'_>,
        owner: &str,
        host: &str,
        now: Time,
    ) -> Result<Vec<Claim>>;
    /// Store a claimed run's new state and release the claim. Returns false (and stores
    /// nothing) when `owner` no longer holds the claim: the run was stopped or the lease
    /// expired and another tick took it.
    fn save(&mut self, run: &Run, owner: &str) -> Result<bool>;
    /// Store a claimed run's row and keep the claim: the intent of keys about to be typed
    /// (a dispatch, a resume), so a driver killed between this and the keys never types
    /// them twice. With `permit`, the governor decides again on the stored account in the
    /// same transaction, and the grant is stored with the row, or nothing is.
    fn record(
        &mut self,
        run: &Run,
        owner: &str,
        permit: Option<&PermitAsk>,
        now: Time,
    ) -> Result<Written>;
    /// Change a run now whoever holds it (`run ack`, `run continue`): `change` returns
    /// whether it changed anything; a changed row is stored and its claim dropped, so a
    /// claimed tick's save is discarded (as for [`Registry::end`]). Returns the row as it is
    /// now, or None when there is no row.
    fn amend(
        &mut self,
        session: &str,
        change: &mut dyn FnMut(&mut Run) -> bool,
    ) -> Result<Option<Run>>;
    /// Mark a run's outbox entries `ids` delivered at `now` (whoever holds the run: only its
    /// outbox changes, and a holder's save merges with it, see
    /// [`crate::supervise::outbox::merge`]).
    fn settle(&mut self, session: &str, ids: &[String], now: Time) -> Result<()>;
    /// Store notices in a run's outbox whoever holds the run (a lost host's run): merged
    /// with what is stored by id ([`crate::supervise::outbox::merge`]), so an entry stored
    /// twice is kept once.
    fn post(&mut self, session: &str, entries: &[crate::supervise::outbox::Entry]) -> Result<()>;
    /// Lease to the caller every outbox entry, of any run (ended ones too), that is not
    /// delivered and whose delivery lease has expired: its deliverer died. Returns them by run.
    fn take_outbox(&mut self, now: Time) -> Result<Vec<crate::supervise::outbox::Pending>>;
    /// Give a claim back without changing the run (dry runs, failed effects).
    fn release(&mut self, session: &str, owner: &str) -> Result<()>;
    /// End a run now whoever holds it (`run stop`). Returns the row as stored, or None when
    /// there is no row; an already ended row is returned unchanged.
    fn end(
        &mut self,
        session: &str,
        status: Status,
        reason: &str,
        message: Option<&str>,
        now: Time,
    ) -> Result<Option<Run>>;
    /// An account's stored state (the default when none is stored) and its running runs.
    fn account(&mut self, name: &str) -> Result<AccountView>;
    /// Every stored account, by name.
    fn accounts(&mut self) -> Result<Vec<(String, governor::Account)>>;
    /// Apply one tick's events to an account in one step. True when a weekly escalation in
    /// them is the account's first for that reset (only the first is announced).
    fn note_account(&mut self, name: &str, events: &[governor::Event], now: Time) -> Result<bool>;
    /// Every host, by name.
    fn hosts(&mut self) -> Result<Vec<Host>>;
    /// A host's ticks or watcher are alive: renew its lease until `now + lease`.
    fn host_alive(&mut self, name: &str, lease: Duration, now: Time) -> Result<()>;
    /// Hosts whose lease ran out and whose loss was not announced yet: marked announced now,
    /// in one step, so whichever host notices first announces it, once.
    fn announce_lost_hosts(&mut self, now: Time) -> Result<Vec<Host>>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn at(secs: i64) -> Time {
        DateTime::from_timestamp(1_700_000_000 + secs, 0).unwrap()
    }

    #[test]
    fn claim_rule() {
        let mut run = Run::new(&crate::supervise::run::tests::sample(), at(0));
        assert!(claimable(&run, "here", at(0)).is_ok());
        assert!(matches!(
            claimable(&run, "there", at(0)),
            Err(NotClaimed::Foreign { .. })
        ));
        run.claimed_by = Some("a".into());
        run.claimed_until = Some(at(10));
        assert!(matches!(
            claimable(&run, "here", at(5)),
            Err(NotClaimed::Busy { .. })
        ));
        assert!(
            claimable(&run, "here", at(11)).is_ok(),
            "an expired lease is free"
        );
        run.end(
            Status::Finished,
            crate::supervise::run::StopReason::Complete,
            None,
            at(11),
        );
        assert_eq!(
            claimable(&run, "here", at(12)),
            Err(NotClaimed::Ended(Status::Finished))
        );
    }
}
