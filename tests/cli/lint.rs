//! `autoctl lint`: every rule against a fixture that triggers it and one that does not, the
//! four formats (SARIF validated against the official schema), the exit-code rules, and every
//! bad input of the lint issue: binary, enormous and bomb front matter, symlink loops,
//! unreadable directories, non-UTF-8 names, a module that is a file.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use autoctl::lint::rules::RULES;
use serde_json::{Value, json};

use crate::util::{Sandbox, bin, fixtures, one_stderr_line, stdout};

/// Rules whose fixtures are built by the test that needs them: permissions cannot be checked
/// in, and git rules need a repository of their own.
const BUILT_AT_RUNTIME: &[(&str, &str)] = &[
    (
        "unreadable",
        "unreadable_paths_are_findings_and_the_run_goes_on",
    ),
    (
        "transient-tracked",
        "git_transient_files_tracked_and_not_ignored",
    ),
    (
        "transient-not-ignored",
        "git_transient_files_tracked_and_not_ignored",
    ),
];

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint")
}

fn json_findings(output: &Output) -> Vec<Value> {
    let value: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(output)));
    value.as_array().expect("one array").clone()
}

fn rules_of(findings: &[Value]) -> BTreeSet<String> {
    findings
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_rule_has_a_fixture_that_triggers_it_and_one_that_does_not() {
    let sb = Sandbox::new();
    for rule in RULES {
        if BUILT_AT_RUNTIME.iter().any(|(id, _)| *id == rule.id) {
            continue;
        }
        let dir = fixture_dir().join(rule.id);
        assert!(
            dir.is_dir(),
            "rule {} has no fixture at {}",
            rule.id,
            dir.display()
        );

        let output = sb
            .cmd()
            .args(["lint", "--no-git", "--format", "json"])
            .arg(dir.join("bad"))
            .output()
            .unwrap();
        let findings = json_findings(&output);
        assert_eq!(
            rules_of(&findings),
            BTreeSet::from([rule.id.to_string()]),
            "{}/bad must trigger exactly its rule: {findings:#?}",
            rule.id
        );
        let any_error = findings.iter().any(|f| f["severity"] == "error");
        assert_eq!(
            output.status.code(),
            Some(i32::from(any_error)),
            "{}",
            rule.id
        );
        assert!(
            output.stderr.is_empty(),
            "{}: {:?}",
            rule.id,
            String::from_utf8_lossy(&output.stderr)
        );

        let output = sb
            .cmd()
            .args(["lint", "--no-git", "--format", "json"])
            .arg(dir.join("good"))
            .output()
            .unwrap();
        assert_eq!(
            json_findings(&output),
            Vec::<Value>::new(),
            "{}/good must be clean",
            rule.id
        );
        assert_eq!(output.status.code(), Some(0), "{}", rule.id);
    }
}

#[test]
fn every_fixture_directory_names_a_rule_and_runtime_rules_have_tests() {
    for entry in fs::read_dir(fixture_dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            autoctl::lint::rules::find(&name).is_some(),
            "fixture {name} names no rule"
        );
    }
    let source = include_str!("lint.rs");
    for (rule, test) in BUILT_AT_RUNTIME {
        assert!(autoctl::lint::rules::find(rule).is_some(), "{rule}");
        assert!(
            source.contains(&format!("fn {test}()")),
            "{rule}: no test {test}"
        );
    }
}

/// A clean module under `root` (status executing, with target and plan).
fn module(sb: &Sandbox, root: &str, name: &str, extra: &str) -> PathBuf {
    let dir = sb.module(&format!("{root}/{name}"));
    fs::write(
        dir.join(".index.md"),
        format!(
            "---\ntitle: \"{name}\"\nstatus: executing\ncreated: 2024-01-01T00:00:00Z\nupdated: 2024-01-02T00:00:00Z\n{extra}---\n"
        ),
    )
    .unwrap();
    fs::write(
        dir.join(".target.md"),
        "# Target\n\nShip the signed token flow.\n",
    )
    .unwrap();
    fs::write(dir.join("plan.md"), "# Plan\n").unwrap();
    dir
}

