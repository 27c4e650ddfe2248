//! `autoctl gate`: task-ai's per-checkpoint score gate.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::fsx;
use crate::output;
use crate::taskai::gate::{self, Checkpoint, GateInput, Source};
use crate::taskai::profile::{self, Adaptation, MAX_RETRY_LIMIT};
use crate::taskai::score::Score;

/// Gate a check's D1–D6 score at a checkpoint: PASS, NEEDS_FIX, ... or BLOCKED
///
/// Compares the overall score with the checkpoint's threshold and the attempt with its retry
/// limit, and prints the check's verdict:
///
///   post-plan   PASS      | NEEDS_REVISION              threshold 0.70, 3 replans
///   mid-exec    CONTINUE  | NEEDS_FIX (REPLAN)          threshold 0.60, 2 fixes
///   post-exec   ACCEPT    | NEEDS_FIX (REPLAN)          threshold 0.75, 3 fixes/replans
///
/// A failing check whose attempt is past the retry limit answers BLOCKED: stop and notify the
/// user (the JSON carries the message). Thresholds and limits come from --threshold and
/// --retry-limit, else the profile's "## Auto Adaptation" section, else the table above.
/// Scores are compared at four decimal places, so a mean equal to the threshold passes.
/// The scores are task-ai's: its check rates a deliverable on six dimensions, D1 to D6, each
/// from 0 to 1, and their mean is the overall score.
///
/// Exit 0 when the work passes (PASS, CONTINUE, ACCEPT), 1 otherwise.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct GateArgs {
    /// The checkpoint the check ran at
    #[arg(long, value_enum, value_name = "CHECKPOINT")]
    pub checkpoint: Checkpoint,
    /// The overall score, or the six D1–D6 scores (space or comma separated), each 0–1
    #[arg(
        long,
        value_name = "SCORE",
        required = true,
        num_args = 1..=6,
        value_delimiter = ',',
        value_parser = Score::parse
    )]
    pub score: Vec<Score>,
    /// Which check this is at this checkpoint: 1 for the first (retry_count + 1)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub attempt: u32,
    /// A `.type-profile.md` whose "## Auto Adaptation" section sets thresholds and limits
    ///
    /// A file without the section means the fallbacks; a missing file too, with a warning on
    /// stderr (the profile does not exist before the type's first `profile learn`); a
    /// malformed section is an error naming the line.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Override the checkpoint's threshold
    #[arg(long, value_name = "SCORE", value_parser = Score::parse)]
    pub threshold: Option<Score>,
    /// Override the checkpoint's retry limit
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=MAX_RETRY_LIMIT as i64))]
    pub retry_limit: Option<u32>,
    /// At mid-exec and post-exec, answer REPLAN instead of NEEDS_FIX below this score
    ///
    /// Without it a failing check is a fix: task-ai leaves "fundamental issues" to the checker.
    #[arg(long, value_name = "SCORE", value_parser = Score::parse)]
    pub replan_below: Option<Score>,
    /// Output format (json: the whole decision, with the reason)
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Read a profile's section; `None` when the file or the section is absent.
pub fn read_profile(path: &Path) -> Result<Option<Adaptation>> {
    let Some(bytes) = fsx::read_document(path, "a profile")? else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not valid UTF-8 (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    profile::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

pub fn run(args: &GateArgs) -> Result<Exit> {
    if !matches!(args.score.len(), 1 | 6) {
        bail!(
            "--score takes one overall score or the six D1–D6 scores (got {})",
            args.score.len()
        );
    }
    if args.replan_below.is_some() && args.checkpoint == Checkpoint::PostPlan {
        bail!(
            "--replan-below applies at mid-exec and post-exec (a failing post-plan check is already a replan: NEEDS_REVISION)"
        );
    }
    let adaptation = match &args.profile {
        Some(path) => {
            let adaptation = read_profile(path)?;
            // Not an error: a type's first loop runs before `profile learn` has written its
            // profile, so the fallbacks are right. But a named file that is not there is as
            // often a typo or the wrong directory, and silence would hide that.
            if adaptation.is_none()
                && std::fs::symlink_metadata(path)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            {
                output::warn(&format!(
                    "profile {} does not exist; using the fallback thresholds and limits",
                    path.display()
                ));
            }
            adaptation
        }
        None => None,
    };
    let resolved = profile::resolve(adaptation.as_ref(), args.checkpoint);
    let source = |flag: bool, from_profile: bool| {
        if flag {
            Source::Flag
        } else if from_profile {
            Source::Profile
        } else {
            Source::Fallback
        }
    };
    let decision = gate::decide(&GateInput {
        checkpoint: args.checkpoint,
        scores: args.score.clone(),
        attempt: args.attempt,
        threshold: args.threshold.unwrap_or(resolved.threshold),
        threshold_source: source(args.threshold.is_some(), resolved.threshold_from_profile),
        retry_limit: args.retry_limit.unwrap_or(resolved.retry_limit),
        retry_limit_source: source(
            args.retry_limit.is_some(),
            resolved.retry_limit_from_profile,
        ),
        replan_below: args.replan_below,
    });
    match args.format {
        Format::Json => output::json_line(&decision)?,
        Format::Text => output::line(decision.verdict)?,
    }
    Ok(Exit::from_bool(decision.pass))
}
