//! Bandwidth caps: a token bucket per connection direction, or one shared by all, with a burst of
//! 50 ms worth of bytes. A writer reserves the bytes of its next chunk and sleeps for the deficit,
//! so the rate holds however the chunks interleave.

use std::time::{Duration, Instant};

/// Bytes a writer sends at once under a cap of `rate` bytes/s: 50 ms worth, 256 B to 16 KiB.
pub(crate) fn chunk_size(rate: u64) -> usize {
    usize::try_from(rate / 20)
        .unwrap_or(usize::MAX)
        .clamp(256, 16 * 1024)
}

/// A token bucket; `tokens` may go negative (bytes reserved ahead of the rate).
#[derive(Debug)]
pub(crate) struct Bucket {
    rate: u64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    pub(crate) fn new(now: Instant) -> Bucket {
        Bucket {
            rate: 0,
            tokens: 0.0,
            last: now,
        }
    }

    /// Reserves `bytes` at `rate` bytes/s; how long to wait before sending them.
    pub(crate) fn reserve(&mut self, bytes: usize, rate: u64, now: Instant) -> Duration {
        let rate = rate.max(1);
        let burst = (rate as f64 / 20.0).max(chunk_size(rate) as f64);
        if rate != self.rate {
            self.rate = rate;
            self.tokens = self.tokens.min(burst);
        }
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * rate as f64).min(burst) - bytes as f64;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / rate as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_holds_over_a_second_of_reservations() {
        let start = Instant::now();
        let mut bucket = Bucket::new(start);
        let rate = 10_000;
        let chunk = chunk_size(rate);
        // A writer that always sends as soon as it may: its clock is the sum of the waits.
        let mut clock = start;
        let mut sent = 0;
        while clock.duration_since(start) < Duration::from_secs(2) {
            clock += bucket.reserve(chunk, rate, clock);
            sent += chunk;
        }
        let seconds = clock.duration_since(start).as_secs_f64();
        let observed = sent as f64 / seconds;
        assert!(
            observed <= rate as f64 * 1.1,
            "{observed} B/s under a {rate} B/s cap"
        );
        assert!(observed >= rate as f64 * 0.9, "{observed} B/s: too slow");
        assert_eq!(chunk_size(1), 256);
        assert_eq!(chunk_size(1 << 30), 16 * 1024);
    }
}
