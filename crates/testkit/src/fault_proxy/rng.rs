//! A seeded random number generator (SplitMix64), so that the proxy's choices (which response is
//! corrupted, which byte, how much jitter) can be replayed from the seed a failed test printed.
//! Small and dependency-free; statistical quality is ample for fault injection.

use std::time::{SystemTime, UNIX_EPOCH};

/// The environment variable that fixes the seed of every proxy a test starts.
pub const SEED_VAR: &str = "MOORING_FAULT_SEED";

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014).
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    #[cfg(test)]
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// An independent generator for stream `stream` of `seed` (one per connection), so that one
    /// connection's draws do not depend on how the others interleaved with it.
    pub(crate) fn stream(seed: u64, stream: u64) -> Rng {
        let mut mixer = Rng(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
        Rng(mixer.next_u64())
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0); the modulo bias is below 2^-40 for the sizes used.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// The seed from `MOORING_FAULT_SEED` (decimal, or hex with `0x`), else one from the clock and
/// the process id. Print it with the test's outcome so a failure can be replayed.
pub fn seed_from_env() -> u64 {
    if let Ok(text) = std::env::var(SEED_VAR) {
        let text = text.trim();
        let parsed = match text.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => text.parse().ok(),
        };
        if let Some(seed) = parsed {
            return seed;
        }
        panic!("{SEED_VAR}={text:?} is not a number (decimal, or hex with 0x)");
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    Rng::stream(nanos, u64::from(std::process::id())).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_draws_and_streams_differ() {
        let a: Vec<u64> = (0..8).map(|_| Rng::stream(42, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut one = Rng::stream(42, 1);
        let mut two = Rng::stream(42, 2);
        assert_ne!(one.next_u64(), two.next_u64());
        let mut r = Rng::new(7);
        assert!((0..1000).all(|_| r.below(10) < 10));
        assert_eq!(r.below(0), 0);
    }
}
