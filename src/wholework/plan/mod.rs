//! The tier-3 recovery-plan guard (seed 003, Step 6, `validate-recovery-plan.sh`): a plan a
//! sub-agent wrote is run only if it is parseable JSON with exactly the keys `action`,
//! `rationale`, `steps`; `action` is retry, skip, recover or abort; there are at most 5
//! steps; and no step does a forbidden operation — force push, `reset --hard`, close an
//! issue, merge a PR, push directly to main.
//!
//! Forbidden operations are found by reading each step the way a shell would ([`crate::shell`]),
//! not by matching text: words are unquoted (`'--force'`, `"-f"`, `$'\x2df'`), commands are split
//! at `;`, `&&`, `|`, newlines and substitutions, `bash -c '…'`/`eval`/`ssh host '…'` bodies
//! are read as commands too, prefixes such as `sudo`, `env X=1`, `command` are skipped, git's
//! global options (`-C dir`, `-c k=v`) and aliases defined with `-c alias.x=…` are followed,
//! and git push's options are parsed: `-f` in a cluster (`-uf`), any `--force*` (or an
//! abbreviation git accepts), a `+refspec`, `--mirror`; a destination of `main`/`master` in
//! any spelling (`HEAD:main`, `refs/heads/main`, `:main`), `--all`, or a variable that cannot
//! be resolved in the step. The guard errs towards refusing: a refused plan falls back to
//! stop-and-report, an accepted bad one can rewrite history.

use serde::Serialize;
use serde_json::Value;

pub mod forbidden;

use forbidden::{Forbidden, forbidden_in_value};

/// The plan's allowed actions.
pub const ACTIONS: [&str; 4] = ["retry", "skip", "recover", "abort"];
/// The plan's keys, all required.
pub const KEYS: [&str; 3] = ["action", "rationale", "steps"];
/// At most this many steps.
pub const MAX_STEPS: usize = 5;
/// Branches a recovery may never push to by default.
pub const PROTECTED: [&str; 2] = ["main", "master"];

/// One reason a plan is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanProblem {
    /// JSON Pointer to the offending value.
    pub pointer: String,
    pub message: String,
    /// The forbidden operation, when that is the problem.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbidden: Option<Forbidden>,
}

impl std::fmt::Display for PlanProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.pointer, self.message)
    }
}

fn problem(pointer: impl Into<String>, message: impl Into<String>) -> PlanProblem {
    PlanProblem {
        pointer: pointer.into(),
        message: message.into(),
        forbidden: None,
    }
}

/// Validate a parsed plan. Empty when the plan may run.
pub fn validate(plan: &Value, protected: &[String]) -> Vec<PlanProblem> {
    let mut problems = Vec::new();
    let Some(object) = plan.as_object() else {
        problems.push(problem(
            "/",
            format!("a plan is a JSON object, not {}", kind(plan)),
        ));
        return problems;
    };
    check_keys(object, &mut problems);
    check_action(object.get("action"), &mut problems);
    check_rationale(object.get("rationale"), &mut problems);
    match object.get("steps") {
        Some(Value::Array(steps)) => check_steps(steps, protected, &mut problems),
        Some(other) => problems.push(problem(
            "/steps",
            format!("must be an array, not {}", kind(other)),
        )),
        None => {}
    }
    problems
}

/// Exactly the plan's keys: each required one present, no other.
fn check_keys(object: &serde_json::Map<String, Value>, problems: &mut Vec<PlanProblem>) {
    for key in KEYS {
        if !object.contains_key(key) {
            problems.push(problem("/", format!("missing required key {key:?}")));
        }
    }
    for key in object.keys() {
        if !KEYS.contains(&key.as_str()) {
            problems.push(problem(
                format!("/{}", escape_pointer(key)),
                format!("unknown key {key:?} (a plan has exactly: action, rationale, steps)"),
            ));
        }
    }
}

/// `action`, when present, is one of the allowed actions.
fn check_action(action: Option<&Value>, problems: &mut Vec<PlanProblem>) {
    match action {
        Some(Value::String(a)) if ACTIONS.contains(&a.as_str()) => {}
        Some(Value::String(a)) => problems.push(problem(
            "/action",
            format!("{a:?} is not allowed (allowed: {})", ACTIONS.join(", ")),
        )),
        Some(other) => problems.push(problem(
            "/action",
            format!("must be a string, not {}", kind(other)),
        )),
        None => {}
    }
}

