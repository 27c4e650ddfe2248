//! Deterministic crash injection: with `AUTOCTL_FAILPOINT=NAME[,NAME...]` in the environment
//! of a **debug build**, the process kills itself with SIGKILL when it reaches
//! [`hit`]`("NAME")` — between the two renames of a multi-file update, after a temporary file
//! is written and before it is renamed — so a test can prove what a crash at exactly that
//! point leaves behind. Release builds compile every failpoint to nothing and never read the
//! variable.
//!
//! The points: `fsx-before-rename` (every atomic write, temp file complete),
//! `type-before-enter` (keys typed into a pane: the text is in, its Enter not yet),
//! `dispatch-recorded` (a dispatch's intent record is saved, its signal not consumed, no key
//! typed yet), `signal-consume-aside` (the consumed signal is renamed aside, not yet checked
//! or removed), `dispatch-typed` (the signal consumed, the keys typed, the row not saved), and the
//! checkpoint steps `checkpoint-write-batch-indexed` (the index names the batch, its file is
//! not written yet) and `checkpoint-delete-batch-removed` (the file is gone, the index still
//! names it).
//!
//! `decision-log-half-written` writes half of a decision-log line, then kills.
//! `tick-saved-not-announced`: `run tick`'s decisions and their events are saved (in the runs'
//! outboxes), nothing is announced yet.
//!
//! `AUTOCTL_FAILPOINT=tick-panic=SESSION` makes the tick of that one run panic instead (a bug
//! stand-in: the other runs must still be ticked and every claim released), and
//! `tick-sigterm=SESSION` sends the process a SIGTERM during that run's tick ([`armed_for`]).

/// The environment variable that arms failpoints.
pub const ENV: &str = "AUTOCTL_FAILPOINT";

/// Die here if `name` is armed (debug builds only).
#[inline]
pub fn hit(name: &str) {
    #[cfg(debug_assertions)]
    if armed(name) {
        // SIGKILL: no destructor, no atexit handler, no flush — a real crash.
        let _ = signal_hook::low_level::raise(signal_hook::consts::SIGKILL);
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}

/// Whether the failpoint `name` is armed (debug builds only; always false in release builds),
/// for a failpoint that must do something before it kills (write half a line).
#[inline]
pub fn is_armed(name: &str) -> bool {
    #[cfg(debug_assertions)]
    return armed(name);
    #[cfg(not(debug_assertions))]
    {
        let _ = name;
        false
    }
}

#[cfg(debug_assertions)]
fn armed(name: &str) -> bool {
    std::env::var(ENV).is_ok_and(|names| names.split(',').any(|armed| armed.trim() == name))
}

/// Whether `NAME=value` is armed (debug builds only; always false in release builds): the
/// caller stands in for a bug or an event in the code that handles `value` (one run of many).
/// `tick-panic=SESSION` panics in that run's tick; `tick-sigterm=SESSION` sends the process
/// a SIGTERM there.
#[inline]
pub fn armed_for(name: &str, value: &str) -> bool {
    #[cfg(debug_assertions)]
    return std::env::var(ENV).is_ok_and(|names| {
        names
            .split(',')
            .any(|armed| armed.trim().split_once('=') == Some((name, value)))
    });
    #[cfg(not(debug_assertions))]
    {
        let _ = (name, value);
        false
    }
}
