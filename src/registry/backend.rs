//! The registry's logic once for every database: a [`Backend`] runs a closure in one
//! transaction over a few primitive reads and writes ([`Tx`]), and [`Registry`] is written
//! here over them — the same claims and leases, the same start conflicts, the same permit
//! re-check — for SQLite ([`super::sqlite`]) and PostgreSQL ([`super::postgres`]).
//!
//! A transaction that writes locks what it read before it writes: SQLite takes the database's
//! write lock at its start (`BEGIN IMMEDIATE`), PostgreSQL locks the rows it reads
//! (`SELECT … FOR UPDATE`). No advisory locks: they do not survive a connection pooler.
//!
//! **One lock order**, so that no two transactions (two ticks, a tick and `run watch`, hosts of
//! a fleet) can wait on each other: the account row first, when a transaction takes it at all
//! (a permit, an account's readings); then run rows, all of a transaction's in **one**
//! statement, in session order ([`Tx::runs`]); a host row never with either. A look at rows a
//! transaction does not change ([`Tx::peek`]: the account's other runs a permit counts) locks
//! nothing. Before, a permit locked its own run and then the account's other runs, while a
//! claim or the outbox locked the same rows in session order: PostgreSQL aborted one of them
//! as a deadlock.

use std::time::Duration;

use anyhow::Result;

use crate::supervise::governor::{self, Account, Fleet};
use crate::supervise::outbox;
use crate::supervise::run::{NewRun, Run, Status, StopReason};
use crate::supervise::store::{
    AccountView, Claim, Host, LEASE, PermitAsk, Registry, Selection, StartConflict, Written,
    claimable,
};
use crate::time::{Time, plus};

