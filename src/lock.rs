//! The heartbeat lock: a JSON file `{owner, pid, host, heartbeat_at}` that says who runs a loop
//! and when it last proved it was alive (seed 004's `.loop.lock`).
//!
//! Rules, decided by the pure functions at the top ([`observe`], [`decide_acquire`],
//! [`decide_refresh`], [`decide_release`]) so they can be tested with a fake clock:
//! - acquire takes a free lock, a stale one (no heartbeat for longer than the staleness
//!   limit), or one whose recorded pid is dead on this host; the owner re-acquiring its own
//!   lock is a refresh;
//! - a pid is recorded only when the caller names the process whose life the lock stands for
//!   (`lock acquire --pid`, the Claude Code process for `hook stop`): the usual caller is a
//!   short-lived shell, hook or `timeout`, whose exit says nothing about the lock's owner, so
//!   without a pid only the heartbeat's staleness frees the lock;
//! - refresh and release succeed only for the owner;
//! - another owner's fresh lock is a [`crate::error::Conflict`] (exit 3) naming the owner and
//!   its age.
//!
//! Why a guard file: the read-decide-write of a lock must be one step, or two racing acquirers
//! both see "free" and both win. Every change happens while holding an flock on a side file
//! (`.NAME.guard` next to the lock), and the lock itself is replaced by an atomic rename, so
//! readers that do not take the guard (`lock status`, `loop status`) still only ever see a
//! whole record. The guard exists only while a change is being made ([`FileLock`] removes it
//! on release), so a released lock leaves no file behind. Heartbeats are not fsynced: a power
//! failure that loses one also killed the holder, and two fsyncs per heartbeat would cost more
//! than everything else a hook does.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Conflict;
use crate::fsx::{self, Bounded, FileLock};
use crate::time::{Clock, format_time};

/// The default staleness limit (seed 004: five minutes without a heartbeat).
pub const DEFAULT_STALE: Duration = Duration::from_secs(5 * 60);

/// How far in the future a heartbeat may be and still be believed: hosts sharing a lock
/// directory disagree by seconds (NTP keeps them within well under one); a heartbeat a
/// minute ahead is no heartbeat.
pub const SKEW_ALLOWANCE: Duration = Duration::from_secs(60);

/// A lock record is a few hundred bytes; anything past this is not one of ours.
const RECORD_LIMIT: u64 = 64 * 1024;

/// The longest owner tag accepted (a session id is 36 characters).
pub const OWNER_MAX_CHARS: usize = 256;

/// What the lock file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockRecord {
    /// Who holds the lock (`session:<id>` for a Claude Code loop).
    pub owner: String,
    /// The process whose life the lock stands for, when the holder named one; without it
    /// only a stale heartbeat frees the lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The host that process runs on; the pid means nothing elsewhere.
    pub host: String,
    /// The last renewal (the holder's proof of life), RFC 3339 UTC. Written `heartbeat_at`,
    /// the lock's word on disk and in `lock status`; in code a lock is *renewed*, so that
    /// "heartbeat" names only the stall heartbeat (see the glossary in [`crate::supervise`]).
    #[serde(rename = "heartbeat_at")]
    pub renewed_at: String,
}

impl LockRecord {
    /// When the lock was last renewed; `None` when the record's time does not parse.
    pub fn renewed(&self) -> Option<DateTime<Utc>> {
        crate::time::parse_time(&self.renewed_at)
    }

    pub fn to_document(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a lock record always serializes");
        bytes.push(b'\n');
        bytes
    }
}

/// Who asks for the lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub owner: String,
    pub pid: Option<u32>,
    pub host: String,
}

impl Claim {
    /// The record this claim writes at `now`.
    pub fn record(&self, now: DateTime<Utc>) -> LockRecord {
        LockRecord {
            owner: self.owner.clone(),
            pid: self.pid,
            host: self.host.clone(),
            // RFC 3339 UTC with milliseconds, so short staleness limits in tests and scripts
            // are meaningful.
            renewed_at: format_time(now),
        }
    }
}

/// A lock record as seen at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Observed {
    #[serde(flatten)]
    pub record: LockRecord,
    /// Time since the last heartbeat (zero when the heartbeat is in the future: clock skew
    /// between hosts must not make a live lock look stale — up to [`SKEW_ALLOWANCE`]).
    #[serde(serialize_with = "serialize_millis", rename = "age_ms")]
    pub age: Duration,
    /// No heartbeat for longer than the staleness limit.
    pub stale: bool,
    /// The holder's recorded pid is known dead (only decidable on the same host, and only
    /// when a pid was recorded).
    pub dead: bool,
}

