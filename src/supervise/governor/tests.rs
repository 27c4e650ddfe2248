use super::*;
use chrono::DateTime;
use proptest::prelude::*;

fn at(secs: i64) -> Time {
    DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
}

fn reading(used: f64, resets: i64, seen: i64) -> Reading {
    Reading {
        used,
        resets_at: at(resets),
        source: ReadingSource::Statusline,
        at: at(seen),
        session: "s".into(),
    }
}

fn asker(session: &str, priority: i32, ask: Ask, waiting: Option<i64>) -> Asker {
    Asker {
        session: session.into(),
        priority,
        ask,
        waiting_since: waiting.map(at),
        ended: None,
    }
}

fn account(used: f64, cost: Option<f64>) -> Account {
    Account {
        five_hour: Some(reading(used, 3600, 0)),
        cost_per_step: cost,
        ..Account::default()
    }
}

#[test]
fn a_window_at_the_pace_stop_paces_until_its_reset() {
    let a = account(95.0, None);
    let p = permit(
        &a,
        &Fleet::default(),
        &asker("x", 0, Ask::Dispatch, None),
        &Options::DEFAULT,
        at(10),
    );
    match p {
        Permit::Wait {
            hold, until, reset, ..
        } => {
            assert_eq!(hold, Hold::PaceStop);
            assert_eq!((until, reset), (at(3600), at(3600)));
        }
        other => panic!("{other:?}"),
    }
    // Below it, with nothing learned yet, a step starts.
    let p = permit(
        &account(94.0, None),
        &Fleet::default(),
        &asker("x", 0, Ask::Dispatch, None),
        &Options::DEFAULT,
        at(10),
    );
    assert_eq!(p, Permit::Grant { release: false });
}

#[test]
fn the_projection_counts_every_step_in_flight() {
    let a = account(80.0, Some(4.0));
    let fleet = |n: usize| Fleet {
        in_flight: (0..n).map(|i| format!("r{i}")).collect(),
        waiting: vec![],
    };
    let ask = asker("x", 0, Ask::Dispatch, None);
    // 80 + 4 × (3 + 1) = 96 > 95: paced; with two in flight, 92: go.
    assert!(!permit(&a, &fleet(3), &ask, &Options::DEFAULT, at(1)).granted());
    assert!(permit(&a, &fleet(2), &ask, &Options::DEFAULT, at(1)).granted());
    // The asker's own permit is not counted twice.
    let mut own = fleet(2);
    own.in_flight.push("x".into());
    assert!(permit(&a, &own, &ask, &Options::DEFAULT, at(1)).granted());
}

