//! The route-phase matrix (seed 003, Steps 2, 3 and 3a): from an issue's Size, the route
//! flags and the issue's phase label to the phase sequence `/auto` runs.
//!
//! | route      | size   | phases                                                |
//! | patch      | XS, S  | spec (when needed) → code(--patch) → verify           |
//! | pr (M)     | M      | spec (when needed) → code → review(--light) → merge → verify |
//! | pr (L)     | L      | spec (when needed) → code → review(--full) → merge → verify  |
//! | xl         | XL     | sub-issue dependency graph (spec runs per sub-issue)  |
//! | (unset)    | —      | the pr route with a light review (safe fallback)      |
//!
//! Explicit `--patch`/`--pr` win over the Size; `--review` sets the depth; `--base BRANCH`
//! (default `main`) changes no route and is passed to the phases that take it (`code`, and the
//! XL route's sub-issue runs). After a spec run
//! the Size is re-read (Step 3a) unless a flag was given, and the route re-determined; a
//! pr → patch change is the "route demotion" that drops review and merge.

use serde::Serialize;

/// An issue's Size (the Projects field or label), `unset` when it has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
pub enum Size {
    #[value(name = "XS")]
    #[serde(rename = "XS")]
    Xs,
    #[value(name = "S")]
    #[serde(rename = "S")]
    S,
    #[value(name = "M")]
    #[serde(rename = "M")]
    M,
    #[value(name = "L")]
    #[serde(rename = "L")]
    L,
    #[value(name = "XL")]
    #[serde(rename = "XL")]
    Xl,
    /// No Size set
    #[value(name = "unset")]
    #[serde(rename = "unset")]
    Unset,
}

impl Size {
    pub fn name(self) -> &'static str {
        match self {
            Size::Xs => "XS",
            Size::S => "S",
            Size::M => "M",
            Size::L => "L",
            Size::Xl => "XL",
            Size::Unset => "unset",
        }
    }
}

/// An explicit route flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouteFlag {
    Patch,
    Pr,
}

/// Review depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Review {
    /// `review --light`
    Light,
    /// `review --full`
    Full,
}

/// The issue's `phase/*` label state at Step 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum LabelPhase {
    /// `phase/ready`: the spec is done
    Ready,
    /// `phase/issue` without `phase/ready`: the spec may run
    Issue,
    /// No `phase/*` label: triage (`/issue`) runs first
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    Patch,
    Pr,
    /// The XL route: the sub-issue dependency graph.
    Xl,
}

impl Route {
    pub fn name(self) -> &'static str {
        match self {
            Route::Patch => "patch",
            Route::Pr => "pr",
            Route::Xl => "xl",
        }
    }
}

/// Where the route came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouteSource {
    Flag,
    Size,
    /// Size not set: the pr route, because nobody can be asked in non-interactive mode.
    Fallback,
    /// Re-determined from the Size re-read after the spec phase.
    Refresh,
}

#[derive(Debug, Clone)]
pub struct RouteInput {
    pub size: Size,
    pub flag: Option<RouteFlag>,
    pub review: Option<Review>,
    pub phase: Option<LabelPhase>,
    /// The Size re-read after a successful spec run (Step 3a).
    pub refreshed_size: Option<Size>,
    /// `--base BRANCH` (checked with [`check_branch`]); `None` means `main`.
    pub base: Option<String>,
}

/// The base branch when `--base` is not given (seed 003: `BASE_BRANCH=main`).
pub const DEFAULT_BASE: &str = "main";

/// A name git would not take as a branch (printed as the caller gave it, control
/// characters escaped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a branch name (git check-ref-format --branch)")]
pub struct NotABranch(pub String);

/// A branch name git would accept as a ref (`git check-ref-format --branch`), and that is
/// safe to pass on as one argument: no whitespace or control characters, no `..`, `~ ^ : ? *
/// [ \`, no `@{`, not starting with `-` or `/`, not ending with `/`, `.` or `.lock`.
pub fn check_branch(name: &str) -> Result<String, NotABranch> {
    let bad = name.is_empty()
        || name.len() > 255
        || name.starts_with(['-', '/', '.'])
        || name.ends_with(['/', '.'])
        || name.ends_with(".lock")
        || name.contains("..")
        || name.contains("@{")
        || name.contains("//")
        || name.contains("/.")
        || name == "@"
        || name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
    if bad {
        Err(NotABranch(crate::output::printable(name)))
    } else {
        Ok(name.to_string())
    }
}

