//! The run registry across releases: a registry written by the release before the row of
//! JSON per core (schema version 8, `tests/fixtures/registry/v8/`, made by `make-v8.sh` with
//! runs in every state) is migrated by the first writing command and then reads as that
//! release read it; one written by release a14af3d on SQLite and on PostgreSQL
//! (`tests/fixtures/registry/a14af3d/`, made by `make-release.sh`: each core's state a JSON
//! column of that release's types) reads as that release read it, with no migration.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::util::{Sandbox, json_lines, one_stderr_line};

/// The fixture's directory.
fn v8() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/registry/v8"
    ))
}

/// The fixture's status, read by the old release at this time.
const STATUS_AT: &str = "2030-01-01T00:00:00Z";

fn status(sb: &Sandbox) -> Vec<Value> {
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", STATUS_AT)
        .args(["run", "status", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    json_lines(&output)
        .into_iter()
        .map(without_new_fields)
        .collect()
}

/// A row without the fields `run status` gained after the release that wrote the fixture,
/// each checked for the value a migrated run must show: `sources`, the readings counted by
/// source, none of which the old release kept.
fn without_new_fields(mut row: Value) -> Value {
    let sources = row.as_object_mut().unwrap().remove("sources");
    let none = json!({"hook": 0, "statusline": 0, "app-server": 0, "transcript": 0,
                      "screen": 0, "startup": 0, "typed_percent": null});
    assert_eq!(sources, Some(none), "{row}");
    row
}

/// The reports without what the migration to 9 added (accounts and hosts), checked to be the
/// defaults: the account `default`, priority 0, no host until a tick adopts the run
/// (`adopted`: the running runs were ticked), no permit, no windows.
fn without_accounts(mut reports: Vec<Value>, adopted: &[&str]) -> Vec<Value> {
    for report in &mut reports {
        let added = report.as_object_mut().unwrap();
        assert_eq!(added.remove("account").unwrap(), "default");
        assert_eq!(added.remove("priority").unwrap(), 0);
        let host = added.remove("host").unwrap();
        let session = added["session"].as_str().unwrap();
        assert_eq!(host != "", adopted.contains(&session), "{session}: {host}");
        assert_eq!(added.remove("permit_since").unwrap(), Value::Null);
        assert_eq!(added.remove("host_lost").unwrap(), false);
        assert_eq!(
            added.remove("account_windows").unwrap(),
            serde_json::json!([])
        );
    }
    reports
}

#[test]
fn a_registry_written_by_the_last_release_migrates_and_reads_the_same() {
    let sb = Sandbox::new();
    fs::create_dir_all(sb.path("state")).unwrap();
    fs::copy(v8().join("autoctl.db"), sb.path("state/autoctl.db")).unwrap();
    let before: Vec<Value> = fs::read_to_string(v8().join("status.json"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let states: Vec<&str> = before
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    for status in ["running", "finished", "stopped", "exited", "lost"] {
        assert!(states.contains(&status), "the fixture has no {status} run");
    }

    // A reader never migrates: it says how.
    let output = sb.cmd().args(["run", "status"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("to migrate it to"));

    // The first writing command migrates (this one then finds nothing to acknowledge).
    sb.cmd()
        .args(["run", "ack", "--session", "observe"])
        .assert()
        .code(1);
    // What the migration to 9 added (accounts and hosts) has its defaults; the rest reads
    // the same.
    let after = without_accounts(status(&sb), &[]);
    assert_eq!(after, before);

    // The migrated runs are ticked as any others: their task dirs are gone here, so every
    // running one ends lost, and the ended ones keep their outcome.
    let output = sb
        .cmd()
        .env("AUTOCTL_NOW", STATUS_AT)
        .args(["run", "tick", "--all"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let running: Vec<&str> = before
        .iter()
        .filter(|r| r["status"] == "running")
        .map(|r| r["session"].as_str().unwrap())
        .collect();
    let after = without_accounts(status(&sb), &running);
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(old["session"], new["session"]);
        if old["status"] == "running" {
            assert_eq!(new["status"], "lost", "{new}");
            assert_eq!(new["stop_reason"], "task_dir_gone", "{new}");
        } else {
            assert_eq!(old, new);
        }
    }
}

/// A registry written by release a14af3d (`tests/fixtures/registry/a14af3d/`, made by
/// `make-release.sh` with runs in every state, on both backends): the same schema as today's,
/// but each core's state is a JSON column holding that release's types, which today's must
/// read back as they were written.
fn a14af3d(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/registry/a14af3d")
        .join(name)
}

/// What the release's `run status --format json` printed (`NAME.json`), each run in every
/// state the scenario reaches.
fn release_status(name: &str) -> Vec<Value> {
    let lines: Vec<Value> = fs::read_to_string(a14af3d(name))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let states: Vec<&str> = lines
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    for status in ["running", "finished", "stopped", "exited", "lost"] {
        assert!(
            states.contains(&status),
            "{name}: the fixture has no {status} run: {states:?}"
        );
    }
    // And the cores' state that only a running run keeps: an escalation waiting for a
    // person, an open wait (the quota wait among them), a dispatch in flight.
    assert!(lines.iter().any(|r| !r["needs_person"].is_null()), "{name}");
    assert!(lines.iter().any(|r| r["quota_waiting"] == true), "{name}");
    assert!(lines.iter().any(|r| r["mode"] == "dispatch"), "{name}");
    lines
}

/// Today's `run status --format json` over the registry `sb` points at (`registry`: a
/// `postgres://` URL, else the SQLite file in the state dir), read at the release's time.
fn status_now(sb: &Sandbox, registry: Option<&str>) -> Vec<Value> {
    let mut cmd = sb.cmd();
    if let Some(url) = registry {
        cmd.env("AUTOCTL_REGISTRY", url);
    }
    let output = cmd
        .env("AUTOCTL_NOW", STATUS_AT)
        .args(["run", "status", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    json_lines(&output)
        .into_iter()
        .map(without_transcript_source)
        .collect()
}

/// A row without the one field `run status` gained since a14af3d: the readings counted from
/// a Codex rollout (`sources.transcript`), which that release never took, so 0.
fn without_transcript_source(mut row: Value) -> Value {
    let removed = row["sources"].as_object_mut().unwrap().remove("transcript");
    assert_eq!(removed, Some(json!(0)), "{row}");
    row
}

#[test]
fn a_sqlite_registry_written_by_release_a14af3d_reads_the_same() {
    let sb = Sandbox::new();
    fs::create_dir_all(sb.path("state")).unwrap();
    fs::copy(a14af3d("sqlite.db"), sb.path("state/autoctl.db")).unwrap();
    let before = release_status("sqlite.json");
    assert_eq!(status_now(&sb, None), before);
    // Read only: the file is the release's byte for byte (no migration, no write).
    assert_eq!(
        fs::read(sb.path("state/autoctl.db")).unwrap(),
        fs::read(a14af3d("sqlite.db")).unwrap()
    );
}

#[test]
fn a_postgres_registry_written_by_release_a14af3d_reads_the_same() {
    let Some(pg) = crate::fleet::Pg::start() else {
        return;
    };
    let dump = fs::read_to_string(a14af3d("postgres.sql")).unwrap();
    let mut client = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    client.batch_execute(&dump).unwrap();
    drop(client);
    let sb = Sandbox::new();
    let before = release_status("postgres.json");
    assert_eq!(status_now(&sb, Some(&pg.url)), before);
}
