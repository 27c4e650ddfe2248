//! `autoctl route`: wholework's size → route → phase sequence.

use anyhow::Result;
use clap::Args;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::output;
use crate::wholework::route::{self, LabelPhase, Review, RouteFlag, RouteInput, Size};

/// Print the phases an issue runs: the route-phase matrix by Size and flags
///
/// Size is wholework's size label of an issue (XS, S, M, L, XL: how big the change is):
///
///   XS, S     patch   code --patch → verify
///   M         pr      code → review --light → merge → verify
///   L         pr      code → review --full → merge → verify
///   XL        xl      sub-issues (run `autoctl graph levels`)
///   unset     pr      code → review --light → merge → verify (safe fallback)
///
/// --patch/--pr override the Size and --review the depth. With --phase the label check
/// decides the spec (phase/ready: done; phase/issue: XS none, L `spec --opus`, else `spec`;
/// no label: `issue` triage first). With --refreshed-size (the Size re-read after a spec
/// run) the route is re-determined unless a flag was given; pr → patch is the route demotion.
///
/// Text prints one phase per line with its arguments; JSON prints the whole decision.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct RouteArgs {
    /// The Size (omit when it has none)
    #[arg(
        long,
        value_enum,
        value_name = "SIZE",
        default_value = "unset",
        ignore_case = true
    )]
    pub size: Size,
    /// Force the patch route (code --patch → verify)
    #[arg(long, conflicts_with = "pr")]
    pub patch: bool,
    /// Force the pr route (code → review → merge → verify)
    #[arg(long)]
    pub pr: bool,
    /// Review depth on the pr route
    #[arg(long, value_enum, value_name = "DEPTH")]
    pub review: Option<Review>,
    /// The phase label: ready, issue, or none (no phase/* label)
    #[arg(long, value_enum, value_name = "LABEL")]
    pub phase: Option<LabelPhase>,
    /// The Size re-read after the spec phase succeeded (Step 3a)
    #[arg(long, value_enum, value_name = "SIZE", ignore_case = true)]
    pub refreshed_size: Option<Size>,
    /// The branch the work is based on and merged into [default: main]; passed to the
    /// phases that take it (code, and each XL sub-issue's run)
    #[arg(long, value_name = "BRANCH", value_parser = route::check_branch)]
    pub base: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub fn run(args: &RouteArgs) -> Result<Exit> {
    let decision = route::decide(&RouteInput {
        size: args.size,
        flag: if args.patch {
            Some(RouteFlag::Patch)
        } else if args.pr {
            Some(RouteFlag::Pr)
        } else {
            None
        },
        review: args.review,
        phase: args.phase,
        refreshed_size: args.refreshed_size,
        base: args.base.clone(),
    });
    match args.format {
        Format::Json => output::json_line(&decision)?,
        Format::Text => {
            for note in &decision.notes {
                output::warn(note);
            }
            for phase in &decision.phases {
                output::line(phase.command_line())?;
            }
        }
    }
    Ok(Exit::Yes)
}
