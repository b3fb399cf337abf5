//! The fragmented index: the same index cut into fragments that a browser fetches only as a
//! query needs them, so a large site costs a search its terms, its hits' text and a few vector
//! partitions rather than the whole index. `write` (native) cuts an `Index` into a meta file and
//! packs of fragments; `load` answers searches from the fragments fetched so far and says which
//! it still needs. `docs/index-format.md` describes the layout.
//!
//! Every fragment is the index file's envelope (`index::format`: magic, version, length, postcard
//! payload, CRC-32) compressed with gzip, in a slot (`unslot`), and names its own number, so a
//! damaged, missing or misplaced fragment is an error for the query that needed it and nothing
//! else.

pub mod load;
#[cfg(not(browser))]
pub mod write;

pub use crate::store::envelope::{FRAGMENT_MAGIC, META_MAGIC};
#[cfg(not(browser))]
pub use crate::store::pack::pack_name;
pub use crate::store::pack::{
    decode_record, encode_record, is_pack_name, record_id, record_length, PACK_DIR,
};

use serde::{Deserialize, Serialize};
use tsify::Tsify;

use crate::hit::{ContextResponse, DocType, DocumentSearchResponse, SearchHit};
use crate::index::vector::ModelIdentity;
use crate::index::{Chunk, DocLink, Document, IndexSettings};

/// The meta file's name, beside the `p/` folder of packs.
pub const META_FILE: &str = "meta.cairn";
/// Text fragments' slots are whole numbers of these bytes, and the meta gives their lengths in
/// these units (see `unslot`).
pub const TEXT_UNIT: u32 = 256;

/// A fragment's gzip bytes out of its slot, as a pack holds them: the gzip bytes, zeros, and in
/// the last two bytes (little-endian) how many bytes follow the gzip bytes, these two included;
/// none if the slot is damaged. A text fragment's slot is padded to a whole number of
/// `TEXT_UNIT` bytes, so the meta gives its length in units: one byte each, where the exact
/// lengths took two and a third of the meta at 100k chunks. Other slots end after the two bytes.
pub fn unslot(slot: &[u8]) -> Option<&[u8]> {
    let [.., low, high] = *slot else { return None };
    let tail = u16::from_le_bytes([low, high]) as usize;
    (tail >= 2 && tail <= slot.len()).then(|| &slot[..slot.len() - tail])
}

/// The file a loader reads first: settings, the tables every query needs, and a directory
/// that finds any fragment without another request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    pub settings: IndexSettings,
    /// SHA-256 (hex) over every fragment: what caches are keyed by.
    pub hash: String,
    /// How many chunks each document has (a document's chunks are numbered together).
    pub document_chunks: Vec<u32>,
    /// Each document's length in terms, and the averages BM25 normalizes by (as the single
    /// file computes them, so scores are the same bits).
    pub document_lengths: Vec<u32>,
    pub average_chunk_length: f32,
    pub average_document_length: f32,
    /// The first term of each term shard, ascending (fragments `0..terms.len()`), and its
    /// number among all the index's terms (what the static rows are keyed by).
    pub terms: Vec<String>,
    pub term_ids: Vec<u32>,
    /// The first word of each word shard, ascending (the fragments after the term shards).
    pub words: Vec<String>,
    /// How many chunks each text fragment holds, in chunk order (the fragments after the word
    /// shards: `text_fragments()`).
    pub text_chunks: Vec<u32>,
    pub vectors: Option<VectorMeta>,
    /// Where the static tier's rows are (their packs are not fragments).
    pub statics: Option<crate::store::rows::StaticRows>,
    /// Pack file names under `p/` (content hashes), and how many fragments each holds: the
    /// fragments are laid end to end, pack after pack, in number order.
    pub packs: Vec<String>,
    pub pack_fragments: Vec<u32>,
    /// Each fragment's slot length: in bytes, except for text fragments (`text_fragments()`),
    /// whose lengths are in `TEXT_UNIT`s.
    pub fragment_lengths: Vec<u32>,
    /// The fields a `filter` can name (the documents' dates, `docType` and metadata keys),
    /// ascending: field i's values are fragment `fields_start() + i`, fetched only by a search
    /// whose filter names it.
    pub fields: Vec<String>,
    /// Whether the dates fragment (after the field fragments) exists: some document is dated.
    pub dates: bool,
    /// How many documents each links fragment covers, in document order (the fragments after
    /// the dates); empty when no document links to another.
    pub link_documents: Vec<u32>,
    /// The most bytes any fragment inflates to (its envelope): what a reader lets a fragment's
    /// gzip inflate to, at most, so a damaged or crafted fragment costs no more memory than the
    /// largest real one.
    pub max_inflated: u32,
}

