//! The `match` / `not_match` examples rules carry, checked through the same
//! [`super::decide`] every door uses: the built-in ones of `rules/policy.json` (by
//! [`builtin`], which this module's tests and `autoctl policy test` run) and a user's policy
//! file's (by [`super::Policy::wrong_examples`], when the file is read and by `policy test`).
//!
//! One walk, [`check_examples`], serves every kind of entry; what an example must be decided
//! as is a [`Want`]. Every example is judged in [`example_context`], the same on every
//! machine.

use serde_json::Value;

use super::{Policy, Subject, Verdict, decide, destructive, destructive_marker, subject};

/// The context a rule's examples are judged in, the same on every machine: the project at
/// `/home/dev/proj` (the working directory, a repository's top; a relative path is inside
/// it) and the home directory `/home/dev`.
pub fn example_context() -> super::Context {
    super::Context {
        cwd: Some(std::path::PathBuf::from("/home/dev/proj")),
        project: None,
        home: Some(std::path::PathBuf::from("/home/dev")),
        protected: vec![std::path::PathBuf::from("/home/dev/.config/autoctl")],
        git_top: true,
    }
}

/// An example as a tool call: a string is a Bash command, an object names its tool and
/// carries the tool's input.
pub fn example_call(example: &Value) -> Result<(String, Value), &'static str> {
    match example {
        Value::String(command) => Ok((
            "Bash".to_string(),
            serde_json::json!({ "command": command }),
        )),
        Value::Object(fields) => {
            let tool = fields
                .get("tool")
                .and_then(Value::as_str)
                .ok_or("an object example needs \"tool\"")?
                .to_string();
            let mut input = fields.clone();
            input.remove("tool");
            Ok((tool, Value::Object(input)))
        }
        _ => Err("an example is a command (a string) or a call ({\"tool\": …})"),
    }
}

/// `rules/policy.json` itself (only its examples are read here; build.rs compiled the rest).
pub const BUILTIN_SOURCE: &str = include_str!("../../rules/policy.json");

