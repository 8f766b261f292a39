//! The member id a member of a broker-assigned group makes up for itself: a `consumer`-protocol
//! member (KIP-1082) and a share-group member (KIP-932) alike name themselves, once, and keep the
//! id for their life, rejoins included.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

/// A member id as a KIP-1082 member makes one up (and as Java's `Uuid.randomUuid().toString()`
/// prints it): a random version-4 UUID in URL-safe base64 without padding, 22 characters, never
/// starting with `-` (Kafka's tools would read it as an option).
pub(crate) fn new_member_id() -> String {
    loop {
        let mut bytes = random_bytes();
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        let id = URL_SAFE_NO_PAD.encode(bytes);
        if !id.starts_with('-') {
            return id;
        }
    }
}

/// 16 random bytes from the system; if it has none to give, a digest of the time, the process
/// and a counter (the id must be unique, not secret).
fn random_bytes() -> [u8; 16] {
    use ring::rand::SecureRandom;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut bytes = [0u8; 16];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_ok() {
        return bytes;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!(
        "{nanos}/{}/{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let digest = ring::digest::digest(&ring::digest::SHA256, seed.as_bytes());
    bytes.copy_from_slice(&digest.as_ref()[..16]);
    bytes
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn member_ids_look_like_javas() {
        let ids: BTreeSet<String> = (0..64).map(|_| new_member_id()).collect();
        assert_eq!(ids.len(), 64);
        for id in &ids {
            assert_eq!(id.len(), 22, "{id}");
            assert!(!id.starts_with('-'), "{id}");
            let raw = URL_SAFE_NO_PAD.decode(id).unwrap();
            assert_eq!(raw[6] >> 4, 4, "version 4: {id}");
        }
    }
}
