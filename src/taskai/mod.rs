//! task-ai's quality decisions (seed 002) as pure functions: the per-checkpoint score gate,
//! the convergence gate, the `.type-profile.md` "## Auto Adaptation" section they read and
//! `profile learn` rewrites, the per-iteration compaction budget every compactor shares, and
//! the VFP cycle tracking of software tasks.
//! (Its content-based stall detectors — reasoning loops, step timeouts — live with the other
//! stalls in [`crate::supervise::stall`].)
//!
//! Nothing here touches a file or a clock: commands in `cmd/` read, pass `now` in, and print.

pub mod compaction;
pub mod converge;
pub mod gate;
pub mod profile;
pub mod score;
pub mod vfp;
