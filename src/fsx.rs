//! File-system primitives every command shares: bounded reads, atomic writes that never follow
//! a symlink planted at the destination, idempotent removal, and advisory locks.
//!
//! Why rename-based writes: a reader (the agent, cron, a second autoctl) must only ever see a
//! complete old document or a complete new one. The temporary file lives in the destination's
//! directory so the rename stays on one file system; `rename(2)` replaces a symlink at the
//! destination with the new file instead of writing through it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

/// Documents (signals, stop files, tables) are read with this bound unless a command says
/// otherwise: 1 MiB is thousands of times a real signal and small enough to never hurt.
pub const DOCUMENT_LIMIT: u64 = 1024 * 1024;

/// What a bounded read found.
#[derive(Debug)]
pub enum Bounded {
    /// The whole content, no longer than the bound.
    Complete(Vec<u8>),
    /// The content is larger than the bound; only its size (or a lower bound of it) is known.
    TooLarge { limit: u64 },
}

/// Read at most `limit` bytes of `path`; larger content is reported, never read whole.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Bounded> {
    let (file, len) = open_regular_sized(path)?;
    read_bounded_sized(file, limit, len)
}

/// [`read_bounded_from`] for a reader whose size is known (a file's length when it was
/// opened). The buffer is sized from it (plus the byte that tells "larger" from "exactly the
/// limit"), so a small document takes one read and one read of end-of-file instead of a
/// series of reads into a doubling buffer. The read of end-of-file stays: a short read is not
/// proof of the end on every file system, and a file that grew meanwhile is still read whole.
pub fn read_bounded_sized(reader: impl Read, limit: u64, size: u64) -> io::Result<Bounded> {
    read_bounded_into(
        reader,
        limit,
        Vec::with_capacity(size.min(limit) as usize + 1),
    )
}

/// Open a file for reading only if it is a regular file.
///
/// A FIFO planted at `.auto-signal` would otherwise block `open(2)` forever and pile up cron
/// runs; a device such as `/dev/zero` would be read as an endless document. The open is
/// non-blocking (which changes nothing for regular files) and the type is checked on the open
/// descriptor, so there is no window between the check and the read.
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_regular_sized(path).map(|(file, _)| file)
}

/// [`open_regular`], with the size the descriptor has at the open.
fn open_regular_sized(path: &Path) -> io::Result<(File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    let file_type = metadata.file_type();
    if file_type.is_file() {
        Ok((file, metadata.len()))
    } else if file_type.is_dir() {
        Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ))
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, socket or device)",
        ))
    }
}

/// Read at most `limit` bytes from any reader (files, stdin).
pub fn read_bounded_from(reader: impl Read, limit: u64) -> io::Result<Bounded> {
    read_bounded_into(reader, limit, Vec::new())
}

fn read_bounded_into(reader: impl Read, limit: u64, mut bytes: Vec<u8>) -> io::Result<Bounded> {
    reader.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        Ok(Bounded::TooLarge { limit })
    } else {
        Ok(Bounded::Complete(bytes))
    }
}

/// Read a whole document of at most [`DOCUMENT_LIMIT`] bytes: `None` when nothing is at
/// `path`; an error naming the file when it cannot be read or is larger, where `what` says
/// what the file should have been ("a profile", "a retry counter").
pub fn read_document(path: &Path, what: &str) -> Result<Option<Vec<u8>>> {
    match read_bounded(path, DOCUMENT_LIMIT) {
        Ok(Bounded::Complete(bytes)) => Ok(Some(bytes)),
        Ok(Bounded::TooLarge { limit }) => bail!(
            "{}: larger than the {} limit for {what}",
            path.display(),
            human_size(limit)
        ),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Human form of a byte limit for messages ("1 MiB").
pub fn human_size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    const KIB: u64 = 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Write `contents` to `path` atomically: temp file in the same directory, fsync, rename,
/// fsync of the directory. On any failure the old file is untouched and the temp file removed.
pub fn atomic_write(path: &Path, contents: &[u8]) -> Result<()> {
    write_replacing(path, contents, true)
}

/// Like [`atomic_write`] but without the fsyncs: readers still see only the old or the new
/// document (the rename is atomic), but a power failure may lose the update. For heartbeats
/// and counters rewritten on every hook call, whose loss costs one heartbeat, and whose two
/// fsyncs would otherwise dominate the call (milliseconds each on a busy disk).
pub fn atomic_write_volatile(path: &Path, contents: &[u8]) -> Result<()> {
    write_replacing(path, contents, false)
}

/// Append `contents` to `path` with one `write(2)`, creating it (0644 less the umask) if
/// absent, without fsync: for journals whose readers take only complete lines. Anything but a
/// plain file at `path` is refused, never written through: a symlink (`O_NOFOLLOW`), a FIFO
/// or device (opened without blocking, then its type checked on the descriptor), a directory.
pub fn append_volatile(path: &Path, contents: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, socket or device)",
        ));
    }
    // One write, so a reader sees the line whole or not at all once it has its newline.
    let written = file.write(contents)?;
    if written < contents.len() {
        return Err(io::Error::new(io::ErrorKind::WriteZero, "a short write"));
    }
    Ok(())
}

