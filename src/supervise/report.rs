//! What `run status` shows about a run, in its three formats: a line per run for people, the
//! [`RunReport`] JSON object (`schemas/run-status.schema.json`), and the Prometheus
//! node_exporter textfile format so a fleet of hosts can be watched by Prometheus.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use crate::supervise::channels::{Source, SourceCounts};
use crate::supervise::governor::{self, ReadingSource, WindowKind};
use crate::supervise::run::{Mode, Run, Status, StopReason};
use crate::supervise::store::Host;
use crate::supervise::wait::{NeedsPerson, OpenWait};
use crate::time::{Time, format_time};

/// The latest signal, as `run status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignalReport {
    pub step: String,
    pub result: String,
    pub next: String,
    pub checkpoint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
}

/// One run, as `run status --format json` prints it (one object per line).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    pub session: String,
    pub task: String,
    pub status: Status,
    pub mode: Mode,
    pub target: String,
    pub iteration: u64,
    pub max_iterations: u64,
    /// Supervised time, quota waits excluded.
    pub elapsed_ms: u64,
    pub timeout_ms: u64,
    pub quota_wait_ms: u64,
    pub quota_waiting: bool,
    /// The step the loop is on (the latest signal's `next`, or the step typed in dispatch mode).
    pub step: Option<String>,
    pub last_signal: Option<SignalReport>,
    pub started_at: String,
    pub last_signal_at: Option<String>,
    pub ended_at: Option<String>,
    pub stop_reason: Option<StopReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_message: Option<String>,
    pub stall_count: u32,
    pub recoveries_iteration: u32,
    pub recoveries_total: u32,
    pub stall_threshold: u32,
    pub max_recoveries_iteration: u32,
    pub max_recoveries_total: u32,
    /// Harmless prompts answered this step, in all, and allowed per step (answers are not
    /// recoveries).
    pub answers_step: u32,
    pub answers_total: u32,
    pub max_answers: u32,
    /// Seed 002's content-based stalls: the agent's latest message said this many times in
    /// a row, of `repeat_limit` (a reasoning loop); the step timeout.
    pub message_repeats: u32,
    pub repeat_limit: u32,
    pub step_timeout_ms: u64,
    pub ticks: u64,
    pub last_tick_at: Option<String>,
    pub last_decision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
    /// Set while the run needs a person: why, since when, how often it was announced.
    pub needs_person: Option<NeedsPerson>,
    /// The wait the run is in (kind, since, maximum, reset), if any.
    pub wait: Option<OpenWait>,
    /// Resumes typed this step.
    pub resumes: u32,
    /// The agent's state at the last tick that saw its pane, and its source.
    pub agent_state: Option<AgentStateReport>,
    /// Every reading of the agent so far (one per tick that saw its pane), by where it came
    /// from, and the typed channels' share of them.
    pub sources: SourcesReport,
    /// Context compactions counted in the current iteration, of `max_compactions`.
    pub compactions: u32,
    pub max_compactions: u32,
    /// The subscription account the run spends (`run start --account`).
    pub account: String,
    /// `run start --priority`: release order after a reset, use of the weekly reserve.
    pub priority: i32,
    /// The host whose tmux server runs its pane (`AUTOCTL_HOST`).
    pub host: String,
    /// Since when its current step (or resume) holds the quota governor's permit.
    pub permit_since: Option<String>,
    /// The run's host stopped renewing its lease: it is not ticked or typed into from
    /// elsewhere until the host is back.
    pub host_lost: bool,
    /// The windows of its account (the freshest reading of each, from any of its sessions).
    pub account_windows: Vec<WindowReport>,
}

/// One usage window of an account as `run status` shows it (`schemas/account-status.schema.json`): the freshest reading from any
/// of the account's sessions, with its source and age.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowReport {
    pub account: String,
    pub window: WindowKind,
    /// Percent used now (0 once its reset has passed: a new, unread window).
    pub used_percentage: f64,
    pub resets_at: String,
    pub source: ReadingSource,
    /// When the session read it, and how long ago.
    pub read_at: String,
    pub age_ms: u64,
    /// The run whose session it came from.
    pub session: String,
}

/// An account as `run status` shows it: its windows, who holds a permit, who waits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccountReport {
    pub account: String,
    pub windows: Vec<WindowReport>,
    /// The learned cost of one step, in percent of the 5-hour window.
    pub cost_per_step: Option<f64>,
    /// Running runs whose step (or resume) holds a permit.
    pub permits: Vec<String>,
    /// Running runs in a quota wait (paced, or on a usage limit), in release order.
    pub waiting: Vec<String>,
}

