//! `autoctl run watch`: the notification-driven driver of the tick core. One core, two
//! drivers: cron runs `run tick` every minute; the watcher runs the very same per-run decision
//! ([`runs::tick_session`]) the moment a run's `.auto-signal` or `.auto-stop` changes, and the
//! same batched sweep ([`runs::tick_runs`]: every run ticked at once) every `--heartbeat` for
//! stalls and limits.
//!
//! What this module owns is *when* to tick, never *what* a tick decides:
//! - one inotify watch (via `notify`, non-recursive) per running run's task dir, plus one on
//!   the state dir so runs registered or ended by other processes are picked up at once, and
//!   one on its `hooks/` dir so what an agent's hooks record (a permission it asks for, a
//!   turn that ended) is looked at within a second, not at the next sweep;
//! - a debounce window per run ([`schedule`]) that turns a burst of events into one look, and
//!   stamps ([`stamp`]) that tell news from the echoes of the watcher's own reads and writes;
//! - retries with backoff for what no event announces: a dispatch step due while the pane is
//!   not ready, a run held by another tick, a failed tick, a locked database;
//! - fallbacks: a dir that cannot be watched (the inotify watch limit) is polled, a task dir
//!   deleted and recreated is watched again, a missing task dir is left to the sweep;
//! - SIGTERM, SIGINT and SIGHUP end the loop between two decisions, never in the middle of one.
//!
//! Overlapping drivers (cron ticks, other watchers, `run stop`) are coordinated by the
//! registry's claim: a tick claims the run in a short `BEGIN IMMEDIATE` transaction (a lease)
//! and saves only while it still holds the claim, so one decision at a time is made per run.

pub mod schedule;
pub mod stamp;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode, Watcher as _};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::output;
use crate::protocol::{signal, stop};
use crate::registry::DB_FILE;
use crate::registry::Database;
use crate::supervise::driver::{World, runs};
use crate::supervise::run::{Mode, Run};
use crate::supervise::store::{Registry, Selection};
use crate::supervise::tick::{Decision, TickEvent, TickOptions};
use crate::time::{self, Time};
use schedule::{Due, Schedule, backoff};
use stamp::{DirId, Stamps, explained};

/// How long a burst of file events is gathered before the run is looked at. Writes arrive as
/// bursts of one to a few events within about a millisecond (rename-write: one `moved_to`;
/// a shell redirect: `modify` then `close_write`; see `bench/watch.sh`), so 20 ms coalesces
/// them with room to spare and costs little of the latency budget.
pub const DEBOUNCE: Duration = Duration::from_millis(20);
/// How often a dir that cannot be watched is polled (stamps only: three `stat` calls).
pub const POLL: Duration = Duration::from_millis(250);
/// How often the registry is listed when its directory cannot be watched.
pub const REGISTRY_POLL: Duration = Duration::from_secs(1);
/// How long one registry statement waits for another writer before the watcher backs off
/// and retries (shorter than a tick's five seconds, so SIGTERM is served promptly).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(1);
/// After a hook record changes, how long the watcher waits for the rest of the burst (a tool
/// call records PreToolUse, PermissionRequest and Notification within milliseconds)...
pub const HOOK_SETTLE: Duration = Duration::from_millis(100);
/// ...and how far apart two such looks are at least, so a busy agent's stream of tool calls
/// costs at most one look per second.
pub const HOOK_SPACING: Duration = Duration::from_secs(1);
/// Test hook: the largest number of inotify watches the watcher adds; past it, dirs are
/// polled exactly as when the kernel's `fs.inotify.max_user_watches` is reached.
pub const WATCH_LIMIT_VAR: &str = "AUTOCTL_WATCH_LIMIT";

/// Which runs a watcher drives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Which {
    All,
    Session(String),
}

impl Which {
    fn selection(&self) -> Selection<'_> {
        match self {
            Which::All => Selection::All,
            Which::Session(session) => Selection::Session(session),
        }
    }

    fn covers(&self, session: &str) -> bool {
        match self {
            Which::All => true,
            Which::Session(only) => only == session,
        }
    }
}

