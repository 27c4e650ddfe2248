//! Where the typed session state lives, and the small API every writer and reader uses:
//! `<state>/hooks/<stem>.json` and `<stem>.log` hold what the hooks said ([`Record`], written
//! by `hook event`, `hook stop`, `hook stop-failure` and `hook permission-request`),
//! `<stem>.status.json` what the status line said ([`StatusRecord`], written by `autoctl
//! statusline`), with `<stem>` from the session's [`Key`].
//!
//! **A record is a snapshot plus a journal.** Every change gives the record the next
//! generation ([`Record::seq`]) and appends it, whole, as one line of `<stem>.log`; every
//! [`COMPACT_LINES`] lines (or [`COMPACT_BYTES`]) the newest is written as the snapshot
//! `<stem>.json` (atomically: temp file and rename) and the journal removed. The record is
//! whichever of the snapshot and the journal's last complete line has the higher generation.
//! Why: replacing a file by rename costs 2–4 ms on ext4 (its `auto_da_alloc` starts the new
//! file's writeback when a rename replaces an existing file), more than the rest of a hook
//! call, and hooks run on every tool call; an append costs microseconds. Nothing is lost or
//! half-read on the way: an append is one `write(2)` of one line, readers skip a line without
//! its newline (an append in progress, or one a crash cut), the next append starts on a line
//! of its own, and readers read the journal before the snapshot, so a compaction between the
//! two reads leaves them the snapshot at least as new as the journal they read.
//!
//! Writes are not fsynced: losing the last one to a power cut costs one event, while an fsync
//! would cost milliseconds of every tool call. An update takes a flock on the records
//! directory, so hooks that fire at once (parallel tool calls) never lose each other's events.
//! A record that does not parse is replaced by a fresh one (with a warning): a hook must never
//! get stuck on bad state. Something else planted at the journal's path (a symlink, a FIFO, a
//! directory) is never written through: the update goes to the snapshot instead.
//!
//! Writers: [`Store::record`] and [`Store::update`] (apply the event, write). Readers:
//! [`Store::find`] (a supervisor's lookup: pane, else session id, else working directory) and
//! [`Store::list`] (`doctor`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::session::{self, Key, Payload, Permission, Record, Time, Transition};
use super::statusline::StatusRecord;
use crate::fsx::{self, Bounded};

/// The directory under the state directory.
pub const DIR_NAME: &str = "hooks";
/// Records are small; anything larger is not one of ours.
const RECORD_LIMIT: u64 = 256 * 1024;
/// The journal is compacted into the snapshot once it holds this many lines...
pub const COMPACT_LINES: usize = 32;
/// ...or would grow past this many bytes.
pub const COMPACT_BYTES: u64 = 128 * 1024;
/// A journal larger than this is not ours (it never grows past [`COMPACT_BYTES`] plus one
/// record): it is not read, and the next write replaces it.
const JOURNAL_LIMIT: u64 = COMPACT_BYTES + RECORD_LIMIT;
/// The extension of an unattended mark ([`Store::unattended_path`]).
const UNATTENDED_EXT: &str = "unattended";
/// Records untouched for this long are removed (on a session's start).
pub const PRUNE_AFTER: Duration = Duration::from_secs(14 * 24 * 3600);

/// The hook's environment that decides its key.
#[derive(Debug, Clone, Default)]
pub struct HookEnv {
    /// `$TMUX`: socket path, server pid, session index.
    pub tmux: Option<String>,
    /// `$TMUX_PANE`: `%3`.
    pub tmux_pane: Option<String>,
}

impl HookEnv {
    pub fn from_env() -> HookEnv {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        HookEnv {
            tmux: var("TMUX"),
            tmux_pane: var("TMUX_PANE"),
        }
    }

    pub fn key(&self, payload: &Payload) -> Option<Key> {
        Key::of(self.tmux.as_deref(), self.tmux_pane.as_deref(), payload)
    }
}

/// What a supervisor knows about the agent it looks for.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// The run's pane and its tmux server's socket path.
    pub pane: Option<(String, String)>,
    /// A Claude Code session id bound to the run.
    pub session_id: Option<String>,
    /// The run's task (or project) directory.
    pub dir: Option<PathBuf>,
}

/// The records found for one agent.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Which key matched (`pane`, `session` or `cwd`).
    pub by: Option<&'static str>,
    pub hook: Option<Record>,
    pub status: Option<StatusRecord>,
}