/// Every account that has a stored state or a running run, by name.
pub fn accounts(
    stored: &[(String, governor::Account)],
    runs: &[Run],
    now: Time,
) -> Vec<AccountReport> {
    let mut names: Vec<&str> = stored.iter().map(|(name, _)| name.as_str()).collect();
    names.extend(
        runs.iter()
            .filter(|r| r.status.is_active())
            .map(|r| r.spec.account.as_str()),
    );
    names.sort_unstable();
    names.dedup();
    let millis = |d: chrono::TimeDelta| u64::try_from(d.num_milliseconds()).unwrap_or(0);
    names
        .into_iter()
        .map(|name| {
            let state = stored
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, a)| a.clone())
                .unwrap_or_default();
            let windows = WindowKind::ALL
                .iter()
                .filter_map(|kind| {
                    let r = state.window(*kind)?;
                    Some(WindowReport {
                        account: name.to_string(),
                        window: *kind,
                        used_percentage: r.used_at(now),
                        resets_at: format_time(r.resets_at),
                        source: r.source,
                        read_at: format_time(r.at),
                        age_ms: millis(now - r.at),
                        session: r.session.clone(),
                    })
                })
                .collect();
            let fleet = governor::Fleet::of(runs.iter().filter(|r| r.spec.account == name));
            let mut waiting = fleet.waiting;
            waiting.sort_by(|a, b| {
                b.priority
                    .cmp(&a.priority)
                    .then(a.since.cmp(&b.since))
                    .then(a.session.cmp(&b.session))
            });
            AccountReport {
                account: name.to_string(),
                windows,
                cost_per_step: state.cost_per_step,
                permits: fleet.in_flight,
                waiting: waiting.into_iter().map(|w| w.session).collect(),
            }
        })
        .collect()
}

/// The header of the accounts table (`run status --accounts`).
pub const ACCOUNTS_HEADER: &str =
    "ACCOUNT\tWINDOW\tUSED\tRESETS-AT\tSOURCE\tAGE\tCOST/STEP\tPERMITS\tWAITING";

impl AccountReport {
    /// Its lines of the accounts table: one per window read (or one line of `-`).
    pub fn text_lines(&self) -> Vec<String> {
        let cost = self
            .cost_per_step
            .map_or("-".to_string(), |c| format!("{c:.1}%"));
        let list = |v: &[String]| {
            if v.is_empty() {
                "-".to_string()
            } else {
                crate::output::printable(&v.join(","))
            }
        };
        let tail = format!("{cost}\t{}\t{}", list(&self.permits), list(&self.waiting));
        let name = crate::output::printable(&self.account);
        if self.windows.is_empty() {
            return vec![format!("{name}\t-\t-\t-\t-\t-\t{tail}")];
        }
        self.windows
            .iter()
            .map(|w| {
                format!(
                    "{name}\t{}\t{:.0}%\t{}\t{}\t{}\t{}",
                    w.window.as_str(),
                    w.used_percentage,
                    w.resets_at,
                    w.source.as_str(),
                    short(w.age_ms),
                    tail
                )
            })
            .collect()
    }
}

/// The run's readings by source, as `run status` reports them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourcesReport {
    pub hook: u64,
    pub statusline: u64,
    #[serde(rename = "app-server")]
    pub app_server: u64,
    /// Readings of the agent's own transcript file (Codex's rollout).
    pub transcript: u64,
    pub screen: u64,
    /// Readings before the agent the run launched showed itself (no typed event, the screen
    /// its launch left): no channel could have answered them, so they are not in the share.
    pub startup: u64,
    /// Readings from a typed channel (hooks, status line, app-server, transcript), in percent of all but
    /// the start-up ones; null before the first.
    pub typed_percent: Option<f64>,
}

impl SourcesReport {
    fn of(counts: &SourceCounts) -> SourcesReport {
        SourcesReport {
            hook: counts.hook,
            statusline: counts.statusline,
            app_server: counts.app_server,
            transcript: counts.transcript,
            screen: counts.screen,
            startup: counts.startup,
            typed_percent: counts.typed_percent(),
        }
    }
}

