//! What a task dir looks like to the watcher without reading it: the identity of the dir and
//! a stamp (inode, size, modification and change times) of `.auto-signal` and `.auto-stop`.
//!
//! The watcher compares stamps to tell news from echoes: notifications also fire for the
//! watcher's own reads and writes (a tick removes the signal it dispatched, writes a stop
//! file) and for writes that change nothing it has not already ticked on. A tick happens only
//! when the stamps differ from those the last tick left behind, or when the difference is
//! not one the tick's own effects explain (see [`explained`]).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::SystemTime;

use crate::protocol::{signal, stop};
use crate::supervise::tick::{Did, Effect};

/// The identity of a directory: a dir deleted and recreated, or replaced by a rename, gets a
/// new one (and needs a new watch: inotify watches an inode, not a name). The inode number
/// alone is not enough: ext4 hands a freed inode number straight to the next new dir, so the
/// birth time (statx, where the file system records it) tells the two apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DirId {
    pub dev: u64,
    pub ino: u64,
    pub born: Option<SystemTime>,
}

/// One file's stamp. A rename-write gives a new inode; an in-place rewrite moves the change
/// time (nanoseconds), even when the size and modification time are forged back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

/// The stamps of a task dir; `dir: None` when it does not exist (or cannot be read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamps {
    pub dir: Option<DirId>,
    pub signal: Option<FileStamp>,
    pub stop: Option<FileStamp>,
}

impl Stamps {
    pub fn of(dir: &Path) -> Stamps {
        let meta = match fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => meta,
            _ => {
                return Stamps {
                    dir: None,
                    signal: None,
                    stop: None,
                };
            }
        };
        Stamps {
            dir: Some(DirId {
                dev: meta.dev(),
                ino: meta.ino(),
                born: meta.created().ok(),
            }),
            signal: file(&signal::path_in(dir)),
            stop: file(&stop::path_in(dir)),
        }
    }
}

/// A file's stamp, `None` when it is missing. Not followed: a planted symlink is stamped as
/// itself (the tick refuses or replaces it; the stamp only has to change when it does).
fn file(path: &Path) -> Option<FileStamp> {
    let meta = fs::symlink_metadata(path).ok()?;
    Some(FileStamp {
        ino: meta.ino(),
        size: meta.size(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        ctime: (meta.ctime(), meta.ctime_nsec()),
    })
}

/// Whether a tick's own effects explain every difference between the stamps before it read
/// the files and after it acted. If not, something else wrote during the tick, and the run
/// must be looked at again.
pub fn explained(before: &Stamps, after: &Stamps, did: &[Did]) -> bool {
    let done =
        |wanted: fn(&Effect) -> bool| did.iter().any(|d| d.outcome == "done" && wanted(&d.effect));
    let signal = after.signal == before.signal
        || (after.signal.is_none() && done(|e| matches!(e, Effect::RemoveSignal { .. })));
    let stop = after.stop == before.stop
        || (after.stop.is_some() && done(|e| matches!(e, Effect::WriteStop { .. })))
        || (after.stop.is_none() && done(|e| matches!(e, Effect::RemoveStop)));
    after.dir == before.dir && signal && stop
}

#[cfg(test)]
mod tests {
    use super::*;

    fn did(effect: Effect, outcome: &'static str) -> Did {
        Did {
            effect,
            outcome,
            error: None,
        }
    }

    fn write(dir: &Path, name: &str, text: &str) {
        crate::fsx::atomic_write(&dir.join(name), text.as_bytes()).unwrap();
    }

    #[test]
    fn stamps_see_rename_writes_rewrites_and_removals() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let empty = Stamps::of(dir);
        assert!(empty.dir.is_some());
        assert_eq!((empty.signal, empty.stop), (None, None));
        write(dir, ".auto-signal", "{}");
        let one = Stamps::of(dir);
        assert!(one.signal.is_some());
        write(dir, ".auto-signal", "{}");
        let two = Stamps::of(dir);
        assert_ne!(one, two, "same content, new inode");
        // In place, same size: the change time moves.
        std::thread::sleep(std::time::Duration::from_millis(5));
        fs::write(dir.join(".auto-signal"), "[]").unwrap();
        assert_ne!(two, Stamps::of(dir));
        fs::remove_file(dir.join(".auto-signal")).unwrap();
        assert_eq!(Stamps::of(dir), empty);
        assert_eq!(Stamps::of(&dir.join("missing")).dir, None);
    }

    #[test]
    fn a_dir_recreated_has_a_new_identity_even_with_the_same_inode_number() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("task");
        fs::create_dir(&dir).unwrap();
        let mut last = Stamps::of(&dir).dir.unwrap();
        if last.born.is_none() {
            // No birth time on this file system: the watcher relies on the dir's own
            // delete/move events there (see `Loop::on_message`); nothing to check here.
            return;
        }
        for _ in 0..20 {
            fs::remove_dir(&dir).unwrap();
            fs::create_dir(&dir).unwrap();
            // Often the very same inode number on ext4.
            let id = Stamps::of(&dir).dir.unwrap();
            assert_ne!(id, last);
            last = id;
        }
        let file = tmp.path().join("file");
        fs::write(&file, "x").unwrap();
        assert_eq!(Stamps::of(&file).dir, None, "a file is not a task dir");
    }

    #[test]
    fn only_the_ticks_own_effects_explain_a_change() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(dir, ".auto-signal", "{}");
        let before = Stamps::of(dir);
        let remove = did(
            Effect::RemoveSignal {
                fingerprint: String::new(),
            },
            "done",
        );
        assert!(explained(&before, &before, &[]));
        fs::remove_file(dir.join(".auto-signal")).unwrap();
        let removed = Stamps::of(dir);
        assert!(explained(&before, &removed, std::slice::from_ref(&remove)));
        assert!(
            !explained(&before, &removed, &[]),
            "someone else removed it"
        );
        let failed = did(
            Effect::RemoveSignal {
                fingerprint: String::new(),
            },
            "failed",
        );
        assert!(!explained(&before, &removed, &[failed]));
        // A newer signal written during the tick is news even though the tick removed one.
        write(dir, ".auto-signal", "{}");
        let newer = Stamps::of(dir);
        assert!(!explained(&before, &newer, std::slice::from_ref(&remove)));
        let stop = did(
            Effect::WriteStop {
                reason: "timeout".into(),
                message: None,
            },
            "done",
        );
        write(dir, ".auto-stop", "{}");
        let stopped = Stamps::of(dir);
        assert!(explained(&newer, &stopped, &[stop]));
        assert!(!explained(&newer, &stopped, &[]));
        fs::remove_file(dir.join(".auto-stop")).unwrap();
        assert!(explained(
            &stopped,
            &Stamps::of(dir),
            &[did(Effect::RemoveStop, "done")]
        ));
    }
}