/// The records directory.
#[derive(Debug, Clone)]
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    /// The store inside `state_dir` (nothing is created until a write).
    pub fn new(state_dir: &Path) -> Store {
        Store {
            dir: state_dir.join(DIR_NAME),
        }
    }

    /// The store in autoctl's state directory (`AUTOCTL_STATE_DIR`, ...).
    pub fn from_env() -> Result<Store> {
        Ok(Store::new(&crate::supervise::state_dir()?))
    }

    /// The record's snapshot.
    pub fn hook_path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.json", key.stem()))
    }

    /// The record's journal: the changes since its snapshot, one whole record per line.
    pub fn journal_path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.log", key.stem()))
    }

    pub fn status_path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.status.json", key.stem()))
    }

    /// The mark `run start --unattended` leaves for the agent's pane: while it exists,
    /// `hook pre-tool-use` denies what the policy names destructive instead of asking
    /// (nobody will answer the prompt). It holds the run's name, so `run stop` finds it.
    pub fn unattended_path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.{UNATTENDED_EXT}", key.stem()))
    }

    /// Mark the pane of `key` unattended for the run named `run`.
    pub fn mark_unattended(&self, key: &Key, run: &str) -> Result<()> {
        fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        fsx::atomic_write(&self.unattended_path(key), run.as_bytes())
    }

    /// Remove every unattended mark of the run named `run` (a run's pane may have changed
    /// id; the mark names the run). Best effort: a mark that stays makes the pane's agent deny
    /// what it would have asked about, which errs on the safe side.
    pub fn unmark_unattended(&self, run: &str) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some(UNATTENDED_EXT) {
                continue;
            }
            if matches!(fsx::read_bounded(&path, 4096), Ok(Bounded::Complete(b)) if b == run.as_bytes())
            {
                let _ = fs::remove_file(&path);
            }
        }
    }

    /// Serialize record updates: a flock on the records directory itself, held for the
    /// microseconds of one read-modify-write. A lock file per record would cost a create and
    /// an unlink on every hook call (lock files exist only while held); one lock for every
    /// session costs nothing measurable, since no update waits on anything but the disk.
    fn lock(&self) -> Result<std::fs::File> {
        let dir = std::fs::File::open(&self.dir)
            .with_context(|| format!("cannot open {}", self.dir.display()))?;
        dir.lock()
            .with_context(|| format!("cannot lock {}", self.dir.display()))?;
        Ok(dir)
    }

    /// Apply one hook event to its record (created as needed) and write it. `warnings` gets
    /// a line for a record that had to be replaced.
    pub fn record(
        &self,
        key: &Key,
        payload: &Payload,
        permission: Option<Permission>,
        now: Time,
        warnings: &mut Vec<String>,
    ) -> Result<Transition> {
        self.update(key, warnings, |previous| match permission {
            Some(outcome) => session::apply_permission(previous, key, payload, outcome, now),
            None => session::apply(previous, key, payload, now),
        })
    }

    /// Read-modify-write the hook record under `key`, under its lock: the change is appended
    /// to the record's journal, or, every [`COMPACT_LINES`] changes, written as its snapshot.
    /// A change that leaves the record as it was writes nothing, so it wakes no watcher
    /// (`run watch` watches these files): under a fixed `AUTOCTL_NOW` the same event twice is
    /// one write, with the real clock every event moves the record's time.
    pub fn update(
        &self,
        key: &Key,
        warnings: &mut Vec<String>,
        change: impl FnOnce(Option<Record>) -> Transition,
    ) -> Result<Transition> {
        self.ensure_dir()?;
        let _lock = self.lock()?;
        let files = self.hook_files(key);
        let mut loaded = files.load::<Record>();
        if let Some(problem) = &loaded.problem {
            warnings.push(format!("{problem}; starting a new record"));
        }
        let previous = loaded.record.take();
        let generation = previous.as_ref().map_or(0, |record| record.seq);
        let mut transition = change(previous.clone());
        if previous.as_ref() != Some(&transition.record) {
            files.write(&loaded, generation, &mut transition.record, warnings)?;
        }
        Ok(transition)
    }

    /// The hook record under `key`, if any.
    pub fn read(&self, key: &Key) -> Result<Option<Record>, RecordError> {
        self.hook_files(key).load().into_result()
    }

    /// The status-line record under `key`, if any.
    pub fn read_status(&self, key: &Key) -> Result<Option<StatusRecord>, RecordError> {
        self.status_files(key).load().into_result()
    }

    /// Write a status-line record (the caller decided it changed). `warnings` gets a line for
    /// a journal that could not be removed after its compaction.
    pub fn write_status(
        &self,
        key: &Key,
        record: &StatusRecord,
        warnings: &mut Vec<String>,
    ) -> Result<()> {
        self.ensure_dir()?;
        let _lock = self.lock()?;
        let files = self.status_files(key);
        let loaded = files.load::<StatusRecord>();
        let generation = loaded.record.as_ref().map_or(0, |record| record.seq);
        files.write(&loaded, generation, &mut record.clone(), warnings)
    }

    fn hook_files(&self, key: &Key) -> Files {
        Files {
            snapshot: self.hook_path(key),
            journal: self.journal_path(key),
        }
    }

    fn status_files(&self, key: &Key) -> Files {
        Files {
            snapshot: self.status_path(key),
            journal: self.dir.join(format!("{}.status.log", key.stem())),
        }
    }

    fn ensure_dir(&self) -> Result<()> {
        fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))
    }

    /// The records of one agent: by its pane, else its session id, else the nearest record
    /// whose working directory holds `dir`. Unreadable records are skipped.
    pub fn find(&self, lookup: &Lookup) -> Found {
        let mut keys: Vec<(&'static str, Key)> = Vec::new();
        if let Some((socket, pane)) = &lookup.pane {
            keys.push((
                "pane",
                Key::Pane {
                    socket: socket.clone(),
                    pane: pane.clone(),
                },
            ));
        }
        if let Some(id) = &lookup.session_id {
            keys.push(("session", Key::Session(id.clone())));
        }
        for (by, key) in keys {
            let hook = self.read(&key).ok().flatten();
            let status = self.read_status(&key).ok().flatten();
            if hook.is_some() || status.is_some() {
                return Found {
                    by: Some(by),
                    hook,
                    status,
                };
            }
        }
        let Some(dir) = &lookup.dir else {
            return Found::default();
        };
        // The nearest (longest) working directory that holds `dir`, the newest on a tie.
        let best = self
            .list()
            .into_iter()
            .filter(|(_, record)| session::covers(record, dir))
            .max_by_key(|(_, record)| (record.cwd.as_ref().map_or(0, String::len), record.at));
        match best {
            Some((stem, hook)) => Found {
                by: Some("cwd"),
                status: self.status_of(&stem),
                hook: Some(hook),
            },
            None => Found::default(),
        }
    }

    /// Every readable hook record, with its file stem.
    pub fn list(&self) -> Vec<(String, Record)> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut stems = std::collections::BTreeSet::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some((stem, RecordFile::Snapshot | RecordFile::Journal)) = record_file(&name) {
                stems.insert(stem.to_string());
            }
        }
        stems
            .into_iter()
            .filter_map(|stem| {
                let record = self.stem_files(&stem, RecordFile::Snapshot).load().record;
                record.map(|record| (stem, record))
            })
            .collect()
    }

    /// Every agent with a readable record, hook or status line (a status line recorded
    /// without any hook event included): its file stem and both records.
    pub fn agents(&self) -> Vec<(String, Option<Record>, Option<StatusRecord>)> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let stems: std::collections::BTreeSet<String> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                record_file(&name).map(|(stem, _)| stem.to_string())
            })
            .collect();
        stems
            .into_iter()
            .filter_map(|stem| {
                let hook = self.stem_files(&stem, RecordFile::Snapshot).load().record;
                let status = self.status_of(&stem);
                (hook.is_some() || status.is_some()).then_some((stem, hook, status))
            })
            .collect()
    }

    /// The status-line record beside the hook record with file stem `stem` (from
    /// [`Store::list`]), if there is a readable one.
    pub fn status_of(&self, stem: &str) -> Option<StatusRecord> {
        self.stem_files(stem, RecordFile::Status)
            .load()
            .into_result()
            .ok()
            .flatten()
    }

    /// The files of the record with file stem `stem`: the hooks' (`Snapshot`) or the status
    /// line's (`Status`).
    fn stem_files(&self, stem: &str, kind: RecordFile) -> Files {
        let ext = if kind == RecordFile::Status {
            ".status"
        } else {
            ""
        };
        Files {
            snapshot: self.dir.join(format!("{stem}{ext}.json")),
            journal: self.dir.join(format!("{stem}{ext}.log")),
        }
    }

    /// Remove records (their snapshot, journal and status files together) untouched for
    /// [`PRUNE_AFTER`]: a record goes only when none of its files changed since. Best effort:
    /// a file another hook rewrote meanwhile is simply younger next time.
    pub fn prune(&self, now: std::time::SystemTime) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut files = Vec::new();
        let mut young = std::collections::HashSet::new();
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let old = meta
                .modified()
                .ok()
                .and_then(|modified| now.duration_since(modified).ok())
                .is_some_and(|age| age > PRUNE_AFTER);
            let name = entry.file_name().to_string_lossy().into_owned();
            let stem =
                record_file(&name).map_or_else(|| name.clone(), |(stem, _)| stem.to_string());
            if !old {
                young.insert(stem);
            } else if meta.file_type().is_file() {
                files.push((stem, entry.path()));
            }
        }
        for (stem, path) in files {
            if !young.contains(&stem) {
                let _ = fs::remove_file(path);
            }
        }
    }
}