/// Which rows a read or a delete covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which<'a> {
    Session(&'a str),
    Task(&'a str),
    SessionOrTask(&'a str, &'a str),
    /// Running runs of a host, and those of no host yet.
    RunningOn(&'a str),
    /// Running runs of an account.
    RunningOf(&'a str),
    /// Runs with an entry in their outbox (ended ones too); a backend may return more.
    Outbox,
    All,
}

/// The primitive operations of one transaction. Rows come back ordered by session.
pub trait Tx {
    /// The selected runs, locked (in a writing transaction) for the rest of it, in session
    /// order, in one statement: a transaction calls it at most once for rows it may change.
    fn runs(&mut self, which: Which<'_>) -> Result<Vec<Run>>;
    /// The selected runs as they are, locking nothing: rows this transaction reads but does
    /// not change (see the module's lock order).
    fn peek(&mut self, which: Which<'_>) -> Result<Vec<Run>> {
        self.runs(which)
    }
    fn delete(&mut self, which: Which<'_>) -> Result<()>;
    fn insert(&mut self, run: &Run) -> Result<()>;
    /// Set the claim columns (and adopt the run for `host` when it has none).
    fn set_claim(
        &mut self,
        session: &str,
        owner: Option<&str>,
        until: Option<Time>,
        host: Option<&str>,
    ) -> Result<()>;
    /// Claim these runs for `owner` until `until`, for `host` (each is `host`'s or of no
    /// host yet: [`claimable`] said so). One statement where the database allows.
    fn claim_rows(
        &mut self,
        sessions: &[&str],
        owner: &str,
        until: Time,
        host: &str,
    ) -> Result<()> {
        for session in sessions {
            self.set_claim(session, Some(owner), Some(until), Some(host))?;
        }
        Ok(())
    }
    /// Replace a run's row (its session's). One statement where the database allows.
    fn replace(&mut self, run: &Run) -> Result<()> {
        self.delete(Which::Session(&run.spec.session))?;
        self.insert(run)
    }
    /// An account's state, locked for the rest of the transaction.
    fn account(&mut self, name: &str) -> Result<Option<Account>>;
    fn put_account(&mut self, name: &str, state: &Account) -> Result<()>;
    fn accounts(&mut self) -> Result<Vec<(String, Account)>>;
    fn hosts(&mut self) -> Result<Vec<Host>>;
    fn put_host(&mut self, host: &Host) -> Result<()>;
}

/// Whether a transaction's work is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Commit,
    Rollback,
}

/// A database the registry logic runs on.
pub trait Backend {
    /// Run `work` in one transaction (`write`: it may write; a read-only one takes no write
    /// lock). A backend may run `work` again when the database asks for a retry (a
    /// serialization failure), so `work` must not keep state from a failed run.
    fn transaction(
        &mut self,
        write: bool,
        work: &mut dyn FnMut(&mut dyn Tx) -> Result<End>,
    ) -> Result<()>;
}

/// [`Backend::transaction`] with a value out.
fn within<T>(
    backend: &mut dyn Backend,
    write: bool,
    mut work: impl FnMut(&mut dyn Tx) -> Result<(T, End)>,
) -> Result<T> {
    let mut out = None;
    backend.transaction(write, &mut |tx| {
        let (value, end) = work(tx)?;
        out = Some(value);
        Ok(end)
    })?;
    Ok(out.expect("the transaction ran"))
}

fn one(runs: Vec<Run>) -> Option<Run> {
    runs.into_iter().next()
}

impl<B: Backend> Registry for B {
    fn start(&mut self, new: &NewRun, now: Time) -> Result<Run> {
        within(self, true, |tx| {
            let owners = tx.runs(Which::SessionOrTask(&new.session, &new.task_dir))?;
            let active = |r: &&Run| r.status.is_active();
            let owner = owners
                .iter()
                .filter(active)
                .find(|r| r.spec.session == new.session)
                .or_else(|| owners.iter().find(active));
            if let Some(owner) = owner {
                return Err(StartConflict::error(new, owner));
            }
            // Ended rows keep their outcome until the session or the task dir is reused.
            tx.delete(Which::SessionOrTask(&new.session, &new.task_dir))?;
            let run = Run::new(new, now);
            tx.insert(&run)?;
            Ok((run, End::Commit))
        })
    }

    fn get(&mut self, session: &str) -> Result<Option<Run>> {
        within(self, false, |tx| {
            Ok((one(tx.runs(Which::Session(session))?), End::Rollback))
        })
    }

    fn find_task(&mut self, task_dir: &str) -> Result<Option<Run>> {
        within(self, false, |tx| {
            Ok((one(tx.runs(Which::Task(task_dir))?), End::Rollback))
        })
    }

    fn list(&mut self) -> Result<Vec<Run>> {
        within(self, false, |tx| Ok((tx.runs(Which::All)?, End::Rollback)))
    }

    fn claim(
        &mut self,
        selection: Selection<'_>,
        owner: &str,
        host: &str,
        now: Time,
    ) -> Result<Vec<Claim>> {
        within(self, true, |tx| {
            let runs = match selection {
                Selection::Session(session) => tx.runs(Which::Session(session))?,
                Selection::All => tx.runs(Which::RunningOn(host))?,
            };
            let until = plus(now, LEASE);
            let mut claims = Vec::with_capacity(runs.len());
            for mut run in runs {
                match claimable(&run, host, now) {
                    Ok(()) => {
                        // Adopted for this host when it has none.
                        run.spec.host = host.to_string();
                        run.claimed_by = Some(owner.to_string());
                        run.claimed_until = Some(until);
                        claims.push(Claim::Claimed(Box::new(run)));
                    }
                    Err(why) => claims.push(Claim::Skipped(Box::new(run), why)),
                }
            }
            let sessions: Vec<&str> = claims
                .iter()
                .filter_map(|claim| match claim {
                    Claim::Claimed(run) => Some(run.spec.session.as_str()),
                    Claim::Skipped(..) => None,
                })
                .collect();
            tx.claim_rows(&sessions, owner, until, host)?;
            Ok((claims, End::Commit))
        })
    }

    fn save(&mut self, run: &Run, owner: &str) -> Result<bool> {
        within(self, true, |tx| {
            let Some(stored) = one(tx.runs(Which::Session(&run.spec.session))?) else {
                return Ok((false, End::Rollback));
            };
            if stored.claimed_by.as_deref() != Some(owner) {
                return Ok((false, End::Rollback));
            }
            let mut next = run.clone();
            // Entries delivered meanwhile (by a tick that redelivered them) stay delivered.
            next.outbox = outbox::merge(&stored.outbox, &run.outbox);
            next.claimed_by = None;
            next.claimed_until = None;
            replace(tx, &next)?;
            Ok((true, End::Commit))
        })
    }

    fn record(
        &mut self,
        run: &Run,
        owner: &str,
        permit: Option<&PermitAsk>,
        now: Time,
    ) -> Result<Written> {
        within(self, true, |tx| {
            // The account row is locked first: concurrent permits contend on it, and every
            // transaction that takes it takes it before any run's row (the lock order).
            let mut account = match permit {
                Some(_) => Some(tx.account(&run.spec.account)?.unwrap_or_default()),
                None => None,
            };
            let Some(stored) = one(tx.runs(Which::Session(&run.spec.session))?) else {
                return Ok((Written::NotHeld, End::Rollback));
            };
            if stored.claimed_by.as_deref() != Some(owner) {
                return Ok((Written::NotHeld, End::Rollback));
            }
            if let (Some(ask), Some(account)) = (permit, account.as_mut()) {
                let name = &run.spec.account;
                // The account's other runs are counted, not changed, and not locked: locking
                // them after this run's row would cross a claim's session order. Permits are
                // serialized by the account row, so each sees the ones granted before it.
                let fleet = Fleet::of(&tx.peek(Which::RunningOf(name))?);
                let answer = governor::permit(account, &fleet, &ask.asker, &ask.options, now);
                if let governor::Permit::Wait { reason, .. } = &answer {
                    return Ok((Written::Refused(reason.clone()), End::Rollback));
                }
                governor::grant(account, &answer, now);
                tx.put_account(name, account)?;
            }
            let mut next = run.clone();
            next.outbox = outbox::merge(&stored.outbox, &run.outbox);
            next.claimed_by = stored.claimed_by;
            next.claimed_until = stored.claimed_until;
            replace(tx, &next)?;
            Ok((Written::Stored, End::Commit))
        })
    }

    fn amend(
        &mut self,
        session: &str,
        change: &mut dyn FnMut(&mut Run) -> bool,
    ) -> Result<Option<Run>> {
        within(self, true, |tx| {
            let Some(mut run) = one(tx.runs(Which::Session(session))?) else {
                return Ok((None, End::Rollback));
            };
            if !change(&mut run) {
                return Ok((Some(run), End::Rollback));
            }
            run.claimed_by = None;
            run.claimed_until = None;
            replace(tx, &run)?;
            Ok((Some(run), End::Commit))
        })
    }

    fn settle(&mut self, session: &str, ids: &[String], now: Time) -> Result<()> {
        within(self, true, |tx| {
            let Some(mut run) = one(tx.runs(Which::Session(session))?) else {
                return Ok(((), End::Rollback));
            };
            if !outbox::settle(&mut run.outbox, ids, now) {
                return Ok(((), End::Rollback));
            }
            // Only the outbox changes: the claim and the rest are the stored row's.
            replace(tx, &run)?;
            Ok(((), End::Commit))
        })
    }

    fn post(&mut self, session: &str, entries: &[outbox::Entry]) -> Result<()> {
        within(self, true, |tx| {
            let Some(mut run) = one(tx.runs(Which::Session(session))?) else {
                return Ok(((), End::Rollback));
            };
            let merged = outbox::merge(&run.outbox, entries);
            if merged == run.outbox {
                return Ok(((), End::Rollback));
            }
            run.outbox = merged;
            // Only the outbox changes, as in settle.
            replace(tx, &run)?;
            Ok(((), End::Commit))
        })
    }

    fn take_outbox(&mut self, now: Time) -> Result<Vec<outbox::Pending>> {
        within(self, true, |tx| {
            let mut taken = Vec::new();
            for mut run in tx.runs(Which::Outbox)? {
                let entries = outbox::lease_due(&mut run.outbox, now);
                if entries.is_empty() {
                    continue;
                }
                replace(tx, &run)?;
                taken.push(outbox::Pending {
                    session: run.spec.session.clone(),
                    task: run.spec.task_dir.clone(),
                    notify_command: run.spec.notify.clone(),
                    entries,
                });
            }
            let end = if taken.is_empty() {
                End::Rollback
            } else {
                End::Commit
            };
            Ok((taken, end))
        })
    }

    fn release(&mut self, session: &str, owner: &str) -> Result<()> {
        within(self, true, |tx| {
            match one(tx.runs(Which::Session(session))?) {
                Some(run) if run.claimed_by.as_deref() == Some(owner) => {
                    tx.set_claim(session, None, None, None)?;
                    Ok(((), End::Commit))
                }
                _ => Ok(((), End::Rollback)),
            }
        })
    }

    fn end(
        &mut self,
        session: &str,
        status: Status,
        reason: &str,
        message: Option<&str>,
        now: Time,
    ) -> Result<Option<Run>> {
        within(self, true, |tx| {
            let Some(mut run) = one(tx.runs(Which::Session(session))?) else {
                return Ok((None, End::Rollback));
            };
            if !run.status.is_active() {
                return Ok((Some(run), End::Rollback));
            }
            run.end(
                status,
                StopReason::parse(reason),
                message.map(str::to_string),
                now,
            );
            run.claimed_by = None;
            run.claimed_until = None;
            replace(tx, &run)?;
            Ok((Some(run), End::Commit))
        })
    }

    fn account(&mut self, name: &str) -> Result<AccountView> {
        within(self, false, |tx| {
            let state = tx.account(name)?.unwrap_or_default();
            let fleet = Fleet::of(&tx.peek(Which::RunningOf(name))?);
            Ok((AccountView { state, fleet }, End::Rollback))
        })
    }

    fn accounts(&mut self) -> Result<Vec<(String, Account)>> {
        within(self, false, |tx| Ok((tx.accounts()?, End::Rollback)))
    }

    fn note_account(&mut self, name: &str, events: &[governor::Event], now: Time) -> Result<bool> {
        if events.is_empty() {
            return Ok(false);
        }
        within(self, true, |tx| {
            let mut account = tx.account(name)?.unwrap_or_default();
            let first = governor::apply(&mut account, events, now);
            tx.put_account(name, &account)?;
            Ok((first, End::Commit))
        })
    }

    fn hosts(&mut self) -> Result<Vec<Host>> {
        within(self, false, |tx| Ok((tx.hosts()?, End::Rollback)))
    }

    fn host_alive(&mut self, name: &str, lease: Duration, now: Time) -> Result<()> {
        within(self, true, |tx| {
            tx.put_host(&Host {
                name: name.to_string(),
                seen_at: now,
                lease_until: plus(now, lease),
                lost_announced_at: None,
            })?;
            Ok(((), End::Commit))
        })
    }

    fn announce_lost_hosts(&mut self, now: Time) -> Result<Vec<Host>> {
        within(self, true, |tx| {
            let mut lost = Vec::new();
            for mut host in tx.hosts()? {
                if host.lost(now) && host.lost_announced_at.is_none() {
                    host.lost_announced_at = Some(now);
                    tx.put_host(&host)?;
                    lost.push(host);
                }
            }
            let end = if lost.is_empty() {
                End::Rollback
            } else {
                End::Commit
            };
            Ok((lost, end))
        })
    }
}

/// Replace a run's row.
fn replace(tx: &mut dyn Tx, run: &Run) -> Result<()> {
    tx.replace(run)
}
