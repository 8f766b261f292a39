//! A minimal HTTP/1.1 client for one job: POST a body to a plain-`http://` localhost endpoint
//! (with the sidecar's bearer credential, when it has one) and read the status (RFC 9112). One
//! connection per request (`Connection: close`), every step under one deadline, so a sidecar
//! that accepts and never answers costs one timeout, never a hang.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An `http://host:port/path` endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `host:port` to connect to (and send as `Host`).
    pub authority: String,
    /// The request target, starting with `/`.
    pub path: String,
}

impl Endpoint {
    /// Parses `http://host[:port][/path]` (port 80 by default, path `/` by default). `https` is
    /// refused: the sidecar is on localhost.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("`{url}`: only http:// endpoints are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(format!("`{url}`: no host"));
        }
        let authority = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.contains(']'))
        {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        Ok(Endpoint {
            authority,
            path: path.to_string(),
        })
    }

    /// Parses `url` and refuses a host other than loopback (`localhost`, `127.0.0.0/8`, `::1`)
    /// unless `allow_remote`: telemetry goes in plain text.
    pub fn checked(url: &str, allow_remote: bool) -> Result<Endpoint, String> {
        let endpoint = Endpoint::parse(url)?;
        if !allow_remote && !endpoint.is_loopback() {
            return Err(format!(
                "`{url}` is not on loopback; telemetry travels in plain HTTP, so set \
                 mooring.telemetry.endpoint.allow.remote = true to send it across the network"
            ));
        }
        Ok(endpoint)
    }

    /// Whether the host is `localhost` or a loopback address.
    pub fn is_loopback(&self) -> bool {
        let host = self
            .authority
            .rsplit_once(':')
            .map_or(self.authority.as_str(), |(h, _)| h);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// Why a POST failed.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// Connecting, writing or reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The whole exchange took longer than the timeout.
    #[error("timed out")]
    Timeout,
    /// The answer was not HTTP.
    #[error("malformed response")]
    Malformed,
}

/// One POST: where, what, and the bearer token if the endpoint wants one.
#[derive(Debug, Clone, Copy)]
pub struct Post<'a> {
    /// Where.
    pub endpoint: &'a Endpoint,
    /// The body's `Content-Type`.
    pub content_type: &'a str,
    /// The body.
    pub body: &'a [u8],
    /// Sent as `Authorization: Bearer <token>`.
    pub token: Option<&'a str>,
}

/// POSTs and returns the response status.
pub async fn post(request: Post<'_>, timeout: Duration) -> Result<u16, PostError> {
    tokio::time::timeout(timeout, exchange(request))
        .await
        .map_err(|_| PostError::Timeout)?
}

async fn exchange(request: Post<'_>) -> Result<u16, PostError> {
    let Post {
        endpoint,
        content_type,
        body,
        token,
    } = request;
    let mut stream = TcpStream::connect(&endpoint.authority).await?;
    stream.set_nodelay(true)?;
    let authorization = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{authorization}Connection: close\r\n\r\n",
        endpoint.path,
        endpoint.authority,
        content_type,
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await?;
    // The status line is all we need; read until it is complete (bounded).
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 256];
    while !buf.windows(2).any(|w| w == b"\r\n") {
        if buf.len() > 4096 {
            return Err(PostError::Malformed);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(PostError::Malformed);
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
    status(&buf).ok_or(PostError::Malformed)
}

/// The status code of `HTTP/1.x NNN ...`.
fn status(response: &[u8]) -> Option<u16> {
    let line = response.split(|&b| b == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split(' ');
    if !parts.next()?.starts_with("HTTP/1.") {
        return None;
    }
    parts.next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse() {
        let e = Endpoint::parse("http://127.0.0.1:9464/v1/events").expect("valid");
        assert_eq!(e.authority, "127.0.0.1:9464");
        assert_eq!(e.path, "/v1/events");
        let e = Endpoint::parse("http://localhost").expect("valid");
        assert_eq!(e.authority, "localhost:80");
        assert_eq!(e.path, "/");
        assert!(Endpoint::parse("https://x/").is_err());
        assert!(Endpoint::parse("http:///x").is_err());
    }

    #[test]
    fn loopback_hosts() {
        for url in [
            "http://127.0.0.1:9464/",
            "http://[::1]:1/",
            "http://LOCALHOST",
            "http://127.9.9.9:80/",
        ] {
            assert!(Endpoint::parse(url).expect(url).is_loopback(), "{url}");
        }
        for url in [
            "http://10.0.0.1:9464/",
            "http://sidecar:9464/",
            "http://[::2]:1/",
            "http://0.0.0.0:1/",
        ] {
            assert!(!Endpoint::parse(url).expect(url).is_loopback(), "{url}");
            assert!(Endpoint::checked(url, false).is_err(), "{url}");
            assert!(Endpoint::checked(url, true).is_ok(), "{url}");
        }
    }

    #[test]
    fn status_lines() {
        assert_eq!(status(b"HTTP/1.1 202 Accepted\r\n"), Some(202));
        assert_eq!(status(b"SSH-2.0\r\n"), None);
    }
}
