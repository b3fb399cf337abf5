//! A file's bytes as text: the size limits, the binary check and the encoding.

use encoding_rs::{Encoding, UTF_8};

use super::html;

/// The largest PDF cairn reads: 256 MiB. A PDF's bytes are mostly images and fonts, which are
/// never decoded, so an illustrated manual is far larger than its text.
pub const MAX_PDF_BYTES: u64 = 256 << 20;

pub(super) const BINARY: &str = "looks like a binary file, not text";

/// A text file's characters. The encoding is the one its byte order mark names; else, for
/// HTML, the one its `<meta charset>` declares; else UTF-8 when the bytes are UTF-8; else
/// chardetng's guess (a legacy encoding such as windows-1252). A file that looks binary is
/// refused.
pub(super) fn decode(bytes: &[u8], html: bool) -> std::result::Result<String, String> {
    let bom = Encoding::for_bom(bytes);
    // UTF-16 is full of NUL bytes; any other text is not.
    if !bom.is_some_and(|(encoding, _)| encoding != UTF_8) && looks_binary(bytes) {
        return Err(BINARY.into());
    }
    let (encoding, bom_length) = bom.unwrap_or_else(|| {
        let declared = if html {
            html::declared_encoding(bytes)
        } else {
            None
        };
        let encoding = declared.unwrap_or_else(|| {
            if std::str::from_utf8(bytes).is_ok() {
                UTF_8
            } else {
                let mut detector = chardetng::EncodingDetector::new();
                detector.feed(bytes, true);
                detector.guess(None, true)
            }
        });
        (encoding, 0)
    });
    Ok(encoding
        .decode_without_bom_handling(&bytes[bom_length..])
        .0
        .into_owned())
}

/// Whether the first 8 KiB hold a NUL byte, or more than one control character in ten (other
/// than tab, line feed, form feed and carriage return): no text encoding makes those.
pub(super) fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    let controls = head
        .iter()
        .filter(|&&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | 0x0c | b'\r')) || b == 0x7f)
        .count();
    head.contains(&0) || controls * 10 > head.len()
}
