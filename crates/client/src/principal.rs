//! Who this client is to the broker's authenticator and authorizer, as the security errors name
//! it: the principal an operator grants ACLs to (Kafka's `User:` principals), derived from the
//! configuration alone, never from a secret.
//!
//! - SASL PLAIN and SCRAM: `User:<sasl.username>`, the principal Kafka's default principal
//!   builder makes of it.
//! - SASL OAUTHBEARER: the token's subject, which this client does not read: said as such.
//! - TLS with a client certificate: the broker takes the certificate's subject; this client
//!   names the certificate file instead of decoding it.
//! - PLAINTEXT, or TLS without a client certificate: `User:ANONYMOUS`, as Kafka.

use crate::config::{ClientConfig, SaslMechanism, SecurityProtocol};

impl ClientConfig {
    /// The principal this client presents, as the security errors name it (never a secret):
    /// `User:<sasl.username>` for SASL PLAIN and SCRAM (what Kafka's default principal builder
    /// makes of it); for OAUTHBEARER the token's subject, which this client does not read; for
    /// TLS with a client certificate the certificate file (the broker takes its subject, which
    /// this client does not decode); `User:ANONYMOUS` for PLAINTEXT and TLS without one.
    pub fn principal(&self) -> String {
        if self.security_protocol.uses_sasl() {
            return match (self.sasl.mechanism, &self.sasl.username) {
                (Some(SaslMechanism::OAuthBearer), _) => {
                    "the subject of the OAUTHBEARER token".into()
                }
                (_, Some(user)) => format!("User:{user}"),
                (_, None) => "a SASL user without a name".into(),
            };
        }
        match (self.security_protocol, &self.tls.certificate_location) {
            (SecurityProtocol::Ssl, Some(certificate)) => {
                format!("the TLS client of certificate {}", certificate.display())
            }
            _ => "User:ANONYMOUS".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::ClientConfig;

    fn principal(props: &[(&str, &str)]) -> String {
        let mut all = vec![("bootstrap.servers", "127.0.0.1:9092")];
        all.extend_from_slice(props);
        ClientConfig::from_properties(all.into_iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .map(|c| c.principal())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn principals_by_security_protocol() {
        assert_eq!(principal(&[]), "User:ANONYMOUS");
        assert_eq!(
            principal(&[
                ("security.protocol", "SASL_PLAINTEXT"),
                ("sasl.mechanism", "SCRAM-SHA-512"),
                ("sasl.username", "alice"),
                ("sasl.password", "alice-secret"),
            ]),
            "User:alice"
        );
        assert_eq!(principal(&[("security.protocol", "SSL")]), "User:ANONYMOUS");
    }
}