/// How a watcher runs.
#[derive(Debug, Clone)]
pub struct Config {
    pub which: Which,
    /// The tick options; their `heartbeat` (the stall heartbeat's period) is also the
    /// sweep's period.
    pub options: TickOptions,
    pub debounce: Duration,
    pub poll: Duration,
    /// At most this many inotify watches (the [`WATCH_LIMIT_VAR`] test hook).
    pub watch_limit: Option<usize>,
}

impl Config {
    pub fn new(which: Which, options: TickOptions) -> Config {
        Config {
            which,
            options,
            debounce: DEBOUNCE,
            poll: POLL,
            watch_limit: None,
        }
    }
}

/// Why a watcher returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `--session`: its run has ended (or had ended already).
    Finished,
    /// `--session`: the registry has no such run.
    NoRun,
    /// Stopped by this signal, between two decisions.
    Signal(i32),
}

/// The limit of [`WATCH_LIMIT_VAR`], if set.
pub fn watch_limit_from_env() -> Result<Option<usize>> {
    match std::env::var(WATCH_LIMIT_VAR) {
        Ok(text) if !text.is_empty() => text
            .parse()
            .map(Some)
            .with_context(|| format!("{WATCH_LIMIT_VAR}={text:?} is not a number of watches")),
        _ => Ok(None),
    }
}

/// Watch and tick until a signal arrives (or, for `--session`, until its run ends). Every
/// tick's event goes to `emit`; an error from `emit` (a closed stdout) ends the watcher.
pub fn watch(
    registry: &mut Database,
    world: &World<'_>,
    config: &Config,
    emit: &mut dyn FnMut(&TickEvent) -> Result<()>,
) -> Result<Ended> {
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicI32::new(0));
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])
        .context("cannot install the signal handlers")?;
    let handle = signals.handle();
    let signal_thread = {
        let (tx, stop) = (tx.clone(), stop.clone());
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    // The first signal wins; the loop finishes the decision it is in.
                    let _ = stop.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                    let _ = tx.send(Msg::Signal);
                }
            })
            .context("cannot start the signal thread")?
    };
    let result = Loop::new(registry, world, config, emit, tx, stop).and_then(|mut l| l.run(&rx));
    handle.close();
    let _ = signal_thread.join();
    result
}

enum Msg {
    Fs(notify::Result<notify::Event>),
    Signal,
}

/// The inotify watches, counted against the (test) limit.
struct Notifier {
    watcher: Option<notify::RecommendedWatcher>,
    armed: BTreeSet<PathBuf>,
    limit: Option<usize>,
}

enum Refused {
    /// The kernel's (or the test hook's) watch limit.
    Limit,
    Other(String),
}

impl Notifier {
    fn new(tx: Sender<Msg>, limit: Option<usize>) -> Notifier {
        let handler = move |event| {
            let _ = tx.send(Msg::Fs(event));
        };
        let watcher = match notify::recommended_watcher(handler) {
            Ok(watcher) => Some(watcher),
            Err(err) => {
                output::warn(&format!(
                    "file notifications are unavailable ({err}; see fs.inotify.max_user_instances); polling every task dir instead"
                ));
                None
            }
        };
        Notifier {
            watcher,
            armed: BTreeSet::new(),
            limit,
        }
    }

    fn watch(&mut self, dir: &Path) -> Result<(), Refused> {
        let Some(watcher) = &mut self.watcher else {
            return Err(Refused::Other(
                "file notifications are unavailable".to_string(),
            ));
        };
        if self.limit.is_some_and(|limit| self.armed.len() >= limit) {
            return Err(Refused::Limit);
        }
        match watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.armed.insert(dir.to_path_buf());
                Ok(())
            }
            Err(err) if matches!(err.kind, notify::ErrorKind::MaxFilesWatch) => Err(Refused::Limit),
            Err(err) => Err(Refused::Other(err.to_string())),
        }
    }

    fn unwatch(&mut self, dir: &Path) {
        if self.armed.remove(dir)
            && let Some(watcher) = &mut self.watcher
        {
            // Already gone when the dir was deleted: inotify drops the watch with it.
            let _ = watcher.unwatch(dir);
        }
    }
}

