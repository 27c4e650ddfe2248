//! Typing into an agent's pane, and typing an answer at most once per screen across every
//! autoctl on the machine (`stall check --apply`, `run tick`, `run continue`, cron ticks that
//! overlap).
//!
//! The rule: under a per-pane lock of the tmux server (a lock file beside the server's socket,
//! so supervisors with different state dirs still take turns), re-capture the pane; type nothing when its screen is no longer the one decided on (its
//! normalized hash changed) or when the pane's `@autoctl_answered` option already names that
//! screen; otherwise type the keys and set the option. The lock makes check-then-type atomic
//! between supervisors; the pane option makes "already answered" survive a supervisor's own
//! state (two state files, a registry row and a state file, a reset state).

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::fsx::FileLock;
use crate::pane::Key;
use crate::pane::normalize;
use crate::pane::rules::Mask;
use crate::tmux::{CaptureOptions, Terminal};

/// The pause between typed text and the Enter that submits it: a TUI that just received a
/// paste (Claude Code) may take an Enter that arrives in the same read as a newline.
pub const SUBMIT_DELAY: Duration = Duration::from_millis(100);

/// The pause before the Enter of a prompt typed into an agent (dispatch `--into agent`): a
/// slash command opens Claude Code's command menu as it is typed, and an Enter that arrives
/// before the menu has read the whole text completes the menu instead of submitting.
pub const PROMPT_SUBMIT_DELAY: Duration = Duration::from_millis(400);

/// Type keys: literal text, then named keys, with a short pause before a key that follows
/// text (an agent's input box may read text and Enter in one read as a paste).
pub fn type_keys(terminal: &dyn Terminal, target: &str, keys: &[Key]) -> Result<()> {
    send_keys(terminal, target, keys, SUBMIT_DELAY)
}

/// [`type_keys`] with the pause before a submit chosen by the caller (zero at a shell prompt).
pub fn send_keys(
    terminal: &dyn Terminal,
    target: &str,
    keys: &[Key],
    submit_delay: Duration,
) -> Result<()> {
    let mut after_text = false;
    for key in keys {
        match key {
            Key::Text(text) => {
                terminal.send_text(target, text)?;
                after_text = true;
            }
            Key::Key(name) => {
                if after_text {
                    // Tests kill a driver here: text typed, its Enter not (a half-typed line).
                    crate::failpoint::hit("type-before-enter");
                }
                if after_text && !submit_delay.is_zero() {
                    std::thread::sleep(submit_delay);
                }
                terminal.send_keys(target, std::slice::from_ref(name))?;
                after_text = false;
            }
        }
    }
    Ok(())
}

/// The lock file that serializes typing into one pane of one tmux server, beside the server's
/// socket (`/tmp/tmux-UID/default` → `/tmp/tmux-UID/default.autoctl-pane-3.lock`): every
/// autoctl that can type into the pane can reach it, whatever its state dir, and tmux keeps
/// that directory private to the user.
pub fn server_lock_path(socket_path: &Path, pane_id: &str) -> PathBuf {
    let mut name = socket_path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(
        ".autoctl-pane-{}.lock",
        pane_id.trim_start_matches('%')
    ));
    socket_path.with_file_name(name)
}

/// The fallback lock when the server's directory cannot hold one: in the state dir, keyed by
/// the server (its socket path's hash, else the `-L` name) and the pane. It serializes only
/// the supervisors that share the state dir.
pub fn lock_path(state_dir: &Path, server: &str, pane_id: &str) -> PathBuf {
    state_dir.join("locks").join(format!(
        "pane-{server}-{}.lock",
        pane_id.trim_start_matches('%')
    ))
}

