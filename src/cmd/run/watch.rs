//! `autoctl run watch`: tick each loop the moment its signal or stop file changes.

use std::time::Duration;

use anyhow::{Result, anyhow};
use clap::Args;

use crate::error::Exit;
use crate::output;
use crate::supervise::store::Registry as _;
use crate::supervise::tick::{Decision, TickEvent, TickOptions};
use crate::supervise::wait::WaitKind;
use crate::supervise::{control, notify};
use crate::time;
use crate::tmux::Tmux;

/// Tick each loop the moment its signal or stop file changes; heartbeat the rest
///
/// A foreground process (for systemd, tmux or a terminal) that makes the same decisions
/// as `run tick`, as soon as they are due: it watches every running loop's task dir with
/// inotify and runs the per-run tick when `.auto-signal` or `.auto-stop` appears, changes
/// or goes (in dispatch mode the next command is typed about 0.1 s after the signal; if
/// the pane is not ready yet it is looked at again after 25 ms, doubling to 30 s), and
/// every --heartbeat it ticks every loop for stalls and limits, exactly like `run tick
/// --all`. A run in a wait that ends at a known time (a resume due after a usage limit's
/// reset or a backoff, a wait's maximum) is ticked at that time, not at the next heartbeat.
/// Loops started or stopped while it runs are picked up at once (it also watches the
/// registry's directory). It prints one line per decision: on a terminal the time, the
/// session, the decision and its reasons in words; piped (or with --format json) the same
/// JSON lines as `run tick`. A run the quota governor paces is printed when its pacing
/// changes, else at most once a --heartbeat, not each time another session's hooks get it
/// looked at.
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
/// once that loop has ended (or, with --until-needs-person, once it needs a person), and 1
/// when there is no such run.
///
/// Cron or watcher? Cron is simpler, the watcher saves the up to 60 s a loop waits for
/// the next tick after each step; both may run together (README: "cron or run watch?"; docs/run.md).
/// examples/systemd/autoctl-watch.service runs it as a user service.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["session", "all"])))]
pub struct WatchArgs {
    /// Watch this session's run (until it ends)
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
    /// Watch every running run, and runs started later
    #[arg(long)]
    pub all: bool,
    /// With --session: also exit (0) as soon as the loop needs a person (an escalated
    /// prompt), so you can answer it in its pane and run `run watch` again
    #[arg(long, requires = "session")]
    pub until_needs_person: bool,
    /// How to print each decision [default: text on a terminal, json when piped]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<super::text::EventFormat>,
    /// How often every run gets a heartbeat (stall checks, limits), as from cron; at least 1s
    #[arg(long, value_name = "DURATION", default_value = "60s",
          value_parser = parse_watch_heartbeat, allow_hyphen_values = true)]
    pub heartbeat: Duration,
    #[command(flatten)]
    pub waits: super::NotifyArgs,
    #[command(flatten)]
    pub rules: crate::cmd::pane::RulesOption,
    #[command(flatten)]
    pub channels: super::tick::ChannelArgs,
    #[command(flatten)]
    pub governor: super::tick::GovernorArgs,
    #[command(flatten)]
    pub registry: super::RegistryArg,
}

/// `run watch` repeats its heartbeat for as long as it runs: below a second it would be a busy
/// loop of batched ticks (tmux captures and registry writes many times a second). `run tick`
/// is one call and keeps short values (tests and benchmarks tick with 1ms).
fn parse_watch_heartbeat(text: &str) -> Result<Duration> {
    let heartbeat = crate::duration::parse_positive(text)?;
    if heartbeat < Duration::from_secs(1) {
        return Err(anyhow!(
            "{text:?} is too short; the watcher's heartbeat is at least 1s (signals and stop files are seen at once, the heartbeat only checks stalls and limits)"
        ));
    }
    Ok(heartbeat)
}

pub fn run(args: &WatchArgs, socket: Option<String>) -> Result<Exit> {
    use crate::supervise::watch::{self, Config};
    let rules = crate::cmd::pane::load_rules(args.rules.rules.as_ref())?;
    let watch_limit = watch::watch_limit_from_env()?;
    time::now()?;
    let Some((which, mut registry)) = open_registry(args)? else {
        warn_no_run(args);
        return Ok(Exit::No);
    };
    let tmux = Tmux::new(socket.clone())?;
    let world = super::world(
        &tmux,
        socket.as_deref(),
        rules,
        crate::cmd::pane::load_approval(&args.rules, true)?,
    )?;
    let options = TickOptions {
        heartbeat: args.heartbeat,
        dry_run: false,
        answers: true,
        channels: args.channels.options(),
        waits: args.waits.options(),
        governor: args.governor.options(),
        host_lease: args.governor.host_lease,
    };
    let mut config = Config::new(which, options);
    config.watch_limit = watch_limit;
    let mut printer = Printer::new(args)?;
    let ended = watch::watch(&mut registry, &world, &config, &mut |event: &TickEvent| {
        printer.emit(event)
    });
    // Outstanding notifications finish (each bounded by --notify-timeout) before exit.
    settle_finished(&mut printer.deliveries, &mut printer.outbox, true);
    exit_for(args, ended)
}

