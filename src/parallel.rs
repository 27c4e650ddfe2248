//! Work on many files with every core while the output keeps the arguments' order.
//!
//! `signal validate ./*.json` on 10,000 files is bound by reading, parsing and checking each
//! file, which are independent; the answers must still come out in the order of the
//! arguments, and memory must not grow with the number of files. The items are taken in
//! rounds of a few hundred per core: each core works through its share of the round, then the
//! round's results are handed on in order before the next round starts.

use std::num::NonZeroUsize;
use std::thread;

/// Items one core handles in a round: enough that starting the round's threads is noise,
/// few enough that the results held in memory stay small.
const PER_CORE: usize = 256;

/// Apply `work` to every item, on all cores when there are enough items, and give the results
/// to `take` in the items' order. Stops at the first error of `take`.
pub fn map_in_order<T, R, E>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    mut take: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    // Few items first: asking for the core count reads the cgroup files, which is more than a
    // single document costs.
    if items.len() < 2 * PER_CORE {
        return items.iter().try_for_each(|item| take(work(item)));
    }
    let cores = thread::available_parallelism().map_or(1, NonZeroUsize::get);
    if cores == 1 {
        return items.iter().try_for_each(|item| take(work(item)));
    }
    for round in items.chunks(cores * PER_CORE) {
        let share = round.len().div_ceil(cores);
        let results: Vec<Vec<R>> = thread::scope(|scope| {
            let mut shares = round.chunks(share);
            // This thread works on the first share instead of waiting for the others.
            let first = shares.next().unwrap_or_default();
            let others: Vec<_> = shares
                .map(|part| scope.spawn(|| part.iter().map(&work).collect::<Vec<R>>()))
                .collect();
            let mut results = vec![first.iter().map(&work).collect()];
            results.extend(others.into_iter().map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }));
            results
        });
        results.into_iter().flatten().try_for_each(&mut take)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_the_items_order_and_take_can_stop_early() {
        for n in [0, 1, 511, 512, 513, 5000] {
            let items: Vec<usize> = (0..n).collect();
            let mut seen = Vec::new();
            map_in_order(
                &items,
                |i| i * 2,
                |r| {
                    seen.push(r);
                    Ok::<(), ()>(())
                },
            )
            .unwrap();
            assert_eq!(seen, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        }
        let items: Vec<usize> = (0..3000).collect();
        let mut taken = 0;
        let stopped = map_in_order(
            &items,
            |i| *i,
            |i| {
                taken += 1;
                if i == 1000 { Err(i) } else { Ok(()) }
            },
        );
        assert_eq!(stopped, Err(1000));
        assert_eq!(taken, 1001);
    }
}
