//! The decision of `hook stop`, as a pure function of (loop settings, loop state, what this
//! Stop observed, clock) → (what to answer, the next state, whether the loop ends).
//!
//! Order matters and is the contract:
//! 1. another session's loop → stand aside (a loop never hijacks a session it is not bound
//!    to); another owner's live lock → stand aside;
//! 2. a budget that cannot be measured (no readable transcript) → pause, do not guess;
//! 3. count the finished turn (binding the loop to this session on its first Stop), then end
//!    the loop on: the completion sentinel, a Claude Code override of the previous block, the
//!    token budget (the turn's final message included, estimated when the transcript does not
//!    show it yet), too many compactions in the turn, the iteration limit, too many turns
//!    without a tool call, or the task routing to `(stop)`;
//! 4. otherwise block the stop with the next prompt — unless Claude Code would override that
//!    block (then the loop ends here, cleanly), or pause when the prompt cannot be known
//!    (unreadable prompt file, invalid signal), keeping the loop for the next Stop.
//!
//! `stop_hook_active` is deliberately not consulted: every continuation of a loop is a Stop
//! hook continuation, and the loop is bounded by its own limits instead. Claude Code (read
//! from 2.1.332's code and seen live) lets a Stop hook block `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`
//! (default 8) times in a row and overrides the next block — the 9th — ending the turn with
//! "A hook blocked the turn from ending 9 consecutive times"; its counter restarts at every
//! turn that runs a tool. The loop counts its blocks the same way (`stop_blocks`) and ends
//! itself at the block Claude Code would override, so `loop status` never shows a loop as
//! active that Claude Code has silently stopped; `max_idle` (default 6) usually ends an idle
//! loop earlier.

use chrono::{DateTime, Utc};

use super::prompt::Next;
use super::state::{Ended, LoopConfig, LoopState};
use super::transcript::{Cursor, Usage};
use crate::lock::Observed;
use crate::protocol::signal::now_timestamp;

/// Where the completion sentinel was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    LastMessage,
    Transcript,
}

/// What one Stop observed, gathered by the edge.
#[derive(Debug, Clone)]
pub struct StopObservation {
    pub session: String,
    pub completion: Option<Found>,
    /// tool_use blocks in the turn that just ended; `None` when unknown (no transcript).
    pub tool_uses: Option<usize>,
    /// Tokens the bound session used since the last Stop.
    pub tokens_added: Usage,
    /// The budget reader's new position.
    pub cursor: Option<Cursor>,
    /// Why the transcript could not be read.
    pub transcript_problem: Option<String>,
    /// Another owner's live hold on the loop lock.
    pub lock_conflict: Option<Observed>,
    /// The session this one takes the loop over from (see [`takeover`]).
    pub took_over: Option<String>,
    /// Tokens of this turn's final message the transcript does not show yet (a lower-bound
    /// estimate, see [`pending_estimate`]); counted toward the budget now, for real later.
    pub tokens_pending: u64,
    /// Context compactions made during the turn.
    pub compactions: u32,
    /// Claude Code overrode the loop's last block (its notice was in the transcript).
    pub block_override: Option<u64>,
    /// `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` as Claude Code reads it (default 8); `None`: no cap.
    pub block_cap: Option<u64>,
    pub next: Result<Next, String>,
}

/// Claude Code's default `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` (2.1.332).
pub const DEFAULT_BLOCK_CAP: u64 = 8;

/// The block cap Claude Code applies, from the variable's value in its (and so the hook's)
/// environment: unset or unreadable is the default, 0 is no cap.
pub fn block_cap(value: Option<&str>) -> Option<u64> {
    match value.map(str::trim).map(str::parse::<u64>) {
        None | Some(Err(_)) => Some(DEFAULT_BLOCK_CAP),
        Some(Ok(0)) => None,
        Some(Ok(cap)) => Some(cap),
    }
}