/// The registry to watch and which of its runs: `--session`'s run (None: there is no
/// such run), or all, creating the registry for a service started before any run.
fn open_registry(
    args: &WatchArgs,
) -> Result<Option<(crate::supervise::watch::Which, crate::registry::Database)>> {
    use crate::supervise::watch::{self, Which};
    let (which, registry) = match &args.session {
        Some(session) => {
            control::check_name("--session", session)?;
            (
                Which::Session(session.clone()),
                super::open_for_ticks(&args.registry)?,
            )
        }
        None => (Which::All, Some(super::open(&args.registry)?)),
    };
    let Some(mut registry) = registry else {
        return Ok(None);
    };
    registry.set_busy_timeout(watch::BUSY_TIMEOUT)?;
    if args.all && !registry.list()?.iter().any(|run| run.status.is_active()) {
        output::note(
            "no loop is running yet; watching for new ones (autoctl run start registers one)",
        );
    }
    Ok(Some((which, registry)))
}

fn warn_no_run(args: &WatchArgs) {
    output::warn(&format!(
        "no run for session {:?}",
        args.session.as_deref().unwrap_or("")
    ));
}

/// How the watch ended, as an exit status: 0 finished, stopped by SIGTERM, or (with
/// `--until-needs-person`) a person is needed; 1 no such run; 130 interrupted.
fn exit_for(args: &WatchArgs, ended: Result<crate::supervise::watch::Ended>) -> Result<Exit> {
    use crate::supervise::watch::Ended;
    let session = args.session.as_deref().unwrap_or("");
    match ended {
        Err(err) if err.is::<NeedsPerson>() => {
            output::note(&format!(
                "session {session:?} needs a person: answer in its pane (tmux attach -t {session}), then run `autoctl run watch --session {session}` again",
            ));
            Ok(Exit::Yes)
        }
        Err(err) => Err(err),
        Ok(Ended::Finished) => Ok(Exit::Yes),
        Ok(Ended::NoRun) => {
            warn_no_run(args);
            Ok(Exit::No)
        }
        Ok(Ended::Signal(signal_hook::consts::SIGTERM)) => Ok(Exit::Yes),
        Ok(Ended::Signal(_)) => Err(crate::error::Interrupted.into()),
    }
}

/// Where each decision goes: notifications delivered on their own threads (with what a
/// killed driver left in the outbox), and one line printed per decision (a repeated one
/// once).
struct Printer<'a> {
    args: &'a WatchArgs,
    format: super::text::EventFormat,
    notifier: notify::Notifier,
    /// The outbox has a connection of its own: the watch loop holds the first one, and
    /// deliveries finish on their own threads, at any moment of it.
    outbox: crate::registry::Database,
    deliveries: Vec<std::thread::JoinHandle<notify::Delivered>>,
    outbox_checked: Option<std::time::Instant>,
    /// Text: the last line shown per session, so a decision repeated with the same reasons
    /// (a step waiting for the agent's prompt, looked at again) is one line, not many.
    shown: std::collections::HashMap<String, String>,
    /// A paced run is looked at again on every hook record of any session (at most once a
    /// second): what it was told last, so the same pacing is printed once, not per look.
    paced: std::collections::HashMap<String, PacedLine>,
}