/// How a run's task dir is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arm {
    /// An inotify watch on this inode.
    Notify(DirId),
    /// Polled: the dir could not be watched (`Some`: its identity) or is missing (`None`).
    Poll(Option<DirId>),
}

struct Watched {
    dir: PathBuf,
    /// A row replaced by a new `run start` of the same session is a new run.
    identity: (String, Time),
    dispatch: bool,
    arm: Arm,
    /// The stamps the last completed tick left behind; `None` means "tick on the next look".
    baseline: Option<Stamps>,
    warned_limit: bool,
    /// An event said the watched dir itself was deleted, moved or changed: whatever is at the
    /// path now gets a new watch, even if it looks like the same dir (file systems without a
    /// birth time may reuse the inode number at once).
    stale: bool,
}

struct Loop<'a, 'w> {
    registry: &'a mut Database,
    world: &'a World<'w>,
    config: &'a Config,
    emit: &'a mut dyn FnMut(&TickEvent) -> Result<()>,
    notifier: Notifier,
    /// The canonical state dir, watched for registry writes when `registry_watched`.
    state_dir: PathBuf,
    registry_watched: bool,
    /// Whether the registry is a file (SQLite) that can be watched at all.
    registry_file: bool,
    /// The hook records' dir (`STATE/hooks`), watched when `hooks_watched`.
    hooks_dir: PathBuf,
    hooks_watched: bool,
    /// When every run gets a look because a hook record changed, and the last such look.
    hooks_due: Option<Instant>,
    hooks_looked: Option<Instant>,
    runs: BTreeMap<String, Watched>,
    /// Task dir -> session, to route events.
    dirs: HashMap<PathBuf, String>,
    schedule: Schedule<String>,
    /// When every run is next ticked (`--heartbeat`'s sweep), and the sweeps that failed
    /// in a row.
    sweep_at: Instant,
    sweep_failures: u32,
    reload_at: Option<Instant>,
    reload_failures: u32,
    poll_at: Option<Instant>,
    registry_polled_at: Instant,
    stop: Arc<AtomicI32>,
    finished: bool,
}

impl<'a, 'w> Loop<'a, 'w> {
    fn new(
        registry: &'a mut Database,
        world: &'a World<'w>,
        config: &'a Config,
        emit: &'a mut dyn FnMut(&TickEvent) -> Result<()>,
        tx: Sender<Msg>,
        stop: Arc<AtomicI32>,
    ) -> Result<Loop<'a, 'w>> {
        // The SQLite file's dir is watched for the registry's writes; a PostgreSQL registry is
        // polled, and the state dir is still where this host's hook records are.
        let registry_file = registry.file().is_some();
        let db_dir = match registry.file() {
            Some(path) => crate::fsx::parent_dir(path),
            None => {
                let dir = crate::supervise::state_dir()?;
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                dir
            }
        };
        let state_dir = std::fs::canonicalize(&db_dir)
            .with_context(|| format!("cannot resolve {}", db_dir.display()))?;
        let now = Instant::now();
        Ok(Loop {
            registry,
            world,
            config,
            emit,
            notifier: Notifier::new(tx, config.watch_limit),
            hooks_dir: state_dir.join(crate::hook::store::DIR_NAME),
            state_dir,
            registry_file,
            registry_watched: false,
            hooks_watched: false,
            hooks_due: None,
            hooks_looked: None,
            runs: BTreeMap::new(),
            dirs: HashMap::new(),
            schedule: Schedule::new(config.debounce),
            sweep_at: now,
            sweep_failures: 0,
            reload_at: None,
            reload_failures: 0,
            poll_at: None,
            registry_polled_at: now,
            stop,
            finished: false,
        })
    }

    fn stopped(&self) -> Option<i32> {
        match self.stop.load(Ordering::SeqCst) {
            0 => None,
            sig => Some(sig),
        }
    }

