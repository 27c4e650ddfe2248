//! `autoctl vfp step|show`: task-ai's VFP cycle tracking (VH→HS transitions per exec step,
//! and the anomaly check after three steps without one), kept in a small state file.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
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

/// The record of completed cycles (seed 002: "Append to cumulative-green.jsonl"), beside the
/// state file unless `--green` names another.
pub const GREEN_FILE: &str = "cumulative-green.jsonl";

/// One line of the record of completed cycles.
#[derive(Debug, Serialize, serde::Deserialize)]
struct GreenLine {
    cycle: u64,
    timestamp: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tests: Vec<String>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum VfpCommand {
    /// Record one exec step: did it turn a VH stub into a passing test (a VH→HS transition)?
    ///
    /// A transition completes a cycle and appends one JSON line for it to the cumulative
    /// record of cycles (--green, `cumulative-green.jsonl` beside the state file):
    /// {"cycle": N, "timestamp": ..., "tests": [...]} with the tests --test names. After
    /// --anomaly-after (3) steps in a row without one,
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
    /// The record of completed cycles, one JSON line each (default: cumulative-green.jsonl in
    /// the state file's directory; a symlink is refused)
    #[arg(long, value_name = "FILE")]
    pub green: Option<PathBuf>,
    /// A test the transition turned green (repeatable), recorded in its line
    #[arg(long = "test", value_name = "NAME", requires = "transition")]
    pub tests: Vec<String>,
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
    if next.cycles_completed > state.cycles_completed {
        let green = args
            .green
            .clone()
            .unwrap_or_else(|| fsx::parent_dir(path).join(GREEN_FILE));
        append_green(&green, next.cycles_completed, &now, &args.tests)?;
    }
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

/// Append cycle `cycle`'s line to the record, unless its last line is already that cycle's:
/// a step killed between this append and the state's write is recorded again by its retry,
/// and the record must not hold the cycle twice. The line is one `write(2)` under the
/// state's lock.
fn append_green(path: &Path, cycle: u64, now: &str, tests: &[String]) -> Result<()> {
    fsx::refuse_symlink(path, "cycle record", "--green")?;
    if last_cycle(path)? == Some(cycle) {
        return Ok(());
    }
    let line = GreenLine {
        cycle,
        timestamp: now.to_string(),
        tests: tests.to_vec(),
    };
    let mut bytes = serde_json::to_vec(&line).expect("the line serializes");
    bytes.push(b'\n');
    fsx::append_volatile(path, &bytes)
        .with_context(|| format!("cannot append to {}", path.display()))
}

/// The cycle of the record's last complete line (None: no file, no line, or not ours).
fn last_cycle(path: &Path) -> Result<Option<u64>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match fsx::open_regular(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    };
    // A line is far shorter than this, whatever --test names it carries.
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    let last = tail
        .strip_suffix(b"\n")
        .and_then(|t| t.rsplit(|b| *b == b'\n').next());
    Ok(last
        .and_then(|line| serde_json::from_slice::<GreenLine>(line).ok())
        .map(|line| line.cycle))
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