fn listing(sb: &Sandbox, root: &str, names: &[&str]) {
    let lines: Vec<String> = names
        .iter()
        .map(|n| format!("- [{n}](./{n}/.index.md) — {n}\n"))
        .collect();
    sb.write(
        &format!("{root}/.index.md"),
        format!("# TASK\n\n{}", lines.concat()),
    );
}

#[test]
fn explain_and_list_rules() {
    let sb = Sandbox::new();
    let listed = stdout(&sb.cmd().args(["lint", "--list-rules"]).output().unwrap());
    assert_eq!(listed.lines().count(), RULES.len());
    assert!(
        listed.contains("index-yaml\terror\tthe front matter of an .index.md is not valid YAML")
    );
    for rule in RULES {
        let output = sb
            .cmd()
            .args(["lint", "--explain", rule.id])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        let text = stdout(&output);
        assert!(text.starts_with(&format!("{} ({}): ", rule.id, rule.severity.as_str())));
        assert!(text.contains("\n\nFix: "), "{text}");
    }
}

#[test]
fn unknown_rules_and_contradictory_policies_are_usage_errors() {
    let sb = Sandbox::new();
    for args in [
        vec!["lint", "--explain", "nope"],
        vec!["lint", "--deny", "nope"],
        vec!["lint", "--allow", "warnings"],
        vec!["lint", "--deny", "index-yaml", "--allow", "index-yaml"],
    ] {
        let output = sb.cmd().args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let line = one_stderr_line(&output);
        assert!(
            line.contains("nope") || line.contains("warnings") || line.contains("both"),
            "{line}"
        );
    }
}

