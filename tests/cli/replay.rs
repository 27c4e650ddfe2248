//! Live runs of the real Codex CLI and Gemini CLI, replayed through autoctl (issue 28).
//!
//! `tests/live/agents_live.py --record DIR` ran each agent's 3-step Stop-hook loop under `run
//! watch` with autoctl's hooks installed, offline against the fake model, and kept
//! `tests/fixtures/live/AGENT/CHECK/timeline.json`: every autoctl call of the agent's side in
//! order (its hooks, with the payloads they read, and the model's `signal write`), every tick
//! of `run watch` with the screen it read (`screens/`), and what that tick decided. Here the
//! same calls run again at their recorded times (`AUTOCTL_NOW`) in a pane that shows each
//! tick's screen (`tests/fixtures/agents/replay-agent.py`, as `node`), and every tick must go
//! by the same source, read the same state, count the same start-up readings and decide as
//! it did live (but a tick the agent's CPU time made wait, a screen the sampler missed, and the
//! one working line today's rule reads by the hook: see `replay`); the run ends as it ended
//! live, and its typed share is the live one.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::tmuxfix::{capture, repo, tmux, wait_for};
use crate::typed_tick::pane_env;
use crate::util::{Sandbox, json_lines, with_stdin};

/// A live tick's reason when the agent's processes spent CPU time while it worked (see
/// `wait::tool_running`): the replay agent spends none.
const CPU_WAIT: &str = "a tool is running; not a stall; the timeout clock runs";

/// The recorded paths, as `agents_live.py` wrote them (its scratch paths replaced).
const PROJECT: &str = "/home/dev/proj";

