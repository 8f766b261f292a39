//! The client side of SCRAM (RFC 5802) with SHA-256 (RFC 7677) and SHA-512, as Kafka uses it
//! (KIP-84): no channel binding (`n,,`), the password as UTF-8 (Kafka's `ScramFormatter` does not
//! apply SASLprep either), `,` and `=` escaped in the user name. Pure: the exchange of messages is
//! driven by [`super::sasl`].

use std::num::NonZeroU32;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use ring::{digest, hmac, pbkdf2};

use crate::config::Secret;

/// The hash a SCRAM mechanism is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScramHash {
    Sha256,
    Sha512,
}

impl ScramHash {
    fn hmac(self) -> hmac::Algorithm {
        match self {
            ScramHash::Sha256 => hmac::HMAC_SHA256,
            ScramHash::Sha512 => hmac::HMAC_SHA512,
        }
    }

    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            ScramHash::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            ScramHash::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }

    fn digest(self) -> &'static digest::Algorithm {
        match self {
            ScramHash::Sha256 => &digest::SHA256,
            ScramHash::Sha512 => &digest::SHA512,
        }
    }

    fn len(self) -> usize {
        match self {
            ScramHash::Sha256 => 32,
            ScramHash::Sha512 => 64,
        }
    }
}

/// Kafka's brokers use 4096 to 16384 iterations; refuse absurd counts a hostile server could use
/// to burn our CPU.
const MAX_ITERATIONS: u32 = 1_000_000;

/// One SCRAM exchange, from client-first to checking the server's signature.
#[derive(Debug)]
pub(crate) struct ScramClient {
    hash: ScramHash,
    password: Secret,
    nonce: String,
    client_first_bare: String,
    server_signature: Option<Vec<u8>>,
}

fn hmac_sign(hash: ScramHash, key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hash.hmac(), key), data)
        .as_ref()
        .to_vec()
}

/// RFC 5802 `saslname`: `=` becomes `=3D` and `,` becomes `=2C`.
fn escape_username(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

/// A fresh client nonce: 24 random bytes, base64 (printable, never `,`).
pub(crate) fn new_nonce() -> Result<String, String> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 24];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| "no system randomness for the SCRAM nonce".to_string())?;
    Ok(B64.encode(bytes))
}

impl ScramClient {
    /// Starts an exchange for `username` with a given client nonce.
    pub fn new(hash: ScramHash, username: &str, password: Secret, nonce: String) -> ScramClient {
        let client_first_bare = format!("n={},r={nonce}", escape_username(username));
        ScramClient {
            hash,
            password,
            nonce,
            client_first_bare,
            server_signature: None,
        }
    }

    /// The client-first message (GS2 header `n,,` and the bare part).
    pub fn client_first(&self) -> String {
        format!("n,,{}", self.client_first_bare)
    }

    /// Reads the server-first message and returns the client-final message with the proof.
    pub fn client_final(&mut self, server_first: &str) -> Result<String, String> {
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for attr in server_first.split(',') {
            match attr.split_once('=') {
                Some(("r", v)) => nonce = Some(v),
                Some(("s", v)) => salt = Some(v),
                Some(("i", v)) => iterations = Some(v),
                Some(("m", _)) => return Err("server requires an unknown SCRAM extension".into()),
                Some(("e", v)) => return Err(format!("server error: {v}")),
                _ => {}
            }
        }
        let nonce = nonce.ok_or("server-first has no nonce")?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err("server nonce does not extend the client nonce".into());
        }
        let salt = B64
            .decode(salt.ok_or("server-first has no salt")?)
            .map_err(|_| "server salt is not base64")?;
        let iterations: u32 = iterations
            .ok_or("server-first has no iteration count")?
            .parse()
            .map_err(|_| "server iteration count is not a number")?;
        let iterations = NonZeroU32::new(iterations)
            .filter(|i| i.get() <= MAX_ITERATIONS)
            .ok_or_else(|| format!("unacceptable iteration count {iterations}"))?;

        let hash = self.hash;
        let mut salted = vec![0u8; hash.len()];
        pbkdf2::derive(
            hash.pbkdf2(),
            iterations,
            &salt,
            self.password.expose().as_bytes(),
            &mut salted,
        );
        let client_key = hmac_sign(hash, &salted, b"Client Key");
        let stored_key = digest::digest(hash.digest(), &client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let client_signature = hmac_sign(hash, stored_key.as_ref(), auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&client_signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hmac_sign(hash, &salted, b"Server Key");
        self.server_signature = Some(hmac_sign(hash, &server_key, auth_message.as_bytes()));
        Ok(format!("{without_proof},p={}", B64.encode(proof)))
    }

    /// Checks the server-final message: the server proved it knows the salted password.
    pub fn verify_server_final(&self, server_final: &str) -> Result<(), String> {
        let expected = self
            .server_signature
            .as_ref()
            .ok_or("server-final before client-final")?;
        for attr in server_final.split(',') {
            match attr.split_once('=') {
                Some(("e", v)) => return Err(format!("server error: {v}")),
                Some(("v", v)) => {
                    let got = B64
                        .decode(v)
                        .map_err(|_| "server signature is not base64")?;
                    return if constant_time_eq(&got, expected) {
                        Ok(())
                    } else {
                        Err("server signature does not verify".into())
                    };
                }
                _ => {}
            }
        }
        Err("server-final has no signature".into())
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// RFC 7677 section 3.
    #[test]
    fn rfc7677_sha256_test_vector() {
        let mut client = ScramClient::new(
            ScramHash::Sha256,
            "user",
            Secret::new("pencil"),
            "rOprNGfwEbeRWgbNEkqO".into(),
        );
        assert_eq!(client.client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
                            s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let client_final = client.client_final(server_first).unwrap();
        assert_eq!(
            client_final,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        client
            .verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        assert!(client
            .verify_server_final("v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .is_err());
        assert!(client.verify_server_final("e=invalid-proof").is_err());
    }

    /// RFC 5802 section 5 gives a SHA-1 example only; check SHA-512 is self-consistent and
    /// differs from SHA-256.
    #[test]
    fn sha512_produces_a_64_byte_proof() {
        let mut client =
            ScramClient::new(ScramHash::Sha512, "u,=x", Secret::new("p"), "abc".into());
        assert_eq!(client.client_first(), "n,,n=u=2C=3Dx,r=abc");
        let fin = client.client_final("r=abcdef,s=c2FsdA==,i=4096").unwrap();
        let proof = fin.rsplit_once("p=").unwrap().1;
        assert_eq!(B64.decode(proof).unwrap().len(), 64);
    }

    #[test]
    fn hostile_server_first_is_refused() {
        let mk = || ScramClient::new(ScramHash::Sha256, "u", Secret::new("p"), "abc".into());
        assert!(mk().client_final("r=xyz,s=c2FsdA==,i=4096").is_err());
        assert!(mk().client_final("r=abc,s=c2FsdA==,i=4096").is_err());
        assert!(mk().client_final("r=abcd,s=c2FsdA==,i=0").is_err());
        assert!(mk().client_final("r=abcd,s=c2FsdA==,i=99999999").is_err());
        assert!(mk().client_final("m=ext,r=abcd,s=c2FsdA==,i=4096").is_err());
        assert!(mk().client_final("r=abcd,s=!!,i=4096").is_err());
        assert!(mk().verify_server_final("v=AAAA").is_err());
    }

    #[test]
    fn nonces_differ() {
        assert_ne!(new_nonce().unwrap(), new_nonce().unwrap());
    }
}
