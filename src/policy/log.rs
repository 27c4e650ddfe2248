//! The decision log: every decision a door makes (the hook, a supervisor reading a screen)
//! appended as one JSON line to `$AUTOCTL_STATE_DIR/policy/decisions.jsonl` — time, session or
//! run, door, tool, a one-line summary of the input (the command, path, URL or query; never
//! a file's content), decision and rule. `autoctl policy log` prints it.
//!
//! Bounded: past [`LOG_LIMIT`] bytes the file is renamed to `decisions.jsonl.1` (replacing
//! the older one), so the log never holds more than twice the limit. Every line is whole:
//! writers take turns under an advisory lock on the log file itself (`flock(2)`), so a line is
//! never interleaved with another, and a line that a writer killed mid-`write(2)` left
//! unfinished (a kill can cut a write between two pages) is cut off by the next writer before
//! it appends; readers take only lines that end in a newline (a line being written is not
//! one yet). The writer that finds the log past the limit renames it, still under the lock. A
//! symlink planted at the log is refused, never written through. Logging is best effort: a
//! hook never fails because its log could not be written.

use std::fs::{self, OpenOptions};
use std::io::{self, BufRead, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Size at which the log is rotated.
pub const LOG_LIMIT: u64 = 1024 * 1024;
/// Longest line written (a summary is cut to fit).
pub const LINE_LIMIT: usize = 4000;

/// One decision as logged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// RFC 3339.
    pub time: String,
    /// The Claude Code session (hook door).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The supervised run (screen door).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// `hook` or `screen`.
    pub door: String,
    /// The hook event (hook door): `PermissionRequest`, `PreToolUse`, `PermissionDenied`
    /// (the agent denied a call itself: its auto-mode classifier or a rule of its own), or
    /// `Reviewer` (the optional reviewer's answer about a PermissionRequest, logged before
    /// that request's own entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The agent's permission mode when the hook ran (`default`, `auto`,
    /// `bypassPermissions`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    pub tool: String,
    /// A one-line summary of the input.
    pub input: String,
    /// `allow`, `deny`, `ask` (PreToolUse: the agent's prompt is shown in every mode),
    /// `no-decision`; a Reviewer entry's `allow`, `ask` or `no-answer`.
    pub decision: String,
    pub rule: String,
    /// Why, in one line (a PermissionDenied's reason, a floor's ask or deny).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The log's directory under the state directory.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("policy")
}

/// The current log file.
pub fn path(state_dir: &Path) -> PathBuf {
    dir(state_dir).join("decisions.jsonl")
}

fn rotated(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".1");
    PathBuf::from(name)
}

/// Append one entry (creating the directory), rotating past the limit.
pub fn append(state_dir: &Path, entry: &Entry) -> Result<()> {
    let dir = dir(state_dir);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let path = path(state_dir);
    let line = line_of(entry)?;
    let mut file = open_locked(&path)?;
    let len =
        cut_unfinished_line(&file).with_context(|| format!("cannot repair {}", path.display()))?;
    if crate::failpoint::is_armed("decision-log-half-written") {
        let _ = file.write_all(&line.as_bytes()[..line.len() / 2]);
        crate::failpoint::hit("decision-log-half-written");
    }
    file.write_all(line.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    if len + line.len() as u64 > LOG_LIMIT {
        // Still under the lock: no writer is half-way through a line of the file renamed.
        fs::rename(&path, rotated(&path))
            .with_context(|| format!("cannot rotate {}", path.display()))?;
    }
    Ok(())
}

/// Open the log for appending and take its lock (released when the file is closed, by a
/// kill too). A writer that waited while another rotated the log holds the renamed file: it
/// opens the new one instead, so no entry goes into a file that is already rotated away.
fn open_locked(path: &Path) -> Result<fs::File> {
    use std::os::unix::fs::MetadataExt;
    loop {
        // Read too: the writer looks at the log's last line before it appends.
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let held = file.metadata()?;
        if !held.file_type().is_file() {
            anyhow::bail!("{} is not a regular file", path.display());
        }
        file.lock()
            .with_context(|| format!("cannot lock {}", path.display()))?;
        match fs::symlink_metadata(path) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => return Ok(file),
            Ok(_) => continue,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(err).with_context(|| format!("cannot open {}", path.display())),
        }
    }
}

