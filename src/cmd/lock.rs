//! `autoctl lock acquire|refresh|release|status`: the heartbeat lock as a command any script
//! can use (the rules live in `crate::lock`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use serde::Serialize;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::lock::{self, HeartbeatLock, Host, LockRecord, Observed, System};
use crate::output;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum LockCommand {
    /// Take FILE for OWNER: free, stale, or held by a recorded process that is gone
    ///
    /// Exits 0 when the lock is OWNER's (re-acquiring refreshes it), 3 when another owner
    /// holds it and its heartbeat is fresh (the error names the owner and the age of its
    /// heartbeat). Without --pid no process is recorded, and only a heartbeat older than
    /// --stale frees the lock. Taking over a stale or dead lock is reported on stderr.
    Acquire(OwnerArgs),
    /// Renew OWNER's heartbeat in FILE
    ///
    /// Exits 0 when refreshed, 1 when nobody holds the lock (it was released or never
    /// taken), 3 when another owner holds it.
    Refresh(OwnerArgs),
    /// Give FILE up; only its owner may
    ///
    /// Exits 0 when released or when nobody held it, 3 when another owner holds it.
    Release(OwnerArgs),
    /// Who holds FILE, and is it alive?
    ///
    /// Prints `free`, or `held:`, `stale:` or `dead:` followed by the holder with its pid
    /// (when one was recorded), host and heartbeat age (stale and dead locks may be taken
    /// over); control characters in the record are escaped. Exits 0 when the lock is held
    /// and alive (by OWNER, when --owner is given), 1 otherwise.
    Status(StatusArgs),
}

#[derive(Debug, Args)]
pub struct OwnerArgs {
    /// The lock file (a JSON record {owner, pid?, host, heartbeat_at})
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Who takes the lock, e.g. session:<id> or cron:nightly
    #[arg(long, value_name = "TAG")]
    pub owner: String,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Record PID as the process whose life the lock stands for [default: none]
    ///
    /// Another owner may take the lock as soon as PID is gone from this host. Without it only
    /// the heartbeat's staleness frees the lock: the usual caller (a hook, `sh -c`, a cron
    /// line, `timeout`) exits at once, and neither it nor its parent says whether the work
    /// the lock guards is still going on.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The lock file
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Answer yes only when this owner holds the lock
    #[arg(long, value_name = "TAG")]
    pub owner: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct CommonArgs {
    /// A lock with no heartbeat for longer than this is stale and may be taken over
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::duration::parse_positive)]
    pub stale: Duration,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// What `--format json` prints for a lock's state.
#[derive(Debug, Serialize)]
struct Report {
    /// held, stale, dead or free.
    state: &'static str,
    path: String,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    holder: Option<Observed>,
}

fn state_name(holder: Option<&Observed>) -> &'static str {
    match holder {
        None => "free",
        Some(held) if held.dead => "dead",
        Some(held) if held.stale => "stale",
        Some(_) => "held",
    }
}

fn report(path: &std::path::Path, holder: Option<Observed>) -> Report {
    Report {
        state: state_name(holder.as_ref()),
        path: path.display().to_string(),
        holder,
    }
}

pub fn run(command: LockCommand) -> Result<Exit> {
    let host = System::from_env()?;
    match command {
        LockCommand::Acquire(args) => {
            let (lock, claim) = open(&args, &host)?;
            let acquired = lock.acquire(&claim, &host)?;
            if let Some(previous) = &acquired.took_over {
                output::warn(&format!(
                    "took over {} from {}",
                    lock.path().display(),
                    previous.describe()
                ));
            }
            print_record(&args.common, &lock, acquired.record, &host)?;
            Ok(Exit::Yes)
        }
        LockCommand::Refresh(args) => {
            let (lock, claim) = open(&args, &host)?;
            match lock.refresh(&claim, &host)? {
                Some(record) => {
                    print_record(&args.common, &lock, record, &host)?;
                    Ok(Exit::Yes)
                }
                None => {
                    output::error_line(&format!(
                        "{} is not held by anyone: nothing to refresh (acquire it again)",
                        lock.path().display()
                    ));
                    Ok(Exit::No)
                }
            }
        }
        LockCommand::Release(args) => {
            let (lock, _) = open(&args, &host)?;
            if !lock.release(&args.owner, &host)? {
                output::note(&format!(
                    "{} is not held: nothing to release",
                    lock.path().display()
                ));
            }
            Ok(Exit::Yes)
        }
        LockCommand::Status(args) => {
            if let Some(owner) = &args.owner {
                lock::validate_owner(owner)?;
            }
            let lock = HeartbeatLock::new(&args.file, args.common.stale)?;
            let holder = lock.observe(&host)?;
            let yes = holder.as_ref().is_some_and(|held| {
                !held.takeable()
                    && args
                        .owner
                        .as_ref()
                        .is_none_or(|owner| *owner == held.record.owner)
            });
            match args.common.format {
                Format::Json => output::json_line(&report(lock.path(), holder))?,
                Format::Text => match &holder {
                    None => output::line("free")?,
                    Some(held) => output::line(format_args!(
                        "{}: {}",
                        state_name(Some(held)),
                        held.describe()
                    ))?,
                },
            }
            Ok(Exit::from_bool(yes))
        }
    }
}

fn open(args: &OwnerArgs, host: &dyn Host) -> Result<(HeartbeatLock, lock::Claim)> {
    lock::validate_owner(&args.owner)?;
    if args.pid == Some(0) {
        bail!("--pid must be a process id (greater than 0)");
    }
    let lock = HeartbeatLock::new(&args.file, args.common.stale)?;
    let claim = lock::Claim {
        owner: args.owner.clone(),
        pid: args.pid,
        host: host.name(),
    };
    Ok((lock, claim))
}

fn print_record(
    common: &CommonArgs,
    lock: &HeartbeatLock,
    record: LockRecord,
    host: &dyn Host,
) -> Result<()> {
    if common.format == Format::Json {
        let held = lock::observe(record, host.now(), common.stale, &host.name(), |pid| {
            host.alive(pid)
        });
        output::json_line(&report(lock.path(), Some(held)))?;
    }
    Ok(())
}
