//! The quota governor: many sessions on one subscription account share its usage windows, so
//! before a run starts a step (a dispatch) or resumes after a limit, it asks for a *permit*
//! for its account. One pure decision, [`permit`]`(account, fleet, asker, options, now)`:
//!
//! - **Pace stop.** No new step starts when the 5-hour window is at or above `--pace-stop`
//!   (95 %), or when its projected use would cross it: the used share, plus the account's
//!   recent cost per step (learned from the windows' movement between steps, [`observe`]) for
//!   every step the reading has not counted and this one. A reading is as of its time: a
//!   step in flight at any moment since then (one in flight now, or one that ended after the
//!   reading) spent tokens the reading does not show — the status line lags the server's
//!   count by a step or two, and the live tier's run 2 hit the limit when only the steps in
//!   flight were counted. The run waits (`quota-paced`, a legitimate wait: the timeout clock
//!   is paused) until the window resets.
//! - **Release at a reset.** While any run of the account waits (paced or on a usage limit),
//!   the permits of waiting runs are releases: handed out in priority order (`run start --priority`, then who
//!   waited longest), at most `--resume-burst` per minute, so the new window is not spent in
//!   its first minute. A session that resumed by itself (Claude Code continues on its own
//!   after a reset) counts as released ([`self_resumed`]).
//! - **Weekly reserve.** With `--weekly-reserve` (10 %) or less of the 7-day window left,
//!   only runs with a priority above `--weekly-priority` start steps; the others wait for
//!   the weekly reset, and the account is escalated once (not once per run).
//!
//! The account's windows are the freshest reading from any of its sessions, each window with
//! its source (status line, StopFailure, banner) and when it was read. The account's state
//! ([`Account`]) lives in the registry beside the runs; the grant of a permit is stored in
//! the same transaction as the dispatch or resume record it allows
//! ([`crate::supervise::store::Registry::record`]), with the decision taken again on the
//! stored state, so two hosts never spend the same permit.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::time::{Time, format_time, plus};

/// Defaults of the flags.
pub const DEFAULT_PACE_STOP: u8 = 95;
pub const DEFAULT_RESUME_BURST: u32 = 2;
pub const DEFAULT_WEEKLY_RESERVE: u8 = 10;
pub const DEFAULT_WEEKLY_PRIORITY: i32 = 0;
/// The burst is counted over this window.
pub const BURST_WINDOW: Duration = Duration::from_secs(60);
/// The account the runs of `run start` without `--account` belong to.
pub const DEFAULT_ACCOUNT: &str = "default";
/// How fast the learned cost per step follows new samples (the weight of the newest).
const LEARNING_RATE: f64 = 0.5;

/// How the governor paces (`run tick`/`run watch` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// `--no-governor` turns it off: every ask is granted.
    pub enabled: bool,
    /// `--pace-stop`, percent of the 5-hour window.
    pub pace_stop: u8,
    /// `--resume-burst`: releases per minute while runs wait.
    pub resume_burst: u32,
    /// `--weekly-reserve`, percent of the 7-day window kept for priority runs.
    pub weekly_reserve: u8,
    /// `--weekly-priority`: runs with a priority above it use the reserve.
    pub weekly_priority: i32,
}

impl Options {
    pub const DEFAULT: Options = Options {
        enabled: true,
        pace_stop: DEFAULT_PACE_STOP,
        resume_burst: DEFAULT_RESUME_BURST,
        weekly_reserve: DEFAULT_WEEKLY_RESERVE,
        weekly_priority: DEFAULT_WEEKLY_PRIORITY,
    };
}

impl Default for Options {
    fn default() -> Self {
        Options::DEFAULT
    }
}

/// Which window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowKind {
    FiveHour,
    SevenDay,
}

impl WindowKind {
    pub const ALL: [WindowKind; 2] = [WindowKind::FiveHour, WindowKind::SevenDay];

    pub fn as_str(self) -> &'static str {
        match self {
            WindowKind::FiveHour => "five_hour",
            WindowKind::SevenDay => "seven_day",
        }
    }
}

/// Where a reading came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadingSource {
    /// Claude Code's status line (`rate_limits`): the used share and the reset to the second.
    Statusline,
    /// A StopFailure hook record of a usage limit: the window is used up.
    StopFailure,
    /// The limit banner on the screen: the window is used up.
    Banner,
}