/// The vector side: IVF centroids in one fragment, then a partition per centroid.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VectorMeta {
    pub model: ModelIdentity,
    pub partitions: u32,
    /// How many codes a query scans when it does not say how many partitions (`probes`): its
    /// nearest partitions until they hold about this many (or twice its candidates, if more),
    /// and at least 4 (`default_probes`).
    pub scan_codes: u32,
}

/// A fragment's bytes: `length` bytes of pack `pack` from `offset`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Address {
    pub pack: u32,
    pub offset: u64,
    pub length: u32,
}

/// What a fragment holds.
#[derive(Debug, Serialize, Deserialize)]
pub enum Payload {
    Terms(TermShard),
    Words(WordShard),
    Text(TextFragment),
    Centroids(Centroids),
    Partition(Partition),
    Field(FieldValues),
    Dates(DocumentDates),
    Links(LinksFragment),
}

/// Each dated document's date (its `updated`, else its `created`) in seconds since 1970, by
/// document (ascending): what `recencyWeight` ages candidates by.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct DocumentDates {
    pub docs: Vec<u32>,
    pub unix_seconds: Vec<i64>,
}

/// Every document's value of one field a `filter` can name, by document (ascending): a
/// filtered search fetches the fragments of the fields it names and masks the same documents
/// as the single file.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct FieldValues {
    pub docs: Vec<u32>,
    /// Each document's value as JSON text.
    pub values: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Fragment {
    /// Its own number, checked against the one asked for.
    pub number: u32,
    pub payload: Payload,
}

/// A range of terms with everything BM25 needs to score them exactly: each posting carries its
/// chunk's length byte, so no per-chunk table is downloaded. The IDFs are not sent: the loader
/// derives them from the postings and the meta's document table, as the single file does when
/// it is read (8 bytes a term, which were a third of a shard of rare terms).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TermShard {
    pub terms: Vec<String>,
    #[serde(skip)]
    pub idf: Vec<f32>,
    #[serde(skip)]
    pub document_idf: Vec<f32>,
    pub postings: Vec<TermPostings>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct TermPostings {
    /// Chunk ids as gaps from the previous one (the first from 0).
    pub chunk_gaps: Vec<u32>,
    pub freqs: Vec<u32>,
    /// The length of each posting's chunk, as the byte BM25 reads it
    /// (`index::lexical::length_byte`).
    pub length_bytes: Vec<u8>,
}

impl TermPostings {
    /// The chunk ids, ascending.
    pub fn chunks(&self) -> impl Iterator<Item = u32> + '_ {
        self.chunk_gaps.iter().scan(0u32, |chunk, &gap| {
            *chunk = chunk.wrapping_add(gap);
            Some(*chunk)
        })
    }
}

/// A range of the indexed words (folded, unstemmed), each with its term and how many chunks
/// hold that term: what prefix completion and typo matching look up.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WordShard {
    pub words: Vec<String>,
    pub terms: Vec<String>,
    pub frequencies: Vec<u32>,
}

/// The chunks `first_chunk..first_chunk + chunks.len()` and their documents. Their links are
/// in links fragments of their own, which only a search that shows links fetches (on a built
/// site, where every page links to dozens and is linked from hundreds, links were four fifths
/// of the text fragments' bytes).
#[derive(Debug, Serialize, Deserialize)]
pub struct TextFragment {
    pub first_chunk: u32,
    pub chunks: Vec<Chunk>,
    /// (document id, document), the summary already resolved (`Index::summary`).
    pub documents: Vec<(u32, Document)>,
}

/// The links of documents `first_document..` (as many as the meta's `link_documents` says):
/// every link out of and into them, and what a link shows of each document at a link's end.
#[derive(Debug, Serialize, Deserialize)]
pub struct LinksFragment {
    pub first_document: u32,
    pub links: Vec<DocLink>,
    pub linked: Vec<(u32, LinkedDocument)>,
}

/// What a link shows of the document at its other end.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinkedDocument {
    pub id: String,
    pub doc_type: DocType,
    pub title: String,
}

/// The IVF coarse centroids, each as its difference from their mean: a binary code (the sign of
/// each component) and a length, so that a query ranks them by
/// `CodeQuery::estimate(q·mean, length, code)` (a 100k-chunk site's 949 centroids, about 47 kB). The mean
/// is what every centroid of a sentence model shares; signs of the differences tell centroids
/// apart where signs of the centroids themselves mostly agree.
#[derive(Debug, Serialize, Deserialize)]
pub struct Centroids {
    /// How many chunks each partition holds.
    pub sizes: Vec<u32>,
    pub mean: Vec<f32>,
    pub lengths: Lengths,
    pub codes: Vec<u8>,
}

