//! `autoctl run watch` end to end: the built binary watching real task dirs, a real tmux
//! server on the sandbox's private socket, and the scripted agent of `examples/fake-agent.sh`.
//! Every test runs the watcher with a one-minute heartbeat, so whatever it does within the
//! test's few seconds it does because of a file notification, not a heartbeat.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::session;
use crate::run_tick::{fake_agent, task};
use crate::tmuxfix::new_session;
use crate::util::{Sandbox, json_lines, one_stderr_line, stdout};

/// Nothing here takes more than a few seconds; this is a hang, not a slow machine.
const DEADLINE: Duration = Duration::from_secs(30);

/// A tmux session whose pane runs a program that is not a shell and never changes its
/// screen: an observe-mode run on it is neither exited nor progressing by itself.
fn quiet_pane(sb: &Sandbox, name: &str) {
    new_session(sb, name, (120, 30), &["sleep", "600"]);
}

/// Register an observe-mode run on a quiet pane.
fn observe_run(sb: &Sandbox, name: &str, extra: &[&str]) -> PathBuf {
    let dir = task(sb, name);
    quiet_pane(sb, name);
    sb.cmd()
        .args([
            "run",
            "start",
            "--session",
            name,
            "--agent",
            "generic",
            "--task",
        ])
        .arg(&dir)
        .args(extra)
        .assert()
        .code(0);
    dir
}

/// A signal as `autoctl signal write` writes it.
fn signal_json(iteration: u64) -> String {
    format!(
        "{{\"step\":\"exec\",\"result\":\"(done)\",\"next\":\"check\",\"checkpoint\":\"post-exec\",\"iteration\":{iteration},\"timestamp\":\"2027-01-01T00:00:00Z\"}}\n"
    )
}

/// Write a signal the way agents and `autoctl signal write` do: a temp file renamed over it.
fn rename_write(dir: &Path, iteration: u64) {
    let temp = dir.join(".test-signal.tmp");
    fs::write(&temp, signal_json(iteration)).unwrap();
    fs::rename(&temp, dir.join(".auto-signal")).unwrap();
}

/// A running `autoctl run watch`, its stdout and stderr collected as they arrive.
struct Watcher {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

fn collect(mut pipe: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => into
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
    })
}