impl ReadingSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadingSource::Statusline => "statusline",
            ReadingSource::StopFailure => "stop-failure",
            ReadingSource::Banner => "banner",
        }
    }
}

/// One window as one session saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// Percent of the window used (100: the limit is hit).
    pub used: f64,
    #[serde(with = "crate::time::stamp")]
    pub resets_at: Time,
    pub source: ReadingSource,
    /// When the session saw it.
    #[serde(with = "crate::time::stamp")]
    pub at: Time,
    /// The run whose session it came from.
    pub session: String,
}

impl Reading {
    /// The used share now: a window whose reset has passed is a new, unread window.
    pub fn used_at(&self, now: Time) -> f64 {
        if now >= self.resets_at {
            0.0
        } else {
            self.used
        }
    }
}

/// Where the cost learning last looked: the 5-hour window's used share after `steps` steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub used: f64,
    pub steps: u64,
    #[serde(with = "crate::time::stamp")]
    pub resets_at: Time,
}

/// What the registry keeps per account (one JSON column of its row).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Account {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub five_hour: Option<Reading>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seven_day: Option<Reading>,
    /// The learned cost of one step, in percent of the 5-hour window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_step: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// Steps its runs completed (signals seen).
    pub steps: u64,
    /// When steps ended that the freshest 5-hour reading may not have counted (they ended
    /// after it was read); forgotten once a fresher reading comes.
    #[serde(with = "stamps", skip_serializing_if = "Vec::is_empty")]
    pub ended: Vec<Time>,
    /// Releases (permits handed out while runs waited, and sessions that resumed by
    /// themselves) in the last [`BURST_WINDOW`].
    #[serde(with = "stamps")]
    pub releases: Vec<Time>,
    /// The weekly reset the account was escalated for (once per account and reset).
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub weekly_escalated: Option<Time>,
}

impl Account {
    pub fn window(&self, kind: WindowKind) -> Option<&Reading> {
        match kind {
            WindowKind::FiveHour => self.five_hour.as_ref(),
            WindowKind::SevenDay => self.seven_day.as_ref(),
        }
    }

    fn window_mut(&mut self, kind: WindowKind) -> &mut Option<Reading> {
        match kind {
            WindowKind::FiveHour => &mut self.five_hour,
            WindowKind::SevenDay => &mut self.seven_day,
        }
    }

    /// When the 5-hour reading stops counting: steps that ended after this time spent
    /// tokens it does not show. Its time, or the reset when the window has reset since (a
    /// new, unread window: the steps that ended before the reset were the old window's).
    fn counted_until(&self, now: Time) -> Option<Time> {
        let window = self.five_hour.as_ref()?;
        Some(if now >= window.resets_at {
            window.at.max(window.resets_at)
        } else {
            window.at
        })
    }

    /// Steps of the account that ended after the 5-hour reading was taken (the steps in
    /// flight now are the fleet's, counted beside these), `also` (the asker's own step that
    /// ended this tick, not stored yet) included.
    pub fn ended_unseen(&self, also: Option<Time>, now: Time) -> usize {
        let Some(since) = self.counted_until(now) else {
            return 0;
        };
        self.ended
            .iter()
            .chain(also.as_ref())
            .filter(|t| **t > since)
            .count()
    }

    /// Releases within the burst window before `now`.
    pub fn recent_releases(&self, now: Time) -> usize {
        self.releases
            .iter()
            .filter(|t| **t <= now && plus(**t, BURST_WINDOW) > now)
            .count()
    }
}

mod stamps {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::time::Time;