fn serialize_millis<S: serde::Serializer>(age: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(age.as_millis()).unwrap_or(u64::MAX))
}

impl Observed {
    /// May another owner take this lock?
    pub fn takeable(&self) -> bool {
        self.stale || self.dead
    }

    /// "X (pid P on H, heartbeat 42s ago)", with the owner and host escaped: a lock file is
    /// anyone's to write, and a control character in it must not reach the terminal.
    pub fn describe(&self) -> String {
        let process = match self.record.pid {
            Some(pid) => format!("pid {pid} on "),
            None => "on ".to_string(),
        };
        format!(
            "{} ({process}{}, heartbeat {} ago{})",
            crate::output::printable(&self.record.owner),
            crate::output::printable(&self.record.host),
            human_age(self.age),
            if self.dead {
                "; its process is gone"
            } else if self.stale {
                "; stale"
            } else {
                ""
            }
        )
    }
}

/// An age rounded to whole seconds for people ("42s", "6m5s"); under a second is "0s".
pub fn human_age(age: Duration) -> String {
    crate::duration::format(Duration::from_secs(age.as_secs()))
}

/// Judge a record at `now`. A heartbeat that does not parse counts as infinitely old: such a
/// lock cannot be trusted to be alive.
pub fn observe(
    record: LockRecord,
    now: DateTime<Utc>,
    stale_after: Duration,
    this_host: &str,
    alive: impl Fn(u32) -> bool,
) -> Observed {
    let (age, ahead) = match record.renewed() {
        Some(at) => (
            (now - at).to_std().unwrap_or(Duration::ZERO),
            (at - now).to_std().unwrap_or(Duration::ZERO),
        ),
        None => (Duration::MAX, Duration::ZERO),
    };
    let dead = record.host == this_host && record.pid.is_some_and(|pid| !alive(pid));
    Observed {
        // A heartbeat further ahead than any clock skew was written by a clock that was
        // wrong (or by hand): believing it would keep the lock fresh until that time comes.
        stale: age > stale_after || ahead > SKEW_ALLOWANCE,
        dead,
        age,
        record,
    }
}

/// What acquiring does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquire {
    /// The lock is free: take it.
    Take,
    /// It is ours already: refresh the heartbeat.
    Refresh,
    /// Another owner's lock is stale or its process is dead: take it over.
    TakeOver(Observed),
    /// Another owner holds it and is alive.
    Conflict(Observed),
}

pub fn decide_acquire(current: Option<Observed>, owner: &str) -> Acquire {
    match current {
        None => Acquire::Take,
        Some(held) if held.record.owner == owner => Acquire::Refresh,
        Some(held) if held.takeable() => Acquire::TakeOver(held),
        Some(held) => Acquire::Conflict(held),
    }
}

/// What refreshing or releasing does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnerOnly {
    /// The caller owns the lock (even a stale one nobody took yet).
    Proceed,
    /// Nobody holds the lock.
    NotHeld,
    /// Someone else holds it, stale or not: only its owner may touch it.
    Conflict(Observed),
}

pub fn decide_refresh(current: Option<Observed>, owner: &str) -> OwnerOnly {
    owner_only(current, owner)
}

pub fn decide_release(current: Option<Observed>, owner: &str) -> OwnerOnly {
    owner_only(current, owner)
}

fn owner_only(current: Option<Observed>, owner: &str) -> OwnerOnly {
    match current {
        None => OwnerOnly::NotHeld,
        Some(held) if held.record.owner == owner => OwnerOnly::Proceed,
        Some(held) => OwnerOnly::Conflict(held),
    }
}

/// Check an owner tag: non-empty, bounded, printable.
pub fn validate_owner(owner: &str) -> Result<()> {
    if owner.trim().is_empty() {
        bail!("--owner must not be empty");
    }
    if owner.chars().count() > OWNER_MAX_CHARS {
        bail!("--owner is longer than {OWNER_MAX_CHARS} characters");
    }
    if owner.chars().any(char::is_control) {
        bail!("--owner must not contain control characters");
    }
    Ok(())
}

/// The facts about this process the lock records.
pub trait Host {
    fn now(&self) -> DateTime<Utc>;
    fn name(&self) -> String;
    fn alive(&self, pid: u32) -> bool;
}

/// The real host: autoctl's clock ([`crate::time`]), kernel host name, `/proc` for liveness.
pub struct System {
    clock: Clock,
}

impl System {
    /// This host on the process's clock; Err when `AUTOCTL_NOW` is not a time.
    pub fn from_env() -> Result<System> {
        Ok(System {
            clock: Clock::from_env()?,
        })
    }
}

