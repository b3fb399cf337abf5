//! The envelope every cairn file is written in (the index file, a fragmented index's meta and
//! fragments, a split build's part): magic, version, payload length, payload, CRC-32; and the
//! compression and checksums inside it. `index::format` describes the index file's fields.
//! Reading checks each field in turn and says which is wrong, so a truncated download, a
//! damaged file or a file that is not cairn's gives a clear error, never a panic.

use crate::error::{Error, Result};

/// The index file's magic (`index::format`).
pub const MAGIC: &[u8; 8] = b"CAIRNIDX";
/// A fragmented index's meta file and its fragments (`fragment`).
pub const META_MAGIC: &[u8; 8] = b"CAIRNMTA";
pub const FRAGMENT_MAGIC: &[u8; 8] = b"CAIRNFRG";
pub const FORMAT_VERSION: u32 = 16;
/// The fragmented layout's version (its meta and fragments), which changes apart from the
/// index file's so that a change to one leaves the other's files readable.
pub const FRAGMENTS_VERSION: u32 = 18;

/// The version an envelope with `magic` is written and read at.
fn version(magic: &[u8; 8]) -> u32 {
    if magic == META_MAGIC || magic == FRAGMENT_MAGIC {
        FRAGMENTS_VERSION
    } else {
        FORMAT_VERSION
    }
}
const HEADER_LEN: usize = 20;
const TRAILER_LEN: usize = 4;
/// The most a payload may inflate to: 1 GiB, the most the wasm module takes as bytes.
pub const MAX_INFLATED: u64 = 1 << 30;
/// Deflate never shrinks data by more than about 1,032 to 1, so a payload that claims more is
/// damaged or crafted, and is refused before anything is inflated.
const MAX_RATIO: u64 = 1032;

/// What `compress` writes: a raw deflate stream (an index file's payload) or gzip (a fragment,
/// written natively only).
pub enum Stream {
    Deflate,
    #[cfg(not(browser))]
    Gzip,
}

/// `bytes` compressed by libdeflate at its highest level (12), whose near-optimal parse makes
/// an index 3 to 4% smaller than zlib's level 9 and a fragment's postings 15 to 20% smaller;
/// any inflater reads it (the wasm build's miniz_oxide, a browser's DecompressionStream).
#[cfg(not(browser))]
pub fn compress(bytes: &[u8], stream: Stream) -> Vec<u8> {
    use libdeflater::{CompressionLvl, Compressor};
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<Compressor> = std::cell::RefCell::new(Compressor::new(CompressionLvl::best()));
    }
    COMPRESSOR.with_borrow_mut(|compressor| {
        let bound = match stream {
            Stream::Deflate => compressor.deflate_compress_bound(bytes.len()),
            Stream::Gzip => compressor.gzip_compress_bound(bytes.len()),
        };
        let mut out = vec![0; bound];
        let length = match stream {
            Stream::Deflate => compressor.deflate_compress(bytes, &mut out),
            Stream::Gzip => compressor.gzip_compress(bytes, &mut out),
        }
        .expect("the bound fits the output");
        out.truncate(length);
        out
    })
}

/// In the browser (the mutable index's saves and exports) miniz_oxide at its best level: pure
/// Rust, as this target has no C compiler for libdeflate; any inflater reads either.
#[cfg(browser)]
pub fn compress(bytes: &[u8], stream: Stream) -> Vec<u8> {
    match stream {
        Stream::Deflate => miniz_oxide::deflate::compress_to_vec(bytes, 10),
    }
}

/// The postcard bytes of a payload `write` deflated, inflated to at most the length it states.
pub(crate) fn inflate(payload: &[u8]) -> Result<Vec<u8>> {
    let damaged = |why: String| {
        Err(Error::InvalidIndex(format!(
            "the index payload {why}; it is damaged, download or build it again"
        )))
    };
    let Some((len, stream)) = payload.split_first_chunk::<8>() else {
        return damaged("is too short to state its length".into());
    };
    let len = u64::from_le_bytes(*len);
    if len > MAX_INFLATED {
        return damaged(format!(
            "would inflate to {len} bytes, over the {MAX_INFLATED} an index may have"
        ));
    }
    if len > (stream.len() as u64 + 64).saturating_mul(MAX_RATIO) {
        return damaged(format!(
            "claims {len} bytes from {} compressed, more than deflate can give",
            stream.len()
        ));
    }
    match miniz_oxide::inflate::decompress_to_vec_with_limit(stream, len as usize) {
        Ok(out) if out.len() as u64 == len => Ok(out),
        Ok(out) => damaged(format!(
            "inflates to {} bytes, not the {len} it states",
            out.len()
        )),
        Err(e) => damaged(format!(
            "does not inflate to the {len} bytes it states ({e})"
        )),
    }
}

