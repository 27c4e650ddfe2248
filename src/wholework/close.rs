//! The XL parent's close flow (wholework `/auto`, Step 4c), as a pure decision: from the
//! sub-issues' outcomes and the parent issue's body to what happens to the parent.
//!
//! 1. A sub-issue that failed, was skipped, or is not at `phase/done`: the parent stays as it
//!    is — and the decision lists what remains, so the run's report says why.
//! 2. Every sub-issue at `phase/done`: the post-merge section of the parent's body is read for
//!    unchecked conditions (`- [ ] …`).
//! 3. None: the parent is closed (`phase/done`, `gh issue close`).
//! 4. Some: the parent moves to `phase/verify` and gets a comment asking for `/verify`; it is
//!    left open for a person.

use serde::Serialize;

use super::graph::Phase;

/// How one sub-issue ended, as the run reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChildState {
    /// At this phase label (`done` is the only finished one).
    At(Phase),
    /// Its run failed.
    Failed,
    /// Not run: something it depends on failed.
    Skipped,
}

impl ChildState {
    /// `done`, `verify`, `phase/code`, `failed`, `skipped`, `none`.
    pub fn parse(text: &str) -> Option<ChildState> {
        match text.trim().to_ascii_lowercase().as_str() {
            "failed" | "fail" => Some(ChildState::Failed),
            "skipped" | "skip" => Some(ChildState::Skipped),
            other => Phase::parse(other).map(ChildState::At),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ChildState::At(phase) => phase.name(),
            ChildState::Failed => "failed",
            ChildState::Skipped => "skipped",
        }
    }

    fn done(self) -> bool {
        self == ChildState::At(Phase::Done)
    }
}

/// What happens to the parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Disposition {
    /// Every sub-issue is done and no post-merge condition is open: close the parent.
    Close,
    /// Every sub-issue is done but post-merge conditions are unchecked: `phase/verify`, a
    /// comment, and a person runs `/verify`.
    Verify,
    /// Some sub-issue is not done: leave the parent as it is.
    Leave,
}

impl Disposition {
    pub fn name(self) -> &'static str {
        match self {
            Disposition::Close => "close",
            Disposition::Verify => "verify",
            Disposition::Leave => "leave",
        }
    }
}

/// A sub-issue that keeps the parent open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remaining {
    pub number: u64,
    pub state: &'static str,
}

/// The close flow's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CloseDecision {
    pub parent: u64,
    pub verdict: Disposition,
    /// Sub-issues not at `phase/done`, in the order given.
    pub remaining: Vec<Remaining>,
    /// The unchecked post-merge conditions (only read when every sub-issue is done).
    pub unchecked: Vec<String>,
    /// What wholework runs for the verdict.
    pub commands: Vec<String>,
    pub reason: String,
}

/// The comment wholework posts when manual conditions remain.
pub const VERIFY_COMMENT: &str = "All sub-issues are complete. The parent Issue has remaining \
manual acceptance conditions. Run `/verify NUMBER` after reviewing.";

/// Decide the close flow for `parent` from its children and its issue body.
pub fn decide(parent: u64, children: &[(u64, ChildState)], body: &str) -> CloseDecision {
    let remaining: Vec<Remaining> = children
        .iter()
        .filter(|(_, state)| !state.done())
        .map(|&(number, state)| Remaining {
            number,
            state: state.name(),
        })
        .collect();
    if children.is_empty() || !remaining.is_empty() {
        let reason = if children.is_empty() {
            "no sub-issues given: nothing shows the parent is finished".to_string()
        } else {
            format!(
                "{} of {} sub-issues not done: the parent stays as it is",
                remaining.len(),
                children.len()
            )
        };
        return CloseDecision {
            parent,
            verdict: Disposition::Leave,
            remaining,
            unchecked: Vec::new(),
            commands: Vec::new(),
            reason,
        };
    }
    let unchecked = unchecked_post_merge(body);
    if unchecked.is_empty() {
        CloseDecision {
            parent,
            verdict: Disposition::Close,
            remaining,
            unchecked,
            commands: vec![
                format!("gh-label-transition.sh {parent} done"),
                format!("gh issue close {parent}"),
            ],
            reason: "every sub-issue is done and no post-merge condition is open".to_string(),
        }
    } else {
        let comment = VERIFY_COMMENT.replace("NUMBER", &parent.to_string());
        CloseDecision {
            parent,
            verdict: Disposition::Verify,
            commands: vec![
                format!("gh-label-transition.sh {parent} verify"),
                format!("gh issue comment {parent} --body {comment:?}"),
            ],
            reason: format!(
                "every sub-issue is done; {} post-merge condition{} unchecked: a person runs /verify {parent}",
                unchecked.len(),
                if unchecked.len() == 1 { " is" } else { "s are" }
            ),
            remaining,
            unchecked,
        }
    }
}