/// `rationale`, when present, is a string that says something.
fn check_rationale(rationale: Option<&Value>, problems: &mut Vec<PlanProblem>) {
    match rationale {
        Some(Value::String(r)) if !r.trim().is_empty() => {}
        Some(Value::String(_)) => problems.push(problem("/rationale", "is empty")),
        Some(other) => problems.push(problem(
            "/rationale",
            format!("must be a string, not {}", kind(other)),
        )),
        None => {}
    }
}

/// At most [`MAX_STEPS`] steps, each a command string or an object with no forbidden
/// operation in it.
fn check_steps(steps: &[Value], protected: &[String], problems: &mut Vec<PlanProblem>) {
    if steps.len() > MAX_STEPS {
        problems.push(problem(
            "/steps",
            format!(
                "{} steps; a recovery plan has at most {MAX_STEPS}",
                steps.len()
            ),
        ));
    }
    for (i, step) in steps.iter().enumerate() {
        let pointer = format!("/steps/{i}");
        match step {
            Value::String(_) | Value::Object(_) => {
                for (op, evidence) in forbidden_in_value(step, protected) {
                    problems.push(PlanProblem {
                        pointer: pointer.clone(),
                        message: forbidden_message(&op, &evidence),
                        forbidden: Some(op),
                    });
                }
            }
            other => problems.push(problem(
                pointer,
                format!(
                    "a step is a command string or an object, not {}",
                    kind(other)
                ),
            )),
        }
    }
}