/// One phase to run, with its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Phase {
    pub phase: &'static str,
    pub args: Vec<String>,
}

impl Phase {
    fn new(phase: &'static str, args: &[&str]) -> Phase {
        Phase {
            phase,
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    /// `code --patch`, `review --light`, `verify`.
    pub fn command_line(&self) -> String {
        std::iter::once(self.phase.to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether the phase takes `--base` (seed 003: `run-code.sh $NUMBER --pr [--base
    /// {branch}]`; the XL route passes it on to each sub-issue's run).
    fn takes_base(&self) -> bool {
        matches!(self.phase, "code" | "sub-issues")
    }
}

/// What Step 3 decides about the spec phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spec {
    /// Label state not given: the spec runs "when needed" (pass --phase to decide).
    WhenNeeded,
    /// `phase/ready`: skip.
    Done,
    /// `phase/issue` and Size XS: the spec is not needed.
    NotNeeded,
    /// Run the spec.
    Run,
    /// Size L: run the spec with the Opus model.
    RunOpus,
    /// No label: triage first, then decide again from the re-read labels and Size.
    AfterTriage,
    /// The spec already ran (a refreshed Size was given).
    Ran,
    /// XL: the spec runs per sub-issue.
    PerSubIssue,
}

/// Step 3a's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refresh {
    pub applied: bool,
    pub reason: String,
    pub from_size: Size,
    pub to_size: Size,
    pub from_route: Route,
    pub to_route: Route,
    /// The pr → patch demotion: review and merge are dropped.
    pub demoted: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct RouteDecision {
    pub route: Route,
    pub size: Size,
    /// The base branch every phase works against (`main` unless `--base` said otherwise).
    pub base: String,
    pub source: RouteSource,
    /// `None` where no review runs (patch, XL).
    pub review: Option<Review>,
    pub spec: Spec,
    pub phases: Vec<Phase>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh: Option<Refresh>,
    /// The seed's log lines for this decision.
    pub log: Vec<String>,
    /// Inputs that had no effect, and why.
    pub notes: Vec<String>,
}

/// Route from Size alone (Step 2 auto-detect, Step 3a's refreshed table).
pub fn route_for_size(size: Size) -> (Route, RouteSource) {
    match size {
        Size::Xs | Size::S => (Route::Patch, RouteSource::Size),
        Size::M | Size::L => (Route::Pr, RouteSource::Size),
        Size::Xl => (Route::Xl, RouteSource::Size),
        Size::Unset => (Route::Pr, RouteSource::Fallback),
    }
}

/// REVIEW_DEPTH (Step 2): the flag, else from the Size (L full, anything else light).
pub fn review_depth(route: Route, size: Size, review: Option<Review>) -> Option<Review> {
    match route {
        Route::Patch | Route::Xl => None,
        Route::Pr => Some(review.unwrap_or(match size {
            Size::L => Review::Full,
            _ => Review::Light,
        })),
    }
}

fn spec_for(phase: Option<LabelPhase>, size: Size, route: Route) -> Spec {
    if route == Route::Xl {
        return Spec::PerSubIssue;
    }
    match phase {
        None => Spec::WhenNeeded,
        Some(LabelPhase::Ready) => Spec::Done,
        Some(LabelPhase::None) => Spec::AfterTriage,
        Some(LabelPhase::Issue) => match size {
            Size::Xs => Spec::NotNeeded,
            Size::L => Spec::RunOpus,
            _ => Spec::Run,
        },
    }
}

/// The phases after the spec for a route.
fn route_phases(route: Route, review: Option<Review>) -> Vec<Phase> {
    match route {
        Route::Patch => vec![Phase::new("code", &["--patch"]), Phase::new("verify", &[])],
        Route::Pr => vec![
            Phase::new("code", &[]),
            Phase::new(
                "review",
                &[match review.unwrap_or(Review::Light) {
                    Review::Light => "--light",
                    Review::Full => "--full",
                }],
            ),
            Phase::new("merge", &[]),
            Phase::new("verify", &[]),
        ],
        Route::Xl => vec![Phase::new("sub-issues", &[])],
    }
}

/// Decide the route and the phases to run.
pub fn decide(input: &RouteInput) -> RouteDecision {
    let mut log = Vec::new();
    let mut notes = Vec::new();
    let (route, source) = match input.flag {
        Some(RouteFlag::Patch) => (Route::Patch, RouteSource::Flag),
        Some(RouteFlag::Pr) => (Route::Pr, RouteSource::Flag),
        None => route_for_size(input.size),
    };
    let mut chosen = Chosen {
        route,
        source,
        size: input.size,
        review: review_depth(route, input.size, input.review),
        spec: spec_for(input.phase, input.size, route),
    };
    if route == Route::Patch && input.review.is_some() {
        notes.push("--review has no effect on the patch route (no review phase)".to_string());
    }
    let refresh = input
        .refreshed_size
        .map(|refreshed| refresh_size(input, refreshed, &mut chosen, &mut log, &mut notes));
    let phases = phases_to_run(&chosen, input.base.as_deref(), &mut notes);
    RouteDecision {
        route: chosen.route,
        size: chosen.size,
        base: input
            .base
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE.to_string()),
        source: chosen.source,
        review: chosen.review,
        spec: chosen.spec,
        phases,
        refresh,
        log,
        notes,
    }
}

/// The route as decided so far: a post-spec Size refresh may change it.
struct Chosen {
    route: Route,
    source: RouteSource,
    size: Size,
    review: Option<Review>,
    spec: Spec,
}

/// The post-spec Size refresh: applied (route, review depth and spec re-determined from the
/// refreshed Size) only when the spec ran and no explicit flag chose the route.
fn refresh_size(
    input: &RouteInput,
    refreshed: Size,
    chosen: &mut Chosen,
    log: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Refresh {
    let explicit = input.flag.is_some() || input.review.is_some();
    let spec_ran = matches!(
        chosen.spec,
        Spec::Run | Spec::RunOpus | Spec::WhenNeeded | Spec::AfterTriage
    );
    let (to_route, _) = route_for_size(refreshed);
    let mut outcome = Refresh {
        applied: false,
        reason: String::new(),
        from_size: chosen.size,
        to_size: refreshed,
        from_route: chosen.route,
        to_route: chosen.route,
        demoted: false,
    };
    if explicit {
        outcome.reason =
            "explicit --patch/--pr/--review flags take priority: the Size is not re-read"
                .to_string();
    } else if !spec_ran {
        outcome.reason = format!(
            "the spec did not run ({}): nothing to refresh",
            match chosen.spec {
                Spec::Done => "phase/ready was already set",
                Spec::NotNeeded => "Size XS skips the spec",
                _ => "XL runs the spec per sub-issue",
            }
        );
    } else {
        outcome.applied = true;
        outcome.to_route = to_route;
        outcome.demoted = chosen.route == Route::Pr && to_route == Route::Patch;
        outcome.reason =
            "the spec ran: route and review depth re-determined from the refreshed Size"
                .to_string();
        if to_route != chosen.route {
            log.push(format!(
                "Post-spec Size refresh: Size updated to {}, route re-determined as {}.",
                refreshed.name(),
                to_route.name()
            ));
        }
        if outcome.demoted {
            log.push(
                "Post-spec route demotion: pr → patch, remaining phases re-planned".to_string(),
            );
        }
        chosen.route = to_route;
        chosen.source = RouteSource::Refresh;
        chosen.size = refreshed;
        chosen.review = review_depth(to_route, refreshed, None);
        chosen.spec = if to_route == Route::Xl {
            Spec::PerSubIssue
        } else {
            Spec::Ran
        };
    }
    if !outcome.applied && spec_ran {
        // The caller says the spec ran: it is not to be run again.
        chosen.spec = Spec::Ran;
    }
    if !outcome.applied {
        notes.push(format!("--refreshed-size ignored: {}", outcome.reason));
    }
    outcome
}

/// The phases to run: the spec (or triage first) when it is to run, then the route's own,
/// each that takes a base given `base`.
fn phases_to_run(chosen: &Chosen, base: Option<&str>, notes: &mut Vec<String>) -> Vec<Phase> {
    let mut phases = Vec::new();
    match chosen.spec {
        Spec::AfterTriage => {
            phases.push(Phase::new("issue", &[]));
            notes.push(
                "no phase/* label: triage runs first; route again with the re-read Size and labels"
                    .to_string(),
            );
        }
        Spec::Run => phases.push(Phase::new("spec", &[])),
        Spec::RunOpus => phases.push(Phase::new("spec", &["--opus"])),
        _ => {}
    }
    phases.extend(route_phases(chosen.route, chosen.review));
    if let Some(base) = base {
        for phase in phases.iter_mut().filter(|p| p.takes_base()) {
            phase.args.push("--base".to_string());
            phase.args.push(base.to_string());
        }
    }
    phases
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(size: Size) -> RouteInput {
        RouteInput {
            size,
            flag: None,
            review: None,
            phase: Some(LabelPhase::Ready),
            refreshed_size: None,
            base: None,
        }
    }

    fn phases(decision: &RouteDecision) -> String {
        decision
            .phases
            .iter()
            .map(Phase::command_line)
            .collect::<Vec<_>>()
            .join(" → ")
    }

    /// The Route-Phase Matrix, row by row (spec already done, so only the route's phases).
    #[test]
    fn the_route_phase_matrix() {
        let rows = [
            (Size::Xs, "patch", "code --patch → verify"),
            (Size::S, "patch", "code --patch → verify"),
            (Size::M, "pr", "code → review --light → merge → verify"),
            (Size::L, "pr", "code → review --full → merge → verify"),
            (Size::Xl, "xl", "sub-issues"),
            (Size::Unset, "pr", "code → review --light → merge → verify"),
        ];
        for (size, route, expected) in rows {
            let d = decide(&input(size));
            assert_eq!(d.route.name(), route, "{size:?}");
            assert_eq!(phases(&d), expected, "{size:?}");
        }
        assert_eq!(decide(&input(Size::Unset)).source, RouteSource::Fallback);
    }

    /// Step 2: `--base` changes no route and goes to the phases that take it.
    #[test]
    fn a_base_branch_propagates_to_the_phases_that_take_it() {
        let mut i = input(Size::M);
        assert_eq!(decide(&i).base, "main");
        i.base = Some("release/2.x".to_string());
        let d = decide(&i);
        assert_eq!(d.route, Route::Pr);
        assert_eq!(d.base, "release/2.x");
        assert_eq!(
            phases(&d),
            "code --base release/2.x → review --light → merge → verify"
        );
        i.size = Size::Xl;
        assert_eq!(phases(&decide(&i)), "sub-issues --base release/2.x");
        for bad in [
            "", "-x", "a..b", "a b", "x.lock", "a:b", "feat/", "@", "a\u{1b}",
        ] {
            assert!(check_branch(bad).is_err(), "{bad:?}");
        }
        assert!(check_branch("feature/login-2").is_ok());
    }

    /// Step 2's flag table, row by row.
    #[test]
    fn the_flag_table() {
        let rows = [
            (
                Some(RouteFlag::Patch),
                None,
                Size::L,
                "patch",
                "code --patch → verify",
            ),
            (
                Some(RouteFlag::Pr),
                None,
                Size::S,
                "pr",
                "code → review --light → merge → verify",
            ),
            (
                Some(RouteFlag::Pr),
                Some(Review::Full),
                Size::S,
                "pr",
                "code → review --full → merge → verify",
            ),
            (
                Some(RouteFlag::Pr),
                Some(Review::Light),
                Size::L,
                "pr",
                "code → review --light → merge → verify",
            ),
            (
                None,
                None,
                Size::M,
                "pr",
                "code → review --light → merge → verify",
            ),
        ];
        for (flag, review, size, route, expected) in rows {
            let d = decide(&RouteInput {
                flag,
                review,
                ..input(size)
            });
            assert_eq!(
                (d.route.name(), phases(&d).as_str()),
                (route, expected),
                "{flag:?} {review:?} {size:?}"
            );
            if flag.is_some() {
                assert_eq!(d.source, RouteSource::Flag);
            }
        }
    }

    /// REVIEW_DEPTH, row by row.
    #[test]
    fn the_review_depth_table() {
        assert_eq!(
            review_depth(Route::Pr, Size::S, Some(Review::Full)),
            Some(Review::Full)
        );
        assert_eq!(
            review_depth(Route::Pr, Size::L, Some(Review::Light)),
            Some(Review::Light)
        );
        assert_eq!(
            review_depth(Route::Patch, Size::M, Some(Review::Full)),
            None
        );
        assert_eq!(review_depth(Route::Pr, Size::M, None), Some(Review::Light));
        assert_eq!(review_depth(Route::Pr, Size::L, None), Some(Review::Full));
        for other in [Size::Xs, Size::S, Size::Xl, Size::Unset] {
            assert_eq!(
                review_depth(Route::Pr, other, None),
                Some(Review::Light),
                "{other:?}"
            );
        }
    }

    /// Step 3, the phase-label check, row by row.
    #[test]
    fn the_label_check() {
        let rows = [
            (LabelPhase::Ready, Size::M, Spec::Done, ""),
            (LabelPhase::Issue, Size::Xs, Spec::NotNeeded, ""),
            (LabelPhase::Issue, Size::L, Spec::RunOpus, "spec --opus → "),
            (LabelPhase::Issue, Size::M, Spec::Run, "spec → "),
            (LabelPhase::Issue, Size::S, Spec::Run, "spec → "),
            (LabelPhase::Issue, Size::Unset, Spec::Run, "spec → "),
            (LabelPhase::None, Size::M, Spec::AfterTriage, "issue → "),
        ];
        for (phase, size, spec, prefix) in rows {
            let d = decide(&RouteInput {
                phase: Some(phase),
                ..input(size)
            });
            assert_eq!(d.spec, spec, "{phase:?} {size:?}");
            assert!(
                phases(&d).starts_with(prefix),
                "{phase:?} {size:?}: {}",
                phases(&d)
            );
            if prefix.is_empty() {
                assert!(phases(&d).starts_with("code"), "{}", phases(&d));
            }
        }
        let d = decide(&RouteInput {
            phase: None,
            ..input(Size::M)
        });
        assert_eq!(d.spec, Spec::WhenNeeded);
        assert_eq!(
            decide(&RouteInput {
                phase: Some(LabelPhase::Issue),
                ..input(Size::Xl)
            })
            .spec,
            Spec::PerSubIssue
        );
    }

    /// Step 3a's refreshed table, row by row, starting from an M issue whose spec ran.
    #[test]
    fn the_post_spec_refresh_table() {
        let rows = [
            (Size::Xs, "patch", None, true),
            (Size::S, "patch", None, true),
            (Size::M, "pr", Some(Review::Light), false),
            (Size::L, "pr", Some(Review::Full), false),
            (Size::Xl, "xl", None, false),
            (Size::Unset, "pr", Some(Review::Light), false),
        ];
        for (refreshed, route, review, demoted) in rows {
            let d = decide(&RouteInput {
                phase: Some(LabelPhase::Issue),
                refreshed_size: Some(refreshed),
                ..input(Size::M)
            });
            assert_eq!(d.route.name(), route, "{refreshed:?}");
            assert_eq!(d.review, review, "{refreshed:?}");
            let r = d.refresh.as_ref().unwrap();
            assert!(r.applied);
            assert_eq!(r.demoted, demoted, "{refreshed:?}");
            assert!(!phases(&d).contains("spec"), "the spec already ran");
            if demoted {
                assert_eq!(phases(&d), "code --patch → verify");
                assert!(
                    d.log.iter().any(|l| l
                        == "Post-spec route demotion: pr → patch, remaining phases re-planned")
                );
                assert!(d.log.iter().any(|l| l
                    == &format!(
                        "Post-spec Size refresh: Size updated to {}, route re-determined as patch.",
                        refreshed.name()
                    )));
            }
            if route == "pr" {
                assert!(d.log.is_empty(), "no change, no log line: {:?}", d.log);
            }
        }
    }

    #[test]
    fn the_refresh_is_skipped_when_flags_were_given_or_no_spec_ran() {
        for (flag, review) in [
            (Some(RouteFlag::Pr), None),
            (Some(RouteFlag::Patch), None),
            (None, Some(Review::Full)),
        ] {
            let d = decide(&RouteInput {
                flag,
                review,
                phase: Some(LabelPhase::Issue),
                refreshed_size: Some(Size::Xs),
                ..input(Size::M)
            });
            let r = d.refresh.unwrap();
            assert!(
                !r.applied && r.reason.contains("explicit"),
                "{flag:?} {review:?}"
            );
        }
        for (phase, size) in [(LabelPhase::Ready, Size::M), (LabelPhase::Issue, Size::Xs)] {
            let d = decide(&RouteInput {
                phase: Some(phase),
                refreshed_size: Some(Size::L),
                ..input(size)
            });
            assert!(!d.refresh.unwrap().applied, "{phase:?} {size:?}");
        }
    }
}
