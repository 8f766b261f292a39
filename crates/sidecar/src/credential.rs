//! The telemetry ingest's credential: a random token in a file that the sidecar and the consumer
//! beside it both read (an `emptyDir` of the pod, mode 0600, both containers one user), sent by
//! the consumer's exporter as `Authorization: Bearer`. Whoever cannot read the file cannot post
//! events, so a stranger that reaches the listener can neither raise nor clear a fatal error nor
//! forge snapshots. A per-pod file rather than a Unix socket: the exporter keeps its plain
//! HTTP/1.1 client, and the same check guards a listener that is not on loopback.

use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use mooring_client::config::Secret;
use mooring_telemetry_schema::read_token;

/// Random bytes in a fresh token (hex-encoded in the file).
const TOKEN_BYTES: usize = 32;

/// The token in `path`, or a fresh one written there (readable by its owner only) when the file
/// is absent. A sidecar restarted beside a running consumer keeps its credential. The file
/// appears whole or not at all (written beside it, then linked into place), so neither a
/// reader nor a sidecar that died halfway sees a partial token.
pub fn load_or_create(path: &Path) -> io::Result<Secret> {
    if path.exists() {
        return read_token(path).map(Secret::new);
    }
    let token = fresh()?;
    let mut draft = path.as_os_str().to_owned();
    draft.push(format!(".{}.new", std::process::id()));
    let draft = PathBuf::from(draft);
    let written = write_private(&draft, &token).and_then(|()| std::fs::hard_link(&draft, path));
    let _ = std::fs::remove_file(&draft);
    match written {
        Ok(()) => Ok(Secret::new(token)),
        // Another sidecar made it meanwhile: that one counts.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => read_token(path).map(Secret::new),
        Err(e) => Err(e),
    }
}

fn write_private(path: &Path, token: &str) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(token.as_bytes())?;
    file.sync_all()
}

fn fresh() -> io::Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
