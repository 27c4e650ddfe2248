//! An in-memory [`Registry`] for unit tests of the tick core, and the model the SQLite
//! implementation is checked against (same claim rule, same conflicts).

use std::collections::BTreeMap;

use anyhow::Result;

use crate::supervise::governor::{self, Account, Fleet};
use crate::supervise::outbox;
use crate::supervise::run::{NewRun, Run, Status};
use crate::supervise::store::{
    AccountView, Claim, Host, LEASE, PermitAsk, Registry, Selection, StartConflict, Written,
    claimable,
};
use crate::time::{Time, plus};

#[derive(Debug, Default)]
pub struct MemoryRegistry {
    pub runs: BTreeMap<String, Run>,
    pub accounts: BTreeMap<String, Account>,
    pub hosts: BTreeMap<String, Host>,
}

impl Registry for MemoryRegistry {
    fn start(&mut self, new: &NewRun, now: Time) -> Result<Run> {
        if let Some(owner) = self.runs.get(&new.session)
            && owner.status.is_active()
        {
            return Err(StartConflict::error(new, owner));
        }
        if let Some(owner) = self
            .runs
            .values()
            .find(|r| r.spec.task_dir == new.task_dir && r.status.is_active())
        {
            return Err(StartConflict::error(new, owner));
        }
        self.runs
            .retain(|session, run| *session != new.session && run.spec.task_dir != new.task_dir);
        let run = Run::new(new, now);
        self.runs.insert(run.spec.session.clone(), run.clone());
        Ok(run)
    }

    fn get(&mut self, session: &str) -> Result<Option<Run>> {
        Ok(self.runs.get(session).cloned())
    }

    fn find_task(&mut self, task_dir: &str) -> Result<Option<Run>> {
        Ok(self
            .runs
            .values()
            .find(|r| r.spec.task_dir == task_dir)
            .cloned())
    }

    fn list(&mut self) -> Result<Vec<Run>> {
        Ok(self.runs.values().cloned().collect())
    }

    fn claim(
        &mut self,
        selection: Selection<'_>,
        owner: &str,
        host: &str,
        now: Time,
    ) -> Result<Vec<Claim>> {
        let mut claims = Vec::new();
        for run in self.runs.values_mut() {
            match selection {
                Selection::Session(session) if run.spec.session != session => continue,
                Selection::All
                    if !run.status.is_active()
                        || !(run.spec.host.is_empty() || run.spec.host == host) =>
                {
                    continue;
                }
                _ => {}
            }
            match claimable(run, host, now) {
                Ok(()) => {
                    if run.spec.host.is_empty() {
                        run.spec.host = host.to_string();
                    }
                    run.claimed_by = Some(owner.to_string());
                    run.claimed_until = Some(plus(now, LEASE));
                    claims.push(Claim::Claimed(Box::new(run.clone())));
                }
                Err(why) => claims.push(Claim::Skipped(Box::new(run.clone()), why)),
            }
        }
        Ok(claims)
    }