impl Host for System {
    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    fn name(&self) -> String {
        host_name()
    }

    fn alive(&self, pid: u32) -> bool {
        pid_alive(pid)
    }
}

/// This machine's host name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`, else "unknown").
pub fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|n| !n.is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

/// Whether `pid` is a live process on this host. Only a definite "no" counts: without `/proc`
/// (not Linux) every pid is presumed alive, so a lock is then taken over only once stale.
pub fn pid_alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the parenthesised command name; a zombie has
        // exited and only waits to be reaped.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| state != "Z"),
        Err(err) if err.kind() == io::ErrorKind::NotFound => false,
        Err(_) => true,
    }
}

/// The process a hook's lock should name: autoctl's parent, or — when that is a shell that
/// runs the hook command (`sh -c "autoctl hook stop"`) and exits right after — the nearest
/// ancestor that is not a shell (Claude Code itself). Without `/proc`, the parent.
pub fn nearest_non_shell_ancestor() -> u32 {
    const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "fish", "busybox"];
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..4 {
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            break;
        };
        // "pid (comm) state ppid ...": comm may contain spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            break;
        };
        let comm = &stat[open + 1..close];
        let parent = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        match parent {
            Some(parent) if SHELLS.contains(&comm) && parent > 1 => pid = parent,
            _ => break,
        }
    }
    pid
}

/// A heartbeat lock file and its staleness limit.
#[derive(Debug, Clone)]
pub struct HeartbeatLock {
    path: PathBuf,
    stale_after: Duration,
    /// How long to wait for the guard before giving up (other autoctl invocations hold it
    /// for milliseconds; a holder that hangs must not hang every caller).
    guard_timeout: Duration,
}

/// The result of a successful acquire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acquired {
    pub record: LockRecord,
    /// The owner whose stale or dead lock was taken over, if any.
    pub took_over: Option<Observed>,
}

