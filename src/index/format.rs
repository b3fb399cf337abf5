//! The index file: one binary file, the same bytes on every target.
//!
//! ```text
//! offset  size  field
//! 0       8     magic "CAIRNIDX"
//! 8       4     format version, u32 little-endian
//! 12      8     payload length in bytes, u64 little-endian
//! 20      n     payload: the `Index` in postcard encoding (varint integers), deflated
//! 20+n    4     CRC-32 (IEEE) of the payload, u32 little-endian
//! ```
//!
//! The payload is compressed by cairn itself, as Pagefind's files are: a static host serves a
//! `.cairn` file as it is, so the gzip it would give a `.js` file never happens. It starts with
//! the inflated length (u64 little-endian), then one raw deflate stream (RFC 1951).
//!
//! Reading checks each field in turn and says which one is wrong, so a truncated download, a
//! damaged file or a file that is not an index gives a clear error, never a panic.
//! `docs/index-format.md` describes the payload.

use crate::error::{Error, Result};
use crate::index::Index;

pub const MAGIC: &[u8; 8] = b"CAIRNIDX";
pub const FORMAT_VERSION: u32 = 12;
/// The fragmented layout's version (its meta and fragments), which changes apart from the
/// index file's so that a change to one leaves the other's files readable.
pub const FRAGMENTS_VERSION: u32 = 13;

/// The version an envelope with `magic` is written and read at.
fn version(magic: &[u8; 8]) -> u32 {
    use crate::fragment::{FRAGMENT_MAGIC, META_MAGIC};
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

/// Serializes an index to the bytes of an index file.
#[cfg(not(target_arch = "wasm32"))]
pub fn write(index: &Index) -> Result<Vec<u8>> {
    let encoded = postcard::to_allocvec(index)
        .map_err(|e| Error::InvalidIndex(format!("could not encode the index: {e}")))?;
    let mut payload = (encoded.len() as u64).to_le_bytes().to_vec();
    payload.extend(compress(&encoded, Stream::Deflate));
    Ok(seal(MAGIC, &payload))
}

/// What `compress` writes: a raw deflate stream (an index file's payload) or gzip (a fragment).
#[cfg(not(target_arch = "wasm32"))]
pub enum Stream {
    Deflate,
    Gzip,
}

/// `bytes` compressed by libdeflate at its highest level (12), whose near-optimal parse makes
/// an index 3 to 4% smaller than zlib's level 9 and a fragment's postings 15 to 20% smaller;
/// any inflater reads it (the wasm build's miniz_oxide, a browser's DecompressionStream).
#[cfg(not(target_arch = "wasm32"))]
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

/// The postcard bytes of a payload `write` deflated, inflated to at most the length it states.
fn inflate(payload: &[u8]) -> Result<Vec<u8>> {
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
        Ok(out) => damaged(format!("inflates to {} bytes, not the {len} it states", out.len())),
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
        let n = body.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
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
    let stream = body.get(at..).ok_or_else(|| damaged("its header is cut short".into()))?;
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
        Err(e) => Err(damaged(format!("it does not inflate to the {size} bytes it states ({e})"))),
    }
}

/// The CRC-32 of `id` (little-endian) followed by `bytes`: a checksum that also says which
/// record the bytes are, so a record read from the wrong place (a shifted range) fails it.
pub(crate) fn crc32_of(id: u64, bytes: &[u8]) -> u32 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&id.to_le_bytes());
        hasher.update(bytes);
        hasher.finalize()
    }
    #[cfg(target_arch = "wasm32")]
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
    #[cfg(not(target_arch = "wasm32"))]
    return crc32fast::hash(bytes);
    #[cfg(target_arch = "wasm32")]
    return crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(bytes);
}

/// Wraps a payload in the envelope: magic, version, length, payload, CRC-32. (The wasm build
/// only reads envelopes; its unit tests seal some.)
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
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
    use crate::fragment::{FRAGMENT_MAGIC, META_MAGIC};
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
        return Err(truncated(noun, bytes.len(), (HEADER_LEN + TRAILER_LEN) as u64));
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

/// Reads an index from the bytes of an index file, checking everything it can.
pub fn read(bytes: &[u8]) -> Result<Index> {
    let payload = inflate(open(MAGIC, bytes, "index")?)?;
    let mut index: Index = postcard::from_bytes(&payload).map_err(|e| {
        Error::InvalidIndex(format!(
            "the index payload cannot be decoded ({e}); rebuild it with this version of cairn"
        ))
    })?;
    validate(&index)?;
    index
        .lexical
        .attach_documents(index.chunks.iter().map(|c| c.doc).collect());
    Ok(index)
}