/// A lower bound of the tokens of a turn's final message that the transcript does not show
/// yet (Claude Code writes the transcript asynchronously: at the Stop hook the turn's last
/// message is sometimes missing — 2 of 9 Stops in a live 2.1.332 run). Every API call of a
/// turn sends at least the context of the one before it plus that one's output, so the
/// final message costs at least `last`'s input, cache and output tokens — unless the
/// context was compacted in between, when only the status line's reading is used.
/// `status` is the status line's input + output tokens of a message of this turn (recorded
/// after the previous Stop), itself at most the final message's cost.
pub fn pending_estimate(lagging: bool, last: &Usage, compacted: bool, status: Option<u64>) -> u64 {
    if !lagging {
        return 0;
    }
    let from_transcript = if compacted { 0 } else { last.total() };
    from_transcript.max(status.unwrap_or(0))
}

/// The kinds of answers, as `loop route` and the tests name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Continue,
    Done,
    MaxIterations,
    BudgetExhausted,
    Idle,
    /// Claude Code would override the next block (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`).
    BlockCap,
    /// Too many context compactions in one iteration (seed 002).
    CompactionLimit,
    /// Claude Code overrode the loop's previous block.
    Overridden,
    TaskStopped,
    ForeignSession,
    LockConflict,
    Paused,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Continue => "continue",
            Kind::Done => "done",
            Kind::MaxIterations => "max-iterations",
            Kind::BudgetExhausted => "budget-exhausted",
            Kind::Idle => "idle",
            Kind::BlockCap => "block-cap",
            Kind::CompactionLimit => "compaction-limit",
            Kind::Overridden => "overridden",
            Kind::TaskStopped => "task-stopped",
            Kind::ForeignSession => "foreign-session",
            Kind::LockConflict => "lock-conflict",
            Kind::Paused => "paused",
        }
    }
}

/// The answer to one Stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopDecision {
    pub kind: Kind,
    /// Shown to the user (`systemMessage`).
    pub message: String,
    /// The next prompt (`reason` of a block), only for [`Kind::Continue`].
    pub prompt: Option<String>,
    /// The state to write; `None` leaves the state file as it is.
    pub state: Option<LoopState>,
    /// Remove the activation file and release the lock.
    pub teardown: bool,
}

impl StopDecision {
    fn stand_aside(kind: Kind, message: String) -> StopDecision {
        StopDecision {
            kind,
            message,
            prompt: None,
            state: None,
            teardown: false,
        }
    }
}

/// The session the loop belongs to, if it is bound.
pub fn bound_session<'a>(config: &'a LoopConfig, state: &'a LoopState) -> Option<&'a str> {
    state.session_id.as_deref().or(config.session.as_deref())
}

/// Whether `session` may take over a loop bound to another session (seed 004: "a new session
/// may steal a stale lock"): the bound session's lock has had no heartbeat for the stale
/// period **and** the process it recorded is gone from this host. Either alone is not enough:
/// a stale heartbeat is also a session waiting for its user, and a dead pid with a fresh
/// heartbeat is a hook that just ran. A session bound by `loop init --session` is never
/// taken over. Returns the session taken over from.
pub fn takeover<'a>(
    config: &LoopConfig,
    state: &'a LoopState,
    session: &str,
    holder: Option<&Observed>,
) -> Option<&'a str> {
    if config.session.is_some() {
        return None;
    }
    let bound = state.session_id.as_deref()?;
    let held = holder?;
    (bound != session && held.record.owner == owner_tag(bound) && held.stale && held.dead)
        .then_some(bound)
}

/// Step 1 alone, so the edge can stand aside for a foreign session before reading anything
/// else. `holder` describes the lock, when there is one.
pub fn foreign(
    config: &LoopConfig,
    state: &LoopState,
    session: &str,
    holder: Option<&Observed>,
) -> Option<StopDecision> {
    let bound = bound_session(config, state)?;
    if bound == session || takeover(config, state, session, holder).is_some() {
        return None;
    }
    let heartbeat = holder
        .filter(|held| held.record.owner == owner_tag(bound))
        .map(|held| format!(", last heartbeat {} ago", crate::lock::human_age(held.age)))
        .unwrap_or_default();
    Some(StopDecision::stand_aside(
        Kind::ForeignSession,
        format!(
            "autoctl loop: not continuing this session: the loop belongs to session \
             {bound}{heartbeat} (autoctl loop status; autoctl loop init to restart it here)"
        ),
    ))
}

/// The lock owner tag of a session.
pub fn owner_tag(session: &str) -> String {
    format!("session:{session}")
}

