//! Running notify commands: the only place that does. A tick's events
//! ([`crate::supervise::tick::notice`]) are delivered to the driver's `--notify CMD` (or
//! `AUTOCTL_NOTIFY`) and to the run's own `run start --notify CMD`, then marked delivered in
//! the run's outbox ([`crate::supervise::outbox`]); events a killed tick stored and never
//! delivered are delivered by the next driver that finds them ([`Notifier::announce`]).
//!
//! Each command runs as `sh -c CMD` in its own process group, with the event as one JSON
//! object on stdin and `AUTOCTL_EVENT`, `AUTOCTL_EVENT_ID`, `AUTOCTL_SESSION`,
//! `AUTOCTL_TASK`, `AUTOCTL_REASON` in its environment; its stdout and stderr go to autoctl's stderr (stdout carries only
//! autoctl's answer). Every command of a batch runs at once and the batch is bounded by one
//! timeout: a command still running then is killed with its whole process group. A timeout,
//! a failure to start and a non-zero exit are one warning line each — a notification never
//! fails or blocks a tick for longer than its timeout.

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::output;
use crate::supervise::outbox::Pending;
use crate::supervise::store::Registry;
use crate::supervise::tick::TickEvent;
use crate::supervise::tick::notice::NotifyEvent;
use crate::time::Time;

/// `--notify-timeout`'s default.
pub const DEFAULT_TIMEOUT: &str = "10s";
/// The environment variable that names a notify command when `--notify` does not.
pub const ENV: &str = "AUTOCTL_NOTIFY";

/// Where a driver's events go.
#[derive(Debug, Clone, Default)]
pub struct Notifier {
    /// The driver's command (`--notify`, else `AUTOCTL_NOTIFY`).
    pub command: Option<String>,
    pub timeout: Duration,
}

/// One command to run for one event.
#[derive(Debug, Clone)]
pub struct Job {
    pub command: String,
    /// The event's outbox id (stable across redeliveries), when it was stored.
    pub id: Option<String>,
    pub event: String,
    pub session: String,
    pub task: String,
    pub reason: String,
    pub json: Vec<u8>,
}

impl Notifier {
    /// The jobs for a tick's events: each event to each distinct command (the driver's and
    /// the run's).
    pub fn jobs(&self, event: &TickEvent) -> Vec<Job> {
        let commands = self.commands(event.notify_command.as_deref());
        let mut jobs = Vec::new();
        for notice in &event.notify {
            let payload = NotifyEvent::of(event, notice);
            let mut json = serde_json::to_vec(&payload).expect("serializable");
            json.push(b'\n');
            for command in &commands {
                jobs.push(Job {
                    command: command.to_string(),
                    id: notice.id.clone(),
                    event: notice.event.as_str().to_string(),
                    session: event.session.clone(),
                    task: event.task.clone(),
                    reason: notice.reason.clone(),
                    json: json.clone(),
                });
            }
        }
        jobs
    }

    /// The distinct commands an event of a run goes to: the driver's and the run's own.
    fn commands<'a>(&'a self, run_command: Option<&'a str>) -> Vec<&'a str> {
        let mut commands: Vec<&str> = Vec::new();
        for command in [self.command.as_deref(), run_command].into_iter().flatten() {
            if !command.trim().is_empty() && !commands.contains(&command) {
                commands.push(command);
            }
        }
        commands
    }

    /// The jobs for outbox entries a killed deliverer left: each stored event, as it was
    /// built, to each distinct command.
    pub fn outbox_jobs(&self, pending: &Pending) -> Vec<Job> {
        let commands = self.commands(pending.notify_command.as_deref());
        let mut jobs = Vec::new();
        for entry in &pending.entries {
            let mut json = entry.payload.clone().into_bytes();
            json.push(b'\n');
            for command in &commands {
                jobs.push(Job {
                    command: command.to_string(),
                    id: Some(entry.id.clone()),
                    event: entry.event.clone(),
                    session: pending.session.clone(),
                    task: pending.task.clone(),
                    reason: entry.reason.clone(),
                    json: json.clone(),
                });
            }
        }
        jobs
    }

    /// Announce a driver's events and whatever a killed deliverer left in any run's outbox,
    /// then mark them delivered. A registry error while looking for or marking entries is a
    /// warning: the events themselves are delivered all the same, and what was not marked is
    /// delivered again later with the same id.
    pub fn announce(&self, registry: &mut dyn Registry, events: &[TickEvent], now: Time) {
        let mut jobs = match registry.take_outbox(now) {
            Ok(left) => left.iter().flat_map(|p| self.outbox_jobs(p)).collect(),
            Err(err) => {
                output::warn(&format!("notify: cannot read the outbox: {err:#}"));
                Vec::new()
            }
        };
        jobs.extend(events.iter().flat_map(|e| self.jobs(e)));
        let delivered = delivered_ids(&jobs);
        self.deliver(jobs);
        settle(registry, &delivered, now);
    }

