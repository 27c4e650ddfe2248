//! `autoctl run start|stop|status|lookup`: the daemon's state as commands over the run
//! registry (`$AUTOCTL_STATE_DIR/autoctl.db`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};

use crate::cli::Format;
use crate::error::{Reported, Verdict};
use crate::output;
use crate::pane::rules::RuleSet;
use crate::pane::{Agent, Class, Key};
use crate::protocol::signal::now_timestamp;
use crate::protocol::stop::{self, REASONS, StopRequest};
use crate::protocol::{signal, stop::StopState};
use crate::registry::sqlite::SqliteRegistry;
use crate::routing::{self, DEFAULT_TABLE, command};
use crate::supervise::driver::{self, World};
use crate::supervise::report::{self, RunReport};
use crate::supervise::run::{self as model, Mode, NewRun, Run, StallLimits, Status};
use crate::supervise::store::{Registry, Selection, StartConflict};
use crate::supervise::tick::{Decision, TickEvent, TickOptions};
use crate::supervise::{answer, inputs};
use crate::taskai::stall::Continuation;
use crate::time;
use crate::tmux::{CaptureOptions, Tmux, TmuxError};

#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Register a loop for a tmux session and a task module
    ///
    /// The run is stored in the registry ($AUTOCTL_STATE_DIR/autoctl.db) with its limits;
    /// `autoctl run tick` then supervises it. One loop per session and per task dir: a second
    /// start for either exits 3 and names the owner. A leftover `.auto-stop` in the task dir
    /// is removed (it would stop the new loop at once).
    Start(StartArgs),
    /// Stop a loop: write `.auto-stop` and end the run
    ///
    /// The agent sees the stop file at its next iteration boundary, exits, and removes its
    /// `.auto-signal` and `.auto-stop` (seed 000's cleanup split). In dispatch mode autoctl
    /// owns the signal and removes it here. Stopping a run that has already ended warns and
    /// succeeds.
    Stop(StopArgs),
    /// Show runs: iteration, elapsed time and timeout, current step, state, stalls, recoveries
    ///
    /// Elapsed time excludes quota waits (the timeout clock pauses while a usage limit
    /// resets). Ended runs stay listed with their reason until their session or task dir is
    /// started again. `--format prometheus` writes the node_exporter textfile format.
    Status(StatusArgs),
    /// Print the session whose loop owns a task dir (exit 1 when no loop runs there)
    Lookup(LookupArgs),
    /// One heartbeat for running loops; prints one JSON line per run
    ///
    /// For each run: read `.auto-signal` (a new iteration moves the counters and restores the
    /// per-iteration recovery budget; an invalid signal is reported, not fatal), enforce
    /// --max-iterations and --timeout (quota waits excluded) by writing `.auto-stop`, run the
    /// stall heartbeat (answer safe prompts, escalate the rest, stop past the recovery
    /// limits), in dispatch mode type the next command when the pane shows a ready shell, and
    /// detect the loop's end: a `(stop)` signal, a signal the agent removed at loop exit, a
    /// stop file, a shell prompt in front of a dead agent (two heartbeats in a row), a pane or
    /// task dir that is gone.
    ///
    /// Safe every minute from cron and when ticks overlap: each run is claimed in the registry
    /// (a lease of two minutes) so one tick at a time decides for it, and stall heartbeats
    /// are spaced by --heartbeat, so overlapping ticks never count one minute twice. Exit 0
    /// when every selected run was ticked, 1 when --session names no run, 2 when a run's tick
    /// failed (each failure is also one line on stderr).
    Tick(TickArgs),
    /// Send a continuation into a run's pane unless the task moved on (exit 1, nothing sent)
    ///
    /// Seed 002's "Silent Continue" with its race protection: under the pane's typing lock
    /// (the one `run tick` and `stall check` answer under), read the task's `.status.json`
    /// `updated_at` (else the file's modification time, as `run tick` reports it in
    /// `saw.status_updated_at`) and type TEXT and Enter only when it is still UPDATED_AT. When
    /// it changed, or the status can no longer be read, the user or the agent already moved
    /// the task on: nothing is sent and the exit status is 1, with the reason on stderr. The
    /// same holds when the pane does not show the agent idle at its own input (a permission
    /// menu, whose Enter would approve option 1; a shell; another program in front).
    Continue(ContinueArgs),
    /// Recover running loops after a restart (seed 000's server recovery)
    ///
    /// For each running run: remove a stale `.auto-stop`, look at the pane (the agent is alive:
    /// keep watching; a shell is in front: type the run's --launch command again, or in
    /// dispatch mode let the next tick dispatch the resume point; the pane is gone: the run is
    /// lost), and reset the stall baseline. Prints one JSON line per run, like `run tick`.
    Recover(RecoverArgs),
    /// Tick each loop the moment its signal or stop file changes; heartbeat the rest
    ///
    /// A foreground process (for systemd, tmux or a terminal) that makes the same decisions
    /// as `run tick`, as soon as they are due: it watches every running loop's task dir with
    /// inotify and runs the per-run tick when `.auto-signal` or `.auto-stop` appears, changes
    /// or goes (in dispatch mode the next command is typed about 0.1 s after the signal; if
    /// the pane is not ready yet it is looked at again after 25 ms, doubling to 30 s), and
    /// every --heartbeat it ticks every loop for stalls and limits, exactly like `run tick
    /// --all`. Loops started or stopped while it runs are picked up at once (it also watches
    /// the registry's directory). It prints the same JSON lines as `run tick`.
    ///
    /// Safe beside cron ticks and other watchers: every decision claims its run in the
    /// registry first (a lease taken in a `BEGIN IMMEDIATE` transaction), so one decision is
    /// made per run at a time and no command is typed twice. Bursts of writes are coalesced
    /// (20 ms); writes by rename are seen; a task dir deleted and recreated is watched again
    /// (a dir that stays gone is ended as lost by the next heartbeat); a dir that cannot be
    /// watched (fs.inotify.max_user_watches reached) is polled every 250 ms with a warning; a
    /// locked registry is retried with backoff.
    ///
    /// SIGTERM stops it between two decisions and exits 0 (a service stopped on purpose);
    /// SIGINT (Ctrl-C) and SIGHUP do the same and exit 130. With --session it also exits 0
    /// once that loop has ended, and 1 when there is no such run.
    ///
    /// Cron or watcher? Cron is simpler, the watcher saves the up to 60 s a loop waits for
    /// the next tick after each step; both may run together (README: "cron or run watch?").
    /// examples/systemd/autoctl-watch.service runs it as a user service.
    Watch(WatchArgs),
}

