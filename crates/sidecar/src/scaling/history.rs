//! The recent look-ups, for the consume rate over the rate window and whether the members were
//! saturated through it.

use std::collections::VecDeque;

/// One look-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// Seconds (unix).
    pub at: f64,
    /// Records consumed since the look-up before.
    pub consumed: i64,
    /// Members then.
    pub members: u32,
    /// Records behind then (partitions with a committed offset).
    pub lag: i64,
}

/// How far behind, in seconds of the consume rate, a group must be at every look-up of a window
/// for its rate to be its capacity. A group that keeps up still shows the records of its last
/// commit interval (5 s by default) as lag.
const BEHIND_SECONDS: f64 = 10.0;

/// Look-ups kept at most (a window of a minute at a look-up every 100 ms).
const KEPT: usize = 600;

/// The look-ups of the rate window, and the one just before it (the window's start).
#[derive(Debug, Default)]
pub struct Looks {
    looks: VecDeque<Look>,
    window_seconds: f64,
}

/// What the window says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Records consumed per second over the window (none before two look-ups).
    pub consume_rate: Option<f64>,
    /// Every look-up of a window at least half the configured span saw the group behind (see
    /// [`BEHIND_SECONDS`]), with the same members: the rate is what they can do.
    pub saturated: bool,
    /// The members (the last look-up's).
    pub members: u32,
}

impl Looks {
    /// Adds a look-up; those before the window's start are dropped.
    pub fn push(&mut self, look: Look, window_seconds: f64) {
        self.window_seconds = window_seconds;
        self.looks.push_back(look);
        while self.looks.len() > KEPT
            || self
                .looks
                .get(1)
                .is_some_and(|second| look.at - second.at >= window_seconds)
        {
            self.looks.pop_front();
        }
    }

    /// The window as of the last look-up.
    pub fn window(&self) -> Window {
        let (Some(first), Some(last)) = (self.looks.front(), self.looks.back()) else {
            return Window {
                consume_rate: None,
                saturated: false,
                members: 0,
            };
        };
        let span = last.at - first.at;
        let consumed: i64 = self.looks.iter().skip(1).map(|l| l.consumed).sum();
        let consume_rate = (span > 0.0).then(|| consumed as f64 / span);
        // Behind by more than the records of `BEHIND_SECONDS` at every look-up: more than a
        // member's commit interval leaves uncommitted while it keeps up.
        let behind = consume_rate.unwrap_or(0.0) * BEHIND_SECONDS;
        let saturated = span >= self.window_seconds / 2.0
            && self
                .looks
                .iter()
                .all(|l| l.lag as f64 > behind && l.members == last.members && l.members > 0);
        Window {
            consume_rate,
            saturated,
            members: last.members,
        }
    }
}
