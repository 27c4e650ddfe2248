//! The one place that runs tmux.
//!
//! Everything goes through [`Terminal`], a small trait the pure cores (classification, stall
//! decisions, readiness) are tested against with fakes; [`Tmux`] implements it with
//! `std::process::Command` and argv — never a shell string — on the socket given by
//! `--tmux-socket` / `AUTOCTL_TMUX_SOCKET` (tmux `-L`).
//!
//! Why one client call for many panes: a tmux client costs a fork, an exec and a socket
//! round trip (a few milliseconds); a heartbeat over fifty panes chains `display-message` and
//! `capture-pane` for every pane with `;` into one invocation, separated by a per-call nonce
//! that pane contents cannot forge. tmux refuses a client command longer than its message
//! limit (16 KiB: "command too long"), so [`Terminal::snapshots`] splits the chain into
//! chunks that fit ([`CHAIN_BYTES`]): one client call per ~50 panes, never one per pane.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

/// How long one tmux client call may take by default (a capture of fifty panes takes
/// milliseconds); `AUTOCTL_TMUX_TIMEOUT` overrides it.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The longest target accepted (tmux targets are short: `session:window.pane`, `%12`).
const TARGET_MAX: usize = 256;

/// Text longer than this is sent through a paste buffer instead of `send-keys -l`, so a long
/// prompt arrives as one paste and does not hit tmux's argument limits.
pub const PASTE_THRESHOLD: usize = 512;

/// The most argument bytes one chained capture sends. tmux packs a client's argv into one
/// message of at most 16 KiB (`MAX_IMSGSIZE`) and answers "command too long" past it; the
/// margin covers the message header and the client's environment-free framing.
pub const CHAIN_BYTES: usize = 12 * 1024;

/// The tmux user option that remembers the screen autoctl last answered in a pane (the
/// normalized hash), so two supervisors never answer the same screen twice.
pub const ANSWERED_OPTION: &str = "@autoctl_answered";

/// Why a tmux call failed, sorted into the kinds callers act on. It travels inside the
/// `anyhow::Error` of every [`Terminal`] method; [`TmuxError::of`] finds it again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TmuxError {
    /// No server answers on the socket (none running, it exited, or the socket refuses).
    #[error("no tmux server running on {socket}")]
    NoServer { socket: String },
    /// The target names no session, window or pane (tmux: "can't find …").
    #[error("tmux: {0}")]
    NotFound(String),
    /// tmux did not answer within the timeout and was killed.
    #[error("tmux did not answer within {timeout} on {socket}")]
    Timeout { timeout: String, socket: String },
    /// Anything else, with tmux's first line of stderr.
    #[error("tmux: {0}")]
    Failed(String),
    /// tmux failed without a word on stderr; its first line of stdout, if any.
    #[error("tmux failed: {0}")]
    Silent(String),
}

impl TmuxError {
    /// The tmux failure anywhere in `err`'s chain, if it is one.
    pub fn of(err: &anyhow::Error) -> Option<&TmuxError> {
        err.chain()
            .find_map(|cause| cause.downcast_ref::<TmuxError>())
    }

    /// Is `err` a target that does not exist (as opposed to tmux being unavailable)?
    pub fn is_not_found(err: &anyhow::Error) -> bool {
        matches!(TmuxError::of(err), Some(TmuxError::NotFound(_)))
    }
}

/// Why a tmux name on the command line (a target, a socket, a key) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("empty target (examples: agent, agent:0.1, %3)")]
    EmptyTarget,
    #[error(
        "{0:?} starts with '-', which tmux would read as an option; name the pane (agent:0.1, %3)"
    )]
    TargetIsOption(String),
    #[error("target is longer than {TARGET_MAX} bytes")]
    TargetTooLong,
    #[error("target contains control characters")]
    TargetControl,
    #[error(
        "{0:?} ends with ';', which tmux would read as the end of its command; name the pane (agent:0.1, %3)"
    )]
    TargetEndsCommand(String),
    #[error("{0:?} is not a socket name (a plain name such as `agents`, as for tmux -L)")]
    Socket(String),
    #[error("socket name contains control characters")]
    SocketControl,
    #[error(
        "{0:?} is not a tmux key name (examples: Enter, Escape, C-c, Up, y); use --text for literal text"
    )]
    Key(String),
}

