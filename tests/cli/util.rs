//! The test support: one hermetic command constructor for every test (after bat's
//! `tests/utils/command.rs`) and the helpers every group shares. The tmux fixture is
//! [`crate::tmuxfix`].
//!
//! A [`Sandbox`] owns a temporary directory that plays HOME, the XDG config, data, cache and
//! state dirs and AUTOCTL_STATE_DIR, and a unique tmux socket name; dropping it kills that
//! tmux server, so no test can touch the user's real config, state or terminal. Every
//! `AUTOCTL_*` variable of the test's own environment is removed.

#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use assert_cmd::Command;
use serde_json::Value;

/// The size of a benchmark run of `bench/faults.sh` (an ignored test): `AUTOCTL_BENCH_NAME`,
/// else `default`.
pub fn bench_rounds(name: &str, default: usize) -> usize {
    std::env::var(format!("AUTOCTL_BENCH_{name}"))
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether the binary under test kills itself at `AUTOCTL_FAILPOINT`: a debug build does; a
/// binary named by `AUTOCTL_TEST_BINARY` is taken to be a release artifact, which has no
/// failpoints, and the crash-injection tests return early (the skip is printed, shown with
/// `--nocapture`) — unless `AUTOCTL_TEST_BINARY_DEBUG=1` says it is a debug build too (an
/// older commit's, to show that a test fails there).
#[allow(clippy::print_stderr)]
pub fn failpoints_armed() -> bool {
    if std::env::var_os("AUTOCTL_TEST_BINARY").is_some_and(|path| !path.is_empty())
        && std::env::var_os("AUTOCTL_TEST_BINARY_DEBUG").is_none_or(|debug| debug != "1")
    {
        eprintln!("skipped: {} is a release build, without failpoints", bin());
        return false;
    }
    true
}

/// The binary under test: the one cargo built for this test run, or the file named by
/// `AUTOCTL_TEST_BINARY`, so the suite can check a release artifact such as the static build
/// (`cargo build-static`) with the same tests. It must be an absolute path to a file named
/// `autoctl`: tests put its directory on the `PATH` of the shells they start.
pub fn bin() -> &'static str {
    static ONCE_BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ONCE_BIN.get_or_init(|| match std::env::var("AUTOCTL_TEST_BINARY") {
        Ok(path) if !path.is_empty() => {
            let named = Path::new(&path);
            assert!(
                named.is_absolute() && named.file_name() == Some("autoctl".as_ref()),
                "AUTOCTL_TEST_BINARY must be an absolute path to a file named autoctl: {path}"
            );
            path
        }
        _ => env!("CARGO_BIN_EXE_autoctl").to_string(),
    })
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

pub struct Sandbox {
    dir: tempfile::TempDir,
    /// The tmux `-L` socket name private to this sandbox.
    pub socket: String,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("autoctl-test-")
            .tempdir()
            .expect("temp dir");
        // World-traversable so tests that drop privileges (see `unprivileged`) can reach it.
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        for sub in ["home", "state", "tmux"] {
            fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let socket = format!(
            "autoctl-test-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        Sandbox { dir, socket }
    }

    /// The `TMUX_TMPDIR` of this sandbox's tmux server: its socket lives (and goes) with the
    /// sandbox, never in the user's own tmux directory.
    pub fn tmux_tmpdir(&self) -> PathBuf {
        self.path("tmux")
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Create (and return) a task module directory.
    pub fn module(&self, name: &str) -> PathBuf {
        let dir = self.path(name);
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&path, contents).unwrap();
        path
    }

    /// `autoctl` with a hermetic environment.
    pub fn cmd(&self) -> Command {
        Command::from_std(self.std_cmd())
    }

    /// `autoctl` as a std command (for spawning many at once): no inherited `AUTOCTL_*` or
    /// `NO_COLOR`, a private HOME, state dir and tmux socket, the sandbox as working dir.
    pub fn std_cmd(&self) -> StdCommand {
        self.hermetic(StdCommand::new(bin()))
    }

    /// `sh` with the same hermetic environment (for a test that runs autoctl the way a hook
    /// runner or a script does: through a shell).
    pub fn shell(&self) -> StdCommand {
        self.program("sh")
    }

    /// Any program (an example script that runs autoctl) with the same hermetic environment.
    pub fn program(&self, program: impl AsRef<std::ffi::OsStr>) -> StdCommand {
        self.hermetic(StdCommand::new(program))
    }

    /// `autoctl` with its address space capped at `megabytes` (`ulimit -v`): a test of a huge
    /// input fails if the command reads it whole, instead of only taking longer.
    pub fn memory_limited(&self, megabytes: u64) -> StdCommand {
        let mut cmd = StdCommand::new("bash");
        cmd.arg("-c")
            .arg(format!(
                "ulimit -v {}; exec \"$0\" \"$@\"",
                megabytes * 1024
            ))
            .arg(bin());
        self.hermetic(cmd)
    }

    fn hermetic(&self, mut cmd: StdCommand) -> StdCommand {
        self.private_env(&mut cmd);
        cmd.env("AUTOCTL_TMUX_SOCKET", &self.socket)
            .current_dir(self.root());
        cmd
    }

    /// The environment every command gets: nothing of the test's own `AUTOCTL_*`, tmux pane
    /// or Claude Code project (the hooks key their records by them), no `NO_COLOR`, and the
    /// sandbox's HOME, XDG dirs and state dir.
    fn private_env(&self, cmd: &mut StdCommand) {
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("AUTOCTL_") {
                cmd.env_remove(key);
            }
        }
        for key in ["TMUX", "TMUX_PANE", "CLAUDE_PROJECT_DIR", "NO_COLOR"] {
            cmd.env_remove(key);
        }
        cmd.env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("home/.config"))
            .env("XDG_DATA_HOME", self.path("home/.local/share"))
            .env("XDG_CACHE_HOME", self.path("home/.cache"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("AUTOCTL_STATE_DIR", self.path("state"))
            .env("TMUX_TMPDIR", self.tmux_tmpdir());
    }

    /// `autoctl` run as an unprivileged user when the tests run as root, so permission checks
    /// are real (root reads a mode-000 file and writes into a read-only directory).
    pub fn unprivileged(&self, args: &[&str]) -> Output {
        self.unprivileged_cmd()
            .args(args)
            .output()
            .expect("run autoctl")
    }

    /// The command behind [`Sandbox::unprivileged`], for tests that add their own environment.
    pub fn unprivileged_cmd(&self) -> StdCommand {
        let mut cmd = if is_root() {
            as_user(NOBODY, bin())
        } else {
            StdCommand::new(bin())
        };
        self.private_env(&mut cmd);
        cmd.current_dir("/");
        cmd
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // Kill this sandbox's private tmux server, if a test started one. Errors mean there
        // was none.
        let _ = StdCommand::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .env("TMUX_TMPDIR", self.tmux_tmpdir())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        remove_when_unused(self.root());
    }
}

/// The processes (other than this one) still using `root`: those whose environment names a
/// path under it (HOME, PATH, TMUX_TMPDIR: a pane's shell, a hook, a loop a test left running)
/// or whose working directory is under it. Processes of other users are seen when the tests
/// run as root (CI), which is when sections and commands run as nobody.
fn processes_under(root: &Path) -> Vec<u32> {
    use std::os::unix::ffi::OsStrExt;
    let mut marker = root.as_os_str().as_bytes().to_vec();
    marker.push(b'/');
    let finder = memchr::memmem::Finder::new(&marker);
    let me = std::process::id();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let environ = fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            finder.find(&environ).is_some()
                || fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(root))
        })
        .collect()
}

