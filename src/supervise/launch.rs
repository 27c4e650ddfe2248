//! `run start --launch`: the environment Claude Code is started with ([`with_claude_env`]),
//! and the check that the program it will type exists where it will run: on the pane shell's
//! `PATH`, or known to that shell. A typo (`cluade`) or an agent installed
//! only in another user's PATH would otherwise be typed into the pane, fail there, and leave
//! a loop that supervises a shell prompt.
//!
//! The pane's environment and working directory come from `/proc/PID` of the pane's first
//! process (its shell): the `PATH` the shell started with. A name not on it is asked of the
//! shell itself (`SHELL -ic 'command -v NAME'`, with the pane's environment), which knows
//! builtins, functions, aliases and a `PATH` its rc files changed.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::shell;

/// How long the shell may take to answer (an interactive shell reads its rc files).
const SHELL_TIMEOUT: Duration = Duration::from_secs(5);

/// Shells whose `-ic` takes `command -v -- "$1"`.
const POSIX_SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash"];

/// The programs a launch command runs: the first word of each simple command, after
/// `NAME=value` assignments and runners (`env`, `exec`, `command`, `nohup`, ...).
pub fn programs(command: &str) -> Vec<String> {
    shell::commands(command)
        .into_iter()
        .filter_map(|simple| {
            let words: Vec<String> = simple
                .words
                .iter()
                .skip_while(|w| shell::assignment(w).is_some())
                .cloned()
                .collect();
            shell::strip_runners(&words).first().cloned()
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// Claude Code's own retry watchdog (2.1.332: `CLAUDE_CODE_RETRY_WATCHDOG`, a boolean):
/// retries 429 and 529 for as long as they last (its screen counts the attempts, `attempt
/// 4/300`) and waits out a known reset, where it would otherwise give up after ten tries.
pub const RETRY_WATCHDOG: &str = "CLAUDE_CODE_RETRY_WATCHDOG";
/// Claude Code's auto-compaction threshold (2.1.332: `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`, a
/// percentage of the context window, honoured when 0 < value ≤ 100): it compacts by itself,
/// mid-turn if need be, where `run tick --compact-at` can only type `/compact` at an idle
/// prompt.
pub const AUTOCOMPACT_PCT: &str = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE";

/// Whether Claude Code honours `value` of [`AUTOCOMPACT_PCT`] (it reads it with
/// `parseFloat` and takes 0 < value ≤ 100), as the percentage.
pub fn autocompact_pct(value: &str) -> Option<f64> {
    let number: f64 = value.trim().parse().ok()?;
    (number > 0.0 && number <= 100.0).then_some(number)
}

/// The launch command with Claude Code's own features switched on (issue 28: use them
/// instead of imitating them): `CLAUDE_CODE_RETRY_WATCHDOG=1`, and
/// `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=<compact_at>` unless `compact_at` is `None`, as
/// assignments before the command. Only when the line's first program is `claude` (the
/// assignments reach that command alone, in sh, bash, zsh and fish); a variable the template
/// already assigns is the template's. Anything else is returned as it is.
pub fn with_claude_env(command: &str, compact_at: Option<u8>) -> String {
    let Some(first) = shell::commands(command).into_iter().next() else {
        return command.to_string();
    };
    let assigned: Vec<String> = first
        .words
        .iter()
        .map_while(|w| shell::assignment(w).map(|(name, _)| name))
        .collect();
    let program = programs(command).into_iter().next().unwrap_or_default();
    let is_claude = Path::new(&program)
        .file_name()
        .is_some_and(|n| n == "claude")
        && command
            .trim_start()
            .starts_with(first.words.first().map_or("", String::as_str));
    if !is_claude {
        return command.to_string();
    }
    let mut vars = vec![(RETRY_WATCHDOG, "1".to_string())];
    if let Some(at) = compact_at.filter(|at| *at > 0) {
        vars.push((AUTOCOMPACT_PCT, at.min(100).to_string()));
    }
    let prefix: String = vars
        .into_iter()
        .filter(|(name, _)| !assigned.iter().any(|a| a == name))
        .map(|(name, value)| format!("{name}={value} "))
        .collect();
    format!("{prefix}{}", command.trim_start())
}

/// The environment and directory of a running process (`/proc/PID/environ`, `/cwd`).
#[derive(Debug, Clone, Default)]
pub struct ProcessEnv {
    pub vars: Vec<(OsString, OsString)>,
    pub cwd: Option<PathBuf>,
    /// The process's own program (`/proc/PID/exe`): the pane's shell.
    pub exe: Option<PathBuf>,
}

impl ProcessEnv {
    pub fn of(pid: u32) -> Option<ProcessEnv> {
        let dir = PathBuf::from(format!("/proc/{pid}"));
        let environ = std::fs::read(dir.join("environ")).ok()?;
        let vars = environ
            .split(|b| *b == 0)
            .filter(|entry| !entry.is_empty())
            .filter_map(|entry| {
                let at = entry.iter().position(|b| *b == b'=')?;
                Some((
                    OsString::from_vec(entry[..at].to_vec()),
                    OsString::from_vec(entry[at + 1..].to_vec()),
                ))
            })
            .collect();
        Some(ProcessEnv {
            vars,
            cwd: std::fs::read_link(dir.join("cwd")).ok(),
            exe: std::fs::read_link(dir.join("exe")).ok(),
        })
    }

    fn var(&self, name: &str) -> Option<&OsString> {
        self.vars.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

fn executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Find `program` as the shell would on `path` (a name with a `/` is a path, relative to
/// `cwd`).
pub fn on_path(program: &str, path: Option<&OsString>, cwd: Option<&Path>) -> bool {
    let base = cwd.unwrap_or(Path::new("."));
    if program.contains('/') {
        return executable(&base.join(program));
    }
    let Some(path) = path else {
        return false;
    };
    std::env::split_paths(path).any(|dir| {
        let dir = if dir.as_os_str().is_empty() {
            base.to_path_buf()
        } else {
            base.join(dir)
        };
        executable(&dir.join(program))
    })
}

/// Ask the pane's shell (`-ic`, so rc files, functions and aliases count) whether it knows
/// `program`. `None` when it cannot be asked (not a POSIX shell, no answer in time).
fn shell_knows(env: &ProcessEnv, program: &str) -> Option<bool> {
    let shell = env
        .exe
        .clone()
        .or_else(|| env.var("SHELL").map(PathBuf::from))?;
    let name = shell.file_name()?.to_str()?.to_string();
    if !POSIX_SHELLS.contains(&name.as_str()) {
        return None;
    }
    let mut cmd = Command::new(&shell);
    cmd.args([
        "-ic",
        "command -v -- \"$1\" >/dev/null 2>&1",
        "autoctl-check",
        program,
    ])
    .env_clear()
    .envs(env.vars.iter().map(|(k, v)| (k, v)))
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    if let Some(cwd) = &env.cwd {
        cmd.current_dir(cwd);
    }
    let mut child = cmd.spawn().ok()?;
    let deadline = Instant::now() + SHELL_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status.success()),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// A program of `--launch` the pane could not start (the one line `run start` refuses with).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unlaunchable {
    #[error(
        "--launch: {0:?} is not an executable file (in the pane's directory); nothing typed or registered"
    )]
    NotExecutable(String),
    #[error(
        "--launch: {program:?} is not on the pane's PATH ({searched}) nor known to its shell; nothing typed or registered (install it, or give its full path)"
    )]
    NotFound { program: String, searched: String },
}

/// Check every program of `command` for the pane whose first process is `pane_pid`.
/// `Err` is the one line `run start` refuses with.
pub fn check(pane_pid: u32, command: &str) -> Result<(), Unlaunchable> {
    let env = ProcessEnv::of(pane_pid).unwrap_or_else(|| ProcessEnv {
        vars: std::env::vars_os().collect(),
        cwd: None,
        exe: None,
    });
    let path = env.var("PATH");
    for program in programs(command) {
        if on_path(&program, path, env.cwd.as_deref()) {
            continue;
        }
        if !program.contains('/') && shell_knows(&env, &program) == Some(true) {
            continue;
        }
        let searched = path
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| "no PATH".to_string());
        return Err(if program.contains('/') {
            Unlaunchable::NotExecutable(program)
        } else {
            Unlaunchable::NotFound { program, searched }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_is_launched_with_its_own_features_on() {
        assert_eq!(
            with_claude_env(r#"claude "/ai-cli-task auto TASK/x""#, Some(70)),
            r#"CLAUDE_CODE_RETRY_WATCHDOG=1 CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=70 claude "/ai-cli-task auto TASK/x""#
        );
        assert_eq!(
            with_claude_env("/usr/bin/claude --permission-mode default", None),
            "CLAUDE_CODE_RETRY_WATCHDOG=1 /usr/bin/claude --permission-mode default"
        );
        // The template's own choice wins; 0 is no compaction threshold.
        assert_eq!(
            with_claude_env("CLAUDE_CODE_RETRY_WATCHDOG=0 claude", Some(0)),
            "CLAUDE_CODE_RETRY_WATCHDOG=0 claude"
        );
        assert_eq!(
            with_claude_env("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50 claude", Some(70)),
            "CLAUDE_CODE_RETRY_WATCHDOG=1 CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50 claude"
        );
        // Not Claude Code, or not the line's first command: left alone.
        for other in [
            "codex",
            "cd proj && claude",
            "my-claude-wrapper",
            "",
            "(claude)",
        ] {
            assert_eq!(with_claude_env(other, Some(70)), other);
        }
        assert_eq!(autocompact_pct("70"), Some(70.0));
        assert_eq!(autocompact_pct(" 12.5"), Some(12.5));
        for ignored in ["0", "101", "-5", "x", ""] {
            assert_eq!(autocompact_pct(ignored), None, "{ignored}");
        }
    }

    #[test]
    fn the_programs_of_a_launch_line() {
        assert_eq!(programs(r#"claude "/ai-cli-task auto /t""#), ["claude"]);
        assert_eq!(
            programs("FOO=1 env BAR=2 nohup ./agent.sh --go && exec codex"),
            ["./agent.sh", "codex"]
        );
        assert_eq!(programs("cd /x; claude"), ["cd", "claude"]);
    }

    #[test]
    fn found_on_path_or_as_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let agent = bin.join("agent");
        std::fs::write(&agent, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(bin.join("plain"), "").unwrap();
        let path = OsString::from(format!("/nonexistent:{}", bin.display()));
        assert!(on_path("agent", Some(&path), None));
        assert!(!on_path("plain", Some(&path), None), "not executable");
        assert!(!on_path("missing", Some(&path), None));
        assert!(on_path("bin/agent", None, Some(dir.path())));
        assert!(!on_path("./agent", None, Some(dir.path())));
    }

    #[test]
    fn this_process_can_be_read() {
        if Path::new("/proc/self/environ").exists() {
            let env = ProcessEnv::of(std::process::id()).unwrap();
            assert!(env.cwd.is_some());
            assert_eq!(check(std::process::id(), "sh -c true"), Ok(()));
            let err = check(std::process::id(), "no-such-agent-xyz --go").unwrap_err();
            assert!(
                matches!(&err, Unlaunchable::NotFound { program, .. } if program == "no-such-agent-xyz"),
                "{err}"
            );
        }
    }
}