/// The chunks nearest one centroid (the int8 `centroid`, `centroid_scale`), each as its
/// difference from the centroid: a binary code and a length, what a query scans with
/// `CodeQuery::estimate(q·centroid, length, code)`. Each chunk's int8 vector (the single file's own
/// bytes) is a record of the partition's records fragment, fetched by range only for the
/// candidates the scan puts first.
#[derive(Debug, Serialize, Deserialize)]
pub struct Partition {
    pub centroid: Vec<i8>,
    pub centroid_scale: f32,
    pub chunk_gaps: Vec<u32>,
    pub lengths: Lengths,
    pub codes: Vec<u8>,
}

/// Lengths of a byte each: length i is `bytes[i] × scale / 255`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Lengths {
    pub scale: f32,
    pub bytes: Vec<u8>,
}

impl Lengths {
    pub fn get(&self, i: usize) -> f32 {
        self.bytes[i] as f32 * self.scale / 255.0
    }

    /// Whether it holds `n` lengths and a finite scale.
    pub fn valid(&self, n: usize) -> bool {
        self.bytes.len() == n && self.scale.is_finite() && self.scale >= 0.0
    }
}

/// `v` as a binary code: a bit a component, set when it is ≥ 0, least significant bit first.
pub fn binary_code(v: &[f32]) -> impl Iterator<Item = u8> + '_ {
    v.chunks(8).map(|byte| {
        byte.iter()
            .enumerate()
            .fold(0u8, |code, (b, x)| code | (((*x >= 0.0) as u8) << b))
    })
}

/// A query against binary codes: for each byte of a code, a table of the query's sum over the
/// byte's eight components, each signed by its bit (+ where set, − where not).
pub struct CodeQuery {
    table: Vec<f32>,
    /// 1 / √dimension.
    unit: f32,
}

impl CodeQuery {
    pub fn new(query: &[f32]) -> Self {
        let mut table = vec![0f32; query.len().div_ceil(8) * 256];
        for (j, part) in query.chunks(8).enumerate() {
            for pattern in 0..256usize {
                table[j * 256 + pattern] = part
                    .iter()
                    .enumerate()
                    .map(|(b, x)| if pattern >> b & 1 == 1 { *x } else { -*x })
                    .sum::<f32>();
            }
        }
        CodeQuery {
            table,
            unit: 1.0 / (query.len().max(1) as f32).sqrt(),
        }
    }

    /// The estimate of `q·v` for `v = base + length × u` (`u` a unit vector whose signs are
    /// `code`), from `q·base`: `q·u` is taken as `q·sign(u) / √dimension`, what it is when
    /// `u`'s components are alike in size. Differences from a centroid come close to that, and
    /// this ranks candidates well enough that re-scoring the best 100 with their int8 records
    /// finds the exact top 10 (`docs/benchmarks.md`).
    pub fn estimate(&self, base: f32, length: f32, code: &[u8]) -> f32 {
        let signed: f32 = code
            .iter()
            .enumerate()
            .map(|(j, &c)| self.table[j * 256 + c as usize])
            .sum();
        base + length * signed * self.unit
    }
}

/// How many partitions a query probes when it does not say (`probes`): with `sizes` the
/// partitions' sizes nearest first, the nearest until they hold about `budget` codes (the one
/// that crosses the budget only if the count ends nearer it than without), and at least 4.
pub fn default_probes(sizes: impl IntoIterator<Item = u32>, budget: u32) -> usize {
    let budget = budget as u64;
    let (mut held, mut probes) = (0u64, 0);
    for size in sizes {
        let after = held + size as u64;
        if held >= budget || (after > budget && after - budget > budget - held) {
            break;
        }
        (held, probes) = (after, probes + 1);
    }
    probes.max(4)
}

impl Meta {
    pub fn words_start(&self) -> u32 {
        self.terms.len() as u32
    }

    pub fn text_start(&self) -> u32 {
        self.words_start() + self.words.len() as u32
    }

    /// The text fragments' numbers: the fragments whose lengths the meta gives in
    /// `TEXT_UNIT`s.
    pub fn text_fragments(&self) -> std::ops::Range<u32> {
        self.text_start()..self.centroids_fragment()
    }

    /// The centroids' fragment number (then the partitions').
    pub fn centroids_fragment(&self) -> u32 {
        self.text_start() + self.text_chunks.len() as u32
    }

    pub fn partition_fragment(&self, partition: u32) -> u32 {
        self.centroids_fragment() + 1 + partition
    }

