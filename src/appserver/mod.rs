//! Codex CLI driven through its app-server instead of its screen (`run start --into
//! app-server`): `codex app-server` speaks JSON-RPC 2.0, one JSON object per line on stdio
//! (its schema: `codex app-server generate-json-schema`). autoctl starts (or resumes) a thread,
//! sends each step as a turn and reads what the agent does as typed messages — items, approval
//! requests, rate limits, errors — never a screen.
//!
//! - [`turn`]: the pure core of one turn: the messages to send, the typed state to record, the
//!   approvals to answer, how the turn ended;
//! - the edge is `autoctl run turn` (`src/cmd/run/turn.rs`): it runs the app-server, carries
//!   the core's effects out (the hook store, the decision log, the terminal) and exits when the
//!   turn ends.
//!
//! Recorded message streams of the real Codex 0.171 app-server are under
//! `tests/fixtures/app-server/codex/`.

pub mod turn;
