//! Where the typed session state lives, and the small API every writer and reader uses:
//! `<state>/hooks/<stem>.json` holds what the hooks said ([`Record`], written by `hook event`,
//! `hook stop`, `hook stop-failure` and `hook permission-request`), `<stem>.status.json` what
//! the status line said ([`StatusRecord`], written by `autoctl statusline`), with `<stem>` from
//! the session's [`Key`].
//!
//! Writes are atomic (rename) but not fsynced: the records are rewritten on every hook call,
//! and losing the last one to a power cut costs one event, while two fsyncs would cost
//! milliseconds of every tool call. An update takes a flock on the records directory, so hooks that
//! fire at once (parallel tool calls) never lose each other's events. A record that does not
//! parse is replaced by a fresh one (with a warning): a hook must never get stuck on bad state.
//!
//! Writers: [`Store::record`] (one call: parse nothing, apply the event, write). Readers:
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

    pub fn hook_path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.json", key.stem()))
    }

    pub fn status_path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.status.json", key.stem()))
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

    /// Read-modify-write the hook record under `key`, under its lock.
    pub fn update(
        &self,
        key: &Key,
        warnings: &mut Vec<String>,
        change: impl FnOnce(Option<Record>) -> Transition,
    ) -> Result<Transition> {
        self.ensure_dir()?;
        let _lock = self.lock()?;
        let path = self.hook_path(key);
        let previous = match read_json::<Record>(&path) {
            Ok(previous) => previous,
            Err(problem) => {
                warnings.push(format!("{problem}; starting a new record"));
                None
            }
        };
        let transition = change(previous.clone());
        if previous.as_ref() != Some(&transition.record) {
            write_json(&path, &transition.record)?;
        }
        Ok(transition)
    }

    /// The hook record under `key`, if any.
    pub fn read(&self, key: &Key) -> Result<Option<Record>, String> {
        read_json(&self.hook_path(key))
    }

    /// The status-line record under `key`, if any.
    pub fn read_status(&self, key: &Key) -> Result<Option<StatusRecord>, String> {
        read_json(&self.status_path(key))
    }

    /// Write a status-line record (the caller decided it changed).
    pub fn write_status(&self, key: &Key, record: &StatusRecord) -> Result<()> {
        self.ensure_dir()?;
        write_json(&self.status_path(key), record)
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
                status: read_json(&self.dir.join(format!("{stem}.status.json")))
                    .ok()
                    .flatten(),
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
        let mut records = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".json") else {
                continue;
            };
            if stem.ends_with(".status") || stem.starts_with('.') {
                continue;
            }
            if let Ok(Some(record)) = read_json::<Record>(&entry.path()) {
                records.push((stem.to_string(), record));
            }
        }
        records.sort_by(|a, b| a.0.cmp(&b.0));
        records
    }

    /// Remove records (and their status and lock files) untouched for [`PRUNE_AFTER`].
    /// Best effort: a file another hook rewrote meanwhile is simply younger next time.
    pub fn prune(&self, now: std::time::SystemTime) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|modified| now.duration_since(modified).ok())
                .is_some_and(|age| age > PRUNE_AFTER);
            if old && entry.file_type().is_ok_and(|t| t.is_file()) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// Read a record: `Ok(None)` when there is none, `Err` (one line) when it is unreadable.
fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, String> {
    let bytes = match fsx::read_bounded(path, RECORD_LIMIT) {
        Ok(Bounded::Complete(bytes)) => bytes,
        Ok(Bounded::TooLarge { limit }) => {
            return Err(format!(
                "{} is larger than {}: not a record",
                path.display(),
                fsx::human_size(limit)
            ));
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|err| format!("{} is not a valid record: {err}", path.display()))
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
        let first = fs::metadata(store.hook_path(&key))
            .unwrap()
            .modified()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        store.record(&key, &p, None, at(0), &mut w).unwrap();
        let second = fs::metadata(store.hook_path(&key))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(first, second);
    }
}