/// The agent's state as `run status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentStateReport {
    pub state: String,
    pub source: Source,
    /// The tick that read it.
    pub at: String,
}

impl RunReport {
    pub fn new(run: &Run, now: Time) -> RunReport {
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let end = run.ended_at.unwrap_or(now);
        RunReport {
            session: run.spec.session.clone(),
            task: run.spec.task_dir.clone(),
            status: run.status,
            mode: run.spec.mode,
            target: run.spec.target.clone(),
            iteration: run.iteration_count,
            max_iterations: run.spec.max_iterations,
            elapsed_ms: millis(run.elapsed(now)),
            timeout_ms: millis(run.spec.timeout),
            quota_wait_ms: millis(run.quota_waited(end)),
            quota_waiting: run.stall.clock_paused_since.is_some() && run.status.is_active(),
            step: run.current_step().map(str::to_string),
            last_signal: run.last_signal.as_ref().map(|s| SignalReport {
                step: s.step.clone(),
                result: s.result.clone(),
                next: s.next.clone(),
                checkpoint: s.checkpoint.clone(),
                iteration: s.iteration,
            }),
            started_at: format_time(run.started_at),
            last_signal_at: run.last_signal_at.map(format_time),
            ended_at: run.ended_at.map(format_time),
            stop_reason: run.stop_reason.clone(),
            stop_message: run.stop_message.clone(),
            stall_count: run.stall.unchanged,
            recoveries_iteration: run.stall.recoveries_iteration,
            recoveries_total: run.stall.recoveries_total,
            stall_threshold: run.spec.limits.threshold,
            max_recoveries_iteration: run.spec.limits.recoveries_per_iteration,
            max_recoveries_total: run.spec.limits.recoveries_total,
            answers_step: run.stall.answers_step,
            answers_total: run.stall.answers_total,
            max_answers: run.spec.limits.max_answers,
            message_repeats: run.stall.message_repeats,
            repeat_limit: run.spec.limits.repeat_limit,
            step_timeout_ms: millis(run.spec.limits.step_timeout),
            ticks: run.ticks,
            last_tick_at: run.last_tick_at.map(format_time),
            last_decision: run.last_decision.clone(),
            claimed_by: run.claimed_by.clone(),
            needs_person: run
                .waits
                .needs_person
                .clone()
                .filter(|_| run.status.is_active()),
            wait: run.waits.open.clone().filter(|_| run.status.is_active()),
            resumes: run.waits.resumes,
            agent_state: run.agent_state.reading.as_ref().map(|a| AgentStateReport {
                state: a.state.to_string(),
                source: a.source,
                at: format_time(a.at),
            }),
            sources: SourcesReport::of(&run.agent_state.sources),
            compactions: run.compactions_this_iteration(),
            max_compactions: run.spec.max_compactions,
            account: run.spec.account.clone(),
            priority: run.spec.priority,
            host: run.spec.host.clone(),
            permit_since: run
                .governor
                .permit
                .filter(|_| run.status.is_active())
                .map(format_time),
            host_lost: false,
            account_windows: Vec::new(),
        }
    }

    /// What the run's fleet says of it: its account's windows, and whether its host's lease
    /// ran out (host-lost).
    pub fn with_fleet(
        mut self,
        accounts: &[AccountReport],
        hosts: &[Host],
        now: Time,
    ) -> RunReport {
        if let Some(account) = accounts.iter().find(|a| a.account == self.account) {
            self.account_windows = account.windows.clone();
        }
        self.host_lost =
            self.status.is_active() && hosts.iter().any(|h| h.name == self.host && h.lost(now));
        self
    }

    /// The state column of the text table: the status, with why it ended or what it waits on.
    fn state(&self) -> String {
        match (
            &self.stop_reason,
            &self.needs_person,
            self.quota_waiting,
            &self.wait,
        ) {
            (Some(reason), ..) => format!("{}:{reason}", self.status.as_str()),
            (None, Some(_), ..) => "needs-person".to_string(),
            _ if self.host_lost => "running:host-lost".to_string(),
            (None, None, _, Some(wait))
                if wait.kind == crate::supervise::wait::WaitKind::QuotaPaced =>
            {
                "running:quota-paced".to_string()
            }
            (None, None, true, _) => "running:quota-wait".to_string(),
            (None, None, false, Some(wait)) => format!("running:{}", wait.kind.as_str()),
            (None, None, false, None) => self.status.as_str().to_string(),
        }
    }