/// Validate a tmux target (`session`, `session:window.pane`, `%3`): non-empty, short, no
/// control characters, never starting with `-` (tmux would read it as an option) or ending
/// with `;` (tmux would read it as a command separator).
pub fn parse_target(text: &str) -> Result<String, NameError> {
    if text.is_empty() {
        return Err(NameError::EmptyTarget);
    }
    if text.starts_with('-') {
        return Err(NameError::TargetIsOption(text.to_string()));
    }
    if text.len() > TARGET_MAX {
        return Err(NameError::TargetTooLong);
    }
    if text.chars().any(char::is_control) {
        return Err(NameError::TargetControl);
    }
    if text.ends_with(';') {
        return Err(NameError::TargetEndsCommand(text.to_string()));
    }
    Ok(text.to_string())
}

/// Validate a tmux socket name (`-L NAME`): a file name in tmux's socket directory.
pub fn parse_socket(text: &str) -> Result<String, NameError> {
    if text.is_empty() || text.starts_with('-') || text.contains('/') || text.len() > TARGET_MAX {
        return Err(NameError::Socket(text.to_string()));
    }
    if text.chars().any(char::is_control) {
        return Err(NameError::SocketControl);
    }
    Ok(text.to_string())
}

/// A key name for `send-keys` without `-l` (`Enter`, `Escape`, `C-c`, `Up`, `y`).
pub fn parse_key(text: &str) -> Result<String, NameError> {
    let ok = !text.is_empty()
        && text.len() <= 32
        && !text.starts_with('-')
        && (text.chars().count() == 1 && !text.chars().any(char::is_control)
            || text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '^')));
    if ok {
        Ok(text.to_string())
    } else {
        Err(NameError::Key(text.to_string()))
    }
}

/// What tmux says about one pane.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaneInfo {
    /// The stable pane id (`%3`), unique for the server's lifetime.
    pub id: String,
    /// `session:window.pane`, for people.
    pub address: String,
    /// `#{pane_current_command}`: the program in front.
    pub command: String,
    pub pid: u32,
    /// The program in the pane exited and the pane is kept (`remain-on-exit`).
    pub dead: bool,
    pub cursor_y: u32,
    pub height: u32,
    /// The screen hash autoctl last answered in this pane, if any.
    pub answered: Option<String>,
    /// `#{socket_path}`: the server's socket, which the agent's hooks see in `$TMUX` (hook
    /// state is keyed by it and the pane id).
    pub socket: Option<String>,
}

/// One pane's metadata and screen, captured in the same client call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub pane: PaneInfo,
    /// The captured text (joined wrapped lines, trailing spaces as tmux keeps them).
    pub text: String,
}

/// How to capture.
#[derive(Debug, Clone, Copy, Default)]
pub struct CaptureOptions {
    /// Also capture this many lines of history above the visible screen.
    pub history: Option<u32>,
    /// Keep colour and attribute escape sequences (`capture-pane -e`).
    pub escapes: bool,
    /// Capture rows as displayed instead of joining wrapped lines, so `cursor_y` indexes
    /// them (used to find the input line).
    pub rows: bool,
}

/// The terminal operations autoctl needs. Implemented by [`Tmux`]; tests of the pure cores
/// use fakes.
pub trait Terminal {
    /// Metadata and screen of each target, in order. A target that does not exist is an
    /// `Err` in its slot; a server that is not running fails the whole call.
    fn snapshots(
        &self,
        targets: &[String],
        options: CaptureOptions,
    ) -> Result<Vec<Result<Snapshot>>>;
    /// Every pane of the server.
    fn list_panes(&self) -> Result<Vec<PaneInfo>>;
    /// Type `text` literally (no key-name interpretation).
    fn send_text(&self, target: &str, text: &str) -> Result<()>;
    /// Press named keys (`Enter`, `Escape`, `C-c`).
    fn send_keys(&self, target: &str, keys: &[String]) -> Result<()>;
    /// Remember in the pane which screen was answered.
    fn set_answered(&self, pane_id: &str, hash: &str) -> Result<()>;
    /// The server's socket path (`#{socket_path}`): what identifies the server for locks
    /// shared by every autoctl that talks to it. `None` when unknown.
    fn server_socket(&self) -> Result<Option<PathBuf>> {
        Ok(None)
    }
    /// Start `command` again in a dead pane (`remain-on-exit`): `respawn-pane`, which runs
    /// it with the server's default shell in the pane's directory.
    fn respawn(&self, target: &str, command: &str) -> Result<()> {
        let _ = (target, command);
        anyhow::bail!("this terminal cannot respawn panes")
    }
}

