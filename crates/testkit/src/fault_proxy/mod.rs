//! A hostile network on loopback: a fault proxy between a Kafka client and a real broker.
//!
//! [`FaultProxy::start`] listens on a 127.0.0.1 port of its own for each bootstrap server (any
//! free port; [`FaultProxy::start_on_ports`] keeps every listener in a range); the client
//! bootstraps through [`FaultProxy::bootstrap`]. The proxy relays Kafka frames both ways
//! and rewrites every broker address the client could learn (Metadata brokers, FindCoordinator
//! coordinators of every version including v4+ batches, Fetch v16+ node endpoints) to listeners
//! of its own, one per broker node, opened the first time a response names the node. So every
//! connection the client makes goes through the proxy; [`FaultProxy::bypassing_connections`]
//! checks that none of this process's sockets reaches a broker around it.
//!
//! Faults, switched at run time through [`Faults`] (from [`FaultProxy::faults`]) while the
//! client runs:
//! - **latency and jitter** per response and/or per request (order kept, as in a TCP stream);
//! - a **bandwidth cap**, per connection direction or in total;
//! - **resets**: every open connection closed with RST every N seconds (or once, now);
//! - **half-open**: nothing relayed either way, sockets kept open, so a client's requests go
//!   unanswered until its request timeout;
//! - **corruption**: one byte flipped in 1 of N responses (default 500), inside a Fetch
//!   response's record batch where the batch CRC-32C must catch it, or anywhere in the frame
//!   (framing included: the client must survive that too).
//!
//! Every random choice comes from a seeded generator (one stream per connection), printed with
//! each corruption and available as [`FaultProxy::seed`]: set `MOORING_FAULT_SEED` to replay a
//! failed run's choices. [`FaultProxy::stats`] tells what happened: connections per listener and
//! how each ended, resets, dropped frames, rewritten and corrupted responses.
//!
//! The proxy runs on a runtime and thread of its own, so it works the same under a test's tokio
//! runtime, a blocking test or a client that stalls its runtime; dropping the [`FaultProxy`] ends
//! it and closes every socket it holds. It must read the frames to rewrite them, so it fronts
//! PLAINTEXT (and SASL_PLAINTEXT) listeners only, never TLS.

mod corrupt;
mod faults;
mod relay;
mod rewrite;
mod rng;
mod sockets;
mod stats;
mod throttle;

pub use faults::{Bandwidth, Corruption, CorruptionTarget, FaultConfig, Faults, Latency};
pub use rewrite::RewriteError;
pub use rng::{seed_from_env, SEED_VAR};
pub use stats::{
    ConnectionEnd, ConnectionStats, CorruptedBatch, CorruptedResponse, Endpoint, Stats,
};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mooring_wire::primitives::Uuid;
use tokio::runtime::{Handle, Runtime};

use rewrite::AddressMap;
use throttle::Bucket;

/// The host every listener advertises.
const LISTEN_HOST: &str = "127.0.0.1";

/// A running fault proxy; see the [module docs](self).
#[derive(Debug)]
pub struct FaultProxy {
    shared: Arc<Shared>,
    runtime: Option<Runtime>,
}

/// One listener: its port and the broker address it relays to.
#[derive(Debug, Clone)]
struct Listener {
    port: u16,
    upstream: String,
}

#[derive(Debug, Default)]
struct Registry {
    bootstrap: Vec<Listener>,
    nodes: BTreeMap<i32, Listener>,
    topics: HashMap<Uuid, String>,
    /// Every broker address a proxy socket connected to, resolved.
    dialled: BTreeSet<SocketAddr>,
}

/// What the listeners, connections and the handle share.
#[derive(Debug)]
pub(crate) struct Shared {
    seed: u64,
    /// Where listeners are opened: the first free port of the range, or any port (`None`).
    ports: Option<RangeInclusive<u16>>,
    faults: Faults,
    runtime: Handle,
    registry: Mutex<Registry>,
    stats: Mutex<Stats>,
    total_bucket: Mutex<Bucket>,
}