    /// Watch until the run ends, the process is asked to stop, or (with `--session`) there
    /// is no such run: after the opening (`open`), each turn does the first
    /// thing due (a sweep, a reload, a poll, the hooks' wake-up, the scheduled looks)
    /// or else waits for the next file event or the next of those times.
    fn run(&mut self, rx: &Receiver<Msg>) -> Result<Ended> {
        if let Which::Session(session) = &self.config.which
            && self.registry.get(session)?.is_none()
        {
            return Ok(Ended::NoRun);
        }
        self.open();
        loop {
            if let Some(sig) = self.stopped() {
                return Ok(Ended::Signal(sig));
            }
            if self.finished {
                return Ok(Ended::Finished);
            }
            let now = Instant::now();
            if !self.run_due(now)? {
                self.wait_for_events(rx, now)?;
            }
        }
    }

    /// Watch the registry's directory (warned when refused: new runs are then polled for),
    /// arm the hooks and every run first, so a write during the first sweep is not missed.
    fn open(&mut self) {
        let state_dir = self.state_dir.clone();
        match self.registry_file.then(|| self.notifier.watch(&state_dir)) {
            None => {}
            Some(Ok(())) => self.registry_watched = true,
            Some(Err(refused)) => output::warn(&format!(
                "cannot watch the registry's directory {} ({}); new runs are picked up within {}",
                state_dir.display(),
                describe(&refused),
                crate::duration::format(REGISTRY_POLL)
            )),
        }
        // Records written before the watcher started are the first sweep's.
        self.arm_hooks();
        if let Err(err) = self.reload(true) {
            self.reload_failed(&err);
        }
    }

    /// Do the first thing due at `now`, in order: the sweep, a reload of the runs, a
    /// poll, a look at every run after hook records changed, the runs scheduled for a look
    /// or a retry. False: nothing was due.
    fn run_due(&mut self, now: Instant) -> Result<bool> {
        if self.sweep_at <= now {
            self.sweep()?;
            return Ok(true);
        }
        if self.reload_at.is_some_and(|at| at <= now) {
            self.reload_at = None;
            match self.reload(false) {
                Ok(()) => self.reload_failures = 0,
                Err(err) => self.reload_failed(&err),
            }
            return Ok(true);
        }
        if self.poll_at.is_some_and(|at| at <= now) {
            self.poll_at = None;
            self.poll()?;
            return Ok(true);
        }
        if self.hooks_due.is_some_and(|at| at <= now) {
            self.hooks_due = None;
            self.hooks_looked = Some(now);
            for session in self.runs.keys() {
                self.schedule.wake(session, now);
            }
            return Ok(true);
        }
        let due = self.schedule.take_due(now);
        if due.is_empty() {
            return Ok(false);
        }
        for (session, why) in due {
            if self.stopped().is_some() || self.finished {
                break;
            }
            match why {
                Due::Check => self.check(&session)?,
                Due::Retry => {
                    let stamps = self.runs.get(&session).map(|w| Stamps::of(&w.dir));
                    if let Some(stamps) = stamps {
                        self.tick(&session, stamps, false)?;
                    }
                }
            }
        }
        Ok(true)
    }