/// The real tmux.
#[derive(Debug, Clone)]
pub struct Tmux {
    binary: PathBuf,
    socket: Option<String>,
    timeout: Duration,
}

impl Tmux {
    /// Find tmux on PATH. The error says which PATH was searched, since cron's is minimal.
    pub fn new(socket: Option<String>) -> Result<Tmux> {
        let binary = which::which("tmux").map_err(|_| {
            let path = std::env::var("PATH").unwrap_or_default();
            anyhow!(
                "tmux not found on PATH ({}); install tmux or set PATH (cron's default is /usr/bin:/bin)",
                if path.is_empty() { "PATH is empty" } else { &path }
            )
        })?;
        let timeout = match std::env::var("AUTOCTL_TMUX_TIMEOUT") {
            Ok(text) if !text.is_empty() => crate::duration::parse_positive(&text)
                .map_err(|err| anyhow!("AUTOCTL_TMUX_TIMEOUT: {err}"))?,
            _ => TIMEOUT,
        };
        Ok(Tmux {
            binary,
            socket,
            timeout,
        })
    }

    fn socket_label(&self) -> String {
        match &self.socket {
            Some(name) => format!("socket {name:?}"),
            None => "the default socket".to_string(),
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.binary);
        // UTF-8 whatever the locale: without LANG/LC_* (cron, a new user on a machine with
        // no default locale) tmux prints tabs and every non-ASCII character as `_`, so
        // autoctl could read no pane's metadata and no agent's `❯`.
        cmd.arg("-u");
        if let Some(socket) = &self.socket {
            cmd.arg("-L").arg(socket);
        }
        cmd.stdin(Stdio::null());
        // Its own process group: a Ctrl-C meant for a long-running autoctl (`run watch`) must
        // not kill a tmux call half-way (typed text without its Enter); autoctl decides when
        // to stop, between two decisions.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    }

    /// Run tmux with `args`; stdout on success, a one-line error otherwise. A tmux that does
    /// not answer within the timeout is killed: a wedged server must not pile up cron runs
    /// that each hold a state lock.
    fn run(&self, args: &[OsString], stdin: Option<&[u8]>) -> Result<Vec<u8>> {
        let mut cmd = self.command();
        cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        if stdin.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        if let Some(bytes) = stdin {
            let mut pipe = child.stdin.take().expect("stdin was piped");
            pipe.write_all(bytes).context("cannot write to tmux")?;
        }
        // Drain both pipes on their own threads so a large capture never blocks tmux.
        let drain = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = drain(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = drain(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let deadline = Instant::now() + self.timeout;
        let mut pause = Duration::from_micros(500);
        let status = loop {
            if let Some(status) = child.try_wait().context("tmux did not finish")? {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(TmuxError::Timeout {
                    timeout: crate::duration::format(self.timeout),
                    socket: self.socket_label(),
                }
                .into());
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        };
        let stdout = stdout.join().unwrap_or_default();
        let stderr = stderr.join().unwrap_or_default();
        if status.success() {
            return Ok(stdout);
        }
        Err(self.explain(&stderr, &stdout))
    }

    /// Sort a failed call by tmux's message: the only place that reads tmux's error text.
    fn explain(&self, stderr: &[u8], stdout: &[u8]) -> anyhow::Error {
        let text = String::from_utf8_lossy(stderr);
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let error = if first.contains("no server running")
            || first.contains("error connecting to")
            || first.contains("server exited")
        {
            TmuxError::NoServer {
                socket: self.socket_label(),
            }
        } else if first.starts_with("can't find") {
            TmuxError::NotFound(first.to_string())
        } else if first.is_empty() {
            let out = String::from_utf8_lossy(stdout);
            TmuxError::Silent(out.lines().next().unwrap_or("no message").to_string())
        } else {
            TmuxError::Failed(first.to_string())
        };
        error.into()
    }

    /// One chained capture of `targets` (which fit in one client command).
    fn snapshot_chunk(
        &self,
        targets: &[String],
        options: CaptureOptions,
        nonce: &str,
    ) -> Result<Vec<Result<Snapshot>>> {
        let args = snapshot_args(targets, options, nonce);
        match self.run(&args, None) {
            Ok(out) => parse_snapshots(&out, nonce, targets.len()),
            // A server that cannot be asked fails every target: the caller cannot tell a gone
            // pane from a wrong socket, and must not end runs over it.
            Err(err)
                if matches!(
                    TmuxError::of(&err),
                    Some(TmuxError::NoServer { .. } | TmuxError::Timeout { .. })
                ) =>
            {
                Err(err)
            }
            // One target: its failure (a pane or session that is gone) is its own slot, as in
            // a batch, so `run tick --session X` ends a run whose pane is gone like `--all`.
            Err(err) if targets.len() == 1 => Ok(vec![Err(err)]),
            Err(_) => {
                // tmux stops a command sequence at the first failing command; a missing pane
                // fails only its own slot, so capture the targets one by one to say which.
                let mut all = Vec::with_capacity(targets.len());
                for target in targets {
                    match self.snapshot_one(target, options, nonce) {
                        Ok(mut one) => all.push(one.remove(0)),
                        Err(err) => all.push(Err(err)),
                    }
                }
                Ok(all)
            }
        }
    }

    fn snapshot_one(
        &self,
        target: &str,
        options: CaptureOptions,
        nonce: &str,
    ) -> Result<Vec<Result<Snapshot>>> {
        let args = snapshot_args(std::slice::from_ref(&target.to_string()), options, nonce);
        let out = self.run(&args, None)?;
        parse_snapshots(&out, nonce, 1)
    }
}

fn os(text: &str) -> OsString {
    OsString::from(text)
}

/// `display-message` format: nonce, then the fields of [`PaneInfo`], tab-separated.
fn info_format(nonce: &str) -> String {
    format!(
        "{nonce}\t#{{pane_id}}\t#{{session_name}}:#{{window_index}}.#{{pane_index}}\t#{{pane_current_command}}\t#{{pane_pid}}\t#{{pane_dead}}\t#{{cursor_y}}\t#{{pane_height}}\t#{{{ANSWERED_OPTION}}}\t#{{socket_path}}"
    )
}

fn snapshot_args(targets: &[String], options: CaptureOptions, nonce: &str) -> Vec<OsString> {
    let format = info_format(nonce);
    let mut args = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        if i > 0 {
            args.push(os(";"));
        }
        push_snapshot_args(&mut args, target, options, &format);
    }
    args
}

/// The two commands that capture one pane: its metadata, then its screen.
fn push_snapshot_args(
    args: &mut Vec<OsString>,
    target: &str,
    options: CaptureOptions,
    format: &str,
) {
    args.extend(["display-message", "-p", "-t", target, format].map(os));
    args.push(os(";"));
    args.extend(["capture-pane", "-p"].map(os));
    if !options.rows {
        args.push(os("-J"));
    }
    if options.escapes {
        args.push(os("-e"));
    }
    if let Some(history) = options.history {
        args.push(os("-S"));
        args.push(os(&format!("-{history}")));
    }
    args.extend(["-t", target].map(os));
}

/// Split `targets` into runs whose chained capture stays within `limit` argument bytes (each
/// argument costs its length and a separator). A target too long for a chunk of its own still
/// gets one: tmux then says why it refuses it, in that target's slot.
fn chunk_targets<'t>(
    targets: &'t [String],
    options: CaptureOptions,
    nonce: &str,
    limit: usize,
) -> Vec<&'t [String]> {
    let format = info_format(nonce);
    let mut chunks = Vec::new();
    let (mut start, mut size) = (0, 0);
    let mut args = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        args.clear();
        args.push(os(";"));
        push_snapshot_args(&mut args, target, options, &format);
        let cost: usize = args.iter().map(|a| a.len() + 1).sum();
        if i > start && size + cost > limit {
            chunks.push(&targets[start..i]);
            (start, size) = (i, 0);
        }
        size += cost;
    }
    if start < targets.len() {
        chunks.push(&targets[start..]);
    }
    chunks
}