#[derive(Debug, Args)]
pub struct StartArgs {
    /// The tmux session the agent runs in (the run's name; any text, never run by a shell)
    #[arg(long, value_name = "NAME")]
    pub session: String,
    /// The task module directory (stored as its canonical path)
    #[arg(long, value_name = "DIR")]
    pub task: PathBuf,
    /// The tmux pane to watch and type into [default: the session's active pane]
    #[arg(long, value_name = "PANE")]
    pub target: Option<String>,
    /// Who drives the loop
    #[arg(long, value_enum, default_value_t)]
    pub mode: Mode,
    /// Stop the loop when its iteration count reaches N
    #[arg(long, value_name = "N", default_value_t = model::DEFAULT_MAX_ITERATIONS,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_iterations: u64,
    /// Stop the loop after this much supervised time (quota waits excluded), e.g. 30m, 1h30m
    #[arg(long, value_name = "DURATION", default_value = model::DEFAULT_TIMEOUT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// Dispatch mode: the command typed for each step
    ///
    /// Placeholders: {next}, {checkpoint}, {task}, {iteration}. A value may only hold
    /// letters, digits and `. _ - / : @ % + , =` and may not start with `-` (no shell
    /// metacharacters, no spaces); the template may not contain `!` (bash history expansion).
    /// The command must return to
    /// the shell when its step is done (the next step is typed at a shell prompt), e.g.
    /// `claude -p "/ai-cli-task {next} {task}"` for an agent that would otherwise stay open.
    #[arg(long, value_name = "TEMPLATE", default_value = command::DEFAULT_TEMPLATE)]
    pub command: String,
    /// Dispatch mode: the routing table that gives the entry step (built-in name or file)
    #[arg(long, value_name = "NAME|FILE", default_value = DEFAULT_TABLE)]
    pub table: String,
    /// Type the agent's command into the pane after registering (observe mode)
    ///
    /// TEMPLATE may use {task}; without a value it is seed 000's
    /// `claude "/ai-cli-task auto {task}"`. It is kept for `run recover`, which types it again
    /// when a shell is in front after a restart.
    ///
    /// The command is typed only at a shell prompt: when none shows within a few seconds
    /// (a program runs in the pane, or the shell is mid-command), nothing is typed, nothing is
    /// registered, and the exit status is 2. --force types it anyway.
    #[arg(long, value_name = "TEMPLATE", num_args = 0..=1,
          default_missing_value = DEFAULT_LAUNCH, require_equals = false)]
    pub launch: Option<String>,
    /// With --launch: type the command even when the pane shows no shell prompt
    #[arg(long, requires = "launch")]
    pub force: bool,
    /// How panes are read: `claude` acts only on the agent's own screen; `generic` reads any
    /// program's prompts (same safety policy)
    #[arg(long, value_enum, default_value_t)]
    pub agent: Agent,
    /// Unchanged captures in a row before a screen is examined as a suspected stall
    #[arg(long, value_name = "N", default_value_t = model::DEFAULT_STALL_THRESHOLD,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub threshold: u32,
    /// Stall recoveries allowed per iteration before the loop is stopped (stall_limit)
    #[arg(long, value_name = "N", default_value_t = model::DEFAULT_RECOVERIES_PER_ITERATION)]
    pub max_recoveries_per_iteration: u32,
    /// Stall recoveries allowed in total before the loop is stopped (stall_limit)
    #[arg(long, value_name = "N", default_value_t = model::DEFAULT_RECOVERIES_TOTAL)]
    pub max_recoveries: u32,
    /// The same agent message this many times in a row stops the loop (reasoning_loop; 0: never)
    #[arg(long, value_name = "N", default_value_t = crate::taskai::stall::REPEAT_LIMIT)]
    pub repeat_limit: u32,
    /// No .status.json update for this long is a step timeout (a stall: the screen decides
    /// the recovery, an idle agent gets a continuation)
    #[arg(long, value_name = "DURATION", default_value = model::DEFAULT_STEP_TIMEOUT,
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub step_timeout: Duration,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["session", "task"])))]
pub struct StopArgs {
    /// The run's session
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// The run's task module directory
    #[arg(long, value_name = "DIR")]
    pub task: Option<PathBuf>,
    /// Why the loop stops (written to `.auto-stop` and kept in the registry)
    #[arg(long, value_name = "REASON", default_value = "user_stop",
          value_parser = clap::builder::PossibleValuesParser::new(REASONS))]
    pub reason: String,
    /// A human-readable detail, kept in `.auto-stop` and the registry
    #[arg(long, value_name = "TEXT")]
    pub message: Option<String>,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").args(["session", "task", "all"])))]
