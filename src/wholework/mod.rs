//! wholework's orchestration rules (seed 003) as pure functions: the size → route matrix
//! with its post-spec refresh, the XL sub-issue graph run level by level (a sliding window or
//! fixed batches), the parent-phase aggregation and close flow, the checkpoint files, and the
//! tier-3 recovery-plan guard. [`runner`] is the one edge: it runs a command per sub-issue.

pub mod checkpoint;
pub mod close;
pub mod graph;
pub mod plan;
pub mod route;
pub mod runner;
pub mod window;
