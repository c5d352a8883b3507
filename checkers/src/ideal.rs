//! The ideal counter every checker judges against: what an add, a delete and a read do,
//! which counters a delete reaches, and how what a read returned is compared.
//!
//! A counter is absent until its first add, and again after a delete. `add(d)` sets it to
//! `(current or 0) + d`, so an add of any delta (0 too) makes it exist. A row delete and a
//! column delete (`partition/cell`) make that counter absent; a partition delete
//! (`partition`) makes every counter of the partition absent. A read returns the count, or
//! `null` when the counter is absent: absent is not 0, unless the target cannot tell them
//! apart and the run says so (`absent_is_zero`).
//!
//! The count is an integer without bounds: deltas and reads are 64-bit, but a sum is kept in
//! `Sum`, which no history of 64-bit deltas can overflow. A 64-bit counter, as Cassandra's,
//! wraps instead; a read of a sum outside `i64` is the counter checker's overflow finding.

/// What a read returns: `None` when absent, else its count.
pub type Count = Option<i64>;

/// A true sum of 64-bit deltas: i128, which 2^64 adds of any delta cannot overflow.
pub type Sum = i128;

/// A counter's state as the ideal counter holds it: `None` when absent, else its true sum.
pub type State = Option<Sum>;

/// The state after adding `delta` to a counter in `state`: never wraps (saturates past `Sum`).
pub fn add(state: State, delta: i64) -> State {
    Some(state.unwrap_or(0).saturating_add(Sum::from(delta)))
}

/// Whether a 64-bit counter can hold the sum `sum` without wrapping.
pub fn fits_64_bits(sum: Sum) -> bool {
    i64::try_from(sum).is_ok()
}

/// The value of `i64` nearest to `sum`: for figures kept in 64 bits.
pub fn saturate(sum: Sum) -> i64 {
    i64::try_from(sum).unwrap_or(if sum < 0 { i64::MIN } else { i64::MAX })
}

/// The partition of a counter key (`partition/cell`), or the key itself for a partition.
pub fn partition_of(key: &str) -> &str {
    key.split_once('/').map_or(key, |(partition, _)| partition)
}

/// Whether a delete of `key` deletes a whole partition (its key names no cell).
pub fn deletes_partition(key: &str) -> bool {
    !key.contains('/')
}

/// Whether a delete of `target` reaches the counter `key`.
pub fn reaches(target: &str, key: &str) -> bool {
    target == key || (deletes_partition(target) && partition_of(key) == target)
}

/// How reads are compared with the ideal counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    /// The target cannot tell an absent counter from one that holds 0: both read as 0.
    pub absent_is_zero: bool,
}

impl Reading {
    /// What a read of a counter in `state` returns, as compared.
    pub fn of(self, state: Count) -> Count {
        if self.absent_is_zero {
            Some(state.unwrap_or(0))
        } else {
            state
        }
    }

    /// Whether a read that returned `returned` fits a counter in `state` (none fits past `i64`).
    pub fn fits(self, state: State, returned: Count) -> bool {
        self.admits(state.is_none(), |n| state == Some(n), self.of(returned))
    }

    /// Whether a read that returned `returned` fits a counter that may be `absent` or hold a
    /// count `holds` accepts: under `absent_is_zero` absent reads as 0, and `null` as nothing.
    pub fn admits(self, absent: bool, holds: impl Fn(Sum) -> bool, returned: Count) -> bool {
        match returned {
            None => absent && !self.absent_is_zero,
            Some(n) => holds(Sum::from(n)) || (absent && self.absent_is_zero && n == 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_add_makes_an_absent_counter_exist_even_at_zero() {
        assert_eq!(add(None, 0), Some(0));
        assert_eq!(add(add(None, 2), -2), Some(0));
        assert_eq!(add(Some(4), -1), Some(3));
    }

    #[test]
    fn a_sum_past_64_bits_is_kept_and_fits_no_read() {
        let two_max = add(add(None, i64::MAX), i64::MAX);
        assert_eq!(two_max, Some(2 * Sum::from(i64::MAX)));
        assert!(!fits_64_bits(2 * Sum::from(i64::MAX)) && fits_64_bits(Sum::from(i64::MIN)));
        assert_eq!(saturate(2 * Sum::from(i64::MIN)), i64::MIN);
        assert_eq!(saturate(2 * Sum::from(i64::MAX)), i64::MAX);
        let strict = Reading::default();
        // A 64-bit counter wraps to -2; the ideal counter does not.
        assert!(!strict.fits(two_max, Some(-2)));
        // Back inside 64 bits, it reads as the 64-bit counter does.
        assert!(strict.fits(add(two_max, i64::MIN), Some(i64::MAX - 1)));
    }

    #[test]
    fn a_partition_delete_reaches_every_counter_of_its_partition_and_no_other() {
        assert!(reaches("views", "views/home"));
        assert!(reaches("views/home", "views/home"));
        assert!(!reaches("views/home", "views/about"));
        assert!(!reaches("view", "views/home"));
        assert!(deletes_partition("views") && !deletes_partition("views/home"));
    }

    #[test]
    fn absent_is_not_zero_unless_the_run_says_so() {
        let strict = Reading::default();
        assert!(strict.fits(None, None) && strict.fits(Some(0), Some(0)));
        assert!(!strict.fits(None, Some(0)) && !strict.fits(Some(0), None));
        let lenient = Reading {
            absent_is_zero: true,
        };
        assert!(lenient.fits(None, Some(0)) && lenient.fits(Some(0), None));
        assert!(!lenient.fits(None, Some(1)));
    }
}