    /// The NEEDS-PERSON column: since when and why, or `-`.
    fn needs_person_column(&self) -> String {
        match &self.needs_person {
            Some(needs) => format!("since {}: {}", format_time(needs.since), needs.why),
            None => "-".to_string(),
        }
    }
}

/// The header of the text table. Each column says what its numbers are: `A/B` is a count
/// and its limit (`autoctl run status --help` has the legend). AGENT is the agent's state at
/// the last tick and where it came from (`idle/hook`, `permission/screen`).
pub const TEXT_HEADER: &str = "SESSION\tSTATE\tMODE\tITERATION/MAX\tELAPSED/TIMEOUT\tSTEP\tUNCHANGED/STALL-AT\tRECOVERIES(ITERATION)/MAX\tRECOVERIES(TOTAL)/MAX\tAGENT\tTASK\tNEEDS-PERSON";

impl RunReport {
    /// The AGENT column: the agent's state at the last tick and where it came from
    /// (`idle/hook`, `permission/screen`), or `-` before the first tick that saw its pane.
    fn agent_column(&self) -> String {
        match &self.agent_state {
            Some(a) => format!("{}/{}", a.state, a.source.as_str()),
            None => "-".to_string(),
        }
    }
}

/// One line of the text table (tab-separated, so `cut -f` and `column -t -s$'\t'` work).
pub fn text_line(report: &RunReport) -> String {
    format!(
        "{}\t{}\t{}\t{}/{}\t{}/{}\t{}\t{}/{}\t{}/{}\t{}/{}\t{}\t{}\t{}",
        crate::output::printable(&report.session),
        report.state(),
        report.mode.as_str(),
        report.iteration,
        report.max_iterations,
        short(report.elapsed_ms),
        short(report.timeout_ms),
        report.step.as_deref().unwrap_or("-"),
        report.stall_count,
        report.stall_threshold,
        report.recoveries_iteration,
        report.max_recoveries_iteration,
        report.recoveries_total,
        report.max_recoveries_total,
        crate::output::printable(&report.agent_column()),
        crate::output::printable(&report.task),
        crate::output::printable(&report.needs_person_column()),
    )
}

/// A duration for people: whole seconds in the units `--timeout` takes (`2m10s`).
fn short(millis: u64) -> String {
    crate::duration::format(Duration::from_secs(millis / 1000))
}

/// The whole registry in the Prometheus text exposition format (node_exporter's textfile
/// collector reads it from `*.prom` files): the runs' state, what the agents are doing, the
/// accounts' usage windows, then when the file was written. Each family is one row:
/// a name, its help and its samples.
pub fn prometheus(reports: &[RunReport], accounts: &[AccountReport], now: Time) -> String {
    let mut text = Exposition::default();
    run_state_families(&mut text, reports);
    agent_families(&mut text, reports);
    loop_families(&mut text, reports);
    account_families(&mut text, reports, accounts, now);
    let _ = writeln!(
        text.out,
        "# HELP autoctl_status_timestamp_seconds When this file was written (Unix time).\n# TYPE autoctl_status_timestamp_seconds gauge\nautoctl_status_timestamp_seconds {}",
        seconds(u64::try_from(now.timestamp_millis()).unwrap_or(0))
    );
    text.out
}

/// The exposition text being written, one gauge family at a time.
#[derive(Default)]
struct Exposition {
    out: String,
}

impl Exposition {
    /// A gauge family: its help, its type and one line per `(labels, value)` sample.
    fn family(
        &mut self,
        name: &str,
        help: &str,
        samples: impl IntoIterator<Item = (String, String)>,
    ) {
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} gauge");
        for (labels, value) in samples {
            let _ = writeln!(self.out, "{name}{{{labels}}} {value}");
        }
    }

    /// A family with one sample per run that has a value, labelled with the run's session.
    fn per_run(
        &mut self,
        name: &str,
        help: &str,
        reports: &[RunReport],
        value: impl Fn(&RunReport) -> Option<String>,
    ) {
        let samples = reports
            .iter()
            .filter_map(|r| value(r).map(|v| (label("session", &r.session), v)));
        self.family(name, help, samples);
    }
}

