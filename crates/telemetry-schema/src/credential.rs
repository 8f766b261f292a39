//! The ingest credential's file, as both sides read it: the sidecar makes it
//! (`ingest.token.file`) and requires its token on `POST /v1/events`; the exporter reads it
//! (`mooring.telemetry.token.file`) before each POST and sends it as `Authorization: Bearer`.

use std::io::{self, Read};
use std::path::Path;

/// The most of a token file read: a file someone else wrote must not fill memory.
const MAX_TOKEN_FILE: u64 = 1024;

/// The one token `path` holds, surrounding whitespace trimmed; an empty or oversized file is an
/// error. (A file of at most a kilobyte on the pod's own volume: read without leaving the task.)
pub fn read_token(path: &Path) -> io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_TOKEN_FILE + 1)
        .read_to_string(&mut text)?;
    let token = text.trim();
    if token.is_empty() || text.len() as u64 > MAX_TOKEN_FILE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: a token file holds one token of at most {MAX_TOKEN_FILE} bytes",
                path.display()
            ),
        ));
    }
    Ok(token.to_owned())
}
