//! A minimal keep-alive HTTP/1.1 client (the sidecar answers with Content-Length): the posts
//! and scrapes are timed from the request's first byte written to the answer's last byte read,
//! with no client library's own work in the figures.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::Error;

/// One keep-alive connection to the sidecar, opened on first use and again after a failure.
pub struct Conn {
    addr: SocketAddr,
    stream: Option<BufReader<TcpStream>>,
}

impl Conn {
    pub fn new(addr: SocketAddr) -> Conn {
        Conn { addr, stream: None }
    }

    /// One request; the body of a 2xx answer, or an error naming the status.
    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> Result<Vec<u8>, Error> {
        let result = self.try_request(method, path, body, false).await;
        if result.is_err() {
            self.stream = None;
        }
        result
    }

    /// A GET whatever its status (for the `/healthz` peer: only its latency matters).
    pub async fn get_any(&mut self, path: &str) -> Result<Vec<u8>, Error> {
        let result = self.try_request("GET", path, &[], true).await;
        if result.is_err() {
            self.stream = None;
        }
        result
    }

    async fn try_request(
        &mut self,
        method: &str,
        path: &str,
        body: &[u8],
        any_status: bool,
    ) -> Result<Vec<u8>, Error> {
        if self.stream.is_none() {
            let s = TcpStream::connect(self.addr).await?;
            s.set_nodelay(true)?;
            self.stream = Some(BufReader::new(s));
        }
        let stream = self.stream.as_mut().ok_or("not connected")?;
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        if !body.is_empty() {
            head.push_str(&format!(
                "Content-Type: application/x-ndjson\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        head.push_str("\r\n");
        stream.get_mut().write_all(head.as_bytes()).await?;
        if !body.is_empty() {
            stream.get_mut().write_all(body).await?;
        }
        let mut line = String::new();
        if stream.read_line(&mut line).await? == 0 {
            return Err("connection closed".into());
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line {line:?}"))?;
        let mut length = None;
        loop {
            line.clear();
            if stream.read_line(&mut line).await? == 0 {
                return Err("connection closed in the headers".into());
            }
            let h = line.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((name, value)) = h.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let length = length.ok_or("no Content-Length in the answer")?;
        let mut out = vec![0; length];
        stream.read_exact(&mut out).await?;
        if !any_status && !(200..300).contains(&status) {
            return Err(format!(
                "{method} {path}: HTTP {status}: {}",
                String::from_utf8_lossy(&out)
            )
            .into());
        }
        Ok(out)
    }
}

/// Waits until `addr` accepts a connection, for at most `limit`.
pub async fn wait_connectable(addr: SocketAddr, limit: Duration) -> Result<(), Error> {
    let deadline = Instant::now() + limit;
    loop {
        match TcpStream::connect(addr).await {
            Ok(_) => return Ok(()),
            Err(e) if Instant::now() >= deadline => {
                return Err(format!("{addr} not reachable: {e}").into())
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}