/// Conditions the completion report lists (wholework Step 5: 1–5 each on its own line; 6 or
/// more, the first 5 then "... and N more").
pub const REPORT_CONDITIONS: usize = 5;

/// A condition as the completion report shows it (Step 5): its `<!-- verify: … -->` comments
/// (the verify command, for `/verify`, not for a person) removed and whitespace trimmed.
/// Other HTML comments are kept.
pub fn readable_condition(condition: &str) -> String {
    let mut out = String::with_capacity(condition.len());
    let mut rest = condition;
    while let Some(open) = rest.find("<!--") {
        let after = &rest[open + 4..];
        match after.find("-->") {
            Some(close) if after[..close].trim_start().starts_with("verify:") => {
                out.push_str(&rest[..open]);
                rest = &after[close + 3..];
            }
            _ => {
                out.push_str(&rest[..open + 4]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The completion report's list (Step 5): the first [`REPORT_CONDITIONS`] conditions made
/// readable, and how many more there are.
pub fn report_conditions(unchecked: &[String]) -> (Vec<String>, usize) {
    let shown = unchecked
        .iter()
        .take(REPORT_CONDITIONS)
        .map(|c| readable_condition(c))
        .collect();
    (shown, unchecked.len().saturating_sub(REPORT_CONDITIONS))
}

/// Why a sub-issue is not verified in Step 4d.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotVerified {
    pub number: u64,
    pub state: &'static str,
    pub reason: &'static str,
}

/// Step 4d's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyOrder {
    pub parent: u64,
    /// The issues to run `/verify` on, serially, in this order: the sub-issues at
    /// `phase/verify` in the order given, then the parent.
    pub order: Vec<u64>,
    /// The sub-issues left out, with why.
    pub left_out: Vec<NotVerified>,
}

/// wholework's Step 4d (XL route, after every level ran and before the close flow): the
/// sub-issues that reached `phase/verify` or `phase/done`, without those skipped for a
/// dependency's failure and those already at `phase/done` (verified and closed before), in
/// the graph's order, then the parent. Verify runs on each in turn even when one fails.
pub fn verify_order(parent: u64, children: &[(u64, ChildState)]) -> VerifyOrder {
    let mut order = Vec::new();
    let mut left_out = Vec::new();
    for &(number, state) in children {
        let reason = match state {
            ChildState::At(Phase::Verify) => {
                order.push(number);
                continue;
            }
            ChildState::At(Phase::Done) => "already at phase/done: verified and closed before",
            ChildState::Skipped => "skipped: a sub-issue it depends on failed",
            ChildState::Failed => "failed: it never reached phase/verify",
            ChildState::At(_) => "not at phase/verify yet",
        };
        left_out.push(NotVerified {
            number,
            state: state.name(),
            reason,
        });
    }
    order.push(parent);
    VerifyOrder {
        parent,
        order,
        left_out,
    }
}

/// The unchecked `- [ ]` items of the body's post-merge section: from a heading whose text
/// says "post-merge" (any level, any case) to the next heading of the same or a higher level.
/// Items inside fenced code are not conditions.
pub fn unchecked_post_merge(body: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut section: Option<usize> = None;
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        if let Some(level) = heading_level(trimmed) {
            if section.is_some_and(|open| level <= open) {
                section = None;
            }
            let title = trimmed[level..].trim().to_ascii_lowercase();
            if section.is_none() && (title.contains("post-merge") || title.contains("post merge")) {
                section = Some(level);
            }
            continue;
        }
        if section.is_some()
            && let Some(item) = unchecked_item(trimmed)
        {
            found.push(item.to_string());
        }
    }
    found
}

fn heading_level(line: &str) -> Option<usize> {
    let level = line.bytes().take_while(|b| *b == b'#').count();
    ((1..=6).contains(&level) && line[level..].starts_with([' ', '\t'])).then_some(level)
}

fn unchecked_item(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("+ "))?;
    rest.strip_prefix("[ ]").map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = "## Acceptance Criteria\n\n### Pre-merge\n- [ ] builds\n- [x] tests\n\n\
### Post-merge\n- [x] deployed to staging\n- [ ] dashboards show the new metric\n  \
- [ ] nested item counts too\n```\n- [ ] inside code does not\n```\n## Notes\n- [ ] not a condition\n";

    fn done(numbers: &[u64]) -> Vec<(u64, ChildState)> {
        numbers
            .iter()
            .map(|&n| (n, ChildState::At(Phase::Done)))
            .collect()
    }

    #[test]
    fn the_post_merge_section_is_read_for_unchecked_conditions() {
        assert_eq!(
            unchecked_post_merge(BODY),
            ["dashboards show the new metric", "nested item counts too"]
        );
        assert!(unchecked_post_merge("## Post-merge\n- [x] all done\n").is_empty());
        assert!(unchecked_post_merge("- [ ] no section at all\n").is_empty());
    }

    #[test]
    fn every_child_done_and_nothing_open_closes_the_parent() {
        let d = decide(300, &done(&[301, 302]), "## Post-merge\n- [x] done\n");
        assert_eq!(d.verdict, Disposition::Close);
        assert_eq!(
            d.commands,
            ["gh-label-transition.sh 300 done", "gh issue close 300"]
        );
    }

    #[test]
    fn open_conditions_move_the_parent_to_verify() {
        let d = decide(300, &done(&[301, 302]), BODY);
        assert_eq!(d.verdict, Disposition::Verify);
        assert_eq!(d.unchecked.len(), 2);
        assert!(d.commands[1].contains("/verify 300"), "{:?}", d.commands);
    }

    #[test]
    fn a_child_not_done_leaves_the_parent_and_lists_what_remains() {
        let mut children = done(&[301]);
        children.push((302, ChildState::Failed));
        children.push((303, ChildState::Skipped));
        children.push((304, ChildState::At(Phase::Verify)));
        let d = decide(300, &children, "");
        assert_eq!(d.verdict, Disposition::Leave);
        let remaining: Vec<(u64, &str)> = d.remaining.iter().map(|r| (r.number, r.state)).collect();
        assert_eq!(
            remaining,
            [(302, "failed"), (303, "skipped"), (304, "verify")]
        );
        assert!(d.commands.is_empty());
        assert_eq!(decide(300, &[], "").verdict, Disposition::Leave);
    }

    #[test]
    fn the_report_lists_five_readable_conditions_then_how_many_more() {
        assert_eq!(
            readable_condition("dashboards show it <!-- verify: curl -s /metrics | grep x -->  "),
            "dashboards show it"
        );
        assert_eq!(
            readable_condition("<!--verify: a--> a <!-- note --> b <!-- verify: c -->"),
            "a <!-- note --> b"
        );
        assert_eq!(
            readable_condition("open <!-- verify: never closed"),
            "open <!-- verify: never closed"
        );
        let seven: Vec<String> = (1..=7)
            .map(|i| format!("c{i} <!-- verify: t{i} -->"))
            .collect();
        let (shown, more) = report_conditions(&seven);
        assert_eq!(
            (shown, more),
            (
                vec!["c1", "c2", "c3", "c4", "c5"]
                    .into_iter()
                    .map(String::from)
                    .collect(),
                2
            )
        );
        let (shown, more) = report_conditions(&seven[..5]);
        assert_eq!((shown.len(), more), (5, 0));
    }

    #[test]
    fn step_4d_verifies_the_sub_issues_at_verify_then_the_parent() {
        let children = [
            (303, ChildState::At(Phase::Verify)),
            (301, ChildState::At(Phase::Done)),
            (304, ChildState::Skipped),
            (302, ChildState::At(Phase::Verify)),
            (305, ChildState::Failed),
        ];
        let v = verify_order(300, &children);
        assert_eq!(v.order, [303, 302, 300]);
        let left: Vec<u64> = v.left_out.iter().map(|n| n.number).collect();
        assert_eq!(left, [301, 304, 305]);
        assert_eq!(verify_order(300, &[]).order, [300]);
    }

    #[test]
    fn child_states_parse_like_labels() {
        assert_eq!(
            ChildState::parse("phase/done"),
            Some(ChildState::At(Phase::Done))
        );
        assert_eq!(ChildState::parse("FAILED"), Some(ChildState::Failed));
        assert_eq!(ChildState::parse("bogus"), None);
    }
}
