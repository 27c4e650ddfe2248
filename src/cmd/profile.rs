//! `autoctl profile show|learn`: the "## Auto Adaptation" section of `.type-profile.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};

use crate::cmd::args::Format;
use crate::cmd::gate::read_profile;
use crate::error::Exit;
use crate::fsx::{self, Bounded, FileLock};
use crate::output;
use crate::protocol::document;
use crate::protocol::signal::now_timestamp;
use crate::taskai::gate::Checkpoint;
use crate::taskai::profile::{self, Adaptation, PHASES, Resolved, RunMetrics};

/// The profile file a task-ai task keeps its type's tuning in.
pub const DEFAULT_PROFILE: &str = profile::FILE_NAME;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum ProfileCommand {
    /// Print the thresholds and limits a profile gives each checkpoint
    ///
    /// Text: two tab-separated tables with headers. First one line per checkpoint: the score
    /// a check there must reach (THRESHOLD, 0-1), how many fixes or replans it may try
    /// (RETRY-LIMIT), and where each comes from (`profile`: the file's "## Auto Adaptation"
    /// section; `fallback`: task-ai's defaults). Then the two loop settings: how many exec
    /// steps run between mid-exec checks, and the context use (0-1) at which the loop
    /// compacts. A missing file or section means the fallbacks. `--format json` is one object.
    Show(ShowArgs),
    /// Write one loop's metrics into the profile's "## Auto Adaptation" section
    ///
    /// Rewrites only the section's `observed.*` lines (runs, updated_at, retries and their
    /// maximum per checkpoint, iterations, mid-exec checks, compactions, phase durations),
    /// creating the section (or the file) when missing; every other byte of the file is kept.
    /// The write is atomic and holds a lock on FILE.lock, so two loops finishing at once both
    /// count. A malformed section is an error and the file is left untouched.
    ///
    /// With --type, the same metrics are also learned into the shared library's profile of
    /// that type (LIBRARY/.memory/.type-profiles/TYPE.md, LIBRARY from --library or
    /// $NB_WORKSPACES_LIBRARY), under the library's lock .type-profiles/.lock; a type the
    /// library has no profile for yet gets a copy of this one.
    #[command(verbatim_doc_comment)]
    Learn(LearnArgs),
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The profile
    #[arg(long, value_name = "FILE", default_value = DEFAULT_PROFILE)]
    pub profile: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct LearnArgs {
    /// The profile (created if missing; a symlink is refused, exit 2)
    #[arg(long, value_name = "FILE", default_value = DEFAULT_PROFILE)]
    pub profile: PathBuf,
    /// Read the metrics from a JSON file (`-` for standard input); flags override its values
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// Retries used at a checkpoint, as CHECKPOINT=N (repeatable)
    #[arg(long, value_name = "CHECKPOINT=N", value_parser = parse_retries)]
    pub retries: Vec<(Checkpoint, u32)>,
    /// Loop iterations
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
    /// Mid-exec checks triggered
    #[arg(long, value_name = "N")]
    pub mid_exec_checks: Option<u64>,
    /// Context compactions
    #[arg(long, value_name = "N")]
    pub compactions: Option<u64>,
    /// Time spent in a phase, as PHASE=DURATION (target, planning, execution, acceptance;
    /// 90s, 12m, 1h30m; repeatable)
    #[arg(long, value_name = "PHASE=DURATION", value_parser = parse_phase_duration)]
    pub duration: Vec<(String, u64)>,
    /// The task type: with it, the same metrics are also learned into the shared library's
    /// profile of that type, LIBRARY/.memory/.type-profiles/TYPE.md (created from this
    /// profile when missing), under the library's lock LIBRARY/.memory/.type-profiles/.lock
    #[arg(long = "type", value_name = "TYPE", value_parser = parse_type)]
    pub type_name: Option<String>,
    /// The shared workspaces library that --type syncs into
    #[arg(long, value_name = "DIR", env = "NB_WORKSPACES_LIBRARY")]
    pub library: Option<PathBuf>,
    /// Output format (json: the section as it is after learning)
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// A task type names a file in the library: letters, digits, `-`, `_` and `.` (not first).
fn parse_type(text: &str) -> Result<String> {
    let ok = !text.is_empty()
        && text.len() <= 100
        && !text.starts_with('.')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(text.to_string())
    } else {
        Err(anyhow!(
            "{:?}: a task type is a file name (letters, digits, '-', '_', '.'), such as software-bugfix",
            output::printable(text)
        ))
    }
}

fn parse_retries(text: &str) -> Result<(Checkpoint, u32)> {
    let (cp, n) = text
        .split_once('=')
        .ok_or_else(|| anyhow!("{text:?}: expected CHECKPOINT=N, such as post-plan=1"))?;
    let cp = Checkpoint::from_name(cp.trim())
        .ok_or_else(|| anyhow!("{cp:?}: the checkpoints are post-plan, mid-exec, post-exec"))?;
    let n = n
        .trim()
        .parse()
        .map_err(|_| anyhow!("{n:?}: retries are a whole number"))?;
    Ok((cp, n))
}

fn parse_phase_duration(text: &str) -> Result<(String, u64)> {
    let (phase, d) = text
        .split_once('=')
        .ok_or_else(|| anyhow!("{text:?}: expected PHASE=DURATION, such as execution=42m"))?;
    let phase = phase.trim();
    if !PHASES.contains(&phase) {
        return Err(anyhow!("{phase:?}: the phases are {}", PHASES.join(", ")));
    }
    Ok((phase.to_string(), crate::duration::parse(d)?.as_secs()))
}

/// The metrics file (schema `profile-metrics`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricsDoc {
    #[serde(default)]
    retries: BTreeMap<String, u32>,
    iterations: Option<u64>,
    mid_exec_checks: Option<u64>,
    compactions: Option<u64>,
    #[serde(default)]
    durations: BTreeMap<String, u64>,
}