impl FaultProxy {
    /// Starts a proxy for `bootstrap` (comma-separated `host:port`), seeded from
    /// `MOORING_FAULT_SEED` or the clock. No fault is on until one is set through
    /// [`FaultProxy::faults`].
    pub fn start(bootstrap: &str) -> io::Result<FaultProxy> {
        FaultProxy::start_with_seed(bootstrap, seed_from_env())
    }

    /// Starts a proxy whose random choices all derive from `seed`.
    pub fn start_with_seed(bootstrap: &str, seed: u64) -> io::Result<FaultProxy> {
        FaultProxy::start_inner(bootstrap, seed, None)
    }

    /// As [`FaultProxy::start_with_seed`], with every listener (the bootstrap servers' first, in
    /// order, then each broker node's as responses name it) on the first free port of `ports`,
    /// so a proxy in a process of its own has addresses known in advance. A listener that finds
    /// no free port fails: at the start with an error, later as a rewrite error (the connection
    /// whose response named the node is closed).
    pub fn start_on_ports(
        bootstrap: &str,
        seed: u64,
        ports: RangeInclusive<u16>,
    ) -> io::Result<FaultProxy> {
        FaultProxy::start_inner(bootstrap, seed, Some(ports))
    }

    fn start_inner(
        bootstrap: &str,
        seed: u64,
        ports: Option<RangeInclusive<u16>>,
    ) -> io::Result<FaultProxy> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fault-proxy")
            .enable_all()
            .build()?;
        let shared = Arc::new(Shared {
            seed,
            ports,
            faults: Faults::new(),
            runtime: runtime.handle().clone(),
            registry: Mutex::new(Registry::default()),
            stats: Mutex::new(Stats::default()),
            total_bucket: Mutex::new(Bucket::new(std::time::Instant::now())),
        });
        let servers: Vec<&str> = bootstrap
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if servers.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no bootstrap server",
            ));
        }
        for (n, server) in servers.into_iter().enumerate() {
            let port = shared.listen(Endpoint::Bootstrap(n))?;
            shared.registry().bootstrap.push(Listener {
                port,
                upstream: server.to_string(),
            });
            // Known before any connection, so the bypass check covers the bootstrap servers.
            if let Ok(addrs) = server.to_socket_addrs() {
                shared.registry().dialled.extend(addrs);
            }
        }
        runtime.spawn(reset_ticker(Arc::clone(&shared)));
        Ok(FaultProxy {
            shared,
            runtime: Some(runtime),
        })
    }

    /// The bootstrap servers a client should be given: the proxy's listeners, comma-separated.
    pub fn bootstrap(&self) -> String {
        self.shared
            .registry()
            .bootstrap
            .iter()
            .map(|l| format!("{LISTEN_HOST}:{}", l.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The handle that switches faults on and off.
    pub fn faults(&self) -> Faults {
        self.shared.faults.clone()
    }

    /// The seed every random choice derives from.
    pub fn seed(&self) -> u64 {
        self.shared.seed
    }

    /// What the proxy counted so far.
    pub fn stats(&self) -> Stats {
        self.shared.stats_snapshot()
    }

    /// Every listener: its port and the broker address it relays to.
    pub fn listeners(&self) -> BTreeMap<Endpoint, (u16, String)> {
        let registry = self.shared.registry();
        let bootstrap = registry
            .bootstrap
            .iter()
            .enumerate()
            .map(|(n, l)| (Endpoint::Bootstrap(n), (l.port, l.upstream.clone())));
        let nodes = registry
            .nodes
            .iter()
            .map(|(id, l)| (Endpoint::Node(*id), (l.port, l.upstream.clone())));
        bootstrap.chain(nodes).collect()
    }

    /// Whether `host:port` is one of this proxy's listeners.
    pub fn is_listener(&self, host: &str, port: u16) -> bool {
        host == LISTEN_HOST && self.listeners().values().any(|(p, _)| *p == port)
    }

    /// This process's sockets connected to a broker this proxy relays to, other than the
    /// proxies' own (`local -> broker` each). Empty when every client connection went through a
    /// proxy. Linux only (an error elsewhere).
    pub fn bypassing_connections(&self) -> io::Result<Vec<String>> {
        self.bypass_checker().check()
    }

    /// [`FaultProxy::bypassing_connections`] as a value another task can keep and call.
    pub fn bypass_checker(&self) -> BypassChecker {
        BypassChecker {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// Looks for this process's sockets connected to a proxy's brokers around it; see
/// [`FaultProxy::bypassing_connections`].
#[derive(Debug, Clone)]
pub struct BypassChecker {
    shared: Arc<Shared>,
}

impl BypassChecker {
    /// `local -> broker` for each socket around the proxy; empty when there is none.
    pub fn check(&self) -> io::Result<Vec<String>> {
        let peers = self.shared.registry().dialled.clone();
        sockets::unproxied_connections(&peers)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Allowed inside an async context, unlike dropping the runtime.
            runtime.shutdown_background();
        }
    }
}

impl Shared {
    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stat(&self, update: impl FnOnce(&mut Stats)) {
        update(&mut self.stats.lock().unwrap_or_else(PoisonError::into_inner));
    }

    fn stats_snapshot(&self) -> Stats {
        let mut stats = self
            .stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        stats.reset_episodes = self.faults.reset_count();
        stats
    }

    /// Opens a listener for `endpoint` and its accept loop; returns the port.
    fn listen(self: &Arc<Self>, endpoint: Endpoint) -> io::Result<u16> {
        let listener = self.bind()?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let shared = Arc::clone(self);
        self.runtime.spawn(accept_loop(shared, listener, endpoint));
        Ok(port)
    }

    /// A listening socket on the first free port of the range, or on any port.
    fn bind(&self) -> io::Result<std::net::TcpListener> {
        let Some(range) = &self.ports else {
            return std::net::TcpListener::bind((LISTEN_HOST, 0));
        };
        let mut last = None;
        for port in range.clone() {
            match std::net::TcpListener::bind((LISTEN_HOST, port)) {
                Ok(listener) => return Ok(listener),
                Err(e) => last = Some(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!(
                "no free port in {LISTEN_HOST}:{}-{} ({})",
                range.start(),
                range.end(),
                last.map_or_else(|| "the range is empty".to_string(), |e| e.to_string())
            ),
        ))
    }

    fn upstream_of(&self, endpoint: Endpoint) -> Option<String> {
        let registry = self.registry();
        match endpoint {
            Endpoint::Bootstrap(n) => registry.bootstrap.get(n).map(|l| l.upstream.clone()),
            Endpoint::Node(id) => registry.nodes.get(&id).map(|l| l.upstream.clone()),
        }
    }

    fn dialled(&self, addr: SocketAddr) {
        self.registry().dialled.insert(addr);
    }

    fn topic_name(&self, id: Uuid) -> String {
        self.registry()
            .topics
            .get(&id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// Counts a new connection on `endpoint`; returns its id.
    fn opened(&self, endpoint: Endpoint) -> u64 {
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        *stats.accepted.entry(endpoint).or_default() += 1;
        let id = stats.accepted_total() - 1;
        stats.opened(ConnectionStats {
            id,
            endpoint,
            bytes_to_client: 0,
            bytes_to_broker: 0,
            ended: None,
        });
        id
    }

    fn closed(&self, id: u64, end: ConnectionEnd) {
        self.stat(|s| {
            if let Some(c) = s.connection(id) {
                c.ended = Some(end);
            }
        });
    }

    fn address_map(self: &Arc<Self>) -> SharedMap<'_> {
        SharedMap(self)
    }
}

/// The proxy's listeners as the rewriting sees them: a node's listener is opened the first time
/// a response names the node.
struct SharedMap<'a>(&'a Arc<Shared>);

impl AddressMap for SharedMap<'_> {
    fn listener_for(
        &mut self,
        node_id: i32,
        host: &str,
        port: i32,
    ) -> Result<(String, i32), String> {
        let upstream = format!("{host}:{port}");
        let existing = {
            let mut registry = self.0.registry();
            registry.nodes.get_mut(&node_id).map(|l| {
                // A broker that moved keeps its listener; new connections go to the new address.
                l.upstream.clone_from(&upstream);
                l.port
            })
        };
        let port = match existing {
            Some(port) => port,
            None => {
                let port = self
                    .0
                    .listen(Endpoint::Node(node_id))
                    .map_err(|e| e.to_string())?;
                let mut registry = self.0.registry();
                // Another connection may have opened one meanwhile: keep the first.
                let listener = registry
                    .nodes
                    .entry(node_id)
                    .or_insert(Listener { port, upstream });
                listener.port
            }
        };
        Ok((LISTEN_HOST.to_string(), i32::from(port)))
    }

    fn topic(&mut self, id: Uuid, name: &str) {
        self.0.registry().topics.insert(id, name.to_string());
    }
}

async fn accept_loop(shared: Arc<Shared>, listener: std::net::TcpListener, endpoint: Endpoint) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fault proxy: listener for {endpoint} failed: {e}");
            return;
        }
    };
    loop {
        match listener.accept().await {
            Ok((client, _)) => {
                tokio::spawn(relay::serve(Arc::clone(&shared), client, endpoint));
            }
            Err(e) => {
                // Out of descriptors and the like: wait a moment rather than spin.
                eprintln!("fault proxy: accept on {endpoint} failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Resets every open connection every `reset_every`, re-armed whenever that setting changes.
async fn reset_ticker(shared: Arc<Shared>) {
    let mut config = shared.faults.subscribe();
    let mut every = None;
    let mut next = None;
    loop {
        let current = config.borrow_and_update().reset_every;
        if current != every {
            every = current;
            next = every.map(|e| tokio::time::Instant::now() + e);
        }
        let tick = async {
            match next {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = tick => {
                shared.faults.reset_now();
                next = every.map(|e| tokio::time::Instant::now() + e);
            }
            changed = config.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn listeners_take_the_first_free_ports_of_the_range() {
        // A port of the range held by someone else is skipped.
        let taken = std::net::TcpListener::bind((LISTEN_HOST, 0)).unwrap();
        let first = taken.local_addr().unwrap().port();
        let Some(last) = first.checked_add(20) else {
            return; // no room above this ephemeral port for the range
        };
        let proxy =
            FaultProxy::start_on_ports("127.0.0.1:9,127.0.0.1:10", 1, first..=last).unwrap();
        let ports: Vec<u16> = proxy.listeners().values().map(|(p, _)| *p).collect();
        assert_eq!(ports.len(), 2, "{ports:?}");
        assert!(
            ports.iter().all(|p| (first + 1..=last).contains(p)),
            "{ports:?}"
        );
        assert!(ports[0] < ports[1], "bootstrap servers in order: {ports:?}");
        assert_eq!(
            proxy.bootstrap(),
            format!("127.0.0.1:{},127.0.0.1:{}", ports[0], ports[1])
        );
    }

    #[test]
    fn a_range_without_a_free_port_is_an_error_that_names_it() {
        let taken = std::net::TcpListener::bind((LISTEN_HOST, 0)).unwrap();
        let port = taken.local_addr().unwrap().port();
        let e = FaultProxy::start_on_ports("127.0.0.1:9", 1, port..=port).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        assert!(
            e.to_string().contains(&format!("127.0.0.1:{port}-{port}")),
            "{e}"
        );
    }
}