/// The runs' counts by status, what each run is, and its loop's limits and times.
fn run_state_families(text: &mut Exposition, reports: &[RunReport]) {
    text.family(
        "autoctl_runs",
        "Registered runs by status.",
        Status::ALL.iter().map(|status| {
            let count = reports.iter().filter(|r| r.status == *status).count();
            (label("status", status.as_str()), count.to_string())
        }),
    );
    text.family(
        "autoctl_run_info",
        "A registered run (always 1), labelled with its task, mode, status, reason and step.",
        reports.iter().map(|r| {
            let labels = [
                label("session", &r.session),
                label("task", &r.task),
                label("mode", r.mode.as_str()),
                label("status", r.status.as_str()),
                label(
                    "reason",
                    r.stop_reason.as_ref().map_or("", StopReason::as_str),
                ),
                label("step", r.step.as_deref().unwrap_or("")),
            ]
            .join(",");
            (labels, "1".to_string())
        }),
    );
    text.per_run(
        "autoctl_run_running",
        "1 while the loop is supervised, 0 once it has ended.",
        reports,
        |r| Some(u8::from(r.status.is_active()).to_string()),
    );
    text.per_run(
        "autoctl_run_iteration",
        "The loop's iteration count.",
        reports,
        |r| Some(r.iteration.to_string()),
    );
    text.per_run(
        "autoctl_run_max_iterations",
        "The iteration limit.",
        reports,
        |r| Some(r.max_iterations.to_string()),
    );
    text.per_run(
        "autoctl_run_elapsed_seconds",
        "Supervised time, quota waits excluded.",
        reports,
        |r| Some(seconds(r.elapsed_ms)),
    );
    text.per_run(
        "autoctl_run_timeout_seconds",
        "The time limit.",
        reports,
        |r| Some(seconds(r.timeout_ms)),
    );
    text.per_run(
        "autoctl_run_quota_wait_seconds",
        "Time spent waiting for a usage quota to reset.",
        reports,
        |r| Some(seconds(r.quota_wait_ms)),
    );
    text.per_run(
        "autoctl_run_quota_waiting",
        "1 while the run waits for a usage quota to reset.",
        reports,
        |r| Some(u8::from(r.quota_waiting).to_string()),
    );
}

/// What the running agents are doing: who needs a person, the agent's state and where its
/// readings came from.
fn agent_families(text: &mut Exposition, reports: &[RunReport]) {
    let active = || reports.iter().filter(|r| r.status.is_active());
    text.family(
        "autoctl_run_needs_person",
        "1 while the run needs a person (an escalation nobody acknowledged yet), labelled with why.",
        active().map(|r| {
            let reason = r.needs_person.as_ref().map_or("", |n| n.kind.as_str());
            (
                [label("session", &r.session), label("reason", reason)].join(","),
                u8::from(r.needs_person.is_some()).to_string(),
            )
        }),
    );
    text.family(
        "autoctl_run_agent_state",
        "The agent's state at the last tick (always 1 while running), labelled with the state and where it came from (hook, statusline, app-server, screen).",
        active().filter_map(|r| {
            let a = r.agent_state.as_ref()?;
            let labels = [
                label("session", &r.session),
                label("state", &a.state),
                label("source", a.source.as_str()),
            ]
            .join(",");
            Some((labels, "1".to_string()))
        }),
    );
    text.family(
        "autoctl_run_readings",
        "Readings of the agent's state so far (one per tick that saw its pane), labelled with where they came from (hook, statusline, app-server, transcript, screen).",
        reports.iter().flat_map(|r| {
            let s = &r.sources;
            [
                ("hook", s.hook),
                ("statusline", s.statusline),
                ("app-server", s.app_server),
                ("transcript", s.transcript),
                ("screen", s.screen),
            ]
            .map(|(source, n)| {
                (
                    [label("session", &r.session), label("source", source)].join(","),
                    n.to_string(),
                )
            })
        }),
    );
    text.per_run(
        "autoctl_run_startup_readings",
        "Readings made before the agent the run launched showed itself (no typed event, the screen its launch left); not in the typed share.",
        reports,
        |r| Some(r.sources.startup.to_string()),
    );
    text.per_run(
        "autoctl_run_typed_share",
        "The share (0 to 1) of the agent's readings that came from a typed channel (hooks, status line, app-server, transcript) rather than the screen.",
        reports,
        |r| r.sources.typed_percent.map(|p| format!("{}", p / 100.0)),
    );
}