pub struct StatusArgs {
    /// Only this session's run (exit 1 when there is none)
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Only the run of this task module directory (exit 1 when there is none)
    #[arg(long, value_name = "DIR")]
    pub task: Option<PathBuf>,
    /// Every run (the default)
    #[arg(long)]
    pub all: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: StatusFormat,
}

/// `run status` formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum StatusFormat {
    /// A tab-separated table with a header
    #[default]
    Text,
    /// One JSON object per run (JSON Lines; schema: autoctl schema show run-status)
    Json,
    /// Prometheus text exposition (node_exporter textfile collector)
    Prometheus,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["session", "all"])))]
pub struct TickArgs {
    /// Tick this session's run
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Tick every running run
    #[arg(long)]
    pub all: bool,
    /// Decide and print, but change nothing (no keys typed, no files written, no state saved)
    #[arg(long)]
    pub dry_run: bool,
    /// How often ticks are scheduled; stall heartbeats are spaced at least half of it apart
    #[arg(long, value_name = "DURATION", default_value = "60s",
          value_parser = crate::duration::parse_positive, allow_hyphen_values = true)]
    pub heartbeat: Duration,
    #[command(flatten)]
    pub rules: crate::cmd::pane::RulesOption,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["session", "all"])))]
pub struct WatchArgs {
    /// Watch this session's run (until it ends)
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Watch every running run, and runs started later
    #[arg(long)]
    pub all: bool,
    /// How often every run gets a heartbeat (stall checks, limits), as from cron; at least 1s
    #[arg(long, value_name = "DURATION", default_value = "60s",
          value_parser = parse_watch_heartbeat, allow_hyphen_values = true)]
    pub heartbeat: Duration,
    #[command(flatten)]
    pub rules: crate::cmd::pane::RulesOption,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["session", "task"])))]
