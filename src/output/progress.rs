//! Progress for people, on stderr, for work that takes more than a moment (linting a big
//! tree, levelling a huge graph, waiting for a pane).
//!
//! Nothing is shown unless stderr is a terminal (and `TERM` is not `dumb`), and nothing
//! before [`DELAY`]: a command that answers quickly, or whose stderr is a pipe or a log,
//! prints exactly what it printed before. stdout is never touched. The line is redrawn in
//! place (`\r`, erase line) by a background thread a few times a second and erased when the
//! work ends; diagnostics printed meanwhile (by the parent, [`crate::output`]) erase it first, so a
//! warning never lands in the middle of it.

use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long work runs before its progress appears.
pub const DELAY: Duration = Duration::from_secs(1);
/// How often the line is redrawn.
const REDRAW: Duration = Duration::from_millis(150);

/// Whether a progress line is on the terminal now (so a diagnostic erases it first).
static DRAWN: AtomicBool = AtomicBool::new(false);

/// Erase a drawn progress line before a diagnostic is written to `err` (stderr, locked).
pub fn erase_for_diagnostic(err: &mut impl Write) {
    if DRAWN.swap(false, Ordering::SeqCst) {
        let _ = err.write_all(b"\r\x1b[2K");
    }
}

struct Shared {
    what: String,
    started: Instant,
    detail: Mutex<String>,
    count: AtomicU64,
    done: Mutex<bool>,
    wake: Condvar,
}

/// Progress of one piece of work; the line goes when this is dropped.
pub struct Progress {
    shared: Option<Arc<Shared>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Start showing progress of `what` ("linting", "levelling graph.json") after [`DELAY`],
    /// when stderr is a terminal.
    pub fn start(what: impl Into<String>) -> Progress {
        let term = std::env::var_os("TERM");
        let shown = io::stderr().is_terminal() && term.is_none_or(|t| t != "dumb");
        Progress::new(what.into(), shown, DELAY)
    }

    /// A progress that never shows anything (for callers that take one optionally).
    pub fn hidden() -> Progress {
        Progress {
            shared: None,
            thread: None,
        }
    }

    fn new(what: String, shown: bool, delay: Duration) -> Progress {
        if !shown {
            return Progress::hidden();
        }
        let shared = Arc::new(Shared {
            what,
            started: Instant::now(),
            detail: Mutex::new(String::new()),
            count: AtomicU64::new(0),
            done: Mutex::new(false),
            wake: Condvar::new(),
        });
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || draw_until_done(&shared, delay))
                .ok()
        };
        Progress {
            shared: Some(shared),
            thread,
        }
    }

    /// Whether anything will be shown (to skip building details nobody sees).
    pub fn shown(&self) -> bool {
        self.shared.is_some()
    }

    /// What is happening now ("reading graph.json (7.9 MB)", "next look in 4s").
    pub fn detail(&self, text: impl Into<String>) {
        if let Some(shared) = &self.shared
            && let Ok(mut detail) = shared.detail.lock()
        {
            *detail = text.into();
        }
    }

    /// Count one more item done (modules linted).
    pub fn tick(&self) {
        if let Some(shared) = &self.shared {
            shared.count.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            if let Ok(mut done) = shared.done.lock() {
                *done = true;
            }
            shared.wake.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn draw_until_done(shared: &Shared, delay: Duration) {
    let mut wait = delay;
    loop {
        let Ok(done) = shared.done.lock() else { return };
        let (done, _) = match shared.wake.wait_timeout_while(done, wait, |done| !*done) {
            Ok(result) => result,
            Err(_) => return,
        };
        let finished = *done;
        drop(done);
        let mut err = io::stderr().lock();
        if finished {
            erase_for_diagnostic(&mut err);
            return;
        }
        let detail = shared.detail.lock().map(|d| d.clone()).unwrap_or_default();
        let text = line(
            &shared.what,
            shared.count.load(Ordering::Relaxed),
            &detail,
            shared.started.elapsed(),
        );
        let _ = write!(err, "\r\x1b[2K{text}");
        let _ = err.flush();
        DRAWN.store(true, Ordering::SeqCst);
        wait = REDRAW;
    }
}

/// The progress line: `autoctl: linting… 1234 done, TASK/auth (3s)`, never wider than a
/// common terminal (a wrapped line would not be erased by `\r`): the detail is cut first.
fn line(what: &str, count: u64, detail: &str, elapsed: Duration) -> String {
    const WIDTH: usize = 79;
    let mut head = format!("autoctl: {what}…");
    if count > 0 {
        head.push_str(&format!(" {count} done"));
    }
    let tail = format!(" ({}s)", elapsed.as_secs());
    let mut detail = crate::output::one_line(detail);
    if !detail.is_empty() {
        detail.insert_str(0, if count > 0 { ", " } else { " " });
    }
    let room = WIDTH.saturating_sub(head.chars().count() + tail.chars().count());
    if detail.chars().count() > room {
        detail = detail
            .chars()
            .take(room.saturating_sub(1))
            .collect::<String>()
            + "…";
    }
    let text = head + &detail + &tail;
    if text.chars().count() > WIDTH {
        return text.chars().take(WIDTH - 1).collect::<String>() + "…";
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_how_many_and_how_long() {
        assert_eq!(
            line("linting", 0, "", Duration::from_millis(1500)),
            "autoctl: linting… (1s)"
        );
        assert_eq!(
            line("linting", 1234, "TASK/auth", Duration::from_secs(3)),
            "autoctl: linting… 1234 done, TASK/auth (3s)"
        );
        assert_eq!(
            line(
                "waiting for pane",
                0,
                "next look\nin 4s",
                Duration::from_secs(2)
            ),
            "autoctl: waiting for pane… next look in 4s (2s)"
        );
        let long = line("x", 0, &"y".repeat(200), Duration::from_secs(12));
        assert_eq!(long.chars().count(), 79);
        assert!(long.ends_with("y… (12s)"), "{long}");
        assert_eq!(
            line(&"w".repeat(200), 0, "", Duration::ZERO)
                .chars()
                .count(),
            79
        );
    }

    #[test]
    fn hidden_progress_shows_nothing_and_ends_at_once() {
        let progress = Progress::new("x".into(), false, Duration::ZERO);
        assert!(progress.shared.is_none());
        progress.tick();
        progress.detail("y");
        // Dropping wakes the drawing thread at once (a join on an hour's sleep would hang).
        drop(Progress::new("x".into(), true, Duration::from_secs(3600)));
    }
}
