//! wholework's orchestration rules (seed 003) as pure functions: the size → route matrix
//! with its post-spec refresh, the XL sub-issue graph run level by level, the parent-phase
//! aggregation, the checkpoint files, and the tier-3 recovery-plan guard.

pub mod checkpoint;
pub mod graph;
pub mod plan;
pub mod route;
