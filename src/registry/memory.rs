//! An in-memory [`Registry`] for unit tests of the tick core, and the model the SQLite
//! implementation is checked against (same claim rule, same conflicts).

use std::collections::BTreeMap;

use anyhow::Result;

use crate::supervise::run::{NewRun, Run, Status};
use crate::supervise::store::{Claim, LEASE, Registry, Selection, StartConflict, claimable};
use crate::time::{Time, plus};

#[derive(Debug, Default)]
pub struct MemoryRegistry {
    pub runs: BTreeMap<String, Run>,
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

    fn claim(&mut self, selection: Selection<'_>, owner: &str, now: Time) -> Result<Vec<Claim>> {
        let mut claims = Vec::new();
        for run in self.runs.values_mut() {
            match selection {
                Selection::Session(session) if run.spec.session != session => continue,
                Selection::All if !run.status.is_active() => continue,
                _ => {}
            }
            match claimable(run, now) {
                Ok(()) => {
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
                *stored = run.clone();
                stored.claimed_by = None;
                stored.claimed_until = None;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn record(&mut self, run: &Run, owner: &str) -> Result<bool> {
        match self.runs.get_mut(&run.spec.session) {
            Some(stored) if stored.claimed_by.as_deref() == Some(owner) => {
                let until = stored.claimed_until;
                *stored = run.clone();
                stored.claimed_by = Some(owner.to_string());
                stored.claimed_until = until;
                Ok(true)
            }
            _ => Ok(false),
        }
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
            stored.end(status, reason, message.map(str::to_string), now);
            stored.claimed_by = None;
            stored.claimed_until = None;
        }
        Ok(Some(stored.clone()))
    }
}
