//! One counter as the checker keeps it — its timeline, the reads waiting to be judged, the
//! deletes and retries it remembers — and the judgement of one read against it.

use super::figures::{self, Direction, ReadBounds};
use super::sweep;
use super::window::Timeline;
use crate::ideal::{saturate, Reading, Sum};
use crate::resurrection::{ResurrectedRead, Resurrections};

/// How many completed deletes per counter are remembered, to name resurrections.
const DELETES_KEPT: usize = 8;

/// A delete of a counter that completed ok.
pub struct DeleteMark {
    /// The delete's op id.
    pub id: u64,
    /// Its invoke event.
    pub start: u64,
    /// Its ok completion event.
    pub end: u64,
    /// The most the counter could hold just before it.
    pub before: Sum,
}

/// A retry of an add, invoked at `start`: how much more than once the add could count.
pub struct RetryMark {
    /// The retry's invoke event.
    pub start: u64,
    /// The add's delta.
    pub extra: i64,
}

/// A read registered at its invoke, judged once it and everything it overlaps have ended.
pub struct PendingRead {
    /// The read's id.
    pub id: u64,
    /// Its invoke event.
    pub start: u64,
    /// Its ok completion event, once known.
    pub end: Option<u64>,
    /// What is known of it so far.
    pub bounds: ReadBounds,
}

impl PendingRead {
    /// Read `id` of `key`, invoked at `start`, whose invoke has `(index, time)`.
    pub fn new(id: u64, key: &str, start: u64, (index, time): (u64, u64)) -> Self {
        PendingRead {
            id,
            start,
            end: None,
            bounds: ReadBounds {
                key: key.to_string(),
                invoke_index: index,
                index,
                invoke_time: time,
                time,
                ..ReadBounds::default()
            },
        }
    }
}

/// One counter: its timeline, its reads waiting to be judged, its recent deletes.
#[derive(Default)]
pub struct Counter {
    /// Its settled past and the ops in play.
    pub timeline: Timeline,
    /// Reads waiting to be judged.
    pub reads: Vec<PendingRead>,
    /// The last deletes that completed ok.
    pub deletes: Vec<DeleteMark>,
    /// Retries of adds since the oldest of those deletes.
    pub retries: Vec<RetryMark>,
}

impl Counter {
    /// Remembers a delete that completed ok, forgetting the oldest past `DELETES_KEPT`.
    pub fn remember_delete(&mut self, mark: DeleteMark) {
        self.deletes.push(mark);
        if self.deletes.len() > DELETES_KEPT {
            self.deletes.remove(0);
            let oldest = self.deletes[0].start;
            self.retries.retain(|r| r.start >= oldest);
        }
    }

    /// How much retried adds begun after `since` and before `until` could overcount.
    fn retry_slack(&self, since: u64, until: u64) -> Sum {
        self.retries
            .iter()
            .filter(|r| r.start > since && r.start < until)
            .map(|r| Sum::from(r.extra))
            .sum()
    }
}

/// Whether a read whose ops have all ended certainly fits: some placement allows what it
/// returned, and none can take a count past `i64`. Only a read that may not fit needs all
/// its bounds ([`judge`]); this stops at the first placement that explains it.
pub fn fits(counter: &Counter, read: &PendingRead, reading: Reading) -> bool {
    let Some(end) = read.end else {
        return false;
    };
    let timeline = &counter.timeline;
    let value = read.bounds.value;
    timeline.within_64_bits() && timeline.admits(read.start, end, |o| o.fits(reading, value))
}

/// The bounds of a read whose ops have all ended; none when no placement explains anything.
pub fn judge(
    counter: &Counter,
    read: PendingRead,
    reading: Reading,
    resurrections: &mut Resurrections,
) -> Option<ReadBounds> {
    let end = read.end?;
    let outcomes = counter.timeline.allowed(read.start, end);
    let mut values = sweep::values(&outcomes);
    if reading.absent_is_zero {
        values = values.read(reading);
    }
    let mut bounds = read.bounds;
    let (lower, upper) = values.span()?;
    // Past i64 the read is an overflow (no error below): its true span is the finding's.
    (bounds.lower, bounds.upper) = (saturate(lower), saturate(upper));
    bounds.allowed = values;
    let Some((error, direction, nearest)) = bounds.error() else {
        return Some(bounds);
    };
    let highest = direction == Direction::Over;
    // `nearest` counts absent as 0 (as distances do), whatever the run's reading.
    let behind = outcomes.iter().find(|o| {
        o.fits(
            Reading {
                absent_is_zero: true,
            },
            Some(nearest),
        )
    });
    if let Some(outcome) = behind {
        bounds.bound_ops = figures::kept(counter.timeline.ops_behind(outcome, highest));
        if outcome.choice.delete.is_none() {
            bounds.settled_through = counter.timeline.settled_through();
        }
    }
    let before_read: Vec<&DeleteMark> = counter
        .deletes
        .iter()
        .filter(|d| d.end < read.start)
        .collect();
    bounds.after_delete = before_read.last().map(|d| d.id);
    // A replica that missed several deletes can bring back counts from before any of them;
    // the event is the latest delete that removed something. Only a read above every
    // allowed value brings something back; one in a gap is an over- or undercount.
    let deleted: Sum = before_read.iter().map(|d| d.before.max(0)).sum();
    let latest = before_read.iter().rev().find(|d| d.before > 0);
    let above_all = bounds.count() > bounds.upper;
    if let Some(delete) = latest.filter(|_| highest && above_all) {
        if Sum::from(error) > counter.retry_slack(delete.start, end) {
            bounds.resurrection = true;
            let read = ResurrectedRead {
                key: &bounds.key,
                index: bounds.index,
                time: bounds.time,
                node: bounds.node.as_deref(),
            };
            let deleted = saturate(deleted);
            resurrections.record(read, delete.id, deleted, error.min(deleted));
        }
    }
    Some(bounds)
}