/// Hold the pane's typing lock: the server's (see [`server_lock_path`]), else the state
/// dir's (creating the private lock directory when needed), with a warning that it is not
/// shared with supervisors of other state dirs.
pub fn lock_pane(
    terminal: &dyn Terminal,
    state_dir: &Path,
    socket: Option<&str>,
    pane_id: &str,
) -> Result<FileLock> {
    let server = terminal.server_socket()?;
    if let Some(socket_path) = &server {
        let path = server_lock_path(socket_path, pane_id);
        // The pane locks a killed typist left (of panes long gone, whose lock nobody takes
        // again) go with the next typing into any pane of the server.
        let prefix = format!(
            "{}.autoctl-pane-",
            socket_path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
        );
        crate::fsx::sweep_side_locks(&crate::fsx::parent_dir(&path), |name| {
            name.starts_with(&prefix)
        });
        match FileLock::acquire(&path) {
            Ok(lock) => return Ok(lock),
            Err(err) => crate::output::warn(&format!(
                "{err:#}; locking in the state dir instead (not shared with other state dirs)"
            )),
        }
    }
    let key = match &server {
        Some(path) => format!(
            "{:016x}",
            xxhash_rust::xxh3::xxh3_64(path.as_os_str().as_encoded_bytes())
        ),
        None => socket.unwrap_or("default").to_string(),
    };
    let path = lock_path(state_dir, &key, pane_id);
    let dir = crate::fsx::parent_dir(&path);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    crate::fsx::sweep_side_locks(&dir, |name| name.starts_with("pane-"));
    FileLock::acquire(&path)
}

/// What to type, onto which screen: an answer to a prompt, or a continuation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The pane's id (`%3`): the lock and the marker are per pane.
    pub pane_id: String,
    /// The normalized hash of the screen the answer was decided on.
    pub hash: String,
    pub keys: Vec<Key>,
    /// A continuation: typed only while the task's `.status.json` `updated_at` is still this
    /// (seed 002's compare-and-swap, checked under the pane's lock).
    pub if_unchanged: Option<String>,
}

/// Where and how to type: the terminal, its socket name and the state dir (for the fallback
/// lock), and the masks that hash a screen.
#[derive(Clone, Copy)]
pub struct Typist<'a> {
    pub terminal: &'a dyn Terminal,
    pub socket: Option<&'a str>,
    pub state_dir: &'a Path,
    pub masks: &'a [Mask],
}

impl Typist<'_> {
    /// Type `answer` unless another supervisor got there first or the screen moved. `Ok(None)`
    /// when the keys were typed; `Ok(Some(why))` when nothing was typed.
    ///
    /// `precondition` runs under the pane lock, after the screen was confirmed and before
    /// anything is typed; `Some(why)` from it also types nothing (`run tick` uses it for the
    /// compare-and-swap on `.status.json` before a continuation).
    pub fn answer_once(
        &self,
        answer: &Answer,
        precondition: &dyn Fn() -> Result<Option<String>>,
    ) -> Result<Option<String>> {
        if answer.keys.is_empty() {
            return Ok(Some("the rule has no keys to type".to_string()));
        }
        let _lock = lock_pane(self.terminal, self.state_dir, self.socket, &answer.pane_id)?;
        let fresh = self
            .terminal
            .snapshots(&[answer.pane_id.to_string()], CaptureOptions::default())?
            .pop()
            .context("tmux returned no capture")??;
        if fresh.pane.answered.as_deref() == Some(answer.hash.as_str()) {
            return Ok(Some(
                "another autoctl already answered this screen; waiting for it to change"
                    .to_string(),
            ));
        }
        if normalize::hash(&fresh.text, self.masks) != answer.hash {
            return Ok(Some(
                "the screen changed before the answer was typed; nothing sent".to_string(),
            ));
        }
        if let Some(why) = precondition()? {
            return Ok(Some(why));
        }
        type_keys(self.terminal, &answer.pane_id, &answer.keys)?;
        self.terminal.set_answered(&answer.pane_id, &answer.hash)?;
        Ok(None)
    }
}