    #[derive(Serialize, Deserialize)]
    struct Stamp(#[serde(with = "crate::time::stamp")] Time);

    pub fn serialize<S: Serializer>(times: &[Time], s: S) -> Result<S::Ok, S::Error> {
        let stamps: Vec<Stamp> = times.iter().map(|t| Stamp(*t)).collect();
        stamps.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Time>, D::Error> {
        Ok(Vec::<Stamp>::deserialize(d)?
            .into_iter()
            .map(|Stamp(t)| t)
            .collect())
    }
}

/// What happened to an account in one tick, applied to its stored state in one step.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A session saw a window.
    Read(WindowKind, Reading),
    /// A run of the account completed a step (a new signal), at this time.
    StepEnded(Time),
    /// A waiting session went back to work by itself: it counts as released.
    SelfResumed(Time),
    /// A person was told the weekly reserve is reached (for this weekly reset).
    WeeklyEscalated(Time),
}

/// Fold a reading in: the freshest reading of each window wins; a 5-hour reading after
/// completed steps teaches the cost per step.
pub fn observe(account: &mut Account, kind: WindowKind, reading: Reading) {
    let slot = account.window_mut(kind);
    if slot.as_ref().is_some_and(|old| old.at > reading.at) {
        return;
    }
    *slot = Some(reading.clone());
    if kind != WindowKind::FiveHour {
        return;
    }
    // The steps this reading counted: those that ended after it was taken are not in it (a
    // lagging reading would otherwise teach a cost too low).
    let unseen = account.ended.iter().filter(|t| **t > reading.at).count() as u64;
    let steps = account.steps.saturating_sub(unseen);
    match &account.baseline {
        Some(base) if base.resets_at == reading.resets_at => {
            if steps > base.steps && reading.used >= base.used {
                let sample = (reading.used - base.used) / (steps - base.steps) as f64;
                account.cost_per_step = Some(match account.cost_per_step {
                    Some(cost) => cost + LEARNING_RATE * (sample - cost),
                    None => sample,
                });
                account.baseline = Some(Baseline {
                    used: reading.used,
                    steps,
                    resets_at: reading.resets_at,
                });
            } else if reading.used < base.used {
                // A reading older than the baseline's window state (out of order): start over.
                account.baseline = Some(Baseline {
                    used: reading.used,
                    steps,
                    resets_at: reading.resets_at,
                });
            }
        }
        _ => {
            account.baseline = Some(Baseline {
                used: reading.used,
                steps,
                resets_at: reading.resets_at,
            })
        }
    }
}

/// Apply one tick's events to the stored state. Returns whether a weekly escalation was the
/// first for its reset (only the first is announced).
pub fn apply(account: &mut Account, events: &[Event], now: Time) -> bool {
    let mut first_weekly = false;
    for event in events {
        match event {
            Event::Read(kind, reading) => observe(account, *kind, reading.clone()),
            Event::StepEnded(at) => {
                account.steps = account.steps.saturating_add(1);
                account.ended.push(*at);
            }
            Event::SelfResumed(at) => release(account, *at),
            Event::WeeklyEscalated(reset) => {
                if account.weekly_escalated != Some(*reset) {
                    account.weekly_escalated = Some(*reset);
                    first_weekly = true;
                }
            }
        }
    }
    forget_old_releases(account, now);
    forget_seen_steps(account);
    first_weekly
}

/// How many unseen step ends are kept at most (a reading a day old with steps ending every
/// second; past it the oldest are dropped, which only makes the projection less careful).
const MAX_ENDED: usize = 4096;

/// Step ends the freshest 5-hour reading was taken after are counted in it.
fn forget_seen_steps(account: &mut Account) {
    if let Some(window) = &account.five_hour {
        let seen = window.at;
        account.ended.retain(|t| *t > seen);
    }
    account.ended.sort();
    let extra = account.ended.len().saturating_sub(MAX_ENDED);
    account.ended.drain(..extra);
}

/// A session that left its wait by itself counts as one release.
pub fn self_resumed(account: &mut Account, now: Time) {
    release(account, now);
}

fn release(account: &mut Account, at: Time) {
    account.releases.push(at);
    account.releases.sort();
}

fn forget_old_releases(account: &mut Account, now: Time) {
    account.releases.retain(|t| plus(*t, BURST_WINDOW) > now);
}

/// The governor's state of one run (one JSON column of its row).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunState {
    /// When the permit of its current step (or resume) was granted; held until the step
    /// ends (its next signal) or the run ends.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::time::stamp::option"
    )]
    pub permit: Option<Time>,
}

/// A run of the account that waits to be released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiter {
    pub session: String,
    pub priority: i32,
    /// When its wait began.
    pub since: Time,
}

/// The account's other runs, as the governor needs them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fleet {
    /// Sessions that hold a permit: a step started with one and not yet ended.
    pub in_flight: Vec<String>,
    /// Runs waiting for a release (paced, or on a usage limit).
    pub waiting: Vec<Waiter>,
}

