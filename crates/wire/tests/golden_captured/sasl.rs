//! The `sasl` scenario: each client connected to the broker's SASL_PLAINTEXT listener as the test
//! user (`alice` / `alice-secret`: scripts/kafka's throwaway credential, which SASL/PLAIN carries in
//! clear), once with SASL/PLAIN and once with SCRAM-SHA-512. Per file: the SaslHandshake naming
//! the mechanism and the broker's answer listing the enabled ones; the SaslAuthenticate of PLAIN
//! (one message: no authorization id, the user, the password) and of SCRAM (RFC 5802: the
//! client-first and client-final messages and the server's answers to them). Across the files of
//! one SCRAM login: the server's nonce continues the client's and the client-final repeats it.

use bytes::Bytes;
use mooring_wire::messages::*;

use super::{captured, round_trip, Captured};

/// The mechanisms the broker's SASL_PLAINTEXT listener enables (scripts/kafka:
/// sasl.enabled.mechanisms), sorted.
const ENABLED: [&str; 3] = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];
const USER: &str = "alice";
const PASSWORD: &str = "alice-secret";
/// scripts/kafka adds the SCRAM credentials without an iteration count: Kafka's default.
const SCRAM_ITERATIONS: &str = "4096";
/// A SHA-512 digest (client proof, server signature) in base64: 64 bytes, 88 characters.
const SHA512_BASE64_LEN: usize = 88;

/// Which message of the login a file holds, from the mechanism in its `# sasl_mechanism:` line
/// and its variant (`plain`, `scram-sha-512-first`, `scram-sha-512-final`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Plain,
    ScramFirst,
    ScramFinal,
}

fn mechanism(c: &Captured) -> &str {
    let m = c.meta("sasl_mechanism");
    assert!(ENABLED.contains(&m), "{}: mechanism {m}", c.name);
    m
}

fn step(c: &Captured) -> Step {
    let slug = mechanism(c).to_lowercase();
    let variant = c.variant().unwrap_or_default();
    let rest = variant
        .strip_prefix(slug.as_str())
        .unwrap_or_else(|| panic!("{}: variant {variant:?} does not name {slug}", c.name));
    match (slug.starts_with("scram"), rest) {
        (false, "") => Step::Plain,
        (true, "-first") => Step::ScramFirst,
        (true, "-final") => Step::ScramFinal,
        _ => panic!("{}: unknown variant {variant:?}", c.name),
    }
}

fn text<'a>(c: &Captured, bytes: &'a Bytes) -> &'a str {
    std::str::from_utf8(bytes).unwrap_or_else(|e| panic!("{}: auth bytes: {e}", c.name))
}

/// The `key=value` attributes of a SCRAM message, in order.
fn attributes<'a>(c: &Captured, message: &'a str) -> Vec<(&'a str, &'a str)> {
    message
        .split(',')
        .map(|a| {
            a.split_once('=')
                .unwrap_or_else(|| panic!("{}: SCRAM attribute {a:?} in {message:?}", c.name))
        })
        .collect()
}

fn attribute<'a>(c: &Captured, attrs: &[(&'a str, &'a str)], key: &str) -> &'a str {
    attrs
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("{}: no SCRAM attribute {key} in {attrs:?}", c.name))
}

pub(super) fn handshake_request(c: &Captured) {
    let m: SaslHandshakeRequest = round_trip(c);
    assert_eq!(m.mechanism, mechanism(c), "{}", c.name);
    // From v1 the authentication itself goes in SaslAuthenticate requests (KIP-152).
    assert_eq!(c.version(), 1, "{}: handshake version", c.name);
}

pub(super) fn handshake_response(c: &Captured) {
    let m: SaslHandshakeResponse = round_trip(c);
    assert_eq!(m.error_code, 0, "{}", c.name);
    // In no fixed order: Kafka 4.4 listed PLAIN, SCRAM-SHA-512, SCRAM-SHA-256.
    let mut mechanisms = m.mechanisms.clone();
    mechanisms.sort();
    assert_eq!(mechanisms, ENABLED, "{}: enabled mechanisms", c.name);
}

