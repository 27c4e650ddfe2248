//! The reasoning loop (seed 002, "Stall Detection & Recovery"): the same agent message
//! [`REPEAT_LIMIT`] times in a row is a stop with [`StopReason::ReasoningLoop`](crate::protocol::stop::StopReason::ReasoningLoop) — a loop that repeats
//! itself makes no progress however much the screen changes.
//!
//! Each new agent message on a Claude Code screen ([`crate::pane::message`]) is counted once
//! per new block list; messages are compared after [`normalize_message`], so a re-rendered
//! but identical message is the same message. The count is kept between heartbeats as a
//! [`RepeatState`] (a stable hash and a count) in the stall state.

use serde::{Deserialize, Serialize};

use super::{Condition, Diagnosis, Effects, Hint, Limits, Response, Sample, StallState};
use crate::pane::message::{self, normalize_message};
use crate::pane::{Action, Class};

/// Identical consecutive messages that make a reasoning loop (seed 002).
pub const REPEAT_LIMIT: u32 = 3;

/// Is the agent in a reasoning loop: its last `limit` messages identical? (The model the
/// streaming [`RepeatState`] is checked against.)
#[cfg(test)]
fn reasoning_loop<S: AsRef<str>>(messages: &[S], limit: u32) -> bool {
    limit > 0 && message::trailing_repeats(messages) >= limit
}

/// FNV-1a: a hash that is the same in every build, because the state is persisted between
/// ticks (std's hasher may change between Rust releases).
fn stable_hash(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The streaming form for a tick that sees one new message at a time and stores this
/// between ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepeatState {
    /// Hash of the last non-empty normalized message.
    pub last: Option<u64>,
    /// How many times in a row it has been seen.
    pub count: u32,
}

impl RepeatState {
    /// The state after one more message.
    pub fn observe(self, message: &str) -> RepeatState {
        let normalized = normalize_message(message);
        if normalized.is_empty() {
            return self;
        }
        let hash = stable_hash(&normalized);
        if self.last == Some(hash) {
            RepeatState {
                last: self.last,
                count: self.count.saturating_add(1),
            }
        } else {
            RepeatState {
                last: Some(hash),
                count: 1,
            }
        }
    }

    /// The state after a new message that the screen shows `visible` times in a row (the
    /// same text between the same tool calls, all still on screen): at least one more than
    /// before when it repeats the last message, and never fewer than the screen shows — or,
    /// when the screen shows where the run began (`known`), exactly what it shows: a copy
    /// after different calls starts a new run however the count stood.
    pub fn observe_seen(self, message: &str, visible: u32, known: bool) -> RepeatState {
        let next = self.observe(message);
        if next.last.is_none() {
            return next;
        }
        RepeatState {
            count: if known {
                visible.max(1)
            } else {
                next.count.max(visible)
            },
            ..next
        }
    }

    /// The hash of the last message as stored in text form (16 hex digits).
    pub fn last_hex(self) -> Option<String> {
        self.last.map(|hash| format!("{hash:016x}"))
    }

    /// A state read back from its text form; an unreadable hash starts over.
    pub fn from_hex(last: Option<&str>, count: u32) -> RepeatState {
        match last.and_then(|hex| u64::from_str_radix(hex, 16).ok()) {
            Some(hash) => RepeatState {
                last: Some(hash),
                count,
            },
            None => RepeatState::default(),
        }
    }

    pub fn is_loop(self, limit: u32) -> bool {
        limit > 0 && self.count >= limit
    }
}

/// Count a new agent message; the same one `repeat_limit` times in a row is a stop.
pub(super) fn check(
    next: &mut StallState,
    obs: &Sample,
    limits: &Limits,
    effects: Effects,
) -> Option<Diagnosis> {
    let messages = obs.messages.as_ref()?;
    if waits_on_person(obs) {
        // A prompt waits for a person or a permission: the agent is not looping, and what
        // it said before the prompt is counted once the prompt is gone (issue 29).
        return None;
    }
    if messages.fingerprint.is_empty() {
        // No blocks on screen (a fresh start, a cleared screen): nothing new was said.
        return None;
    }
    if next
        .transcript
        .as_deref()
        .is_some_and(|old| message::same_transcript(old, &messages.fingerprint))
    {
        return None;
    }
    next.transcript = Some(messages.fingerprint.clone());
    let latest = messages.latest.as_deref()?;
    let repeats = next
        .repeats()
        .observe_seen(latest, messages.visible, messages.run_known);
    next.message_hash = repeats.last_hex();
    next.message_repeats = repeats.count;
    if obs.observe_only || !repeats.is_loop(limits.repeat_limit) {
        return None;
    }
    let mut diagnosis = Diagnosis::new(
        Condition::ReasoningLoop,
        Response::Stop,
        format!(
            "reasoning loop: the agent said the same thing {} times in a row ({:?})",
            repeats.count,
            crate::output::one_line(&shorten(latest, 80))
        ),
    );
    diagnosis.perform = effects.stop;
    Some(diagnosis)
}