fn read_metrics(path: &Path) -> Result<RunMetrics> {
    let label = path.display().to_string();
    let bounded = if path.as_os_str() == "-" {
        fsx::read_bounded_from(std::io::stdin().lock(), fsx::DOCUMENT_LIMIT)
    } else {
        fsx::read_bounded(path, fsx::DOCUMENT_LIMIT)
    }
    .with_context(|| format!("cannot read {label}"))?;
    let bytes = match bounded {
        Bounded::Complete(bytes) => bytes,
        Bounded::TooLarge { limit } => {
            bail!("{label}: larger than the {} limit", fsx::human_size(limit))
        }
    };
    let value = document::parse_with_schema(&bytes, "profile-metrics")
        .map_err(|ps| anyhow!("{label}: {}", ps[0]))?;
    let doc: MetricsDoc =
        document::typed_from_value(&value).map_err(|ps| anyhow!("{label}: {}", ps[0]))?;
    Ok(RunMetrics {
        retries: doc
            .retries
            .into_iter()
            .filter_map(|(cp, n)| Checkpoint::from_name(&cp).map(|cp| (cp, n)))
            .collect(),
        iterations: doc.iterations,
        mid_exec_checks: doc.mid_exec_checks,
        compactions: doc.compactions,
        durations: doc.durations,
    })
}

/// What `show --format json` prints (schema `auto-adaptation`).
#[derive(Debug, Serialize)]
struct Shown<'a> {
    profile: String,
    section: Option<&'a Adaptation>,
    resolved: BTreeMap<&'static str, serde_json::Value>,
}

fn shown<'a>(path: &Path, adaptation: Option<&'a Adaptation>) -> Shown<'a> {
    let mut resolved = BTreeMap::new();
    for cp in Checkpoint::ALL {
        let r: Resolved = profile::resolve(adaptation, cp);
        resolved.insert(cp.name(), serde_json::to_value(r).expect("serializes"));
    }
    resolved.insert(
        "mid_exec_check_interval",
        adaptation
            .and_then(|a| a.mid_exec_check_interval)
            .unwrap_or(profile::FALLBACK_MID_EXEC_CHECK_INTERVAL)
            .into(),
    );
    resolved.insert(
        "compaction_threshold",
        serde_json::to_value(
            adaptation
                .and_then(|a| a.compaction_threshold)
                .unwrap_or(profile::FALLBACK_COMPACTION_THRESHOLD),
        )
        .expect("serializes"),
    );
    Shown {
        profile: output::one_line(&path.display().to_string()),
        section: adaptation,
        resolved,
    }
}

/// The library's profile of a task type (task-ai: `$NB_WORKSPACES_LIBRARY/.memory/
/// .type-profiles/<type>.md`), its directory created when missing.
fn library_profile(library: &Path, type_name: &str) -> Result<PathBuf> {
    fsx::require_dir(library)?;
    let dir = library.join(".memory").join(".type-profiles");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let target = dir.join(format!("{type_name}.md"));
    fsx::refuse_symlink(&target, "library profile", "--library")?;
    Ok(target)
}