/// The entry as one JSON line of at most [`LINE_LIMIT`] bytes and its newline: a long input
/// summary is cut first, then any other long field.
fn line_of(entry: &Entry) -> Result<String> {
    let mut line = serde_json::to_string(entry)?;
    if line.len() > LINE_LIMIT {
        let mut cut = entry.clone();
        let excess = line.len() - LINE_LIMIT + 3;
        let keep = cut.input.len().saturating_sub(excess);
        cut.input = format!("{}…", super::prefix(&cut.input, keep));
        line = serde_json::to_string(&cut)?;
        if line.len() > LINE_LIMIT {
            // The other fields are names and ids; one this long is not worth its room.
            let short = |text: &mut String| {
                if text.len() > LINE_LIMIT / 16 {
                    *text = format!("{}…", super::prefix(text, LINE_LIMIT / 16));
                }
            };
            for text in [
                &mut cut.time,
                &mut cut.door,
                &mut cut.tool,
                &mut cut.input,
                &mut cut.decision,
                &mut cut.rule,
            ] {
                short(text);
            }
            for text in [&mut cut.session, &mut cut.run].into_iter().flatten() {
                short(text);
            }
            line = serde_json::to_string(&cut)?;
        }
    }
    line.push('\n');
    Ok(line)
}

/// How far back an unfinished line is looked for: longer than any line ever written.
const TAIL: u64 = 4 * LINE_LIMIT as u64;

/// Under the log's lock: cut off a last line without its newline (a writer was killed in the
/// middle of it; nobody else is writing), so the next line starts on a line of its own.
/// Returns the length of the log after the repair.
fn cut_unfinished_line(file: &fs::File) -> io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    let start = len.saturating_sub(TAIL);
    let mut tail = vec![0; (len - start) as usize];
    file.read_exact_at(&mut tail, start)?;
    if tail.last() == Some(&b'\n') {
        return Ok(len);
    }
    match tail.iter().rposition(|&b| b == b'\n') {
        Some(end) => {
            let kept = start + end as u64 + 1;
            file.set_len(kept)?;
            Ok(kept)
        }
        None if start == 0 => {
            file.set_len(0)?;
            Ok(0)
        }
        // Not a log autoctl wrote (no line ends in the last few lines' worth): leave it, and
        // start on a line of our own.
        None => {
            (&*file).write_all(b"\n")?;
            Ok(len + 1)
        }
    }
}

