//! A long series thinned as it grows, so that a chart of it holds a bounded number of
//! points spread evenly over the whole series: every item until a limit, then every 2nd,
//! every 4th, and so on.

/// The items of a series kept at a stride that doubles whenever more than `limit` are kept:
/// all of a short series, and between `limit / 2` and `limit` of a long one, the first
/// always among them.
#[derive(Debug, Clone)]
pub struct Thinned<T> {
    limit: usize,
    stride: u64,
    seen: u64,
    kept: Vec<T>,
}

impl<T> Thinned<T> {
    /// An empty series that keeps at most `limit` items (at least 2).
    pub fn new(limit: usize) -> Self {
        Thinned {
            limit: limit.max(2),
            stride: 1,
            seen: 0,
            kept: Vec::new(),
        }
    }

    /// Whether the next item offered will be kept (so that one not kept need not be built).
    pub fn wants_next(&self) -> bool {
        self.seen.is_multiple_of(self.stride)
    }

    /// Offers the next item of the series.
    pub fn push(&mut self, item: T) {
        if self.wants_next() {
            self.kept.push(item);
            self.thin();
        }
        self.seen += 1;
    }

    /// Keeps at most `limit` items (at least 2) from now on, thinning those kept already.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit.max(2);
        self.thin();
    }

    /// Doubles the stride until no more than the limit are kept.
    fn thin(&mut self) {
        while self.kept.len() > self.limit {
            // Kept items sit at multiples of the stride: those at even multiples stay.
            let mut position = 0;
            self.kept.retain(|_| {
                position += 1;
                position % 2 == 1
            });
            self.stride *= 2;
        }
    }

    /// Counts the next item of the series without it, when it is not wanted.
    pub fn pass(&mut self) {
        debug_assert!(!self.wants_next(), "a wanted item was passed over");
        self.seen += 1;
    }

    /// How many items the series has had.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// The items kept, in series order.
    pub fn kept(&self) -> &[T] {
        &self.kept
    }

    /// The items kept, in series order.
    pub fn into_kept(self) -> Vec<T> {
        self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_series_is_kept_whole() {
        let mut series = Thinned::new(10);
        (0..10).for_each(|i| series.push(i));
        assert_eq!(series.kept(), (0..10).collect::<Vec<_>>().as_slice());
        assert_eq!(series.seen(), 10);
    }

    #[test]
    fn a_long_series_keeps_every_kth_item_from_the_first_within_the_limit() {
        for n in [11u64, 100, 1000, 12_345] {
            let mut series = Thinned::new(10);
            for i in 0..n {
                if series.wants_next() {
                    series.push(i);
                } else {
                    series.pass();
                }
            }
            let kept = series.kept();
            assert!(kept.len() <= 10 && kept.len() >= 5, "{n}: {kept:?}");
            let stride = kept[1] - kept[0];
            assert!(stride.is_power_of_two(), "{n}: {kept:?}");
            let expected: Vec<u64> = (0..n).step_by(stride as usize).collect();
            assert_eq!(kept, expected.as_slice(), "{n}");
            assert_eq!(series.seen(), n);
        }
    }
}