fn parse_info(line: &str) -> Option<PaneInfo> {
    let fields: Vec<&str> = line.split('\t').collect();
    if fields.len() < 9 {
        return None;
    }
    Some(PaneInfo {
        id: fields[1].to_string(),
        address: fields[2].to_string(),
        command: fields[3].to_string(),
        pid: fields[4].parse().unwrap_or(0),
        dead: fields[5] == "1",
        cursor_y: fields[6].parse().unwrap_or(0),
        height: fields[7].parse().unwrap_or(0),
        answered: Some(fields[8].to_string()).filter(|s| !s.is_empty()),
        socket: fields
            .get(9)
            .map(|s| s.trim_end().to_string())
            .filter(|s| !s.is_empty()),
    })
}

/// Split the output of a chained snapshot call into panes. Each pane starts with a line that
/// begins with the nonce; everything until the next such line is its screen.
fn parse_snapshots(out: &[u8], nonce: &str, expected: usize) -> Result<Vec<Result<Snapshot>>> {
    let text = String::from_utf8_lossy(out);
    let mut snapshots: Vec<Result<Snapshot>> = Vec::with_capacity(expected);
    let mut current: Option<(PaneInfo, String)> = None;
    let prefix = format!("{nonce}\t");
    for line in text.split_inclusive('\n') {
        if line.starts_with(&prefix) {
            if let Some((pane, screen)) = current.take() {
                snapshots.push(Ok(Snapshot { pane, text: screen }));
            }
            let info = parse_info(line.trim_end_matches('\n'))
                .context("tmux printed pane metadata autoctl cannot read")?;
            current = Some((info, String::new()));
        } else if let Some((_, screen)) = current.as_mut() {
            screen.push_str(line);
        }
    }
    if let Some((pane, screen)) = current.take() {
        snapshots.push(Ok(Snapshot { pane, text: screen }));
    }
    if snapshots.len() != expected {
        bail!(
            "tmux returned {} pane captures for {expected} targets",
            snapshots.len()
        );
    }
    Ok(snapshots)
}