fn write_replacing(path: &Path, contents: &[u8], durable: bool) -> Result<()> {
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .with_context(|| format!("cannot write {}: not a file path", path.display()))?;
    let existing = fs::symlink_metadata(path).ok();
    if existing.as_ref().is_some_and(|meta| meta.is_dir()) {
        bail!("cannot write {}: it is a directory", path.display());
    }
    // A rewrite keeps the mode of the file it replaces (a user's 0600 profile stays private);
    // a new file, or one replacing a planted symlink, gets 0644 (less the umask).
    let mode = existing
        .filter(|meta| meta.file_type().is_file())
        .map_or(0o644, |meta| meta.permissions().mode() & 0o7777);
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(mode))
        .tempfile_in(&dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    // Leftovers are aged against the file system's clock (the time stamp our own temporary
    // file just got), never the wall clock: a process whose clock runs ahead (a skewed host
    // on a network file system, a test under libfaketime) would otherwise see a concurrent
    // writer's fresh temporary file as old and delete it under that writer.
    if let Ok(fs_now) = temp.as_file().metadata().and_then(|meta| meta.modified()) {
        sweep_temp_leftovers(&dir, fs_now);
    }
    temp.write_all(contents)
        .and_then(|()| {
            if durable {
                temp.as_file().sync_all()
            } else {
                Ok(())
            }
        })
        .with_context(|| format!("cannot write {}", path.display()))?;
    crate::failpoint::hit("fsx-before-rename");
    temp.persist(path)
        .map_err(|err| err.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    // The rename is durable only once the directory entry is; a failure here is not worth
    // failing a write that already happened (some file systems refuse to fsync directories).
    if durable && let Ok(dir) = File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// How old a temporary file of an atomic write must be before the next write into its
/// directory removes it as a crash leftover. A write takes milliseconds; a minute is far
/// beyond any live one.
pub const TEMP_LEFTOVER_AGE: Duration = Duration::from_secs(60);

/// Whether `name` is the name [`atomic_write`] gives its temporary files: `.NAME.XXXXXX.tmp`
/// (`..auto-signal.aB3xYz.tmp` for `.auto-signal`), six letters or digits in the middle.
pub fn is_temp_name(name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let Some(stem) = name.strip_suffix(".tmp") else {
        return false;
    };
    let Some((front, random)) = stem.rsplit_once('.') else {
        return false;
    };
    front.len() >= 2
        && front.starts_with('.')
        && random.len() == 6
        && random.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Remove the temporary files interrupted writes left in `dir` (a process killed between
/// writing its temporary file and renaming it) once they are older than
/// [`TEMP_LEFTOVER_AGE`] at `now`, which must be the file system's time (the modification
/// time of a file just created in `dir`), not the wall clock. Best effort, never an error: only
/// regular files with the temporary name are touched, and a failure to list or remove is left
/// for the next write. Returns how many were removed.
pub fn sweep_temp_leftovers(dir: &Path, now: SystemTime) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        if !is_temp_name(&entry.file_name()) {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > TEMP_LEFTOVER_AGE);
        if meta.file_type().is_file() && old && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Remove the lock side files a killed holder left in `dir` (SIGKILL runs no destructor, so
/// [`FileLock`]'s removal never happened): every empty regular file whose name `is_side`
/// accepts and whose flock is free. A free side file is taken and released, which removes it;
/// one held by a live process is left alone. Safe against a process that opened the file
/// and has not locked it yet: [`FileLock::acquire`] re-checks, once locked, that its file is
/// still the one at the path and starts again otherwise. Best effort, never an error.
/// Returns how many were removed.
pub fn sweep_side_locks(dir: &Path, is_side: impl Fn(&str) -> bool) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if !name.ends_with(".lock") || !is_side(name) {
            continue;
        }
        // Not followed: a symlink or a non-empty file is nobody's side file.
        let Ok(meta) = fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.file_type().is_file() || meta.len() != 0 {
            continue;
        }
        if let Ok(Some(lock)) = FileLock::try_acquire(&entry.path()) {
            drop(lock);
            removed += 1;
        }
    }
    removed
}

/// The file system's current time in `dir`: the modification time of an unnamed file created
/// there (`O_TMPFILE`, or created and unlinked at once), so nothing is left behind even by a
/// kill. Ages of files are compared with this, never with the wall clock: the two differ on a
/// network file system whose server's clock is skewed, and under a faked clock.
pub fn file_system_now(dir: &Path) -> io::Result<SystemTime> {
    tempfile::tempfile_in(dir)?.metadata()?.modified()
}

/// Remove `path` if it exists (a symlink is removed, never its target). Returns whether
/// something was removed.
pub fn remove_if_exists(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err).with_context(|| format!("cannot remove {}", path.display())),
    }
}

/// Require `dir` to be an existing directory, with a clear message otherwise.
pub fn require_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => bail!("{}: not a directory", dir.display()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            bail!("{}: no such directory", dir.display())
        }
        Err(err) => Err(err).with_context(|| format!("{}", dir.display())),
    }
}

