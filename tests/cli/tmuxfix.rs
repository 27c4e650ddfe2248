//! The one tmux fixture: real tmux on the sandbox's private server (`tmux -L`, killed when
//! the sandbox drops). Start programs in sessions, type into them, wait for what they print,
//! and run fake agents that record what they are sent. Tests never run `tmux` themselves.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util::Sandbox;

pub fn repo(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Run tmux on the sandbox's socket.
pub fn tmux(sb: &Sandbox, args: &[&str]) -> Output {
    tmux_on(&sb.tmux_tmpdir(), &sb.socket, args)
}

/// Run tmux on a named socket in a `TMUX_TMPDIR` (the sandbox's, or that of a server a
/// program under test started itself).
pub fn tmux_on(tmpdir: &Path, socket: &str, args: &[&str]) -> Output {
    Command::new("tmux")
        .env("TMUX_TMPDIR", tmpdir)
        .args(["-L", socket])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("tmux runs")
}

/// Run tmux on the sandbox's socket and require success.
pub fn tmux_ok(sb: &Sandbox, args: &[&str]) {
    let out = tmux(sb, args);
    assert!(out.status.success(), "tmux {args:?}: {out:?}");
}

/// A new detached session `name` of `width`x`height` running `command` (argv, no shell);
/// returns its pane id.
pub fn new_session(
    sb: &Sandbox,
    name: &str,
    (width, height): (u32, u32),
    command: &[&str],
) -> String {
    let (width, height) = (width.to_string(), height.to_string());
    let mut args = vec![
        "new-session",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-s",
        name,
        "-x",
        &width,
        "-y",
        &height,
        "--",
    ];
    args.extend_from_slice(command);
    let out = tmux(sb, &args);
    assert!(
        out.status.success(),
        "tmux new-session: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Press keys (tmux key names) in a pane.
pub fn press(sb: &Sandbox, target: &str, keys: &[&str]) {
    let mut args = vec!["send-keys", "-t", target];
    args.extend_from_slice(keys);
    tmux_ok(sb, &args);
}

/// Type a line literally and press Enter.
pub fn type_line(sb: &Sandbox, target: &str, text: &str) {
    tmux_ok(sb, &["send-keys", "-t", target, "-l", text]);
    press(sb, target, &["Enter"]);
}

/// End a session (its pane is gone).
pub fn kill_session(sb: &Sandbox, name: &str) {
    tmux_ok(sb, &["kill-session", "-t", &format!("={name}")]);
}

/// Start `command` in a new 120x40 session named `name`; returns the target.
pub fn start(sb: &Sandbox, name: &str, command: &str) -> String {
    let out = tmux(
        sb,
        &[
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "120",
            "-y",
            "40",
            command,
        ],
    );
    assert!(out.status.success(), "{out:?}");
    // Keep dead panes around only where a test asks; the default is tmux's.
    name.to_string()
}

pub fn capture(sb: &Sandbox, target: &str) -> String {
    String::from_utf8_lossy(&tmux(sb, &["capture-pane", "-p", "-J", "-t", target]).stdout)
        .into_owned()
}

pub fn foreground(sb: &Sandbox, target: &str) -> String {
    String::from_utf8_lossy(
        &tmux(
            sb,
            &[
                "display-message",
                "-p",
                "-t",
                target,
                "#{pane_current_command}",
            ],
        )
        .stdout,
    )
    .trim()
    .to_string()
}

/// Poll until `ready` holds for the pane's screen (and foreground command); panics after 10 s.
pub fn wait_for(
    sb: &Sandbox,
    target: &str,
    what: &str,
    ready: impl Fn(&str, &str) -> bool,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let screen = capture(sb, target);
        let command = foreground(sb, target);
        if ready(&screen, &command) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what} in {target}; screen:\n{screen}\nforeground: {command}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A fake agent (tests/fixtures/agents/fake-agent.py) showing a whole-screen fixture as
/// "claude"; returns (target, key log path).
pub fn fake_agent(sb: &Sandbox, name: &str, screen_fixture: &str) -> (String, PathBuf) {
    let log = sb.path(&format!("{name}.keys"));
    let command = format!(
        "python3 {} --as claude {} {}",
        repo("tests/fixtures/agents/fake-agent.py").display(),
        repo(screen_fixture).display(),
        log.display()
    );
    let target = start(sb, name, &command);
    wait_for(sb, &target, "the fake agent", |_, command| {
        command == "claude"
    });
    // The screen is drawn before the log file exists; the log appears once keys are read.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log.exists() {
        assert!(Instant::now() < deadline, "fake agent did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    (target, log)
}

/// [`fake_agent`] started as a person starts Claude Code in a project: in `dir`, with the
/// environment `env` (HOME, PATH: what its hooks run with).
pub fn fake_agent_in(
    sb: &Sandbox,
    name: &str,
    screen_fixture: &str,
    dir: &Path,
    env: &[(&str, &str)],
) -> (String, PathBuf) {
    let log = sb.path(&format!("{name}.keys"));
    let command = format!(
        "python3 {} --as claude {} {}",
        repo("tests/fixtures/agents/fake-agent.py").display(),
        repo(screen_fixture).display(),
        log.display()
    );
    let dir = dir.display().to_string();
    let vars: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut args = vec![
        "new-session",
        "-d",
        "-s",
        name,
        "-x",
        "120",
        "-y",
        "40",
        "-c",
        &dir,
    ];
    for var in &vars {
        args.extend(["-e", var.as_str()]);
    }
    args.push(&command);
    // tmux gives a new session the PATH of the client that creates it, whatever `-e` says:
    // the PATH is the client's, as for a person who starts tmux from their shell.
    let mut tmux = Command::new("tmux");
    tmux.env("TMUX_TMPDIR", sb.tmux_tmpdir())
        .args(["-L", &sb.socket])
        .args(&args)
        .stdin(Stdio::null());
    if let Some((_, path)) = env.iter().find(|(k, _)| *k == "PATH") {
        tmux.env("PATH", path);
    }
    let out = tmux.output().expect("tmux runs");
    assert!(out.status.success(), "{out:?}");
    wait_for(sb, name, "the fake agent", |_, command| command == "claude");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log.exists() {
        assert!(Instant::now() < deadline, "fake agent did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    (name.to_string(), log)
}

/// The pane's process id (`#{pane_pid}`).
pub fn pane_pid(sb: &Sandbox, target: &str) -> u32 {
    let out = tmux(sb, &["display-message", "-p", "-t", target, "#{pane_pid}"]);
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Type a line into the shell and wait for its output: whatever reached the pane before it
/// has been read by then (a wait for a condition, not for a time). Each call's marker is
/// its own, so a second call does not find the first one's output.
pub fn shell_caught_up(sb: &Sandbox, shell: &str) {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let line = format!("echo caught-up-$((6*7))-{n}");
    tmux(sb, &["send-keys", "-t", shell, &line, "Enter"]);
    let want = format!("caught-up-42-{n}");
    wait_for(sb, shell, "the shell to run the marker line", |s, _| {
        s.lines().any(|l| l.trim_end() == want)
    });
}

/// Send a fake or scripted agent (its key log `log`) a marker key, the unit separator (0x1f,
/// which no test types; the agents log it and draw nothing for it), and wait until the log
/// holds it: every key sent before it has been read by then. Returns the keys received so
/// far, markers left out: a wait for a condition, not a time (until session 9, a
/// fixed 300 ms).
pub fn agent_caught_up(sb: &Sandbox, target: &str, log: &Path) -> String {
    let markers = |keys: &str| keys.matches('\u{1f}').count();
    let before = markers(&keys_received(log));
    tmux_ok(sb, &["send-keys", "-t", target, "-H", "1f"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let keys = keys_received(log);
        if markers(&keys) > before {
            return keys.replace('\u{1f}', "");
        }
        assert!(
            Instant::now() < deadline,
            "the agent never read the marker key: {keys:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What reached a program that reads a line after `prompt` with the terminal's echo on
/// (`read -p`, `rm -i`, `cp -i`): a marker `#` typed without Enter is echoed after every key
/// typed before it, so once it shows, the screen between the prompt and it is all that was
/// typed (an answer that ended the read shows as its line, perhaps with the program's reply
/// to it: the echo does not wait for the program). The marker
/// is left in the program's line unless `erase` (a Backspace then takes it out again).
pub fn typed_after(sb: &Sandbox, target: &str, prompt: &str, erase: bool) -> String {
    tmux_ok(sb, &["send-keys", "-t", target, "-l", "#"]);
    let between = |s: &str| {
        let (_, rest) = s.rsplit_once(prompt)?;
        rest.split_once('#')
            .map(|(typed, _)| typed.trim().to_string())
    };
    let screen = wait_for(sb, target, "the marker's echo after the prompt", |s, _| {
        between(s).is_some()
    });
    if erase {
        tmux_ok(sb, &["send-keys", "-t", target, "BSpace"]);
        wait_for(sb, target, "the marker erased", |s, _| between(s).is_none());
    }
    between(&screen).unwrap_or_default()
}

/// A scripted fake agent (tests/fixtures/agents/scripted-agent.py) as "claude", moving
/// through whole-screen fixtures: `enter:FILE` is shown after a submitted line, `esc:FILE`
/// after an Esc. Returns (target, key log path).
pub fn scripted_agent(sb: &Sandbox, name: &str, states: &[&str]) -> (String, PathBuf) {
    let log = sb.path(&format!("{name}.keys"));
    let states: Vec<String> = states
        .iter()
        .map(|state| match state.split_once(':') {
            Some((trigger @ ("enter" | "esc"), file)) => {
                format!("{trigger}:{}", repo(file).display())
            }
            _ => repo(state).display().to_string(),
        })
        .collect();
    let command = format!(
        "python3 {} --as claude {} {}",
        repo("tests/fixtures/agents/scripted-agent.py").display(),
        log.display(),
        states.join(" ")
    );
    let target = start(sb, name, &command);
    wait_for(sb, &target, "the scripted agent", |_, command| {
        command == "claude"
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log.exists() {
        assert!(Instant::now() < deadline, "scripted agent did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    (target, log)
}

pub fn keys_received(log: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(log).unwrap_or_default()).into_owned()
}

/// Start an interactive shell (prompt `$ `) and run `command` in it, the way a person or an
/// agent's loop does: with job control, the program is the pane's foreground command.
pub fn start_in_shell(sb: &Sandbox, name: &str, command: &str) -> String {
    let target = start(sb, name, "env PS1='$ ' bash --norc --noprofile");
    wait_for(sb, &target, "the shell prompt", |s, _| {
        s.trim_end().ends_with('$')
    });
    type_line(sb, &target, command);
    target
}
