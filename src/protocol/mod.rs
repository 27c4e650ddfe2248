//! The files of the loop protocol that live in a task module directory: `.auto-signal`,
//! `.auto-stop`, `.index.md` front matter and `.target.md` — how each is parsed, validated
//! and written. Pure functions over bytes and values; the few reads they need go through
//! [`crate::fsx`] with a size bound.

pub mod document;
pub mod index;
pub mod signal;
pub mod stop;
pub mod target;

pub use document::{Location, Problem};
