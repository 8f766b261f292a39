//! Shared by the golden-bytes tests.

use bytes::Bytes;

/// The bytes of an annotated hex file: `#` lines are comments, the rest is hex.
pub fn hex(text: &str) -> Result<Bytes, Box<dyn std::error::Error>> {
    let digits: String = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
        .collect();
    if digits.len() % 2 != 0 {
        return Err("odd number of hex digits".into());
    }
    let out = (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16))
        .collect::<Result<Vec<u8>, _>>()?;
    Ok(Bytes::from(out))
}
