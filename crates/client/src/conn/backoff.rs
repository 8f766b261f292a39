//! Exponential back-off with jitter, as Java's `ExponentialBackoff` (KIP-144 for
//! `reconnect.backoff.max.ms`, KIP-580 for retries): the delay doubles with each consecutive
//! failure from `base` up to `max`, and is spread by ±20 % so that many clients that lost the same
//! broker do not come back in lockstep. Unlike Java, the jittered delay never exceeds `max`.

use std::time::Duration;

/// Relative spread of the jitter.
const JITTER: f64 = 0.2;

/// Back-off settings: first delay and ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The delay after the first failure.
    pub base: Duration,
    /// The largest delay.
    pub max: Duration,
}

impl Backoff {
    /// The delay after `failures` consecutive failures (≥ 1), with `unit` in `[0, 1)` choosing the
    /// point in the jitter band.
    pub fn delay_with(&self, failures: u32, unit: f64) -> Duration {
        let exponent = failures.saturating_sub(1).min(31);
        let base = self.base.as_secs_f64();
        let max = self.max.as_secs_f64().max(base);
        let term = (base * f64::from(1u32 << exponent)).min(max);
        let factor = 1.0 - JITTER + 2.0 * JITTER * unit.clamp(0.0, 1.0);
        Duration::from_secs_f64((term * factor).min(max).max(0.0))
    }

    /// The delay after `failures` consecutive failures, with random jitter.
    pub fn delay(&self, failures: u32) -> Duration {
        self.delay_with(failures, random_unit())
    }
}

/// A random number in `[0, 1)` from the system's generator (ring); 0.5 if it is unavailable.
pub(crate) fn random_unit() -> f64 {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 8];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_max_and_stays_in_the_jitter_band() {
        let b = Backoff {
            base: Duration::from_millis(50),
            max: Duration::from_millis(1000),
        };
        assert_eq!(b.delay_with(1, 0.5), Duration::from_millis(50));
        assert_eq!(b.delay_with(2, 0.5), Duration::from_millis(100));
        assert_eq!(b.delay_with(3, 0.5), Duration::from_millis(200));
        assert_eq!(b.delay_with(10, 0.5), Duration::from_millis(1000));
        assert_eq!(b.delay_with(1000, 0.5), Duration::from_millis(1000));
        assert_eq!(b.delay_with(1, 0.0), Duration::from_millis(40));
        assert_eq!(b.delay_with(1, 1.0), Duration::from_millis(60));
        for failures in 1..40 {
            for _ in 0..20 {
                let d = b.delay(failures);
                let term = (50.0 * 2f64.powi(failures as i32 - 1)).min(1000.0);
                assert!(
                    d.as_secs_f64() * 1000.0 >= term * 0.8 - 1e-6,
                    "{failures}: {d:?}"
                );
                assert!(d <= b.max, "{failures}: {d:?}");
            }
        }
    }

    #[test]
    fn random_unit_is_in_range() {
        for _ in 0..100 {
            let u = random_unit();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
