//! The node's clock, behind a trait so that a simulation can drive time itself.

use std::time::{SystemTime, UNIX_EPOCH};

/// Where a node reads the time from.
pub trait Clock: Send + Sync + 'static {
    /// Microseconds since the Unix epoch.
    fn now_micros(&self) -> u64;
}

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_micros(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0)
    }
}

/// `base` moved by `offset_ms` (positive: ahead), never before the epoch.
pub fn offset(base: u64, offset_ms: i64) -> u64 {
    (base as i64)
        .saturating_add(offset_ms.saturating_mul(1_000))
        .max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_moves_the_clock_either_way_and_never_before_the_epoch() {
        let now = SystemClock.now_micros();
        assert!(now > 1_600_000_000_000_000, "{now}");
        assert_eq!(offset(now, 60_000), now + 60_000_000);
        assert_eq!(offset(now, -1_000), now - 1_000_000);
        assert_eq!(offset(5, -1), 0);
    }
}