/// Remove a test's temporary directory `root` whole, once nothing uses it. Killing a tmux
/// server returns before its panes' shells have exited, and an interactive bash writes
/// `~/.bash_history` as it exits on the hang-up: a removal racing it fails on a directory
/// that is not empty, and `TempDir` ignores the error, which left 109 `autoctl-readme-*` and
/// 24 `autoctl-test-*` directories in /tmp after a day of green runs. So: wait for the
/// sandbox's processes to end (2 s for the hang-up, then SIGKILL; 10 s in all), then remove.
/// A directory that still cannot be removed is said on stderr (a `Drop` must not panic).
#[allow(clippy::print_stderr)]
pub fn remove_when_unused(root: &Path) {
    let started = std::time::Instant::now();
    let mut killed = false;
    loop {
        let left = processes_under(root);
        if left.is_empty() {
            break;
        }
        let waited = started.elapsed();
        if waited > std::time::Duration::from_secs(10) {
            eprintln!(
                "test cleanup: processes {left:?} still use {}",
                root.display()
            );
            break;
        }
        if !killed && waited > std::time::Duration::from_secs(2) {
            killed = true;
            let _ = StdCommand::new("kill")
                .arg("-KILL")
                .args(left.iter().map(u32::to_string))
                .stderr(std::process::Stdio::null())
                .status();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    match fs::remove_dir_all(root) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => eprintln!("test cleanup: {} is left: {err}", root.display()),
    }
}

/// Every name in `dir`, hidden ones included, sorted: what a command left behind.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The unprivileged user (nobody) that commands whose test is about permissions run as when
/// the tests run as root.
pub const NOBODY: u32 = 65534;

/// `program` run as `uid` (user and group) through setpriv; the caller is root.
pub fn as_user(uid: u32, program: impl AsRef<std::ffi::OsStr>) -> StdCommand {
    share_libfaketime();
    let mut cmd = StdCommand::new("setpriv");
    cmd.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={uid}"))
        .args(["--clear-groups", "--"])
        .arg(program);
    cmd
}

/// Lets every user open the semaphore and shared memory of `.ci/run`'s year-ahead pass.
///
/// There libfaketime is preloaded into every child, and each child inherits `FAKETIME_SHARED`,
/// the names of the semaphore and shared memory root's `faketime` made (mode 0600). Debian's
/// libfaketime (0.9.10) cannot be told to do without them: a process of another user fails to
/// open them, makes its own named by its PID instead, and exits 1 ("ft_shm_init(), sem_open
/// failed") when one of that name is left from a killed root process, as /dev/shm collects.
/// Opened to all, root's pair serves every process of the run, whoever it runs as.
fn share_libfaketime() {
    static SHARED: std::sync::Once = std::sync::Once::new();
    SHARED.call_once(|| {
        let Ok(names) = std::env::var("FAKETIME_SHARED") else {
            return;
        };
        let mut names = names.split_whitespace();
        let (Some(sem), Some(shm)) = (names.next(), names.next()) else {
            return;
        };
        for file in [
            format!("/dev/shm/sem.{}", sem.trim_start_matches('/')),
            format!("/dev/shm/{}", shm.trim_start_matches('/')),
        ] {
            // Absent when the pair went stale: each process then makes its own, as before.
            let _ = fs::set_permissions(file, fs::Permissions::from_mode(0o666));
        }
    });
}

pub fn is_root() -> bool {
    // The effective uid is the second field of /proc/self/status's Uid line.
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// The single stderr line of a failed command (asserting there is exactly one).
pub fn one_stderr_line(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one stderr line, got: {stderr:?}");
    assert!(
        lines[0].starts_with("autoctl: "),
        "unprefixed error: {:?}",
        lines[0]
    );
    lines[0].to_string()
}

/// Parse stdout as JSON Lines.
pub fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8(output.stdout.clone())
        .expect("stdout is UTF-8")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}")))
        .collect()
}

