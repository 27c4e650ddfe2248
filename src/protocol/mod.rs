//! The files of the loop protocol that live in a task module directory: `.auto-signal`,
//! `.auto-stop`, `.auto-retry`, `.index.md` front matter, `.target.md`, and task-ai's `.status.json` — how
//! each is parsed, validated and written (`.type-profile.md` is [`crate::taskai::profile`]'s), and what a new module
//! holds ([`scaffold`]). Pure functions over bytes
//! and values; the few reads they need go through [`crate::fsx`] with a size bound.

pub mod document;
pub mod index;
pub mod retry;
pub mod scaffold;
pub mod signal;
pub mod status;
pub mod stop;
pub mod target;

pub use document::{Location, Problem};
