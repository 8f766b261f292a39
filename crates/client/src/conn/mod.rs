//! Broker connections: TCP (and TLS), ApiVersions negotiation, SASL, and the pool that keeps one
//! connection per broker with reconnect back-off, and a second one to a group's coordinator for
//! JoinGroup and SyncGroup ([`ConnectionKind`]).
//!
//! A connection is made in this order (<https://kafka.apache.org/protocol#protocol_network>):
//! TCP connect (bounded by `socket.connection.setup.timeout.ms`), the TLS handshake when
//! `security.protocol` says so, ApiVersions (KIP-35) at our highest version, falling back as KIP-511
//! says when the broker answers UNSUPPORTED_VERSION, then SASL when configured. Every later request
//! on the connection uses the highest version both sides support ([`Connection::version`]).
//!
//! A failure of the connection's security is fatal, not a network error: SASL refused
//! ([`Error::Authentication`]) or a TLS handshake that TLS itself failed ([`Error::Tls`]: a
//! certificate that does not verify, ours refused). The pool remembers it and connects no more
//! (the pool); everything that needs a connection gets it at once, and the consumer ends with it.
//! A handshake that the network cuts (reset, end of stream, timeout) is an I/O error like any
//! other and retried.

mod backoff;
mod connection;
pub mod memory;
mod pending;
mod pool;
pub(crate) mod sasl;
pub(crate) mod scram;
mod task;
pub(crate) mod tls;
mod versions;

use std::sync::Arc;
use std::time::Duration;

use mooring_wire::error_code::ErrorCode;
use mooring_wire::frame::decode_response;
use mooring_wire::messages::{ApiVersionsRequest, ApiVersionsResponse, Message};
use tokio::net::TcpStream;

pub use backoff::Backoff;
pub(crate) use connection::ConnSettings;
pub use connection::Connection;
pub use memory::{FrameMemory, MAP_GRAIN};
pub use pool::ConnectionKind;
pub(crate) use pool::Pool;
pub use versions::VersionTable;

use crate::config::{split_host_port, ClientConfig, SaslSettings};
use crate::error::{Error, Result};

/// Everything needed to open a connection, derived once from a [`ClientConfig`].
#[derive(Debug, Clone)]
pub(crate) struct ConnectOptions {
    pub settings: ConnSettings,
    pub setup_timeout: Duration,
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub sasl: Option<SaslSettings>,
    /// Who this client is, for the security errors ([`ClientConfig::principal`]).
    pub principal: Arc<str>,
}

impl ConnectOptions {
    /// Reads TLS files and checks the settings.
    pub fn from_config(config: &ClientConfig) -> Result<ConnectOptions> {
        let tls = if config.security_protocol.uses_tls() {
            Some(tls::client_config(&config.tls)?)
        } else {
            None
        };
        let sasl = config
            .security_protocol
            .uses_sasl()
            .then(|| config.sasl.clone());
        Ok(ConnectOptions {
            settings: ConnSettings {
                client_id: Arc::from(config.client_id.as_str()),
                request_timeout: config.request_timeout,
                max_frame_size: config.max_frame_size,
                max_in_flight: config.max_in_flight,
                frame_memory: None,
            },
            setup_timeout: config.connection_setup_timeout,
            tls,
            sasl,
            principal: Arc::from(config.principal()),
        })
    }
}

/// Opens, negotiates and authenticates a connection to `address` (`host:port`). `broker` names it
/// in errors.
pub(crate) async fn connect(
    address: &str,
    broker: String,
    opts: &ConnectOptions,
) -> Result<Connection> {
    let Some((host, _)) = split_host_port(address) else {
        return Err(Error::Config {
            key: "bootstrap.servers".into(),
            message: format!("`{address}` is not host:port"),
        });
    };
    let tcp = match tokio::time::timeout(opts.setup_timeout, TcpStream::connect(address)).await {
        Ok(Ok(tcp)) => tcp,
        Ok(Err(e)) => {
            return Err(Error::Io {
                broker,
                source: Arc::new(e),
            })
        }
        Err(_) => {
            return Err(Error::Timeout {
                api: "connect",
                broker,
                after: opts.setup_timeout,
            })
        }
    };
    let _ = tcp.set_nodelay(true);
    let conn = match &opts.tls {
        Some(config) => {
            let stream = match tokio::time::timeout(
                opts.setup_timeout,
                tls::handshake(Arc::clone(config), host, tcp, &broker, &opts.principal),
            )
            .await
            {
                Ok(stream) => stream?,
                Err(_) => {
                    return Err(Error::Timeout {
                        api: "TLS handshake",
                        broker,
                        after: opts.setup_timeout,
                    })
                }
            };
            Connection::spawn(stream, broker, opts.settings.clone())
        }
        None => Connection::spawn(tcp, broker, opts.settings.clone()),
    };
    let versions = negotiate(&conn).await?;
    conn.set_versions(versions);
    if let Some(sasl) = &opts.sasl {
        sasl::authenticate(&conn, sasl, &opts.principal).await?;
    }
    Ok(conn)
}

/// ApiVersions at our highest version; on UNSUPPORTED_VERSION the broker answers in v0 and lists
/// its own ApiVersions range (KIP-511), and we ask again at its highest (v0 if it lists none).
async fn negotiate(conn: &Connection) -> Result<VersionTable> {
    let mut version = ApiVersionsRequest::MAX_VERSION;
    for _ in 0..3 {
        let frame = conn
            .send_frame(&crate::requests::api_versions(version), version)
            .await?;
        let decoded = decode_response::<ApiVersionsResponse>(&frame, version)
            .or_else(|e| decode_response::<ApiVersionsResponse>(&frame, 0).map_err(|_| e));
        let response = match decoded {
            Ok((_, response)) => response,
            Err(source) => {
                return Err(Error::Decode {
                    api: ApiVersionsRequest::NAME,
                    broker: conn.broker().to_string(),
                    source,
                })
            }
        };
        match ErrorCode::from(response.error_code) {
            ErrorCode::None => {
                tracing::debug!(broker = conn.broker(), version, "ApiVersions negotiated");
                return Ok(VersionTable::new(
                    response
                        .api_keys
                        .iter()
                        .map(|k| (k.api_key, k.min_version, k.max_version)),
                ));
            }
            ErrorCode::UnsupportedVersion => {
                let broker_max = response
                    .api_keys
                    .iter()
                    .find(|k| k.api_key == ApiVersionsRequest::API_KEY)
                    .map(|k| k.max_version)
                    .unwrap_or(0);
                let next = broker_max.min(version - 1).max(0);
                if next == version || version == 0 {
                    break;
                }
                version = next;
            }
            code => {
                return Err(Error::Broker {
                    api: ApiVersionsRequest::NAME,
                    code,
                    message: None,
                })
            }
        }
    }
    Err(Error::UnsupportedVersion {
        api: ApiVersionsRequest::NAME,
        broker: conn.broker().to_string(),
    })
}
