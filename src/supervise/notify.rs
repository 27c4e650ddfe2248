//! Running notify commands: the only place that does. A tick's events
//! ([`crate::supervise::wait::notice`]) are delivered to the driver's `--notify CMD` (or
//! `AUTOCTL_NOTIFY`) and to the run's own `run start --notify CMD`, once each.
//!
//! Each command runs as `sh -c CMD` in its own process group, with the event as one JSON
//! object on stdin and `AUTOCTL_EVENT`, `AUTOCTL_SESSION`, `AUTOCTL_TASK`, `AUTOCTL_REASON`
//! in its environment; its stdout and stderr go to autoctl's stderr (stdout carries only
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
use crate::supervise::tick::TickEvent;
use crate::supervise::wait::notice::NotifyEvent;

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
        let mut commands: Vec<&str> = Vec::new();
        for command in [self.command.as_deref(), event.notify_command.as_deref()]
            .into_iter()
            .flatten()
        {
            if !command.trim().is_empty() && !commands.contains(&command) {
                commands.push(command);
            }
        }
        let mut jobs = Vec::new();
        for notice in &event.notify {
            let payload = NotifyEvent::of(event, notice);
            let mut json = serde_json::to_vec(&payload).expect("serializable");
            json.push(b'\n');
            for command in &commands {
                jobs.push(Job {
                    command: command.to_string(),
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

    /// Deliver jobs now and wait for them, at most the timeout.
    pub fn deliver(&self, jobs: Vec<Job>) {
        deliver(jobs, self.timeout);
    }

    /// Deliver jobs on a thread of their own (`run watch` goes on deciding meanwhile).
    pub fn deliver_in_background(&self, jobs: Vec<Job>) -> Option<std::thread::JoinHandle<()>> {
        if jobs.is_empty() {
            return None;
        }
        let timeout = self.timeout;
        Some(std::thread::spawn(move || deliver(jobs, timeout)))
    }
}

fn spawn(job: &Job) -> std::io::Result<Child> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(&job.command)
        .env("AUTOCTL_EVENT", &job.event)
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
