//! `autoctl vfp step|show`: task-ai's VFP cycle tracking (VH→HS transitions per exec step,
//! and the anomaly check after three steps without one), kept in a small state file.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::{ArgGroup, Args, Subcommand};
use serde::Serialize;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::fsx::{self, FileLock};
use crate::output;
use crate::protocol::document;
use crate::protocol::signal::now_timestamp;
use crate::taskai::vfp::{self, Anomaly, DEFAULT_ANOMALY_AFTER, VfpState};

/// The default state file, in the task's working directory.
pub const DEFAULT_STATE: &str = ".vfp-state.json";

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum VfpCommand {
    /// Record one exec step: did it turn a VH stub into a passing test (a VH→HS transition)?
    ///
    /// A transition completes a cycle. After --anomaly-after (3) steps in a row without one,
    /// prints the mid-exec check that task-ai then runs (`check<TAB>mid-exec`, like `autoctl
    /// next`) and exits 0, with the note "VFP anomaly: N steps without VH→HS transition —
    /// verify test discipline" on stderr (and in --format json); the count then starts over.
    /// Otherwise prints nothing and exits 1. The state file is created when missing and
    /// updated atomically under a lock (FILE.lock) so two steps recorded at once both count.
    #[command(group(ArgGroup::new("outcome").required(true).args(["transition", "no_transition"])))]
    Step(StepArgs),
    /// Print the cycles completed (of the VH stubs, when known) and the steps since the last
    /// transition
    Show(ShowArgs),
}

#[derive(Debug, Args)]
pub struct StepArgs {
    /// The state file (a symlink is refused)
    #[arg(long, value_name = "FILE", default_value = DEFAULT_STATE)]
    pub state: PathBuf,
    /// The step made a VH→HS transition
    #[arg(long)]
    pub transition: bool,
    /// The step made none
    #[arg(long)]
    pub no_transition: bool,
    /// Steps in a row without a transition that raise the anomaly (0: never)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ANOMALY_AFTER)]
    pub anomaly_after: u32,
    /// The VH stubs the plan generated (vh-baseline.md), for the progress display
    #[arg(long, value_name = "N")]
    pub stubs_total: Option<u64>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The state file
    #[arg(long, value_name = "FILE", default_value = DEFAULT_STATE)]
    pub state: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// What `step --format json` prints.
#[derive(Debug, Serialize)]
struct Stepped<'a> {
    state: &'a VfpState,
    #[serde(skip_serializing_if = "Option::is_none")]
    anomaly: Option<&'a Anomaly>,
}

pub fn run(command: VfpCommand) -> Result<Exit> {
    match command {
        VfpCommand::Step(args) => step(&args),
        VfpCommand::Show(args) => show(&args),
    }
}

fn read(path: &Path) -> Result<Option<VfpState>> {
    let Some(bytes) = fsx::read_document(path, "a VFP state file")? else {
        return Ok(None);
    };
    let value = document::parse_with_schema(&bytes, "vfp-state")
        .map_err(|p| anyhow::anyhow!("{}: {} (fix or delete it)", path.display(), p[0]))?;
    document::typed_from_value(&value)
        .map(Some)
        .map_err(|p| anyhow::anyhow!("{}: {}", path.display(), p[0]))
}

fn step(args: &StepArgs) -> Result<Exit> {
    let path = &args.state;
    fsx::refuse_symlink(path, "VFP state file", "--state")?;
    let _lock = FileLock::acquire(&fsx::side_lock_path(path))?;
    fsx::refuse_symlink(path, "VFP state file", "--state")?;
    let now = now_timestamp(crate::time::now()?);
    let mut state = read(path)?.unwrap_or_else(|| VfpState::new(&now));
    if let Some(total) = args.stubs_total {
        state.vh_stubs_total = Some(total);
    }
    let (next, anomaly) = vfp::step(&state, args.transition, args.anomaly_after, &now);
    let mut bytes = serde_json::to_vec_pretty(&next).expect("the state serializes");
    bytes.push(b'\n');
    fsx::atomic_write(path, &bytes)?;
    match args.format {
        Format::Json => output::json_line(&Stepped {
            state: &next,
            anomaly: anomaly.as_ref(),
        })?,
        Format::Text => {
            if let Some(anomaly) = &anomaly {
                output::warn(&anomaly.note);
                output::line(format_args!("{}\t{}", anomaly.next, anomaly.checkpoint))?;
            }
        }
    }
    Ok(Exit::from_bool(anomaly.is_some()))
}

fn show(args: &ShowArgs) -> Result<Exit> {
    let Some(state) = read(&args.state)? else {
        bail!(
            "no VFP state in {} (autoctl vfp step creates it)",
            args.state.display()
        );
    };
    match args.format {
        Format::Json => output::json_line(&state)?,
        Format::Text => output::line(format_args!(
            "cycles\t{}{}\nsteps-without-transition\t{}\nanomalies\t{}",
            state.cycles_completed,
            state
                .vh_stubs_total
                .map(|t| format!("/{t}"))
                .unwrap_or_default(),
            state.steps_without_transition,
            state.anomalies
        ))?,
    }
    Ok(Exit::Yes)
}