/// What a step's forbidden operation is called in its problem.
fn forbidden_message(op: &Forbidden, evidence: &str) -> String {
    match op {
        Forbidden::Unreadable => format!(
            "unreadable: nested deeper than {} levels, longer than {} bytes (more than a shell can run), or unfolding into more than its reading budget, so it may hide a forbidden operation: {}",
            crate::shell::MAX_NESTING,
            crate::shell::MAX_LINE,
            shorten(evidence)
        ),
        _ => format!("forbidden operation {}: {}", op.id(), shorten(evidence)),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn shorten(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 120 {
        format!("{}...", one.chars().take(117).collect::<String>())
    } else {
        one
    }
}

#[cfg(test)]
mod tests {
    use super::forbidden::forbidden_ops;
    use super::*;
    use serde_json::json;

    fn protected() -> Vec<String> {
        PROTECTED.iter().map(|s| s.to_string()).collect()
    }

    fn ops(script: &str) -> Vec<&'static str> {
        forbidden_ops(script, &protected())
            .into_iter()
            .map(Forbidden::id)
            .collect()
    }

    /// Every forbidden operation, plain and disguised.
    #[test]
    fn forbidden_operations_and_their_disguises() {
        let cases: &[(&str, &[&str])] = &[
            ("git push --force origin feature", &["force_push"]),
            ("git push -f origin feature", &["force_push"]),
            ("git  push   -f   origin  feature", &["force_push"]),
            ("git push origin feature -f", &["force_push"]),
            ("git push -uf origin feature", &["force_push"]),
            ("git push -fu origin feature", &["force_push"]),
            (
                "git push --force-with-lease origin feature",
                &["force_push"],
            ),
            (
                "git push --force-with-lease=feature:abc origin feature",
                &["force_push"],
            ),
            (
                "git push --force-if-includes origin feature",
                &["force_push"],
            ),
            ("git push --forc origin feature", &["force_push"]),
            ("git push origin +feature", &["force_push"]),
            ("git push origin +HEAD:feature", &["force_push"]),
            ("git push origin '+feature'", &["force_push"]),
            ("git push \"--force\" origin feature", &["force_push"]),
            ("git push '-f' origin feature", &["force_push"]),
            ("git push --for\\ce origin feature", &["force_push"]),
            ("git push $'\\x2df' origin feature", &["force_push"]),
            (
                "git push $'\\055\\055force' origin feature",
                &["force_push"],
            ),
            ("/usr/bin/git push -f origin feature", &["force_push"]),
            ("GIT push -f origin feature", &["force_push"]),
            ("git -C /repo push -f origin feature", &["force_push"]),
            (
                "git -c core.editor=true push --force origin feature",
                &["force_push"],
            ),
            ("git --git-dir=.git push -f origin feature", &["force_push"]),
            ("sudo -u bot git push -f origin feature", &["force_push"]),
            (
                "env GIT_TRACE=1 git push -f origin feature",
                &["force_push"],
            ),
            ("GIT_TRACE=1 git push -f origin feature", &["force_push"]),
            ("command git push -f origin feature", &["force_push"]),
            ("timeout 60 git push -f origin feature", &["force_push"]),
            ("cd repo && git push -f origin feature", &["force_push"]),
            ("true; git push -f origin feature", &["force_push"]),
            ("echo ok || git push -f origin feature", &["force_push"]),
            ("(git push -f origin feature)", &["force_push"]),
            ("{ git push -f origin feature; }", &["force_push"]),
            (
                "if true; then git push -f origin feature; fi",
                &["force_push"],
            ),
            ("bash -c 'git push -f origin feature'", &["force_push"]),
            ("sh -c \"git push --force origin feature\"", &["force_push"]),
            ("eval \"git push -f origin feature\"", &["force_push"]),
            (
                "ssh host 'cd x; git push -f origin feature'",
                &["force_push"],
            ),
            ("echo $(git push -f origin feature)", &["force_push"]),
            ("echo `git push -f origin feature`", &["force_push"]),
            (
                "git push --mirror origin",
                &["force_push", "direct_push_main"],
            ),
            ("git -c alias.p='push -f' p origin feature", &["force_push"]),
            ("git reset --hard", &["reset_hard"]),
            ("git reset --hard HEAD~1", &["reset_hard"]),
            ("git reset  --hard   origin/main", &["reset_hard"]),
            ("git reset HEAD~1 --hard", &["reset_hard"]),
            ("git reset --ha HEAD", &["reset_hard"]),
            ("git reset '--hard'", &["reset_hard"]),
            ("git -C wt reset --hard", &["reset_hard"]),
            ("gh issue close 42", &["close_issue"]),
            ("gh  issue  close  42 --comment done", &["close_issue"]),
            ("gh -R owner/repo issue close 42", &["close_issue"]),
            ("gh issue close -R owner/repo 42", &["close_issue"]),
            (
                "gh api repos/o/r/issues/42 -X PATCH -f state=closed",
                &["close_issue"],
            ),
            (
                "gh api -X PATCH repos/o/r/issues/42 --field 'state=closed'",
                &["close_issue"],
            ),
            (
                "curl -X PATCH https://api.github.com/repos/o/r/issues/42 -d '{\"state\": \"closed\"}'",
                &["close_issue"],
            ),
            ("gh pr merge 17 --squash", &["merge_pr"]),
            ("gh pr merge --auto --merge 17", &["merge_pr"]),
            ("gh api -X PUT repos/o/r/pulls/17/merge", &["merge_pr"]),
            (
                "${CLAUDE_PLUGIN_ROOT}/scripts/run-merge.sh 17",
                &["merge_pr"],
            ),
            ("git push origin main", &["direct_push_main"]),
            ("git push origin HEAD:main", &["direct_push_main"]),
            ("git push origin feature:main", &["direct_push_main"]),
            (
                "git push origin HEAD:refs/heads/main",
                &["direct_push_main"],
            ),
            ("git push origin refs/heads/main", &["direct_push_main"]),
            ("git push origin :main", &["direct_push_main"]),
            ("git push --delete origin main", &["direct_push_main"]),
            ("git push -u origin main", &["direct_push_main"]),
            ("git push origin master", &["direct_push_main"]),
            ("git push origin 'main'", &["direct_push_main"]),
            ("git push origin Main", &["direct_push_main"]),
            ("git push --all origin", &["direct_push_main"]),
            ("git push origin {main,}", &["direct_push_main"]),
            ("git push -o ci.skip origin main", &["direct_push_main"]),
            ("B=main; git push origin $B", &["direct_push_main"]),
            ("B=main git push origin \"${B}\"", &["direct_push_main"]),
            ("git push origin $BRANCH", &["direct_push_main"]),
            (
                "git push origin $(git branch --show-current)",
                &["direct_push_main"],
            ),
            ("git push origin `cat branch.txt`", &["direct_push_main"]),
            ("git push origin ma\"\"in", &["direct_push_main"]),
            ("g\\it p\\ush -f origin feature", &["force_push"]),
            ("$GIT push -f origin feature", &["force_push"]),
            ("$(which git) push --force origin feature", &["force_push"]),
            (
                "find . -name x -exec git push -f origin feature \\;",
                &["force_push"],
            ),
            ("parallel git push -f origin ::: a b", &["force_push"]),
            (
                "gh api graphql -f query='mutation { mergePullRequest(input: {pullRequestId: \"x\"}) { clientMutationId } }'",
                &["merge_pr"],
            ),
            (
                "gh api graphql -f query='mutation { closeIssue(input: {issueId: \"x\"}) { clientMutationId } }'",
                &["close_issue"],
            ),
            ("git push --signed origin main", &["direct_push_main"]),
            (
                "git push --receive-pack git-receive-pack origin main",
                &["direct_push_main"],
            ),
            ("git push --repo=origin main", &["direct_push_main"]),
            ("git push origin +main", &["force_push", "direct_push_main"]),
            (
                "git push -f origin HEAD:main",
                &["force_push", "direct_push_main"],
            ),
        ];
        for (script, expected) in cases {
            assert_eq!(&ops(script), expected, "{script}");
        }
    }

    /// What a recovery legitimately does is not refused.
    #[test]
    fn ordinary_recovery_steps_pass() {
        for script in [
            "git push origin worktree-code+issue-42",
            "git push -u origin feature",
            "git push origin HEAD",
            "git push",
            "git push origin main:feature",
            "git push origin maintenance",
            "git fetch origin main",
            "git reset --soft HEAD~1",
            "git reset HEAD file.txt",
            "git rebase origin/main",
            "git push --follow-tags origin feature",
            "git push -o main origin feature",
            "gh issue view 42 --json labels",
            "gh issue comment 42 --body 'retrying; will not force push'",
            "gh pr view 17",
            "gh pr list --json number",
            "gh api repos/o/r/issues/42",
            "${CLAUDE_PLUGIN_ROOT}/scripts/run-code.sh 42 --pr",
            "reconcile-phase-state.sh merge 42 --check-completion",
            "echo main",
            "grep -f patterns.txt log",
        ] {
            assert!(ops(script).is_empty(), "{script}: {:?}", ops(script));
        }
    }

    #[test]
    fn the_plan_rules() {
        let ok = json!({"action": "recover", "rationale": "label was lost", "steps": ["gh-label-transition.sh 42 review", {"command": "git push origin feature"}]});
        assert!(validate(&ok, &protected()).is_empty());
        for action in ACTIONS {
            assert!(
                validate(
                    &json!({"action": action, "rationale": "r", "steps": []}),
                    &protected()
                )
                .is_empty()
            );
        }
        let cases: Vec<(Value, &str, &str)> = vec![
            (json!([]), "/", "a plan is a JSON object"),
            (
                json!({"rationale": "r", "steps": []}),
                "/",
                "missing required key \"action\"",
            ),
            (
                json!({"action": "retry", "steps": []}),
                "/",
                "missing required key \"rationale\"",
            ),
            (
                json!({"action": "retry", "rationale": "r"}),
                "/",
                "missing required key \"steps\"",
            ),
            (
                json!({"action": "retry", "rationale": "r", "steps": [], "confidence": 0.9}),
                "/confidence",
                "unknown key",
            ),
            (
                json!({"action": "rollback", "rationale": "r", "steps": []}),
                "/action",
                "not allowed (allowed: retry, skip, recover, abort)",
            ),
            (
                json!({"action": 1, "rationale": "r", "steps": []}),
                "/action",
                "must be a string",
            ),
            (
                json!({"action": "retry", "rationale": " ", "steps": []}),
                "/rationale",
                "is empty",
            ),
            (
                json!({"action": "retry", "rationale": "r", "steps": "git push"}),
                "/steps",
                "must be an array",
            ),
            (
                json!({"action": "recover", "rationale": "r", "steps": ["a", "b", "c", "d", "e", "f"]}),
                "/steps",
                "6 steps; a recovery plan has at most 5",
            ),
            (
                json!({"action": "recover", "rationale": "r", "steps": [3]}),
                "/steps/0",
                "command string or an object",
            ),
            (
                json!({"action": "recover", "rationale": "r", "steps": ["ok", "git push -f origin x"]}),
                "/steps/1",
                "forbidden operation force_push: git push -f origin x",
            ),
            (
                json!({"action": "recover", "rationale": "r", "steps": [{"op": "force-push"}]}),
                "/steps/0",
                "forbidden operation force_push",
            ),
            (
                json!({"action": "recover", "rationale": "r", "steps": [{"op": "Merge PR", "pr": 3}]}),
                "/steps/0",
                "forbidden operation merge_pr",
            ),
            (
                json!({"action": "recover", "rationale": "r", "steps": [{"argv": ["git", "reset", "--hard"]}]}),
                "/steps/0",
                "forbidden operation reset_hard",
            ),
            (
                json!({"action": "recover", "rationale": "r", "steps": [{"run": {"shell": "gh issue close 4"}}]}),
                "/steps/0",
                "forbidden operation close_issue",
            ),
        ];
        for (plan, pointer, needle) in cases {
            let problems = validate(&plan, &protected());
            assert!(
                problems
                    .iter()
                    .any(|p| p.pointer == pointer && p.message.contains(needle)),
                "{plan}: {problems:?}"
            );
        }
    }

    #[test]
    fn the_protected_branches_are_configurable() {
        let trunk = vec!["trunk".to_string()];
        assert_eq!(
            forbidden_ops("git push origin trunk", &trunk),
            vec![Forbidden::DirectPushMain]
        );
        assert!(forbidden_ops("git push origin main", &trunk).is_empty());
    }

    #[test]
    fn hostile_nesting_terminates() {
        let deep = "bash -c '".repeat(50) + "git push -f";
        let _ = forbidden_ops(&deep, &protected());
        let parens = "$(".repeat(10_000);
        let _ = forbidden_ops(&parens, &protected());
    }

    /// Up to the reader's depth a nested operation is found; one level deeper the step is
    /// refused as unreadable — never passed because the guard stopped looking.
    #[test]
    fn nesting_past_the_bound_is_refused_not_passed() {
        let depth = crate::shell::MAX_NESTING;
        let substituted = |n: usize| "echo $(".repeat(n) + "git push -f origin x" + &")".repeat(n);
        let wrapped = |n: usize| {
            (0..n).fold("git push -f origin x".to_string(), |inner, _| {
                format!("bash -c {}", crate::shell::quote(&inner))
            })
        };
        let harmless = |n: usize| "echo $(".repeat(n) + "date" + &")".repeat(n);
        for n in [1, depth] {
            assert_eq!(ops(&substituted(n)), ["force_push"], "{n}");
            assert_eq!(ops(&wrapped(n)), ["force_push"], "{n}");
            assert!(ops(&harmless(n)).is_empty(), "{n}");
        }
        for n in [depth + 1, 10, 100, 10_000] {
            assert!(ops(&substituted(n)).contains(&"unreadable"), "{n}");
            assert!(ops(&harmless(n)).contains(&"unreadable"), "{n}");
        }
        for n in [depth + 1, 10] {
            assert!(ops(&wrapped(n)).contains(&"unreadable"), "{n}");
        }
        // Through a plan, with a problem that says why.
        let plan =
            serde_json::json!({"action": "recover", "rationale": "r", "steps": [wrapped(10)]});
        let problems = validate(&plan, &protected());
        assert!(
            problems.iter().any(|p| p.message.starts_with("unreadable")),
            "{problems:?}"
        );
        // A step's JSON nested past its bound is refused too.
        let mut value = serde_json::json!("git status");
        for _ in 0..40 {
            value = serde_json::json!({ "then": value });
        }
        let plan = serde_json::json!({"action": "recover", "rationale": "r", "steps": [value]});
        assert!(!validate(&plan, &protected()).is_empty());
    }
}