    /// Nothing is due: wait for file events (taking every one queued) until the next time
    /// something is.
    fn wait_for_events(&mut self, rx: &Receiver<Msg>, now: Instant) -> Result<()> {
        if self.poll_at.is_none() && self.needs_polling() {
            self.poll_at = Some(now + self.config.poll);
        }
        let deadline = [
            Some(self.sweep_at),
            self.reload_at,
            self.poll_at,
            self.hooks_due,
            self.schedule.next(),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(self.sweep_at);
        match rx.recv_timeout(deadline.saturating_duration_since(now)) {
            Ok(msg) => {
                self.on_message(msg);
                while let Ok(msg) = rx.try_recv() {
                    self.on_message(msg);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => bail!("the watcher's event channel closed"),
        }
        Ok(())
    }

    fn needs_polling(&self) -> bool {
        !self.registry_watched || self.runs.values().any(|w| matches!(w.arm, Arm::Poll(_)))
    }

    fn on_message(&mut self, msg: Msg) {
        let now = Instant::now();
        let event = match msg {
            Msg::Signal => return,
            Msg::Fs(Ok(event)) => event,
            Msg::Fs(Err(err)) => {
                // Events may have been lost: look at everything.
                output::warn(&format!("file notifications: {err}; looking at every run"));
                self.notice_all(now);
                return;
            }
        };
        if event.need_rescan() {
            self.notice_all(now);
            return;
        }
        // Opening and reading a file (our own reads, too) is not a change.
        if let EventKind::Access(kind) = event.kind
            && kind != AccessKind::Close(AccessMode::Write)
        {
            return;
        }
        for path in &event.paths {
            if let Some(session) = self.dirs.get(path).cloned() {
                // The task dir itself was deleted or moved: re-arm on the next look.
                if let Some(watched) = self.runs.get_mut(&session) {
                    watched.stale = true;
                }
                self.schedule.notice(&session, now);
                continue;
            }
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                continue;
            };
            if parent == self.hooks_dir {
                self.hook_recorded(now);
                continue;
            }
            if path == &self.hooks_dir {
                // Created after the watcher started (the first hook call), or removed.
                if self.hooks_watched && !self.hooks_dir.is_dir() {
                    self.notifier.unwatch(&self.hooks_dir.clone());
                    self.hooks_watched = false;
                }
                if self.arm_hooks() {
                    // The first record may be written before the watch was in place.
                    self.hook_recorded(now);
                }
                continue;
            }
            if name == signal::FILE_NAME || name == stop::FILE_NAME {
                if let Some(session) = self.dirs.get(parent) {
                    self.schedule.notice(session, now);
                }
            } else if parent == self.state_dir
                && name.to_string_lossy().starts_with(DB_FILE)
                && self.reload_at.is_none()
            {
                self.reload_at = Some(now + self.config.debounce);
            }
        }
    }

    /// Watch the hook records' dir once it exists; true when the watch was armed just now.
    /// A dir that cannot be watched is left to the sweep, as before hooks were watched.
    fn arm_hooks(&mut self) -> bool {
        if !self.hooks_watched && self.hooks_dir.is_dir() {
            let dir = self.hooks_dir.clone();
            self.hooks_watched = self.notifier.watch(&dir).is_ok();
            return self.hooks_watched;
        }
        false
    }

    /// A hook record changed: every run gets a look once the burst has settled, at most one
    /// look per [`HOOK_SPACING`].
    fn hook_recorded(&mut self, now: Instant) {
        let spaced = self.hooks_looked.map(|at| at + HOOK_SPACING);
        let at = spaced.map_or(now + HOOK_SETTLE, |spaced| spaced.max(now + HOOK_SETTLE));
        self.hooks_due = Some(self.hooks_due.map_or(at, |due| due.min(at)));
    }

    fn notice_all(&mut self, now: Instant) {
        let sessions: Vec<String> = self.runs.keys().cloned().collect();
        for session in &sessions {
            self.schedule.notice(session, now);
        }
        self.reload_at.get_or_insert(now);
    }

    /// Bring the watched set in line with the registry's running runs: arm new ones (and
    /// look at them at once, unless this is the start, whose first sweep looks at everything),
    /// drop ended ones.
    fn reload(&mut self, initial: bool) -> Result<()> {
        let rows = self.registry.list()?;
        let now = Instant::now();
        let mut live = BTreeSet::new();
        for run in rows
            .iter()
            .filter(|r| r.status.is_active() && self.config.which.covers(&r.spec.session))
        {
            live.insert(run.spec.session.clone());
            match self.runs.get(&run.spec.session) {
                Some(known) if known.identity == identity(run) => continue,
                Some(_) => self.drop_run(&run.spec.session),
                None => {}
            }
            self.add_run(run);
            if !initial {
                self.schedule.notice(&run.spec.session, now);
            }
        }
        let gone: Vec<String> = self
            .runs
            .keys()
            .filter(|s| !live.contains(*s))
            .cloned()
            .collect();
        for session in gone {
            self.end_run(&session);
        }
        if let Which::Session(session) = &self.config.which
            && !live.contains(session)
            && !initial
        {
            self.finished = true;
        }
        Ok(())
    }

    fn reload_failed(&mut self, err: &anyhow::Error) {
        let delay = backoff(self.reload_failures + 3);
        self.reload_failures = self.reload_failures.saturating_add(1);
        output::warn(&format!(
            "cannot list the runs: {err:#}; retrying in {}",
            crate::duration::format(delay)
        ));
        self.reload_at = Some(Instant::now() + delay);
    }

    fn add_run(&mut self, run: &Run) {
        let dir = PathBuf::from(&run.spec.task_dir);
        let mut watched = Watched {
            dir: dir.clone(),
            identity: identity(run),
            dispatch: run.spec.mode == Mode::Dispatch,
            arm: Arm::Poll(None),
            baseline: None,
            warned_limit: false,
            stale: false,
        };
        if let Some(id) = Stamps::of(&dir).dir {
            watched.arm = self.arm(&run.spec.session, &dir, id, &mut watched.warned_limit);
        }
        self.dirs.insert(dir, run.spec.session.clone());
        self.runs.insert(run.spec.session.clone(), watched);
    }

    /// Watch a task dir, or fall back to polling it (with a warning, once per run).
    fn arm(&mut self, session: &str, dir: &Path, id: DirId, warned: &mut bool) -> Arm {
        match self.notifier.watch(dir) {
            Ok(()) => Arm::Notify(id),
            Err(refused) => {
                if !*warned {
                    output::warn(&format!(
                        "session {session:?}: cannot watch {} ({}); polling it every {} instead",
                        dir.display(),
                        describe(&refused),
                        crate::duration::format(self.config.poll)
                    ));
                    *warned = true;
                }
                Arm::Poll(Some(id))
            }
        }
    }

    fn drop_run(&mut self, session: &str) {
        if let Some(watched) = self.runs.remove(session) {
            if matches!(watched.arm, Arm::Notify(_)) {
                self.notifier.unwatch(&watched.dir);
            }
            self.dirs.remove(&watched.dir);
        }
        self.schedule.forget(&session.to_string());
    }

    /// The run has ended (or left the registry): stop watching it; a `--session` watcher is
    /// done.
    fn end_run(&mut self, session: &str) {
        self.drop_run(session);
        if matches!(self.config.which, Which::Session(_)) {
            self.finished = true;
        }
    }

    /// Follow the dir that is at the run's path now: re-arm a dir deleted and recreated or
    /// replaced; a missing dir is polled until it comes back. Returns whether the dir exists.
    fn reconcile(&mut self, session: &str, stamps: &Stamps) -> bool {
        let Some(watched) = self.runs.get(session) else {
            return false;
        };
        let (dir, arm, stale) = (watched.dir.clone(), watched.arm, watched.stale);
        if let Some(watched) = self.runs.get_mut(session) {
            watched.stale = false;
        }
        match (arm, stamps.dir) {
            (Arm::Poll(None), None) => false,
            (_, None) => {
                if let Arm::Notify(_) = arm {
                    self.notifier.unwatch(&dir);
                }
                // Printed, the sweep keeps the word of its flag, `--heartbeat` (the glossary in
                // supervise/mod.rs).
                output::warn(&format!(
                    "session {session:?}: the task dir {} is gone; watching for it to come back (the heartbeat ends the run if it stays gone)",
                    dir.display()
                ));
                if let Some(watched) = self.runs.get_mut(session) {
                    watched.arm = Arm::Poll(None);
                    watched.baseline = None;
                }
                false
            }
            (Arm::Notify(old), Some(id)) | (Arm::Poll(Some(old)), Some(id))
                if old == id && !stale =>
            {
                true
            }
            (_, Some(id)) => {
                if let Arm::Notify(_) = arm {
                    self.notifier.unwatch(&dir);
                }
                let mut warned = self.runs.get(session).is_some_and(|w| w.warned_limit);
                let new = self.arm(session, &dir, id, &mut warned);
                if let Some(watched) = self.runs.get_mut(session) {
                    watched.arm = new;
                    watched.warned_limit = warned;
                    // A different dir: whatever it holds is news.
                    watched.baseline = None;
                }
                true
            }
        }
    }

    /// A run's files changed (or may have): tick if they differ from what the last tick left.
    fn check(&mut self, session: &str) -> Result<()> {
        let Some(dir) = self.runs.get(session).map(|w| w.dir.clone()) else {
            return Ok(());
        };
        let stamps = Stamps::of(&dir);
        // A missing dir is the sweep's to judge (its tick ends the run as lost): a dir being
        // replaced (a checkout, a restore) must not end a loop because of a millisecond gap.
        if !self.reconcile(session, &stamps) {
            return Ok(());
        }
        if self.runs.get(session).and_then(|w| w.baseline) == Some(stamps) {
            return Ok(());
        }
        self.tick(session, stamps, true)
    }

    fn poll(&mut self) -> Result<()> {
        let polled: Vec<String> = self
            .runs
            .iter()
            .filter(|(_, w)| matches!(w.arm, Arm::Poll(_)))
            .map(|(s, _)| s.clone())
            .collect();
        for session in polled {
            if self.stopped().is_some() {
                return Ok(());
            }
            self.check(&session)?;
        }
        if !self.registry_watched && self.registry_polled_at.elapsed() >= REGISTRY_POLL {
            self.registry_polled_at = Instant::now();
            if let Err(err) = self.reload(false) {
                self.reload_failed(&err);
            }
        }
        Ok(())
    }

    /// One decision for one run, as `run tick --session` makes it.
    fn tick(&mut self, session: &str, before: Stamps, fresh: bool) -> Result<()> {
        let now = time::now()?;
        match runs::tick_session(
            self.registry,
            self.world,
            session,
            &self.config.options,
            now,
        ) {
            Ok(Some(event)) => self.after(event, Some(before), fresh),
            Ok(None) => {
                self.end_run(session);
                Ok(())
            }
            Err(err) => {
                let delay = self
                    .schedule
                    .retry(&session.to_string(), Instant::now(), fresh);
                output::warn(&format!(
                    "session {session:?}: {err:#}; retrying in {}",
                    crate::duration::format(delay)
                ));
                Ok(())
            }
        }
    }

    /// The sweep: every run ticked in one batch, as `run tick --all` (or `--session`) does,
    /// every `--heartbeat`.
    fn sweep(&mut self) -> Result<()> {
        if let Err(err) = self.reload(false) {
            self.reload_failed(&err);
        }
        // This sweep looks at every run anyway.
        self.arm_hooks();
        let sessions: Vec<String> = self.runs.keys().cloned().collect();
        let mut before = BTreeMap::new();
        for session in sessions {
            let stamps = Stamps::of(&self.runs[&session].dir);
            self.reconcile(&session, &stamps);
            self.retry_watch(&session);
            before.insert(session, stamps);
        }
        let now = time::now()?;
        let ticked = match &self.config.which {
            Which::All => runs::tick_runs(
                self.registry,
                self.world,
                self.config.which.selection(),
                &self.config.options,
                now,
            ),
            Which::Session(session) => runs::tick_session(
                self.registry,
                self.world,
                session,
                &self.config.options,
                now,
            )
            .map(|event| event.into_iter().collect()),
        };
        match ticked {
            Ok(events) => {
                self.sweep_failures = 0;
                self.sweep_at = Instant::now() + self.config.options.heartbeat;
                for event in events {
                    let stamps = before.get(&event.session).copied();
                    self.after(event, stamps, true)?;
                }
            }
            Err(err) => {
                let delay = backoff(self.sweep_failures + 3).min(self.config.options.heartbeat);
                self.sweep_failures = self.sweep_failures.saturating_add(1);
                // Printed as `--heartbeat`'s, as above.
                output::warn(&format!(
                    "heartbeat: {err:#}; retrying in {}",
                    crate::duration::format(delay)
                ));
                self.sweep_at = Instant::now() + delay;
            }
        }
        Ok(())
    }

    /// A polled dir that could not be watched gets another chance at each sweep (a watch
    /// may have been freed since).
    fn retry_watch(&mut self, session: &str) {
        let Some(watched) = self.runs.get(session) else {
            return;
        };
        if let Arm::Poll(Some(id)) = watched.arm
            && self.notifier.watcher.is_some()
        {
            let dir = watched.dir.clone();
            if self.notifier.watch(&dir).is_ok()
                && let Some(watched) = self.runs.get_mut(session)
            {
                watched.arm = Arm::Notify(id);
            }
        }
    }

    /// Print a tick's event and plan what comes next for its run.
    fn after(&mut self, event: TickEvent, before: Option<Stamps>, fresh: bool) -> Result<()> {
        (self.emit)(&event)?;
        let session = event.session.clone();
        let Some((dir, dispatch)) = self.runs.get(&session).map(|w| (w.dir.clone(), w.dispatch))
        else {
            // Registered after the last reload: the next reload arms it.
            self.reload_at.get_or_insert_with(Instant::now);
            return Ok(());
        };
        if !event.run.status.is_active() {
            self.end_run(&session);
            return Ok(());
        }
        let now = Instant::now();
        // Another tick holds the run, or this one failed before deciding (the row is
        // unchanged): the news this tick was for is not handled yet.
        let incomplete = event.decision == Decision::Skip
            || (event.decision == Decision::Error && event.saw.is_none());
        if incomplete {
            self.schedule.retry(&session, now, fresh);
            return Ok(());
        }
        let after = Stamps::of(&dir);
        let baseline = match before {
            Some(before) if explained(&before, &after, &event.did) => Some(after),
            Some(before) => {
                // Someone wrote while the tick ran: look again after this burst.
                self.schedule.notice(&session, now);
                Some(before)
            }
            None => None,
        };
        if let Some(watched) = self.runs.get_mut(&session) {
            watched.baseline = baseline;
        }
        if dispatch && self.awaits_ready_pane(&session) {
            self.schedule.retry(&session, now, fresh);
        } else {
            self.schedule.settle(&session);
        }
        // A wait that ends at a known time (a resume due, its maximum) is ticked then, not
        // at the next sweep.
        if let Some(delay) = wait_deadline(&event) {
            self.schedule.wake(&session, now + delay);
        }
        Ok(())
    }

    /// Dispatch mode: a step is due but was not typed (the pane was not ready). No file event
    /// announces a pane becoming ready, so the run is ticked again with backoff (seed 001).
    fn awaits_ready_pane(&mut self, session: &str) -> bool {
        match self.registry.get(session) {
            Ok(Some(run)) => {
                run.status.is_active()
                    && (run.dispatch.pending.is_some() || run.dispatch.typing.is_some())
            }
            Ok(None) => false,
            Err(_) => true,
        }
    }
}

/// How long after the tick its run's wait needs another look: when its resume is due, else
/// its maximum (a little after, so the tick sees the time passed).
fn wait_deadline(event: &TickEvent) -> Option<Duration> {
    let wait = event.run.wait.as_ref()?;
    let decided = crate::time::parse_time(&event.time)?;
    let at = wait
        .until
        .filter(|until| *until > decided)
        .unwrap_or(wait.max_at);
    let delay = (at - decided).to_std().ok()?;
    Some(delay + Duration::from_millis(20))
}

fn identity(run: &Run) -> (String, Time) {
    (run.spec.task_dir.clone(), run.started_at)
}

fn describe(refused: &Refused) -> String {
    match refused {
        Refused::Limit => {
            "the inotify watch limit is reached; raise fs.inotify.max_user_watches".to_string()
        }
        Refused::Other(why) => why.clone(),
    }
}