/// The bytes of a gzip member (RFC 1952, as `compress` and every gzip writer give it),
/// inflated to at most `limit` bytes: the size its trailer states (ISIZE) is checked against
/// `limit` before anything is inflated, inflation stops at that size, and the output must be
/// exactly that size and match the trailer's CRC-32. So a bomb costs at most `limit` bytes of
/// memory on every target, however far it would inflate. `what` names it in errors.
pub fn gunzip(bytes: &[u8], limit: usize, what: &str) -> Result<Vec<u8>> {
    let damaged = |why: String| {
        Error::InvalidIndex(format!(
            "{what} is damaged ({why}); build the index again and upload all of it"
        ))
    };
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    if bytes.len() < 18 || bytes[..3] != [0x1f, 0x8b, 8] || bytes[3] & 0xe0 != 0 {
        return Err(damaged("it is not gzip".into()));
    }
    let flags = bytes[3];
    let (body, trailer) = bytes.split_at(bytes.len() - 8);
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let n = body
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
        at += 2 + n.ok_or_else(|| damaged("its header is cut short".into()))?;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let end = body.get(at..).and_then(|b| b.iter().position(|&c| c == 0));
            at += 1 + end.ok_or_else(|| damaged("its header is cut short".into()))?;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    let stream = body
        .get(at..)
        .ok_or_else(|| damaged("its header is cut short".into()))?;
    let crc = u32::from_le_bytes(trailer[..4].try_into().expect("4 bytes"));
    let size = u32::from_le_bytes(trailer[4..].try_into().expect("4 bytes")) as usize;
    if size > limit {
        return Err(damaged(format!(
            "it says it inflates to {size} bytes, over the {limit} it may have"
        )));
    }
    match miniz_oxide::inflate::decompress_to_vec_with_limit(stream, size) {
        Ok(out) if out.len() == size && crc32(&out) == crc => Ok(out),
        Ok(out) if out.len() != size => Err(damaged(format!(
            "it inflates to {} bytes, not the {size} it states",
            out.len()
        ))),
        Ok(_) => Err(damaged("its checksum does not match".into())),
        Err(e) => Err(damaged(format!(
            "it does not inflate to the {size} bytes it states ({e})"
        ))),
    }
}

/// The CRC-32 of `id` (little-endian) followed by `bytes`: a checksum that also says which
/// record the bytes are, so a record read from the wrong place (a shifted range) fails it.
pub(crate) fn crc32_of(id: u64, bytes: &[u8]) -> u32 {
    #[cfg(not(browser))]
    {
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&id.to_le_bytes());
        hasher.update(bytes);
        hasher.finalize()
    }
    #[cfg(browser)]
    {
        let crc = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
        let mut digest = crc.digest();
        digest.update(&id.to_le_bytes());
        digest.update(bytes);
        digest.finalize()
    }
}

/// CRC-32 (IEEE). Natively crc32fast (SIMD for indexes of many megabytes); in wasm the `crc`
/// crate's 1 kB table instead of crc32fast's 16 kB, which every page would download.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    #[cfg(not(browser))]
    return crc32fast::hash(bytes);
    #[cfg(browser)]
    return crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(bytes);
}

/// Wraps a payload in the envelope: magic, version, length, payload, CRC-32.
pub(crate) fn seal(magic: &[u8; 8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len() + TRAILER_LEN);
    out.extend_from_slice(magic);
    out.extend_from_slice(&version(magic).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&crc32(payload).to_le_bytes());
    out
}

/// The payload of an envelope `seal` wrote with `magic`, each field checked in turn; `noun`
/// names the file in errors ("index" or "split-build part").
pub(crate) fn open<'a>(magic: &[u8; 8], bytes: &'a [u8], noun: &str) -> Result<&'a [u8]> {
    let rebuild = if magic == MAGIC {
        "`cairn index`"
    } else if magic == META_MAGIC || magic == FRAGMENT_MAGIC {
        "`cairn index --layout fragments`"
    } else {
        "`cairn index --shard`"
    };
    if bytes.len() < magic.len() || &bytes[..magic.len()] != magic {
        return Err(Error::InvalidIndex(format!(
            "this is not a cairn {noun} (it does not start with {}); build one with {rebuild}",
            String::from_utf8_lossy(magic)
        )));
    }
    if bytes.len() < HEADER_LEN + TRAILER_LEN {
        return Err(truncated(
            noun,
            bytes.len(),
            (HEADER_LEN + TRAILER_LEN) as u64,
        ));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != self::version(magic) {
        return Err(Error::UnsupportedVersion {
            found: version,
            supported: self::version(magic),
        });
    }
    let payload_len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let expected = (HEADER_LEN as u64)
        .saturating_add(payload_len)
        .saturating_add(TRAILER_LEN as u64);
    if (bytes.len() as u64) < expected {
        return Err(truncated(noun, bytes.len(), expected));
    }
    if (bytes.len() as u64) > expected {
        return Err(Error::InvalidIndex(format!(
            "the {noun} file has {} bytes after its end; it is damaged, rebuild it with {rebuild}",
            bytes.len() as u64 - expected
        )));
    }
    let payload = &bytes[HEADER_LEN..HEADER_LEN + payload_len as usize];
    let stored = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().expect("4 bytes"));
    let actual = crc32(payload);
    if stored != actual {
        return Err(Error::InvalidIndex(format!(
            "the {noun} file is damaged (checksum {actual:08x}, expected {stored:08x}); download or build it again"
        )));
    }
    Ok(payload)
}

fn truncated(noun: &str, have: usize, need: u64) -> Error {
    Error::InvalidIndex(format!(
        "the {noun} file is truncated or damaged: it has {have} bytes, its header says {need}; download or build it again"
    ))
}
