//! `autoctl checkpoint …`: wholework's checkpoint files (single issue, batch, active index).

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use clap::{Args, Subcommand};

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::fsx;
use crate::output;
use crate::protocol::signal::now_timestamp;
use crate::wholework::checkpoint::{self, DEFAULT_DIR, Finish, Single};
use crate::wholework::graph::Phase;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum CheckpointCommand {
    /// Save an issue's verify iteration count (auto-state-N.json)
    WriteSingle(WriteSingleArgs),
    /// Print an issue's saved verify iteration count (0 when none or stale)
    ///
    /// A checkpoint for another issue number is stale and reads as 0 (with a warning); with
    /// --live-phase done the checkpoint is discarded and deleted (labels win). A truncated
    /// checkpoint or one of another schema version is an error (exit 2) naming the file.
    ReadSingle(ReadSingleArgs),
    /// Delete an issue's checkpoint (succeeds when there is none)
    DeleteSingle(SingleArgs),
    /// Save a batch's state and add it to the active index
    ///
    /// BATCH_ID `default` maps to auto-batch-state.json and is not indexed. Issue lists take
    /// numbers separated by spaces or commas, in one or several arguments. The index is
    /// updated first: a crash before the batch is written leaves an index entry that
    /// list-batches drops; a failed write leaves neither an entry nor a lock file.
    WriteBatch(WriteBatchArgs),
    /// Move an issue of a batch to completed or failed
    UpdateBatch(UpdateBatchArgs),
    /// Print a batch's remaining issues (exit 1 when there is no such batch)
    ReadBatch(BatchArgs),
    /// Delete a batch's state and drop it from the active index
    DeleteBatch(BatchArgs),
    /// Print the active batch ids, oldest first (resume takes the last)
    ///
    /// An indexed id whose state file is missing (what a crash between the two writes of
    /// write-batch or delete-batch leaves) is dropped from the index, with a warning.
    ListBatches(ListArgs),
}

#[derive(Debug, Args)]
pub struct DirArg {
    /// The checkpoint directory
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct WriteSingleArgs {
    /// The issue number
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub number: u64,
    /// The verify iteration count
    #[arg(value_name = "COUNT")]
    pub count: u64,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct ReadSingleArgs {
    /// The issue number
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub number: u64,
    /// The issue's live phase label; `done` discards (and deletes) the checkpoint
    #[arg(long, value_name = "PHASE", value_parser = parse_phase)]
    pub live_phase: Option<Phase>,
    #[command(flatten)]
    pub dir: DirArg,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct SingleArgs {
    /// The issue number
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub number: u64,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct WriteBatchArgs {
    /// The batch id (`${PPID}-$(date +%s)`, or `default`)
    #[arg(value_name = "BATCH_ID")]
    pub id: String,
    /// Issues still to process, in order
    #[arg(long, value_name = "N", num_args = 0.., required = true)]
    pub remaining: Vec<String>,
    /// Issues already completed
    #[arg(long, value_name = "N", num_args = 0..)]
    pub completed: Vec<String>,
    /// Issues that failed
    #[arg(long, value_name = "N", num_args = 0..)]
    pub failed: Vec<String>,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct UpdateBatchArgs {
    /// The batch id
    #[arg(value_name = "BATCH_ID")]
    pub id: String,
    /// The issue number
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub number: u64,
    /// complete or fail
    #[arg(value_enum, value_name = "OUTCOME")]
    pub outcome: Finish,
    #[command(flatten)]
    pub dir: DirArg,
}

#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The batch id
    #[arg(value_name = "BATCH_ID")]
    pub id: String,
    #[command(flatten)]
    pub dir: DirArg,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub dir: DirArg,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

fn parse_phase(text: &str) -> Result<Phase> {
    Phase::parse(text).ok_or_else(|| anyhow!("phases: {}", Phase::NAMES.join(", ")))
}

/// `"104 105" "106,107"` → [104, 105, 106, 107].
fn issues(flag: &str, words: &[String]) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for word in words {
        for item in word
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|s| !s.is_empty())
        {
            let n: u64 = item
                .trim_start_matches('#')
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    anyhow!(
                        "--{flag}: {:?} is not an issue number",
                        output::one_line(item)
                    )
                })?;
            out.push(n);
        }
    }
    Ok(out)
}

fn now() -> Result<String> {
    Ok(now_timestamp(crate::time::now()?))
}

pub fn run(command: CheckpointCommand) -> Result<Exit> {
    match command {
        CheckpointCommand::WriteSingle(args) => {
            checkpoint::write_single(&args.dir.dir, args.number, args.count, &now()?)?;
            Ok(Exit::Yes)
        }
        CheckpointCommand::ReadSingle(args) => read_single(&args),
        CheckpointCommand::DeleteSingle(args) => {
            fsx::remove_if_exists(&checkpoint::single_path(&args.dir.dir, args.number))?;
            Ok(Exit::Yes)
        }
        CheckpointCommand::WriteBatch(args) => {
            checkpoint::write_batch(
                &args.dir.dir,
                &args.id,
                issues("remaining", &args.remaining)?,
                issues("completed", &args.completed)?,
                issues("failed", &args.failed)?,
                &now()?,
            )?;
            Ok(Exit::Yes)
        }
        CheckpointCommand::UpdateBatch(args) => {
            checkpoint::update_batch(&args.dir.dir, &args.id, args.number, args.outcome, &now()?)?;
            Ok(Exit::Yes)
        }
        CheckpointCommand::ReadBatch(args) => {
            let batch = checkpoint::read_batch(&args.dir.dir, &args.id)?;
            match (args.format, &batch) {
                (Format::Json, Some(batch)) => output::json_line(batch)?,
                (Format::Json, None) => output::json_line(&serde_json::json!({"exists": false}))?,
                (Format::Text, Some(batch)) => output::line(
                    batch
                        .remaining
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(" "),
                )?,
                (Format::Text, None) => {}
            }
            Ok(Exit::from_bool(batch.is_some()))
        }
        CheckpointCommand::DeleteBatch(args) => {
            checkpoint::delete_batch(&args.dir.dir, &args.id, &now()?)?;
            Ok(Exit::Yes)
        }
        CheckpointCommand::ListBatches(args) => {
            let listed = checkpoint::list_batches(&args.dir.dir, &now()?)?;
            for id in &listed.dropped {
                output::warn(&format!(
                    "dropped batch {id} from the active index: its state file is gone (an interrupted write-batch or delete-batch)"
                ));
            }
            for problem in &listed.problems {
                output::warn(problem);
            }
            match args.format {
                Format::Json => output::json_line(&listed.ids)?,
                Format::Text => {
                    for id in &listed.ids {
                        output::line(id)?;
                    }
                }
            }
            Ok(Exit::Yes)
        }
    }
}

fn read_single(args: &ReadSingleArgs) -> Result<Exit> {
    let path = checkpoint::single_path(&args.dir.dir, args.number);
    let stored: Option<Single> = checkpoint::read(&path, "auto-state")?;
    let read = checkpoint::decide_single(
        stored.as_ref(),
        args.number,
        args.live_phase == Some(Phase::Done),
    );
    if read.deleted {
        fsx::remove_if_exists(&path)?;
    }
    if let Some(why) = &read.discarded {
        output::warn(why);
    }
    match args.format {
        Format::Json => output::json_line(&read)?,
        Format::Text => output::line(read.verify_iteration_count)?,
    }
    Ok(Exit::Yes)
}