/// A nonce for one call: not secret, only unpredictable enough that no screen contains it.
fn nonce() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let seed = format!("{}:{}:{:?}", std::process::id(), now.as_nanos(), now);
    format!(
        "autoctl-{:016x}",
        xxhash_rust::xxh3::xxh3_64(seed.as_bytes())
    )
}

impl Terminal for Tmux {
    fn snapshots(
        &self,
        targets: &[String],
        options: CaptureOptions,
    ) -> Result<Vec<Result<Snapshot>>> {
        let nonce = nonce();
        let mut all = Vec::with_capacity(targets.len());
        for chunk in chunk_targets(targets, options, &nonce, CHAIN_BYTES) {
            all.extend(self.snapshot_chunk(chunk, options, &nonce)?);
        }
        Ok(all)
    }

    fn list_panes(&self) -> Result<Vec<PaneInfo>> {
        let nonce = "pane";
        let format = info_format(nonce);
        let out = self.run(&["list-panes", "-a", "-F", &format].map(os), None)?;
        String::from_utf8_lossy(&out)
            .lines()
            .filter(|l| !l.is_empty())
            .map(|line| parse_info(line).context("tmux printed pane metadata autoctl cannot read"))
            .collect()
    }

    fn send_text(&self, target: &str, text: &str) -> Result<()> {
        if text.len() > PASTE_THRESHOLD {
            // A named buffer, deleted after pasting (-d), so the user's buffers stay untouched;
            // -p pastes with bracketed-paste markers when the program asked for them.
            let buffer = nonce();
            self.run(
                &["load-buffer", "-b", &buffer, "-"].map(os),
                Some(text.as_bytes()),
            )?;
            self.run(
                &["paste-buffer", "-d", "-p", "-b", &buffer, "-t", target].map(os),
                None,
            )?;
            return Ok(());
        }
        let literal = escape_trailing_semicolon(text);
        self.run(
            &["send-keys", "-l", "-t", target, "--", &literal].map(os),
            None,
        )?;
        Ok(())
    }

    fn send_keys(&self, target: &str, keys: &[String]) -> Result<()> {
        let mut args = ["send-keys", "-t", target, "--"].map(os).to_vec();
        // A key named `;` (or any argument ending in one) would end tmux's command instead of
        // being pressed.
        args.extend(keys.iter().map(|k| os(&escape_trailing_semicolon(k))));
        self.run(&args, None)?;
        Ok(())
    }

    fn respawn(&self, target: &str, command: &str) -> Result<()> {
        self.run(&["respawn-pane", "-t", target, "--", command].map(os), None)?;
        Ok(())
    }

    fn set_answered(&self, pane_id: &str, hash: &str) -> Result<()> {
        self.run(
            &["set-option", "-p", "-t", pane_id, ANSWERED_OPTION, hash].map(os),
            None,
        )?;
        Ok(())
    }

    fn server_socket(&self) -> Result<Option<PathBuf>> {
        let out = self.run(&["display-message", "-p", "#{socket_path}"].map(os), None)?;
        let text = String::from_utf8_lossy(&out);
        let path = text.trim_end_matches('\n');
        Ok((!path.is_empty()).then(|| PathBuf::from(path)))
    }
}

