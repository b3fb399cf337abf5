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
use crate::store::envelope::{compress, seal, Stream};
use crate::store::envelope::{inflate, open, MAGIC};

/// Serializes an index to the bytes of an index file.
pub fn write(index: &Index) -> Result<Vec<u8>> {
    let encoded = postcard::to_allocvec(index)
        .map_err(|e| Error::InvalidIndex(format!("could not encode the index: {e}")))?;
    let mut payload = (encoded.len() as u64).to_le_bytes().to_vec();
    payload.extend(compress(&encoded, Stream::Deflate));
    Ok(seal(MAGIC, &payload))
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
pub fn settings_in_range(
    settings: &crate::index::IndexSettings,
) -> std::result::Result<(), String> {
    let crate::index::lexical::Bm25Params { k1, b } = settings.bm25;
    if !(k1.is_finite() && k1 >= 0.0) || !(0.0..=1.0).contains(&b) {
        return Err(format!("BM25 settings are out of range (k1 {k1}, b {b}: k1 must be finite and at least 0, b from 0 to 1)"));
    }
    let analyzer = &settings.analyzer;
    if crate::analyze::language::primary_subtag(&analyzer.language)
        .ok()
        .as_ref()
        != Some(&analyzer.language)
    {
        return Err("analyzer's language is not a language code".into());
    }
    if !analyzer.stop_list.windows(2).all(|w| w[0] < w[1]) {
        return Err("stop words are not sorted".into());
    }
    Ok(())
}

/// Whether the average chunk and document lengths BM25 divides by are finite and positive (0
/// only for an index with no terms, which nothing divides by).
pub fn lengths_in_range(chunk: f32, document: f32, terms: u64) -> std::result::Result<(), String> {
    let ok = |x: f32| x.is_finite() && (x > 0.0 || (x == 0.0 && terms == 0));
    if !ok(chunk) || !ok(document) {
        return Err(format!(
            "average lengths are out of range ({chunk} a chunk, {document} a document)"
        ));
    }
    Ok(())
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
    let bm25 = crate::index::IndexSettings {
        bm25: params,
        ..index.settings.clone()
    };
    if let Err(m) = settings_in_range(&index.settings).and_then(|()| settings_in_range(&bm25)) {
        return fail(m);
    }
    // The documents' average is derived from the chunks' lengths when the index is read.
    let (terms, average) = (
        index.lexical.term_count() as u64,
        index.lexical.average_length,
    );
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
    use crate::store::envelope::{crc32, seal, MAX_INFLATED};

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