/// How the loops go: compactions, unchanged captures and recoveries, the latest signal
/// and tick, and whether the run's host is lost.
fn loop_families(text: &mut Exposition, reports: &[RunReport]) {
    text.per_run(
        "autoctl_run_compactions",
        "Context compactions counted in the current iteration.",
        reports,
        |r| Some(r.compactions.to_string()),
    );
    text.per_run(
        "autoctl_run_max_compactions",
        "Context compactions allowed in one iteration (0: no limit).",
        reports,
        |r| Some(r.max_compactions.to_string()),
    );
    text.per_run(
        "autoctl_run_stall_count",
        "Unchanged screen captures in a row.",
        reports,
        |r| Some(r.stall_count.to_string()),
    );
    text.family(
        "autoctl_run_recoveries",
        "Stall recoveries spent, in this iteration and in total.",
        reports.iter().flat_map(|r| {
            [
                ("iteration", r.recoveries_iteration),
                ("total", r.recoveries_total),
            ]
            .map(|(scope, value)| {
                (
                    format!("{},{}", label("session", &r.session), label("scope", scope)),
                    value.to_string(),
                )
            })
        }),
    );
    text.per_run(
        "autoctl_run_last_signal_timestamp_seconds",
        "When the latest new signal was seen (Unix time).",
        reports,
        |r| r.last_signal_at.as_deref().and_then(unix_seconds),
    );
    text.per_run(
        "autoctl_run_last_tick_timestamp_seconds",
        "When the run was last ticked (Unix time).",
        reports,
        |r| r.last_tick_at.as_deref().and_then(unix_seconds),
    );
    text.family(
        "autoctl_run_host_lost",
        "1 while the run's host has stopped renewing its lease (its pane is not ticked from elsewhere).",
        reports.iter().filter(|r| r.status.is_active()).map(|r| {
            (
                [label("session", &r.session), label("host", &r.host)].join(","),
                u8::from(r.host_lost).to_string(),
            )
        }),
    );
}

/// The accounts' usage windows (used share, time to reset, age of the reading), the
/// governor's permits and the runs it paces.
fn account_families(
    text: &mut Exposition,
    reports: &[RunReport],
    accounts: &[AccountReport],
    now: Time,
) {
    let windows = || accounts.iter().flat_map(|a| &a.windows);
    let window_labels = |w: &WindowReport| {
        [
            label("account", &w.account),
            label("window", w.window.as_str()),
        ]
        .join(",")
    };
    text.family(
        "autoctl_account_window_used_ratio",
        "The share of an account's usage window used (0 to 1), from the freshest reading of any of its sessions.",
        windows().map(|w| (window_labels(w), format!("{:.4}", w.used_percentage / 100.0))),
    );
    text.family(
        "autoctl_account_reset_seconds",
        "Seconds until an account's usage window resets (0 once it has).",
        windows().map(|w| {
            let left = crate::time::parse_time(&w.resets_at)
                .map_or(0, |t| (t - now).num_milliseconds().max(0));
            (window_labels(w), seconds(u64::try_from(left).unwrap_or(0)))
        }),
    );
    text.family(
        "autoctl_account_reading_age_seconds",
        "How old an account window's freshest reading is.",
        windows().map(|w| (window_labels(w), seconds(w.age_ms))),
    );
    text.family(
        "autoctl_account_permits",
        "Running runs of the account whose step or resume holds the quota governor's permit.",
        accounts
            .iter()
            .map(|a| (label("account", &a.account), a.permits.len().to_string())),
    );
    text.family(
        "autoctl_runs_paced",
        "Running runs of the account that the quota governor holds (quota-paced).",
        accounts.iter().map(|a| {
            let paced = reports
                .iter()
                .filter(|r| r.account == a.account && r.status.is_active())
                .filter(|r| {
                    r.wait
                        .as_ref()
                        .is_some_and(|w| w.kind == crate::supervise::wait::WaitKind::QuotaPaced)
                })
                .count();
            (label("account", &a.account), paced.to_string())
        }),
    );
}

/// `name="value"` with the exposition format's escapes (backslash, double quote, newline).
fn label(name: &str, value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for ch in value.chars() {
        match ch {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' => escaped.push_str("\\n"),
            // Any other control character as `printable` shows it, its backslash escaped
            // (the exposition format knows no other escape).
            c if c.is_control() => {
                escaped.push_str(&crate::output::printable(&c.to_string()).replace('\\', "\\\\"))
            }
            c => escaped.push(c),
        }
    }
    format!("{name}=\"{escaped}\"")
}

