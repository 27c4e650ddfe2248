//! `autoctl task new`: scaffold a task module so `autoctl lint` passes and `autoctl next
//! --task` routes right away. The texts come from [`crate::protocol::scaffold`]; this file
//! checks the arguments, claims the directory and writes.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use chrono::SecondsFormat;
use clap::{Args, Subcommand};

use crate::error::{Conflict, Exit};
use crate::fsx::{self, Bounded, FileLock};
use crate::lint::{ROOT_NAMES, module::valid_module_name, root_index};
use crate::output;
use crate::protocol::scaffold::{self, NewModule};
use crate::protocol::{index, target};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum TaskCommand {
    /// Create a task module: .index.md, .target.md, and its line in the root listing
    ///
    /// DIR is the module to create inside a task root, e.g. TASK/login-rate-limit (the root,
    /// named TASK or AiTasks, is created when missing). autoctl writes DIR/.index.md (front
    /// matter: title, status draft, created, updated), DIR/.target.md (the --goal, else a
    /// stub to fill), DIR/.type-profile.md with --type, a `- [NAME](./NAME/.index.md) — TITLE`
    /// line in the root's .index.md, and the transient files (.auto-signal, .auto-stop,
    /// .tmp-annotations.json) in the root's .gitignore. Then `autoctl next --task DIR` answers
    /// `plan` and `autoctl lint` finds nothing to report (while .target.md is the stub, `next`
    /// answers `(stop)` and lint warns target-empty: say what to build first).
    ///
    /// A --goal with fewer than three words of content (`autoctl next` would answer `(stop)`:
    /// nothing to plan) is refused, exit 2; --force creates the module anyway, with a warning.
    ///
    /// Prints DIR. An existing DIR is never touched: exit 3 (a conflict, like a second `run
    /// start` for one task dir: the name is taken, by you earlier or by a concurrent `task
    /// new`). Bad names and titles are exit 2.
    New(NewArgs),
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The module directory to create, inside a task root (TASK/NAME); NAME is letters,
    /// digits, '-' and '_'
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The task's title [default: the module's name]
    #[arg(long, value_name = "TITLE")]
    pub title: Option<String>,
    /// The task's type (feature, bugfix, ...): its first tag, and a .type-profile.md whose
    /// "## Auto Adaptation" section `gate` and `profile` read
    #[arg(long = "type", value_name = "TYPE")]
    pub task_type: Option<String>,
    /// What to build, written into .target.md [default: a stub to fill in]; at least three
    /// words of content
    #[arg(long, value_name = "TEXT")]
    pub goal: Option<String>,
    /// Create the module even though its --goal is too short for `autoctl next` to plan
    #[arg(long, requires = "goal")]
    pub force: bool,
}

pub fn run(command: TaskCommand) -> Result<Exit> {
    match command {
        TaskCommand::New(args) => new(&args),
    }
}

