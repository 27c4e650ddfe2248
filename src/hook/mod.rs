//! A loop inside one Claude Code session, driven by its Stop hook (seed 004's autonomous loop,
//! seed 000's single-session mode): after each turn `autoctl hook stop` decides whether the
//! session goes on, and with what prompt.
//!
//! - [`input`]: the hook's stdin;
//! - [`transcript`]: the session transcript, read from its end and incrementally;
//! - [`sentinel`]: the completion line;
//! - [`state`]: the loop's files under `D/.autoctl/`;
//! - [`prompt`]: the next prompt (text, file, or a task module's routed command);
//! - [`decide`]: the pure decision;
//! - [`quota`]: StopFailure records (quota waits);
//! - [`run`]: the effects around the decision;
//! - [`admin`]: `loop init`, `status` and `teardown`.
//!
//! And the session's typed state, for the supervisors (hooks first, the screen second):
//! - [`session`]: the record of what the agent is doing, and the pure transition per event;
//! - [`store`]: where records live and the API to read and write them;
//! - [`event`]: `hook event`, and the one call the other hook commands record with;
//! - [`statusline`]: the status line's JSON, its record (rate limits, context) and its line;
//! - [`agents`]: Codex CLI's and Gemini CLI's hook payloads, read in Claude Code's vocabulary;
//! - [`settings`]: `hook install`'s merge into Claude Code's settings.json;
//! - [`commands`]: the ai-cli-task slash command `hook install --commands` writes.

pub mod admin;
pub mod agents;
pub mod commands;
pub mod decide;
pub mod event;
pub mod input;
pub mod prompt;
pub mod quota;
pub mod rollout;
pub mod run;
pub mod sentinel;
pub mod session;
pub mod settings;
pub mod state;
pub mod statusline;
pub mod store;
pub mod transcript;
