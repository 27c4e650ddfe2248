//! `autoctl graph levels|aggregate`: the XL route's sub-issue graph.

use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::fsx::{self, Bounded};
use crate::output;
use crate::output::progress::Progress;
use crate::protocol::document;
use crate::wholework::close::{self, ChildState};
use crate::wholework::graph::{self, DEFAULT_MAX_CONCURRENT, Phase};
use crate::wholework::runner::{self, Options};
use crate::wholework::window::Schedule;

/// Graph files may be large (an XL issue with thousands of sub-issues is still far below
/// this); past it the file is refused, not read.
pub const GRAPH_LIMIT: u64 = 256 * 1024 * 1024;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum GraphCommand {
    /// Print a sub-issue graph's execution levels, in batches of at most --max-concurrent
    ///
    /// FILE (or `-`) is JSON: {"nodes": [{"number": 12, "blocked_by": [10, 11]}, ...]} or the
    /// array alone; other fields are ignored. Level 0 holds the issues nothing blocks; an issue
    /// runs one level after its last blocker. Issues given with --failed, and every issue that
    /// depends on one (transitively), are not run.
    ///
    /// Text prints one line per batch, LEVEL<TAB>BATCH<TAB>ISSUES, plus LEVEL<TAB>failed<TAB>...
    /// and LEVEL<TAB>skipped<TAB>... lines:
    ///
    ///   0   1        101 102 103 104 105
    ///   0   2        106
    ///   1   skipped  107 108
    ///
    /// A cycle, a duplicate number, an issue blocked by itself or by an issue not in the graph
    /// is an error (exit 2) that names it.
    #[command(verbatim_doc_comment)]
    Levels(LevelsArgs),
    /// Print the parent issue's phase from its children's phases
    ///
    /// wholework's rules: every child at verify or later → verify; one or more at code or
    /// later → code; every child done → nothing here (the close flow decides); otherwise
    /// nothing. Prints the phase and exits 0 when the parent should change, exits 1 when not.
    Aggregate(AggregateArgs),
    /// Decide the XL parent's close flow from its sub-issues and its issue body
    ///
    /// wholework's Step 4c: a sub-issue that failed, was skipped or is not at phase/done
    /// leaves the parent as it is (`leave`, and what remains is listed); when every one is
    /// done, unchecked `- [ ]` conditions in the post-merge section of the body (a heading
    /// saying "post-merge") move the parent to phase/verify with a comment asking for
    /// /verify (`verify`, the conditions listed); with none the parent is closed (`close`).
    ///
    /// Text prints the verdict, then `remaining<TAB>NUMBER<TAB>STATE` lines and the unchecked
    /// conditions as wholework's completion report shows them (Step 5): without their
    /// `<!-- verify: ... -->` comments, `unchecked<TAB>CONDITION` for the first 5, then
    /// `... and N more`. JSON lists every condition as written and adds the gh commands
    /// wholework runs. Exits 0 when the parent is to be closed, 1 otherwise.
    #[command(verbatim_doc_comment)]
    Close(CloseArgs),
    /// Print the order in which an XL parent's issues are verified (wholework Step 4d)
    ///
    /// After every level ran and before the close flow: the sub-issues at phase/verify, in
    /// the order given (the graph's), then the parent, one number a line; run /verify on
    /// each in turn, going on when one fails. Left out: sub-issues already at phase/done
    /// (verified and closed before), skipped for a dependency's failure, failed, or not yet
    /// at verify; --format json says which and why.
    ///
    ///   for n in $(autoctl graph verify-order --parent 300 301=verify 302=done 303=skipped); do
    ///     claude -p "/verify $n"
    ///   done
    VerifyOrder(VerifyOrderArgs),
    /// Run COMMAND for every sub-issue, level by level, at most N at once
    ///
    /// wholework's Step 4 loop as one command: a level starts when the one before it has
    /// ended; within a level a sliding window starts the next sub-issue as soon as one
    /// finishes (`wait -n`; --schedule batches waits for a whole batch instead); a failure
    /// skips every sub-issue that depends on it. `{}` in COMMAND is replaced by the issue
    /// number, else the number is appended; AUTOCTL_ISSUE and AUTOCTL_LEVEL are set. Each
    /// command runs in its own process group with its output on stderr; past --timeout it
    /// gets TERM, then KILL 5 s later, and counts as failed. SIGINT, SIGTERM or SIGHUP stop
    /// every running command the same way and exit 130.
    ///
    /// stdout: one line per sub-issue as its result is known, `LEVEL<TAB>NUMBER<TAB>RESULT`
    /// with wholework's SUCCESS, FAILED (exit code N), SKIPPED (blocked by #X); --format json
    /// prints JSON Lines. Exits 0 when every sub-issue succeeded, 1 when one failed or was
    /// skipped.
    ///
    ///   autoctl graph run graph.json --max-concurrent 3 -- ./run-auto-sub.sh {}
    #[command(verbatim_doc_comment)]
    Run(RunArgs),
}