fn new(args: &NewArgs) -> Result<Exit> {
    let dir = &args.dir;
    let name = module_name(dir)?;
    let root = fsx::parent_dir(dir);
    let root_name = root_name(&root)?;
    let title = args.title.as_deref().unwrap_or(name);
    scaffold::check_title(title)?;
    if let Some(kind) = &args.task_type {
        valid_module_name(OsStr::new(kind)).map_err(|why| {
            anyhow::anyhow!(
                "--type {kind:?}: {}",
                why.to_string().replace("module name", "type")
            )
        })?;
    }
    let mut short_goal = None;
    if let Some(goal) = &args.goal {
        scaffold::check_goal(goal)?;
        let words = target::substantive_words(&scaffold::target_text(Some(goal)));
        if words < target::MIN_WORDS {
            let why = format!(
                "--goal {goal:?} has {words} word{} of content; `autoctl next` plans a target of {} or more, so the loop would stop at once",
                if words == 1 { "" } else { "s" },
                target::MIN_WORDS
            );
            if !args.force {
                bail!("{why} (say what to build, or --force to create it anyway)");
            }
            short_goal = Some(why);
        }
    }
    let now = crate::time::now()?.to_rfc3339_opts(SecondsFormat::Secs, true);
    let module = NewModule {
        name,
        title,
        task_type: args.task_type.as_deref(),
        goal: args.goal.as_deref(),
        now: &now,
    };

    fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
    let listing = root.join(index::FILE_NAME);
    let gitignore = root.join(".gitignore");
    fsx::refuse_symlink(&listing, "root listing", "DIR")?;
    fsx::refuse_symlink(&gitignore, "root .gitignore", "DIR")?;
    // One `task new` at a time per root: concurrent ones each add their line.
    let _lock = FileLock::acquire(&fsx::side_lock_path(&listing))?;
    match fs::create_dir(dir) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            return Err(Conflict(format!(
                "{} already exists; not touching it (pick another name, or remove it first)",
                dir.display()
            ))
            .into());
        }
        Err(err) => return Err(err).with_context(|| format!("cannot create {}", dir.display())),
    }
    if let Err(err) = write_module(dir, &module) {
        // Leave nothing half made: the directory is ours, we created it a moment ago.
        let _ = fs::remove_dir_all(dir);
        return Err(err);
    }
    let existing = read_text(&listing, root_index::FILE_LIMIT)?;
    if let Some(text) = scaffold::listing_with(existing.as_deref(), &root_name, name, title) {
        fsx::atomic_write(&listing, text.as_bytes())?;
    }
    if let Some(text) =
        scaffold::gitignore_with(read_text(&gitignore, fsx::DOCUMENT_LIMIT)?.as_deref())
    {
        fsx::atomic_write(&gitignore, text.as_bytes())?;
    }

    output::line(dir.display())?;
    let shown = dir.display();
    output::note(&format!(
        "created task module {shown} (status {}), listed in {}",
        scaffold::INITIAL_STATUS,
        listing.display()
    ));
    if let Some(why) = short_goal {
        output::warn(&format!(
            "{why}: fill {} before starting it",
            dir.join(target::FILE_NAME).display()
        ));
    }
    if args.goal.is_none() {
        output::note(&format!(
            "next: say what to build in {}, then `autoctl next --task {shown}` answers plan",
            dir.join(target::FILE_NAME).display()
        ));
    }
    Ok(Exit::Yes)
}

fn write_module(dir: &Path, module: &NewModule) -> Result<()> {
    fsx::atomic_write(
        &dir.join(index::FILE_NAME),
        scaffold::index_text(module).as_bytes(),
    )?;
    fsx::atomic_write(
        &dir.join(target::FILE_NAME),
        scaffold::target_text(module.goal).as_bytes(),
    )?;
    if let Some(kind) = module.task_type {
        fsx::atomic_write(
            &dir.join(".type-profile.md"),
            scaffold::type_profile_text(kind).as_bytes(),
        )?;
    }
    Ok(())
}

/// The module's name: DIR's last component, valid as lint's `module-name` rule says.
fn module_name(dir: &Path) -> Result<&str> {
    let Some(name) = dir.file_name() else {
        bail!(
            "{}: not a module directory name (give TASK/NAME)",
            dir.display()
        );
    };
    valid_module_name(name).map_err(|why| anyhow::anyhow!("{}: {why}", dir.display()))?;
    Ok(name.to_str().expect("valid names are UTF-8"))
}

/// The task root's name, which must be one `lint` and the loops look in.
fn root_name(root: &Path) -> Result<String> {
    let named = match fs::canonicalize(root) {
        Ok(path) => path.file_name().map(|n| n.to_string_lossy().into_owned()),
        Err(_) => root.file_name().map(|n| n.to_string_lossy().into_owned()),
    };
    match named {
        Some(name) if ROOT_NAMES.contains(&name.as_str()) => Ok(name),
        _ => bail!(
            "{} is not a task root: a module lives in a directory named {} (e.g. TASK/NAME), where lint and the loop look for it",
            root.display(),
            ROOT_NAMES.join(" or ")
        ),
    }
}

/// A text file that may not exist yet, read with a bound.
fn read_text(path: &Path, limit: u64) -> Result<Option<String>> {
    match fsx::read_bounded(path, limit) {
        Ok(Bounded::Complete(bytes)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text; not rewriting it", path.display())),
        Ok(Bounded::TooLarge { limit }) => bail!(
            "{}: larger than {}; not rewriting it",
            path.display(),
            fsx::human_size(limit)
        ),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}
