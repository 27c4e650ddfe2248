//! Issue 23 item 2: a tick consumes exactly the signal it decided on, never the one the step
//! it typed writes a moment later — with the tick's `unlink(2)` calls delayed by strace's
//! syscall injection, and with the tick killed while the signal is renamed aside.

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::tmuxfix::start_in_shell;
use crate::util::{Sandbox, bin};

/// A module whose plan step is done (its signal asks for the post-plan check), and a
/// dispatch run into a shell whose step command writes the step's own signal at once and
/// then logs that it ran: the fastest step there is.
fn fast_step_run(sb: &Sandbox, session: &str) -> (PathBuf, PathBuf) {
    let dir = sb.module("TASK/fast");
    sb.write(
        "TASK/fast/.index.md",
        "---\ntitle: Fast\nstatus: draft\ncreated: 2024-01-01T00:00:00Z\nupdated: 2024-01-02T00:00:00Z\n---\n",
    );
    sb.write("TASK/fast/.target.md", "# Target\n\nFast steps.\n");
    sb.cmd()
        .args(["signal", "write"])
        .arg(&dir)
        .args([
            "--step",
            "plan",
            "--result",
            "(generated)",
            "--iteration",
            "1",
        ])
        .assert()
        .code(0);
    let ran = sb.path("ran.log");
    // {next} is the step typed (check); its signal is the check's verdict, iteration 2,
    // written a moment after the keys (the time a real step takes at the very least).
    let template = format!(
        "sleep 0.2; {} signal write {} --step {{next}} --result PASS --iteration 2 && echo ran {{next}} >> {}",
        bin(),
        dir.display(),
        ran.display()
    );
    let target = start_in_shell(sb, session, "true");
    sb.cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:00:00Z")
        .args(["run", "start", "--session", session, "--target", &target])
        .args([
            "--mode",
            "dispatch",
            "--agent",
            "generic",
            "--command",
            &template,
        ])
        .arg("--task")
        .arg(&dir)
        .assert()
        .code(0);
    (dir, ran)
}

/// Poll until the step has logged that it ran (it writes its signal first).
fn step_ran(ran: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while fs::read_to_string(ran).unwrap_or_default() != "ran check\n" {
        assert!(
            std::time::Instant::now() < deadline,
            "the step never ran: {:?}",
            fs::read_to_string(ran)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal_on_disk(dir: &Path) -> Option<Value> {
    fs::read(dir.join(".auto-signal"))
        .ok()
        .map(|bytes| serde_json::from_slice(&bytes).unwrap())
}

/// The strace on PATH, or a failure that says how to install it (never a silent skip: CI
/// installs it).
fn strace() -> &'static str {
    let found = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        found,
        "strace is needed for the delay-injection tests: apt-get install strace"
    );
    "strace"
}

/// The race of the issue: `run tick` types the next command, then removes the consumed
/// signal; a step that signals fast writes its own signal in between and the removal deleted
/// it (the loop then ended as "the dispatched step check ended without writing a signal").
/// The tick's unlink of the signal is delayed by 1.5 seconds (strace `-P` limits the
/// injection to that path), the step writes its signal 0.2 s after its keys; it must survive.
#[test]
fn a_fast_steps_signal_survives_a_delayed_unlink() {
    let sb = Sandbox::new();
    let (dir, ran) = fast_step_run(&sb, "fast");
    let output = sb
        .program(strace())
        .args([
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            // Only calls on the signal's path: its unlink waits 1.5 s before it happens.
            "-P",
        ])
        .arg(dir.join(".auto-signal"))
        .args(["-e", "inject=unlink,unlinkat:delay_enter=1500000", bin()])
        .env("AUTOCTL_NOW", "2027-03-01T10:01:00Z")
        .args(["run", "tick", "--session", "fast"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let event: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(event["decision"], "dispatch", "{event}");
    step_ran(&ran);
    let signal = signal_on_disk(&dir).expect("the step's signal was deleted");
    assert_eq!(
        (&signal["step"], &signal["iteration"]),
        (&"check".into(), &2.into()),
        "{signal}"
    );
    // The next tick reads it: the loop goes on (here: to exec).
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:02:00Z")
        .args(["run", "tick", "--session", "fast"])
        .output()
        .unwrap();
    let event: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(event["saw"]["signal"]["step"], "check", "{event}");
    assert_ne!(event["decision"], "exit", "{event}");
}

/// A tick killed with the consumed signal renamed aside (not yet checked, not removed): the
/// dispatch was recorded first, so the next tick types the step exactly once, and the aside
/// file is a temporary file the step's own signal write sweeps once it is a minute old.
#[test]
fn a_tick_killed_while_consuming_types_the_step_once_and_leaves_no_signal_behind() {
    if !crate::util::failpoints_armed() {
        return;
    }
    let sb = Sandbox::new();
    let (dir, ran) = fast_step_run(&sb, "killed");
    let output = sb
        .std_cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:01:00Z")
        .env("AUTOCTL_FAILPOINT", "signal-consume-aside")
        .args(["run", "tick", "--session", "killed"])
        .output()
        .unwrap();
    assert_eq!(output.status.signal(), Some(9), "{output:?}");
    assert!(signal_on_disk(&dir).is_none(), "the signal was taken aside");
    let aside: Vec<String> = crate::util::names(&dir)
        .into_iter()
        .filter(|name| name.starts_with("..auto-signal.") && name.ends_with(".tmp"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(!ran.exists(), "nothing typed before the kill");
    // The leftover is a minute old by the time the step writes (aged on the file system's
    // clock), so that write sweeps it.
    let leftover = fs::File::options()
        .write(true)
        .open(dir.join(&aside[0]))
        .unwrap();
    let modified = leftover.metadata().unwrap().modified().unwrap();
    leftover
        .set_modified(modified - Duration::from_secs(61))
        .unwrap();
    // Past the dead tick's lease: the recorded dispatch is typed, once.
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:04:00Z")
        .args(["run", "tick", "--session", "killed"])
        .output()
        .unwrap();
    let event: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(event["decision"], "dispatch", "{event}");
    step_ran(&ran);
    let signal = signal_on_disk(&dir).expect("the step's signal");
    assert_eq!(signal["iteration"], 2, "{signal}");
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", "2027-03-01T10:05:00Z")
        .args(["run", "tick", "--session", "killed"])
        .output()
        .unwrap();
    let event: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(event["saw"]["signal"]["iteration"], 2, "{event}");
    // A step typed again by this tick would have run before a line typed after it.
    crate::tmuxfix::shell_caught_up(&sb, "killed");
    assert_eq!(
        fs::read_to_string(&ran).unwrap(),
        "ran check\n",
        "typed once"
    );
    let left: Vec<String> = crate::util::names(&dir)
        .into_iter()
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}