/// An exclusive advisory lock held for as long as the value lives (flock on a side file, so
/// the locked document itself can still be replaced by rename).
///
/// The side file exists only while the lock is held: it is removed on release, so no
/// `FILE.lock` or `.NAME.guard` is left beside a user's files. Removing a file others may be
/// waiting on is safe because every acquisition re-checks, once it holds the flock, that its
/// file is still the one at the path, and starts again on the new file when it is not.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
    /// The side file, removed on release.
    path: PathBuf,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Removed while still locked (the file closes after this), so a waiter that opened
        // the old file sees it is gone and opens a fresh one. Nobody else unlinks the path
        // while we hold its flock, so this removes our own file.
        let _ = fs::remove_file(&self.path);
    }
}

impl FileLock {
    /// Block until the lock at `path` is ours. The lock file is created if needed (and
    /// removed on release) and never followed when it is a symlink.
    ///
    /// The lock is only returned once the file it is on is still the one at `path`: the
    /// holder before us removed the file on release while we waited on it, and a waiter that
    /// then won the old, unlinked file would hold a lock nobody else can see.
    pub fn acquire(path: &Path) -> Result<FileLock> {
        loop {
            let file = open_lock_file(path)?;
            file.lock()
                .with_context(|| format!("cannot lock {}", path.display()))?;
            if still_linked(&file, path)? {
                return Ok(FileLock {
                    _file: file,
                    path: path.to_path_buf(),
                });
            }
        }
    }

    /// Take the lock only if nobody holds it.
    pub fn try_acquire(path: &Path) -> Result<Option<FileLock>> {
        loop {
            let file = open_lock_file(path)?;
            match file.try_lock() {
                Ok(()) if still_linked(&file, path)? => {
                    return Ok(Some(FileLock {
                        _file: file,
                        path: path.to_path_buf(),
                    }));
                }
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => return Ok(None),
                Err(fs::TryLockError::Error(err)) => {
                    return Err(err).with_context(|| format!("cannot lock {}", path.display()));
                }
            }
        }
    }
}

/// Whether the open `file` is still the file at `path` (not unlinked or replaced).
fn still_linked(file: &File, path: &Path) -> Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let held = file
        .metadata()
        .with_context(|| format!("cannot stat lock {}", path.display()))?;
    match fs::symlink_metadata(path) {
        Ok(now) => Ok(now.dev() == held.dev() && now.ino() == held.ino()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(err).with_context(|| format!("cannot stat lock {}", path.display())),
    }
}