pub struct ContinueArgs {
    /// The run's session
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// The run's task module directory
    #[arg(long, value_name = "DIR")]
    pub task: Option<PathBuf>,
    /// Send only if `.status.json`'s `updated_at` is still exactly this text
    #[arg(long, value_name = "UPDATED_AT", allow_hyphen_values = true)]
    pub if_unchanged: String,
    /// What to type (then Enter)
    #[arg(long, value_name = "TEXT", default_value = crate::taskai::stall::CONTINUATION)]
    pub text: String,
}

#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// Decide and print, but change nothing
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub rules: crate::cmd::pane::RulesOption,
}

#[derive(Debug, Args)]
pub struct LookupArgs {
    /// The task module directory
    #[arg(long, value_name = "DIR")]
    pub task: PathBuf,
    /// Output format (json: {"session_name","status"})
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// `run watch` repeats its heartbeat for as long as it runs: below a second it would be a busy
/// loop of batched ticks (tmux captures and registry writes many times a second). `run tick`
/// is one call and keeps short values (tests and benchmarks tick with 1ms).
fn parse_watch_heartbeat(text: &str) -> Result<Duration, String> {
    let heartbeat = crate::duration::parse_positive(text)?;
    if heartbeat < Duration::from_secs(1) {
        return Err(format!(
            "{text:?} is too short; the watcher's heartbeat is at least 1s (signals and stop files are seen at once, the heartbeat only checks stalls and limits)"
        ));
    }
    Ok(heartbeat)
}

/// Seed 000's agent command for `--launch` without a value.
pub const DEFAULT_LAUNCH: &str = r#"claude "/ai-cli-task auto {task}""#;

pub fn run(command: RunCommand, socket: Option<String>) -> Result<Verdict> {
    match command {
        RunCommand::Start(args) => start(&args, socket),
        RunCommand::Stop(args) => stop_run(&args),
        RunCommand::Status(args) => status(&args),
        RunCommand::Lookup(args) => lookup(&args),
        RunCommand::Tick(args) => tick(&args, socket),
        RunCommand::Continue(args) => continue_run(&args, socket),
        RunCommand::Recover(args) => recover(&args, socket),
        RunCommand::Watch(args) => watch(&args, socket),
    }
}

/// The state directory from the environment.
pub fn state_dir() -> Result<PathBuf> {
    crate::supervise::state_dir()
}

fn open() -> Result<SqliteRegistry> {
    SqliteRegistry::open(&state_dir()?)
}

/// The registry for a tick or a recovery: `None` when no database exists yet.
fn open_for_ticks() -> Result<Option<SqliteRegistry>> {
    let dir = state_dir()?;
    if !dir.join(crate::registry::DB_FILE).exists() {
        return Ok(None);
    }
    SqliteRegistry::open(&dir).map(Some)
}

/// The task dir as the registry keys it: canonical when it exists, else absolute (a loop whose
/// directory was deleted can still be looked up and stopped).
pub fn task_key(dir: &Path) -> Result<String> {
    let path = match std::fs::canonicalize(dir) {
        Ok(path) => path,
        Err(_) => {
            std::path::absolute(dir).with_context(|| format!("cannot resolve {}", dir.display()))?
        }
    };
    path.to_str()
        .map(str::to_string)
        .with_context(|| format!("{}: the path is not valid UTF-8", path.display()))
}

/// A session name is data: any text, but no control characters (they would corrupt the
/// one-line outputs and the terminal of whoever reads them).
fn check_name(kind: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        bail!("{kind} must not be empty");
    }
    if value.chars().any(char::is_control) {
        bail!("{kind} {value:?} contains a control character");
    }
    if value.len() > 1024 {
        bail!("{kind} is longer than 1024 bytes");
    }
    Ok(())
}