/// What an example must be decided as.
#[derive(Debug, Clone, Copy)]
pub enum Want<'a> {
    /// Decided with this verdict, the rule (`read-only`, `user:ID`) among the proof.
    DecidedBy(Verdict, &'a str),
    /// Not decided with this verdict by this rule (another rule may decide it).
    NotDecidedBy(Verdict, &'a str),
    /// Approved, by any rule.
    Approved,
    /// Approved by no rule.
    NotApproved,
    /// Not approved, and the reason names this (a secret or sensitive name's reason).
    RefusedFor(&'a str),
    /// The destructive set names this id, and nothing approves it.
    Named(&'a str),
    /// The destructive set does not name this id.
    NotNamed(&'a str),
}

/// How many examples were checked and each one decided the other way, as one line.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    pub examples: usize,
    pub wrong: Vec<String>,
}

/// The destructive ids a call hits: the whole set for a command, the sensitive-path marker
/// for any other call.
pub fn named(tool: &str, input: &Value) -> Vec<String> {
    match subject(tool, input) {
        Ok(Subject::Command(script)) => destructive::dangers(&script)
            .into_iter()
            .map(|d| d.id.to_string())
            .collect(),
        Ok(other) => destructive_marker(&other, &example_context())
            .into_iter()
            .map(|(id, _)| id)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Check `examples` (the entry `label`'s `key` list) against `want` under `policy`, adding
/// one line to `report` per example decided the other way (or not a call at all).
pub fn check_examples(
    policy: &Policy,
    label: &str,
    key: &str,
    examples: &[Value],
    want: Want,
    report: &mut Report,
) {
    let ctx = example_context();
    for example in examples {
        report.examples += 1;
        let (tool, input) = match example_call(example) {
            Ok(call) => call,
            Err(why) => {
                report
                    .wrong
                    .push(format!("{label}: {key} {example}: {why}"));
                continue;
            }
        };
        let d = decide(policy, &tool, &input, &ctx);
        let by = |verdict: Verdict, rule: &str| {
            d.decision == verdict && d.rule.split('+').any(|r| r == rule)
        };
        let ok = match want {
            Want::DecidedBy(verdict, rule) => by(verdict, rule),
            Want::NotDecidedBy(verdict, rule) => !by(verdict, rule),
            Want::Approved => d.decision == Verdict::Allow,
            Want::NotApproved => d.decision != Verdict::Allow,
            Want::RefusedFor(why) => d.decision != Verdict::Allow && d.reason.contains(why),
            Want::Named(id) => {
                // A runner's entry has no id: what it runs is named.
                let ids = named(&tool, &input);
                if !ids.iter().any(|i| i == id || id.is_empty()) {
                    report
                        .wrong
                        .push(format!("{label}: {key} {example} was named {ids:?}"));
                    continue;
                }
                d.decision != Verdict::Allow
            }
            Want::NotNamed(id) => {
                if named(&tool, &input)
                    .iter()
                    .any(|i| i == id || id.is_empty())
                {
                    report
                        .wrong
                        .push(format!("{label}: {key} {example} was named {id}"));
                }
                continue;
            }
        };
        if !ok {
            report.wrong.push(format!(
                "{label}: {key} {example} {}, but was {} {}: {}",
                want.says(),
                d.decision.as_str(),
                d.rule,
                d.reason
            ));
        }
    }
}

impl Want<'_> {
    /// What the example should have been, as a report says it.
    fn says(&self) -> String {
        match self {
            Want::DecidedBy(Verdict::Allow, rule) => format!("should be approved by {rule}"),
            Want::DecidedBy(verdict, rule) => format!("should be {} by {rule}", verdict.as_str()),
            Want::NotDecidedBy(Verdict::Allow, rule) => format!("should not be approved by {rule}"),
            Want::NotDecidedBy(verdict, rule) => {
                format!("should not be {} by {rule}", verdict.as_str())
            }
            Want::Approved => "should be approved".to_string(),
            Want::NotApproved => "should be approved by no rule".to_string(),
            Want::RefusedFor(why) => format!("should be refused: {why}"),
            Want::Named(id) => format!("should be named {id} and not approved"),
            Want::NotNamed(id) => format!("should not be named {id}"),
        }
    }
}

fn list<'a>(entry: &'a Value, key: &str) -> &'a [Value] {
    entry[key].as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// An entry needs both kinds of example (the destructive set: at least a match).
fn needs_both(label: &str, entry: &Value, report: &mut Report) {
    if list(entry, "match").is_empty() || list(entry, "not_match").is_empty() {
        report
            .wrong
            .push(format!("{label}: needs match and not_match examples"));
    }
}

/// An approving entry: its matches approved with `rule` among the proof, its not_matches
/// approved by no rule.
fn approving(policy: &Policy, label: &str, rule: &str, entry: &Value, report: &mut Report) {
    needs_both(label, entry, report);
    let approved = Want::DecidedBy(Verdict::Allow, rule);
    check_examples(
        policy,
        label,
        "match",
        list(entry, "match"),
        approved,
        report,
    );
    let none = Want::NotApproved;
    check_examples(
        policy,
        label,
        "not_match",
        list(entry, "not_match"),
        none,
        report,
    );
}

/// An entry of a program table: each match example runs one of the entry's own programs.
fn own_programs(label: &str, entry: &Value, report: &mut Report) {
    let programs = &entry["programs"];
    for example in list(entry, "match") {
        let first = example
            .as_str()
            .and_then(|e| e.split_whitespace().next())
            .unwrap_or_default();
        if !list(entry, "programs").iter().any(|p| p == first) {
            report.wrong.push(format!(
                "{label} {programs}: match {example} runs another program"
            ));
        }
    }
}

/// Every example of `rules/policy.json`, judged with the built-in rules alone.
pub fn builtin() -> Report {
    let data: Value = serde_json::from_str(BUILTIN_SOURCE).expect("rules/policy.json is JSON");
    check_data(&data)
}

/// A list's `match_is` that says nothing the checker can hold its examples to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum MatchIsError {
    #[error("match_is {0:?} is not allow, refuse, named:ID or not_named:ID of a destructive id")]
    Unknown(String),
    #[error("match_is is missing")]
    Missing,
}

/// What a list's examples say (`match_is`): its `match` examples are decided as the first
/// want and its `not_match` ones as the second. `allow` and `refuse` speak of approval;
/// `named:ID` and `not_named:ID` of the destructive set (for the lists the destructive
/// reading uses: a match is named ID and not approved, a not_match is not named ID; or the
/// other way round), where ID is on the one list of destructive ids.
fn list_wants(match_is: Option<&str>) -> Result<(Want<'_>, Want<'_>), MatchIsError> {
    let known = |id: &str| super::data::DESTRUCTIVE_IDS.contains(&id);
    match match_is {
        Some("allow") => Ok((Want::Approved, Want::NotApproved)),
        Some("refuse") => Ok((Want::NotApproved, Want::Approved)),
        Some(other) => match other.split_once(':') {
            Some(("named", id)) if known(id) => Ok((Want::Named(id), Want::NotNamed(id))),
            Some(("not_named", id)) if known(id) => Ok((Want::NotNamed(id), Want::Named(id))),
            _ => Err(MatchIsError::Unknown(other.to_string())),
        },
        None => Err(MatchIsError::Missing),
    }
}

/// Every example of `data` (the shape of `rules/policy.json`), judged with the built-in
/// rules alone: the approving entries, the lists, the secret and sensitive names, the
/// destructive ids and the destructive set's program table.
fn check_data(data: &Value) -> Report {
    let policy = Policy::builtin();
    let mut report = Report::default();
    check_approving(&policy, data, &mut report);
    check_lists(&policy, data, &mut report);
    check_names(&policy, data, &mut report);
    check_destructive(&policy, data, &mut report);
    check_program_table(&policy, data, &mut report);
    report
}

/// An entry's `match` examples decided as `matches`, its `not_match` ones as `others`.
fn both_ways(
    policy: &Policy,
    label: &str,
    entry: &Value,
    (matches, others): (Want, Want),
    r: &mut Report,
) {
    check_examples(policy, label, "match", list(entry, "match"), matches, r);
    check_examples(
        policy,
        label,
        "not_match",
        list(entry, "not_match"),
        others,
        r,
    );
}

/// The entries that approve: the rules, the read-only programs, the runner tools, the flag
/// tables and the argument forms, each by its rule.
fn check_approving(policy: &Policy, data: &Value, r: &mut Report) {
    for rule in list(data, "rules") {
        let id = rule["id"].as_str().unwrap_or_default();
        approving(policy, &format!("rules.{id}"), id, rule, r);
    }
    for program in list(data, "read_only_programs") {
        let label = format!("read_only_programs {}", program["programs"]);
        approving(policy, &label, "read-only", program, r);
        own_programs("read_only_programs", program, r);
    }
    for tool in list(data, "runner_tools") {
        let label = format!("runner_tools {}", tool["programs"]);
        approving(policy, &label, "runner", tool, r);
        own_programs("runner_tools", tool, r);
    }
    for (name, table) in data["flag_tables"].as_object().into_iter().flatten() {
        let rule = table["rule"].as_str().unwrap_or_default();
        approving(policy, &format!("flag_tables.{name}"), rule, table, r);
    }
    for (name, entry) in data["argument_forms"].as_object().into_iter().flatten() {
        if name.starts_with('$') {
            continue;
        }
        let rule = entry["rule"].as_str().unwrap_or_default();
        approving(policy, &format!("argument_forms.{name}"), rule, entry, r);
    }
}

/// The lists, each decided as its `match_is` says.
fn check_lists(policy: &Policy, data: &Value, r: &mut Report) {
    for (name, entry) in data["lists"].as_object().into_iter().flatten() {
        let label = format!("lists.{name}");
        let wants = match list_wants(entry["match_is"].as_str()) {
            Ok(wants) => wants,
            Err(why) => {
                r.wrong.push(format!("{label}: {why}"));
                continue;
            }
        };
        needs_both(&label, entry, r);
        both_ways(policy, &label, entry, wants, r);
    }
}

/// The secret and sensitive names: matches refused for the name's reason, neighbours
/// approved.
fn check_names(policy: &Policy, data: &Value, r: &mut Report) {
    for field in ["secret_names", "sensitive_names"] {
        for entry in list(data, field) {
            let why = entry["why"].as_str().unwrap_or_default();
            let label = format!("{field} {why}");
            needs_both(&label, entry, r);
            both_ways(
                policy,
                &label,
                entry,
                (Want::RefusedFor(why), Want::Approved),
                r,
            );
        }
    }
}

/// The one list of destructive ids: matches named by the id, neighbours not.
fn check_destructive(policy: &Policy, data: &Value, r: &mut Report) {
    for entry in list(data, "destructive") {
        // A screen's markers are named on a permission screen only (rules/pane-rules.json).
        if entry["door"] == "screen" {
            continue;
        }
        let id = entry["id"].as_str().unwrap_or_default();
        let label = format!("destructive.{id}");
        // `unreadable` cannot be written down: a line nested deeper than the reader reads.
        if id != "unreadable" && list(entry, "match").is_empty() {
            r.wrong.push(format!("{label}: no match example"));
        }
        both_ways(
            policy,
            &label,
            entry,
            (Want::Named(id), Want::NotNamed(id)),
            r,
        );
    }
}

/// The destructive set's program table: matches named by the entry (its id and its
/// explanation, not another entry's with the same id), neighbours not.
fn check_program_table(policy: &Policy, data: &Value, r: &mut Report) {
    for entry in list(data, "destructive_programs") {
        let id = entry["id"].as_str().unwrap_or_default();
        let label = format!("destructive_programs {} {id}", entry["programs"]);
        needs_both(&label, entry, r);
        both_ways(
            policy,
            &label,
            entry,
            (Want::Named(id), Want::NotNamed(id)),
            r,
        );
        let explanation = entry["explanation"].as_str().unwrap_or_default();
        for example in list(entry, "match").iter().filter(|_| !id.is_empty()) {
            let script = example.as_str().unwrap_or_default();
            if !destructive::dangers(script)
                .iter()
                .any(|d| d.id == id && d.explanation == explanation)
            {
                r.wrong.push(format!(
                    "{label}: match {example} is not named for {explanation:?}"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_builtin_example_is_decided_as_written() {
        let report = builtin();
        assert!(
            report.examples > 800,
            "the walk reached every entry: {}",
            report.examples
        );
        assert!(
            report.wrong.is_empty(),
            "rules/policy.json:\n{}",
            report.wrong.join("\n")
        );
    }

    /// The walk can fail: each kind of want reports an example decided the other way.
    #[test]
    fn an_example_decided_the_other_way_is_reported() {
        let policy = Policy::builtin();
        let mut report = Report::default();
        let r = &mut report;
        let rm = [json!("rm -rf build")];
        let ls = [json!("ls")];
        check_examples(
            &policy,
            "a",
            "match",
            &rm,
            Want::DecidedBy(Verdict::Allow, "read-only"),
            r,
        );
        check_examples(&policy, "b", "match", &ls, Want::NotApproved, r);
        check_examples(&policy, "c", "match", &rm, Want::Approved, r);
        check_examples(&policy, "d", "match", &ls, Want::RefusedFor("secret"), r);
        check_examples(&policy, "e", "match", &ls, Want::Named("rm"), r);
        check_examples(&policy, "f", "not_match", &rm, Want::NotNamed("rm"), r);
        check_examples(
            &policy,
            "g",
            "match",
            &ls,
            Want::NotDecidedBy(Verdict::Allow, "read-only"),
            r,
        );
        check_examples(&policy, "h", "match", &[json!(3)], Want::Approved, r);
        let labels: Vec<&str> = report.wrong.iter().map(|w| &w[..1]).collect();
        assert_eq!(
            labels,
            ["a", "b", "c", "d", "e", "f", "g", "h"],
            "{:#?}",
            report.wrong
        );
        assert_eq!(report.examples, 8);
        // And the right answers pass.
        let mut fine = Report::default();
        let f = &mut fine;
        check_examples(
            &policy,
            "a",
            "match",
            &ls,
            Want::DecidedBy(Verdict::Allow, "read-only"),
            f,
        );
        check_examples(&policy, "b", "match", &rm, Want::NotApproved, f);
        check_examples(&policy, "e", "match", &rm, Want::Named("rm"), f);
        check_examples(&policy, "f", "not_match", &ls, Want::NotNamed("rm"), f);
        assert!(fine.wrong.is_empty(), "{:#?}", fine.wrong);
    }

    /// A list's examples can say "named destructive, by this id": one named otherwise, or
    /// not at all, is reported, and so is an id the one list does not hold.
    #[test]
    fn a_named_list_example_is_checked_for_its_id() {
        let data = json!({"lists": {
            "good": {"match_is": "named:rm", "match": ["rm -rf x"], "not_match": ["ls"]},
            "other": {"match_is": "named:rm", "match": ["git reset --hard"], "not_match": ["rm -rf x"]},
            "not": {"match_is": "not_named:sql-drop", "match": ["grep 'DROP TABLE' m.sql"], "not_match": ["grep -h 'DROP TABLE x' m.sql"]},
            "unknown": {"match_is": "named:nope", "match": ["rm x"], "not_match": ["ls"]},
        }});
        let report = check_data(&data);
        let mut wrong: Vec<String> = report
            .wrong
            .iter()
            .map(|w| w.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .collect();
        wrong.sort();
        assert_eq!(
            wrong,
            [
                "lists.not: not_match \"grep",
                "lists.other: match \"git",
                "lists.other: not_match \"rm",
                "lists.unknown: match_is \"named:nope\"",
            ],
            "{:#?}",
            report.wrong
        );
    }

    #[test]
    fn unreadable_is_named_for_a_line_nested_too_deep() {
        let deep = format!(
            "{}x{}",
            "$(".repeat(crate::shell::MAX_NESTING + 2),
            ")".repeat(crate::shell::MAX_NESTING + 2)
        );
        let ids = named("Bash", &json!({ "command": deep }));
        assert_eq!(ids.first().map(String::as_str), Some("unreadable"));
    }
}