fn open_lock_file(path: &Path) -> Result<File> {
    if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
        bail!("refusing to lock {}: it is a symlink", path.display());
    }
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open lock {}", path.display()))
}

/// Refuse a read-modify-write target that is a symlink. `atomic_write` would replace the link
/// with a private regular file, silently leaving the file it pointed at (often one shared on
/// purpose) stale; following it instead would trust whatever it names. `what` names the file
/// ("state file"), `flag` the option that chose it ("--state").
pub fn refuse_symlink(path: &Path, what: &str, flag: &str) -> Result<()> {
    if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
        bail!(
            "{what} {} is a symlink; refusing to follow or replace it (point {flag} at a regular file)",
            path.display()
        );
    }
    Ok(())
}

/// The side file that locks `path` for a read-modify-write (`FILE.lock` beside it): the
/// document itself is replaced by rename, so the lock cannot live on it.
pub fn side_lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// The directory a path lives in (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A waiter blocked on a side file that its holder unlinks must end up on the new file
    /// at the path, never on the unlinked one (where it would exclude nobody).
    #[test]
    fn a_waiter_on_an_unlinked_side_file_locks_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc.json.lock");
        let first = FileLock::acquire(&path).unwrap();
        let (got, got_rx) = std::sync::mpsc::channel();
        let (release, release_rx) = std::sync::mpsc::channel::<()>();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || {
                let lock = FileLock::acquire(&path).unwrap();
                got.send(()).unwrap();
                release_rx.recv().unwrap();
                drop(lock);
            })
        };
        // Give the waiter time to block on the old file (if it has not, it opens the new one
        // and the test still holds).
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(first); // removes the file the waiter is blocked on
        got_rx.recv().unwrap();
        assert!(
            FileLock::try_acquire(&path).unwrap().is_none(),
            "the waiter holds the lock at the path"
        );
        release.send(()).unwrap();
        waiter.join().unwrap();
        assert!(FileLock::try_acquire(&path).unwrap().is_some());
    }

    /// A side file a killed holder left is swept; a held one, a file of content and a name
    /// not accepted are not.
    #[test]
    fn free_side_files_are_swept_and_held_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let left = dir.path().join("auto-batch-state-a.json.lock");
        fs::write(&left, "").unwrap();
        let held_path = dir.path().join("auto-batch-state-b.json.lock");
        let held = FileLock::acquire(&held_path).unwrap();
        let cargo = dir.path().join("auto-Cargo.lock");
        fs::write(&cargo, "[[package]]").unwrap();
        let other = dir.path().join("other.lock");
        fs::write(&other, "").unwrap();
        let removed = sweep_side_locks(dir.path(), |name| name.starts_with("auto-"));
        assert_eq!(removed, 1);
        assert!(!left.exists());
        assert!(held_path.exists() && cargo.exists() && other.exists());
        drop(held);
        assert!(!held_path.exists());
    }

    #[test]
    fn a_lock_excludes_and_leaves_no_file() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let path = Arc::new(dir.path().join("pane.lock"));
        let inside = Arc::new(AtomicBool::new(false));
        let entered = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (path, inside, entered) = (path.clone(), inside.clone(), entered.clone());
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        let _lock = FileLock::acquire(&path).unwrap();
                        assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
                        entered.fetch_add(1, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.store(false, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(entered.load(Ordering::SeqCst), 160);
        assert!(!path.exists(), "the lock file is removed on release");
        // A symlink planted at the lock's path is refused, not followed.
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &*path).unwrap();
        assert!(FileLock::acquire(&path).is_err());
        assert!(!dir.path().join("elsewhere").exists());
    }

    #[test]
    fn bounded_read_reports_oversize_without_reading_it_all() {
        let data = [b'x'; 100];
        match read_bounded_from(&data[..], 10).unwrap() {
            Bounded::TooLarge { limit } => assert_eq!(limit, 10),
            Bounded::Complete(_) => panic!("should be too large"),
        }
        match read_bounded_from(&data[..], 100).unwrap() {
            Bounded::Complete(bytes) => assert_eq!(bytes.len(), 100),
            Bounded::TooLarge { .. } => panic!("exactly the limit is allowed"),
        }
    }

    #[test]
    fn a_sized_read_is_whole_whatever_the_size_said() {
        let data: Vec<u8> = (0..=255).cycle().take(5000).collect();
        // A reader that returns at most `chunk` bytes per read, like a pipe or a network file.
        struct Chunked<'a>(&'a [u8], usize);
        impl Read for Chunked<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.1).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        // The size the file had at its open: right, smaller (it grew; a /proc file says 0),
        // larger (it shrank), and reads that return the data in small pieces.
        for size in [5000, 0, 1, 4999, 5001, 1 << 20] {
            for chunk in [usize::MAX, 7, 4999] {
                match read_bounded_sized(Chunked(&data, chunk), 1 << 20, size).unwrap() {
                    Bounded::Complete(bytes) => {
                        assert!(bytes == data, "size {size}, chunk {chunk}")
                    }
                    Bounded::TooLarge { .. } => panic!("size {size}: not too large"),
                }
            }
        }
        match read_bounded_sized(&data[..], 4999, 100).unwrap() {
            Bounded::TooLarge { limit } => assert_eq!(limit, 4999),
            Bounded::Complete(_) => panic!("larger than the limit"),
        }
        match read_bounded_sized(&data[..], 5000, 5000).unwrap() {
            Bounded::Complete(bytes) => assert_eq!(bytes.len(), 5000),
            Bounded::TooLarge { .. } => panic!("exactly the limit is allowed"),
        }
    }

    #[test]
    fn atomic_write_replaces_a_planted_symlink_not_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("victim");
        fs::write(&target, "precious").unwrap();
        let link = dir.path().join("doc");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        atomic_write(&link, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "precious");
        assert!(
            !fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&link).unwrap(), "new");
    }

    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let err = read_bounded(&fifo, 10).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(read_bounded(Path::new("/dev/zero"), 10).is_err());
        assert_eq!(
            read_bounded(dir.path(), 10).unwrap_err().kind(),
            io::ErrorKind::IsADirectory
        );
    }

    #[test]
    fn a_rewrite_keeps_the_mode_of_the_file_it_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("profile.md");
        fs::write(&private, "old").unwrap();
        fs::set_permissions(&private, fs::Permissions::from_mode(0o600)).unwrap();
        atomic_write(&private, b"new").unwrap();
        assert_eq!(
            fs::metadata(&private).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let fresh = dir.path().join("fresh");
        atomic_write(&fresh, b"x").unwrap();
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o600,
            0o600
        );
    }

    #[test]
    fn only_old_temp_files_of_atomic_writes_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let names = [
            ("..auto-signal.aB3xYz.tmp", true),
            (".loop-state.json.Q1w2E3.tmp", true),
            ("..auto-signal.aB3xY.tmp", false),
            ("notes.tmp", false),
            (".x.abcdef.tmp.bak", false),
            ("..auto-signal.ab-xyz.tmp", false),
            (".abcdef.tmp", false),
        ];
        for (name, _) in names {
            fs::write(dir.path().join(name), "x").unwrap();
        }
        std::os::unix::fs::symlink("/nonexistent", dir.path().join(".l.abcdef.tmp")).unwrap();
        assert!(!is_temp_name(std::ffi::OsStr::new("x")));
        // Fresh files stay: a live write may own them.
        let now = file_system_now(dir.path()).unwrap();
        assert_eq!(sweep_temp_leftovers(dir.path(), now), 0);
        let later = now + TEMP_LEFTOVER_AGE + Duration::from_secs(1);
        assert_eq!(sweep_temp_leftovers(dir.path(), later), 2);
        for (name, temp) in names {
            assert_eq!(!dir.path().join(name).exists(), temp, "{name}");
        }
        assert!(
            fs::symlink_metadata(dir.path().join(".l.abcdef.tmp")).is_ok(),
            "symlinks are not ours"
        );
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_size(1024 * 1024), "1 MiB");
        assert_eq!(human_size(2048), "2 KiB");
        assert_eq!(human_size(10), "10 bytes");
    }
}