    /// Deliver jobs now and wait for them, at most the timeout.
    pub fn deliver(&self, jobs: Vec<Job>) {
        deliver(jobs, self.timeout);
    }

    /// Deliver jobs on a thread of their own (`run watch` goes on deciding meanwhile). The
    /// thread returns the outbox ids it delivered, by session, for [`settle`].
    pub fn deliver_in_background(
        &self,
        jobs: Vec<Job>,
    ) -> Option<std::thread::JoinHandle<Delivered>> {
        if jobs.is_empty() {
            return None;
        }
        let timeout = self.timeout;
        Some(std::thread::spawn(move || {
            let delivered = delivered_ids(&jobs);
            deliver(jobs, timeout);
            delivered
        }))
    }
}

/// Outbox ids by session.
pub type Delivered = Vec<(String, Vec<String>)>;

/// The outbox ids a batch of jobs carries, by session (each once).
fn delivered_ids(jobs: &[Job]) -> Delivered {
    let mut by_session: Delivered = Vec::new();
    for job in jobs {
        let Some(id) = &job.id else { continue };
        match by_session.iter_mut().find(|(s, _)| *s == job.session) {
            Some((_, ids)) if ids.contains(id) => {}
            Some((_, ids)) => ids.push(id.clone()),
            None => by_session.push((job.session.clone(), vec![id.clone()])),
        }
    }
    by_session
}

/// Mark delivered outbox entries as such. Whether the command succeeded does not matter: the
/// outbox guards against a driver that dies, not a receiver that fails (that is a warning).
pub fn settle(registry: &mut dyn Registry, delivered: &Delivered, now: Time) {
    for (session, ids) in delivered {
        if let Err(err) = registry.settle(session, ids, now) {
            output::warn(&format!(
                "notify: cannot mark {} event(s) of session {session:?} delivered (they will be delivered again): {err:#}",
                ids.len()
            ));
        }
    }
}

fn spawn(job: &Job) -> std::io::Result<Child> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(&job.command)
        .env("AUTOCTL_EVENT", &job.event)
        .env("AUTOCTL_EVENT_ID", job.id.as_deref().unwrap_or(""))
        .env("AUTOCTL_SESSION", &job.session)
        .env("AUTOCTL_TASK", &job.task)
        .env("AUTOCTL_REASON", &job.reason)
        .stdin(Stdio::piped());
    // stdout is autoctl's answer: the command's output goes to stderr with its own.
    match (
        std::io::stderr().as_fd().try_clone_to_owned(),
        std::io::stderr().as_fd().try_clone_to_owned(),
    ) {
        (Ok(out), Ok(err)) => {
            cmd.stdout(Stdio::from(out)).stderr(Stdio::from(err));
        }
        _ => {
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
        }
    }
    // Its own process group, so a timeout kills what it started too (a `sleep`, a `curl`).
    cmd.process_group(0);
    let mut child = cmd.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its stdin closes it: that is no error.
        let _ = stdin.write_all(&job.json);
    }
    Ok(child)
}

fn describe(job: &Job) -> String {
    format!(
        "notify: {:?} for {} (session {:?})",
        job.command, job.event, job.session
    )
}

/// Kill a command and everything in its process group (`kill -KILL -- -PGID`: the crate
/// forbids `unsafe`, so no kill(2) here), then reap it.
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let killed = Command::new("kill")
        .args(["-s", "KILL", "--", &group])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !killed {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// Run every job at once; kill what still runs at the deadline.
fn deliver(jobs: Vec<Job>, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    let mut running: Vec<(Job, Child)> = Vec::new();
    for job in jobs {
        match spawn(&job) {
            Ok(child) => running.push((job, child)),
            Err(err) => output::warn(&format!("{}: cannot start: {err}", describe(&job))),
        }
    }
    let mut pause = Duration::from_millis(1);
    while !running.is_empty() {
        running.retain_mut(|(job, child)| match child.try_wait() {
            Ok(Some(status)) if status.success() => false,
            Ok(Some(status)) => {
                output::warn(&format!("{}: {status}", describe(job)));
                false
            }
            Ok(None) => true,
            Err(err) => {
                output::warn(&format!("{}: {err}", describe(job)));
                false
            }
        });
        if running.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            for (job, child) in &mut running {
                kill_group(child);
                output::warn(&format!(
                    "{}: still running after {}; killed",
                    describe(job),
                    crate::duration::format(timeout)
                ));
            }
            break;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}
