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

pub mod admin;
pub mod decide;
pub mod input;
pub mod prompt;
pub mod quota;
pub mod run;
pub mod sentinel;
pub mod state;
pub mod transcript;