/// The files of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecordFile {
    Snapshot,
    Journal,
    Status,
}

/// The stem and kind of a record's file name (`None`: not one, e.g. a temp file).
fn record_file(name: &str) -> Option<(&str, RecordFile)> {
    if name.starts_with('.') {
        return None;
    }
    if let Some(stem) = name
        .strip_suffix(".status.json")
        .or_else(|| name.strip_suffix(".status.log"))
    {
        return Some((stem, RecordFile::Status));
    }
    if let Some(stem) = name.strip_suffix(".json") {
        return Some((stem, RecordFile::Snapshot));
    }
    name.strip_suffix(".log")
        .map(|stem| (stem, RecordFile::Journal))
}

/// A record kept as a snapshot and a journal (see the module doc): it carries its generation.
pub trait Generational: Serialize + DeserializeOwned + Clone + PartialEq {
    fn seq(&self) -> u64;
    fn set_seq(&mut self, seq: u64);
}

impl Generational for Record {
    fn seq(&self) -> u64 {
        self.seq
    }
    fn set_seq(&mut self, seq: u64) {
        self.seq = seq;
    }
}

impl Generational for StatusRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
    fn set_seq(&mut self, seq: u64) {
        self.seq = seq;
    }
}

/// One record's snapshot and journal paths.
struct Files {
    snapshot: PathBuf,
    journal: PathBuf,
}