impl<'a> Printer<'a> {
    fn new(args: &'a WatchArgs) -> Result<Printer<'a>> {
        let mut outbox = super::open(&args.registry)?;
        outbox.set_busy_timeout(crate::supervise::watch::BUSY_TIMEOUT)?;
        Ok(Printer {
            args,
            format: super::text::EventFormat::or_by_stdout(args.format),
            notifier: args.waits.notifier(),
            outbox,
            deliveries: Vec::new(),
            outbox_checked: None,
            shown: std::collections::HashMap::new(),
            paced: std::collections::HashMap::new(),
        })
    }

    /// One decision: notify, print it, and end the watch with `--until-needs-person` once
    /// the run needs a person.
    fn emit(&mut self, event: &TickEvent) -> Result<()> {
        self.notify(event)?;
        if !paced_line_changed(&mut self.paced, event, self.args.heartbeat) {
            return Ok(());
        }
        match self.format {
            super::text::EventFormat::Text => {
                let line = super::text::event_line(event);
                let what = line.split_once("  ").map_or(line.as_str(), |(_, w)| w);
                if self.shown.get(&event.session).map(String::as_str) != Some(what) {
                    self.shown.insert(event.session.clone(), what.to_string());
                    output::line(&line)?;
                }
            }
            super::text::EventFormat::Json => output::json_line(event)?,
        }
        if event.decision == Decision::Error {
            output::error_line(&format!(
                "session {:?}: {}",
                event.session,
                event.reasons.join("; ")
            ));
        }
        if self.args.until_needs_person && event.run.needs_person.is_some() {
            // Ends the watcher between two decisions, as a closed stdout does.
            return Err(NeedsPerson.into());
        }
        Ok(())
    }

    /// Events go out on their own thread: the watcher keeps deciding meanwhile. Each
    /// delivery that has finished is marked in its run's outbox; what a killed driver stored
    /// and never delivered is looked for now and then.
    fn notify(&mut self, event: &TickEvent) -> Result<()> {
        settle_finished(&mut self.deliveries, &mut self.outbox, false);
        let mut jobs = self.notifier.jobs(event);
        if self
            .outbox_checked
            .is_none_or(|at| at.elapsed() >= OUTBOX_CHECK)
        {
            self.outbox_checked = Some(std::time::Instant::now());
            match self.outbox.take_outbox(time::now()?) {
                Ok(left) => jobs.extend(left.iter().flat_map(|p| self.notifier.outbox_jobs(p))),
                Err(err) => output::warn(&format!("notify: cannot read the outbox: {err:#}")),
            }
        }
        self.deliveries
            .extend(self.notifier.deliver_in_background(jobs));
        Ok(())
    }
}

/// What a paced run's line says that matters (the governor's hold and until when), and when
/// it was printed last.
type PacedLine = ((String, Option<crate::time::Time>), std::time::Instant);

/// Whether a decision is printed: always, but for a paced run told the same again (the same
/// hold, the same end, nothing done, nothing to notify) within a heartbeat of the last time
/// it was printed — a hook record of any session gets every run looked at, and a paced run's
/// line would be printed about once a second per run (194 a minute for two runs in the live
/// tier) while its numbers ("60% used and 9 step(s) …") drift.
fn paced_line_changed(
    shown: &mut std::collections::HashMap<String, PacedLine>,
    event: &TickEvent,
    heartbeat: Duration,
) -> bool {
    let line = event
        .run
        .wait
        .as_ref()
        .filter(|w| w.kind == WaitKind::QuotaPaced)
        .map(|w| {
            let hold = w
                .reason
                .split_once(':')
                .map_or(w.reason.as_str(), |(h, _)| h);
            (hold.to_string(), w.until)
        });
    let Some(line) = line else {
        shown.remove(&event.session);
        return true;
    };
    let now = std::time::Instant::now();
    let quiet = event.decision == Decision::Wait && event.did.is_empty() && event.notify.is_empty();
    let repeat = shown
        .get(&event.session)
        .is_some_and(|(last, at)| *last == line && now.duration_since(*at) < heartbeat);
    if quiet && repeat {
        return false;
    }
    shown.insert(event.session.clone(), (line, now));
    true
}

/// `--until-needs-person`: the watched loop needs a person, so the watcher stops.
#[derive(Debug, thiserror::Error)]
#[error("the loop needs a person")]
struct NeedsPerson;

/// How often `run watch` looks for outbox entries a killed driver left (their delivery lease
/// is two minutes, so looking more often finds nothing more).
const OUTBOX_CHECK: Duration = Duration::from_secs(30);

/// Mark the outbox entries of every finished delivery delivered (every delivery, waiting for
/// each, when `all`).
fn settle_finished(
    deliveries: &mut Vec<std::thread::JoinHandle<notify::Delivered>>,
    outbox: &mut crate::registry::Database,
    all: bool,
) {
    let (done, running): (Vec<_>, Vec<_>) = std::mem::take(deliveries)
        .into_iter()
        .partition(|d| all || d.is_finished());
    *deliveries = running;
    let Ok(now) = time::now() else { return };
    for delivery in done {
        if let Ok(delivered) = delivery.join() {
            notify::settle(outbox, &delivered, now);
        }
    }
}
