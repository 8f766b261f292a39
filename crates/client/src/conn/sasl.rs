//! SASL authentication of a fresh connection (KIP-43, KIP-152): after ApiVersions, a SaslHandshake
//! (v1) names the mechanism and SaslAuthenticate requests carry its messages as ordinary Kafka
//! requests. Mechanisms: PLAIN (RFC 4616), SCRAM-SHA-256/512 (RFC 5802, RFC 7677, KIP-84) and
//! OAUTHBEARER (RFC 7628, KIP-255; the token comes from a [`TokenProvider`]).
//!
//! When the broker limits the session (KIP-368, `connections.max.reauth.ms`), the connection is
//! retired at 85 % of the announced lifetime and the pool authenticates a fresh one, rather than
//! re-authenticating in place.
//!
//! Every failure here is [`Error::Authentication`]: the pool treats it as fatal and does not
//! reconnect. Credentials never reach a log line or an error message.
//!
//! [`TokenProvider`]: crate::config::TokenProvider

use bytes::Bytes;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::SaslHandshakeRequest;

use super::connection::Connection;
use super::scram::{new_nonce, ScramClient, ScramHash};
use crate::config::{SaslMechanism, SaslSettings, Secret};
use crate::error::{Error, Result};
use crate::requests;

/// Authenticates `conn` with the configured mechanism.
/// `principal` names this client in the errors.
pub(crate) async fn authenticate(
    conn: &Connection,
    settings: &SaslSettings,
    principal: &str,
) -> Result<()> {
    let Some(mechanism) = settings.mechanism else {
        return Err(Error::Config {
            key: "sasl.mechanism".into(),
            message: "required with SASL".into(),
        });
    };
    let failed = |code: ErrorCode, message: String| Error::Authentication {
        broker: conn.broker().to_string(),
        mechanism: mechanism.name().to_string(),
        principal: principal.to_string(),
        code,
        message,
    };
    // A failure this client finds itself (a SCRAM signature that does not verify, ...).
    let fail = |message: String| failed(ErrorCode::SaslAuthenticationFailed, message);

    let handshake_version = conn.version::<SaslHandshakeRequest>()?;
    if handshake_version < 1 {
        return Err(fail(
            "the broker offers only SaslHandshake v0 (unframed tokens), which is not supported"
                .into(),
        ));
    }
    let handshake = conn
        .send_at(
            &requests::sasl_handshake(handshake_version, mechanism.name()),
            handshake_version,
        )
        .await?;
    match ErrorCode::from(handshake.error_code) {
        ErrorCode::None => {}
        ErrorCode::UnsupportedSaslMechanism => {
            return Err(failed(
                ErrorCode::UnsupportedSaslMechanism,
                format!(
                    "UNSUPPORTED_SASL_MECHANISM: the broker offers {}",
                    handshake.mechanisms.join(", ")
                ),
            ))
        }
        code => return Err(failed(code, format!("SaslHandshake: {code}"))),
    }

    let username = settings.username.clone().unwrap_or_default();
    let password = settings.password.clone().unwrap_or_default();
    match mechanism {
        SaslMechanism::Plain => {
            let mut message = Vec::with_capacity(username.len() * 2 + password.expose().len() + 2);
            message.push(0);
            message.extend_from_slice(username.as_bytes());
            message.push(0);
            message.extend_from_slice(password.expose().as_bytes());
            exchange(conn, Bytes::from(message), &failed).await?;
        }
        SaslMechanism::ScramSha256 | SaslMechanism::ScramSha512 => {
            let hash = if mechanism == SaslMechanism::ScramSha256 {
                ScramHash::Sha256
            } else {
                ScramHash::Sha512
            };
            let mut scram =
                ScramClient::new(hash, &username, password, new_nonce().map_err(&fail)?);
            let server_first = exchange(conn, Bytes::from(scram.client_first()), &failed).await?;
            let server_first = String::from_utf8(server_first.to_vec())
                .map_err(|_| fail("server-first message is not UTF-8".into()))?;
            let client_final = scram.client_final(&server_first).map_err(&fail)?;
            let server_final = exchange(conn, Bytes::from(client_final), &failed).await?;
            let server_final = String::from_utf8(server_final.to_vec())
                .map_err(|_| fail("server-final message is not UTF-8".into()))?;
            scram.verify_server_final(&server_final).map_err(&fail)?;
        }
        SaslMechanism::OAuthBearer => {
            let Some(provider) = &settings.token_provider else {
                return Err(fail("no token provider".into()));
            };
            let token: Secret = provider
                .token()
                .await
                .map_err(|why| fail(format!("token provider failed: {why}")))?;
            exchange(conn, oauthbearer_initial(&token), &failed).await?;
        }
    }
    tracing::debug!(
        broker = conn.broker(),
        mechanism = mechanism.name(),
        "SASL authenticated"
    );
    Ok(())
}

/// RFC 7628 section 3.1: GS2 header without authzid, then `auth=Bearer <token>`, each key/value
/// ended by ^A and the message by another ^A.
pub(crate) fn oauthbearer_initial(token: &Secret) -> Bytes {
    Bytes::from(format!("n,,\x01auth=Bearer {}\x01\x01", token.expose()))
}

/// One SaslAuthenticate round trip; a broker error is an authentication failure with its code.
async fn exchange(
    conn: &Connection,
    auth_bytes: Bytes,
    fail: &impl Fn(ErrorCode, String) -> Error,
) -> Result<Bytes> {
    let response = conn
        .call(|version| requests::sasl_authenticate(version, auth_bytes))
        .await?;
    match ErrorCode::from(response.error_code) {
        ErrorCode::None => {
            conn.set_session_lifetime(response.session_lifetime_ms);
            Ok(response.auth_bytes)
        }
        code => Err(fail(
            code,
            match response.error_message {
                Some(message) if !message.is_empty() => format!("{code}: {message}"),
                _ => code.to_string(),
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauthbearer_message_format() {
        let message = oauthbearer_initial(&Secret::new("eyJ.x.y"));
        assert_eq!(&message[..], b"n,,\x01auth=Bearer eyJ.x.y\x01\x01");
    }
}