#[derive(Debug, Args)]
pub struct VerifyOrderArgs {
    /// The parent issue (verified last)
    #[arg(long, value_name = "N")]
    pub parent: u64,
    /// Each sub-issue as NUMBER=STATE, in the graph's order: a phase (done, verify, review,
    /// code, ...), failed or skipped; space- or comma-separated lists are read too
    #[arg(value_name = "NUMBER=STATE", value_delimiter = ',')]
    pub children: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct CloseArgs {
    /// The parent issue
    #[arg(long, value_name = "N")]
    pub parent: u64,
    /// Each sub-issue as NUMBER=STATE: a phase (done, verify, review, code, ...), failed or
    /// skipped; space- or comma-separated lists are read too
    #[arg(value_name = "NUMBER=STATE", required = true, value_delimiter = ',')]
    pub children: Vec<String>,
    /// The parent issue's body (markdown), or `-` for standard input
    #[arg(long, value_name = "FILE")]
    pub body: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The graph file, or `-` for standard input
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Issues that already failed (repeatable, or comma separated): they and their
    /// dependents are not run
    #[arg(long, value_name = "N", value_delimiter = ',')]
    pub failed: Vec<u64>,
    /// The most sub-issues running at once (AUTO_MAX_CONCURRENT)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONCURRENT as u64, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub max_concurrent: u64,
    /// window: start the next as soon as one finishes; batches: wait for a whole batch
    #[arg(long, value_enum, default_value = "window")]
    pub schedule: Schedule,
    /// The longest one sub-issue's command may run
    #[arg(long, value_name = "DURATION", default_value = "60m", value_parser = crate::duration::parse_positive)]
    pub timeout: std::time::Duration,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// The command to run for each sub-issue (after --)
    #[arg(value_name = "COMMAND", last = true, required = true)]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
pub struct LevelsArgs {
    /// The graph file, or `-` for standard input
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Issues that failed (repeatable, or comma separated); they and their dependents are not run
    #[arg(long, value_name = "N", value_delimiter = ',')]
    pub failed: Vec<u64>,
    /// The most issues run at once (AUTO_MAX_CONCURRENT)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONCURRENT as u64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_concurrent: u64,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct AggregateArgs {
    /// The children's phases (code, phase/code, ..., none for no label); `-` reads them from
    /// standard input, separated by whitespace
    #[arg(value_name = "PHASE", required = true)]
    pub phases: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub fn run(command: GraphCommand) -> Result<Exit> {
    match command {
        GraphCommand::Levels(args) => levels(&args),
        GraphCommand::Aggregate(args) => aggregate(&args),
        GraphCommand::Close(args) => close_parent(&args),
        GraphCommand::VerifyOrder(args) => verify_order(&args),
        GraphCommand::Run(args) => run_graph(&args),
    }
}

fn levels(args: &LevelsArgs) -> Result<Exit> {
    let label = args.file.display().to_string();
    // 100,000 sub-issues take a noticeable moment in a debug build or on a slow machine.
    let progress = Progress::start(format!("levelling {label}"));
    let nodes = read_graph(&args.file, &progress)?;
    progress.detail(format!("levelling {} nodes", nodes.len()));
    let levels = graph::levels(&nodes, &args.failed, args.max_concurrent as usize)
        .map_err(|e| anyhow::anyhow!("{label}: {e}"))?;
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    match args.format {
        Format::Json => {
            serde_json::to_writer(&mut out, &levels)?;
            out.write_all(b"\n")?;
        }
        Format::Text => {
            for level in &levels.levels {
                for (b, batch) in level.batches.iter().enumerate() {
                    write!(out, "{}\t{}\t", level.level, b + 1)?;
                    write_list(&mut out, batch.iter().copied())?;
                }
                if !level.failed.is_empty() {
                    write!(out, "{}\tfailed\t", level.level)?;
                    write_list(&mut out, level.failed.iter().copied())?;
                }
                if !level.skipped.is_empty() {
                    write!(out, "{}\tskipped\t", level.level)?;
                    write_list(&mut out, level.skipped.iter().map(|s| s.number))?;
                }
            }
        }
    }
    out.flush()?;
    Ok(Exit::Yes)
}

/// Read and parse a graph file (or `-`): bounded, duplicate keys refused, errors located.
fn read_graph(file: &std::path::Path, progress: &Progress) -> Result<Vec<graph::Node>> {
    let label = file.display().to_string();
    progress.detail("reading");
    let bounded = if file.as_os_str() == "-" {
        fsx::read_bounded_from(io::stdin().lock(), GRAPH_LIMIT)
    } else {
        fsx::read_bounded(file, GRAPH_LIMIT)
    }
    .with_context(|| format!("cannot read {label}"))?;
    let bytes = match bounded {
        Bounded::Complete(bytes) => bytes,
        Bounded::TooLarge { limit } => {
            bail!(
                "{label}: larger than the {} limit for a graph",
                fsx::human_size(limit)
            )
        }
    };
    progress.detail(format!("parsing {}", fsx::human_size(bytes.len() as u64)));
    // The strict reader first: a node with `blocked_by` twice would otherwise lose an edge
    // without a word. Its position errors read like the typed parse's below.
    let value = document::parse_json(&bytes).map_err(|p| match &p.location {
        document::Location::Position { line, column } => {
            anyhow::anyhow!("{label}:{line}:{column}: {}", p.message)
        }
        document::Location::Pointer { .. } => anyhow::anyhow!("{label}: {p}"),
    })?;
    // The nodes come from the value; only a document of the wrong shape is read again from the
    // text, to say where the problem is.
    let nodes = graph::from_value(&value)
        .or_else(|_| graph::parse(&bytes))
        .map_err(|e| {
            let msg = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            anyhow::anyhow!(
                "{label}:{}:{}: {}",
                e.line(),
                e.column(),
                msg.strip_suffix(&suffix).unwrap_or(&msg)
            )
        })?;
    Ok(nodes)
}

fn write_list(out: &mut impl Write, items: impl Iterator<Item = u64>) -> io::Result<()> {
    let mut first = true;
    for item in items {
        if !first {
            out.write_all(b" ")?;
        }
        first = false;
        write!(out, "{item}")?;
    }
    out.write_all(b"\n")
}

fn aggregate(args: &AggregateArgs) -> Result<Exit> {
    let mut words = Vec::new();
    for phase in &args.phases {
        if phase == "-" {
            let mut text = String::new();
            io::stdin()
                .lock()
                .take(fsx::DOCUMENT_LIMIT)
                .read_to_string(&mut text)
                .context("cannot read standard input")?;
            words.extend(text.split_whitespace().map(str::to_string));
        } else {
            words.push(phase.clone());
        }
    }
    let mut phases = Vec::with_capacity(words.len());
    for word in &words {
        match Phase::parse(word) {
            Some(p) => phases.push(p),
            None => bail!(
                "unknown phase {:?} (phases: {})",
                output::one_line(word),
                Phase::NAMES.join(", ")
            ),
        }
    }
    if phases.is_empty() {
        bail!("no children's phases given");
    }
    let result = graph::aggregate(&phases);
    match args.format {
        Format::Json => output::json_line(&result)?,
        Format::Text => {
            if let Some(phase) = result.update {
                output::line(phase.name())?;
            }
        }
    }
    Ok(Exit::from_bool(result.update.is_some()))
}

fn close_parent(args: &CloseArgs) -> Result<Exit> {
    let children = parse_children(&args.children)?;
    let label = args.body.display().to_string();
    let bounded = if args.body.as_os_str() == "-" {
        fsx::read_bounded_from(io::stdin().lock(), fsx::DOCUMENT_LIMIT)
    } else {
        fsx::read_bounded(&args.body, fsx::DOCUMENT_LIMIT)
    }
    .with_context(|| format!("cannot read {label}"))?;
    let body = match bounded {
        Bounded::Complete(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Bounded::TooLarge { limit } => {
            bail!("{label}: larger than the {} limit", fsx::human_size(limit))
        }
    };
    let decision = close::decide(args.parent, &children, &body);
    match args.format {
        Format::Json => output::json_line(&decision)?,
        Format::Text => {
            output::line(decision.verdict.name())?;
            for remaining in &decision.remaining {
                output::line(format_args!(
                    "remaining\t{}\t{}",
                    remaining.number, remaining.state
                ))?;
            }
            // As wholework's completion report shows them (Step 5): readable, at most five,
            // then how many more. JSON lists every one as written.
            let (shown, more) = close::report_conditions(&decision.unchecked);
            for condition in &shown {
                output::line(format_args!("unchecked\t{}", output::printable(condition)))?;
            }
            if more > 0 {
                output::line(format_args!("... and {more} more"))?;
            }
        }
    }
    Ok(Exit::from_bool(
        decision.verdict == close::Disposition::Close,
    ))
}

/// `NUMBER=STATE` items (space- or comma-separated) as sub-issues with their states.
fn parse_children(items: &[String]) -> Result<Vec<(u64, ChildState)>> {
    let mut children = Vec::new();
    for item in items.iter().flat_map(|a| a.split_whitespace()) {
        let (number, state) = item.split_once('=').with_context(|| {
            format!(
                "{:?}: expected NUMBER=STATE, such as 301=done",
                output::one_line(item)
            )
        })?;
        let number: u64 = number
            .trim()
            .trim_start_matches('#')
            .parse()
            .with_context(|| format!("{:?}: not an issue number", output::one_line(number)))?;
        let state = ChildState::parse(state).with_context(|| {
            format!(
                "{:?}: not a state (a phase: {}; or failed, skipped)",
                output::one_line(state),
                Phase::NAMES.join(", ")
            )
        })?;
        if children.iter().any(|(n, _)| *n == number) {
            bail!("sub-issue {number} is given twice");
        }
        children.push((number, state));
    }
    Ok(children)
}

fn verify_order(args: &VerifyOrderArgs) -> Result<Exit> {
    let children = parse_children(&args.children)?;
    let order = close::verify_order(args.parent, &children);
    match args.format {
        Format::Json => output::json_line(&order)?,
        Format::Text => {
            for number in &order.order {
                output::line(number)?;
            }
        }
    }
    Ok(Exit::Yes)
}

fn run_graph(args: &RunArgs) -> Result<Exit> {
    let progress = Progress::start(format!("reading {}", args.file.display()));
    let nodes = read_graph(&args.file, &progress)?;
    drop(progress);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, std::sync::Arc::clone(&stop))
            .context("cannot install a signal handler")?;
    }
    let options = Options {
        max_concurrent: args.max_concurrent as usize,
        schedule: args.schedule,
        timeout: args.timeout,
        command: args.command.clone(),
    };
    let format = args.format;
    let mut report = |finished: &runner::Finished| -> io::Result<()> {
        match format {
            Format::Json => output::json_line(finished),
            Format::Text => output::line(format_args!(
                "{}\t{}\t{}",
                finished.level,
                finished.number,
                finished.result_text()
            )),
        }
    };
    let summary = runner::run(&nodes, &args.failed, &options, &stop, &mut report)
        .map_err(|e| e.context(args.file.display().to_string()))?;
    Ok(Exit::from_bool(summary.failed == 0 && summary.skipped == 0))
}