    fn save(&mut self, run: &Run, owner: &str) -> Result<bool> {
        match self.runs.get_mut(&run.spec.session) {
            Some(stored) if stored.claimed_by.as_deref() == Some(owner) => {
                let outbox = outbox::merge(&stored.outbox, &run.outbox);
                *stored = run.clone();
                stored.outbox = outbox;
                stored.claimed_by = None;
                stored.claimed_until = None;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn record(
        &mut self,
        run: &Run,
        owner: &str,
        permit: Option<&PermitAsk>,
        now: Time,
    ) -> Result<Written> {
        let held = self
            .runs
            .get(&run.spec.session)
            .is_some_and(|stored| stored.claimed_by.as_deref() == Some(owner));
        if !held {
            return Ok(Written::NotHeld);
        }
        if let Some(ask) = permit {
            let name = &run.spec.account;
            let fleet = Fleet::of(self.runs.values().filter(|r| r.spec.account == *name));
            let account = self.accounts.entry(name.clone()).or_default();
            let answer = governor::permit(account, &fleet, &ask.asker, &ask.options, now);
            if let governor::Permit::Wait { reason, .. } = &answer {
                return Ok(Written::Refused(reason.clone()));
            }
            governor::grant(account, &answer, now);
        }
        let stored = self.runs.get_mut(&run.spec.session).expect("held");
        let until = stored.claimed_until;
        let outbox = outbox::merge(&stored.outbox, &run.outbox);
        *stored = run.clone();
        stored.outbox = outbox;
        stored.claimed_by = Some(owner.to_string());
        stored.claimed_until = until;
        Ok(Written::Stored)
    }

    fn amend(
        &mut self,
        session: &str,
        change: &mut dyn FnMut(&mut Run) -> bool,
    ) -> Result<Option<Run>> {
        let Some(stored) = self.runs.get_mut(session) else {
            return Ok(None);
        };
        let mut run = stored.clone();
        if change(&mut run) {
            run.claimed_by = None;
            run.claimed_until = None;
            *stored = run.clone();
        }
        Ok(Some(run))
    }

    fn settle(&mut self, session: &str, ids: &[String], now: Time) -> Result<()> {
        if let Some(stored) = self.runs.get_mut(session) {
            outbox::settle(&mut stored.outbox, ids, now);
        }
        Ok(())
    }

    fn post(&mut self, session: &str, entries: &[outbox::Entry]) -> Result<()> {
        if let Some(stored) = self.runs.get_mut(session) {
            stored.outbox = outbox::merge(&stored.outbox, entries);
        }
        Ok(())
    }

    fn take_outbox(&mut self, now: Time) -> Result<Vec<outbox::Pending>> {
        let mut taken = Vec::new();
        for run in self.runs.values_mut() {
            let entries = outbox::lease_due(&mut run.outbox, now);
            if !entries.is_empty() {
                taken.push(outbox::Pending {
                    session: run.spec.session.clone(),
                    task: run.spec.task_dir.clone(),
                    notify_command: run.spec.notify.clone(),
                    entries,
                });
            }
        }
        Ok(taken)
    }

    fn release(&mut self, session: &str, owner: &str) -> Result<()> {
        if let Some(stored) = self.runs.get_mut(session)
            && stored.claimed_by.as_deref() == Some(owner)
        {
            stored.claimed_by = None;
            stored.claimed_until = None;
        }
        Ok(())
    }

    fn end(
        &mut self,
        session: &str,
        status: Status,
        reason: &str,
        message: Option<&str>,
        now: Time,
    ) -> Result<Option<Run>> {
        let Some(stored) = self.runs.get_mut(session) else {
            return Ok(None);
        };
        if stored.status.is_active() {
            stored.end(
                status,
                crate::supervise::run::StopReason::parse(reason),
                message.map(str::to_string),
                now,
            );
            stored.claimed_by = None;
            stored.claimed_until = None;
        }
        Ok(Some(stored.clone()))
    }

    fn account(&mut self, name: &str) -> Result<AccountView> {
        Ok(AccountView {
            state: self.accounts.get(name).cloned().unwrap_or_default(),
            fleet: Fleet::of(self.runs.values().filter(|r| r.spec.account == name)),
        })
    }

    fn accounts(&mut self) -> Result<Vec<(String, Account)>> {
        Ok(self
            .accounts
            .iter()
            .map(|(name, state)| (name.clone(), state.clone()))
            .collect())
    }

    fn note_account(&mut self, name: &str, events: &[governor::Event], now: Time) -> Result<bool> {
        if events.is_empty() {
            return Ok(false);
        }
        let account = self.accounts.entry(name.to_string()).or_default();
        Ok(governor::apply(account, events, now))
    }

    fn hosts(&mut self) -> Result<Vec<Host>> {
        Ok(self.hosts.values().cloned().collect())
    }

    fn host_alive(&mut self, name: &str, lease: std::time::Duration, now: Time) -> Result<()> {
        self.hosts.insert(
            name.to_string(),
            Host {
                name: name.to_string(),
                seen_at: now,
                lease_until: plus(now, lease),
                lost_announced_at: None,
            },
        );
        Ok(())
    }

    fn announce_lost_hosts(&mut self, now: Time) -> Result<Vec<Host>> {
        let mut lost = Vec::new();
        for host in self.hosts.values_mut() {
            if host.lost(now) && host.lost_announced_at.is_none() {
                host.lost_announced_at = Some(now);
                lost.push(host.clone());
            }
        }
        Ok(lost)
    }
}
