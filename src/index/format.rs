//! The index file: one binary file, the same bytes on every target.
//!
//! ```text
//! offset  size  field
//! 0       8     magic "CAIRNIDX"
//! 8       4     format version, u32 little-endian
//! 12      8     payload length in bytes, u64 little-endian
//! 20      n     payload: the `Index` in postcard encoding (varint integers)
//! 20+n    4     CRC-32 (IEEE) of the payload, u32 little-endian
//! ```
//!
//! Reading checks each field in turn and says which one is wrong, so a truncated download, a
//! damaged file or a file that is not an index gives a clear error, never a panic.
//! `docs/index-format.md` describes the payload.

use crate::error::{Error, Result};
use crate::index::Index;

pub const MAGIC: &[u8; 8] = b"CAIRNIDX";
pub const FORMAT_VERSION: u32 = 6;
const HEADER_LEN: usize = 20;
const TRAILER_LEN: usize = 4;

/// Serializes an index to the bytes of an index file.
pub fn write(index: &Index) -> Result<Vec<u8>> {
    let payload = postcard::to_allocvec(index)
        .map_err(|e| Error::InvalidIndex(format!("could not encode the index: {e}")))?;
    Ok(seal(MAGIC, &payload))
}

/// Wraps a payload in the envelope: magic, version, length, payload, CRC-32.
pub(crate) fn seal(magic: &[u8; 8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len() + TRAILER_LEN);
    out.extend_from_slice(magic);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out
}

/// The payload of an envelope `seal` wrote with `magic`, each field checked in turn; `noun`
/// names the file in errors ("index" or "split-build part").
pub(crate) fn open<'a>(magic: &[u8; 8], bytes: &'a [u8], noun: &str) -> Result<&'a [u8]> {
    let rebuild = if magic == MAGIC {
        "`cairn index`"
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
    if version != FORMAT_VERSION {
        return Err(Error::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
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
    let actual = crc32fast::hash(payload);
    if stored != actual {
        return Err(Error::InvalidIndex(format!(
            "the {noun} file is damaged (checksum {actual:08x}, expected {stored:08x}); download or build it again"
        )));
    }
    Ok(payload)
}

/// Reads an index from the bytes of an index file, checking everything it can.
pub fn read(bytes: &[u8]) -> Result<Index> {
    let payload = open(MAGIC, bytes, "index")?;
    let mut index: Index = postcard::from_bytes(payload).map_err(|e| {
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
