//! `autoctl profile show|learn`: the "## Auto Adaptation" section of `.type-profile.md`.

use std::fs;
use std::process::Stdio;

use crate::util::{Sandbox, json_lines, one_stderr_line, stdout, with_stdin};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(path: &str) -> String {
    fs::read_to_string(format!("{FIXTURES}/{path}")).unwrap()
}

#[test]
fn show_resolves_each_checkpoint() {
    let sb = Sandbox::new();
    let path = format!("{FIXTURES}/type-profile/valid/bugfix.md");
    let out = sb
        .cmd()
        .args(["profile", "show", "--profile", &path])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "CHECKPOINT\tTHRESHOLD\tRETRY-LIMIT\tTHRESHOLD-FROM\tRETRY-LIMIT-FROM\n\
         post-plan\t0.6\t2\tprofile\tprofile\n\
         mid-exec\t0.6\t2\tfallback\tfallback\n\
         post-exec\t0.65\t3\tprofile\tfallback\n\
         \n\
         SETTING\tVALUE\tFROM\n\
         mid_exec_check_interval\t3\tfallback\n\
         compaction_threshold\t0.88\tprofile\n"
    );
    for file in ["valid/bugfix.md", "valid/no-section.md", "valid/learned.md"] {
        let path = format!("{FIXTURES}/type-profile/{file}");
        let out = sb
            .cmd()
            .args(["profile", "show", "--format", "json", "--profile", &path])
            .output()
            .unwrap();
        let shown = json_lines(&out).remove(0);
        assert!(
            autoctl::schema::violations("auto-adaptation", &shown).is_empty(),
            "{file}: {shown}"
        );
    }
    for file in fs::read_dir(format!("{FIXTURES}/type-profile/invalid")).unwrap() {
        let path = file.unwrap().path();
        let out = sb
            .cmd()
            .args(["profile", "show", "--profile"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        assert!(
            one_stderr_line(&out).contains("line "),
            "{}",
            path.display()
        );
    }
}

#[test]
fn learn_rewrites_only_the_observed_lines() {
    let sb = Sandbox::new();
    let original = fixture("type-profile/valid/bugfix.md");
    let path = sb.write(".type-profile.md", &original);
    let out = sb
        .cmd()
        .args([
            "profile",
            "learn",
            "--retries",
            "post-plan=1",
            "--retries",
            "mid-exec=2",
            "--iterations",
            "12",
        ])
        .args([
            "--mid-exec-checks",
            "4",
            "--compactions",
            "1",
            "--duration",
            "planning=5m",
            "--duration",
            "execution=42m",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty());
    let learned = fs::read_to_string(&path).unwrap();
    // Everything before the first observed line and after the section is byte for byte the same.
    let section_end = original.find("## History").unwrap();
    let insert_at = original[..section_end].trim_end().len() + 1;
    assert!(learned.starts_with(&original[..insert_at]), "{learned}");
    assert!(learned.ends_with(&original[insert_at..]), "{learned}");
    let added = &learned[insert_at..learned.len() - (original.len() - insert_at)];
    let mut lines: Vec<&str> = added.lines().collect();
    assert!(
        lines.iter().all(|l| l.starts_with("- observed.")),
        "{added}"
    );
    lines.retain(|l| !l.starts_with("- observed.updated_at: "));
    assert_eq!(
        lines,
        [
            "- observed.runs: 1",
            "- observed.retries.post-plan: 1",
            "- observed.retries.mid-exec: 2",
            "- observed.retries_max.post-plan: 1",
            "- observed.retries_max.mid-exec: 2",
            "- observed.iterations: 12",
            "- observed.mid_exec_checks: 4",
            "- observed.compactions: 1",
            "- observed.duration.planning: 5m",
            "- observed.duration.execution: 42m",
        ]
    );
    // A second run replaces the block in place.
    sb.cmd()
        .args(["profile", "learn", "--iterations", "3"])
        .assert()
        .code(0);
    let again = fs::read_to_string(&path).unwrap();
    assert!(again.contains("- observed.runs: 2\n"));
    assert!(
        again.contains("- observed.retries_max.mid-exec: 2\n"),
        "the maximum survives"
    );
    assert!(
        !again.contains("observed.compactions"),
        "last-run values not reported are dropped"
    );
    assert_eq!(
        again.matches("## Auto Adaptation").count(),
        2,
        "one section plus the fenced example"
    );
}

/// A profile that is a symlink (one profile shared by several projects) is refused: the atomic
/// rename would replace the link with a private copy and leave the shared profile stale.
#[test]
fn learn_refuses_a_symlinked_profile() {
    let sb = Sandbox::new();
    let original = "# Shared profile\n";
    let shared = sb.write("shared.md", original);
    let profile = sb.path("p.md");
    std::os::unix::fs::symlink(&shared, &profile).unwrap();
    let out = sb
        .cmd()
        .args(["profile", "learn", "--compactions", "2", "--profile"])
        .arg(&profile)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        one_stderr_line(&out),
        format!(
            "autoctl: profile {} is a symlink; refusing to follow or replace it (point --profile at a regular file)",
            profile.display()
        )
    );
    assert!(fs::symlink_metadata(&profile).unwrap().is_symlink());
    assert_eq!(fs::read_to_string(&shared).unwrap(), original);
}

#[test]
fn learn_creates_the_section_or_the_file() {
    let sb = Sandbox::new();
    let original = "# Profile\n\nNo section.";
    let path = sb.write("p.md", original);
    sb.cmd()
        .args([
            "profile",
            "learn",
            "--profile",
            "p.md",
            "--compactions",
            "2",
        ])
        .assert()
        .code(0);
    let learned = fs::read_to_string(&path).unwrap();
    assert!(learned.starts_with(original));
    assert!(
        learned[original.len()..].starts_with("\n\n## Auto Adaptation\n\n- observed.runs: 1\n"),
        "{learned}"
    );
    sb.cmd()
        .args([
            "profile",
            "learn",
            "--profile",
            "new.md",
            "--iterations",
            "1",
            "--format",
            "json",
        ])
        .assert()
        .code(0);
    let created = fs::read_to_string(sb.path("new.md")).unwrap();
    assert!(created.starts_with("## Auto Adaptation\n\n- observed.runs: 1\n"));
}

#[test]
fn learn_reads_metrics_from_a_file_or_stdin() {
    let sb = Sandbox::new();
    let metrics = format!("{FIXTURES}/profile-metrics/valid/full.json");
    sb.cmd()
        .args([
            "profile",
            "learn",
            "--metrics",
            &metrics,
            "--iterations",
            "99",
        ])
        .assert()
        .code(0);
    let learned = fs::read_to_string(sb.path(".type-profile.md")).unwrap();
    assert!(
        learned.contains("- observed.iterations: 99\n"),
        "flags override the file"
    );
    assert!(learned.contains("- observed.duration.execution: 42m\n"));
    let mut cmd = sb.std_cmd();
    cmd.args(["profile", "learn", "--metrics", "-", "--format", "json"]);
    let out = with_stdin(cmd, &[], br#"{"compactions": 3}"#);
    assert_eq!(out.status.code(), Some(0));
    let shown = json_lines(&out).remove(0);
    assert_eq!(shown["section"]["observed"]["runs"], 2);
    assert!(autoctl::schema::violations("auto-adaptation", &shown).is_empty());
    for file in fs::read_dir(format!("{FIXTURES}/profile-metrics/invalid")).unwrap() {
        let path = file.unwrap().path();
        let out = sb
            .cmd()
            .args(["profile", "learn", "--metrics"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        one_stderr_line(&out);
    }
}

/// Bad input leaves the profile exactly as it was.
#[test]
fn learn_refuses_bad_input_and_changes_nothing() {
    let sb = Sandbox::new();
    for file in [
        "duplicated.md",
        "prose.md",
        "out-of-range.md",
        "unknown-key.md",
    ] {
        let original = fixture(&format!("type-profile/invalid/{file}"));
        let path = sb.write(file, &original);
        let out = sb
            .cmd()
            .args(["profile", "learn", "--iterations", "1", "--profile", file])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{file}");
        let line = one_stderr_line(&out);
        assert!(
            line.contains("line ") && line.contains("not rewriting"),
            "{line}"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), original);
    }
    for args in [
        &["profile", "learn"][..],
        &["profile", "learn", "--retries", "pre-plan=1"],
        &["profile", "learn", "--retries", "post-plan"],
        &["profile", "learn", "--duration", "coding=5m"],
        &["profile", "learn", "--duration", "planning=5"],
        &["profile", "learn", "--iterations", "-1"],
    ] {
        let out = sb.cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        one_stderr_line(&out);
    }
    assert!(!sb.path(".type-profile.md").exists());
}

/// Loops finishing at once each count: the lock on the side file serializes the rewrites.
#[test]
fn concurrent_learns_lose_no_run() {
    let sb = Sandbox::new();
    sb.write(".type-profile.md", fixture("type-profile/valid/bugfix.md"));
    let children: Vec<_> = (0..16)
        .map(|i| {
            sb.std_cmd()
                .args(["profile", "learn", "--iterations"])
                .arg(i.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert_eq!(child.wait().unwrap().code(), Some(0));
    }
    let learned = fs::read_to_string(sb.path(".type-profile.md")).unwrap();
    assert!(learned.contains("- observed.runs: 16\n"), "{learned}");
    assert!(learned.contains("- threshold.post-plan: 0.60\n"));
}

/// Where the profile cannot be rewritten (no permission), learn fails with one line and the
/// file is untouched.
#[test]
fn learn_without_permission_changes_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let dir = sb.module("readonly");
    let path = dir.join(".type-profile.md");
    fs::write(&path, "# P\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let out = sb.unprivileged(&[
        "profile",
        "learn",
        "--iterations",
        "1",
        "--profile",
        path.to_str().unwrap(),
    ]);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    one_stderr_line(&out);
    assert_eq!(fs::read_to_string(&path).unwrap(), "# P\n");
}

/// Item 4 (task-ai): after learning, the profile is synced to the shared library
/// (`$NB_WORKSPACES_LIBRARY/.memory/.type-profiles/<type>.md`) under the library's lock; two
/// tasks of one type finishing at once both count there.
#[test]
fn learn_syncs_the_profile_into_the_shared_library_under_its_lock() {
    let sb = Sandbox::new();
    let library = sb.module("library");
    let task = sb.module("task");
    let profile = task.join(".type-profile.md");
    let learn = |extra: &[&str]| {
        sb.cmd()
            .args(["profile", "learn", "--profile"])
            .arg(&profile)
            .args(["--iterations", "4"])
            .args(extra)
            .output()
            .unwrap()
    };
    // First sync: the library has no profile of the type yet; it gets this one.
    let out = learn(&[
        "--type",
        "software-bugfix",
        "--library",
        library.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let synced = library.join(".memory/.type-profiles/software-bugfix.md");
    assert_eq!(
        fs::read_to_string(&synced).unwrap(),
        fs::read_to_string(&profile).unwrap()
    );
    // The library from the environment; 8 concurrent tasks of the type all count.
    let children: Vec<_> = (0..8)
        .map(|i| {
            let own = sb.module(&format!("task{i}"));
            sb.std_cmd()
                .env("NB_WORKSPACES_LIBRARY", &library)
                .args(["profile", "learn", "--profile"])
                .arg(own.join(".type-profile.md"))
                .args(["--iterations", "4", "--type", "software-bugfix"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = fs::read_to_string(&synced).unwrap();
    assert!(text.contains("- observed.runs: 9\n"), "{text}");
    assert!(
        !library.join(".memory/.type-profiles/.lock").exists(),
        "the library's lock goes when released"
    );
    // --type without a library, or a type that is not a file name: one line, exit 2.
    let out = learn(&["--type", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("--library"));
    let out = learn(&[
        "--type",
        "../escape",
        "--library",
        library.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    one_stderr_line(&out);
}

/// Item 4 (task-ai's VFP tracking): three exec steps in a row without a VH→HS transition
/// trigger a mid-exec check with the seed's note; a transition completes a cycle.
#[test]
fn vfp_steps_without_a_transition_trigger_a_mid_exec_check() {
    let sb = Sandbox::new();
    let step = |flag: &str| {
        sb.cmd()
            .args([
                "vfp",
                "step",
                "--state",
                "vfp.json",
                "--stubs-total",
                "6",
                flag,
            ])
            .output()
            .unwrap()
    };
    assert_eq!(step("--transition").status.code(), Some(1));
    for _ in 0..2 {
        let out = step("--no-transition");
        assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(1), ""));
    }
    let out = step("--no-transition");
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(0), "check\tmid-exec\n")
    );
    assert!(
        one_stderr_line(&out)
            .contains("VFP anomaly: 3 steps without VH→HS transition — verify test discipline")
    );
    let shown = sb
        .cmd()
        .args(["vfp", "show", "--state", "vfp.json", "--format", "json"])
        .output()
        .unwrap();
    let state = &json_lines(&shown)[0];
    assert_eq!(state["cycles_completed"], 1);
    assert_eq!(state["vh_stubs_total"], 6);
    assert_eq!(state["steps_without_transition"], 0);
    assert!(autoctl::schema::violations("vfp-state", state).is_empty());
    fs::write(sb.path("vfp.json"), "{\"version\": 1}").unwrap();
    let out = step("--transition");
    assert_eq!(out.status.code(), Some(2));
    assert!(one_stderr_line(&out).contains("vfp.json"));
}