/// What a journal holds.
#[derive(Debug, Default)]
struct Journal {
    /// Its complete lines (valid or not), each ending in a newline.
    complete: Vec<u8>,
    /// How many lines that is, and the journal's size.
    lines: usize,
    bytes: u64,
    /// It ends inside a line (an append a crash cut short).
    torn: bool,
    /// Absent, or a plain file of a sane size: the next change may be appended.
    appendable: bool,
}

impl Journal {
    /// Its complete lines, the newest first. Lines are appended in generation order under
    /// the lock, so the first valid one is the newest record.
    fn newest_first(&self) -> impl Iterator<Item = &[u8]> {
        self.complete
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .rev()
    }
}

/// A record as its files hold it.
#[derive(Debug)]
struct Loaded<T> {
    /// The newer of the snapshot and the journal's newest line.
    record: Option<T>,
    /// Why there is none although files exist (one line).
    problem: Option<RecordError>,
    journal: Journal,
}

impl<T> Loaded<T> {
    fn into_result(self) -> Result<Option<T>, RecordError> {
        match (self.record, self.problem) {
            (None, Some(problem)) => Err(problem),
            (record, _) => Ok(record),
        }
    }
}

impl Files {
    /// Load the record: the journal first, then the snapshot (see the module doc for why
    /// that order); the higher generation wins. Only the winner is deserialized when the
    /// generations settle it ([`newer_by_generation`]); otherwise both are read whole.
    fn load<T: Generational>(&self) -> Loaded<T> {
        let journal = read_journal(&self.journal);
        let snapshot = read_bytes(&self.snapshot);
        if let Some(record) = newer_by_generation::<T>(&journal, &snapshot) {
            return Loaded {
                record: Some(record),
                problem: None,
                journal,
            };
        }
        let newest = journal
            .newest_first()
            .find_map(|line| serde_json::from_slice::<T>(line).ok());
        let (snapshot, problem) = match snapshot.and_then(|bytes| match bytes {
            Some(bytes) => parse_record::<T>(&self.snapshot, &bytes).map(Some),
            None => Ok(None),
        }) {
            Ok(record) => (record, None),
            Err(problem) => (None, Some(problem)),
        };
        let record = match (snapshot, newest) {
            (Some(s), Some(j)) => Some(if j.seq() > s.seq() { j } else { s }),
            (s, j) => s.or(j),
        };
        Loaded {
            problem: if record.is_none() { problem } else { None },
            record,
            journal,
        }
    }