#[test]
fn missing_path_is_a_usage_error() {
    let sb = Sandbox::new();
    let output = sb.cmd().args(["lint", "no/such/TASK"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        one_stderr_line(&output),
        "autoctl: no/such/TASK: no such file or directory"
    );
    assert!(output.stdout.is_empty());
}

/// A small tree with one finding of each kind of location.
fn small_tree(sb: &Sandbox) {
    module(sb, "repo/TASK", "auth", "depends_on: [ghost]\n");
    module(sb, "repo/TASK", "db", "");
    fs::remove_file(sb.path("repo/TASK/db/plan.md")).unwrap();
    listing(sb, "repo/TASK", &["auth", "db"]);
}

#[test]
fn text_output_is_compiler_style_with_a_summary() {
    let sb = Sandbox::new();
    small_tree(&sb);
    sb.cmd()
        .args(["lint", "repo"])
        .assert()
        .code(1)
        .stdout(
            "repo/TASK/auth/.index.md:6:13: error[depends-missing]: depends_on names \"ghost\", which is not a module of the task root\n\
             repo/TASK/db/.index.md: warning[status-contradicted]: status is executing but the module has no plan document (a .md file whose name does not start with a dot)\n",
        )
        .stderr("autoctl: 1 error and 1 warning in 2 modules (1 task root)\n");
}

#[test]
fn default_path_is_the_current_directory_without_a_dot_prefix() {
    let sb = Sandbox::new();
    small_tree(&sb);
    let output = sb
        .cmd()
        .current_dir(sb.path("repo"))
        .args(["lint", "--format", "json"])
        .output()
        .unwrap();
    let paths: Vec<String> = json_findings(&output)
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(paths, ["TASK/auth/.index.md", "TASK/db/.index.md"]);
}

#[test]
fn json_output_is_one_array() {
    let sb = Sandbox::new();
    small_tree(&sb);
    let output = sb
        .cmd()
        .args(["lint", "--format", "json", "repo"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stderr.is_empty());
    assert_eq!(
        json_findings(&output),
        vec![
            json!({"path": "repo/TASK/auth/.index.md", "line": 6, "column": 13, "severity": "error", "rule": "depends-missing", "message": "depends_on names \"ghost\", which is not a module of the task root"}),
            json!({"path": "repo/TASK/db/.index.md", "severity": "warning", "rule": "status-contradicted", "message": "status is executing but the module has no plan document (a .md file whose name does not start with a dot)"}),
        ]
    );
    // No findings is an empty array, not nothing.
    let output = sb
        .cmd()
        .args([
            "lint",
            "--format",
            "json",
            "--allow",
            "depends-missing",
            "--allow",
            "status-contradicted",
            "repo",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "[]\n");
}

#[test]
fn github_output_is_workflow_commands() {
    let sb = Sandbox::new();
    small_tree(&sb);
    sb.cmd()
        .args(["lint", "--format", "github", "repo"])
        .assert()
        .code(1)
        .stdout(
            "::error file=repo/TASK/auth/.index.md,line=6,col=13,title=depends-missing::depends_on names \"ghost\", which is not a module of the task root\n\
             ::warning file=repo/TASK/db/.index.md,title=status-contradicted::status is executing but the module has no plan document (a .md file whose name does not start with a dot)\n",
        )
        .stderr("");
}

/// The SARIF schema as declared (draft-04) and read as draft-07, which also checks the
/// `uri-reference` format draft-04 does not know (artifact URIs must be valid references).
fn sarif_validators() -> [jsonschema::Validator; 2] {
    let schema: Value = serde_json::from_str(
        &fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/sarif/sarif-schema-2.1.0.json"),
        )
        .unwrap(),
    )
    .unwrap();
    // The errata schema declares draft-04 (see tests/fixtures/sarif/README.md).
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-04/schema#");
    [
        jsonschema::draft4::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("the SARIF schema compiles as draft-04"),
        jsonschema::draft7::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("the SARIF schema compiles as draft-07"),
    ]
}

fn assert_valid_sarif(validators: &[jsonschema::Validator], log: &Value) {
    for validator in validators {
        let errors: Vec<String> = validator
            .iter_errors(log)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "invalid SARIF: {errors:#?}");
    }
}

#[test]
fn sarif_output_validates_against_the_sarif_schema() {
    let validator = sarif_validators();
    // The validators are not rubber stamps: a run needs a tool, and URIs must be references.
    for v in &validator {
        assert!(!v.is_valid(&json!({"version": "2.1.0", "runs": [{"results": []}]})));
    }
    assert!(!validator[1].is_valid(&json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a b"}}}]}]}]})));

    let sb = Sandbox::new();
    small_tree(&sb);
    // Findings with and without positions, a non-UTF-8 and a spaced name, an absolute path.
    module(&sb, "repo/TASK", "sp ace", "");
    let odd = sb
        .path("repo/TASK")
        .join(std::ffi::OsStr::from_bytes(b"bad\xff"));
    fs::create_dir(&odd).unwrap();
    let absolute = sb.path("abs/TASK");
    module(&sb, "abs/TASK", "x", "branch: wrong\n");
    listing(&sb, "abs/TASK", &["x"]);
    for args in [
        vec!["repo".to_string()],
        vec![absolute.display().to_string()],
    ] {
        let output = sb
            .cmd()
            .args(["lint", "--format", "sarif"])
            .args(&args)
            .output()
            .unwrap();
        let log: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_valid_sarif(&validator, &log);
        let run = &log["runs"][0];
        assert_eq!(
            run["tool"]["driver"]["rules"].as_array().unwrap().len(),
            RULES.len()
        );
        for result in run["results"].as_array().unwrap() {
            let index = result["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(
                run["tool"]["driver"]["rules"][index]["id"],
                result["ruleId"]
            );
        }
    }
    let output = sb
        .cmd()
        .args(["lint", "--format", "sarif", "repo"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    let uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(uris.contains(&"repo/TASK/bad%FF"), "{uris:?}");
    assert!(uris.contains(&"repo/TASK/sp%20ace"), "{uris:?}");
    let missing = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "depends-missing")
        .unwrap();
    assert_eq!(
        missing["locations"][0]["physicalLocation"]["region"],
        json!({"startLine": 6, "startColumn": 13})
    );
    let output = sb
        .cmd()
        .args(["lint", "--format", "sarif"])
        .arg(&absolute)
        .output()
        .unwrap();
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"],
        json!({"uri": format!("file://{}/x/.index.md", absolute.display())})
    );

    // A clean run is a valid log with no results.
    let output = sb
        .cmd()
        .args(["lint", "--format", "sarif", "--allow", "index-branch"])
        .arg(&absolute)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_valid_sarif(&validator, &log);
    assert_eq!(log["runs"][0]["results"], json!([]));
}

#[test]
fn warnings_fail_only_when_denied_and_allow_silences() {
    let sb = Sandbox::new();
    module(&sb, "TASK", "db", "");
    fs::remove_file(sb.path("TASK/db/plan.md")).unwrap();
    listing(&sb, "TASK", &["db"]);
    let run = |args: &[&str]| {
        let output = sb
            .cmd()
            .arg("lint")
            .args(args)
            .arg("TASK")
            .output()
            .unwrap();
        (output.status.code(), stdout(&output))
    };
    let (code, out) = run(&[]);
    assert_eq!(code, Some(0));
    assert!(out.contains("warning[status-contradicted]"));
    let (code, out) = run(&["--deny", "status-contradicted"]);
    assert_eq!(code, Some(1));
    assert!(out.contains("error[status-contradicted]"));
    assert_eq!(run(&["--deny", "warnings"]).0, Some(1));
    assert_eq!(run(&["--deny", "root-index-unlisted"]).0, Some(0));
    let (code, out) = run(&["--allow", "status-contradicted", "--deny", "warnings"]);
    assert_eq!((code, out.as_str()), (Some(0), ""));
}

#[test]
fn a_module_path_checks_that_module_with_its_siblings() {
    let sb = Sandbox::new();
    module(&sb, "TASK", "a", "depends_on: [b, ghost]\n");
    module(&sb, "TASK", "b", "depends_on: [c]\n");
    module(&sb, "TASK", "c", "depends_on: [a]\n");
    fs::write(sb.path("TASK/c/.index.md"), "not front matter").unwrap();
    // c's index is broken, so the cycle a -> b -> c -> a cannot be seen through it...
    let out = stdout(&sb.cmd().args(["lint", "TASK/a"]).output().unwrap());
    assert_eq!(
        out,
        "TASK/a/.index.md:6:13: error[depends-missing]: depends_on names \"ghost\", which is not a module of the task root\n"
    );
    // ...and with it repaired, checking only `a` still finds the cycle through its siblings.
    module(&sb, "TASK", "c", "depends_on: [a]\n");
    let out = stdout(&sb.cmd().args(["lint", "TASK/a"]).output().unwrap());
    assert!(
        out.contains("TASK/a/.index.md:6:13: error[depends-cycle]: depends_on forms a cycle: a -> b -> c -> a\n"),
        "{out}"
    );
    // Only module a was checked: b and c have no findings of their own to show.
    assert!(
        !out.contains("TASK/b") && !out.contains("root-index"),
        "{out}"
    );
}

#[test]
fn a_file_path_checks_what_it_belongs_to() {
    let sb = Sandbox::new();
    module(&sb, "TASK", "a", "status_extra: 1\nbranch: wrong\n");
    listing(&sb, "TASK", &["a"]);
    sb.write("TASK/notes", "a file where a module should be\n");
    sb.cmd()
        .args(["lint", "TASK/a/.index.md"])
        .assert()
        .code(1)
        .stdout("TASK/a/.index.md:7:9: error[index-branch]: `branch` is \"wrong\"; the module's branch is \"task/a\"\n");
    sb.cmd()
        .args(["lint", "TASK/notes"])
        .assert()
        .code(1)
        .stdout("TASK/notes: error[module-not-directory]: \"notes\" is a file where the task root expects a module directory\n");
}

#[test]
fn overlapping_paths_report_each_finding_once() {
    let sb = Sandbox::new();
    module(&sb, "TASK", "a", "branch: wrong\n");
    listing(&sb, "TASK", &["a"]);
    let output = sb
        .cmd()
        .args([
            "lint",
            "--format",
            "json",
            "TASK/a",
            "TASK",
            ".",
            "TASK/a/.index.md",
        ])
        .output()
        .unwrap();
    assert_eq!(json_findings(&output).len(), 1, "{}", stdout(&output));
}

#[test]
fn table_flag_selects_the_status_set() {
    let sb = Sandbox::new();
    let dir = module(&sb, "TASK", "a", "");
    let index = fs::read_to_string(dir.join(".index.md")).unwrap();
    fs::write(
        dir.join(".index.md"),
        index.replace("executing", "evolving"),
    )
    .unwrap();
    listing(&sb, "TASK", &["a"]);
    let out = stdout(&sb.cmd().args(["lint", "TASK"]).output().unwrap());
    assert!(
        out.contains("status \"evolving\" is not a status of table ai-cli-task"),
        "{out}"
    );
    sb.cmd()
        .args(["lint", "--table", "task-ai", "TASK"])
        .assert()
        .code(0)
        .stdout("");
    let table = sb.write("mine.json", include_str!("../../tables/task-ai.json"));
    sb.cmd()
        .args(["lint", "--table"])
        .arg(&table)
        .arg("TASK")
        .assert()
        .code(0);
    let output = sb
        .cmd()
        .args(["lint", "--table", "nope", "TASK"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(one_stderr_line(&output).contains("no routing table named \"nope\""));
}

/// Run autoctl with its address space capped, so a read that is not bounded or a YAML bomb
/// that expands aborts the process instead of passing.
fn limited(sb: &Sandbox, megabytes: u64, args: &[&str]) -> Output {
    sb.memory_limited(megabytes).args(args).output().unwrap()
}

#[test]
fn enormous_front_matter_is_not_read_whole() {
    let sb = Sandbox::new();
    let dir = module(&sb, "TASK", "huge", "");
    listing(&sb, "TASK", &["huge"]);
    // A sparse 512 MiB index: reading it whole cannot fit in the 256 MiB address space.
    let file = fs::OpenOptions::new()
        .write(true)
        .open(dir.join(".index.md"))
        .unwrap();
    file.set_len(512 * 1024 * 1024).unwrap();
    let output = limited(&sb, 256, &["lint", "--no-git", "TASK"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        stdout(&output),
        "TASK/huge/.index.md: error[index-not-text]: larger than the 1 MiB read limit; not read\n"
    );
}

#[test]
fn yaml_bomb_does_not_blow_up_memory() {
    let sb = Sandbox::new();
    let bomb = fixture_dir().join("index-yaml/bad/TASK/bomb");
    let output = limited(
        &sb,
        256,
        &[
            "lint",
            "--no-git",
            "--format",
            "json",
            bomb.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let findings = json_findings(&output);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0]["rule"], "index-yaml");
    assert!(
        findings[0]["message"].as_str().unwrap().contains("budget"),
        "{findings:?}"
    );
}

#[test]
fn symlink_loops_are_reported_not_followed_forever() {
    let sb = Sandbox::new();
    module(&sb, "repo/TASK", "a", "");
    listing(&sb, "repo/TASK", &["a"]);
    fs::create_dir_all(sb.path("repo/sub")).unwrap();
    symlink("..", sb.path("repo/sub/up")).unwrap();
    symlink("self", sb.path("repo/TASK/self")).unwrap();
    symlink("plan.md", sb.path("repo/TASK/a/loop.md")).unwrap();

    // Without -L the walk does not follow links: only the self-loop in the root is reported.
    sb.cmd()
        .args(["lint", "repo"])
        .assert()
        .code(1)
        .stdout("repo/TASK/self: error[unreadable]: cannot follow the symlink: Too many levels of symbolic links (os error 40)\n")
        .stderr("autoctl: 1 error in 1 module (1 task root)\n");
    // With -L the walk follows repo/sub/up back to repo, notices the loop and goes on.
    sb.cmd()
        .args(["lint", "-L", "repo"])
        .assert()
        .code(1)
        .stdout("repo/TASK/self: error[unreadable]: cannot follow the symlink: Too many levels of symbolic links (os error 40)\n")
        .stderr(
            "autoctl: warning: repo/sub/up: skipped: symlink loop back to repo\n\
             autoctl: 1 error in 1 module (1 task root)\n",
        );
}

#[test]
fn unreadable_paths_are_findings_and_the_run_goes_on() {
    let sb = Sandbox::new();
    module(&sb, "repo/TASK", "a", "");
    let locked = module(&sb, "repo/TASK", "b", "");
    let private = module(&sb, "repo/TASK", "c", "");
    listing(&sb, "repo/TASK", &["a", "b", "c"]);
    fs::create_dir_all(sb.path("repo/secret")).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    fs::set_permissions(private.join(".index.md"), fs::Permissions::from_mode(0o000)).unwrap();
    fs::set_permissions(sb.path("repo/secret"), fs::Permissions::from_mode(0o000)).unwrap();
    let repo = sb.path("repo");
    let output = sb.unprivileged(&["lint", "--no-git", repo.to_str().unwrap()]);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(sb.path("repo/secret"), fs::Permissions::from_mode(0o755)).unwrap();
    let r = repo.display();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        stdout(&output),
        format!(
            "{r}/TASK/b: error[unreadable]: cannot list the module: Permission denied (os error 13)\n\
             {r}/TASK/c/.index.md: error[unreadable]: cannot read: Permission denied (os error 13)\n"
        )
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "autoctl: warning: {r}/secret: skipped: Permission denied (os error 13)\n\
             autoctl: 2 errors in 2 modules (1 task root)\n"
        )
    );
}

#[test]
fn nothing_readable_is_exit_2() {
    let sb = Sandbox::new();
    module(&sb, "TASK", "a", "");
    let root = sb.path("TASK");
    fs::set_permissions(&root, fs::Permissions::from_mode(0o000)).unwrap();
    let output = sb.unprivileged(&["lint", "--no-git", root.to_str().unwrap()]);
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(
        stdout(&output),
        format!(
            "{}: error[unreadable]: cannot list the task root: Permission denied (os error 13)\n",
            root.display()
        )
    );
    assert_eq!(
        one_stderr_line(&output),
        "autoctl: nothing could be checked: 1 unreadable path and no readable task module"
    );
}

#[test]
fn non_utf8_names_are_reported_and_printed_safely() {
    let sb = Sandbox::new();
    let root = sb.path("TASK");
    let odd = root.join(std::ffi::OsStr::from_bytes(b"bad\xff\x1b[31m"));
    fs::create_dir_all(&odd).unwrap();
    fs::write(
        odd.join(".index.md"),
        "---\ntitle: odd\nstatus: draft\ncreated: 2024-01-01T00:00:00Z\nupdated: 2024-01-01T00:00:00Z\n---\n",
    )
    .unwrap();
    fs::write(odd.join(".target.md"), "# T\nShow odd names safely.\n").unwrap();
    fs::write(
        odd.join(std::ffi::OsStr::from_bytes(b"pl\xfean.md")),
        "# Plan\n",
    )
    .unwrap();
    sb.write("TASK/.index.md", "# TASK\n");
    let output = sb.cmd().args(["lint", "TASK"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert_eq!(
        out,
        "TASK/.index.md: warning[root-index-unlisted]: module \"bad\u{fffd}\\u{1b}[31m\" is not listed (add '- [bad\u{fffd}\\u{1b}[31m](./bad\u{fffd}\\u{1b}[31m/.index.md) — <title>')\n\
         TASK/bad\u{fffd}\\u{1b}[31m: error[module-name]: module name \"bad\u{fffd}\\u{1b}[31m\" is not valid UTF-8 (allowed: letters, digits, '-' and '_')\n"
    );
    assert!(
        !out.contains('\u{1b}'),
        "no raw escape reaches the terminal"
    );
    let output = sb
        .cmd()
        .args(["lint", "--format", "json", "TASK"])
        .output()
        .unwrap();
    assert_eq!(
        json_findings(&output)[1]["path"],
        "TASK/bad\u{fffd}\u{1b}[31m"
    );
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn git_transient_files_tracked_and_not_ignored() {
    let sb = Sandbox::new();
    let repo = sb.path("repo");
    let a = module(&sb, "repo/TASK", "a", "");
    module(&sb, "repo/TASK", "b", "");
    listing(&sb, "repo/TASK", &["a", "b"]);
    fs::write(
        a.join(".auto-signal"),
        r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2024-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "TASK"]);
    git(&repo, &["commit", "-q", "-m", "tasks"]);
    let lint = |extra: &[&str]| {
        let output = sb
            .cmd()
            .current_dir(&repo)
            .arg("lint")
            .args(extra)
            .output()
            .unwrap();
        (output.status.code(), stdout(&output))
    };

    // Nothing ignores the transient names (and `git add TASK` took the signal along).
    let (code, out) = lint(&[]);
    assert_eq!(code, Some(1));
    assert_eq!(
        out,
        "TASK: warning[transient-not-ignored]: git does not ignore .auto-retry in 2 of 2 modules (e.g. a/.auto-retry, b/.auto-retry); add .auto-retry to .gitignore\n\
         TASK: warning[transient-not-ignored]: git does not ignore .auto-signal in 2 of 2 modules (e.g. a/.auto-signal, b/.auto-signal); add .auto-signal to .gitignore\n\
         TASK: warning[transient-not-ignored]: git does not ignore .auto-stop in 2 of 2 modules (e.g. a/.auto-stop, b/.auto-stop); add .auto-stop to .gitignore\n\
         TASK: warning[transient-not-ignored]: git does not ignore .tmp-annotations.json in 2 of 2 modules (e.g. a/.tmp-annotations.json, b/.tmp-annotations.json); add .tmp-annotations.json to .gitignore\n\
         TASK/a/.auto-signal: error[transient-tracked]: a transient file is tracked by git; remove it with `git rm --cached` and ignore it\n"
    );

    // The seeds' .gitignore lines cover everything; untracking the signal clears the error.
    fs::write(
        repo.join(".gitignore"),
        ".worktrees/\nTASK/**/.tmp-annotations.json\nTASK/**/.auto-signal\nTASK/**/.auto-stop\nTASK/**/.auto-retry\n",
    )
    .unwrap();
    git(&repo, &["rm", "-q", "--cached", "TASK/a/.auto-signal"]);
    assert_eq!(lint(&[]), (Some(0), String::new()));

    // A nested .gitignore that re-includes a name is honoured, as git would.
    fs::write(repo.join("TASK/b/.gitignore"), "!.auto-stop\n").unwrap();
    let (code, out) = lint(&[]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "TASK: warning[transient-not-ignored]: git does not ignore .auto-stop in 1 of 2 modules (e.g. b/.auto-stop); add .auto-stop to .gitignore\n"
    );
    // Force-adding an ignored stop file is still caught; --no-git skips the git rules.
    fs::write(
        a.join(".auto-stop"),
        r#"{"reason":"user_stop","timestamp":"2024-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    git(&repo, &["add", "-f", "TASK/a/.auto-stop"]);
    let (code, out) = lint(&["--deny", "warnings"]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("TASK/a/.auto-stop: error[transient-tracked]"),
        "{out}"
    );
    assert_eq!(lint(&["--no-git"]), (Some(0), String::new()));
}

#[test]
fn broken_pipe_is_a_clean_exit() {
    let sb = Sandbox::new();
    // Well over a pipe buffer of findings, so the write after `head` exits fails.
    for i in 0..1500 {
        module(&sb, "TASK", &format!("m{i}"), "branch: wrong\n");
    }
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "\"{}\" lint --no-git TASK | head -1; echo \"status=${{PIPESTATUS[0]}}\"",
            bin()
        ))
        .current_dir(sb.root())
        .output()
        .unwrap();
    let out = stdout(&output);
    assert!(out.ends_with("status=0\n"), "{out}");
    assert!(
        output.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn status_json_fixtures_agree_with_the_schema_and_the_reader() {
    use autoctl::protocol::status;
    for file in fixtures("status", "valid") {
        let bytes = fs::read(&file).unwrap();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(
            autoctl::schema::violations("task-status", &value).is_empty(),
            "{}",
            file.display()
        );
        let parsed = status::parse(&bytes).unwrap_or_else(|p| panic!("{}: {p:?}", file.display()));
        let again = serde_json::to_vec(&parsed).unwrap();
        assert_eq!(
            status::parse(&again).unwrap(),
            parsed,
            "round trip of {}",
            file.display()
        );
    }
    for file in fixtures("status", "invalid") {
        assert!(
            status::parse(&fs::read(&file).unwrap()).is_err(),
            "{}",
            file.display()
        );
    }
    let sb = Sandbox::new();
    sb.cmd()
        .args(["schema", "show", "task-status"])
        .assert()
        .code(0)
        .stdout(include_str!("../../schemas/task-status.schema.json"));
}

#[test]
fn ci_integrations_run_autoctl_lint() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hooks: Value =
        serde_saphyr::from_str(&fs::read_to_string(root.join(".pre-commit-hooks.yaml")).unwrap())
            .unwrap();
    let hooks = hooks.as_array().expect("a list of hooks");
    assert!(!hooks.is_empty());
    for hook in hooks {
        for key in ["id", "name", "entry", "language"] {
            assert!(hook[key].is_string(), "hook lacks {key}: {hook}");
        }
        assert!(
            hook["entry"].as_str().unwrap().starts_with("autoctl lint"),
            "{hook}"
        );
    }
    let workflow: Value = serde_saphyr::from_str(
        &fs::read_to_string(root.join("examples/github-actions/lint.yml")).unwrap(),
    )
    .unwrap();
    let steps = workflow["jobs"]["lint"]["steps"]
        .as_array()
        .expect("jobs.lint.steps");
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(
        runs.iter()
            .any(|r| r.contains("autoctl lint") && r.contains("--format github")),
        "{runs:?}"
    );
    assert!(
        runs.iter().any(|r| r.contains("--format sarif")),
        "{runs:?}"
    );
}

#[test]
fn the_readme_documents_every_rule() {
    let readme = include_str!("../../docs/lint.md");
    for rule in RULES {
        assert!(
            readme.contains(&format!("| `{}` | {} |", rule.id, rule.severity.as_str())),
            "docs/lint.md has no row for rule {}",
            rule.id
        );
    }
}

#[test]
fn a_named_path_without_task_modules_is_a_usage_error() {
    let sb = Sandbox::new();
    sb.module("empty/src");
    let output = sb.cmd().args(["lint", "empty"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(
        one_stderr_line(&output),
        "autoctl: no task roots (TASK/, AiTasks/) or modules found under empty"
    );
    assert!(output.stdout.is_empty());
    // Linting the current directory by default (a pre-commit run in a repository without task
    // modules) is only a warning.
    let output = sb
        .cmd()
        .current_dir(sb.path("empty"))
        .arg("lint")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("warning: no task roots"));
}

#[test]
fn the_walk_skips_git_and_worktrees() {
    let sb = Sandbox::new();
    module(&sb, "repo/TASK", "auth", "");
    listing(&sb, "repo/TASK", &["auth"]);
    // Broken modules where lint must not look: git's own files and task worktrees (each a
    // checkout of the same modules, linted in their own repository).
    for hidden in [
        "repo/.git/TASK/broken",
        "repo/.worktrees/task-auth/TASK/broken",
    ] {
        sb.write(&format!("{hidden}/.index.md"), "no front matter\n");
    }
    sb.cmd()
        .args(["lint", "--no-git", "repo"])
        .assert()
        .code(0)
        .stdout("");
    // The same broken module outside those directories is found: the fixture can fail.
    sb.write("repo/TASK/broken/.index.md", "no front matter\n");
    let output = sb
        .cmd()
        .args(["lint", "--no-git", "--format", "json", "repo"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let paths: BTreeSet<String> = json_findings(&output)
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert!(
        paths.iter().all(|p| p.starts_with("repo/TASK/")),
        "{paths:?}"
    );
    assert!(paths.contains("repo/TASK/broken/.index.md"), "{paths:?}");
}

#[test]
fn yaml_errors_carry_line_and_column() {
    let sb = Sandbox::new();
    let dir = module(&sb, "TASK", "a", "");
    listing(&sb, "TASK", &["a"]);
    fs::write(
        dir.join(".index.md"),
        "---\ntitle: \"a\"\nstatus: executing\ncreated: 2024-01-01T00:00:00Z\nupdated: 2024-01-02T00:00:00Z\ntags: [x, y\n---\n",
    )
    .unwrap();
    sb.cmd().args(["lint", "--no-git", "TASK"]).assert().code(1).stdout(
        "TASK/a/.index.md:6:7: error[index-yaml]: YAML does not parse: unclosed bracket '[' at line 6, column 7\n",
    );
}