/// Learn the run into the library's profile under the library's lock (task-ai: "acquire
/// .type-profiles/.lock"): the same metrics, so two tasks of one type finishing at once
/// both count; a type the library has no profile for yet gets this task's profile.
fn sync(target: &Path, learned: &str, run: &RunMetrics, now: &str) -> Result<()> {
    let _lock = FileLock::acquire(&fsx::parent_dir(target).join(".lock"))?;
    fsx::refuse_symlink(target, "library profile", "--library")?;
    let synced = match fsx::read_document(target, "a profile; not rewriting it")? {
        Some(bytes) => {
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow!("{}: not valid UTF-8; not rewriting it", target.display()))?;
            profile::learn(&text, run, now)
                .map_err(|e| anyhow!("{}: {e}; not rewriting it", target.display()))?
        }
        None => learned.to_string(),
    };
    fsx::atomic_write(target, synced.as_bytes())
}

pub fn run(command: ProfileCommand) -> Result<Exit> {
    match command {
        ProfileCommand::Show(args) => show(&args),
        ProfileCommand::Learn(args) => learn(&args),
    }
}

fn show(args: &ShowArgs) -> Result<Exit> {
    let adaptation = read_profile(&args.profile)?;
    match args.format {
        Format::Json => output::json_line(&shown(&args.profile, adaptation.as_ref()))?,
        Format::Text => {
            let source = |p: bool| if p { "profile" } else { "fallback" };
            output::line("CHECKPOINT\tTHRESHOLD\tRETRY-LIMIT\tTHRESHOLD-FROM\tRETRY-LIMIT-FROM")?;
            for cp in Checkpoint::ALL {
                let r = profile::resolve(adaptation.as_ref(), cp);
                output::line(format_args!(
                    "{cp}\t{}\t{}\t{}\t{}",
                    r.threshold,
                    r.retry_limit,
                    source(r.threshold_from_profile),
                    source(r.retry_limit_from_profile)
                ))?;
            }
            let a = adaptation.as_ref();
            let interval = a.and_then(|a| a.mid_exec_check_interval);
            let compaction = a.and_then(|a| a.compaction_threshold);
            output::line("")?;
            output::line("SETTING\tVALUE\tFROM")?;
            output::line(format_args!(
                "mid_exec_check_interval\t{}\t{}",
                interval.unwrap_or(profile::FALLBACK_MID_EXEC_CHECK_INTERVAL),
                source(interval.is_some())
            ))?;
            output::line(format_args!(
                "compaction_threshold\t{}\t{}",
                compaction.unwrap_or(profile::FALLBACK_COMPACTION_THRESHOLD),
                source(compaction.is_some())
            ))?;
        }
    }
    Ok(Exit::Yes)
}

fn learn(args: &LearnArgs) -> Result<Exit> {
    let mut run = match &args.metrics {
        Some(path) => read_metrics(path)?,
        None => RunMetrics::default(),
    };
    run.retries.extend(args.retries.iter().copied());
    run.iterations = args.iterations.or(run.iterations);
    run.mid_exec_checks = args.mid_exec_checks.or(run.mid_exec_checks);
    run.compactions = args.compactions.or(run.compactions);
    run.durations.extend(args.duration.iter().cloned());
    if run.is_empty() {
        bail!(
            "nothing to learn: give --metrics FILE or at least one of --retries, --iterations, --mid-exec-checks, --compactions, --duration"
        );
    }
    let library = match (&args.type_name, &args.library) {
        (Some(type_name), Some(dir)) => Some(library_profile(dir, type_name)?),
        (Some(_), None) => {
            bail!("--type syncs into a library: give --library DIR (or set NB_WORKSPACES_LIBRARY)")
        }
        (None, _) => None,
    };
    let path = &args.profile;
    fsx::refuse_symlink(path, "profile", "--profile")?;
    let lock = FileLock::acquire(&fsx::side_lock_path(path))?;
    // Again under the lock: the file may have been swapped while we waited.
    fsx::refuse_symlink(path, "profile", "--profile")?;
    let text = match fsx::read_bounded(path, fsx::DOCUMENT_LIMIT) {
        Ok(Bounded::Complete(bytes)) => String::from_utf8(bytes).map_err(|e| {
            anyhow!(
                "{}: not valid UTF-8 (byte {}); not rewriting it",
                path.display(),
                e.utf8_error().valid_up_to()
            )
        })?,
        Ok(Bounded::TooLarge { limit }) => bail!(
            "{}: larger than the {} limit for a profile; not rewriting it",
            path.display(),
            fsx::human_size(limit)
        ),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let now = now_timestamp(crate::time::now()?);
    let learned = profile::learn(&text, &run, &now)
        .map_err(|e| anyhow!("{}: {e}; not rewriting it", path.display()))?;
    fsx::atomic_write(path, learned.as_bytes())?;
    drop(lock);
    if let Some(target) = &library {
        sync(target, &learned, &run, &now)?;
    }
    if args.format == Format::Json {
        let adaptation = profile::parse(&learned).expect("what learn writes parses");
        output::json_line(&shown(path, adaptation.as_ref()))?;
    }
    Ok(Exit::Yes)
}