/// Whether an index's settings are numbers its scoring can use: BM25's `k1` finite and at least
/// 0, `b` from 0 to 1 (a crafted file with NaN or negative ones would score every hit 0 in no
/// order). The error says which is out of range.
pub fn settings_in_range(settings: &crate::index::IndexSettings) -> std::result::Result<(), String> {
    let crate::index::lexical::Bm25Params { k1, b } = settings.bm25;
    if !(k1.is_finite() && k1 >= 0.0) || !(0.0..=1.0).contains(&b) {
        return Err(format!("BM25 settings are out of range (k1 {k1}, b {b}: k1 must be finite and at least 0, b from 0 to 1)"));
    }
    Ok(())
}

/// Whether the average chunk and document lengths BM25 divides by are finite and positive (0
/// only for an index with no terms, which nothing divides by).
pub fn lengths_in_range(chunk: f32, document: f32, terms: u64) -> std::result::Result<(), String> {
    let ok = |x: f32| x.is_finite() && (x > 0.0 || (x == 0.0 && terms == 0));
    if !ok(chunk) || !ok(document) {
        return Err(format!("average lengths are out of range ({chunk} a chunk, {document} a document)"));
    }
    Ok(())
}

fn truncated(noun: &str, have: usize, need: u64) -> Error {
    Error::InvalidIndex(format!(
        "the {noun} file is truncated or damaged: it has {have} bytes, its header says {need}; download or build it again"
    ))
}

/// Cross-checks the parts of a decoded index, so that a well-formed but inconsistent file cannot
/// make a search index out of bounds.
fn validate(index: &Index) -> Result<()> {
    let chunks = index.chunks.len();
    let fail = |m: String| {
        Err(Error::InvalidIndex(format!(
            "the index is inconsistent: {m}; rebuild it with `cairn index`"
        )))
    };
    if let Some(chunk) = index
        .chunks
        .iter()
        .find(|c| c.doc as usize >= index.documents.len())
    {
        return fail(format!(
            "chunk {} names document {} of {}",
            chunk.chunk_index,
            chunk.doc,
            index.documents.len()
        ));
    }
    if index.chunks.windows(2).any(|w| w[0].doc > w[1].doc) {
        return fail("chunks are not grouped by document".into());
    }
    if index
        .links
        .iter()
        .any(|l| l.from as usize >= index.documents.len() || l.to as usize >= index.documents.len())
    {
        return fail("a link names a document the index does not have".into());
    }
    if let Err(m) = index.lexical.validate(chunks) {
        return fail(m);
    }
    let params = index.lexical.params();
    let bm25 = crate::index::IndexSettings { bm25: params, ..index.settings.clone() };
    if let Err(m) = settings_in_range(&index.settings).and_then(|()| settings_in_range(&bm25)) {
        return fail(m);
    }
    // The documents' average is derived from the chunks' lengths when the index is read.
    let (terms, average) = (index.lexical.term_count() as u64, index.lexical.average_length);
    if let Err(m) = lengths_in_range(average, average, terms) {
        return fail(m);
    }
    if let Some(vectors) = &index.vectors {
        if let Err(m) = vectors.validate(chunks) {
            return fail(m);
        }
    }
    if let Some(rows) = &index.statics {
        if index.vectors.as_ref().map(|v| v.dimension()) != Some(rows.dimension as usize) {
            return fail("the static rows have no vectors of their dimension to search".into());
        }
        if let Err(m) = rows.validate(index.lexical.term_count()) {
            return fail(m);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(bytes: &[u8]) -> String {
        read(bytes).err().expect("refused").to_string()
    }

    /// A payload of `len` stated bytes and the given deflate stream, sealed as an index.
    fn sealed(len: u64, stream: &[u8]) -> Vec<u8> {
        let mut payload = len.to_le_bytes().to_vec();
        payload.extend_from_slice(stream);
        seal(MAGIC, &payload)
    }

    #[test]
    fn a_payload_that_lies_about_its_length_is_refused_before_inflating() {
        let zeros = miniz_oxide::deflate::compress_to_vec(&vec![0u8; 1 << 20], 9);
        for (len, says) in [
            (MAX_INFLATED + 1, "over the"),
            (1 << 29, "more than deflate can give"),
            (1 << 19, "does not inflate"),
            ((1 << 20) + 1, "not the"),
        ] {
            let err = error(&sealed(len, &zeros));
            assert!(err.contains(says), "{len}: {err}");
        }
        let err = error(&seal(MAGIC, &[1, 2, 3]));
        assert!(err.contains("too short"), "{err}");
        let err = error(&sealed(3, b"not deflate"));
        assert!(err.contains("does not inflate"), "{err}");
    }

    #[test]
    fn crc32_is_the_ieee_checksum() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }
}
