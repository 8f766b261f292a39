//! Client configuration from Kafka's own property names (`bootstrap.servers`,
//! `request.timeout.ms`, `security.protocol`, `ssl.*`, `sasl.*`, ...), so a user can bring a Java
//! or librdkafka config unchanged.
//!
//! Every key the network client understands is listed once, in [`CLIENT_KEYS`], with its type and
//! default. [`ClientConfig::from_properties`] rejects an unknown key with an [`Error::Config`] that
//! names the nearest valid key, and an ill-typed value with one that names the expected type. The
//! consumer crate extends the table: it parses its own keys, hands the rest to
//! [`ClientConfig::set`] (which answers `Ok(false)` for a key it does not know), and builds its
//! "did you mean" from both tables with [`nearest_key`].
//!
//! Secrets (`sasl.password`, `sasl.jaas.config`, OAUTHBEARER tokens) are held in [`Secret`], whose
//! `Debug` never shows the value.

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};

/// A secret string (password, token). `Debug` and `Display` print `***`; read it with
/// [`Secret::expose`] only where it goes on the wire.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself. Never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Secret {
        Secret(value.into())
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret(value)
    }
}

/// `security.protocol`: how bytes travel and whether SASL authenticates the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecurityProtocol {
    /// Plain TCP.
    #[default]
    Plaintext,
    /// TLS.
    Ssl,
    /// SASL over plain TCP.
    SaslPlaintext,
    /// SASL over TLS.
    SaslSsl,
}

impl SecurityProtocol {
    /// Whether the connection is wrapped in TLS.
    pub fn uses_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    /// Whether the connection authenticates with SASL after ApiVersions.
    pub fn uses_sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }

    fn parse(value: &str) -> Option<SecurityProtocol> {
        match value.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Some(SecurityProtocol::Plaintext),
            "SSL" => Some(SecurityProtocol::Ssl),
            "SASL_PLAINTEXT" => Some(SecurityProtocol::SaslPlaintext),
            "SASL_SSL" => Some(SecurityProtocol::SaslSsl),
            _ => None,
        }
    }
}

/// `sasl.mechanism`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaslMechanism {
    /// RFC 4616.
    Plain,
    /// RFC 5802 / RFC 7677 with SHA-256 (KIP-84).
    ScramSha256,
    /// RFC 5802 with SHA-512 (KIP-84).
    ScramSha512,
    /// RFC 7628 (KIP-255); the token comes from a [`TokenProvider`].
    OAuthBearer,
}

impl SaslMechanism {
    /// Kafka's name for the mechanism, as sent in SaslHandshake.
    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
            SaslMechanism::OAuthBearer => "OAUTHBEARER",
        }
    }

    fn parse(value: &str) -> Option<SaslMechanism> {
        match value.to_ascii_uppercase().as_str() {
            "PLAIN" => Some(SaslMechanism::Plain),
            "SCRAM-SHA-256" => Some(SaslMechanism::ScramSha256),
            "SCRAM-SHA-512" => Some(SaslMechanism::ScramSha512),
            "OAUTHBEARER" => Some(SaslMechanism::OAuthBearer),
            _ => None,
        }
    }
}

/// A boxed future returned by a [`TokenProvider`].
pub type TokenFuture<'a> =
    Pin<Box<dyn Future<Output = std::result::Result<Secret, String>> + Send + 'a>>;

/// Supplies OAUTHBEARER tokens (RFC 7628, KIP-255): called once per connection that
/// authenticates, so it should cache and refresh its token itself. Any
/// `Fn() -> Result<Secret, String>` closure is one.
pub trait TokenProvider: Send + Sync + 'static {
    /// The bearer token to present, or why there is none.
    fn token(&self) -> TokenFuture<'_>;
}

impl<F> TokenProvider for F
where
    F: Fn() -> std::result::Result<Secret, String> + Send + Sync + 'static,
{
    fn token(&self) -> TokenFuture<'_> {
        let token = self();
        Box::pin(async move { token })
    }
}

