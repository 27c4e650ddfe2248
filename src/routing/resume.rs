//! Where a loop enters a module and where it resumes: the entry step for a task status (with
//! the draft rule that a module plans only once its `.target.md` says something), and the
//! resume point read from the module's files — its `.auto-signal` (the next step, iteration
//! + 1), else its status (`.status.json` for task-ai tables, else `.index.md`).
//!
//! One place for `autoctl next --status/--task`, the `hook stop --task` loop's next prompt
//! and dispatch mode's first step in `run tick`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::{Table, more};
use crate::fsx::{self, Bounded};
use crate::protocol::signal::{self, STOP};
use crate::protocol::{document, index, target};

/// Where the loop goes, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub next: String,
    pub checkpoint: String,
    pub rationale: String,
    /// The iteration the next step runs as (resume points only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    /// The lifecycle phase the status derives, when the table says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Something the user should hear about the answer (said on stderr by `next`).
    #[serde(skip)]
    pub warning: Option<String>,
}

impl Entry {
    /// The `(stop)` answer.
    pub fn stop(rationale: String) -> Entry {
        Entry {
            next: STOP.to_string(),
            checkpoint: String::new(),
            rationale,
            iteration: None,
            phase: None,
            warning: None,
        }
    }
}

/// The entry step for a task in `status` (and `phase`). With `task`, a status that plans only
/// from a substantive `.target.md` checks it; a target with no content answers `(stop)`.
pub fn on_entry(table: &Table, status: &str, phase: &str, task: Option<&Path>) -> Result<Entry> {
    let Some(entry) = table.entry(status, phase) else {
        bail!(
            "unknown status {status:?} for table {} (allowed: {})",
            table.name,
            table.status_names().join(", ")
        );
    };
    let mut answer = Entry {
        next: entry.next.to_string(),
        checkpoint: entry.checkpoint.to_string(),
        rationale: entry.rationale.to_string(),
        iteration: None,
        phase: entry.derived_phase.as_deref().map(String::from),
        warning: None,
    };
    if entry.requires_target {
        match task {
            Some(dir) => {
                let words = target_words(dir)?;
                if words < target::MIN_WORDS {
                    let reason = format!(
                        "fill {} first: it has no substantive content (only template or placeholders)",
                        dir.join(target::FILE_NAME).display()
                    );
                    answer = Entry::stop(reason.clone());
                    answer.warning = Some(reason);
                }
            }
            None => {
                answer.warning = Some(format!(
                    "status {status} plans only when .target.md has substantive content; pass --task DIR to check it"
                ));
            }
        }
    }
    Ok(answer)
}

fn target_words(dir: &Path) -> Result<usize> {
    fsx::require_dir(dir)?;
    let path = dir.join(target::FILE_NAME);
    let bytes = match fsx::read_bounded(&path, fsx::DOCUMENT_LIMIT) {
        Ok(Bounded::Complete(bytes)) => bytes,
        // A target this large is certainly not an empty template.
        Ok(Bounded::TooLarge { .. }) => return Ok(usize::MAX),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    Ok(target::substantive_words(&String::from_utf8_lossy(&bytes)))
}

/// Where a module resumes: its `.auto-signal`'s next step (iteration + 1), else the entry
/// step for its status (iteration 0). An invalid signal is an error: the resume point is
/// unknown, and guessing would rerun or skip a step.
pub fn resume(table: &Table, dir: &Path) -> Result<Entry> {
    fsx::require_dir(dir)?;
    match signal::read(dir)? {
        signal::Read::Valid(doc) => {
            let rationale = format!(
                "resume from {}: {} {} -> {}",
                signal::FILE_NAME,
                doc.step,
                doc.result,
                doc.next
            );
            Ok(Entry {
                checkpoint: doc.checkpoint_or_empty().to_string(),
                next: doc.next,
                rationale,
                iteration: Some(doc.iteration.map_or(0, |i| i.saturating_add(1))),
                phase: None,
                warning: None,
            })
        }
        signal::Read::Invalid(problems) => bail!(
            "{} is invalid, so the resume point is unknown: {}{} (fix or clear it)",
            signal::path_in(dir).display(),
            problems[0],
            more(problems.len())
        ),
        signal::Read::Missing => {
            let lifecycle = lifecycle_of(table, dir)?;
            let mut answer = on_entry(table, &lifecycle.status, &lifecycle.phase, Some(dir))?;
            answer.iteration = Some(0);
            Ok(answer)
        }
    }
}

/// A module's status: `.status.json` for task-ai style tables when present, else `.index.md`.
fn lifecycle_of(table: &Table, dir: &Path) -> Result<index::Lifecycle> {
    let status_json = dir.join(".status.json");
    if table.name == "task-ai" && status_json.exists() {
        let bytes = match fsx::read_bounded(&status_json, fsx::DOCUMENT_LIMIT)
            .with_context(|| format!("cannot read {}", status_json.display()))?
        {
            Bounded::Complete(bytes) => bytes,
            Bounded::TooLarge { limit } => bail!(
                "{}: larger than the {} limit",
                status_json.display(),
                fsx::human_size(limit)
            ),
        };
        let value = document::parse_json(&bytes)
            .map_err(|problem| anyhow::anyhow!("{}: {problem}", status_json.display()))?;
        let status = value
            .get("status")
            .and_then(|s| s.as_str())
            .with_context(|| format!("{}: no status field", status_json.display()))?;
        return Ok(index::Lifecycle {
            status: status.to_string(),
            phase: String::new(),
        });
    }
    index::read_lifecycle(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        crate::routing::load("ai-cli-task").unwrap().into_owned()
    }

    #[test]
    fn a_valid_signal_is_the_resume_point() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".auto-signal"),
            r#"{"step":"check","result":"NEEDS_FIX","next":"exec","checkpoint":"mid-exec","iteration":4,"timestamp":"2026-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        let entry = resume(&table(), dir.path()).unwrap();
        assert_eq!(
            (
                entry.next.as_str(),
                entry.checkpoint.as_str(),
                entry.iteration
            ),
            ("exec", "mid-exec", Some(5))
        );
        std::fs::write(dir.path().join(".auto-signal"), "{").unwrap();
        let err = resume(&table(), dir.path()).unwrap_err().to_string();
        assert!(err.contains("resume point is unknown"), "{err}");
    }

    #[test]
    fn a_draft_without_a_target_stops_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".index.md"),
            "---\ntitle: t\nstatus: draft\ncreated: 2026-01-01\nupdated: 2026-01-01\n---\n",
        )
        .unwrap();
        let entry = resume(&table(), dir.path()).unwrap();
        assert_eq!(entry.next, STOP);
        assert!(entry.warning.as_deref().unwrap().contains(".target.md"));
        std::fs::write(
            dir.path().join(".target.md"),
            "# Target\n\nMake the login page load in under a second.\n",
        )
        .unwrap();
        let entry = resume(&table(), dir.path()).unwrap();
        assert_eq!((entry.next.as_str(), entry.iteration), ("plan", Some(0)));
        assert_eq!(entry.warning, None);
    }
}