/// Decide the answer to one Stop of the bound (or binding) session: stand aside where the
/// loop is not this session's to run, count the turn, end the loop at the first limit it
/// reached, or else answer with the next prompt (or pause on a problem with it).
pub fn decide(
    config: &LoopConfig,
    state: &LoopState,
    obs: StopObservation,
    now: DateTime<Utc>,
) -> StopDecision {
    if let Some(decision) = stand_aside_before_counting(config, state, &obs) {
        return decision;
    }
    let stamp = now_timestamp(now);
    let (next, blocks) = count_turn(state, &obs, &stamp);
    if let Some((kind, message)) = limit_reached(config, &obs, &next) {
        return end(kind, message, next, stamp);
    }
    answer_next(config, obs, next, blocks, stamp)
}

/// Before anything is counted: another session's loop, a lock held by someone else, or a
/// token budget the transcript cannot measure.
fn stand_aside_before_counting(
    config: &LoopConfig,
    state: &LoopState,
    obs: &StopObservation,
) -> Option<StopDecision> {
    if obs.took_over.is_none()
        && let Some(decision) = foreign(config, state, &obs.session, None)
    {
        return Some(decision);
    }
    if let Some(holder) = &obs.lock_conflict {
        return Some(StopDecision::stand_aside(
            Kind::LockConflict,
            format!(
                "autoctl loop: not continuing: the loop lock is held by {}",
                holder.describe()
            ),
        ));
    }
    if let (Some(_), Some(problem)) = (config.budget, &obs.transcript_problem) {
        return Some(StopDecision::stand_aside(
            Kind::Paused,
            format!("autoctl loop: paused: cannot measure the token budget: {problem}"),
        ));
    }
    None
}

