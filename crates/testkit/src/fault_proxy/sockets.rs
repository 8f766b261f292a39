//! Did anything in this process reach a broker around the proxy? Every socket a proxy opens to a
//! broker is registered by its local port before it connects; the kernel's socket table
//! (`/proc/self/net/tcp{,6}`, restricted to this process's descriptors in `/proc/self/fd`) then
//! shows any other socket of the process connected to a broker's address: a client that dialled
//! the real broker directly. Linux only; elsewhere the check reports that it cannot look.
//!
//! The registry is process-wide, so proxies of tests running in parallel in one test binary do
//! not count each other's broker connections as bypasses.

use std::collections::{BTreeSet, HashSet};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Mutex, PoisonError};

static PROXY_PORTS: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// Keeps a proxy's broker socket's local port registered while it lives; drop it only after
/// the socket is closed.
#[derive(Debug)]
pub(crate) struct Registered(u16);

impl Registered {
    pub(crate) fn new(port: u16) -> Registered {
        PROXY_PORTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(port);
        Registered(port)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        PROXY_PORTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.0);
    }
}

/// This process's TCP sockets (any state but LISTEN) whose peer is one of `peers` and whose
/// local port no proxy registered, as `local -> peer`.
pub(crate) fn unproxied_connections(peers: &BTreeSet<SocketAddr>) -> io::Result<Vec<String>> {
    let inodes = own_socket_inodes()?;
    let registered = PROXY_PORTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let mut found = Vec::new();
    for (table, v6) in [("/proc/self/net/tcp", false), ("/proc/self/net/tcp6", true)] {
        let text = match std::fs::read_to_string(table) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound && v6 => continue,
            Err(e) => return Err(e),
        };
        for entry in text.lines().skip(1).filter_map(|l| parse_line(l, v6)) {
            let wanted = inodes.contains(&entry.inode)
                && entry.state != LISTEN
                && peers.iter().any(|p| same(p, &entry.remote));
            if wanted && !registered.contains(&entry.local.port()) {
                found.push(format!("{} -> {}", entry.local, entry.remote));
            }
        }
    }
    Ok(found)
}

const LISTEN: u8 = 0x0A;

#[derive(Debug, PartialEq, Eq)]
struct Entry {
    local: SocketAddr,
    remote: SocketAddr,
    state: u8,
    inode: u64,
}

fn same(a: &SocketAddr, b: &SocketAddr) -> bool {
    let canonical = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    };
    a.port() == b.port() && canonical(a.ip()) == canonical(b.ip())
}

fn own_socket_inodes() -> io::Result<HashSet<u64>> {
    let mut inodes = HashSet::new();
    for fd in std::fs::read_dir("/proc/self/fd")? {
        let Ok(target) = std::fs::read_link(fd?.path()) else {
            continue; // closed meanwhile
        };
        let target = target.to_string_lossy();
        if let Some(inode) = target
            .strip_prefix("socket:[")
            .and_then(|rest| rest.strip_suffix(']'))
            .and_then(|n| n.parse().ok())
        {
            inodes.insert(inode);
        }
    }
    Ok(inodes)
}

/// One line of `/proc/net/tcp{,6}`: `sl local rem st tx:rx tr:when retrnsmt uid timeout inode`.
fn parse_line(line: &str, v6: bool) -> Option<Entry> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    Some(Entry {
        local: parse_address(fields.get(1)?, v6)?,
        remote: parse_address(fields.get(2)?, v6)?,
        state: u8::from_str_radix(fields.get(3)?, 16).ok()?,
        inode: fields.get(9)?.parse().ok()?,
    })
}

/// `0100007F:4AE0`: the address as the kernel's 32-bit words in host byte order, the port in hex.
fn parse_address(text: &str, v6: bool) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = ip.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = if v6 {
        let mut bytes = [0u8; 16];
        for i in 0..4 {
            bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
        }
        IpAddr::V6(Ipv6Addr::from(bytes))
    } else {
        IpAddr::V4(Ipv4Addr::from(word(0)?))
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn kernel_table_lines_parse() {
        let line = "   3: 0100007F:9C40 0100007F:4AE0 01 00000000:00000000 00:00000000 00000000     0        0 424242 1 0000000000000000 20 4 30 10 -1";
        let entry = parse_line(line, false).unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(entry.local, "127.0.0.1:40000".parse().unwrap());
            assert_eq!(entry.remote, "127.0.0.1:19168".parse().unwrap());
        }
        assert_eq!((entry.state, entry.inode), (1, 424242));
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:19192".parse().unwrap();
        assert!(same(&mapped, &"127.0.0.1:19192".parse().unwrap()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_direct_connection_is_found_and_a_registered_one_is_not() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = listener.local_addr().unwrap();
        let peers = BTreeSet::from([peer]);
        assert!(unproxied_connections(&peers).unwrap().is_empty());
        let direct = std::net::TcpStream::connect(peer).unwrap();
        let found = unproxied_connections(&peers).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        let registered = Registered::new(direct.local_addr().unwrap().port());
        assert!(unproxied_connections(&peers).unwrap().is_empty());
        drop(registered);
        assert_eq!(unproxied_connections(&peers).unwrap().len(), 1);
    }
}