fn seconds(millis: u64) -> String {
    if millis.is_multiple_of(1000) {
        (millis / 1000).to_string()
    } else {
        format!("{}.{:03}", millis / 1000, millis % 1000)
    }
}

fn unix_seconds(text: &str) -> Option<String> {
    crate::time::parse_time(text).map(|t| seconds(u64::try_from(t.timestamp_millis()).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervise::run::NewRun;
    use crate::supervise::stall::Limits;
    use chrono::DateTime;

    fn run(session: &str) -> Run {
        let new = NewRun {
            session: session.into(),
            task_dir: "/t/a \"b\"".into(),
            target: session.into(),
            mode: Mode::Observe,
            agent: crate::pane::Agent::Claude,
            launch_command: None,
            command_template: String::new(),
            into: crate::supervise::run::DispatchInto::Shell,
            table: "ai-cli-task".into(),
            max_iterations: 20,
            timeout: Duration::from_secs(1800),
            limits: Limits::default(),
            wait_limits: crate::supervise::wait::WaitLimits::default(),
            notify: None,
            max_compactions: 3,
            account: "default".into(),
            priority: 0,
            host: "here".into(),
        };
        Run::new(&new, DateTime::from_timestamp(1_700_000_000, 0).unwrap())
    }

    #[test]
    fn labels_are_escaped() {
        assert_eq!(label("s", "a\"b\\c\nd"), r#"s="a\"b\\c\nd""#);
        assert_eq!(label("s", "x\u{1b}[2J"), r#"s="x\\u{1b}[2J""#);
    }

    #[test]
    fn prometheus_has_one_sample_per_run_and_every_status() {
        let now = DateTime::from_timestamp(1_700_000_090, 500_000_000).unwrap();
        let reports = vec![
            RunReport::new(&run("a;b $(x)"), now),
            RunReport::new(&run("c"), now),
        ];
        let text = prometheus(&reports, &[], now);
        assert!(
            text.contains("autoctl_runs{status=\"running\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("autoctl_runs{status=\"lost\"} 0\n"), "{text}");
        assert!(
            text.contains("autoctl_run_elapsed_seconds{session=\"a;b $(x)\"} 90.500\n"),
            "{text}"
        );
        assert!(text.contains(r#"task="/t/a \"b\"""#), "{text}");
        // Every sample line is `name{labels} value` with a numeric value.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }

    #[test]
    fn the_readings_by_source_and_the_typed_share_are_reported() {
        let now = DateTime::from_timestamp(1_700_000_130, 0).unwrap();
        let mut r = run("s");
        let empty = RunReport::new(&r, now);
        let json = serde_json::to_value(&empty).unwrap();
        assert_eq!(json["sources"]["typed_percent"], serde_json::Value::Null);
        for source in [
            Source::Screen,
            Source::Hook,
            Source::Hook,
            Source::AppServer,
            Source::Transcript,
        ] {
            r.agent_state.sources.count(source);
        }
        r.agent_state.sources.startup = 3;
        let report = RunReport::new(&r, now);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["sources"]["startup"], 3);
        assert!(
            prometheus(std::slice::from_ref(&report), &[], now)
                .contains("autoctl_run_startup_readings{session=\"s\"} 3\n")
        );
        assert_eq!(json["sources"]["hook"], 2);
        assert_eq!(json["sources"]["app-server"], 1);
        assert_eq!(json["sources"]["transcript"], 1);
        assert_eq!(json["sources"]["screen"], 1);
        assert_eq!(json["sources"]["typed_percent"], 80.0);
        let text = prometheus(&[report], &[], now);
        assert!(
            text.contains("autoctl_run_readings{session=\"s\",source=\"app-server\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("autoctl_run_typed_share{session=\"s\"} 0.8\n"),
            "{text}"
        );
    }

    #[test]
    fn text_line_reads_like_the_header() {
        let now = DateTime::from_timestamp(1_700_000_130, 0).unwrap();
        let line = text_line(&RunReport::new(&run("s"), now));
        assert_eq!(
            line,
            "s\trunning\tobserve\t0/20\t2m10s/30m\t-\t0/3\t0/3\t0/10\t-\t/t/a \"b\"\t-"
        );
        assert_eq!(line.split('\t').count(), TEXT_HEADER.split('\t').count());
    }

    #[test]
    fn the_agent_state_and_its_source_are_in_every_format() {
        let now = DateTime::from_timestamp(1_700_000_130, 0).unwrap();
        let mut r = run("s");
        assert_eq!(RunReport::new(&r, now).agent_column(), "-");
        r.agent_state.reading = Some(crate::supervise::run::AgentReading {
            state: "failed:rate_limit".into(),
            source: Source::Statusline,
            at: now,
        });
        r.agent_state.compactions = crate::taskai::compaction::CompactionCount {
            iteration: 0,
            count: 2,
        };
        let report = RunReport::new(&r, now);
        assert!(
            text_line(&report).contains("\tfailed:rate_limit/statusline\t"),
            "{}",
            text_line(&report)
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["agent_state"]["source"], "statusline");
        assert_eq!(json["agent_state"]["state"], "failed:rate_limit");
        assert_eq!(json["agent_state"]["at"], "2023-11-14T22:15:30.000Z");
        assert_eq!(
            (
                json["compactions"].as_u64(),
                json["max_compactions"].as_u64()
            ),
            (Some(2), Some(3))
        );
        let prom = prometheus(&[report], &[], now);
        assert!(
            prom.contains(
                "autoctl_run_agent_state{session=\"s\",state=\"failed:rate_limit\",source=\"statusline\"} 1\n"
            ),
            "{prom}"
        );
        assert!(
            prom.contains("autoctl_run_compactions{session=\"s\"} 2\n"),
            "{prom}"
        );
        // A later iteration starts its count over.
        r.iteration_count = 1;
        assert_eq!(RunReport::new(&r, now).compactions, 0);
    }

    #[test]
    fn a_task_path_with_line_breaks_and_tabs_stays_one_row() {
        let now = DateTime::from_timestamp(1_700_000_130, 0).unwrap();
        let mut hostile = run("s\tx");
        hostile.spec.task_dir = "/t/a\nfake\trow\u{1b}[2J".into();
        let line = text_line(&RunReport::new(&hostile, now));
        assert_eq!(line.lines().count(), 1, "{line}");
        assert_eq!(line.split('\t').count(), TEXT_HEADER.split('\t').count());
        assert!(line.starts_with("s\\tx\t"), "{line}");
        assert!(line.ends_with("/t/a\\nfake\\trow\\u{1b}[2J\t-"), "{line}");
        // The reason of a needs-person stays in its column too.
        hostile.waits.needs_person = Some(crate::supervise::wait::NeedsPerson {
            key: None,
            kind: crate::supervise::wait::EscalationKind::Screen,
            why: "a\nb\tc".into(),
            since: now,
            hash: None,
            announced_at: now,
            announcements: 1,
        });
        let line = text_line(&RunReport::new(&hostile, now));
        assert_eq!(line.split('\t').count(), TEXT_HEADER.split('\t').count());
        assert!(line.ends_with(": a\\nb\\tc"), "{line}");
        assert!(line.contains("\tneeds-person\t"), "{line}");
    }

    /// The whole exposition text of two runs and an account's two windows, pinned: every
    /// family, in order, with its help and its samples.
    #[test]
    fn prometheus_text_is_pinned() {
        let now = DateTime::from_timestamp(1_700_000_130, 0).unwrap();
        let mut a = run("s");
        a.agent_state.reading = Some(crate::supervise::run::AgentReading {
            state: "failed:rate_limit".into(),
            source: Source::Statusline,
            at: now,
        });
        a.agent_state.sources.count(Source::Hook);
        let mut b = run("t");
        b.status = Status::Stopped;
        let reports = vec![RunReport::new(&a, now), RunReport::new(&b, now)];
        let w = WindowReport {
            account: "default".into(),
            window: WindowKind::FiveHour,
            used_percentage: 42.5,
            resets_at: "2023-11-14T23:15:30Z".into(),
            source: ReadingSource::Statusline,
            read_at: "2023-11-14T22:15:30Z".into(),
            age_ms: 1500,
            session: "s".into(),
        };
        let accounts = vec![AccountReport {
            account: "default".into(),
            windows: vec![
                w.clone(),
                WindowReport {
                    window: WindowKind::SevenDay,
                    ..w
                },
            ],
            cost_per_step: None,
            permits: vec!["s".into()],
            waiting: vec![],
        }];
        assert_eq!(
            prometheus(&reports, &accounts, now),
            include_str!("../../tests/fixtures/report/status.prom")
        );
    }
}