/// Who asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asker {
    pub session: String,
    pub priority: i32,
    /// What for.
    pub ask: Ask,
    /// When the run began to wait, if it waits (paced or on a usage limit).
    pub waiting_since: Option<Time>,
    /// When its own step ended, if it ended in this tick: the account's stored state learns
    /// of it only after the tick, but the reading may not have counted it.
    pub ended: Option<Time>,
}

/// What a permit is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ask {
    /// A new step (dispatch mode).
    Dispatch,
    /// Typing the resume text after a usage limit or a pace.
    Resume,
}

/// Why a run waits for the governor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hold {
    /// The 5-hour window is at `--pace-stop`, or the step would cross it.
    PaceStop,
    /// Releases after a reset: others go first, or this minute's burst is spent.
    Burst,
    /// The weekly reserve is for priority runs.
    WeeklyReserve,
}

impl Hold {
    pub fn as_str(self) -> &'static str {
        match self {
            Hold::PaceStop => "pace-stop",
            Hold::Burst => "burst",
            Hold::WeeklyReserve => "weekly-reserve",
        }
    }
}

/// The governor's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Permit {
    /// Go. `release`: it is a release (counted in the burst).
    Grant { release: bool },
    /// Wait until `until` (the reset, or the next free release slot), then ask again.
    Wait {
        hold: Hold,
        until: Time,
        /// The window's reset the wait is for.
        reset: Time,
        /// Waiting runs that go before it (for the wait's maximum: [`max_wait`]).
        ahead: usize,
        reason: String,
        /// The weekly reserve was reached and this account was not escalated for it yet.
        escalate: bool,
    },
}

impl Permit {
    pub fn granted(&self) -> bool {
        matches!(self, Permit::Grant { .. })
    }
}

/// The decision. Pure: the same account, fleet, asker, options and clock give the same
/// answer. `fleet` may list the asker; it is left out. In order: the weekly reserve (it
/// outlasts any 5-hour reset), the 5-hour pace stop, then the burst that paces releases
/// of waiting runs.
pub fn permit(
    account: &Account,
    fleet: &Fleet,
    asker: &Asker,
    options: &Options,
    now: Time,
) -> Permit {
    if !options.enabled {
        return Permit::Grant { release: false };
    }
    let ahead = queue_place(fleet, asker, now);
    if let Some(wait) = weekly_reserve(account, asker, options, ahead, now) {
        return wait;
    }
    if let Some(wait) = pace_stop(account, fleet, asker, options, ahead, now) {
        return wait;
    }
    // A run that does not wait goes on: the burst paces releases of waiting runs, not the
    // later steps of a run released already (which would otherwise queue again behind those
    // still waiting, and the account would start at most --resume-burst steps a minute until
    // every run was released, spending a fraction of its window; bench/quota.sh found it).
    if asker.waiting_since.is_none() {
        return Permit::Grant { release: false };
    }
    burst(account, options, ahead, now)
}

/// How many waiting runs go before the asker, in release order: priority, then who waited
/// longest (the asker waits from now when it did not wait yet).
fn queue_place(fleet: &Fleet, asker: &Asker, now: Time) -> usize {
    let mut queue: Vec<Waiter> = fleet
        .waiting
        .iter()
        .filter(|w| w.session != asker.session)
        .cloned()
        .collect();
    queue.push(Waiter {
        session: asker.session.clone(),
        priority: asker.priority,
        since: asker.waiting_since.unwrap_or(now),
    });
    queue.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then(a.since.cmp(&b.since))
            .then(a.session.cmp(&b.session))
    });
    queue
        .iter()
        .position(|w| w.session == asker.session)
        .expect("the asker is queued")
}

