//! Just enough of the ZIP format to read the message schemas out of the kafka-clients jar: the
//! end-of-central-directory record, the central directory, local headers, and the two methods
//! jars use (stored and deflate). No ZIP64, no encryption: a jar of a few MiB needs neither.

use std::io::Read;

fn u16_at(data: &[u8], at: usize) -> Result<u16, String> {
    data.get(at..at + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or_else(|| format!("zip: truncated at offset {at}"))
}

fn u32_at(data: &[u8], at: usize) -> Result<u32, String> {
    data.get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| format!("zip: truncated at offset {at}"))
}

/// Every entry of the archive whose name satisfies `want`, as (name, contents).
pub fn entries(data: &[u8], want: impl Fn(&str) -> bool) -> Result<Vec<(String, Vec<u8>)>, String> {
    const EOCD: u32 = 0x0605_4b50;
    let eocd = (0..data.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(data, i).ok() == Some(EOCD))
        .ok_or("zip: no end of central directory record")?;
    let count = usize::from(u16_at(data, eocd + 10)?);
    let mut at = u32_at(data, eocd + 16)? as usize;
    let mut out = Vec::new();
    for _ in 0..count {
        if u32_at(data, at)? != 0x0201_4b50 {
            return Err(format!("zip: bad central directory entry at {at}"));
        }
        let method = u16_at(data, at + 10)?;
        let compressed = u32_at(data, at + 20)? as usize;
        let name_len = usize::from(u16_at(data, at + 28)?);
        let extra_len = usize::from(u16_at(data, at + 30)?);
        let comment_len = usize::from(u16_at(data, at + 32)?);
        let local = u32_at(data, at + 42)? as usize;
        let name = data
            .get(at + 46..at + 46 + name_len)
            .ok_or("zip: truncated name")?;
        let name = String::from_utf8_lossy(name).into_owned();
        at += 46 + name_len + extra_len + comment_len;
        if !want(&name) {
            continue;
        }
        if u32_at(data, local)? != 0x0403_4b50 {
            return Err(format!("zip: bad local header for {name}"));
        }
        let start = local
            + 30
            + usize::from(u16_at(data, local + 26)?)
            + usize::from(u16_at(data, local + 28)?);
        let raw = data
            .get(start..start + compressed)
            .ok_or_else(|| format!("zip: truncated data for {name}"))?;
        let contents = match method {
            0 => raw.to_vec(),
            8 => {
                let mut out = Vec::new();
                flate2::read::DeflateDecoder::new(raw)
                    .read_to_end(&mut out)
                    .map_err(|e| format!("zip: inflating {name}: {e}"))?;
                out
            }
            m => return Err(format!("zip: {name} uses unsupported method {m}")),
        };
        out.push((name, contents));
    }
    Ok(out)
}
