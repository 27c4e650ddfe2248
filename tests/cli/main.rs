//! The one integration test binary. Every test drives the built `autoctl` through
//! [`util::Sandbox`], which gives it a private HOME, state dir and tmux socket.

mod agent_hooks;
mod app_server;
mod crash;
mod dispatch;
mod doctor;
mod examples;
mod floor;
mod generated;
mod glossary;
mod governor;
mod hook;
mod hook_state;
mod isolation;
mod layout;
mod lint;
mod lock;
mod next;
mod outbox;
mod pane;
mod policy;
mod progress;
mod readme;
mod registry;
mod run;
mod run_tick;
mod run_watch;
mod side_files;
mod signal;
mod stall;
mod stop;
mod table;
mod task;
mod tmuxfix;
mod typed_tick;
mod util;
mod waits;

mod checkpoint;
mod consume;
mod content_stall;
mod gate;
mod graph;
mod plan;
mod profile;
mod route;