/// The loop's state after this turn (one more iteration, its tokens, tools, compactions,
/// this session) and the number this Stop's block would have in Claude Code's chain.
fn count_turn(state: &LoopState, obs: &StopObservation, stamp: &str) -> (LoopState, u64) {
    let mut next = state.clone();
    if obs.took_over.is_some() {
        // A new session and transcript: its turns start a new idle streak.
        next.idle_streak = 0;
    }
    next.session_id = Some(obs.session.clone());
    next.started_at.get_or_insert_with(|| stamp.to_string());
    next.updated_at = Some(stamp.to_string());
    next.tokens.add(&obs.tokens_added);
    if obs.cursor.is_some() {
        next.transcript = obs.cursor.clone();
    }
    next.iteration = next.iteration.saturating_add(1);
    match obs.tool_uses {
        Some(0) => next.idle_streak = next.idle_streak.saturating_add(1),
        Some(_) => next.idle_streak = 0,
        None => {}
    }
    next.tokens_pending = obs.tokens_pending;
    next.compactions = state.compactions.record(next.iteration, obs.compactions);
    // Blocking now would be Claude Code's block number `blocks`: its count restarts at a turn
    // that ran a tool (an unknown turn counts as one without: ending a loop one block early
    // beats a silent override).
    let blocks = if obs.tool_uses.is_some_and(|n| n > 0) {
        1
    } else {
        state.stop_blocks.saturating_add(1)
    };
    // Any answer but a block ends Claude Code's chain of blocks.
    next.stop_blocks = 0;
    (next, blocks)
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The first end the loop reached this turn, in order: the completion sentinel, Claude
/// Code's override, the token budget, the compaction limit, the iteration limit, the idle
/// limit.
fn limit_reached(
    config: &LoopConfig,
    obs: &StopObservation,
    next: &LoopState,
) -> Option<(Kind, String)> {
    let turns = next.iteration;
    if let Some(found) = obs.completion {
        let place = match found {
            Found::LastMessage => "the last message",
            Found::Transcript => "the last turn",
        };
        let message = format!(
            "autoctl loop: complete after {turns} iteration{} (completion sentinel in {place})",
            plural(turns)
        );
        return Some((Kind::Done, message));
    }
    if let Some(blocks) = obs.block_override {
        let message = format!(
            "autoctl loop: ended after {turns} iteration{}: Claude Code overrode the loop's \
             Stop hook after {blocks} consecutive blocks (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP)",
            plural(turns)
        );
        return Some((Kind::Overridden, message));
    }
    let used = next.tokens.total().saturating_add(next.tokens_pending);
    if let Some(budget) = config.budget
        && used >= budget
    {
        let pending = if next.tokens_pending > 0 {
            format!(
                " ({} in the transcript and at least {} for the turn's final message, which \
                 it does not show yet)",
                next.tokens.total(),
                next.tokens_pending
            )
        } else {
            String::new()
        };
        let message = format!(
            "autoctl loop: token budget exhausted: {used} of {budget} tokens used in {turns} iteration{}{pending}",
            plural(turns)
        );
        return Some((Kind::BudgetExhausted, message));
    }
    if next.compactions.exhausted(config.max_compactions) {
        let message = format!(
            "autoctl loop: stopped: {}",
            next.compactions.limit_message(config.max_compactions)
        );
        return Some((Kind::CompactionLimit, message));
    }
    if turns >= config.max_iterations {
        let message = format!(
            "autoctl loop: stopped at the iteration limit ({turns} of {})",
            config.max_iterations
        );
        return Some((Kind::MaxIterations, message));
    }
    if config.max_idle > 0 && next.idle_streak >= config.max_idle {
        let message = format!(
            "autoctl loop: stopped: no tool call in the last {} turns (--max-idle {}) after {turns} iteration{}",
            next.idle_streak,
            config.max_idle,
            plural(turns)
        );
        return Some((Kind::Idle, message));
    }
    None
}

/// The loop ends: the state records how and when, and the hook tears the loop down.
fn end(kind: Kind, message: String, mut state: LoopState, stamp: String) -> StopDecision {
    state.ended = Some(Ended {
        outcome: kind.as_str().to_string(),
        at: stamp,
        message: message.clone(),
    });
    StopDecision {
        kind,
        message,
        prompt: None,
        state: Some(state),
        teardown: true,
    }
}

/// What the task says comes next: stop, block with the next prompt (unless this block would
/// pass Claude Code's cap), or pause on a problem reading it.
fn answer_next(
    config: &LoopConfig,
    obs: StopObservation,
    mut next: LoopState,
    blocks: u64,
    stamp: String,
) -> StopDecision {
    let turns = next.iteration;
    match obs.next {
        Ok(Next::Stop(why)) => {
            let message = format!(
                "autoctl loop: stopped after {turns} iteration{}: {why}",
                plural(turns)
            );
            end(Kind::TaskStopped, message, next, stamp)
        }
        Ok(Next::Prompt(_)) if obs.block_cap.is_some_and(|cap| blocks > cap) => {
            let cap = obs.block_cap.unwrap_or(DEFAULT_BLOCK_CAP);
            let message = format!(
                "autoctl loop: stopped after {turns} iteration{}: Claude Code overrides a Stop \
                 hook that blocks more than {cap} times in a row without a tool call \
                 (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP), and this would be block {blocks}",
                plural(turns)
            );
            end(Kind::BlockCap, message, next, stamp)
        }
        Ok(Next::Prompt(prompt)) => {
            let upcoming = turns + 1;
            next.stop_blocks = blocks;
            let mut message = format!(
                "autoctl loop: iteration {upcoming} of {}",
                config.max_iterations
            );
            if let Some(previous) = &obs.took_over {
                message.push_str(&format!(
                    " (taken over from session {previous}: its lock went stale and its process is gone)"
                ));
            }
            if let Some(budget) = config.budget {
                message.push_str(&format!(
                    ", {} of {budget} tokens used",
                    next.tokens.total()
                ));
            }
            let prompt = format!(
                "{prompt}\n\n(autoctl loop: iteration {upcoming} of {}. When the whole task is \
                 done, end your final message with this line on its own: {})",
                config.max_iterations, config.sentinel
            );
            StopDecision {
                kind: Kind::Continue,
                message,
                prompt: Some(prompt),
                state: Some(next),
                teardown: false,
            }
        }
        Err(why) => StopDecision {
            kind: Kind::Paused,
            message: format!(
                "autoctl loop: paused after {turns} iteration{}: {why} (fix it and the next \
                 Stop resumes the loop; autoctl loop status)",
                plural(turns)
            ),
            prompt: None,
            state: Some(next),
            teardown: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::state::{PromptSource, VERSION};
    use crate::lock::{LockRecord, observe};
    use proptest::prelude::*;
    use std::time::Duration;

    fn config() -> LoopConfig {
        LoopConfig {
            version: VERSION,
            created_at: "2026-01-01T00:00:00Z".to_string(),
            session: None,
            max_iterations: 5,
            budget: None,
            max_idle: 3,
            sentinel: crate::hook::sentinel::DEFAULT.to_string(),
            prompt: PromptSource::Text("go on".to_string()),
            stale: "5m".to_string(),
            transcript_wait: "0s".to_string(),
            max_compactions: 3,
        }
    }

    fn obs(session: &str) -> StopObservation {
        StopObservation {
            session: session.to_string(),
            completion: None,
            tool_uses: Some(1),
            tokens_added: Usage::default(),
            cursor: None,
            transcript_problem: None,
            lock_conflict: None,
            took_over: None,
            tokens_pending: 0,
            compactions: 0,
            block_override: None,
            block_cap: Some(DEFAULT_BLOCK_CAP),
            next: Ok(Next::Prompt("go on".to_string())),
        }
    }

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap()
    }

    #[test]
    fn the_first_stop_binds_and_continues() {
        let d = decide(&config(), &LoopState::fresh(), obs("s1"), now());
        assert_eq!(d.kind, Kind::Continue);
        let state = d.state.unwrap();
        assert_eq!(state.session_id.as_deref(), Some("s1"));
        assert_eq!(state.iteration, 1);
        assert!(
            d.prompt
                .unwrap()
                .starts_with("go on\n\n(autoctl loop: iteration 2 of 5.")
        );
        assert_eq!(d.message, "autoctl loop: iteration 2 of 5");
    }

    #[test]
    fn other_sessions_are_never_blocked() {
        let mut state = LoopState::fresh();
        state.session_id = Some("s1".to_string());
        let d = decide(&config(), &state, obs("s2"), now());
        assert_eq!(d.kind, Kind::ForeignSession);
        assert!(d.state.is_none() && d.prompt.is_none() && !d.teardown);
        let mut bound = config();
        bound.session = Some("s9".to_string());
        assert_eq!(
            decide(&bound, &LoopState::fresh(), obs("s1"), now()).kind,
            Kind::ForeignSession
        );
    }

    fn held_by(session: &str, heartbeat_secs_ago: i64, alive: bool) -> Observed {
        observe(
            LockRecord {
                owner: owner_tag(session),
                pid: Some(7),
                host: "h".to_string(),
                renewed_at: crate::time::format_time(
                    now() - chrono::Duration::seconds(heartbeat_secs_ago),
                ),
            },
            now(),
            Duration::from_secs(300),
            "h",
            |_| alive,
        )
    }

    /// Seed 004's takeover, narrowed: stale heartbeat and a gone process, both.
    #[test]
    fn a_session_takes_over_only_a_stale_lock_whose_process_is_gone() {
        let mut state = LoopState::fresh();
        state.session_id = Some("old".to_string());
        let cfg = config();
        for (age, alive, taken) in [
            (301, false, true),
            (301, true, false),
            (10, false, false),
            (10, true, false),
        ] {
            let held = held_by("old", age, alive);
            assert_eq!(
                takeover(&cfg, &state, "new", Some(&held)).is_some(),
                taken,
                "age {age} alive {alive}"
            );
            assert_eq!(foreign(&cfg, &state, "new", Some(&held)).is_none(), taken);
        }
        // Another owner's stale lock, no lock at all, or a loop bound by --session: never.
        assert!(takeover(&cfg, &state, "new", Some(&held_by("ops", 301, false))).is_none());
        assert!(takeover(&cfg, &state, "new", None).is_none());
        let mut pinned = cfg.clone();
        pinned.session = Some("old".to_string());
        assert!(takeover(&pinned, &state, "new", Some(&held_by("old", 301, false))).is_none());
        // The decision rebinds and says so.
        let mut o = obs("new");
        o.took_over = Some("old".to_string());
        let d = decide(&cfg, &state, o, now());
        assert_eq!(d.kind, Kind::Continue);
        assert!(
            d.message.contains("taken over from session old"),
            "{}",
            d.message
        );
        assert_eq!(d.state.unwrap().session_id.as_deref(), Some("new"));
    }

    #[test]
    fn a_live_foreign_lock_stands_aside() {
        let holder = observe(
            LockRecord {
                owner: "ops".to_string(),
                pid: Some(1),
                host: "h".to_string(),
                renewed_at: crate::time::format_time(now()),
            },
            now(),
            Duration::from_secs(300),
            "h",
            |_| true,
        );
        let mut o = obs("s1");
        o.lock_conflict = Some(holder);
        let d = decide(&config(), &LoopState::fresh(), o, now());
        assert_eq!(d.kind, Kind::LockConflict);
        assert!(d.message.contains("ops"));
    }

    #[test]
    fn the_sentinel_ends_the_loop() {
        let mut o = obs("s1");
        o.completion = Some(Found::Transcript);
        let d = decide(&config(), &LoopState::fresh(), o, now());
        assert_eq!(d.kind, Kind::Done);
        assert!(d.teardown);
        assert_eq!(d.state.unwrap().ended.unwrap().outcome, "done");
    }

    #[test]
    fn budgets_end_the_loop_and_an_unmeasurable_one_pauses_it() {
        let mut cfg = config();
        cfg.budget = Some(100);
        let mut o = obs("s1");
        o.tokens_added = Usage {
            input: 60,
            output: 40,
            ..Usage::default()
        };
        assert_eq!(
            decide(&cfg, &LoopState::fresh(), o, now()).kind,
            Kind::BudgetExhausted
        );
        let mut o = obs("s1");
        o.transcript_problem = Some("gone".to_string());
        let d = decide(&cfg, &LoopState::fresh(), o, now());
        assert_eq!(d.kind, Kind::Paused);
        assert!(d.state.is_none());
    }

    #[test]
    fn idle_turns_end_the_loop_before_claude_codes_block_cap() {
        let cfg = config();
        let mut state = LoopState::fresh();
        for turn in 1..=3 {
            let mut o = obs("s1");
            o.tool_uses = Some(0);
            let d = decide(&cfg, &state, o, now());
            if turn < 3 {
                assert_eq!(d.kind, Kind::Continue);
            } else {
                assert_eq!(d.kind, Kind::Idle);
            }
            state = d.state.unwrap();
        }
    }

    #[test]
    fn a_task_that_routes_to_stop_ends_and_an_unknown_prompt_pauses() {
        let mut o = obs("s1");
        o.next = Ok(Next::Stop("routes to (stop)".to_string()));
        assert_eq!(
            decide(&config(), &LoopState::fresh(), o, now()).kind,
            Kind::TaskStopped
        );
        let mut o = obs("s1");
        o.next = Err("invalid signal".to_string());
        let d = decide(&config(), &LoopState::fresh(), o, now());
        assert_eq!(d.kind, Kind::Paused);
        assert!(!d.teardown && d.prompt.is_none());
        assert_eq!(d.state.unwrap().iteration, 1);
    }

    /// Item 8: Claude Code 2.1.332 overrides the 9th consecutive block; the loop ends itself
    /// at that Stop instead, and a turn with a tool call restarts the count.
    #[test]
    fn the_loop_ends_itself_at_the_block_claude_code_would_override() {
        let mut cfg = config();
        cfg.max_iterations = 100;
        cfg.max_idle = 0;
        let mut state = LoopState::fresh();
        for stop in 1..=9u64 {
            let mut o = obs("s1");
            o.tool_uses = Some(if stop == 3 { 1 } else { 0 });
            let d = decide(&cfg, &state, o, now());
            state = d.state.unwrap();
            assert_eq!(d.kind, Kind::Continue, "stop {stop}");
        }
        // Blocks since the tool turn (stop 3, block 1): stops 3..=9 are blocks 1..=7.
        assert_eq!(state.stop_blocks, 7);
        let mut o = obs("s1");
        o.tool_uses = Some(0);
        state = decide(&cfg, &state, o, now()).state.unwrap();
        assert_eq!(state.stop_blocks, 8);
        let mut o = obs("s1");
        o.tool_uses = Some(0);
        let d = decide(&cfg, &state, o, now());
        assert_eq!(d.kind, Kind::BlockCap);
        assert!(d.teardown && d.prompt.is_none());
        assert!(d.message.contains("this would be block 9"), "{}", d.message);
        // No cap (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=0): it goes on.
        let mut o = obs("s1");
        o.tool_uses = Some(0);
        o.block_cap = None;
        assert_eq!(decide(&cfg, &state, o, now()).kind, Kind::Continue);
        assert_eq!(block_cap(None), Some(8));
        assert_eq!(block_cap(Some("0")), None);
        assert_eq!(block_cap(Some("20")), Some(20));
        assert_eq!(block_cap(Some("lots")), Some(8));
    }

    #[test]
    fn an_override_claude_code_made_ends_the_loop() {
        let mut o = obs("s1");
        o.block_override = Some(9);
        let d = decide(&config(), &LoopState::fresh(), o, now());
        assert_eq!(d.kind, Kind::Overridden);
        assert!(d.teardown);
        assert_eq!(d.state.unwrap().ended.unwrap().outcome, "overridden");
    }

    /// Item 7: the budget counts the turn that just ended, its final message included when
    /// the transcript does not show it yet (a lower bound).
    #[test]
    fn the_budget_counts_the_final_message_the_transcript_lags_behind() {
        let mut cfg = config();
        cfg.budget = Some(3000);
        cfg.max_iterations = 100;
        let turn = Usage {
            input: 1200,
            output: 42,
            ..Usage::default()
        };
        // Each Stop sees the previous turn's message (the lag) and estimates its own.
        let mut state = LoopState::fresh();
        let mut kinds = Vec::new();
        for stop in 1..=4 {
            let mut o = obs("s1");
            if stop > 1 {
                o.tokens_added = turn;
                o.tokens_pending = pending_estimate(true, &turn, false, None);
            }
            let d = decide(&cfg, &state, o, now());
            kinds.push(d.kind);
            if d.teardown {
                break;
            }
            state = d.state.unwrap();
        }
        assert_eq!(
            kinds,
            [Kind::Continue, Kind::Continue, Kind::BudgetExhausted],
            "3 turns of 1242 tokens reach 3000"
        );
        assert_eq!(pending_estimate(false, &turn, false, None), 0);
        assert_eq!(
            pending_estimate(true, &turn, true, None),
            0,
            "compacted: no bound"
        );
        assert_eq!(pending_estimate(true, &turn, true, Some(900)), 900);
        assert_eq!(
            pending_estimate(true, &Usage::default(), false, Some(1242)),
            1242
        );
    }

    #[test]
    fn three_compactions_in_one_turn_end_the_loop() {
        let mut o = obs("s1");
        o.compactions = 2;
        let d = decide(&config(), &LoopState::fresh(), o, now());
        assert_eq!(d.kind, Kind::Continue);
        let mut o = obs("s1");
        o.compactions = 3;
        let d = decide(&config(), &LoopState::fresh(), o, now());
        assert_eq!(d.kind, Kind::CompactionLimit);
        assert!(
            d.message.contains("context budget insufficient"),
            "{}",
            d.message
        );
    }

    proptest! {
        /// Whatever a session observes, the loop never blocks more than max_iterations - 1
        /// times, iterations only grow, and tokens never go back.
        #[test]
        fn the_loop_is_bounded(
            max in 1u64..30,
            idle in 0u64..5,
            turns in proptest::collection::vec((0usize..3, 0u64..1000, any::<bool>()), 1..80),
        ) {
            let mut cfg = config();
            cfg.max_iterations = max;
            cfg.max_idle = idle;
            let mut state = LoopState::fresh();
            let mut blocks = 0u64;
            for (tools, tokens, done) in turns {
                let mut o = obs("s1");
                o.tool_uses = Some(tools);
                o.tokens_added = Usage { output: tokens, ..Usage::default() };
                o.completion = done.then_some(Found::LastMessage).filter(|_| tokens % 7 == 0);
                let d = decide(&cfg, &state, o, now());
                if let Some(next) = &d.state {
                    prop_assert!(next.iteration > state.iteration);
                    prop_assert!(next.tokens.total() >= state.tokens.total());
                }
                if d.kind == Kind::Continue {
                    blocks += 1;
                }
                if d.teardown {
                    break;
                }
                state = d.state.unwrap();
            }
            prop_assert!(blocks < max);
        }
    }
}
