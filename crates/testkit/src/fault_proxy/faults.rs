//! The faults a [`FaultProxy`](super::FaultProxy) can inject, and [`Faults`], the handle that
//! switches them on and off while a client runs. Every setting takes effect on the next frame of
//! every connection (open or not yet made); none of them needs the proxy restarted.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// A delay added to each frame of one direction: `base` plus a uniform draw from `0..=jitter`.
/// Frames keep their order (a TCP stream cannot reorder): a frame is released no earlier than the
/// one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Latency {
    /// Added to every frame.
    pub base: Duration,
    /// Up to this much more, drawn per frame.
    pub jitter: Duration,
}

impl Latency {
    /// `base` plus up to `jitter`.
    pub fn new(base: Duration, jitter: Duration) -> Latency {
        Latency { base, jitter }
    }
}

/// A bandwidth cap in bytes per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bandwidth {
    /// Each direction of each connection gets this many bytes a second.
    PerConnection(u64),
    /// All directions of all connections share this many bytes a second.
    Total(u64),
}

/// Where a corrupted response has its byte flipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CorruptionTarget {
    /// Inside the first complete record batch of a partition of a Fetch response, in the bytes
    /// its CRC-32C covers (or the CRC itself), so the batch's checksum catches it. Only Fetch
    /// responses that carry a complete batch count towards "1 in N".
    #[default]
    FetchRecords,
    /// Any byte of any response frame, size prefix included: framing, headers and bodies may
    /// break. Every response counts towards "1 in N".
    Anywhere,
}

/// Flip one byte in one of every `one_in` eligible responses of a connection: in each run of
/// `one_in` eligible responses exactly one, at a position drawn from the seed, gets a byte XORed
/// with a non-zero mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corruption {
    /// One eligible response in this many is corrupted (1: every one).
    pub one_in: u32,
    /// Which bytes may be flipped.
    pub target: CorruptionTarget,
}

impl Default for Corruption {
    /// One Fetch response with records in 500.
    fn default() -> Corruption {
        Corruption {
            one_in: 500,
            target: CorruptionTarget::FetchRecords,
        }
    }
}

/// Every fault's current setting. The default injects nothing: the proxy relays faithfully.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FaultConfig {
    /// Added to each response (broker → client).
    pub response_latency: Option<Latency>,
    /// Added to each request (client → broker).
    pub request_latency: Option<Latency>,
    /// A cap on the bytes relayed.
    pub bandwidth: Option<Bandwidth>,
    /// Reset (RST) every open connection this often.
    pub reset_every: Option<Duration>,
    /// Relay nothing in either direction, keeping every socket open (new ones too): frames that
    /// arrive meanwhile are dropped, as by a peer that vanished without closing. A client sees
    /// its requests go unanswered until its request timeout.
    pub half_open: bool,
    /// Flip a byte in some responses.
    pub corruption: Option<Corruption>,
}

/// The handle that changes a proxy's faults at run time (cheap to clone; usable from any thread,
/// inside or outside a tokio runtime).
#[derive(Debug, Clone)]
pub struct Faults {
    config: Arc<watch::Sender<FaultConfig>>,
    resets: Arc<watch::Sender<u64>>,
}

impl Faults {
    pub(crate) fn new() -> Faults {
        Faults {
            config: Arc::new(watch::Sender::new(FaultConfig::default())),
            resets: Arc::new(watch::Sender::new(0)),
        }
    }

    /// The settings now.
    pub fn current(&self) -> FaultConfig {
        *self.config.borrow()
    }

    /// Replaces every setting at once.
    pub fn set(&self, config: FaultConfig) {
        self.config.send_replace(config);
    }

    /// Turns every fault off.
    pub fn clear(&self) {
        self.set(FaultConfig::default());
    }

    /// Latency added to each response (`None`: none).
    pub fn set_response_latency(&self, latency: Option<Latency>) {
        self.config.send_modify(|c| c.response_latency = latency);
    }

    /// Latency added to each request (`None`: none).
    pub fn set_request_latency(&self, latency: Option<Latency>) {
        self.config.send_modify(|c| c.request_latency = latency);
    }

    /// A bandwidth cap (`None`: unlimited).
    pub fn set_bandwidth(&self, bandwidth: Option<Bandwidth>) {
        self.config.send_modify(|c| c.bandwidth = bandwidth);
    }

    /// Resets every open connection every `every` (`None`: never), the first time `every` from now.
    pub fn set_reset_every(&self, every: Option<Duration>) {
        self.config.send_modify(|c| c.reset_every = every);
    }

    /// Resets every connection open now, once.
    pub fn reset_now(&self) {
        self.resets.send_modify(|n| *n += 1);
    }

    /// Starts (`true`) or ends a half-open episode.
    pub fn set_half_open(&self, half_open: bool) {
        self.config.send_modify(|c| c.half_open = half_open);
    }

    /// Response corruption (`None`: none).
    pub fn set_corruption(&self, corruption: Option<Corruption>) {
        self.config.send_modify(|c| c.corruption = corruption);
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<FaultConfig> {
        self.config.subscribe()
    }

    /// How many reset episodes there were (timed or asked for).
    pub(crate) fn reset_count(&self) -> u64 {
        *self.resets.borrow()
    }

    pub(crate) fn subscribe_resets(&self) -> watch::Receiver<u64> {
        self.resets.subscribe()
    }
}