/// No precondition.
pub fn always() -> Result<Option<String>> {
    Ok(None)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::pane::rules::RuleSet;
    use crate::tmux::{PaneInfo, Snapshot};

    /// A terminal that shows one fixed screen and records what is typed.
    struct FakeTerminal {
        screen: String,
        answered: Option<String>,
        typed: RefCell<Vec<String>>,
    }

    impl FakeTerminal {
        fn new(screen: &str, answered: Option<String>) -> FakeTerminal {
            FakeTerminal {
                screen: screen.to_string(),
                answered,
                typed: RefCell::new(Vec::new()),
            }
        }
    }

    impl Terminal for FakeTerminal {
        fn snapshots(
            &self,
            targets: &[String],
            _: CaptureOptions,
        ) -> Result<Vec<Result<Snapshot>>> {
            Ok(targets
                .iter()
                .map(|t| {
                    Ok(Snapshot {
                        pane: PaneInfo {
                            id: t.clone(),
                            command: "claude".into(),
                            answered: self.answered.clone(),
                            ..PaneInfo::default()
                        },
                        text: self.screen.clone(),
                    })
                })
                .collect())
        }
        fn list_panes(&self) -> Result<Vec<PaneInfo>> {
            Ok(Vec::new())
        }
        fn send_text(&self, _: &str, text: &str) -> Result<()> {
            self.typed.borrow_mut().push(format!("text:{text}"));
            Ok(())
        }
        fn send_keys(&self, _: &str, keys: &[String]) -> Result<()> {
            self.typed
                .borrow_mut()
                .push(format!("keys:{}", keys.join(" ")));
            Ok(())
        }
        fn set_answered(&self, _: &str, hash: &str) -> Result<()> {
            self.typed.borrow_mut().push(format!("marker:{hash}"));
            Ok(())
        }
    }

    fn typist<'a>(term: &'a FakeTerminal, dir: &'a Path) -> Typist<'a> {
        Typist {
            terminal: term,
            socket: Some("test"),
            state_dir: dir,
            masks: &RuleSet::embedded().masks,
        }
    }

    #[test]
    fn types_the_keys_then_marks_the_screen() {
        let dir = tempfile::tempdir().unwrap();
        let term = FakeTerminal::new("Continue? (y/n)", None);
        let hash = normalize::hash(&term.screen, &RuleSet::embedded().masks);
        let keys = [Key::Text("y".into()), Key::Key("Enter".into())];
        let answer = Answer {
            pane_id: "%1".to_string(),
            hash: hash.clone(),
            keys: keys.to_vec(),
            if_unchanged: None,
        };
        assert_eq!(
            typist(&term, dir.path())
                .answer_once(&answer, &always)
                .unwrap(),
            None
        );
        assert_eq!(
            *term.typed.borrow(),
            vec![
                "text:y".to_string(),
                "keys:Enter".into(),
                format!("marker:{hash}")
            ]
        );
        // The fake terminal names no server: the state dir's lock was used (its directory
        // was made for it) and removed on release.
        let lock = lock_path(dir.path(), "test", "%1");
        assert!(lock.parent().unwrap().is_dir());
        assert!(!lock.exists());
    }

    #[test]
    fn a_marked_or_changed_screen_or_a_failed_precondition_gets_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let keys = [Key::Text("1".into())];
        let screen = "Do you want to proceed?";
        let hash = normalize::hash(screen, &RuleSet::embedded().masks);
        let answer = Answer {
            pane_id: "%1".to_string(),
            hash: hash.clone(),
            keys: keys.to_vec(),
            if_unchanged: None,
        };
        let marked = FakeTerminal::new(screen, Some(hash.clone()));
        let why = typist(&marked, dir.path())
            .answer_once(&answer, &always)
            .unwrap()
            .unwrap();
        assert!(why.contains("already answered"), "{why}");
        let changed = FakeTerminal::new("something else", None);
        let why = typist(&changed, dir.path())
            .answer_once(&answer, &always)
            .unwrap()
            .unwrap();
        assert!(why.contains("changed"), "{why}");
        let refused = FakeTerminal::new(screen, None);
        let why = typist(&refused, dir.path())
            .answer_once(&answer, &|| Ok(Some("the task moved on".into())))
            .unwrap()
            .unwrap();
        assert_eq!(why, "the task moved on");
        let nothing = Answer {
            keys: Vec::new(),
            ..answer.clone()
        };
        assert!(
            typist(&refused, dir.path())
                .answer_once(&nothing, &always)
                .unwrap()
                .is_some()
        );
        for term in [&marked, &changed, &refused] {
            assert!(term.typed.borrow().is_empty());
        }
    }
}
