//! Spreads the clients' ops over time so that together they keep the workload's total rate.

use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// Hands out evenly spaced start times to all clients.
pub struct Pacer {
    interval: Duration,
    next: Mutex<Instant>,
}

impl Pacer {
    /// A pacer for `rate` ops per second in total.
    pub fn new(rate: f64) -> Self {
        Pacer {
            interval: Duration::from_secs_f64(1.0 / rate),
            next: Mutex::new(Instant::now()),
        }
    }

    /// Waits for this caller's turn.
    pub async fn wait(&self) {
        let slot = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            // A client that fell behind does not earn a burst.
            let slot = (*next).max(Instant::now() - self.interval);
            *next = slot + self.interval;
            slot
        };
        // The timer's granularity is a millisecond: a slot closer than that is taken now
        // (the rate holds on average), else high rates would be capped by the timer.
        if slot > Instant::now() + Duration::from_millis(1) {
            tokio::time::sleep_until(slot).await;
        } else {
            tokio::task::yield_now().await;
        }
    }
}