fn start(args: &StartArgs, socket: Option<String>) -> Result<Verdict> {
    check_name("--session", &args.session)?;
    // `=NAME:` is tmux's exact-match form (so `demo` never means `demo2`); it is checked
    // against the pane it resolves to below, since tmux reads some names (`$1`) as ids.
    let target = args
        .target
        .clone()
        .unwrap_or_else(|| format!("={}:", args.session));
    check_name("--target", &target)?;
    if target.starts_with('-') {
        bail!("--target {target:?} starts with '-'; name the pane explicitly (e.g. SESSION:0.0)");
    }
    crate::fsx::require_dir(&args.task)?;
    let task_dir = task_key(&args.task)?;
    // Fail now, not at the first tick: the table must load and the template must render.
    let table = routing::load(&args.table)?;
    let table_ref = if routing::builtin(&args.table).is_some() {
        args.table.clone()
    } else {
        task_key(Path::new(&args.table))?
    };
    let sample = BTreeMap::from([
        ("next", "plan".to_string()),
        ("checkpoint", String::new()),
        ("task", task_dir.clone()),
        ("iteration", "0".to_string()),
    ]);
    if args.mode == Mode::Dispatch {
        command::render(&args.command, &sample).context("--command")?;
    }
    drop(table);
    let launch_command = match &args.launch {
        Some(_) if args.mode == Mode::Dispatch => bail!(
            "--launch is for observe mode; in dispatch mode autoctl types each step itself (--command)"
        ),
        Some(template) => Some(command::render(template, &sample).context("--launch")?),
        None => None,
    };
    let new = NewRun {
        session: args.session.clone(),
        task_dir: task_dir.clone(),
        target,
        mode: args.mode,
        agent: args.agent,
        launch_command: launch_command.clone(),
        command_template: args.command.clone(),
        table: table_ref,
        max_iterations: args.max_iterations,
        timeout: args.timeout,
        limits: StallLimits {
            threshold: args.threshold,
            recoveries_per_iteration: args.max_recoveries_per_iteration,
            recoveries_total: args.max_recoveries,
            repeat_limit: args.repeat_limit,
            step_timeout: args.step_timeout,
        },
    };
    let mut registry = open()?;
    // A loop that already owns the session or the task dir is the answer (exit 3, naming the
    // owner) even when the pane is gone; the insert below checks again, atomically.
    let owner = match registry.get(&new.session)? {
        Some(run) if run.status.is_active() => Some(run),
        _ => registry
            .find_task(&new.task_dir)?
            .filter(|run| run.status.is_active()),
    };
    if let Some(owner) = owner {
        return Err(StartConflict::error(&new, &owner));
    }
    let tmux = Tmux::new(socket)?;
    let pane = match driver::pane_of(&tmux, &new.target) {
        Ok(pane) => pane,
        Err(err) if args.target.is_none() && TmuxError::is_not_found(&err) => bail!(
            "{err:#}; if session {:?} exists, pass --target with its pane (tmux reads some names, e.g. ones starting with $, as ids)",
            args.session
        ),
        Err(err) => return Err(err),
    };
    if args.target.is_none() {
        let session = pane.address.rsplit_once(':').map(|(session, _)| session);
        if pane.id.is_empty() || session != Some(args.session.as_str()) {
            bail!(
                "tmux cannot address session {:?} by its name; pass --target with its pane (e.g. --target %3, see `tmux list-panes -a`)",
                args.session
            );
        }
    }
    if launch_command.is_some() && !args.force {
        launch_ready(&tmux, &new.target)?;
    }
    let now = time::now()?;
    registry.start(&new, now)?;
    clear_stale_stop(Path::new(&task_dir));
    if let Some(command) = &launch_command {
        let keys = [Key::Text(command.clone()), Key::Key("Enter".to_string())];
        if let Err(err) = driver::type_keys(&tmux, &new.target, &keys) {
            let why = format!("could not launch the agent: {err:#}");
            registry.end(&new.session, Status::Lost, "launch_failed", Some(&why), now)?;
            bail!("{why}");
        }
    }
    Ok(Verdict::Yes)
}