impl HeartbeatLock {
    /// A lock at `path`. The path must not be a symlink or a directory, and its directory must
    /// exist.
    pub fn new(path: &Path, stale_after: Duration) -> Result<HeartbeatLock> {
        check_lock_path(path)?;
        Ok(HeartbeatLock {
            path: path.to_path_buf(),
            stale_after,
            guard_timeout: Duration::from_secs(10),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn stale_after(&self) -> Duration {
        self.stale_after
    }

    /// The side file whose flock serializes changes to this lock.
    pub fn guard_path(&self) -> PathBuf {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        fsx::parent_dir(&self.path).join(format!(".{name}.guard"))
    }

    /// Read the record. A missing or empty file is a free lock; a file that is not a lock
    /// record is an error (it may be something else entirely, so it is never overwritten).
    pub fn read(&self) -> Result<Option<LockRecord>> {
        check_lock_path(&self.path)?;
        let bytes = match fsx::read_bounded(&self.path, RECORD_LIMIT) {
            Ok(Bounded::Complete(bytes)) => bytes,
            Ok(Bounded::TooLarge { limit }) => bail!(
                "{} is not a lock record (larger than {}); remove it if it is a stale lock",
                self.path.display(),
                fsx::human_size(limit)
            ),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => {
                return Err(err).with_context(|| format!("cannot read {}", self.path.display()));
            }
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let record: LockRecord = serde_json::from_slice(&bytes).map_err(|err| {
            anyhow::anyhow!(
                "{} is not a lock record ({err}); remove it if it is a stale lock",
                self.path.display()
            )
        })?;
        Ok(Some(record))
    }

    /// The current holder as seen now, if any.
    pub fn observe(&self, host: &dyn Host) -> Result<Option<Observed>> {
        let this_host = host.name();
        Ok(self.read()?.map(|record| {
            observe(record, host.now(), self.stale_after, &this_host, |pid| {
                host.alive(pid)
            })
        }))
    }

    fn guard(&self) -> Result<FileLock> {
        lock_with_timeout(&self.guard_path(), self.guard_timeout)
    }

    /// Take the lock for `claim` (see the module rules). A conflict is an error carrying
    /// [`Conflict`].
    pub fn acquire(&self, claim: &Claim, host: &dyn Host) -> Result<Acquired> {
        self.try_acquire(claim, host)?
            .map_err(|held| self.conflict(&held))
    }

    /// Like [`acquire`](Self::acquire), with a conflict as a value: `Ok(Err(holder))`.
    pub fn try_acquire(
        &self,
        claim: &Claim,
        host: &dyn Host,
    ) -> Result<Result<Acquired, Observed>> {
        let _guard = self.guard()?;
        let current = self.observe(host)?;
        match decide_acquire(current, &claim.owner) {
            Acquire::Conflict(held) => Ok(Err(held)),
            decision => {
                let record = claim.record(host.now());
                fsx::atomic_write_volatile(&self.path, &record.to_document())?;
                let took_over = match decision {
                    Acquire::TakeOver(previous) => Some(previous),
                    _ => None,
                };
                Ok(Ok(Acquired { record, took_over }))
            }
        }
    }

    /// Refresh the heartbeat of a lock `claim` owns. `Ok(None)` when nobody holds the lock.
    pub fn refresh(&self, claim: &Claim, host: &dyn Host) -> Result<Option<LockRecord>> {
        let _guard = self.guard()?;
        match decide_refresh(self.observe(host)?, &claim.owner) {
            OwnerOnly::Proceed => {
                let record = claim.record(host.now());
                fsx::atomic_write_volatile(&self.path, &record.to_document())?;
                Ok(Some(record))
            }
            OwnerOnly::NotHeld => Ok(None),
            OwnerOnly::Conflict(held) => Err(self.conflict(&held)),
        }
    }

    /// Release a lock `owner` holds. Returns whether there was one to release.
    pub fn release(&self, owner: &str, host: &dyn Host) -> Result<bool> {
        let _guard = self.guard()?;
        match decide_release(self.observe(host)?, owner) {
            OwnerOnly::Proceed => fsx::remove_if_exists(&self.path),
            OwnerOnly::NotHeld => Ok(false),
            OwnerOnly::Conflict(held) => Err(self.conflict(&held)),
        }
    }

    /// Remove the lock whoever holds it (`loop teardown` after a crash).
    pub fn break_lock(&self) -> Result<bool> {
        let _guard = self.guard()?;
        check_lock_path(&self.path)?;
        fsx::remove_if_exists(&self.path)
    }

    fn conflict(&self, held: &Observed) -> anyhow::Error {
        anyhow::Error::new(Conflict(format!(
            "{} is held by {}",
            self.path.display(),
            held.describe()
        )))
    }
}

/// Refuse lock paths that would be followed or cannot hold a file.
fn check_lock_path(path: &Path) -> Result<()> {
    if path.file_name().is_none() {
        bail!("{}: not a file path", path.display());
    }
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => bail!(
            "refusing to use {} as a lock: it is a symlink",
            path.display()
        ),
        Ok(meta) if meta.is_dir() => {
            bail!(
                "refusing to use {} as a lock: it is a directory",
                path.display()
            )
        }
        Ok(meta) if !meta.is_file() => bail!(
            "refusing to use {} as a lock: it is not a regular file",
            path.display()
        ),
        Ok(_) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            fsx::require_dir(&fsx::parent_dir(path))
        }
        Err(err) => Err(err).with_context(|| format!("cannot stat {}", path.display())),
    }
}

/// Take an flock, polling until `timeout`: a blocking wait would let one hung process hang
/// every hook after it.
pub fn lock_with_timeout(path: &Path, timeout: Duration) -> Result<FileLock> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(lock) = FileLock::try_acquire(path)? {
            return Ok(lock);
        }
        if Instant::now() >= deadline {
            bail!(
                "timed out after {} waiting for {} (another autoctl holds it)",
                crate::duration::format(timeout),
                path.display()
            );
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + secs, 0).unwrap()
    }

    fn record(owner: &str, heartbeat: i64) -> LockRecord {
        LockRecord {
            owner: owner.to_string(),
            pid: Some(42),
            host: "here".to_string(),
            renewed_at: format_time(at(heartbeat)),
        }
    }

    fn seen(owner: &str, heartbeat: i64, now: i64, alive: bool) -> Observed {
        observe(
            record(owner, heartbeat),
            at(now),
            DEFAULT_STALE,
            "here",
            |_| alive,
        )
    }

    #[test]
    fn free_locks_are_taken_and_own_locks_refreshed() {
        assert_eq!(decide_acquire(None, "a"), Acquire::Take);
        assert_eq!(
            decide_acquire(Some(seen("a", 0, 10, true)), "a"),
            Acquire::Refresh
        );
    }

    #[test]
    fn a_fresh_foreign_lock_conflicts_and_a_stale_or_dead_one_is_taken() {
        assert!(matches!(
            decide_acquire(Some(seen("b", 0, 299, true)), "a"),
            Acquire::Conflict(_)
        ));
        assert!(matches!(
            decide_acquire(Some(seen("b", 0, 301, true)), "a"),
            Acquire::TakeOver(held) if held.stale && !held.dead
        ));
        assert!(matches!(
            decide_acquire(Some(seen("b", 0, 1, false)), "a"),
            Acquire::TakeOver(held) if held.dead
        ));
    }