pub(super) fn authenticate_request(c: &Captured) {
    let name = &c.name;
    let m: SaslAuthenticateRequest = round_trip(c);
    match step(c) {
        // RFC 4616: authorization id (empty: the user's own), user, password, NUL-separated.
        Step::Plain => assert_eq!(
            &m.auth_bytes[..],
            format!("\0{USER}\0{PASSWORD}").as_bytes(),
            "{name}: PLAIN message"
        ),
        Step::ScramFirst => {
            let message = text(c, &m.auth_bytes);
            // gs2 header "n,," (no channel binding, no authorization id), then n= and r=.
            let bare = message
                .strip_prefix("n,,")
                .unwrap_or_else(|| panic!("{name}: gs2 header of {message:?}"));
            let attrs = attributes(c, bare);
            assert_eq!(attrs[0], ("n", USER), "{name}: {message:?}");
            assert!(
                !attribute(c, &attrs, "r").is_empty(),
                "{name}: client nonce"
            );
        }
        Step::ScramFinal => {
            let message = text(c, &m.auth_bytes);
            let attrs = attributes(c, message);
            let keys: Vec<&str> = attrs.iter().map(|(k, _)| *k).collect();
            assert_eq!(keys, ["c", "r", "p"], "{name}: {message:?}");
            // c= is the gs2 header "n,," in base64.
            assert_eq!(attribute(c, &attrs, "c"), "biws", "{name}");
            assert_eq!(
                attribute(c, &attrs, "p").len(),
                SHA512_BASE64_LEN,
                "{name}: a SHA-512 client proof"
            );
        }
    }
}

pub(super) fn authenticate_response(c: &Captured) {
    let name = &c.name;
    let m: SaslAuthenticateResponse = round_trip(c);
    // On success the broker writes an empty error message, not a null one.
    assert_eq!(
        (m.error_code, m.error_message.as_deref()),
        (0, Some("")),
        "{name}"
    );
    // The broker's connections.max.reauth.ms is 0 (the default): no re-authentication.
    if c.version() >= 1 {
        assert_eq!(m.session_lifetime_ms, 0, "{name}: session lifetime");
    }
    match step(c) {
        Step::Plain => assert!(m.auth_bytes.is_empty(), "{name}: PLAIN has no answer"),
        Step::ScramFirst => {
            let message = text(c, &m.auth_bytes);
            let attrs = attributes(c, message);
            let keys: Vec<&str> = attrs.iter().map(|(k, _)| *k).collect();
            assert_eq!(keys, ["r", "s", "i"], "{name}: {message:?}");
            assert!(!attribute(c, &attrs, "s").is_empty(), "{name}: salt");
            assert_eq!(attribute(c, &attrs, "i"), SCRAM_ITERATIONS, "{name}");
        }
        Step::ScramFinal => {
            let message = text(c, &m.auth_bytes);
            let signature = message
                .strip_prefix("v=")
                .unwrap_or_else(|| panic!("{name}: server-final {message:?}"));
            assert_eq!(
                signature.len(),
                SHA512_BASE64_LEN,
                "{name}: a SHA-512 server signature"
            );
        }
    }
}

/// Each client logged in with both mechanisms, at one handshake version; each SCRAM login's
/// nonces hang together: the server's nonce starts with the client's, the client-final repeats
/// the server's.
#[test]
fn each_clients_sasl_logins_hang_together() {
    for client in ["java-", "librdkafka-"] {
        let files: Vec<Captured> = captured(client)
            .into_iter()
            .filter(|c| c.scenario == "sasl")
            .collect();
        let mechanisms: Vec<&str> = files
            .iter()
            .filter(|c| c.api_key() == ApiKey::SaslHandshake && c.is_request())
            .map(mechanism)
            .collect();
        assert_eq!(
            mechanisms,
            ["PLAIN", "SCRAM-SHA-512"],
            "{client}: SaslHandshake requests"
        );
        let scram = |s: Step, request: bool| -> &Captured {
            files
                .iter()
                .find(|c| {
                    c.api_key() == ApiKey::SaslAuthenticate
                        && c.is_request() == request
                        && step(c) == s
                })
                .unwrap_or_else(|| panic!("{client}: no SCRAM {s:?} (request: {request})"))
        };
        let nonce = |c: &Captured, bytes: &Bytes| -> String {
            let message = text(c, bytes);
            let message = message.strip_prefix("n,,").unwrap_or(message);
            attribute(c, &attributes(c, message), "r").to_string()
        };
        let first = scram(Step::ScramFirst, true);
        let client_nonce = nonce(
            first,
            &round_trip::<SaslAuthenticateRequest>(first).auth_bytes,
        );
        let answer = scram(Step::ScramFirst, false);
        let server_nonce = nonce(
            answer,
            &round_trip::<SaslAuthenticateResponse>(answer).auth_bytes,
        );
        assert!(
            server_nonce.len() > client_nonce.len() && server_nonce.starts_with(&client_nonce),
            "{client}: server nonce {server_nonce:?} after client nonce {client_nonce:?}"
        );
        let last = scram(Step::ScramFinal, true);
        let final_nonce = nonce(
            last,
            &round_trip::<SaslAuthenticateRequest>(last).auth_bytes,
        );
        assert_eq!(final_nonce, server_nonce, "{client}: client-final nonce");
    }
}
