//! Accounts and the quota governor end to end (issue 25, items 1 and 2): dispatch runs of one
//! account, each with a Claude Code stand-in in a real tmux pane (tests/fixtures/readme/claude),
//! share the windows one session's status line reports (`autoctl statusline`, fed a recorded
//! Claude Code payload with its `rate_limits` set, from the agent's pane). At the pace stop
//! no step is typed (`quota-paced`); at the reset the waiting runs are released in priority
//! order, at most `--resume-burst` a minute. Every clock is `AUTOCTL_NOW`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::dispatch::{prompts, session};
use crate::run_tick::task;
use crate::tmuxfix::wait_for;
use crate::typed_tick::in_pane;
use crate::util::{Sandbox, json_lines, stdout};

/// The clock of these tests: 2026-11-26T08:00:00Z, plus seconds.
const T0: i64 = 1_795_680_000;

pub fn at(secs: i64) -> String {
    chrono::DateTime::from_timestamp(T0 + secs, 0)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A status line payload recorded from Claude Code 2.1.332 in subscription mode, with its
/// windows set: `five_hour` used and reset (seconds after T0), `seven_day` used.
pub fn statusline(five_hour: f64, reset_in: i64, seven_day: f64) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook/claude-code/reference/statusline-subscription.json");
    let mut payload: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    payload["rate_limits"]["five_hour"]["used_percentage"] = five_hour.into();
    payload["rate_limits"]["five_hour"]["resets_at"] = (T0 + reset_in).into();
    payload["rate_limits"]["seven_day"]["used_percentage"] = seven_day.into();
    payload["rate_limits"]["seven_day"]["resets_at"] = (T0 + 5 * 86_400).into();
    serde_json::to_vec(&payload).unwrap()
}

/// A dispatch run in its own session, its stand-in agent idle at its prompt: its pane, the
/// log of the prompts it received, its task dir.
pub struct Started {
    pub pane: String,
    log: PathBuf,
    task: PathBuf,
}

impl Started {
    fn prompts(&self) -> Vec<String> {
        prompts(&self.log, &self.task)
    }
}

pub fn start(sb: &Sandbox, name: &str, extra: &[&str]) -> Started {
    let task = task(sb, name);
    let (pane, log) = session(sb, name);
    sb.cmd()
        .env("AUTOCTL_NOW", at(0))
        .args(["run", "start", "--session", name, "--mode", "dispatch"])
        .args(["--launch", "--timeout", "1d", "--task"])
        .arg(&task)
        .args(extra)
        .assert()
        .code(0);
    wait_for(sb, &pane, "the agent's input box", |screen, _| {
        screen.contains("? for shortcuts")
    });
    Started { pane, log, task }
}