impl Watcher {
    fn start(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Watcher {
        let mut all = vec!["run", "watch", "--heartbeat", "60s"];
        all.extend_from_slice(args);
        Watcher::spawn(sb, &all, env)
    }

    /// `autoctl ARGS...`, for a watcher started exactly as written somewhere else.
    fn spawn(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Watcher {
        let mut cmd = sb.std_cmd();
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            cmd.env(key, value);
        }
        let mut child = cmd.spawn().unwrap();
        let (stdout, stderr) = (Arc::default(), Arc::default());
        let readers = vec![
            collect(child.stdout.take().unwrap(), Arc::clone(&stdout)),
            collect(child.stderr.take().unwrap(), Arc::clone(&stderr)),
        ];
        Watcher {
            child,
            stdout,
            stderr,
            readers,
        }
    }

    /// The complete JSON lines printed so far, each checked against the tick-event schema.
    fn events(&self) -> Vec<Value> {
        let text = self.stdout.lock().unwrap().clone();
        let complete = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
        complete
            .lines()
            .map(|line| {
                let event: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not a JSON line: {line:?}: {e}"));
                let violations = autoctl::schema::violations("tick-event", &event);
                assert!(violations.is_empty(), "{event}: {violations:?}");
                event
            })
            .collect()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Wait until `ready` holds for the events so far; returns them.
    fn wait_for(&mut self, what: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let events = self.events();
            if ready(&events) {
                return events;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "the watcher exited ({status}) while waiting for {what}\nstderr: {}",
                    self.stderr()
                );
            }
            assert!(
                started.elapsed() < DEADLINE,
                "timed out waiting for {what}\nevents: {:#?}\nstderr: {}",
                &events[events.len().saturating_sub(5)..],
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_for_stderr(&mut self, what: &str) {
        let started = Instant::now();
        while !self.stderr().contains(what) {
            assert!(
                started.elapsed() < DEADLINE,
                "stderr never said {what:?}: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn kill(&self, signal: &str) {
        let status = StdCommand::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Wait for the watcher to exit; its exit code, stdout and stderr.
    fn exit(mut self) -> (Option<i32>, String, String) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "the watcher did not exit: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        for reader in self.readers.drain(..) {
            reader.join().unwrap();
        }
        (
            status.code(),
            self.stdout.lock().unwrap().clone(),
            self.stderr(),
        )
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn of<'a>(events: &'a [Value], session: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    events.iter().filter(move |e| e["session"] == session)
}

/// Events that saw a valid signal with this iteration number.
fn saw_iteration(events: &[Value], session: &str, iteration: u64) -> usize {
    of(events, session)
        .filter(|e| e["saw"]["signal"]["iteration"] == iteration)
        .count()
}

fn run_status(sb: &Sandbox, session: &str) -> Value {
    let output = sb
        .cmd()
        .args(["run", "status", "--format", "json", "--session", session])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    json_lines(&output).remove(0)
}

fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn log(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

/// A short wrapper around the scripted agent for dispatch mode, so the typed command line
/// fits the pane and is easy to find in its output.
fn wrapper(sb: &Sandbox, log_file: &Path) -> PathBuf {
    let wrapper = sb.path("dispatch-step");
    fs::write(
        &wrapper,
        format!(
            "#!/usr/bin/env bash\nexec {} --delay 0.1 --log {} --step \"$1\" --checkpoint=\"${{2#ck=}}\" \"$3\"\n",
            fake_agent().display(),
            log_file.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

/// Register a dispatch-mode run of the scripted agent on an existing session.
fn start_dispatch(sb: &Sandbox, name: &str, log_file: &Path) -> PathBuf {
    let dir = task(sb, name);
    let template = format!(
        "{} {{next}} ck={{checkpoint}} {{task}}",
        wrapper(sb, log_file).display()
    );
    sb.cmd()
        .args(["run", "start", "--session", name, "--mode", "dispatch"])
        .args(["--agent", "generic", "--command", &template, "--task"])
        .arg(&dir)
        .assert()
        .code(0);
    dir
}

/// The steps the agent ran, in order (one line per dispatched command it received).
fn steps_run(log_file: &Path) -> Vec<String> {
    log(log_file)
        .lines()
        .filter_map(|l| l.strip_prefix("start mode=dispatch step="))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect()
}

/// A `task_auto` row: session, status, stop reason, claimed by, iteration count.
type Row = (String, String, Option<String>, Option<String>, i64);
/// Arguments, environment, and what the one-line error must say.
type BadCase<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

/// plan, check, exec, check (NEEDS_FIX), exec, check (ACCEPT), merge, report.
const STEPS: [&str; 8] = [
    "plan", "check", "exec", "check", "exec", "check", "merge", "report",
];

/// In dispatch mode the watcher types the next command when the signal is written, not at
/// its heartbeat: the eight steps run, each once and in order, within the deadline, which is
/// shorter than one heartbeat. (How soon after the signal is measured in `bench/watch.sh`, not asserted here.)
#[test]
fn in_dispatch_mode_the_next_command_follows_the_signal_not_the_heartbeat() {
    let sb = Sandbox::new();
    let log_file = sb.path("agent.log");
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    session(&sb, "steps");
    start_dispatch(&sb, "steps", &log_file);
    let events = watcher.wait_for("the loop to finish", |events| {
        of(events, "steps").any(|e| e["decision"] == "finish")
    });
    assert_eq!(steps_run(&log_file), STEPS, "{}", log(&log_file));
    assert_eq!(
        of(&events, "steps")
            .filter(|e| e["decision"] == "dispatch")
            .count(),
        STEPS.len()
    );
    assert_eq!(run_status(&sb, "steps")["status"], "finished");
}

#[test]
fn a_watcher_and_four_concurrent_ticks_never_dispatch_twice() {
    let sb = Sandbox::new();
    let log_file = sb.path("agent.log");
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    session(&sb, "steps");
    start_dispatch(&sb, "steps", &log_file);
    let done = Arc::new(AtomicBool::new(false));
    let tickers: Vec<JoinHandle<Vec<Value>>> = (0..4)
        .map(|_| {
            let done = Arc::clone(&done);
            let mut cmd = sb.std_cmd();
            cmd.args(["run", "tick", "--all", "--heartbeat", "60s"]);
            std::thread::spawn(move || {
                let mut events = Vec::new();
                while !done.load(Ordering::SeqCst) {
                    let output = cmd.output().unwrap();
                    assert_eq!(output.status.code(), Some(0), "{output:?}");
                    events.extend(json_lines(&output));
                    std::thread::sleep(Duration::from_millis(10));
                }
                events
            })
        })
        .collect();
    // The watcher or one of the ticks sees the last signal.
    wait_until("the loop to finish", || {
        run_status(&sb, "steps")["status"] != "running"
    });
    done.store(true, Ordering::SeqCst);
    let events = watcher.events();
    let ticks: Vec<Value> = tickers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(!ticks.is_empty());
    // Every command was typed once: the agent ran each step once, in order ...
    assert_eq!(steps_run(&log_file), STEPS, "{}", log(&log_file));
    // ... and the watcher and the ticks together report exactly one dispatch per step.
    let dispatched = |events: &[Value]| {
        events
            .iter()
            .filter(|e| e["decision"] == "dispatch")
            .count()
    };
    assert_eq!(dispatched(&events) + dispatched(&ticks), STEPS.len());
    // They did overlap: somebody found the run claimed by another.
    let skips = events
        .iter()
        .chain(&ticks)
        .filter(|e| e["decision"] == "skip")
        .count();
    assert!(skips > 0, "no overlap happened");
    assert!(watcher.alive());
}

#[test]
fn sigterm_mid_burst_leaves_every_file_and_row_consistent() {
    let sb = Sandbox::new();
    // Three runs that the burst pushes past their iteration limit (the watcher writes their
    // stop files), three that keep running.
    let mut dirs = Vec::new();
    for i in 0..6 {
        let limit = if i < 3 { "4" } else { "1000" };
        dirs.push(observe_run(
            &sb,
            &format!("r{i}"),
            &["--max-iterations", limit],
        ));
    }
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    watcher.wait_for("the first heartbeat", |events| events.len() >= 6);
    let stop = Arc::new(AtomicBool::new(false));
    let burst = {
        let (dirs, stop) = (dirs.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut iteration = 0;
            while !stop.load(Ordering::SeqCst) && iteration < 2000 {
                iteration += 1;
                for dir in &dirs {
                    rename_write(dir, iteration);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            iteration
        })
    };
    watcher.wait_for("the burst to be under way", |events| events.len() >= 30);
    watcher.kill("TERM");
    let (code, out, err) = watcher.exit();
    stop.store(true, Ordering::SeqCst);
    let written = burst.join().unwrap();
    assert_eq!(code, Some(0), "SIGTERM is a clean stop: {err}");
    assert!(err.is_empty(), "{err}");
    // Every line is whole and a tick event.
    assert!(out.ends_with('\n'));
    for line in out.lines() {
        let event: Value = serde_json::from_str(line).unwrap();
        assert!(autoctl::schema::violations("tick-event", &event).is_empty());
    }
    // Every row is released and agrees with the files.
    let db = rusqlite::Connection::open(sb.path("state/autoctl.db")).unwrap();
    let mut rows = db
        .prepare("SELECT session_name, status, stop_reason, claimed_by, iteration_count FROM task_auto ORDER BY session_name")
        .unwrap();
    let rows: Vec<Row> = rows
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 6);
    for ((session, status, reason, claimed_by, iteration), dir) in rows.iter().zip(&dirs) {
        assert_eq!(claimed_by, &None, "{session} is still claimed");
        assert!(*iteration <= written as i64);
        let stop_file = dir.join(".auto-stop");
        match status.as_str() {
            "stopped" => {
                assert_eq!(reason.as_deref(), Some("max_iterations"), "{session}");
                let stop: Value = serde_json::from_slice(&fs::read(&stop_file).unwrap()).unwrap();
                assert_eq!(stop["reason"], "max_iterations", "{session}");
            }
            "running" => assert!(!stop_file.exists(), "{session} has a stop file"),
            other => panic!("{session}: {other}"),
        }
        let signal: Value =
            serde_json::from_slice(&fs::read(dir.join(".auto-signal")).unwrap()).unwrap();
        assert!(signal["iteration"].as_u64().unwrap() >= 1);
        // No half-written file of autoctl's is left behind.
        for entry in fs::read_dir(dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().to_string();
            assert!(
                !name.ends_with(".tmp") || name == ".test-signal.tmp",
                "{session}: {name}"
            );
        }
    }
    assert!(
        rows.iter().take(3).all(|r| r.1 == "stopped"),
        "the limited runs were stopped during the burst: {rows:?}"
    );
}

#[test]
fn rename_writes_editor_saves_and_bursts_are_each_seen() {
    let sb = Sandbox::new();
    let dir = observe_run(&sb, "a", &[]);
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    watcher.wait_for("the first heartbeat", |events| events.len() == 1);

    // A rename-write (what `autoctl signal write` and most agents do).
    rename_write(&dir, 1);
    watcher.wait_for("iteration 1", |e| saw_iteration(e, "a", 1) > 0);

    // An editor's save: the old file renamed to a backup, a new one written, the backup gone.
    fs::rename(dir.join(".auto-signal"), dir.join(".auto-signal~")).unwrap();
    let mut file = fs::File::create(dir.join(".auto-signal")).unwrap();
    let text = signal_json(2);
    file.write_all(&text.as_bytes()[..20]).unwrap();
    file.flush().unwrap();
    file.write_all(&text.as_bytes()[20..]).unwrap();
    drop(file);
    fs::remove_file(dir.join(".auto-signal~")).unwrap();
    let events = watcher.wait_for("iteration 2", |e| saw_iteration(e, "a", 2) > 0);
    // The watcher's own reads of the signal were not mistaken for news.
    assert_eq!(saw_iteration(&events, "a", 1), 1, "{events:#?}");

    // A burst of in-place rewrites is coalesced: fewer looks than writes, and the last wins.
    let before = events.len();
    for iteration in 3..=22 {
        fs::write(dir.join(".auto-signal"), signal_json(iteration)).unwrap();
    }
    let events = watcher.wait_for("iteration 22", |e| saw_iteration(e, "a", 22) > 0);
    let looks = events.len() - before;
    assert!(looks < 20, "{looks} ticks for 20 writes");
    assert_eq!(run_status(&sb, "a")["iteration"], 22);
    assert!(watcher.alive());
}

#[test]
fn a_task_dir_deleted_or_replaced_is_watched_again() {
    let sb = Sandbox::new();
    let dir = observe_run(&sb, "a", &["--max-iterations", "1000"]);
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    rename_write(&dir, 1);
    watcher.wait_for("iteration 1", |e| saw_iteration(e, "a", 1) > 0);

    // Deleted and recreated (a restore): the new dir is watched.
    let saved = sb.path("saved");
    fs::create_dir(&saved).unwrap();
    for name in [".index.md", ".target.md", ".auto-signal"] {
        fs::copy(dir.join(name), saved.join(name)).unwrap();
    }
    fs::remove_dir_all(&dir).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    fs::create_dir(&dir).unwrap();
    for name in [".index.md", ".target.md", ".auto-signal"] {
        fs::copy(saved.join(name), dir.join(name)).unwrap();
    }
    rename_write(&dir, 2);
    watcher.wait_for("iteration 2 in the recreated dir", |e| {
        saw_iteration(e, "a", 2) > 0
    });

    // Deleted and recreated at once, within one debounce window (ext4 then often gives the
    // new dir the old inode number): still a new dir, and still watched.
    for iteration in [3, 4] {
        fs::remove_dir_all(&dir).unwrap();
        fs::create_dir(&dir).unwrap();
        for name in [".index.md", ".target.md"] {
            fs::copy(saved.join(name), dir.join(name)).unwrap();
        }
        rename_write(&dir, iteration);
        watcher.wait_for("the signal in the dir recreated at once", |e| {
            saw_iteration(e, "a", iteration) > 0
        });
        // A later write, long after the watcher looked: only a watch on the new dir sees it.
        std::thread::sleep(Duration::from_millis(100));
        rename_write(&dir, iteration + 10);
        watcher.wait_for("a later write to the recreated dir", |e| {
            saw_iteration(e, "a", iteration + 10) > 0
        });
    }

    // Replaced by a rename (a checkout): the old inode moves away, the new one is watched.
    let next = sb.path("next");
    fs::create_dir(&next).unwrap();
    for name in [".index.md", ".target.md", ".auto-signal"] {
        fs::copy(dir.join(name), next.join(name)).unwrap();
    }
    fs::rename(&dir, sb.path("old")).unwrap();
    fs::rename(&next, &dir).unwrap();
    rename_write(&dir, 20);
    watcher.wait_for("iteration 20 in the replacing dir", |e| {
        saw_iteration(e, "a", 20) > 0
    });
    // Writes to the moved-away dir are not this run's any more.
    rename_write(&sb.path("old"), 99);
    rename_write(&dir, 21);
    let events = watcher.wait_for("iteration 21", |e| saw_iteration(e, "a", 21) > 0);
    assert_eq!(saw_iteration(&events, "a", 99), 0);
    assert_eq!(run_status(&sb, "a")["status"], "running");
    // The only thing worth saying was that the dir was gone for a while.
    for line in watcher.stderr().lines() {
        assert!(
            line.contains("is gone; watching for it to come back"),
            "{}",
            watcher.stderr()
        );
    }
}

#[test]
fn past_the_watch_limit_dirs_and_the_registry_are_polled_with_a_warning() {
    let sb = Sandbox::new();
    let a = observe_run(&sb, "a", &[]);
    // The test hook caps inotify watches at zero: everything falls back to polling.
    let mut watcher = Watcher::start(&sb, &["--all"], &[("AUTOCTL_WATCH_LIMIT", "0")]);
    watcher.wait_for_stderr("cannot watch the registry's directory");
    watcher.wait_for_stderr("session \"a\": cannot watch");
    assert!(watcher.stderr().contains("polling it every 250ms"));
    assert!(watcher.stderr().contains("fs.inotify.max_user_watches"));
    rename_write(&a, 1);
    watcher.wait_for("iteration 1 by polling", |e| saw_iteration(e, "a", 1) > 0);
    // A run registered later is found by polling the registry, and its dir is polled too.
    let b = observe_run(&sb, "b", &[]);
    watcher.wait_for("run b", |e| of(e, "b").count() > 0);
    rename_write(&b, 1);
    watcher.wait_for("b's iteration 1", |e| saw_iteration(e, "b", 1) > 0);
    // With room for one watch (the registry's), the runs are still polled.
    drop(watcher);
    let mut watcher = Watcher::start(&sb, &["--all"], &[("AUTOCTL_WATCH_LIMIT", "1")]);
    watcher.wait_for_stderr("session \"b\": cannot watch");
    assert!(!watcher.stderr().contains("registry's directory"));
    rename_write(&b, 2);
    watcher.wait_for("b's iteration 2", |e| saw_iteration(e, "b", 2) > 0);
}

#[test]
fn a_locked_registry_is_retried_with_backoff_not_fatal() {
    let sb = Sandbox::new();
    let dir = observe_run(&sb, "a", &[]);
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    watcher.wait_for("the first heartbeat", |events| events.len() == 1);
    let mut db = rusqlite::Connection::open(sb.path("state/autoctl.db")).unwrap();
    let lock = db
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    rename_write(&dir, 1);
    watcher.wait_for_stderr("retrying in");
    assert!(
        watcher.stderr().contains("database is locked"),
        "{}",
        watcher.stderr()
    );
    assert!(watcher.alive());
    assert_eq!(saw_iteration(&watcher.events(), "a", 1), 0);
    lock.rollback().unwrap();
    watcher.wait_for("iteration 1 once the lock is gone", |e| {
        saw_iteration(e, "a", 1) > 0
    });
    assert!(watcher.alive());
}

#[test]
fn runs_started_later_are_picked_up_and_stopped_runs_dropped() {
    let sb = Sandbox::new();
    // Nothing registered yet (not even a database): a service started at boot.
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    wait_until("the watcher to create the registry", || {
        sb.path("state/autoctl.db").exists()
    });
    // It says it is watching, not silent: one line on stderr.
    watcher.wait_for_stderr("no loop is running yet; watching for new ones");
    let a = observe_run(&sb, "a", &[]);
    watcher.wait_for("run a's first tick", |e| of(e, "a").count() > 0);
    rename_write(&a, 1);
    watcher.wait_for("a's iteration 1", |e| saw_iteration(e, "a", 1) > 0);
    sb.cmd()
        .args(["run", "stop", "--session", "a"])
        .assert()
        .code(0);
    rename_write(&a, 2);
    let b = observe_run(&sb, "b", &[]);
    rename_write(&b, 1);
    let events = watcher.wait_for("b's iteration 1", |e| saw_iteration(e, "b", 1) > 0);
    // A stopped run is not ticked. A tick that claimed it before `run stop` returned may still
    // read the signal written after; what it decided is not kept, and it says so.
    for event in of(&events, "a").filter(|e| e["saw"]["signal"]["iteration"] == 2) {
        assert!(
            event["reasons"]
                .to_string()
                .contains("this tick's state was not saved"),
            "{event}"
        );
    }
    let a = run_status(&sb, "a");
    assert_eq!(
        (&a["status"], &a["iteration"]),
        (&"stopped".into(), &1.into()),
        "{a}"
    );
}

/// Seed 000's daemon reacts to `.auto-stop` at once: `autoctl stop write` is followed by the
/// run's `stop` event and status `stopped`, within the deadline, shorter than one heartbeat.
#[test]
fn a_stop_file_ends_the_run_at_once_not_at_the_heartbeat() {
    let sb = Sandbox::new();
    let dir = observe_run(&sb, "a", &[]);
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    watcher.wait_for("the first look", |e| of(e, "a").count() == 1);
    sb.cmd()
        .args(["stop", "write"])
        .arg(&dir)
        .args(["--reason", "user_stop", "--message", "enough"])
        .assert()
        .code(0);
    let events = watcher.wait_for("the stop event", |e| {
        of(e, "a").any(|event| event["decision"] == "stop")
    });
    let stop = of(&events, "a").find(|e| e["decision"] == "stop").unwrap();
    assert!(stop["reasons"].to_string().contains("user_stop"), "{stop}");
    let status = run_status(&sb, "a");
    assert_eq!(
        (status["status"].as_str(), status["stop_reason"].as_str()),
        (Some("stopped"), Some("user_stop")),
        "{status}"
    );
}

#[test]
fn a_session_watcher_exits_0_when_its_loop_ends() {
    let sb = Sandbox::new();
    let dir = observe_run(&sb, "a", &[]);
    let mut watcher = Watcher::start(&sb, &["--session", "a"], &[]);
    watcher.wait_for("the first heartbeat", |events| events.len() == 1);
    sb.cmd()
        .args(["signal", "write"])
        .arg(&dir)
        .args(["--step", "report", "--result", "(done)"])
        .assert()
        .code(0);
    let (code, out, err) = watcher.exit();
    assert_eq!(code, Some(0), "{err}");
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last["decision"], "finish");
    // A session without a run: exit 1, one line.
    let output = sb
        .cmd()
        .args(["run", "watch", "--session", "nobody"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(one_stderr_line(&output).contains("no run for session \"nobody\""));
    assert!(stdout(&output).is_empty());
}

/// `--format text` (the default on a terminal): one line per decision, time (local, TZ),
/// session, decision, the reasons in words; no JSON.
#[test]
fn the_text_format_is_one_readable_line_per_decision() {
    let sb = Sandbox::new();
    let dir = observe_run(&sb, "a", &[]);
    let watcher = Watcher::start(
        &sb,
        &["--session", "a", "--format", "text"],
        &[("TZ", "UTC")],
    );
    wait_until("the first line", || {
        watcher.stdout.lock().unwrap().lines().count() >= 1
    });
    sb.cmd()
        .args(["signal", "write"])
        .arg(&dir)
        .args(["--step", "report", "--result", "(done)"])
        .assert()
        .code(0);
    let (code, out, err) = watcher.exit();
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 2, "{out}");
    for line in &lines {
        let (time, rest) = line.split_at(8);
        assert!(
            chrono::NaiveTime::parse_from_str(time, "%H:%M:%S").is_ok(),
            "{line}"
        );
        assert!(rest.starts_with("  a  "), "{line}");
        assert!(!line.contains('{'), "{line}");
    }
    let last = lines.last().unwrap();
    assert!(
        last.contains("  finish    signal: report (done) -> (stop)"),
        "{last}"
    );
}

/// What an agent's hooks record (a permission it asks for, a turn that ended) is looked at
/// soon, not at the next heartbeat: the watcher follows the hook records' dir too, the dir
/// made by the first hook call after the watcher started included.
#[test]
fn a_hook_record_gets_its_runs_looked_at_before_the_heartbeat() {
    let sb = Sandbox::new();
    observe_run(&sb, "a", &[]);
    let mut watcher = Watcher::spawn(&sb, &["run", "watch", "--heartbeat", "1h", "--all"], &[]);
    watcher.wait_for("the first heartbeat", |e| of(e, "a").count() == 1);
    assert!(!sb.path("state/hooks").exists());
    let payload = r#"{"session_id":"s1","transcript_path":"/nonexistent","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"go"}"#;
    for round in 2..=3 {
        sb.cmd()
            .args(["hook", "event"])
            .write_stdin(payload)
            .assert()
            .code(0);
        watcher.wait_for("a look after the hook record", |e| {
            of(e, "a").count() >= round
        });
    }
}

#[test]
fn sigint_stops_the_watcher_with_130() {
    let sb = Sandbox::new();
    observe_run(&sb, "a", &[]);
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    watcher.wait_for("the first heartbeat", |events| events.len() == 1);
    watcher.kill("INT");
    let (code, _, err) = watcher.exit();
    assert_eq!(code, Some(130));
    assert_eq!(err.trim(), "autoctl: interrupted");
    // SIGHUP (the terminal went away) is an interruption too.
    let mut watcher = Watcher::start(&sb, &["--all"], &[]);
    watcher.wait_for("the first heartbeat", |events| events.len() == 1);
    watcher.kill("HUP");
    let (code, _, err) = watcher.exit();
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(err.trim(), "autoctl: interrupted");
}

#[test]
fn bad_arguments_and_a_bad_registry_are_one_line_and_exit_2() {
    let sb = Sandbox::new();
    let cases: &[BadCase] = &[
        (&["run", "watch"], &[], "--session"),
        (
            &["run", "watch", "--all", "--session", "a"],
            &[],
            "cannot be used with",
        ),
        (
            &["run", "watch", "--all", "--heartbeat", "0s"],
            &[],
            "heartbeat",
        ),
        (
            &["run", "watch", "--all", "--heartbeat", "soon"],
            &[],
            "heartbeat",
        ),
        (
            &["run", "watch", "--session", "a\u{7}b"],
            &[],
            "control character",
        ),
        (
            &["run", "watch", "--all"],
            &[("AUTOCTL_WATCH_LIMIT", "lots")],
            "AUTOCTL_WATCH_LIMIT",
        ),
    ];
    for (args, env, expected) in cases {
        let mut cmd = sb.cmd();
        cmd.args(*args);
        for (key, value) in *env {
            cmd.env(key, value);
        }
        let output = cmd.output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        let line = one_stderr_line(&output);
        assert!(line.contains(expected), "{args:?}: {line}");
    }
    // No state dir at all: a --session watcher has no run to watch (exit 1, like `run tick
    // --session`) and creates nothing; an --all watcher is a service started before any run.
    let missing = sb.path("no-state-yet");
    let output = sb
        .cmd()
        .env("AUTOCTL_STATE_DIR", &missing)
        .args(["run", "watch", "--session", "a"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(one_stderr_line(&output).contains("no run for session \"a\""));
    assert!(!missing.exists());
    // A state dir that cannot be created or written: one line, exit 2.
    let file = sb.write("not-a-dir", "x");
    let output = sb
        .cmd()
        .env("AUTOCTL_STATE_DIR", file.join("state"))
        .args(["run", "watch", "--all"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(one_stderr_line(&output).contains("not-a-dir"));
    fs::create_dir_all(sb.path("state")).unwrap();
    fs::set_permissions(sb.path("state"), fs::Permissions::from_mode(0o555)).unwrap();
    let output = sb.unprivileged(&["run", "watch", "--all"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(one_stderr_line(&output).contains("state"));
    assert!(!sb.path("state/autoctl.db").exists());
    fs::set_permissions(sb.path("state"), fs::Permissions::from_mode(0o755)).unwrap();
    // A state dir that is a file, and a database that is not one.
    let output = sb
        .cmd()
        .env("AUTOCTL_STATE_DIR", &file)
        .args(["run", "watch", "--all"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("not a directory"));
    sb.write(
        "state/autoctl.db",
        "this is not a database, just text\n".repeat(200),
    );
    let output = sb.cmd().args(["run", "watch", "--all"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("autoctl.db"));
    assert_eq!(
        fs::read_to_string(sb.path("state/autoctl.db")).unwrap(),
        "this is not a database, just text\n".repeat(200),
        "left as it was"
    );
}

/// A sub-second heartbeat would make the watcher a busy loop over every run (a batched tick,
/// tmux captures and SQLite writes many times a second): at least 1 s, refused otherwise with
/// one line before anything runs. (`run tick --heartbeat` is one-shot and keeps short values.)
#[test]
fn a_heartbeat_under_one_second_is_refused() {
    let sb = Sandbox::new();
    observe_run(&sb, "a", &[]);
    for heartbeat in ["1ms", "10ms", "999ms"] {
        let output = sb
            .cmd()
            .args(["run", "watch", "--all", "--heartbeat", heartbeat])
            .timeout(Duration::from_secs(5))
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{heartbeat}: {} lines printed; stderr: {}",
            stdout(&output).lines().count(),
            String::from_utf8_lossy(&output.stderr)
        );
        let line = one_stderr_line(&output);
        assert!(line.contains("at least 1s"), "{heartbeat}: {line}");
        assert!(stdout(&output).is_empty(), "{heartbeat}: nothing ticked");
    }
    assert_eq!(run_status(&sb, "a")["ticks"], 0, "no run was ticked");
    // One second is the floor, and allowed.
    let mut watcher = Watcher::spawn(&sb, &["run", "watch", "--all", "--heartbeat", "1s"], &[]);
    watcher.wait_for("the first heartbeat", |e| of(e, "a").count() == 1);
}

#[test]
fn the_systemd_unit_runs_as_written_and_stops_cleanly() {
    let unit = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/systemd/autoctl-watch.service"),
    )
    .unwrap();
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("an ExecStart line");
    let args: Vec<&str> = exec.split_whitespace().skip(1).collect();
    assert_eq!(&args[..3], ["run", "watch", "--all"], "{exec}");
    assert!(
        unit.contains("KillMode=mixed"),
        "SIGTERM for the watcher only"
    );
    let sb = Sandbox::new();
    let dir = observe_run(&sb, "a", &[]);
    let mut watcher = Watcher::spawn(&sb, &args, &[]);
    watcher.wait_for("the first heartbeat", |events| events.len() == 1);
    rename_write(&dir, 1);
    watcher.wait_for("iteration 1", |e| saw_iteration(e, "a", 1) > 0);
    // What `systemctl stop` does.
    watcher.kill("TERM");
    let (code, _, err) = watcher.exit();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

/// A paced run is looked at on every hook record of any session (at most once a second);
/// its decision is printed when it changes and at its heartbeat, not per look (the live
/// tier printed 194 paced lines a minute for two runs). The other run's looks show the
/// records were seen.
#[test]
fn a_paced_run_is_printed_when_its_pacing_changes_not_per_hook_record() {
    use crate::governor::{at, start, statusline};
    use crate::typed_tick::in_pane;
    let sb = Sandbox::new();
    let paced = start(&sb, "paced", &["--account", "team"]);
    let out = in_pane(
        &sb,
        &paced.pane,
        &at(1),
        &["statusline"],
        &statusline(96.0, 3600, 20.0),
    );
    assert!(out.status.success(), "{out:?}");
    observe_run(&sb, "b", &[]);
    let now = at(2);
    let mut watcher = Watcher::spawn(
        &sb,
        &["run", "watch", "--heartbeat", "1h", "--all"],
        &[("AUTOCTL_NOW", now.as_str())],
    );
    watcher.wait_for("the first heartbeat", |e| {
        of(e, "paced").count() == 1 && of(e, "b").count() == 1
    });
    let payload = r#"{"session_id":"s1","transcript_path":"/nonexistent","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"go"}"#;
    for round in 2..=4 {
        sb.cmd()
            .args(["hook", "event"])
            .write_stdin(payload)
            .assert()
            .code(0);
        watcher.wait_for("a look after the hook record", |e| {
            of(e, "b").count() >= round
        });
    }
    let events = watcher.events();
    let lines: Vec<&Value> = of(&events, "paced").collect();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(
        lines[0]["run"]["wait"]["kind"], "quota-paced",
        "{}",
        lines[0]
    );
    watcher.kill("TERM");
    let (code, _, err) = watcher.exit();
    assert_eq!(code, Some(0), "{err}");
}

/// `hook event` wakes the watcher by writing the record; with a fixed `AUTOCTL_NOW` (a test's,
/// or a replay's) an event that changes nothing in the record — the same event again at the
/// same instant — writes nothing, so there is nothing to wake for (the issue-25 note "hook
/// event with a fixed AUTOCTL_NOW did not wake run watch": the test sent the same
/// UserPromptSubmit three times at one instant). Events that change the record wake it at
/// any clock.
#[test]
fn hook_records_wake_the_watcher_under_a_fixed_clock_and_a_repeat_changes_nothing() {
    let sb = Sandbox::new();
    observe_run(&sb, "b", &[]);
    // Before the run's start (as the paced test's clock): its timeout clock stays at zero.
    let now = crate::governor::at(2);
    let now = now.as_str();
    let mut watcher = Watcher::spawn(
        &sb,
        &["run", "watch", "--heartbeat", "1h", "--all"],
        &[("AUTOCTL_NOW", now)],
    );
    watcher.wait_for("the first heartbeat", |e| of(e, "b").count() == 1);
    let event = |name: &str| {
        let payload = format!(
            r#"{{"session_id":"s1","transcript_path":"/nonexistent","cwd":"/tmp","hook_event_name":"{name}","prompt":"go","stop_hook_active":false}}"#
        );
        sb.cmd()
            .env("AUTOCTL_NOW", now)
            .args(["hook", "event"])
            .write_stdin(payload)
            .assert()
            .code(0);
    };
    let journal = sb.path("state/hooks/session-s1.log");
    for (round, name) in [
        (2, "UserPromptSubmit"),
        (3, "Stop"),
        (4, "UserPromptSubmit"),
    ] {
        event(name);
        watcher.wait_for("a look after the hook record", |e| {
            of(e, "b").count() >= round
        });
    }
    // The same prompt again at the same instant: the record is as it was, nothing is
    // written. (A Stop is not "the same": it counts Stops in a row.)
    let before = fs::read_to_string(&journal).unwrap();
    event("UserPromptSubmit");
    assert_eq!(
        fs::read_to_string(&journal).unwrap(),
        before,
        "nothing written"
    );
    watcher.kill("TERM");
    let (code, _, err) = watcher.exit();
    assert_eq!(code, Some(0), "{err}");
}