/// TLS settings (`ssl.*`).
#[derive(Debug, Clone)]
pub struct TlsSettings {
    /// `ssl.ca.location`: PEM file of trusted CA certificates; the system's roots when unset.
    pub ca_location: Option<PathBuf>,
    /// `ssl.certificate.location`: PEM client certificate chain, for mutual TLS.
    pub certificate_location: Option<PathBuf>,
    /// `ssl.key.location`: PEM private key (PKCS#8, PKCS#1 or SEC1) of the client certificate.
    pub key_location: Option<PathBuf>,
    /// `ssl.endpoint.identification.algorithm`: `https` (the default) checks that the broker's
    /// certificate names the host we connected to; empty turns the check off, as in Java.
    pub verify_hostname: bool,
}

impl Default for TlsSettings {
    fn default() -> Self {
        TlsSettings {
            ca_location: None,
            certificate_location: None,
            key_location: None,
            verify_hostname: true,
        }
    }
}

/// SASL settings (`sasl.*`).
#[derive(Clone, Default)]
pub struct SaslSettings {
    /// `sasl.mechanism`.
    pub mechanism: Option<SaslMechanism>,
    /// `sasl.username` (or from `sasl.jaas.config`).
    pub username: Option<String>,
    /// `sasl.password` (or from `sasl.jaas.config`).
    pub password: Option<Secret>,
    /// The OAUTHBEARER token source (set in code: [`ClientConfig::with_token_provider`]).
    pub token_provider: Option<Arc<dyn TokenProvider>>,
}

impl fmt::Debug for SaslSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslSettings")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .field("password", &self.password)
            .field(
                "token_provider",
                &self.token_provider.as_ref().map(|_| "<provider>"),
            )
            .finish()
    }
}

/// What the network client is configured with. Build it from Kafka properties with
/// [`ClientConfig::from_properties`], or start from [`ClientConfig::new`] and set fields.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `bootstrap.servers`: `host:port` pairs tried in order until one answers.
    pub bootstrap_servers: Vec<String>,
    /// `client.id`, sent in every request header.
    pub client_id: String,
    /// `client.rack`.
    pub client_rack: Option<String>,
    /// `request.timeout.ms` (30 000): how long one request may wait for its response.
    pub request_timeout: Duration,
    /// `default.api.timeout.ms` (60 000): how long a look-up with retries (FindCoordinator,
    /// metadata) may take in all.
    pub default_api_timeout: Duration,
    /// `socket.connection.setup.timeout.ms` (10 000): TCP connect and TLS handshake.
    pub connection_setup_timeout: Duration,
    /// `reconnect.backoff.ms` (50): first delay before reconnecting to a broker.
    pub reconnect_backoff: Duration,
    /// `reconnect.backoff.max.ms` (1 000): the delay doubles per failure up to this.
    pub reconnect_backoff_max: Duration,
    /// `retry.backoff.ms` (100): first delay before retrying a retriable look-up.
    pub retry_backoff: Duration,
    /// `retry.backoff.max.ms` (1 000).
    pub retry_backoff_max: Duration,
    /// `metadata.max.age.ms` (300 000): cached metadata older than this is refreshed.
    pub metadata_max_age: Duration,
    /// `receive.message.max.bytes` (100 MiB): the largest response frame accepted, checked before
    /// anything is allocated for it.
    pub max_frame_size: usize,
    /// `max.in.flight.requests.per.connection` (1 000): requests pipelined on one connection.
    pub max_in_flight: usize,
    /// `security.protocol`.
    pub security_protocol: SecurityProtocol,
    /// `ssl.*`.
    pub tls: TlsSettings,
    /// `sasl.*`.
    pub sasl: SaslSettings,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            bootstrap_servers: Vec::new(),
            client_id: "mooring".into(),
            client_rack: None,
            request_timeout: Duration::from_millis(30_000),
            default_api_timeout: Duration::from_millis(60_000),
            connection_setup_timeout: Duration::from_millis(10_000),
            reconnect_backoff: Duration::from_millis(50),
            reconnect_backoff_max: Duration::from_millis(1_000),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_millis(1_000),
            metadata_max_age: Duration::from_millis(300_000),
            max_frame_size: mooring_wire::frame::DEFAULT_MAX_FRAME_SIZE,
            max_in_flight: 1_000,
            security_protocol: SecurityProtocol::Plaintext,
            tls: TlsSettings::default(),
            sasl: SaslSettings::default(),
        }
    }
}