fn recording(agent: &str, check: &str) -> (PathBuf, Value) {
    let dir = repo("tests/fixtures/live").join(agent).join(check);
    let timeline = serde_json::from_slice(&fs::read(dir.join("timeline.json")).unwrap()).unwrap();
    (dir, timeline)
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// How long after taking its clock (its recorded time) a live tick could still read a hook
/// record: a debug build's tick on the loaded machine the recordings were made on got to it
/// that much later (a Gemini tick went by an AfterTool whose hook started 53 ms after the
/// tick's clock).
const TICK_READS_WITHIN: i64 = 100;

fn millis(time: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(time)
        .unwrap()
        .timestamp_millis()
}

/// Whether this live tick saw this call of the agent's side, by what the tick says. A tick
/// takes its clock, then reads the pane, the hook record and the task's signal while the
/// agent goes on, so a call that started after the tick's clock may have been seen:
/// - a hook call: the tick says which record it went by (`hook_age_ms` before its clock),
///   so the calls up to that record's time were seen (an age of 0 is a record at or after
///   its clock: those within [`TICK_READS_WITHIN`]); a tick that went by the screen saw
///   those before its clock;
/// - the model's `signal write`: seen when it started before the tick's clock or the tick
///   reports that step's signal (`signal: STEP …`).
fn seen_by(tick: &Value, call: &Value) -> bool {
    let at = millis(text(&tick["time"]));
    let started = millis(text(&call["time"]));
    let args = call["args"].as_array().unwrap();
    if args[0] != "hook" {
        let step = args
            .iter()
            .position(|a| a == "--step")
            .and_then(|i| args.get(i + 1))
            .map(text);
        let reported = step.is_some_and(|step| {
            tick["reasons"].as_array().is_some_and(|reasons| {
                reasons
                    .iter()
                    .any(|r| text(r).starts_with(&format!("signal: {step} ")))
            })
        });
        return started <= at || reported;
    }
    let until = match (tick["source"].as_str(), tick["hook_age_ms"].as_i64()) {
        (Some("hook"), Some(0)) => at + TICK_READS_WITHIN,
        (Some("hook"), Some(age)) => at - age,
        _ => at,
    };
    started <= until
}

/// The screen `file` drawn by the replay agent: the pane shows its lines.
fn shows(screen: &str, file: &str) -> bool {
    let want: Vec<&str> = file.trim_end().lines().map(str::trim_end).collect();
    let got: Vec<&str> = screen.trim_end().lines().map(str::trim_end).collect();
    let want: Vec<String> = want
        .iter()
        .map(|l| {
            l.chars()
                .take(119)
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    let skip = want.len().saturating_sub(39);
    got.len() >= want.len() - skip && want[skip..] == got[got.len() - (want.len() - skip)..]
}

fn show(sb: &Sandbox, control: &Path, screen: &Path) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let deadline = Instant::now() + Duration::from_secs(10);
    // Without blocking: a FIFO with no reader (the replay agent between two reads, or gone)
    // refuses the open, and the test tries again until its deadline.
    let mut fifo = loop {
        match fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(control)
        {
            Ok(fifo) => break fifo,
            Err(err) => {
                assert!(Instant::now() < deadline, "{control:?}: {err}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    writeln!(fifo, "{}", screen.display()).unwrap();
    drop(fifo);
    let file = fs::read_to_string(screen).unwrap();
    while !shows(&capture(sb, "live"), &file) {
        assert!(
            Instant::now() < deadline,
            "the replay agent did not draw {screen:?}: {}",
            capture(sb, "live")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Replay one recording; returns the last `run status` and what autoctl typed into the pane.
fn replay(agent: &str, check: &str) -> (Value, String) {
    let (dir, timeline) = recording(agent, check);
    let sb = Sandbox::new();
    let project = sb.module("proj");
    let here = project.display().to_string();
    let started = text(&timeline["run_started"]);
    let setup = |args: &[&str]| {
        let out = sb
            .std_cmd()
            .current_dir(&project)
            .env("AUTOCTL_NOW", started)
            .env("TZ", "UTC")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
    };
    setup(&["task", "new", "TASK/hello", "--title", "Say hello"]);
    fs::write(
        project.join("TASK/hello/.target.md"),
        "# Target\nSay hello in hello.txt.\n",
    )
    .unwrap();
    setup(&["hook", "install", "--agent", agent]);
    setup(&[
        "loop",
        "init",
        "--task",
        "TASK/hello",
        "--max-iterations",
        "6",
    ]);
    // A shell in the project, as the live pane was; `run start --launch` starts the replay
    // agent there, showing the first tick's screen.
    let ticks = timeline["ticks"].as_array().unwrap();
    let control = sb.path("control");
    let first = dir.join("screens").join(text(&ticks[0]["screen"]));
    let out = std::process::Command::new("mkfifo")
        .arg(&control)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = tmux(
        &sb,
        &[
            "new-session",
            "-d",
            "-s",
            "live",
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            &here,
            "env PS1='$ ' bash --norc --noprofile",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    wait_for(&sb, "live", "the shell prompt", |s, _| {
        s.trim_end().ends_with('$')
    });
    let launch = format!(
        "python3 {} --as node {} {} {}",
        repo("tests/fixtures/agents/replay-agent.py").display(),
        control.display(),
        sb.path("keys").display(),
        first.display()
    );
    let out = sb
        .std_cmd()
        .current_dir(&project)
        .env("AUTOCTL_NOW", started)
        .env("TZ", "UTC")
        .args([
            "run",
            "start",
            "--session",
            "live",
            "--task",
            "TASK/hello",
            "--agent",
            agent,
            "--mode",
            "observe",
            "--launch",
            &launch,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    wait_for(&sb, "live", "the replay agent", |_, command| {
        command == "node"
    });
    let (tmux_var, pane) = pane_env(&sb, "live");
    let mut mismatches = Vec::new();
    let mut cpu_waits = 0;
    let mut working_lines = 0;
    let mut previous_class = String::new();
    let mut unsampled = 0;
    let mut last = Value::Null;
    let calls = timeline["calls"].as_array().unwrap();
    let mut next = 0;
    let call = |call: &Value| {
        let args: Vec<String> = call["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| text(a).replace(PROJECT, &here))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let stdin = match call["stdin"].as_str() {
            Some(file) => fs::read_to_string(dir.join(file))
                .unwrap()
                .replace(PROJECT, &here)
                .into_bytes(),
            None => Vec::new(),
        };
        let at = text(&call["time"]);
        let mut cmd = sb.std_cmd();
        cmd.current_dir(&project)
            .env("TMUX", &tmux_var)
            .env("TMUX_PANE", &pane)
            .env("AUTOCTL_NOW", at)
            .env("TZ", "UTC")
            .env("GEMINI_PROJECT_DIR", &here)
            .env("CLAUDE_PROJECT_DIR", &here);
        let out = with_stdin(cmd, &args, &stdin);
        assert_eq!(out.status.code(), Some(0), "{at} {args:?}: {out:?}");
    };
    for tick in ticks {
        // The calls this tick saw live, in the order they were made.
        while let Some(c) = calls.get(next).filter(|c| seen_by(tick, c)) {
            call(c);
            next += 1;
        }
        let at = text(&tick["time"]);
        if let Some(screen) = tick["screen"].as_str() {
            show(&sb, &control, &dir.join("screens").join(screen));
        }
        let out = sb
            .std_cmd()
            .env("AUTOCTL_NOW", at)
            .env("TZ", "UTC")
            .args(["run", "tick", "--all", "--heartbeat", "2s"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{at}: {out:?}");
        let Some(event) = json_lines(&out).into_iter().next() else {
            mismatches.push(format!("{at}: no tick event (recorded {tick})"));
            continue;
        };
        let state = &event["state"];
        let got = (
            text(&state["source"]).to_string(),
            text(&state["state"]).to_string(),
            state["startup"].as_bool().unwrap_or(false),
            text(&event["decision"]).to_string(),
        );
        let want = (
            text(&tick["source"]).to_string(),
            text(&tick["state"]).to_string(),
            tick["startup"].as_bool().unwrap_or(false),
            recorded_decision(tick).to_string(),
        );
        // A live tick that went by the CPU time of the agent's processes (Codex's node
        // working on a request counts as a running tool: not a stall) waited where the
        // replay agent, which spends none, goes on: the same reading, and neither types.
        let by_cpu = want.3 == "wait"
            && got.3 == "progress"
            && tick["reasons"]
                .as_array()
                .is_some_and(|r| r.iter().any(|r| r == CPU_WAIT));
        // A live tick that read the working line the agent drew just after its tool started
        // (the class before was another) by the screen, the tool start a moment older than
        // the line: today the start describes that line (f993974), the same state and
        // decision by the hook.
        let drawn_line = (want.0.as_str(), got.0.as_str(), want.1.as_str())
            == ("screen", "hook", "working")
            && (&got.1, got.2, &got.3) == (&want.1, want.2, &want.3)
            && text(&tick["class"]) == "working"
            && previous_class != "working";
        previous_class = text(&tick["class"]).to_string();
        if tick["screen_matched"] == false {
            // The sampler missed the screen this tick read (it lasted less than 0.1 s): the
            // pane showed another, so the tick is not compared.
            unsampled += 1;
        } else if by_cpu && (&got.0, &got.1, got.2) == (&want.0, &want.1, want.2) {
            cpu_waits += 1;
        } else if drawn_line {
            working_lines += 1;
        } else if got != want {
            mismatches.push(format!(
                "{at}: live {want:?}, replayed {got:?}: {}",
                event["reasons"]
            ));
        }
        last = event;
    }
    for c in &calls[next..] {
        call(c);
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} ticks decided otherwise than live:\n{}",
        mismatches.len(),
        ticks.len(),
        mismatches.join("\n")
    );
    assert!(last.is_object());
    // Most ticks are the recorded decision itself (the CPU waits are the rest).
    assert!(
        cpu_waits * 2 < ticks.len(),
        "{cpu_waits} of {} ticks",
        ticks.len()
    );
    assert!(
        working_lines <= 1,
        "{working_lines} working lines read by the hook"
    );
    assert!(
        unsampled <= 1,
        "{unsampled} ticks read a screen the sampler missed"
    );
    let out = sb
        .cmd()
        .args(["run", "status", "--session", "live", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let keys = String::from_utf8_lossy(&fs::read(sb.path("keys")).unwrap_or_default()).into_owned();
    (json_lines(&out).remove(0), keys)
}

/// A recorded tick's decision in today's words. The recordings were made before a quiet tick
/// said `progress`: it said `continue` then (and a silent continue said `answer`; none was
/// recorded), so their `continue` is today's `progress`. The recordings stay as recorded.
fn recorded_decision(tick: &Value) -> &str {
    match text(&tick["decision"]) {
        "continue" => "progress",
        decision => decision,
    }
}

/// The live share, counted from the recorded ticks as `run status` counts it.
fn live_share(agent: &str, check: &str) -> (u64, u64, u64) {
    let (_, timeline) = recording(agent, check);
    let ticks = timeline["ticks"].as_array().unwrap();
    let counted = |f: &dyn Fn(&Value) -> bool| ticks.iter().filter(|t| f(t)).count() as u64;
    let startup = counted(&|t| t["startup"].as_bool().unwrap_or(false));
    let screen = counted(&|t| !t["startup"].as_bool().unwrap_or(false) && t["source"] == "screen");
    let typed = counted(&|t| {
        !t["startup"].as_bool().unwrap_or(false)
            && t["source"].as_str().is_some_and(|s| s != "screen")
    });
    (typed, screen, startup)
}

fn assert_share(status: &Value, agent: &str, check: &str) {
    let (typed, screen, startup) = live_share(agent, check);
    let sources = &status["sources"];
    assert_eq!(sources["screen"], screen, "{status}");
    assert_eq!(sources["startup"], startup, "{status}");
    let replayed = sources["hook"].as_u64().unwrap()
        + sources["statusline"].as_u64().unwrap()
        + sources["app-server"].as_u64().unwrap();
    assert_eq!(replayed, typed, "{status}");
    // The goal, on the recording: at least 95 % of the decisions went by the agent's
    // own typed channels.
    assert!(
        sources["typed_percent"].as_f64().unwrap() >= 95.0,
        "{status}"
    );
}

#[test]
fn a_live_gemini_loop_replays_to_the_same_decisions() {
    let (status, _) = replay("gemini", "loop");
    assert_eq!(status["status"], "finished", "{status}");
    assert_share(&status, "gemini", "loop");
}

#[test]
fn a_live_codex_loop_replays_to_the_same_decisions() {
    let (status, _) = replay("codex", "loop");
    assert_eq!(status["status"], "finished", "{status}");
    assert_share(&status, "codex", "loop");
}

/// Codex's usage limit in the middle of the loop: the banner's reset waited out, one
/// `continue` typed at the composer after the reset and its margin, the old banner above the
/// resumed turn not taken for a new limit, and the loop finished.
#[test]
fn a_live_codex_usage_limit_replays_to_one_resume() {
    let (_, timeline) = recording("codex", "limit");
    let decided = |d: &str| {
        timeline["ticks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["decision"] == d)
            .count()
    };
    assert_eq!((decided("resume"), decided("escalate")), (1, 0), "live");
    let (status, keys) = replay("codex", "limit");
    assert_eq!(status["status"], "finished", "{status}");
    assert_eq!(keys.matches("continue").count(), 1, "typed: {keys:?}");
}
