//! `autoctl route`: wholework's route-phase matrix, through the binary.

use crate::util::{Sandbox, json_lines, one_stderr_line, stdout};

fn route(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.cmd().arg("route").args(args).output().unwrap()
}

/// The Route-Phase Matrix, row by row.
#[test]
fn the_route_phase_matrix() {
    let sb = Sandbox::new();
    let rows: [(&[&str], &str); 6] = [
        (&["--size", "XS"], "code --patch\nverify\n"),
        (&["--size", "S"], "code --patch\nverify\n"),
        (&["--size", "M"], "code\nreview --light\nmerge\nverify\n"),
        (&["--size", "L"], "code\nreview --full\nmerge\nverify\n"),
        (&["--size", "XL"], "sub-issues\n"),
        (&[], "code\nreview --light\nmerge\nverify\n"),
    ];
    for (args, phases) in rows {
        let out = route(&sb, args);
        assert_eq!(
            (out.status.code(), stdout(&out).as_str()),
            (Some(0), phases),
            "{args:?}"
        );
        assert!(out.stderr.is_empty());
        let mut json_args = args.to_vec();
        json_args.extend(["--format", "json"]);
        let decision = json_lines(&route(&sb, &json_args)).remove(0);
        assert!(
            autoctl::schema::violations("route-decision", &decision).is_empty(),
            "{decision}"
        );
    }
}

/// Step 2's flags and Step 3's label check.
#[test]
fn flags_and_labels() {
    let sb = Sandbox::new();
    let rows: [(&[&str], &str); 7] = [
        (&["--size", "L", "--patch"], "code --patch\nverify\n"),
        (
            &["--size", "XS", "--pr"],
            "code\nreview --light\nmerge\nverify\n",
        ),
        (
            &["--size", "XS", "--pr", "--review", "full"],
            "code\nreview --full\nmerge\nverify\n",
        ),
        (
            &["--size", "L", "--pr", "--review", "light"],
            "code\nreview --light\nmerge\nverify\n",
        ),
        (
            &["--size", "L", "--phase", "issue"],
            "spec --opus\ncode\nreview --full\nmerge\nverify\n",
        ),
        (
            &["--size", "S", "--phase", "issue"],
            "spec\ncode --patch\nverify\n",
        ),
        (
            &["--size", "XS", "--phase", "issue"],
            "code --patch\nverify\n",
        ),
    ];
    for (args, phases) in rows {
        let out = route(&sb, args);
        assert_eq!(stdout(&out), phases, "{args:?}");
    }
    let out = route(&sb, &["--size", "M", "--phase", "none"]);
    assert_eq!(stdout(&out), "issue\ncode\nreview --light\nmerge\nverify\n");
    assert!(one_stderr_line(&out).contains("triage runs first"));
}

/// Step 3a: the post-spec refresh and the pr → patch demotion.
#[test]
fn the_post_spec_refresh_and_demotion() {
    let sb = Sandbox::new();
    let out = route(
        &sb,
        &[
            "--size",
            "M",
            "--phase",
            "issue",
            "--refreshed-size",
            "S",
            "--format",
            "json",
        ],
    );
    let d = json_lines(&out).remove(0);
    assert_eq!(d["route"], "patch");
    assert_eq!(d["refresh"]["demoted"], true);
    assert_eq!(
        d["log"],
        serde_json::json!([
            "Post-spec Size refresh: Size updated to S, route re-determined as patch.",
            "Post-spec route demotion: pr → patch, remaining phases re-planned"
        ])
    );
    let out = route(
        &sb,
        &["--size", "M", "--phase", "issue", "--refreshed-size", "S"],
    );
    assert_eq!(stdout(&out), "code --patch\nverify\n");
    let out = route(
        &sb,
        &["--size", "S", "--phase", "issue", "--refreshed-size", "L"],
    );
    assert_eq!(stdout(&out), "code\nreview --full\nmerge\nverify\n");
    // An explicit flag keeps the route; the refreshed Size is ignored with a warning.
    let out = route(
        &sb,
        &[
            "--size",
            "M",
            "--pr",
            "--phase",
            "issue",
            "--refreshed-size",
            "S",
        ],
    );
    assert_eq!(stdout(&out), "code\nreview --light\nmerge\nverify\n");
    assert!(one_stderr_line(&out).contains("explicit"));
}

#[test]
fn bad_input_is_a_usage_error() {
    let sb = Sandbox::new();
    for args in [
        &["--size", "XXL"][..],
        &["--patch", "--pr"],
        &["--review", "deep"],
        &["--phase", "done"],
        &["--refreshed-size", "huge"],
    ] {
        let out = route(&sb, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        one_stderr_line(&out);
    }
}

/// Item 5: `--base BRANCH` changes no route; it goes to the phases that take it.
#[test]
fn a_base_branch_is_passed_to_the_phases_that_take_it() {
    let sb = Sandbox::new();
    let out = route(&sb, &["--size", "M", "--base", "release/2.x"]);
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (
            Some(0),
            "code --base release/2.x\nreview --light\nmerge\nverify\n"
        )
    );
    let out = route(&sb, &["--size", "XS", "--base", "hotfix", "--patch"]);
    assert_eq!(stdout(&out), "code --patch --base hotfix\nverify\n");
    let decision = json_lines(&route(&sb, &["--size", "L", "--format", "json"])).remove(0);
    assert_eq!(decision["base"], "main");
    assert!(autoctl::schema::violations("route-decision", &decision).is_empty());
    for bad in ["a b", "-x", "a..b", "x.lock"] {
        let out = route(&sb, &["--size", "M", &format!("--base={bad}")]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            one_stderr_line(&out).contains("not a branch name"),
            "{bad:?}"
        );
    }
}