/// The type of a configuration value, as said in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Any string.
    String,
    /// A comma-separated list.
    List,
    /// Milliseconds, a non-negative integer.
    Millis,
    /// A positive integer.
    PositiveInt,
    /// One of the given words (case-insensitive).
    OneOf(&'static [&'static str]),
    /// A path to a file.
    Path,
    /// A secret string.
    Password,
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueKind::String => f.write_str("a string"),
            ValueKind::List => f.write_str("a comma-separated list"),
            ValueKind::Millis => f.write_str("a non-negative integer (milliseconds)"),
            ValueKind::PositiveInt => f.write_str("a positive integer"),
            ValueKind::OneOf(words) => write!(f, "one of {}", words.join(", ")),
            ValueKind::Path => f.write_str("a file path"),
            ValueKind::Password => f.write_str("a password"),
        }
    }
}

/// One configuration key: its Kafka name, type and default.
#[derive(Debug, Clone, Copy)]
pub struct KeySpec {
    /// The property name.
    pub name: &'static str,
    /// Its value's type.
    pub kind: ValueKind,
    /// The default, as a property value (empty: none).
    pub default: &'static str,
}

/// A boolean key's kind.
pub const BOOL: ValueKind = ValueKind::OneOf(&["true", "false"]);

/// A [`KeySpec`] (for the key tables of this crate and the crates above it).
pub const fn key(name: &'static str, kind: ValueKind, default: &'static str) -> KeySpec {
    KeySpec {
        name,
        kind,
        default,
    }
}