    /// Write `record` as the next generation after `generation`, the one `loaded` held (the
    /// caller holds the lock and decided it changed): appended to the journal, or written as the snapshot (atomically)
    /// when the journal is full, unusable or not a plain file, which then goes.
    fn write<T: Generational>(
        &self,
        loaded: &Loaded<T>,
        generation: u64,
        record: &mut T,
        warnings: &mut Vec<String>,
    ) -> Result<()> {
        record.set_seq(generation + 1);
        let mut line = serde_json::to_vec(&*record).context("cannot encode the record")?;
        line.push(b'\n');
        let journal = &loaded.journal;
        let append = loaded.problem.is_none()
            && journal.appendable
            && journal.lines + 1 < COMPACT_LINES
            && journal.bytes + line.len() as u64 <= COMPACT_BYTES;
        if append {
            // A line a crash cut short is ended first, so this one stands on its own.
            if journal.torn {
                line.insert(0, b'\n');
            }
            if fsx::append_volatile(&self.journal, &line).is_ok() {
                return Ok(());
            }
            // Not a plain file we can append to: the snapshot takes the change.
        }
        write_json(&self.snapshot, &*record)?;
        if let Err(err) = fsx::remove_if_exists(&self.journal) {
            // Its lines are older than the snapshot: readers pass over them.
            warnings.push(format!("{err:#}"));
        }
        Ok(())
    }
}

/// Open a journal for reading: a plain file, never through a symlink (a planted one is
/// replaced at the next change, never read or written through).
fn open_journal(path: &Path) -> io::Result<(fs::File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    if metadata.file_type().is_file() {
        Ok((file, metadata.len()))
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ))
    }
}

/// Read a journal: its complete lines (a line without its newline is an append in progress
/// or one a crash cut short, and is passed over).
fn read_journal(path: &Path) -> Journal {
    let read = open_journal(path)
        .and_then(|(file, size)| fsx::read_bounded_sized(file, JOURNAL_LIMIT, size));
    let mut bytes = match read {
        Ok(Bounded::Complete(bytes)) => bytes,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Journal {
                appendable: true,
                ..Journal::default()
            };
        }
        // Too large, not a plain file, unreadable: not ours to append to.
        _ => return Journal::default(),
    };
    let size = bytes.len();
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(complete);
    let mut journal = Journal {
        complete: bytes,
        bytes: size as u64,
        torn: complete < size,
        appendable: true,
        ..Journal::default()
    };
    journal.lines = journal.newest_first().count();
    journal
}

/// The newer of the journal's newest line and the snapshot, deserialized alone: each one's
/// generation is read first ([`generation`], which builds nothing), then only the newer is
/// read whole. `None` when that does not settle it — the snapshot is unreadable, or what won
/// does not parse as a record — and the caller then reads every candidate whole.
fn newer_by_generation<T: Generational>(
    journal: &Journal,
    snapshot: &Result<Option<Vec<u8>>, RecordError>,
) -> Option<T> {
    let snapshot = snapshot.as_ref().ok()?.as_deref();
    let line = journal.newest_first().next();
    let newer = match (line, snapshot) {
        (None, None) => return None,
        (Some(only), None) | (None, Some(only)) => only,
        (Some(line), Some(snapshot)) => {
            if generation(line)? > generation(snapshot)? {
                line
            } else {
                snapshot
            }
        }
    };
    serde_json::from_slice(newer).ok()
}

/// A record's generation ([`Generational::seq`], the `seq` field; 0 when absent, as both
/// records read it), without building the record: the other fields are skipped unread.
/// `None` when the text is not a JSON object with at most one `seq`.
fn generation(bytes: &[u8]) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Generation {
        #[serde(default)]
        seq: u64,
    }
    serde_json::from_slice::<Generation>(bytes)
        .ok()
        .map(|g| g.seq)
}

/// A record's bytes: `Ok(None)` when there is none, `Err` (one line) when it is unreadable.
fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, RecordError> {
    match fsx::read_bounded(path, RECORD_LIMIT) {
        Ok(Bounded::Complete(bytes)) => Ok(Some(bytes)),
        Ok(Bounded::TooLarge { limit }) => Err(RecordError::TooLarge {
            path: path.to_path_buf(),
            limit,
        }),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(RecordError::Unreadable {
            path: path.to_path_buf(),
            err,
        }),
    }
}

/// Why a record's file holds no record (one line).
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{} is larger than {}: not a record", path.display(), fsx::human_size(*limit))]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("cannot read {}: {err}", path.display())]
    Unreadable { path: PathBuf, err: io::Error },
    #[error("{} is not a valid record: {err}", path.display())]
    Invalid {
        path: PathBuf,
        err: serde_json::Error,
    },
}