/// The screen holds a question for a person or a permission: a prompt or dialog on screen,
/// anything the classifier escalates, or the hooks' word that a prompt is up.
fn waits_on_person(obs: &Sample) -> bool {
    matches!(
        obs.class,
        Class::Permission | Class::YesNo | Class::Trust | Class::Auth | Class::Picker
    ) || obs.action == Action::Escalate
        || obs.hint != Hint::Screen
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::message::trailing_repeats;
    use proptest::prelude::*;

    #[test]
    fn three_identical_messages_in_a_row_are_a_loop() {
        let m = [
            "plan the fix",
            "Let me check the tests.",
            "Let me check the tests.",
            "Let me check the tests.",
        ];
        assert!(reasoning_loop(&m, REPEAT_LIMIT));
        assert!(!reasoning_loop(&m[..3], REPEAT_LIMIT));
        let broken = ["same", "same", "other", "same"];
        assert!(!reasoning_loop(&broken, REPEAT_LIMIT));
        assert_eq!(trailing_repeats::<&str>(&[]), 0);
        assert!(
            !reasoning_loop(&["a", "a", "a"], 0),
            "a zero limit never fires"
        );
    }

    #[test]
    fn rerendered_text_is_the_same_message() {
        let m = [
            "Let me check\nthe tests.",
            "\u{1b}[1mLet me check the tests.\u{1b}[0m",
            "  Let  me check the tests.  ",
        ];
        assert!(reasoning_loop(&m, 3));
        assert_eq!(
            normalize_message("\u{1b}]0;title\u{7}hi\tthere\r\n"),
            "hi there"
        );
        // Empty messages neither count nor break the run.
        assert!(reasoning_loop(&["x", "", "x", "   ", "x"], 3));
    }

    fn message() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("a".to_string()),
            Just(" a ".to_string()),
            Just("b".to_string()),
            Just("".to_string()),
            "[a-c ]{0,4}"
        ]
    }

    proptest! {
        /// The streaming state and the slice function agree on every sequence.
        #[test]
        fn streaming_agrees_with_the_slice(messages in proptest::collection::vec(message(), 0..20)) {
            let mut state = RepeatState::default();
            for (i, m) in messages.iter().enumerate() {
                state = state.observe(m);
                prop_assert_eq!(state.count, trailing_repeats(&messages[..=i]));
                prop_assert_eq!(state.is_loop(REPEAT_LIMIT), reasoning_loop(&messages[..=i], REPEAT_LIMIT));
            }
        }

        /// The screen-aware form never counts fewer than the screen shows, and with one
        /// visible copy it is the plain streaming form.
        #[test]
        fn observe_seen_extends_observe(
            messages in proptest::collection::vec((message(), 1u32..5), 0..20),
        ) {
            let (mut plain, mut seen) = (RepeatState::default(), RepeatState::default());
            for (m, visible) in &messages {
                let once = seen.observe_seen(m, 1, false);
                prop_assert_eq!(once, seen.observe(m));
                plain = plain.observe(m);
                seen = seen.observe_seen(m, *visible, false);
                if !normalize_message(m).is_empty() {
                    prop_assert!(seen.count >= *visible);
                    prop_assert!(seen.count >= plain.count);
                }
                prop_assert_eq!(RepeatState::from_hex(seen.last_hex().as_deref(), seen.count), seen);
                // A screen that shows where the run began has the last word on the count.
                let known = seen.observe_seen(m, *visible, true);
                if !normalize_message(m).is_empty() {
                    prop_assert_eq!(known.count, (*visible).max(1));
                }
            }
        }

    }
}