/// How long `run start --launch` waits for a shell prompt (a pane created a moment ago is
/// still starting its shell).
const LAUNCH_READY_WAIT: Duration = Duration::from_secs(3);

/// Refuse to type the launch command unless a shell prompt is in front: text typed into a
/// running program is input to that program.
fn launch_ready(tmux: &Tmux, target: &str) -> Result<()> {
    let deadline = std::time::Instant::now() + LAUNCH_READY_WAIT;
    loop {
        let (ready, _, reason) = crate::cmd::pane::check_ready(tmux, target, RuleSet::embedded())?;
        if ready {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            bail!(
                "--launch: pane {target} is not at a shell prompt ({reason}); nothing typed or registered (wait with `autoctl pane ready {target} --wait 1m`, or pass --force)"
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn world<'a>(tmux: &'a Tmux, socket: Option<&'a str>, rules: &'a RuleSet) -> Result<World<'a>> {
    Ok(World {
        terminal: tmux,
        socket,
        rules,
        state_dir: state_dir()?,
    })
}

/// Print events, one JSON line each; failed runs also get a line on stderr.
fn print_events(events: &[TickEvent]) -> Result<Verdict> {
    let mut failed = false;
    for event in events {
        output::json_line(event)?;
        if event.decision == Decision::Error {
            failed = true;
            output::error_line(&format!(
                "session {:?}: {}",
                event.session,
                event.reasons.join("; ")
            ));
        }
    }
    if failed {
        return Err(Reported.into());
    }
    Ok(Verdict::Yes)
}

fn tick(args: &TickArgs, socket: Option<String>) -> Result<Verdict> {
    let rules = crate::cmd::pane::load_rules(args.rules.rules.as_ref())?;
    // A tick from cron on a machine where nothing was ever started has nothing to do, and
    // must not create state.
    let Some(mut registry) = open_for_ticks()? else {
        if let Some(session) = &args.session {
            output::warn(&format!("no run for session {session:?}"));
            return Ok(Verdict::No);
        }
        return Ok(Verdict::Yes);
    };
    let tmux = Tmux::new(socket.clone())?;
    let world = world(&tmux, socket.as_deref(), rules)?;
    let options = TickOptions {
        heartbeat: args.heartbeat,
        dry_run: args.dry_run,
        answers: true,
    };
    let now = time::now()?;
    let events = match &args.session {
        // The per-run decision a notification-driven driver calls, one run at a time.
        Some(session) => match driver::tick_one(&mut registry, &world, session, &options, now)? {
            Some(event) => vec![event],
            None => {
                output::warn(&format!("no run for session {session:?}"));
                return Ok(Verdict::No);
            }
        },
        None => driver::tick(&mut registry, &world, Selection::All, &options, now)?,
    };
    print_events(&events)
}

fn recover(args: &RecoverArgs, socket: Option<String>) -> Result<Verdict> {
    let rules = crate::cmd::pane::load_rules(args.rules.rules.as_ref())?;
    let Some(mut registry) = open_for_ticks()? else {
        return Ok(Verdict::Yes);
    };
    let tmux = Tmux::new(socket.clone())?;
    let world = world(&tmux, socket.as_deref(), rules)?;
    let options = TickOptions {
        heartbeat: Duration::from_secs(60),
        dry_run: args.dry_run,
        answers: false,
    };
    let events = driver::recover(&mut registry, &world, &options, time::now()?)?;
    print_events(&events)
}

fn watch(args: &WatchArgs, socket: Option<String>) -> Result<Verdict> {
    use crate::supervise::watch::{self, Config, Ended, Which};
    let rules = crate::cmd::pane::load_rules(args.rules.rules.as_ref())?;
    let watch_limit = watch::watch_limit_from_env()?;
    time::now()?;
    let (which, registry) = match &args.session {
        Some(session) => {
            check_name("--session", session)?;
            (Which::Session(session.clone()), open_for_ticks()?)
        }
        // A service started before any run: create the registry so it can be watched.
        None => (Which::All, Some(open()?)),
    };
    let Some(mut registry) = registry else {
        output::warn(&format!(
            "no run for session {:?}",
            args.session.as_deref().unwrap_or("")
        ));
        return Ok(Verdict::No);
    };
    registry.set_busy_timeout(watch::BUSY_TIMEOUT)?;
    let tmux = Tmux::new(socket.clone())?;
    let world = world(&tmux, socket.as_deref(), rules)?;
    let options = TickOptions {
        heartbeat: args.heartbeat,
        dry_run: false,
        answers: true,
    };
    let mut config = Config::new(which, options);
    config.watch_limit = watch_limit;
    let mut emit = |event: &TickEvent| -> Result<()> {
        output::json_line(event)?;
        if event.decision == Decision::Error {
            output::error_line(&format!(
                "session {:?}: {}",
                event.session,
                event.reasons.join("; ")
            ));
        }
        Ok(())
    };
    match watch::watch(&mut registry, &world, &config, &mut emit)? {
        Ended::Finished => Ok(Verdict::Yes),
        Ended::NoRun => {
            output::warn(&format!(
                "no run for session {:?}",
                args.session.as_deref().unwrap_or("")
            ));
            Ok(Verdict::No)
        }
        Ended::Signal(signal_hook::consts::SIGTERM) => Ok(Verdict::Yes),
        Ended::Signal(_) => Err(crate::error::Interrupted.into()),
    }
}

fn continue_run(args: &ContinueArgs, socket: Option<String>) -> Result<Verdict> {
    crate::cmd::stall::check_continuation(&args.text)?;
    let run = match SqliteRegistry::open_existing(&state_dir()?)? {
        None => None,
        Some(mut registry) => find(&mut registry, args.session.as_deref(), args.task.as_deref())?,
    };
    let Some(run) = run else {
        bail!(
            "no run for {}",
            describe_selection(args.session.as_deref(), args.task.as_deref())
        );
    };
    if !run.status.is_active() {
        bail!(
            "the run of session {:?} has ended ({}); there is no loop to continue",
            run.session,
            run.status.as_str()
        );
    }
    let dir = run.task_path();
    crate::fsx::require_dir(dir)?;
    let tmux = Tmux::new(socket.clone())?;
    let pane = driver::pane_of(&tmux, &run.target)?;
    let state_dir = state_dir()?;
    let _lock = answer::lock_pane(&tmux, &state_dir, socket.as_deref(), &pane.id)?;
    if let Continuation::Abort { reason } = inputs::continuation_cas(&args.if_unchanged, dir) {
        output::warn(&format!("nothing sent: {reason}"));
        return Ok(Verdict::No);
    }
    // Only an idle agent waiting for its next turn gets the text: at a permission menu the
    // Enter would approve whatever option 1 is, and with another program in front the text
    // would be that program's input.
    let snap = crate::cmd::pane::snapshot(&tmux, &pane.id, CaptureOptions::default())?;
    let rules = RuleSet::embedded();
    let view = driver::view(
        &world(&tmux, socket.as_deref(), rules)?,
        &run,
        &snap,
        time::now()?,
    );
    let seen = &view.classification;
    if seen.class != Class::Idle || view.foreground_is_shell {
        output::warn(&format!(
            "nothing sent: the pane shows {} ({}), not an idle agent waiting for its turn",
            seen.class.as_str(),
            seen.rule.as_deref().unwrap_or(&seen.reason)
        ));
        return Ok(Verdict::No);
    }
    let keys = [Key::Text(args.text.clone()), Key::Key("Enter".to_string())];
    answer::type_keys(&tmux, &pane.id, &keys)?;
    Ok(Verdict::Yes)
}

/// Remove a stop file left by an earlier loop (seed 000's recovery rule), saying so.
pub fn clear_stale_stop(dir: &Path) {
    match stop::check(dir) {
        Ok(StopState::None) => {}
        Ok(state) => {
            let why = match state {
                StopState::Requested(request) => format!("reason {}", request.reason),
                StopState::Unreadable { why } => why,
                StopState::None => unreachable!(),
            };
            match stop::clear(dir) {
                Ok(_) => output::warn(&format!(
                    "removed a leftover {} ({why}) from {}",
                    stop::FILE_NAME,
                    dir.display()
                )),
                Err(err) => output::warn(&format!("{err:#}")),
            }
        }
        Err(err) => output::warn(&format!("{err:#}")),
    }
}

fn find(
    registry: &mut SqliteRegistry,
    session: Option<&str>,
    task: Option<&Path>,
) -> Result<Option<Run>> {
    match (session, task) {
        (Some(session), _) => registry.get(session),
        (None, Some(task)) => registry.find_task(&task_key(task)?),
        (None, None) => Ok(None),
    }
}

fn describe_selection(session: Option<&str>, task: Option<&Path>) -> String {
    match (session, task) {
        (Some(session), _) => format!("session {session:?}"),
        (None, Some(task)) => format!("task dir {}", task.display()),
        (None, None) => "the selection".to_string(),
    }
}

fn stop_run(args: &StopArgs) -> Result<Verdict> {
    if args
        .message
        .as_ref()
        .is_some_and(|m| m.chars().count() > 4096)
    {
        bail!("--message is longer than 4096 characters");
    }
    let mut registry = open()?;
    let Some(run) = find(&mut registry, args.session.as_deref(), args.task.as_deref())? else {
        bail!(
            "no run for {}",
            describe_selection(args.session.as_deref(), args.task.as_deref())
        );
    };
    if !run.status.is_active() {
        output::warn(&format!(
            "the run of session {:?} has already ended ({}{})",
            run.session,
            run.status.as_str(),
            run.stop_reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ));
        return Ok(Verdict::Yes);
    }
    let now = time::now()?;
    let dir = run.task_path();
    if dir.is_dir() {
        let request = StopRequest {
            reason: args.reason.clone(),
            timestamp: now_timestamp(now),
            message: args.message.clone(),
        };
        stop::write(dir, &request)?;
        if run.mode == Mode::Dispatch {
            crate::fsx::remove_if_exists(&signal::path_in(dir))?;
        }
    } else {
        output::warn(&format!(
            "task dir {} no longer exists; ending the run without a stop file",
            run.task_dir
        ));
    }
    registry.end(
        &run.session,
        Status::Stopped,
        &args.reason,
        args.message.as_deref(),
        now,
    )?;
    Ok(Verdict::Yes)
}

fn status(args: &StatusArgs) -> Result<Verdict> {
    let now = time::now()?;
    let selected = args.session.is_some() || args.task.is_some();
    let runs = match SqliteRegistry::open_existing(&state_dir()?)? {
        None => Vec::new(),
        Some(mut registry) if selected => {
            find(&mut registry, args.session.as_deref(), args.task.as_deref())?
                .into_iter()
                .collect()
        }
        Some(mut registry) => registry.list()?,
    };
    if selected && runs.is_empty() {
        output::warn(&format!(
            "no run for {}",
            describe_selection(args.session.as_deref(), args.task.as_deref())
        ));
        return Ok(Verdict::No);
    }
    let reports: Vec<RunReport> = runs.iter().map(|run| RunReport::new(run, now)).collect();
    match args.format {
        StatusFormat::Text => {
            output::line(report::TEXT_HEADER)?;
            for report in &reports {
                output::line(report::text_line(report))?;
            }
        }
        StatusFormat::Json => {
            for report in &reports {
                output::json_line(report)?;
            }
        }
        StatusFormat::Prometheus => output::raw(report::prometheus(&reports, now).as_bytes())?,
    }
    Ok(Verdict::Yes)
}

fn lookup(args: &LookupArgs) -> Result<Verdict> {
    let key = task_key(&args.task)?;
    let owner = match SqliteRegistry::open_existing(&state_dir()?)? {
        None => None,
        Some(mut registry) => registry.find_task(&key)?,
    }
    .filter(|run| run.status.is_active());
    let Some(run) = owner else {
        return Ok(Verdict::No);
    };
    match args.format {
        Format::Text => output::line(&run.session)?,
        Format::Json => output::json_line(&serde_json::json!({
            "session_name": run.session,
            "status": run.status,
        }))?,
    }
    Ok(Verdict::Yes)
}