/// A record read from `path`'s `bytes` (`Err`: one line).
fn parse_record<T: DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T, RecordError> {
    serde_json::from_slice(bytes).map_err(|err| RecordError::Invalid {
        path: path.to_path_buf(),
        err,
    })
}

/// Read a record: `Ok(None)` when there is none, `Err` (one line) when it is unreadable.
#[cfg(test)]
fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, RecordError> {
    read_bytes(path)?
        .map(|bytes| parse_record(path, &bytes))
        .transpose()
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).context("cannot encode the record")?;
    bytes.push(b'\n');
    fsx::atomic_write_volatile(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn at(secs: i64) -> Time {
        DateTime::from_timestamp(1_795_680_000 + secs, 0).unwrap()
    }

    fn payload(json: &str) -> Payload {
        session::parse(json.as_bytes()).unwrap()
    }

    #[test]
    fn records_are_found_by_pane_then_session_then_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        let mut warnings = Vec::new();
        let pane = Key::Pane {
            socket: "/tmp/tmux-0/x".into(),
            pane: "%1".into(),
        };
        let p =
            payload(r#"{"hook_event_name":"UserPromptSubmit","session_id":"s1","cwd":"/work/p"}"#);
        store.record(&pane, &p, None, at(0), &mut warnings).unwrap();
        let by_session = Key::Session("s2".into());
        let p2 = payload(r#"{"hook_event_name":"Stop","session_id":"s2","cwd":"/work/q"}"#);
        store
            .record(&by_session, &p2, None, at(1), &mut warnings)
            .unwrap();
        assert!(warnings.is_empty());

        let found = store.find(&Lookup {
            pane: Some(("/tmp/tmux-0/x".into(), "%1".into())),
            ..Lookup::default()
        });
        assert_eq!(found.by, Some("pane"));
        assert_eq!(found.hook.unwrap().session_id.as_deref(), Some("s1"));
        let found = store.find(&Lookup {
            pane: Some(("/tmp/tmux-0/other".into(), "%1".into())),
            session_id: Some("s2".into()),
            dir: None,
        });
        assert_eq!(found.by, Some("session"));
        let found = store.find(&Lookup {
            dir: Some("/work/q/tasks/t1".into()),
            ..Lookup::default()
        });
        assert_eq!(found.by, Some("cwd"));
        assert_eq!(found.hook.unwrap().session_id.as_deref(), Some("s2"));
        assert!(
            store
                .find(&Lookup {
                    dir: Some("/elsewhere".into()),
                    ..Lookup::default()
                })
                .hook
                .is_none()
        );
        assert_eq!(store.list().len(), 2);
    }

    #[test]
    fn a_corrupt_record_is_replaced_with_a_warning() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        let key = Key::Session("s".into());
        fs::create_dir_all(&store.dir).unwrap();
        fs::write(store.hook_path(&key), b"{not json").unwrap();
        let mut warnings = Vec::new();
        let t = store
            .record(
                &key,
                &payload(r#"{"hook_event_name":"Stop","session_id":"s"}"#),
                None,
                at(0),
                &mut warnings,
            )
            .unwrap();
        assert_eq!(t.record.stops, 1);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(store.read(&key).unwrap().is_some());
    }

    /// The hook record as its files say, read the slow and obvious way: every snapshot and
    /// journal line, the highest generation.
    fn newest_on_disk(store: &Store, key: &Key) -> Option<Record> {
        let mut all: Vec<Record> = Vec::new();
        if let Ok(bytes) = fs::read(store.hook_path(key)) {
            all.extend(serde_json::from_slice::<Record>(&bytes).ok());
        }
        if let Ok(text) = fs::read_to_string(store.journal_path(key)) {
            all.extend(
                text.split_inclusive('\n')
                    .filter(|l| l.ends_with('\n'))
                    .filter_map(|l| serde_json::from_str::<Record>(l).ok()),
            );
        }
        all.into_iter().max_by_key(|r| r.seq)
    }

    fn event(i: i64) -> Payload {
        let name = if i % 2 == 0 {
            "UserPromptSubmit"
        } else {
            "Stop"
        };
        payload(&format!(
            r#"{{"hook_event_name":"{name}","session_id":"s","last_assistant_message":"reply {i}"}}"#
        ))
    }

    #[test]
    fn changes_are_appended_and_compacted_into_the_snapshot() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        let key = Key::Session("s".into());
        let mut w = Vec::new();
        let mut snapshots = 0;
        for i in 0..(3 * COMPACT_LINES as i64 + 5) {
            let t = store.record(&key, &event(i), None, at(i), &mut w).unwrap();
            assert_eq!(t.record.seq, i as u64 + 1, "one generation per change");
            assert_eq!(store.read(&key).unwrap().as_ref(), Some(&t.record));
            assert_eq!(newest_on_disk(&store, &key).as_ref(), Some(&t.record));
            let lines =
                fs::read_to_string(store.journal_path(&key)).map_or(0, |j| j.lines().count());
            assert!(lines < COMPACT_LINES, "event {i}: {lines} lines");
            if lines == 0 {
                snapshots += 1;
                assert_eq!(
                    store.read(&key).unwrap(),
                    read_json::<Record>(&store.hook_path(&key)).unwrap()
                );
            }
        }
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(snapshots, 3, "one snapshot per {COMPACT_LINES} changes");
        assert_eq!(store.list().len(), 1);
        assert_eq!(store.list()[0].1.stops, (3 * COMPACT_LINES as u64 + 5) / 2);
    }

    #[test]
    fn a_line_a_crash_cut_short_is_passed_over_and_the_next_stands_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        let key = Key::Session("s".into());
        let mut w = Vec::new();
        store.record(&key, &event(1), None, at(1), &mut w).unwrap();
        let second = store.record(&key, &event(2), None, at(2), &mut w).unwrap();
        // An append interrupted halfway: half a record, no newline.
        let mut torn = serde_json::to_vec(&second.record).unwrap();
        torn.truncate(torn.len() / 2);
        fsx::append_volatile(&store.journal_path(&key), &torn).unwrap();
        assert_eq!(store.read(&key).unwrap(), Some(second.record.clone()));
        let third = store.record(&key, &event(3), None, at(3), &mut w).unwrap();
        assert_eq!(third.record.seq, 3);
        assert_eq!(store.read(&key).unwrap(), Some(third.record));
        assert!(w.is_empty(), "{w:?}");
        // A garbage line in the middle is passed over too.
        let journal = fs::read_to_string(store.journal_path(&key)).unwrap();
        assert_eq!(journal.lines().count(), 4, "{journal}");
    }

    #[test]
    fn the_higher_generation_wins_between_snapshot_and_journal() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        let key = Key::Session("s".into());
        let mut w = Vec::new();
        let one = store
            .record(&key, &event(1), None, at(1), &mut w)
            .unwrap()
            .record;
        let two = store
            .record(&key, &event(2), None, at(2), &mut w)
            .unwrap()
            .record;
        // A compaction that wrote the snapshot but died before removing the journal.
        write_json(&store.hook_path(&key), &two).unwrap();
        assert_eq!(store.read(&key).unwrap(), Some(two.clone()));
        // A snapshot older than the journal (the journal was appended to since).
        write_json(&store.hook_path(&key), &one).unwrap();
        assert_eq!(store.read(&key).unwrap(), Some(two.clone()));
        let three = store
            .record(&key, &event(3), None, at(3), &mut w)
            .unwrap()
            .record;
        assert_eq!(three.seq, 3);
        assert_eq!(store.read(&key).unwrap(), Some(three));
    }

    /// What the record is, read the old way: every candidate whole (the snapshot, and the
    /// journal's newest line that parses), the higher generation, the snapshot on a tie.
    fn read_whole(store: &Store, key: &Key) -> Option<Record> {
        let snapshot = fs::read(store.hook_path(key))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok());
        let newest = fs::read_to_string(store.journal_path(key))
            .ok()
            .and_then(|text| {
                text.split_inclusive('\n')
                    .filter(|l| l.ends_with('\n'))
                    .filter_map(|l| serde_json::from_str::<Record>(l).ok())
                    .next_back()
            });
        match (snapshot, newest) {
            (Some(s), Some(j)) => Some(if j.seq > s.seq { j } else { s }),
            (s, j) => s.or(j),
        }
    }

    #[test]
    fn the_record_read_by_generations_is_the_one_read_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        let key = Key::Session("s".into());
        let mut w = Vec::new();
        let records: Vec<Record> = (1..=4)
            .map(|i| {
                store
                    .record(&key, &event(i), None, at(i), &mut w)
                    .unwrap()
                    .record
            })
            .collect();
        let journal = fs::read(store.journal_path(&key)).unwrap();
        let with_seq = |record: &Record, seq: u64| {
            let mut record = record.clone();
            record.seq = seq;
            serde_json::to_vec_pretty(&record).unwrap()
        };
        // (snapshot, extra journal text): each is a state a crash, a race or a stranger can leave.
        let cases: Vec<(Option<Vec<u8>>, &[u8])> = vec![
            (None, b""),
            (Some(with_seq(&records[0], 1)), b""),
            (Some(with_seq(&records[0], 9)), b""),
            (Some(with_seq(&records[0], 4)), b""),
            (Some(b"{not json".to_vec()), b""),
            (Some(br#"{"seq":9}"#.to_vec()), b""),
            (Some(br#"{"seq":1,"seq":9}"#.to_vec()), b""),
            (Some(with_seq(&records[0], 1)), b"{\"seq\":99}\n"),
            (Some(with_seq(&records[0], 9)), b"{\"seq\":99}\n"),
            (None, b"{\"seq\":99}\n"),
            (None, b"{\"seq\":99,\"seq\":1}\n"),
            (Some(with_seq(&records[0], 2)), b"garbage\n"),
            (Some(with_seq(&records[0], 9)), b"{\"seq\":5"),
        ];
        for (i, (snapshot, extra)) in cases.iter().enumerate() {
            match snapshot {
                Some(bytes) => fs::write(store.hook_path(&key), bytes).unwrap(),
                None => {
                    fsx::remove_if_exists(&store.hook_path(&key)).unwrap();
                }
            }
            let mut text = journal.clone();
            text.extend_from_slice(extra);
            fs::write(store.journal_path(&key), &text).unwrap();
            let expected = read_whole(&store, &key);
            assert!(expected.is_some(), "case {i}");
            assert_eq!(store.read(&key).ok().flatten(), expected, "case {i}");
        }
        // No journal: the snapshot alone, or its problem.
        fsx::remove_if_exists(&store.journal_path(&key)).unwrap();
        fs::write(store.hook_path(&key), with_seq(&records[1], 7)).unwrap();
        assert_eq!(store.read(&key).unwrap().map(|r| r.seq), Some(7));
        fs::write(store.hook_path(&key), b"{not json").unwrap();
        assert!(
            store
                .read(&key)
                .unwrap_err()
                .to_string()
                .contains("is not a valid record")
        );
    }

    #[test]
    fn something_planted_at_the_journal_is_never_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        let key = Key::Session("s".into());
        let mut w = Vec::new();
        fs::create_dir_all(&store.dir).unwrap();
        let target = tmp.path().join("victim");
        fs::write(&target, b"precious\n").unwrap();
        std::os::unix::fs::symlink(&target, store.journal_path(&key)).unwrap();
        let t = store.record(&key, &event(1), None, at(1), &mut w).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"precious\n");
        assert!(
            !store.journal_path(&key).is_symlink(),
            "the link is removed"
        );
        assert_eq!(store.read(&key).unwrap(), Some(t.record));
        // A directory there: the snapshot takes every change, with a warning.
        fs::create_dir(store.journal_path(&key)).unwrap();
        let t = store.record(&key, &event(2), None, at(2), &mut w).unwrap();
        assert_eq!(store.read(&key).unwrap(), Some(t.record));
        assert_eq!(w.len(), 1, "{w:?}");
    }

    #[test]
    fn a_record_goes_only_when_all_its_files_are_old() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        let key = Key::Session("s".into());
        let mut w = Vec::new();
        // A snapshot and a journal line after it.
        for i in 0..=COMPACT_LINES as i64 {
            store.record(&key, &event(i), None, at(i), &mut w).unwrap();
        }
        assert!(store.hook_path(&key).exists() && store.journal_path(&key).exists());
        let now = crate::fsx::file_system_now(tmp.path()).unwrap();
        let old = now - PRUNE_AFTER - Duration::from_secs(60);
        fs::File::options()
            .write(true)
            .open(store.hook_path(&key))
            .unwrap()
            .set_modified(old)
            .unwrap();
        store.prune(now);
        assert!(store.hook_path(&key).exists(), "its journal is young");
        store.prune(now + PRUNE_AFTER + Duration::from_secs(120));
        assert!(!store.hook_path(&key).exists() && !store.journal_path(&key).exists());
    }

    #[test]
    fn an_unchanged_record_is_not_rewritten() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        let key = Key::Session("s".into());
        let mut w = Vec::new();
        let p = payload(
            r#"{"hook_event_name":"Notification","session_id":"s","notification_type":"x"}"#,
        );
        store.record(&key, &p, None, at(0), &mut w).unwrap();
        let first = fs::metadata(store.journal_path(&key))
            .unwrap()
            .modified()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        store.record(&key, &p, None, at(0), &mut w).unwrap();
        let second = fs::metadata(store.journal_path(&key))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(first, second);
    }
}
