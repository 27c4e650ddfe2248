//! The prompt a loop feeds the session after a turn: fixed text, a file, or — for a task
//! module — the command its routing table gives for the module's `.auto-signal` (seed 000's
//! single-session loop), with seed 004's backprop directive in front while tests fail.

use std::path::Path;

use serde_json::Value;

use super::state::{LoopConfig, LoopDir, PromptSource};
use crate::fsx::{self, Bounded};
use crate::protocol::signal::STOP;
use crate::protocol::stop::{self, StopState};
use crate::routing::{self, command};

/// A prompt file larger than this is refused (it would be a context window on its own).
pub const PROMPT_FILE_LIMIT: u64 = 1024 * 1024;
/// The backprop flag file is read up to this size for its details.
const BACKPROP_LIMIT: u64 = 64 * 1024;

/// What comes next for the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Continue with this prompt.
    Prompt(String),
    /// The task says stop (its route reached `(stop)`, or it has a stop request).
    Stop(String),
}

/// The next prompt. An error means it cannot be known now (unreadable file, invalid signal):
/// the hook then stands aside and the loop stays active.
pub fn next(config: &LoopConfig, dir: &LoopDir) -> anyhow::Result<Next> {
    let next = match &config.prompt {
        PromptSource::Text(text) => Next::Prompt(text.clone()),
        PromptSource::File(path) => Next::Prompt(read_prompt_file(path)?),
        PromptSource::Task {
            dir: task,
            table,
            template,
        } => task_prompt(task, table, template)?,
    };
    Ok(match next {
        Next::Prompt(prompt) => match backprop_directive(&dir.backprop()) {
            Some(directive) => Next::Prompt(format!("{directive}\n\n{prompt}")),
            None => Next::Prompt(prompt),
        },
        stop => stop,
    })
}

/// Read a prompt file: bounded, UTF-8, not blank.
pub fn read_prompt_file(path: &Path) -> anyhow::Result<String> {
    let bytes = match fsx::read_bounded(path, PROMPT_FILE_LIMIT) {
        Ok(Bounded::Complete(bytes)) => bytes,
        Ok(Bounded::TooLarge { limit }) => {
            return Err(anyhow::anyhow!(
                "prompt file {} is larger than {}",
                path.display(),
                fsx::human_size(limit)
            ));
        }
        Err(err) => {
            return Err(anyhow::anyhow!(
                "cannot read prompt file {}: {err}",
                path.display()
            ));
        }
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("prompt file {} is not UTF-8", path.display()))?;
    if text.trim().is_empty() {
        return Err(anyhow::anyhow!("prompt file {} is empty", path.display()));
    }
    Ok(text.trim_end().to_string())
}

/// The task module's next command: a stop request ends the loop; otherwise resume from
/// `.auto-signal` (else the status in `.index.md`) and render the template.
pub fn task_prompt(task: &Path, table: &str, template: &str) -> anyhow::Result<Next> {
    let table = routing::load(table).map_err(|err| anyhow::anyhow!("{err:#}"))?;
    match stop::check(task).map_err(|err| anyhow::anyhow!("{err:#}"))? {
        StopState::None => {}
        StopState::Requested(request) => {
            return Ok(Next::Stop(format!(
                "{} requests a stop ({})",
                stop::path_in(task).display(),
                request.reason
            )));
        }
        StopState::Unreadable { why } => {
            return Ok(Next::Stop(format!("{why}; treating it as a stop request")));
        }
    }
    let answer = routing::resume::resume(&table, task).map_err(|err| anyhow::anyhow!("{err:#}"))?;
    if answer.next == STOP {
        return Ok(Next::Stop(format!(
            "task {} routes to (stop): {}",
            task.display(),
            answer.rationale
        )));
    }
    let vars = command::step_vars(
        &answer.next,
        &answer.checkpoint,
        Some(&task.display().to_string()),
        answer.iteration,
        command::has_annotations(task),
    );
    command::render_prompt(template, &vars)
        .map(Next::Prompt)
        .map_err(|err| anyhow::anyhow!("{err:#}"))
}

/// Seed 004's backprop directive, when the failing-tests flag file exists. The file's
/// optional `summary` (string) and `failing` (list of strings) are quoted in the directive.
pub fn backprop_directive(path: &Path) -> Option<String> {
    if !std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file()) {
        return None;
    }
    let mut directive = format!(
        "BACKPROP: tests are failing (see {}). Before anything else, trace each failure back \
         to the change that caused it, fix the cause rather than the symptom, run the tests \
         again, and delete that file once they pass.",
        path.display()
    );
    let details = match fsx::read_bounded(path, BACKPROP_LIMIT) {
        Ok(Bounded::Complete(bytes)) => serde_json::from_slice::<Value>(&bytes).ok(),
        _ => None,
    };
    if let Some(details) = details {
        if let Some(summary) = details.get("summary").and_then(Value::as_str) {
            directive.push_str(&format!("\nSummary: {}", summary.trim()));
        }
        if let Some(failing) = details.get("failing").and_then(Value::as_array) {
            let names: Vec<&str> = failing.iter().filter_map(Value::as_str).take(20).collect();
            if !names.is_empty() {
                directive.push_str(&format!("\nFailing: {}", names.join(", ")));
                if failing.len() > names.len() {
                    directive.push_str(&format!(" (and {} more)", failing.len() - names.len()));
                }
            }
        }
    }
    Some(directive)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backprop_directive_quotes_the_flag_file() {
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("backprop-pending.json");
        assert_eq!(backprop_directive(&flag), None);
        std::fs::write(&flag, r#"{"summary":"2 failed","failing":["a::b","c::d"]}"#).unwrap();
        let directive = backprop_directive(&flag).unwrap();
        assert!(directive.starts_with("BACKPROP: tests are failing"));
        assert!(directive.contains("Summary: 2 failed"));
        assert!(directive.contains("Failing: a::b, c::d"));
        // Any content (even none) still means "tests fail".
        std::fs::write(&flag, "").unwrap();
        assert!(backprop_directive(&flag).is_some());
    }

    #[test]
    fn prompt_files_must_hold_text() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.md");
        assert!(
            read_prompt_file(&file)
                .unwrap_err()
                .to_string()
                .contains("cannot read")
        );
        std::fs::write(&file, " \n").unwrap();
        assert!(
            read_prompt_file(&file)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        std::fs::write(&file, "Keep going.\n").unwrap();
        assert_eq!(read_prompt_file(&file).unwrap(), "Keep going.");
    }
}