    /// The fragment of partition `partition`'s int8 vector records.
    pub fn records_fragment(&self, partition: u32) -> u32 {
        self.partition_fragment(partition) + self.vectors.as_ref().map_or(0, |v| v.partitions)
    }

    /// The first field fragment (after the vector records, if any).
    pub fn fields_start(&self) -> u32 {
        self.centroids_fragment() + self.vectors.as_ref().map_or(0, |v| 1 + 2 * v.partitions)
    }

    /// The fragment of `field`'s values, if any document has that field.
    pub fn field_fragment(&self, field: &str) -> Option<u32> {
        let i = self
            .fields
            .binary_search_by(|f| f.as_str().cmp(field))
            .ok()?;
        Some(self.fields_start() + i as u32)
    }

    /// The dates fragment's number, if the index has one.
    pub fn dates_fragment(&self) -> Option<u32> {
        self.dates
            .then(|| self.fields_start() + self.fields.len() as u32)
    }

    /// The first links fragment (the last fragments).
    pub fn links_start(&self) -> u32 {
        self.fields_start() + self.fields.len() as u32 + self.dates as u32
    }

    /// The term shard that holds `term`, if any could.
    pub fn term_shard(&self, term: &str) -> Option<u32> {
        let i = self.terms.partition_point(|t| t.as_str() <= term);
        (i > 0).then(|| i as u32 - 1)
    }

    /// The term shards that hold the terms beginning with `prefix`.
    pub fn term_shards(&self, prefix: &str) -> std::ops::Range<u32> {
        let shards = covering(&self.terms, prefix);
        shards.start as u32..shards.end as u32
    }

    /// The word shards that hold the words beginning with `prefix`.
    pub fn word_shards(&self, prefix: &str) -> std::ops::Range<u32> {
        let shards = covering(&self.words, prefix);
        self.words_start() + shards.start as u32..self.words_start() + shards.end as u32
    }
}

/// The shards, by their first entries (`firsts`, sorted), whose entries may begin with `prefix`.
fn covering(firsts: &[String], prefix: &str) -> std::ops::Range<usize> {
    let first = firsts
        .partition_point(|f| f.as_str() <= prefix)
        .saturating_sub(1);
    let after =
        first + firsts[first..].partition_point(|f| f.as_str() <= prefix || f.starts_with(prefix));
    first..after
}

/// A fragment a search needs: `length` bytes of `p/<pack>` from `offset`, gzipped; or, with
/// `record`, one vector record of a records fragment, as it is (add it with `addRecord`); or,
/// with `row`, one static row (add it with `addStaticRow`; `fragment` is then 0).
#[derive(Debug, Clone, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct FragmentRequest {
    pub fragment: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<u32>,
    pub pack: String,
    pub offset: u64,
    pub length: u32,
    /// The pack's whole length in bytes: a host that answers a range request with the whole
    /// file (200) is taken to lack ranges only when that many bytes came.
    pub pack_length: u64,
}

/// What a search of a fragmented index gives: its hits (`search`), documents
/// (`searchDocuments`) or context (`buildContext`); or the fragments to fetch (and add with
/// `addFragment`), or the texts to score (`rerank`), before asking again.
#[derive(Debug, Default, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct FragmentStep {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hits: Option<Vec<SearchHit>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextResponse>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documents: Option<DocumentSearchResponse>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub need: Option<Vec<FragmentRequest>>,
    /// Texts for the cross-encoder `rerank.model` to score (add its scores with
    /// `addRerankScores` before asking again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankRequest>,
}

pub use crate::search::source::RerankRequest;

#[cfg(test)]
mod tests {
    use super::{default_probes, unslot};

    #[test]
    fn probes_end_nearest_the_budget_and_are_at_least_four() {
        // 900 held: a partition of 150 ends 50 past the budget (nearer), one of 250 ends 150 past.
        assert_eq!(default_probes([200, 200, 200, 300, 150, 100], 1_000), 5);
        assert_eq!(default_probes([200, 200, 200, 300, 250, 100], 1_000), 4);
        assert_eq!(default_probes([100; 20], 1_000), 10);
        assert_eq!(default_probes([5_000, 10], 1_000), 4);
    }

    #[test]
    fn a_damaged_slot_is_refused_not_read_past() {
        assert_eq!(unslot(&[7, 8, 0, 0, 4, 0]), Some(&[7, 8][..]));
        assert_eq!(unslot(&[7, 2, 0]), Some(&[7][..]));
        for bad in [
            &[][..],
            &[2],
            &[0, 0],
            &[1, 0],
            &[9, 4, 0],
            &[9, 0xff, 0xff],
        ] {
            assert_eq!(unslot(bad), None, "{bad:?}");
        }
    }
}