/// Every key [`ClientConfig`] understands: the one table of the network client's configuration.
pub const CLIENT_KEYS: &[KeySpec] = &[
    key("bootstrap.servers", ValueKind::List, ""),
    key("client.id", ValueKind::String, "mooring"),
    key("client.rack", ValueKind::String, ""),
    key("request.timeout.ms", ValueKind::Millis, "30000"),
    key("default.api.timeout.ms", ValueKind::Millis, "60000"),
    key(
        "socket.connection.setup.timeout.ms",
        ValueKind::Millis,
        "10000",
    ),
    key("reconnect.backoff.ms", ValueKind::Millis, "50"),
    key("reconnect.backoff.max.ms", ValueKind::Millis, "1000"),
    key("retry.backoff.ms", ValueKind::Millis, "100"),
    key("retry.backoff.max.ms", ValueKind::Millis, "1000"),
    key("metadata.max.age.ms", ValueKind::Millis, "300000"),
    key(
        "receive.message.max.bytes",
        ValueKind::PositiveInt,
        "104857600",
    ),
    key(
        "max.in.flight.requests.per.connection",
        ValueKind::PositiveInt,
        "1000",
    ),
    key(
        "security.protocol",
        ValueKind::OneOf(&["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]),
        "PLAINTEXT",
    ),
    key("ssl.ca.location", ValueKind::Path, ""),
    key("ssl.certificate.location", ValueKind::Path, ""),
    key("ssl.key.location", ValueKind::Path, ""),
    key(
        "ssl.endpoint.identification.algorithm",
        ValueKind::OneOf(&["https", ""]),
        "https",
    ),
    key(
        "sasl.mechanism",
        ValueKind::OneOf(&["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]),
        "",
    ),
    key("sasl.username", ValueKind::String, ""),
    key("sasl.password", ValueKind::Password, ""),
    key("sasl.jaas.config", ValueKind::Password, ""),
];

/// The valid key nearest to `key` among `candidates` (Levenshtein distance, at most about a third
/// of the key's length), for "did you mean" in errors.
pub fn nearest_key<'a>(
    key: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (key.len() / 3).max(3);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(key, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The error for a key no table knows, naming the nearest valid one.
pub fn unknown_key_error<'a>(key: &str, candidates: impl IntoIterator<Item = &'a str>) -> Error {
    let message = match nearest_key(key, candidates) {
        Some(near) => format!("unknown configuration key; did you mean `{near}`?"),
        None => "unknown configuration key".to_string(),
    };
    Error::Config {
        key: key.into(),
        message,
    }
}

fn ill_typed(spec: &KeySpec, value: &str) -> Error {
    let shown = if spec.kind == ValueKind::Password {
        "***"
    } else {
        value
    };
    Error::Config {
        key: spec.name.into(),
        message: format!("`{shown}` is not {}", spec.kind),
    }
}

fn millis(spec: &KeySpec, value: &str) -> Result<Duration> {
    value
        .trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| ill_typed(spec, value))
}

fn positive(spec: &KeySpec, value: &str) -> Result<usize> {
    match value.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(ill_typed(spec, value)),
    }
}

fn non_empty(value: &str) -> Option<String> {
    let v = value.trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// Reads `username="..."` and `password="..."` out of a Java `sasl.jaas.config` line.
fn parse_jaas(value: &str) -> (Option<String>, Option<String>) {
    fn option(value: &str, name: &str) -> Option<String> {
        let mut rest = value;
        while let Some(at) = rest.find(name) {
            let before_ok = at == 0
                || rest[..at]
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_whitespace() || c == ';');
            let after = rest[at + name.len()..].trim_start();
            if before_ok {
                if let Some(after_eq) = after.strip_prefix('=') {
                    let after_eq = after_eq.trim_start();
                    if let Some(quoted) = after_eq.strip_prefix('"') {
                        return quoted.find('"').map(|end| quoted[..end].to_string());
                    }
                    let end = after_eq
                        .find(|c: char| c.is_whitespace() || c == ';')
                        .unwrap_or(after_eq.len());
                    return Some(after_eq[..end].to_string());
                }
            }
            rest = &rest[at + name.len()..];
        }
        None
    }
    (option(value, "username"), option(value, "password"))
}

impl ClientConfig {
    /// Defaults with the given bootstrap servers.
    pub fn new(bootstrap_servers: impl IntoIterator<Item = impl Into<String>>) -> ClientConfig {
        ClientConfig {
            bootstrap_servers: bootstrap_servers.into_iter().map(Into::into).collect(),
            ..ClientConfig::default()
        }
    }

    /// Builds a config from Kafka properties. Unknown keys and ill-typed values are errors naming
    /// the key; the result is [validated](ClientConfig::validate).
    pub fn from_properties(
        props: impl IntoIterator<Item = (String, String)>,
    ) -> Result<ClientConfig> {
        let mut config = ClientConfig::default();
        for (key, value) in props {
            if !config.set(&key, &value)? {
                return Err(unknown_key_error(
                    &key,
                    CLIENT_KEYS.iter().map(|spec| spec.name),
                ));
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// Sets one property: `Ok(true)` if the key is one of [`CLIENT_KEYS`], `Ok(false)` if it is not
    /// a network-client key (the caller decides whether that is an error), `Err` if the value is
    /// ill-typed.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool> {
        let Some(spec) = CLIENT_KEYS.iter().find(|s| s.name == key) else {
            return Ok(false);
        };
        match spec.name {
            "bootstrap.servers" => {
                self.bootstrap_servers = value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
            }
            "client.id" => self.client_id = value.trim().to_string(),
            "client.rack" => self.client_rack = non_empty(value),
            "request.timeout.ms" => self.request_timeout = millis(spec, value)?,
            "default.api.timeout.ms" => self.default_api_timeout = millis(spec, value)?,
            "socket.connection.setup.timeout.ms" => {
                self.connection_setup_timeout = millis(spec, value)?
            }
            "reconnect.backoff.ms" => self.reconnect_backoff = millis(spec, value)?,
            "reconnect.backoff.max.ms" => self.reconnect_backoff_max = millis(spec, value)?,
            "retry.backoff.ms" => self.retry_backoff = millis(spec, value)?,
            "retry.backoff.max.ms" => self.retry_backoff_max = millis(spec, value)?,
            "metadata.max.age.ms" => self.metadata_max_age = millis(spec, value)?,
            "receive.message.max.bytes" => self.max_frame_size = positive(spec, value)?,
            "max.in.flight.requests.per.connection" => self.max_in_flight = positive(spec, value)?,
            "security.protocol" => {
                self.security_protocol =
                    SecurityProtocol::parse(value.trim()).ok_or_else(|| ill_typed(spec, value))?
            }
            "ssl.ca.location" => self.tls.ca_location = non_empty(value).map(PathBuf::from),
            "ssl.certificate.location" => {
                self.tls.certificate_location = non_empty(value).map(PathBuf::from)
            }
            "ssl.key.location" => self.tls.key_location = non_empty(value).map(PathBuf::from),
            "ssl.endpoint.identification.algorithm" => {
                self.tls.verify_hostname = match value.trim().to_ascii_lowercase().as_str() {
                    "https" => true,
                    "" => false,
                    _ => return Err(ill_typed(spec, value)),
                }
            }
            "sasl.mechanism" => {
                self.sasl.mechanism =
                    Some(SaslMechanism::parse(value.trim()).ok_or_else(|| ill_typed(spec, value))?)
            }
            "sasl.username" => self.sasl.username = Some(value.to_string()),
            "sasl.password" => self.sasl.password = Some(Secret::new(value)),
            "sasl.jaas.config" => {
                let (username, password) = parse_jaas(value);
                if username.is_none() && password.is_none() {
                    return Err(Error::Config {
                        key: spec.name.into(),
                        message: "no username=\"...\" password=\"...\" options found".into(),
                    });
                }
                if username.is_some() {
                    self.sasl.username = username;
                }
                if let Some(password) = password {
                    self.sasl.password = Some(Secret::new(password));
                }
            }
            other => {
                return Err(Error::Config {
                    key: other.into(),
                    message: "key is listed but not handled (a bug)".into(),
                })
            }
        }
        Ok(true)
    }

    /// Sets the OAUTHBEARER token source.
    pub fn with_token_provider(mut self, provider: impl TokenProvider) -> ClientConfig {
        self.sasl.token_provider = Some(Arc::new(provider));
        self
    }

    /// Checks that the settings fit together: bootstrap servers present, SASL mechanism and
    /// credentials given when SASL is on, a client key with a client certificate.
    pub fn validate(&self) -> Result<()> {
        let err = |key: &str, message: &str| Error::Config {
            key: key.into(),
            message: message.into(),
        };
        if self.bootstrap_servers.is_empty() {
            return Err(err(
                "bootstrap.servers",
                "at least one host:port is required",
            ));
        }
        for server in &self.bootstrap_servers {
            if split_host_port(server).is_none() {
                return Err(Error::Config {
                    key: "bootstrap.servers".into(),
                    message: format!("`{server}` is not host:port"),
                });
            }
        }
        if self.reconnect_backoff_max < self.reconnect_backoff {
            return Err(err(
                "reconnect.backoff.max.ms",
                "must not be below reconnect.backoff.ms",
            ));
        }
        if self.tls.certificate_location.is_some() != self.tls.key_location.is_some() {
            return Err(err(
                "ssl.key.location",
                "ssl.certificate.location and ssl.key.location go together",
            ));
        }
        if self.security_protocol.uses_sasl() {
            let Some(mechanism) = self.sasl.mechanism else {
                return Err(err(
                    "sasl.mechanism",
                    "required with SASL: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
                ));
            };
            match mechanism {
                SaslMechanism::OAuthBearer => {
                    if self.sasl.token_provider.is_none() {
                        return Err(err(
                            "sasl.mechanism",
                            "OAUTHBEARER needs a token provider (ClientConfig::with_token_provider)",
                        ));
                    }
                }
                _ => {
                    if self.sasl.username.is_none() {
                        return Err(err("sasl.username", "required with this SASL mechanism"));
                    }
                    if self.sasl.password.is_none() {
                        return Err(err("sasl.password", "required with this SASL mechanism"));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Splits `host:port` (or `[v6]:port`) into host and port.
pub(crate) fn split_host_port(address: &str) -> Option<(&str, u16)> {
    let (host, port) = address.rsplit_once(':')?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.is_empty() {
        return None;
    }
    Some((host, port.parse().ok()?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn props(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_kafka_properties() {
        let config = ClientConfig::from_properties(props(&[
            ("bootstrap.servers", "a:9092, b:9093"),
            ("client.id", "svc"),
            ("request.timeout.ms", "1500"),
            ("security.protocol", "sasl_ssl"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            ("sasl.username", "alice"),
            ("sasl.password", "s3cret"),
            ("ssl.endpoint.identification.algorithm", ""),
        ]))
        .unwrap();
        assert_eq!(config.bootstrap_servers, vec!["a:9092", "b:9093"]);
        assert_eq!(config.client_id, "svc");
        assert_eq!(config.request_timeout, Duration::from_millis(1500));
        assert_eq!(config.security_protocol, SecurityProtocol::SaslSsl);
        assert_eq!(config.sasl.mechanism, Some(SaslMechanism::ScramSha512));
        assert!(!config.tls.verify_hostname);
        assert_eq!(config.reconnect_backoff, Duration::from_millis(50));
        assert_eq!(config.reconnect_backoff_max, Duration::from_millis(1000));
    }

    #[test]
    fn unknown_key_names_the_nearest() {
        let err = ClientConfig::from_properties(props(&[
            ("bootstrap.servers", "a:1"),
            ("request.timeout.msx", "5"),
        ]))
        .unwrap_err();
        let Error::Config { key, message } = err else {
            panic!("not a config error")
        };
        assert_eq!(key, "request.timeout.msx");
        assert!(message.contains("`request.timeout.ms`"), "{message}");

        let err = ClientConfig::from_properties(props(&[("bootstrap.server", "a:1")])).unwrap_err();
        assert!(err.to_string().contains("`bootstrap.servers`"), "{err}");

        let err = ClientConfig::from_properties(props(&[("zzz", "a:1")])).unwrap_err();
        assert!(!err.to_string().contains("did you mean"), "{err}");
    }

    #[test]
    fn ill_typed_value_names_key_and_type() {
        let err = ClientConfig::from_properties(props(&[
            ("bootstrap.servers", "a:1"),
            ("reconnect.backoff.ms", "soon"),
        ]))
        .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("reconnect.backoff.ms"), "{text}");
        assert!(text.contains("milliseconds"), "{text}");

        let err = ClientConfig::from_properties(props(&[
            ("bootstrap.servers", "a:1"),
            ("security.protocol", "TLS"),
        ]))
        .unwrap_err();
        assert!(err.to_string().contains("SASL_SSL"), "{err}");
    }

    #[test]
    fn secrets_never_show() {
        let config = ClientConfig::from_properties(props(&[
            ("bootstrap.servers", "a:1"),
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "PLAIN"),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required \
                 username=\"alice\" password=\"hunter2\";",
            ),
        ]))
        .unwrap();
        assert_eq!(config.sasl.username.as_deref(), Some("alice"));
        assert_eq!(
            config.sasl.password.as_ref().map(Secret::expose),
            Some("hunter2")
        );
        let shown = format!("{config:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("***"));
    }

    #[test]
    fn validation() {
        assert!(ClientConfig::from_properties(props(&[])).is_err());
        let err = ClientConfig::from_properties(props(&[
            ("bootstrap.servers", "a:1"),
            ("security.protocol", "SASL_PLAINTEXT"),
        ]))
        .unwrap_err();
        assert!(err.to_string().contains("sasl.mechanism"), "{err}");
        assert!(ClientConfig::from_properties(props(&[("bootstrap.servers", "nohost")])).is_err());
        let mut c = ClientConfig::new(["a:1"]);
        assert!(c.set("group.id", "g").is_ok_and(|known| !known));
        c.validate().unwrap();
    }

    #[test]
    fn host_port() {
        assert_eq!(split_host_port("a.b:9092"), Some(("a.b", 9092)));
        assert_eq!(split_host_port("[::1]:9092"), Some(("::1", 9092)));
        assert_eq!(split_host_port("a"), None);
        assert_eq!(split_host_port(":1"), None);
    }

    #[test]
    fn every_key_is_handled() {
        let mut c = ClientConfig::default();
        for spec in CLIENT_KEYS {
            let value = match spec.kind {
                ValueKind::Millis | ValueKind::PositiveInt => "5",
                ValueKind::OneOf(words) => words[0],
                ValueKind::List => "h:1",
                _ if spec.name == "sasl.jaas.config" => "x required username=\"u\" password=\"p\";",
                _ => "x",
            };
            assert!(c.set(spec.name, value).unwrap(), "{}", spec.name);
        }
    }
}
