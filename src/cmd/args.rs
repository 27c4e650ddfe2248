//! Arguments more than one command takes: the output format, and whose hook a hook command
//! serves. They live apart from `cli.rs` and from any one command so that a command's module
//! depends on neither the top-level parser nor another command.

use clap::{Args, ValueEnum};

use crate::hook::agents::HookAgent;

/// Output format for commands whose answer is a line of text or a JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// Lines made for people and `$(...)`
    #[default]
    Text,
    /// JSON, using the types the schemas describe
    Json,
}

// Whose hook runs the command. (No doc comment: a flattened struct's doc becomes the about of
// every command that flattens it, in place of the command's own.)
#[derive(Debug, Clone, Args)]
pub struct AgentArg {
    /// The agent whose hook this is: its payload is read in its own vocabulary [default: read
    /// from the payload: Gemini CLI's event names, Codex CLI's turn_id, else Claude Code]
    #[arg(long, value_enum, value_name = "AGENT")]
    pub agent: Option<HookAgent>,
}
