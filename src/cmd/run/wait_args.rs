//! The wait and notification flags `run tick`, `run watch` and `run start` share, and what
//! they become ([`crate::supervise::wait`], [`crate::supervise::notify`]).

use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::supervise::notify::{self, Notifier};
use crate::supervise::wait::{self, WaitLimits, WaitOptions};

/// `run tick` and `run watch`: who is told, how often, how long a notify command may take.
#[derive(Debug, Clone, Args)]
pub struct NotifyArgs {
    /// Run CMD (with `sh -c`) once for each event: escalate, needs-person, resume,
    /// quota-wait-start, quota-wait-end, stop, finish, lost, exit, stall-limit, restart
    ///
    /// The event is one JSON object on its stdin (schema: `autoctl schema show
    /// notify-event`), with AUTOCTL_EVENT, AUTOCTL_SESSION, AUTOCTL_TASK and AUTOCTL_REASON in
    /// its environment. A run started with its own --notify gets both. Each event is
    /// announced once, by the tick that decided it, even with many ticks and watchers. A
    /// command that fails or outlives --notify-timeout is logged (and killed) and never fails
    /// the tick. Default: $AUTOCTL_NOTIFY.
    #[arg(long, value_name = "CMD")]
    pub notify: Option<String>,
    /// Kill a notify command (and what it started) still running after this long
    #[arg(long, value_name = "DURATION", default_value = notify::DEFAULT_TIMEOUT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub notify_timeout: Duration,
    /// Announce a run that still needs a person again at most this often (needs-person)
    #[arg(long, value_name = "DURATION", default_value = wait::DEFAULT_RENOTIFY,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub renotify: Duration,
}

impl NotifyArgs {
    /// The notifier: --notify, else AUTOCTL_NOTIFY (empty means none).
    pub fn notifier(&self) -> Notifier {
        let command = self
            .notify
            .clone()
            .or_else(|| std::env::var(notify::ENV).ok())
            .filter(|c| !c.trim().is_empty());
        Notifier {
            command,
            timeout: self.notify_timeout,
        }
    }

    pub fn options(&self) -> WaitOptions {
        WaitOptions {
            renotify: self.renotify,
        }
    }
}

/// `run start`: how this run's waits end, and its own notify command.
#[derive(Debug, Clone, Args)]
pub struct WaitArgs {
    #[command(flatten)]
    pub limits: WaitLimitArgs,
    /// Run CMD for this run's events too (see `run tick --notify`)
    #[arg(long, value_name = "CMD")]
    pub notify: Option<String>,
}

impl WaitArgs {
    pub fn limits(&self) -> Result<WaitLimits> {
        self.limits.limits()
    }
}

/// How waits end: `run start` (kept with the run) and `stall check`.
#[derive(Debug, Clone, Args)]
pub struct WaitLimitArgs {
    /// What autoctl types (then Enter) to resume the agent after a wait
    #[arg(long, value_name = "TEXT", default_value = wait::DEFAULT_RESUME_TEXT)]
    pub resume_text: String,
    /// Resumes per step after the agent gave up on an API error (backoff 1, 2, 4, 8 minutes, at most 30);
    /// then a person is asked
    #[arg(long, value_name = "N", default_value_t = wait::DEFAULT_MAX_RESUMES,
          value_parser = clap::value_parser!(u32).range(0..=100))]
    pub max_resumes: u32,
    /// After a usage limit's reset, wait this long before resuming (while Claude Code's own
    /// automatic continue is armed, at least 4m: it goes first)
    #[arg(long, value_name = "DURATION", default_value = wait::DEFAULT_RESUME_MARGIN,
          value_parser = crate::duration::parse, allow_hyphen_values = true)]
    pub resume_margin: Duration,
    /// After a resume at a usage limit, how long the agent has to start working before a
    /// person is asked
    #[arg(long, value_name = "DURATION", default_value = wait::DEFAULT_RESUME_CHECK,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub resume_check: Duration,
    /// The longest wait for the agent's own retries (its countdown on screen)
    #[arg(long, value_name = "DURATION", default_value = wait::DEFAULT_MAX_RETRY_WAIT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub max_retry_wait: Duration,
    /// The longest wait for a usage limit without a reset time, and the farthest reset
    /// waited for
    #[arg(long, value_name = "DURATION", default_value = wait::DEFAULT_MAX_QUOTA_WAIT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub max_quota_wait: Duration,
    /// A working screen unchanged this long with no tool running is a wedged stream (one
    /// Esc, then the resume text)
    #[arg(long, value_name = "DURATION", default_value = wait::DEFAULT_STREAM_TIMEOUT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub stream_timeout: Duration,
    /// A tool running this long is escalated (a running tool is never a stall)
    #[arg(long, value_name = "DURATION", default_value = wait::DEFAULT_TOOL_TIMEOUT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub tool_timeout: Duration,
    /// A screen autoctl cannot read (class unknown: a dialog it does not know, a REPL in
    /// front of the agent) unchanged this long is escalated once, with its last lines
    #[arg(long, value_name = "DURATION", default_value = wait::DEFAULT_UNKNOWN_AFTER,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub unknown_after: Duration,
}

impl WaitLimitArgs {
    pub fn limits(&self) -> Result<WaitLimits> {
        crate::supervise::stall::step_timeout::check_continuation(&self.resume_text)
            .map_err(|err| anyhow::anyhow!("--resume-text: {err:#}"))?;
        Ok(WaitLimits {
            resume_text: self.resume_text.clone(),
            max_resumes: self.max_resumes,
            resume_margin: self.resume_margin,
            resume_check: self.resume_check,
            max_retry_wait: self.max_retry_wait,
            max_quota_wait: self.max_quota_wait,
            stream_timeout: self.stream_timeout,
            tool_timeout: self.tool_timeout,
            unknown_after: self.unknown_after,
        })
    }
}