/// Every logged entry, oldest first (the rotated file, then the current one); lines that do
/// not parse are skipped and counted.
pub fn read(state_dir: &Path) -> Result<(Vec<Entry>, usize)> {
    let path = path(state_dir);
    let mut entries = Vec::new();
    let mut bad = 0;
    for file in [rotated(&path), path] {
        let handle = match crate::fsx::open_regular(&file) {
            Ok(handle) => handle,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", file.display())),
        };
        let mut reader = io::BufReader::new(handle);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .with_context(|| format!("cannot read {}", file.display()))?;
            // The end, or a line still being written (no newline yet): not an entry yet.
            if read == 0 || line.last() != Some(&b'\n') {
                break;
            }
            if line.trim_ascii().is_empty() {
                continue;
            }
            match serde_json::from_slice::<Entry>(&line) {
                Ok(entry) => entries.push(entry),
                Err(_) => bad += 1,
            }
        }
    }
    Ok((entries, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize) -> Entry {
        Entry {
            time: "2026-11-26T10:00:00Z".to_string(),
            session: Some("s".to_string()),
            run: None,
            door: "hook".to_string(),
            tool: "Bash".to_string(),
            input: format!("cargo test {n} {}", "x".repeat(200)),
            decision: "allow".to_string(),
            rule: "runner".to_string(),
            ..Entry::default()
        }
    }

    #[test]
    fn the_log_rotates_and_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..12_000 {
            append(dir.path(), &entry(n)).unwrap();
        }
        let current = fs::metadata(path(dir.path())).unwrap().len();
        let old = fs::metadata(rotated(&path(dir.path()))).unwrap().len();
        assert!(current <= LOG_LIMIT + LINE_LIMIT as u64 && old <= LOG_LIMIT + LINE_LIMIT as u64);
        let (entries, bad) = read(dir.path()).unwrap();
        assert_eq!(bad, 0);
        assert!(entries.len() > 4000);
        assert!(
            entries
                .last()
                .unwrap()
                .input
                .starts_with("cargo test 11999 ")
        );
    }

    #[test]
    fn long_inputs_are_cut_and_symlinks_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut long = entry(0);
        long.input = "é".repeat(10_000);
        append(dir.path(), &long).unwrap();
        let (entries, _) = read(dir.path()).unwrap();
        assert!(entries[0].input.len() < LINE_LIMIT);
        let other = tempfile::tempdir().unwrap();
        fs::create_dir_all(super::dir(other.path())).unwrap();
        let target = other.path().join("target");
        fs::write(&target, "").unwrap();
        std::os::unix::fs::symlink(&target, path(other.path())).unwrap();
        assert!(append(other.path(), &entry(1)).is_err());
        assert_eq!(fs::read(&target).unwrap(), b"");
    }

    #[test]
    fn a_line_a_killed_writer_left_unfinished_is_cut_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        append(dir.path(), &entry(1)).unwrap();
        let log = path(dir.path());
        let mut file = OpenOptions::new().append(true).open(&log).unwrap();
        file.write_all(br#"{"time":"2026-11-26T10:00:00Z","door":"ho"#)
            .unwrap();
        // A reader meanwhile takes only the whole line.
        assert_eq!(read(dir.path()).unwrap(), (vec![entry(1)], 0));
        append(dir.path(), &entry(2)).unwrap();
        assert_eq!(read(dir.path()).unwrap(), (vec![entry(1), entry(2)], 0));
        let text = fs::read_to_string(&log).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        // A log that is only an unfinished line.
        fs::write(&log, br#"{"time":"#).unwrap();
        append(dir.path(), &entry(3)).unwrap();
        assert_eq!(read(dir.path()).unwrap(), (vec![entry(3)], 0));
    }

    #[test]
    fn concurrent_writers_never_tear_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let long = |n: usize| {
            let mut e = entry(n);
            e.input = format!("{n} {}", "y".repeat(3000 + n % 900));
            e
        };
        std::thread::scope(|scope| {
            for t in 0..8 {
                let dir = dir.path();
                scope.spawn(move || {
                    for i in 0..100 {
                        append(dir, &long(t * 1000 + i)).unwrap();
                    }
                });
            }
        });
        let (entries, bad) = read(dir.path()).unwrap();
        assert_eq!(bad, 0);
        // Rotation keeps the newest two files' worth; every line in them is whole, and what
        // each writer still has there is its latest entries, none missing in between (a
        // writer that waited through a rotation wrote into the new file, not the old one).
        assert!(entries.len() > 400, "{}", entries.len());
        assert!(entries.iter().all(|e| e.input.len() > 3000));
        for t in 0..8 {
            let mut kept: Vec<usize> = entries
                .iter()
                .map(|e| e.input.split(' ').next().unwrap().parse::<usize>().unwrap())
                .filter(|n| n / 1000 == t)
                .map(|n| n % 1000)
                .collect();
            kept.sort_unstable();
            // A writer that finished early may have all its lines rotated away.
            if let Some(&first) = kept.first() {
                assert_eq!(kept, (first..100).collect::<Vec<_>>(), "writer {t}");
            }
        }
    }

    #[test]
    fn every_line_fits_the_limit_whatever_is_long() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = entry(0);
        e.rule = "r".repeat(10_000);
        e.session = Some("s".repeat(10_000));
        append(dir.path(), &e).unwrap();
        let text = fs::read_to_string(path(dir.path())).unwrap();
        assert!(text.len() <= LINE_LIMIT + 1, "{}", text.len());
        assert_eq!(read(dir.path()).unwrap().0.len(), 1);
    }
}
