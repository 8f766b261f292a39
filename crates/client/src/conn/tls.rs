//! TLS for `security.protocol=SSL|SASL_SSL` with rustls (ring provider).
//!
//! Trust comes from `ssl.ca.location` (PEM) or, when unset, the system's roots. A client
//! certificate (`ssl.certificate.location` + `ssl.key.location`, PEM) enables mutual TLS. The
//! broker's certificate must name the host we connected to unless
//! `ssl.endpoint.identification.algorithm` is empty, as in Java (KIP-294 made `https` the
//! default); the chain is verified either way. PEM is read with rustls-pki-types' parser.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::config::TlsSettings;
use crate::error::{Error, Result};

fn config_error(key: &str, message: String) -> Error {
    Error::Config {
        key: key.into(),
        message,
    }
}

fn read_certs(path: &Path, key: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| config_error(key, format!("{}: {e}", path.display())))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| config_error(key, format!("{}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(config_error(
            key,
            format!("{}: no PEM certificate", path.display()),
        ));
    }
    Ok(certs)
}

/// Builds the rustls client configuration once per client: reads and checks every file, so a bad
/// path or PEM is a [`Error::Config`] at start-up, not at the first connection.
pub fn client_config(settings: &TlsSettings) -> Result<Arc<rustls::ClientConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    match &settings.ca_location {
        Some(path) => {
            for cert in read_certs(path, "ssl.ca.location")? {
                roots
                    .add(cert)
                    .map_err(|e| config_error("ssl.ca.location", e.to_string()))?;
            }
        }
        None => {
            let native = rustls_native_certs::load_native_certs();
            for cert in native.certs {
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                return Err(config_error(
                    "ssl.ca.location",
                    "unset, and no system CA certificates were found".into(),
                ));
            }
        }
    }
    let roots = Arc::new(roots);
    let verifier = WebPkiServerVerifier::builder_with_provider(roots, Arc::clone(&provider))
        .build()
        .map_err(|e| config_error("ssl.ca.location", e.to_string()))?;
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| config_error("security.protocol", e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Verifier {
            inner: verifier,
            verify_hostname: settings.verify_hostname,
        }));
    let config = match (&settings.certificate_location, &settings.key_location) {
        (Some(cert), Some(key)) => {
            let chain = read_certs(cert, "ssl.certificate.location")?;
            let key_der = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| config_error("ssl.key.location", format!("{}: {e}", key.display())))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| config_error("ssl.key.location", e.to_string()))?
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// Wraps the WebPKI verifier; with hostname verification off, a certificate that is valid in every
/// respect but its names is accepted.
#[derive(Debug)]
struct Verifier {
    inner: Arc<WebPkiServerVerifier>,
    verify_hostname: bool,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.verify_hostname => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Runs the TLS handshake over `tcp` for `host`. A failure of TLS itself (rustls's error: a
/// certificate that does not verify, an alert from the broker) is [`Error::Tls`], fatal; the
/// network cutting the handshake (reset, end of stream) is [`Error::Io`], retried.
pub(crate) async fn handshake(
    config: Arc<rustls::ClientConfig>,
    host: &str,
    tcp: TcpStream,
    broker: &str,
    principal: &str,
) -> Result<TlsStream<TcpStream>> {
    let tls_error = |message: String| Error::Tls {
        broker: broker.to_string(),
        principal: principal.to_string(),
        message,
    };
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| tls_error(format!("invalid server name {host:?}: {e}")))?;
    TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(|e| handshake_error(e, broker, &tls_error))
}

/// What a failed handshake's I/O error is: tokio-rustls wraps rustls's own errors in it.
fn handshake_error(e: std::io::Error, broker: &str, tls_error: &impl Fn(String) -> Error) -> Error {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(rustls_error) => tls_error(rustls_error.to_string()),
        None => Error::Io {
            broker: broker.to_string(),
            source: Arc::new(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_certificate_is_tls_and_a_cut_handshake_is_io() {
        let tls_error = |message: String| Error::Tls {
            broker: "b".into(),
            principal: "User:ANONYMOUS".into(),
            message,
        };
        let refused = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
        );
        let error = handshake_error(refused, "b", &tls_error);
        assert!(
            matches!(error, Error::Tls { .. }) && error.is_fatal(),
            "{error:?}"
        );
        assert!(error.to_string().contains("UnknownIssuer"), "{error}");
        let cut = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        let error = handshake_error(cut, "b", &tls_error);
        assert!(
            matches!(error, Error::Io { .. }) && error.is_retriable(),
            "{error:?}"
        );
    }
}