#[test]
fn steps_that_ended_after_the_reading_are_counted_as_unseen() {
    // The reading (70 %, taken at 10) lags: two steps ended after it, one before it.
    let mut a = account(70.0, Some(10.0));
    a.five_hour = Some(reading(70.0, 3600, 10));
    apply(
        &mut a,
        &[
            Event::StepEnded(at(5)),
            Event::StepEnded(at(20)),
            Event::StepEnded(at(30)),
        ],
        at(30),
    );
    // The one the reading counted is forgotten.
    assert_eq!(a.ended, vec![at(20), at(30)]);
    let ask = asker("x", 0, Ask::Dispatch, None);
    // 70 + 10 × (2 unseen + 1) = 100 > 95: paced (counting only the steps in flight, 80: go).
    match permit(&a, &Fleet::default(), &ask, &Options::DEFAULT, at(31)) {
        Permit::Wait { hold, reason, .. } => {
            assert_eq!(hold, Hold::PaceStop);
            assert!(reason.contains("3 step(s)"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // A fresher reading counts them: 80 + 10 × 1 = 90, a step starts.
    observe(&mut a, WindowKind::FiveHour, reading(80.0, 3600, 40));
    apply(&mut a, &[], at(40));
    assert!(a.ended.is_empty());
    assert!(permit(&a, &Fleet::default(), &ask, &Options::DEFAULT, at(41)).granted());
    // The asker's own step, ended this tick and not stored yet, counts too: 80 + 10 × 2.
    let own = Asker {
        ended: Some(at(41)),
        ..ask.clone()
    };
    assert!(!permit(&a, &Fleet::default(), &own, &Options::DEFAULT, at(41)).granted());
    // After the window's reset, steps that ended before the reset are the old window's; those
    // after it spend the new, unread one.
    let mut b = account(90.0, Some(10.0));
    apply(
        &mut b,
        &[Event::StepEnded(at(3000)), Event::StepEnded(at(3700))],
        at(3700),
    );
    assert_eq!(b.ended_unseen(None, at(3500)), 2);
    assert_eq!(b.ended_unseen(None, at(3701)), 1);
}

#[test]
fn after_the_reset_releases_go_in_priority_order_at_most_the_burst_a_minute() {
    // The window was full; it reset at 3600.
    let mut a = account(100.0, Some(5.0));
    let fleet = Fleet {
        in_flight: vec![],
        waiting: vec![
            Waiter {
                session: "low".into(),
                priority: 0,
                since: at(100),
            },
            Waiter {
                session: "high".into(),
                priority: 5,
                since: at(200),
            },
            Waiter {
                session: "old".into(),
                priority: 0,
                since: at(50),
            },
        ],
    };
    let now = at(3601);
    let ask = |s: &str, p| asker(s, p, Ask::Resume, Some(100));
    // high goes first, then old (waited longest); low waits for the next minute.
    let high = permit(&a, &fleet, &ask("high", 5), &Options::DEFAULT, now);
    assert_eq!(high, Permit::Grant { release: true });
    grant(&mut a, &high, now);
    let fleet2 = Fleet {
        waiting: fleet
            .waiting
            .iter()
            .filter(|w| w.session != "high")
            .cloned()
            .collect(),
        ..fleet.clone()
    };
    let old = permit(
        &a,
        &fleet2,
        &asker("old", 0, Ask::Resume, Some(50)),
        &Options::DEFAULT,
        now,
    );
    assert!(old.granted());
    grant(&mut a, &old, now);
    let low = permit(&a, &fleet2, &ask("low", 0), &Options::DEFAULT, at(3630));
    match low {
        Permit::Wait { hold, until, .. } => {
            assert_eq!(hold, Hold::Burst);
            assert_eq!(
                until,
                at(3661),
                "the next slot frees a minute after the first"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(permit(&a, &fleet2, &ask("low", 0), &Options::DEFAULT, at(3661)).granted());
}

#[test]
fn a_released_run_goes_on_while_others_still_wait_for_theirs() {
    // After the reset the burst of this minute is spent; "released" was released at 3601
    // and its step ended. Its next step is its own: granted, and not counted as a release.
    let mut a = account(2.0, Some(3.0));
    release(&mut a, at(3601));
    release(&mut a, at(3601));
    let fleet = Fleet {
        in_flight: vec![],
        waiting: vec![Waiter {
            session: "waiting".into(),
            priority: 5,
            since: at(100),
        }],
    };
    let next = asker("released", 0, Ask::Dispatch, None);
    assert_eq!(
        permit(&a, &fleet, &next, &Options::DEFAULT, at(3620)),
        Permit::Grant { release: false }
    );
    // The one still waiting waits for the next slot, whatever its priority.
    let waiting = asker("waiting", 5, Ask::Dispatch, Some(100));
    assert!(!permit(&a, &fleet, &waiting, &Options::DEFAULT, at(3620)).granted());
    // The pace stop still holds a run that does not wait.
    let full = account(96.0, Some(3.0));
    assert!(!permit(&full, &fleet, &next, &Options::DEFAULT, at(100)).granted());
}

#[test]
fn the_weekly_reserve_is_for_priority_runs_and_escalates_once_per_account() {
    let mut a = Account {
        seven_day: Some(reading(91.0, 86_400 * 3, 0)),
        ..Account::default()
    };
    let low = asker("low", 0, Ask::Dispatch, None);
    let high = asker("high", 1, Ask::Dispatch, None);
    assert!(permit(&a, &Fleet::default(), &high, &Options::DEFAULT, at(1)).granted());
    let Permit::Wait {
        hold,
        escalate,
        until,
        ..
    } = permit(&a, &Fleet::default(), &low, &Options::DEFAULT, at(1))
    else {
        panic!("not paced")
    };
    assert_eq!(hold, Hold::WeeklyReserve);
    assert_eq!(until, at(86_400 * 3));
    assert!(escalate);
    assert!(apply(&mut a, &[Event::WeeklyEscalated(until)], at(1)));
    // Another run of the account, another host: not escalated again.
    let again = permit(
        &a,
        &Fleet::default(),
        &asker("other", 0, Ask::Dispatch, None),
        &Options::DEFAULT,
        at(2),
    );
    assert!(matches!(
        again,
        Permit::Wait {
            escalate: false,
            ..
        }
    ));
    assert!(!apply(&mut a, &[Event::WeeklyEscalated(until)], at(2)));
}

#[test]
fn a_session_that_resumed_by_itself_counts_as_released() {
    let mut a = account(100.0, None);
    apply(&mut a, &[Event::SelfResumed(at(3601))], at(3601));
    apply(&mut a, &[Event::SelfResumed(at(3602))], at(3602));
    let fleet = Fleet {
        in_flight: vec![],
        waiting: vec![Waiter {
            session: "w".into(),
            priority: 0,
            since: at(10),
        }],
    };
    let p = permit(
        &a,
        &fleet,
        &asker("w", 0, Ask::Resume, Some(10)),
        &Options::DEFAULT,
        at(3610),
    );
    assert!(matches!(
        p,
        Permit::Wait {
            hold: Hold::Burst,
            ..
        }
    ));
}

#[test]
fn off_grants_everything() {
    let options = Options {
        enabled: false,
        ..Options::DEFAULT
    };
    let p = permit(
        &account(100.0, Some(50.0)),
        &Fleet::default(),
        &asker("x", 0, Ask::Dispatch, None),
        &options,
        at(1),
    );
    assert_eq!(p, Permit::Grant { release: false });
}

#[test]
fn the_cost_per_step_is_learned_from_the_windows_movement() {
    let mut a = Account::default();
    observe(&mut a, WindowKind::FiveHour, reading(10.0, 3600, 1));
    for (i, used) in [13.0, 16.0, 19.0].into_iter().enumerate() {
        apply(&mut a, &[Event::StepEnded(at(2))], at(2));
        observe(
            &mut a,
            WindowKind::FiveHour,
            reading(used, 3600, 2 + i as i64),
        );
    }
    assert_eq!(a.cost_per_step, Some(3.0));
    // An older reading never replaces a fresher one.
    observe(&mut a, WindowKind::FiveHour, reading(50.0, 3600, 0));
    assert_eq!(a.five_hour.as_ref().unwrap().used, 19.0);
    // A new window starts a new baseline; the cost learned stays.
    observe(&mut a, WindowKind::FiveHour, reading(1.0, 7200, 10));
    assert_eq!(a.baseline.as_ref().unwrap().resets_at, at(7200));
    assert_eq!(a.cost_per_step, Some(3.0));
}

#[test]
fn the_account_round_trips_as_json() {
    let mut a = account(42.5, Some(2.5));
    a.releases = vec![at(5), at(6)];
    a.weekly_escalated = Some(at(99));
    let text = serde_json::to_string(&a).unwrap();
    assert_eq!(serde_json::from_str::<Account>(&text).unwrap(), a);
    assert_eq!(
        serde_json::from_str::<Account>("{}").unwrap(),
        Account::default()
    );
}

/// One simulated run: idle (may ask), in a step until `until` costing `cost`, or waiting.
#[derive(Debug, Clone)]
struct Sim {
    session: String,
    priority: i32,
    step_until: Option<i64>,
    waiting_since: Option<i64>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// No dispatch is granted into a limit it could see coming: with the cost per step known,
    /// the window's use plus every step in flight never passes --pace-stop, so no step ever
    /// hits the limit mid-way.
    #[test]
    fn no_step_starts_into_the_limit(
        cost in 0.5f64..8.0,
        runs in 1usize..10,
        start in 0.0f64..100.0,
        order in proptest::collection::vec(0usize..10, 1..200),
    ) {
        let options = Options::DEFAULT;
        let mut a = account(start, Some(cost));
        let mut in_flight: Vec<String> = Vec::new();
        let mut used = start;
        for (i, pick) in order.into_iter().enumerate() {
            let session = format!("r{}", pick % runs);
            let now = at(i as i64);
            if in_flight.contains(&session) {
                // Its step ends: the cost shows in the window.
                in_flight.retain(|s| *s != session);
                used += cost;
                prop_assert!(used <= 100.0, "a step hit the limit mid-way: {used}");
                a.five_hour = Some(reading(used, 3600, i as i64));
                continue;
            }
            let fleet = Fleet { in_flight: in_flight.clone(), waiting: vec![] };
            let p = permit(&a, &fleet, &asker(&session, 0, Ask::Dispatch, None), &options, now);
            if p.granted() {
                prop_assert!(used + cost * (in_flight.len() as f64 + 1.0) <= f64::from(options.pace_stop) + 1e-9);
                in_flight.push(session);
            } else {
                prop_assert!(used + cost * (in_flight.len() as f64 + 1.0) > f64::from(options.pace_stop) - 1e-9);
            }
        }
    }

    /// No step starts into the limit when the readings lag: a reading is of the window as it
    /// was when it was taken, and the freshest one may be older than the steps that ended
    /// since (the status line lags the server's count by a step or two, and readings from
    /// different sessions arrive out of order). Every step costs `cost`, counted by the
    /// server when it ends; the governor must never let the steps in flight cross
    /// --pace-stop of what the server has counted.
    #[test]
    fn no_step_starts_into_the_limit_when_readings_lag(
        cost in 0.5f64..8.0,
        runs in 1usize..10,
        start in 0.0f64..60.0,
        order in proptest::collection::vec((0usize..10, 0u8..4, 0usize..8), 1..200),
    ) {
        let options = Options::DEFAULT;
        let stop = f64::from(options.pace_stop);
        let mut a = account(start, Some(cost));
        let mut in_flight: Vec<String> = Vec::new();
        let mut used = start;
        // The server's count after each moment (a reading taken then shows it).
        let mut history: Vec<(i64, f64)> = vec![(0, start)];
        for (i, (pick, what, back)) in order.into_iter().enumerate() {
            let now = i as i64 + 1;
            let session = format!("r{}", pick % runs);
            if what == 0 {
                // A reading arrives, taken `back` moments ago.
                let (seen, then) = history[history.len().saturating_sub(back + 1)];
                let mut r = reading(then, 3600, seen);
                r.session = session;
                apply(&mut a, &[Event::Read(WindowKind::FiveHour, r)], at(now));
            } else if in_flight.contains(&session) {
                // Its step ends: the server counts its cost.
                in_flight.retain(|s| *s != session);
                used += cost;
                prop_assert!(used <= 100.0, "a step hit the limit mid-way: {used}");
                apply(&mut a, &[Event::StepEnded(at(now))], at(now));
            } else {
                let fleet = Fleet { in_flight: in_flight.clone(), waiting: vec![] };
                let p = permit(&a, &fleet, &asker(&session, 0, Ask::Dispatch, None), &options, at(now));
                if p.granted() {
                    prop_assert!(
                        used + cost * (in_flight.len() as f64 + 1.0) <= stop + 1e-9,
                        "granted at a true use of {used} with {} in flight", in_flight.len()
                    );
                    in_flight.push(session);
                }
            }
            history.push((now, used));
        }
    }

    /// After a reset, waiting runs are released in priority order, never more than
    /// --resume-burst in any minute, and every waiting run is released in the end.
    #[test]
    fn releases_are_ordered_and_never_a_stampede(
        priorities in proptest::collection::vec(-2i32..3, 1..12),
        burst in 1u32..4,
        asks in proptest::collection::vec((0usize..12, 1i64..20), 1..300),
    ) {
        let options = Options { resume_burst: burst, ..Options::DEFAULT };
        let mut a = account(100.0, Some(3.0));
        let mut sims: Vec<Sim> = priorities.iter().enumerate().map(|(i, p)| Sim {
            session: format!("r{i}"),
            priority: *p,
            step_until: None,
            waiting_since: Some(i as i64),
        }).collect();
        let mut now = 3600;
        let mut released: Vec<(i64, usize)> = Vec::new();
        for (pick, dt) in asks {
            now += dt;
            let i = pick % sims.len();
            if sims[i].waiting_since.is_none() {
                continue;
            }
            let fleet = Fleet {
                in_flight: vec![],
                waiting: sims.iter().filter_map(|s| s.waiting_since.map(|since| Waiter {
                    session: s.session.clone(), priority: s.priority, since: at(since)
                })).collect(),
            };
            let me = &sims[i];
            let p = permit(&a, &fleet, &asker(&me.session, me.priority, Ask::Resume, me.waiting_since), &options, at(now));
            if p.granted() {
                // Nobody who goes before it is still waiting beyond this minute's free slots.
                let before = fleet.waiting.iter().filter(|w| w.session != me.session && (w.priority > me.priority || (w.priority == me.priority && (w.since, &w.session) < (at(me.waiting_since.unwrap()), &me.session)))).count();
                let recent = a.recent_releases(at(now));
                prop_assert!(before + recent < burst as usize);
                grant(&mut a, &p, at(now));
                released.push((now, i));
                sims[i].waiting_since = None;
                sims[i].step_until = Some(now + 30);
            }
        }
        // At most the burst in any minute.
        for (t, _) in &released {
            let in_minute = released.iter().filter(|(u, _)| *u >= *t && *u < t + 60).count();
            prop_assert!(in_minute <= burst as usize, "{} releases in the minute after {}", in_minute, t);
        }
    }

    /// The freshest reading of each window wins, whatever order readings arrive in.
    #[test]
    fn the_freshest_reading_wins(readings in proptest::collection::vec((0.0f64..100.0, 0i64..1000), 1..20)) {
        let mut a = Account::default();
        for (used, seen) in &readings {
            observe(&mut a, WindowKind::FiveHour, reading(*used, 3600, *seen));
        }
        let newest = readings.iter().map(|(_, s)| *s).max().unwrap();
        prop_assert_eq!(a.five_hour.as_ref().unwrap().at, at(newest));
    }
}