/// The records in a hook records directory (`<state>/hooks`) as autoctl reads them
/// (src/hook/store.rs): per record, the highest generation (`seq`) among its snapshot
/// (`<stem>.json`) and its journal's complete lines (`<stem>.log`). `status` picks the status
/// line's records (`<stem>.status.json`, `<stem>.status.log`) instead of the hooks'. Sorted
/// by file stem.
pub fn hook_records(dir: &Path, status: bool) -> Vec<Value> {
    let ext = if status { ".status" } else { "" };
    let mut stems: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| !name.starts_with('.'))
                .filter(|name| status || !name.contains(".status."))
                .filter_map(|name| {
                    let name = name.strip_suffix(".json").or(name.strip_suffix(".log"))?;
                    name.strip_suffix(ext)
                        .filter(|stem| status || !stem.ends_with(".status"))
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    stems.sort();
    stems.dedup();
    stems
        .iter()
        .map(|stem| {
            let mut generations: Vec<Value> = Vec::new();
            if let Ok(bytes) = fs::read(dir.join(format!("{stem}{ext}.json"))) {
                generations.push(serde_json::from_slice(&bytes).unwrap());
            }
            if let Ok(text) = fs::read_to_string(dir.join(format!("{stem}{ext}.log"))) {
                generations.extend(
                    text.split_inclusive('\n')
                        .filter(|line| line.ends_with('\n'))
                        .filter_map(|line| serde_json::from_str::<Value>(line).ok()),
                );
            }
            generations
                .into_iter()
                .max_by_key(|r| r["seq"].as_u64().unwrap_or(0))
                .unwrap_or_else(|| panic!("no readable record for {stem}"))
        })
        .collect()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Replace RFC 3339 timestamps in a JSON value with a marker, for structural comparisons.
pub fn redact_timestamps(value: &mut Value) {
    match value {
        Value::String(text) if chrono::DateTime::parse_from_rfc3339(text).is_ok() => {
            *text = "[timestamp]".to_string();
        }
        Value::Array(items) => items.iter_mut().for_each(redact_timestamps),
        Value::Object(map) => map.values_mut().for_each(redact_timestamps),
        _ => {}
    }
}

pub fn fixtures(kind: &str, validity: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind)
        .join(validity);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

/// Run `cmd` with `args`, writing `stdin` to it as a hook's caller does, and collect its
/// output. A command that exits before reading all of stdin is not a failure of the test.
pub fn with_stdin(mut cmd: StdCommand, args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run autoctl");
    let mut input = child.stdin.take().expect("stdin");
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().expect("wait for autoctl")
}