/// tmux splits its command line at an argument that ends in `;` (the `;` becomes a command
/// separator and is not sent); a final `\\;` is tmux's escape for a literal `;`. Only the last
/// character matters, so escaping it keeps every byte of the text.
fn escape_trailing_semicolon(text: &str) -> std::borrow::Cow<'_, str> {
    match text.strip_suffix(';') {
        Some(head) => format!("{head}\\;").into(),
        None => text.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_final_semicolon_is_escaped() {
        assert_eq!(escape_trailing_semicolon("echo hi;"), "echo hi\\;");
        assert_eq!(escape_trailing_semicolon(";"), "\\;");
        assert_eq!(escape_trailing_semicolon("a\\;"), "a\\\\;");
        assert_eq!(escape_trailing_semicolon("a; b"), "a; b");
    }

    #[test]
    fn targets_are_validated() {
        assert!(parse_target("agent").is_ok());
        assert!(parse_target("agent:0.1").is_ok());
        assert!(parse_target("%3").is_ok());
        assert!(matches!(
            parse_target("-t"),
            Err(NameError::TargetIsOption(_))
        ));
        assert!(parse_target("").is_err());
        assert!(parse_target("a\nb").is_err());
        assert!(parse_target(&"x".repeat(300)).is_err());
        assert!(parse_socket("agents").is_ok());
        assert!(parse_socket("../x").is_err());
        assert!(parse_socket("-x").is_err());
    }

    #[test]
    fn key_names_are_validated() {
        for ok in ["Enter", "Escape", "C-c", "M-x", "y", "1", "BSpace", "F12"] {
            assert!(parse_key(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-l", "a b", "Enter;", "\u{1b}"] {
            assert!(parse_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn snapshot_output_splits_on_the_nonce_only() {
        let nonce = "autoctl-00ff";
        let out = format!(
            "{nonce}\t%1\ta:0.0\tclaude\t42\t0\t3\t10\t\nline one\n{fake}\n{nonce}\t%2\ta:1.0\tbash\t43\t1\t0\t10\tabc\n$ \n",
            fake = "autoctl-0000\t%9\tfake"
        );
        let snaps = parse_snapshots(out.as_bytes(), nonce, 2).unwrap();
        let first = snaps[0].as_ref().unwrap();
        assert_eq!(first.pane.id, "%1");
        assert_eq!(first.pane.command, "claude");
        assert_eq!(first.pane.answered, None);
        assert_eq!(first.text, "line one\nautoctl-0000\t%9\tfake\n");
        let second = snaps[1].as_ref().unwrap();
        assert!(second.pane.dead);
        assert_eq!(second.pane.answered.as_deref(), Some("abc"));
        assert!(parse_snapshots(out.as_bytes(), nonce, 3).is_err());
    }

    #[test]
    fn chained_captures_stay_under_the_tmux_message_limit() {
        let targets: Vec<String> = (0..250).map(|i| format!("=agent-{i}:")).collect();
        let options = CaptureOptions::default();
        let nonce = nonce();
        let chunks = chunk_targets(&targets, options, &nonce, CHAIN_BYTES);
        assert!(chunks.len() > 1);
        assert!(chunks.len() < 10, "tens of panes per call, not one");
        assert_eq!(chunks.concat(), targets, "every target once, in order");
        for chunk in &chunks {
            let bytes: usize = snapshot_args(chunk, options, &nonce)
                .iter()
                .map(|a| a.len() + 1)
                .sum();
            assert!(bytes <= CHAIN_BYTES, "{bytes}");
        }
        // A target longer than a whole chunk still gets a capture of its own.
        let huge = vec!["x".repeat(CHAIN_BYTES), "a".to_string()];
        assert_eq!(chunk_targets(&huge, options, &nonce, CHAIN_BYTES).len(), 2);
        assert!(chunk_targets(&[], options, &nonce, CHAIN_BYTES).is_empty());
    }

    #[test]
    fn chained_arguments_separate_commands_with_a_lone_semicolon() {
        let args = snapshot_args(
            &["a".to_string(), "%2".to_string()],
            CaptureOptions {
                history: Some(50),
                ..CaptureOptions::default()
            },
            "n",
        );
        let words: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(words.iter().filter(|w| *w == ";").count(), 3);
        assert!(words.windows(2).any(|w| w[0] == "-S" && w[1] == "-50"));
        assert!(!words.iter().any(|w| w == "-e"));
    }
}