    /// DESIGN "Locks": without a recorded pid, only the heartbeat frees a lock.
    #[test]
    fn without_a_pid_only_staleness_frees_a_lock() {
        let mut no_pid = record("b", 0);
        no_pid.pid = None;
        let fresh = observe(no_pid.clone(), at(10), DEFAULT_STALE, "here", |_| false);
        assert!(!fresh.dead && !fresh.takeable());
        assert!(matches!(
            decide_acquire(Some(fresh.clone()), "a"),
            Acquire::Conflict(_)
        ));
        assert_eq!(fresh.describe(), "b (on here, heartbeat 10s ago)");
        let stale = observe(no_pid, at(301), DEFAULT_STALE, "here", |_| false);
        assert!(matches!(
            decide_acquire(Some(stale), "a"),
            Acquire::TakeOver(_)
        ));
    }

    #[test]
    fn control_characters_in_a_record_are_escaped_when_described() {
        let mut hostile = record("evil\u{1b}[2J\nowner", 0);
        hostile.host = "h\u{7}".to_string();
        let described = observe(hostile, at(1), DEFAULT_STALE, "here", |_| true).describe();
        assert!(!described.chars().any(char::is_control), "{described:?}");
        assert!(described.contains("evil\\u{1b}[2J\\nowner"), "{described}");
    }

    #[test]
    fn a_dead_pid_on_another_host_proves_nothing() {
        let held = observe(record("b", 0), at(1), DEFAULT_STALE, "elsewhere", |_| false);
        assert!(!held.dead);
        assert!(matches!(
            decide_acquire(Some(held), "a"),
            Acquire::Conflict(_)
        ));
    }

    #[test]
    fn a_future_heartbeat_is_fresh_within_the_skew_allowance_and_a_garbled_one_is_stale() {
        let skewed = seen("b", 60, 0, true);
        assert_eq!(skewed.age, Duration::ZERO);
        assert!(!skewed.stale);
        let ahead = seen("b", 61, 0, true);
        assert!(ahead.stale, "a heartbeat 61s ahead");
        assert!(matches!(
            decide_acquire(Some(ahead), "a"),
            Acquire::TakeOver(_)
        ));
        let far = seen("b", 365 * 24 * 3600, 0, true);
        assert!(far.stale, "a heartbeat a year ahead");
        let mut garbled = record("b", 0);
        garbled.renewed_at = "yesterday".to_string();
        assert!(observe(garbled, at(0), DEFAULT_STALE, "here", |_| true).stale);
    }

    #[test]
    fn only_the_owner_refreshes_or_releases() {
        assert_eq!(decide_refresh(None, "a"), OwnerOnly::NotHeld);
        assert_eq!(
            decide_refresh(Some(seen("a", 0, 1000, true)), "a"),
            OwnerOnly::Proceed
        );
        assert!(matches!(
            decide_release(Some(seen("b", 0, 1000, false)), "a"),
            OwnerOnly::Conflict(_)
        ));
    }

    #[test]
    fn owner_tags_are_checked() {
        assert!(validate_owner("session:abc").is_ok());
        for bad in ["", "  ", "a\nb", &"x".repeat(300)] {
            assert!(validate_owner(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn this_process_is_alive_and_an_absurd_pid_is_not() {
        assert!(pid_alive(std::process::id()));
        if Path::new("/proc/self").exists() {
            assert!(!pid_alive(u32::MAX - 1));
        }
    }

    proptest! {
        /// Whatever the holder's state, at most one of "take" and "conflict" applies, a
        /// foreign owner never refreshes, and the owner is never refused its own lock.
        #[test]
        fn decisions_are_consistent(
            heartbeat in -1000i64..1000,
            now in -1000i64..1000,
            alive: bool,
            same_owner: bool,
            stale_secs in 1u64..600,
        ) {
            let owner = if same_owner { "a" } else { "b" };
            let held = observe(record(owner, heartbeat), at(now),
                Duration::from_secs(stale_secs), "here", |_| alive);
            let takeable = held.takeable();
            match decide_acquire(Some(held.clone()), "a") {
                Acquire::Refresh => prop_assert!(same_owner),
                Acquire::TakeOver(_) => prop_assert!(!same_owner && takeable),
                Acquire::Conflict(_) => prop_assert!(!same_owner && !takeable),
                Acquire::Take => prop_assert!(false, "a held lock is never free"),
            }
            let refresh = decide_refresh(Some(held), "a");
            prop_assert_eq!(refresh == OwnerOnly::Proceed, same_owner);
        }
    }
}