/// `run tick --all` at `secs`, every event checked against its schema.
fn tick_all(sb: &Sandbox, secs: i64, extra: &[&str]) -> Vec<Value> {
    let out = sb
        .cmd()
        .env("AUTOCTL_NOW", at(secs))
        .args(["run", "tick", "--all"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let events = json_lines(&out);
    for event in &events {
        let violations = autoctl::schema::violations("tick-event", event);
        assert!(violations.is_empty(), "{event}: {violations:?}");
    }
    events
}

fn status(sb: &Sandbox, secs: i64, args: &[&str]) -> String {
    let out = sb
        .cmd()
        .env("AUTOCTL_NOW", at(secs))
        .args(["run", "status"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    stdout(&out)
}

fn reports(sb: &Sandbox, secs: i64) -> Vec<Value> {
    let text = status(sb, secs, &["--format", "json"]);
    let reports: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for report in &reports {
        let violations = autoctl::schema::violations("run-status", report);
        assert!(violations.is_empty(), "{report}: {violations:?}");
    }
    reports
}

fn decision<'a>(events: &'a [Value], session: &str) -> &'a str {
    events
        .iter()
        .find(|e| e["session"] == session)
        .and_then(|e| e["decision"].as_str())
        .unwrap_or_else(|| panic!("no event for {session}: {events:#?}"))
}

#[test]
fn at_the_pace_stop_no_step_is_typed_until_the_reset() {
    let sb = Sandbox::new();
    let run = start(&sb, "paced", &["--account", "team"]);
    // The session's status line: the 5-hour window is 96% used, resetting in an hour.
    let out = in_pane(
        &sb,
        &run.pane,
        &at(1),
        &["statusline"],
        &statusline(96.0, 3600, 20.0),
    );
    assert!(out.status.success(), "{out:?}");

    let events = tick_all(&sb, 2, &[]);
    assert_ne!(decision(&events, "paced"), "dispatch", "{events:#?}");
    let wait = &events[0]["run"]["wait"];
    assert_eq!(wait["kind"], "quota-paced", "{events:#?}");
    assert_eq!(wait["until"], at(3600));
    assert!(
        wait["reason"]
            .as_str()
            .unwrap()
            .contains("96% used (--pace-stop 95%)"),
        "{wait}"
    );
    // Paced is a legitimate wait: the timeout clock is paused, nothing was typed.
    let events = tick_all(&sb, 1800, &[]);
    assert_eq!(events[0]["run"]["quota_waiting"], true, "{events:#?}");
    assert!(run.prompts().is_empty());

    // What run status shows: the account's windows with source and age, who waits.
    let report = reports(&sb, 1800).remove(0);
    assert_eq!(report["account"], "team");
    assert_eq!(report["wait"]["kind"], "quota-paced");
    let five = &report["account_windows"][0];
    assert_eq!(five["window"], "five_hour");
    assert_eq!(five["used_percentage"], 96.0);
    assert_eq!(five["source"], "statusline");
    assert_eq!(five["read_at"], at(1));
    assert_eq!(five["age_ms"], 1_799_000);
    let text = status(&sb, 1800, &[]);
    assert!(text.contains("running:quota-paced"), "{text}");
    let text = status(&sb, 1800, &["--accounts"]);
    assert!(
        text.contains(&format!(
            "team\tfive_hour\t96%\t{}\tstatusline\t29m59s\t-\t-\tpaced\n",
            at(3600)
        )),
        "{text}"
    );
    let prom = status(&sb, 1800, &["--format", "prometheus"]);
    for line in [
        "autoctl_account_window_used_ratio{account=\"team\",window=\"five_hour\"} 0.9600\n",
        "autoctl_account_window_used_ratio{account=\"team\",window=\"seven_day\"} 0.2000\n",
        "autoctl_account_reset_seconds{account=\"team\",window=\"five_hour\"} 1800\n",
        "autoctl_runs_paced{account=\"team\"} 1\n",
    ] {
        assert!(prom.contains(line), "{line} in:\n{prom}");
    }

    // After the reset the step is typed, under the governor's permit.
    let events = tick_all(&sb, 3601, &[]);
    assert_eq!(decision(&events, "paced"), "dispatch", "{events:#?}");
    let report = reports(&sb, 3601).remove(0);
    assert_eq!(report["permit_since"], at(3601), "{report}");
    assert!(report["wait"].is_null(), "{report}");
    wait_for(&sb, &run.pane, "the first step typed", |_, _| {
        !run.prompts().is_empty()
    });
    assert_eq!(run.prompts()[0], "/ai-cli-task plan TASK --generate");
    let prom = status(&sb, 3601, &["--format", "prometheus"]);
    assert!(
        prom.contains("autoctl_runs_paced{account=\"team\"} 0\n"),
        "{prom}"
    );
}

#[test]
fn a_reset_releases_in_priority_order_at_most_the_burst_a_minute() {
    let sb = Sandbox::new();
    let mut runs = Vec::new();
    for (name, priority) in [("a", "0"), ("b", "0"), ("c", "5")] {
        runs.push(start(
            &sb,
            name,
            &["--account", "team", "--priority", priority],
        ));
    }
    // Another account's run is not held by this account's windows.
    let solo = start(&sb, "solo", &["--account", "other"]);
    let out = in_pane(
        &sb,
        &runs[0].pane,
        &at(1),
        &["statusline"],
        &statusline(97.0, 600, 30.0),
    );
    assert!(out.status.success(), "{out:?}");

    let events = tick_all(&sb, 2, &[]);
    for name in ["a", "b", "c"] {
        assert_ne!(decision(&events, name), "dispatch", "{name}: {events:#?}");
    }
    assert_eq!(decision(&events, "solo"), "dispatch", "{events:#?}");
    wait_for(&sb, &solo.pane, "solo's step", |_, _| {
        !solo.prompts().is_empty()
    });
    let text = status(&sb, 300, &["--accounts"]);
    assert!(
        text.contains("\tc,a,b\n"),
        "the release order in WAITING:\n{text}"
    );

    // At the reset: two of the three (the priority run first), the third a minute later.
    let events = tick_all(&sb, 601, &[]);
    let released: Vec<&str> = ["a", "b", "c"]
        .into_iter()
        .filter(|n| decision(&events, n) == "dispatch")
        .collect();
    assert_eq!(released, ["a", "c"], "{events:#?}");
    let held = events.iter().find(|e| e["session"] == "b").unwrap();
    assert_eq!(held["run"]["wait"]["kind"], "quota-paced", "{held}");
    assert!(
        held["run"]["wait"]["reason"]
            .as_str()
            .unwrap()
            .contains("at most 2 a minute (--resume-burst)"),
        "{held}"
    );
    let events = tick_all(&sb, 640, &[]);
    assert_ne!(decision(&events, "b"), "dispatch", "{events:#?}");
    let events = tick_all(&sb, 662, &[]);
    assert_eq!(decision(&events, "b"), "dispatch", "{events:#?}");
}

#[test]
fn bad_account_names_and_governor_flags_are_one_line_and_exit_2() {
    let sb = Sandbox::new();
    let task = sb.module("t");
    let out = sb
        .cmd()
        .env("AUTOCTL_ACCOUNT", "two\nlines")
        .args(["run", "start", "--session", "s", "--task"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = crate::util::one_stderr_line(&out);
    assert!(line.contains("--account"), "{line}");
    for bad in [
        ["--pace-stop", "0"],
        ["--pace-stop", "101"],
        ["--resume-burst", "0"],
    ] {
        let out = sb
            .cmd()
            .args(["run", "tick", "--all"])
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
    }
}

/// Issue 25: a reading is as of its time. The status line lags the server by a step or two,
/// so a step that ended after the account's freshest reading spent tokens the reading does
/// not show: the projection counts it beside the step asked for. Here the account learns 20 %
/// a step (50 % → 70 % over the plan step), the check step then ends with no newer reading,
/// and the exec step is asked for on that stale 70 %: granted on the reading alone it would
/// take the window to 110 % (70 + the check's 20 + its own 20), so it is paced. The pure core
/// has the property test (`no_step_starts_into_the_limit_when_readings_lag`); this drives the
/// same case through `run tick` with recorded status-line readings.
#[test]
fn a_step_asked_on_a_reading_older_than_the_last_step_is_paced_by_the_steps_it_missed() {
    let sb = Sandbox::new();
    let run = start(&sb, "lag", &["--account", "team"]);
    let read = |secs: i64, used: f64| {
        let out = in_pane(
            &sb,
            &run.pane,
            &at(secs),
            &["statusline"],
            &statusline(used, 3600, 20.0),
        );
        assert!(out.status.success(), "{out:?}");
    };
    let signal = run.task.join(".auto-signal");
    // The agent wrote the step's signal and is back at its input box.
    let step_done = |step: &str| {
        wait_for(&sb, &run.pane, step, |screen, _| {
            signal.exists() && screen.trim_end().ends_with("? for shortcuts")
        });
    };
    read(1, 50.0);
    let events = tick_all(&sb, 2, &[]);
    assert_eq!(decision(&events, "lag"), "dispatch", "{events:#?}");
    step_done("the plan step's signal");
    // The plan step ended; the check step is typed (nothing learned yet: no reading since).
    let events = tick_all(&sb, 20, &[]);
    assert_eq!(decision(&events, "lag"), "dispatch", "{events:#?}");
    // A reading after the plan step: 20 % for one step.
    read(21, 70.0);
    step_done("the check step's signal");
    let events = tick_all(&sb, 40, &[]);
    assert_ne!(decision(&events, "lag"), "dispatch", "{events:#?}");
    let wait = &events[0]["run"]["wait"];
    assert_eq!(wait["kind"], "quota-paced", "{events:#?}");
    assert!(
        wait["reason"]
            .as_str()
            .unwrap()
            .contains("70% used and 2 step(s) at 20.0% each would take it to 110%"),
        "{wait}"
    );
    assert_eq!(run.prompts().len(), 2, "{:?}", run.prompts());
    // A reading that counts the check step shows where the window is: 78 % (the check cost
    // 8 %), so one more step fits.
    read(41, 78.0);
    let events = tick_all(&sb, 42, &[]);
    assert_eq!(decision(&events, "lag"), "dispatch", "{events:#?}");
}
