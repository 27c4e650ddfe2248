//! What keeps one run's trouble to that run, and a supervisor's claims from outliving it: a
//! panic while reading one run's screen or deciding for it becomes that run's error
//! ([`isolated`]), and a request to stop (SIGINT, SIGTERM, SIGHUP) lets a `run tick` finish
//! the run it is typing into, give back the claims of the runs it has not reached, and exit
//! 130 ([`install_interrupts`], [`interrupted`]) instead of dying with every claim held until
//! its lease runs out.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once, OnceLock};

/// Set once a stop was requested (only after [`install_interrupts`]).
static REQUESTED: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Catch SIGINT, SIGTERM and SIGHUP: the first asks this process to stop at the next run's
/// turn ([`interrupted`]); a second one of the same kind ends it at once (exit 130), so a
/// person pressing Ctrl-C twice is never kept waiting. Err when the handlers cannot be set.
pub fn install_interrupts() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let flag = Arc::clone(REQUESTED.get_or_init(Arc::default));
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register_conditional_shutdown(
            signal,
            crate::error::EXIT_INTERRUPTED.into(),
            Arc::clone(&flag),
        )?;
        signal_hook::flag::register(signal, Arc::clone(&flag))?;
    }
    Ok(())
}

/// Has this process been asked to stop?
pub fn interrupted() -> bool {
    REQUESTED
        .get()
        .is_some_and(|flag| flag.load(Ordering::Relaxed))
}

thread_local! {
    /// Where the last panic on this thread happened (for the error [`isolated`] reports).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Remember where panics happen, then report them as before (the default hook's message on
/// stderr stays: it is what a bug report needs).
fn note_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let place = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()));
            LAST_PANIC.with(|last| *last.borrow_mut() = place);
            previous(info);
        }));
    });
}

/// Run `work`, turning a panic into an error that says it is a bug and where it happened, so
/// one run's bug never takes the other runs — or a watcher — down with it.
///
/// Whatever `work` borrows is used again after a caught panic; that is sound here because
/// every state it changes is either committed whole (a registry transaction rolls back when
/// dropped) or local to the run that failed.
pub fn isolated<T>(work: impl FnOnce() -> T) -> Result<T, Panicked> {
    note_panics();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        let place = LAST_PANIC.with(|last| last.borrow_mut().take().unwrap_or_default());
        Panicked { place, message }
    })
}

/// A panic caught by [`isolated`]: where it happened (` at FILE:LINE`, or empty) and what it
/// said. Printed on one line as a bug to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panicked {
    place: String,
    message: String,
}

impl std::fmt::Display for Panicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::output::one_line(&format!(
            "a bug in autoctl (please report it): panicked{}: {}",
            self.place, self.message
        )))
    }
}

impl std::error::Error for Panicked {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_an_error_that_says_where() {
        assert_eq!(isolated(|| 7), Ok(7));
        let err = isolated(|| -> u32 { panic!("boom {}", 1) })
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("a bug in autoctl"), "{err}");
        assert!(err.contains("isolation.rs:"), "{err}");
        assert!(err.ends_with(": boom 1"), "{err}");
        assert!(!interrupted(), "no stop was asked for");
    }
}
