//! Time lag from offset lag, as kafka-lag-exporter estimates it: keep a short table of
//! (high watermark, time) samples per partition, and find by linear interpolation when the log
//! end passed the committed offset (when the first record not yet consumed was appended); the
//! time lag is now minus that moment. A plateau (the end unchanged) keeps its first and its
//! latest sighting, so a record appended after a long idle stretch is dated after the stretch,
//! not at its start. Past the table's oldest sample the rate between its two ends
//! extrapolates; with fewer than two samples, or a partition that does not move, there is no
//! estimate beyond "caught up" (0).

use std::collections::VecDeque;

/// Samples kept per partition.
pub const MAX_SAMPLES: usize = 64;

/// One partition's (offset, unix seconds) samples, oldest first, offsets non-decreasing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LagSamples {
    samples: VecDeque<(i64, f64)>,
}

impl LagSamples {
    /// Adds the high watermark seen at `at` (unix seconds). An unchanged offset keeps the
    /// plateau's first sighting and moves its latest one.
    pub fn record(&mut self, offset: i64, at: f64) {
        let n = self.samples.len();
        if let Some(&(last, _)) = self.samples.back() {
            if offset < last {
                // The log was truncated or recreated: start over.
                self.samples.clear();
            } else if offset == last {
                let plateau = n >= 2 && self.samples.get(n - 2).is_some_and(|s| s.0 == offset);
                if plateau {
                    if let Some(newest) = self.samples.back_mut() {
                        newest.1 = at;
                    }
                    return;
                }
            }
        }
        if self.samples.len() >= MAX_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back((offset, at));
    }

    /// The estimated time lag of `committed` at `now` (unix seconds): now minus when the log
    /// end passed `committed`, interpolated between the latest sample at or below it and the
    /// first above it.
    pub fn time_lag(&self, committed: i64, now: f64) -> f64 {
        let Some(&(newest, _)) = self.samples.back() else {
            return 0.0;
        };
        if committed >= newest {
            return 0.0;
        }
        let mut prev: Option<(i64, f64)> = None;
        for &(offset, at) in &self.samples {
            if offset > committed {
                let when = match prev {
                    // The end passed `committed` between these two samples.
                    Some((po, pt)) => {
                        pt + (at - pt) * ((committed - po) as f64 / (offset - po) as f64)
                    }
                    // Older than every sample: extrapolate with the table's average rate.
                    None => self.extrapolate(committed).unwrap_or(at),
                };
                return (now - when).max(0.0);
            }
            prev = Some((offset, at));
        }
        0.0
    }

    /// Records appended per second over the last `window` seconds (as far back as the table
    /// goes, when it is shorter); 0 with fewer than two samples.
    pub fn append_rate(&self, window: f64) -> f64 {
        let Some(&(newest, now)) = self.samples.back() else {
            return 0.0;
        };
        let base = self
            .samples
            .iter()
            .rev()
            .find(|s| now - s.1 >= window)
            .or(self.samples.front());
        match base {
            Some(&(offset, at)) if now > at => (newest - offset) as f64 / (now - at),
            _ => 0.0,
        }
    }

    fn extrapolate(&self, committed: i64) -> Option<f64> {
        let &(o1, t1) = self.samples.front()?;
        let &(o2, t2) = self.samples.back()?;
        if o2 <= o1 || t2 <= t1 {
            return None;
        }
        let rate = (o2 - o1) as f64 / (t2 - t1);
        Some(t1 - (o1 - committed) as f64 / rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_between_samples() {
        let mut s = LagSamples::default();
        s.record(100, 1000.0);
        s.record(200, 1010.0);
        s.record(300, 1020.0);
        // The end was at 250 at t = 1015.
        assert!((s.time_lag(250, 1030.0) - 15.0).abs() < 1e-9);
        assert_eq!(s.time_lag(300, 1030.0), 0.0);
        // Older than the table: 10 records/s, so offset 50 was at t = 995.
        assert!((s.time_lag(50, 1030.0) - 35.0).abs() < 1e-9);
    }

    #[test]
    fn a_record_after_an_idle_stretch_is_dated_after_it() {
        let mut s = LagSamples::default();
        s.record(10, 1000.0);
        s.record(10, 1500.0);
        s.record(10, 2000.0);
        s.record(110, 2001.0);
        // Offset 10 was appended between 2000 and 2001, not at 1000.
        assert!((s.time_lag(10, 2003.0) - 3.0).abs() < 1e-9);
        // The plateau takes two samples however long it lasts.
        assert_eq!(s.samples.len(), 3);
    }

    #[test]
    fn append_rate_over_the_window() {
        let mut s = LagSamples::default();
        assert_eq!(s.append_rate(60.0), 0.0);
        s.record(0, 1000.0);
        s.record(1000, 1010.0);
        s.record(1100, 1020.0);
        s.record(1200, 1030.0);
        // The last 20 s: from the sample at 1010.
        assert!((s.append_rate(20.0) - 10.0).abs() < 1e-9);
        // Longer than the table: all of it.
        assert!((s.append_rate(600.0) - 40.0).abs() < 1e-9);
    }

    #[test]
    fn a_plateau_keeps_its_start() {
        let mut s = LagSamples::default();
        s.record(100, 1000.0);
        s.record(100, 1050.0);
        assert_eq!(s.time_lag(100, 1060.0), 0.0);
        // Committed 90: the end reached 100 no later than t = 1000 (one sample: no rate).
        assert!((s.time_lag(90, 1060.0) - 60.0).abs() < 1e-9);
    }
}