/// The weekly window at or below its reserve holds runs of a priority at or below
/// `--weekly-priority` until its reset (escalated once per reset).
fn weekly_reserve(
    account: &Account,
    asker: &Asker,
    options: &Options,
    ahead: usize,
    now: Time,
) -> Option<Permit> {
    let week = account.seven_day.as_ref()?;
    let left = 100.0 - week.used_at(now);
    let reserved =
        left <= f64::from(options.weekly_reserve) && asker.priority <= options.weekly_priority;
    if !reserved {
        return None;
    }
    Some(Permit::Wait {
        hold: Hold::WeeklyReserve,
        until: week.resets_at,
        reset: week.resets_at,
        ahead,
        reason: format!(
            "the weekly window has {left:.0}% left; the reserve (--weekly-reserve {}%) is for runs with a priority above {}; waiting for its reset at {}",
            options.weekly_reserve,
            options.weekly_priority,
            format_time(week.resets_at)
        ),
        escalate: account.weekly_escalated != Some(week.resets_at),
    })
}

/// The 5-hour window used to `--pace-stop`, or projected past it by the steps this one
/// would add to those not in the reading yet (in flight now, or ended after it was read),
/// holds the run until the window's reset.
fn pace_stop(
    account: &Account,
    fleet: &Fleet,
    asker: &Asker,
    options: &Options,
    ahead: usize,
    now: Time,
) -> Option<Permit> {
    let window = account.five_hour.as_ref()?;
    let in_flight = fleet
        .in_flight
        .iter()
        .filter(|s| **s != asker.session)
        .count();
    let used = window.used_at(now);
    let cost = account.cost_per_step.unwrap_or(0.0).max(0.0);
    let unseen = in_flight + account.ended_unseen(asker.ended, now);
    let steps = match asker.ask {
        Ask::Dispatch => unseen as f64 + 1.0,
        // A resume finishes a step already counted in the window's use.
        Ask::Resume => unseen as f64,
    };
    let projected = used + cost * steps;
    let stop = f64::from(options.pace_stop);
    let paced = used >= stop || projected > stop;
    if !paced {
        return None;
    }
    let reason = if used >= stop {
        format!(
            "the 5-hour window is {used:.0}% used (--pace-stop {}%)",
            options.pace_stop
        )
    } else {
        format!(
            "the 5-hour window is {used:.0}% used and {steps} step(s) at {cost:.1}% each would take it to {projected:.0}% (--pace-stop {}%)",
            options.pace_stop
        )
    };
    Some(Permit::Wait {
        hold: Hold::PaceStop,
        until: window.resets_at,
        reset: window.resets_at,
        ahead,
        reason: format!(
            "{reason}; paced until its reset at {}",
            format_time(window.resets_at)
        ),
        escalate: false,
    })
}

/// Releases: while runs of the account wait, permits go out in queue order, at most
/// `--resume-burst` a minute; the rest wait for the next slot (when the oldest release of
/// this minute leaves the window, or a minute from now when nothing was released: a burst
/// of 0 waits a minute at a time).
fn burst(account: &Account, options: &Options, ahead: usize, now: Time) -> Permit {
    let recent = account.recent_releases(now);
    let free = (options.resume_burst as usize).saturating_sub(recent);
    if ahead < free {
        return Permit::Grant { release: true };
    }
    let slot = account
        .releases
        .iter()
        .filter(|t| **t <= now && plus(**t, BURST_WINDOW) > now)
        .min()
        .map_or(plus(now, BURST_WINDOW), |t| plus(*t, BURST_WINDOW));
    let reset = account.five_hour.as_ref().map_or(now, |w| w.resets_at);
    Permit::Wait {
        hold: Hold::Burst,
        until: slot,
        reset,
        ahead,
        reason: format!(
            "released in priority order, at most {} a minute (--resume-burst): {ahead} run(s) go first, {recent} released this minute; next slot at {}",
            options.resume_burst,
            format_time(slot)
        ),
        escalate: false,
    }
}

/// A granted permit changes the account: a release is counted in the burst.
pub fn grant(account: &mut Account, permit: &Permit, now: Time) {
    if let Permit::Grant { release: true } = permit {
        release(account, now);
    }
    forget_old_releases(account, now);
}

/// How long a paced run may wait: as a usage limit's wait (its reset, the resume margin and
/// the resume check), plus a minute for each burst of releases ahead of it.
pub fn max_wait(reset: Time, margin: Duration, check: Duration, ahead: usize, burst: u32) -> Time {
    let bursts = ahead.div_ceil(burst.max(1) as usize) as u64 + 1;
    plus(
        plus(plus(reset, margin), check),
        BURST_WINDOW.saturating_mul(bursts as u32),
    )
}

#[cfg(test)]
mod tests;
