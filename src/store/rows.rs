//! The row store: int8 rows addressed by key, in content-named packs of records, loaded whole
//! (natively) or as queries need them (in a browser). The browser's 8-bit model keeps its
//! word-embedding table in it, a row a token, in token order (`embed`). The static tier keeps a
//! row a term (`statics`), grouped in buckets by a hash of the term's text, so that a browser
//! fetches a query's rows in the round that fetches its terms, before it knows their ids: the
//! bucket's few rows come, and the one whose checksum holds for the term's id is its row.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::pack::{decode_record, record_length};
use crate::error::{Error, Result};

/// Rows a static tier's bucket holds on average: the bytes a query term fetches beside its row.
#[cfg(not(browser))]
const PER_BUCKET: usize = 2;

/// Where the rows are: which keys have one (a bit a key, least significant first), and the
/// packs that hold them, `per_pack` rows each (the last may hold fewer). Without `buckets` the
/// rows are in key order, each a record (`store::pack`) whose checksum is seeded with its row
/// (the model's word table). With them (the static tier), in the order of their bucket
/// (`bucket_of` their term's text), then key, `buckets` saying how many rows each bucket holds,
/// and each row is its key (u32, little-endian) then a record whose checksum is seeded with
/// key and row (`key << 32 | row`), so that a damaged or misplaced row is refused as it comes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaticRows {
    pub dimension: u32,
    pub present: Vec<u8>,
    pub per_pack: u32,
    pub packs: Vec<String>,
    pub buckets: Vec<u8>,
}

/// One row's bytes, or a bucket's (`row` is then the bucket): `length` bytes of `p/<pack>`
/// from `offset`.
#[derive(Debug, Clone, PartialEq, Serialize, tsify::Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RowRequest {
    pub row: u32,
    pub pack: String,
    pub offset: u64,
    pub length: u32,
    /// The pack's whole length in bytes (see `FragmentRequest::pack_length`).
    pub pack_length: u64,
}

/// The bucket of `buckets` a term whose text is `name` has its row in: FNV-1a of its UTF-8
/// bytes (the same on every target and in every version of this format).
pub fn bucket_of(name: &str, buckets: usize) -> u32 {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    (hash % buckets.max(1) as u64) as u32
}

impl StaticRows {
    /// The directory of a table with a row for every one of `count` keys (the model's word
    /// table: a row a token).
    pub fn every(dimension: u32, count: u32, per_pack: u32, packs: Vec<String>) -> Self {
        let mut present = vec![0xffu8; count.div_ceil(8) as usize];
        if count % 8 != 0 {
            if let Some(last) = present.last_mut() {
                *last = (1u8 << (count % 8)) - 1;
            }
        }
        StaticRows {
            dimension,
            present,
            per_pack,
            packs,
            buckets: Vec::new(),
        }
    }

    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.present.iter().map(|b| b.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks the directory against the lexical index it belongs to.
    pub fn validate(&self, term_count: usize) -> std::result::Result<(), String> {
        let rows = self.len();
        if self.dimension == 0
            || self.dimension > 8192
            || self.present.len() != term_count.div_ceil(8)
            || self.per_pack == 0
            || self.packs.len() != rows.div_ceil(self.per_pack as usize)
            || (!self.buckets.is_empty()
                && self.buckets.iter().map(|&n| n as usize).sum::<usize>() != rows)
            || (term_count % 8 != 0
                && self
                    .present
                    .last()
                    .is_some_and(|b| b >> (term_count % 8) != 0))
        {
            return Err("the static rows' directory does not match its terms".into());
        }
        if self.packs.iter().any(|p| !super::pack::is_pack_name(p)) {
            return Err("the static rows name a pack that is not a pack file name".into());
        }
        Ok(())
    }

    /// Row `row`'s place: its pack, offset and length.
    pub fn request(&self, row: u32) -> RowRequest {
        self.rows_request(row, row, 1)
    }

    /// A row's length in bytes.
    fn row_length(&self) -> usize {
        record_length(self.dimension as usize) + if self.buckets.is_empty() { 0 } else { 4 }
    }

    /// `count` rows' place from row `first` (all in one pack), asked for as `row`.
    fn rows_request(&self, row: u32, first: u32, count: u32) -> RowRequest {
        let length = self.row_length() as u32;
        let pack = first / self.per_pack;
        // Every pack holds `per_pack` rows but the last, which holds the rest (counted only
        // for it: a row request is on the query's path).
        let rows_in_pack = if (pack as usize) + 1 < self.packs.len() {
            self.per_pack as u64
        } else {
            (self.len() as u64).saturating_sub(pack as u64 * self.per_pack as u64)
        };
        RowRequest {
            row,
            pack: self.packs[pack as usize].clone(),
            offset: (first % self.per_pack) as u64 * length as u64,
            length: length * count,
            pack_length: rows_in_pack * length as u64,
        }
    }
}

/// The first bytes of a selection of a table's rows (`write_selection`).
const SELECTION_MAGIC: &[u8; 8] = b"CAIRNSEL";

/// A term as the static tier weighs it in a query: its id, its weight and its text (which
/// names its row's bucket).
pub type Weighted<'a> = (u32, f32, &'a str);

/// A row store's directory and the rows loaded so far (all of them natively, the query's in a
/// browser): the static tier's, or the model's word table.
#[derive(Debug, Clone)]
pub struct StaticTable {
    pub rows: StaticRows,
    /// The rows before each 8-byte block of `rows.present` (a rank table, half the bitmap's
    /// size, so a crafted bitmap cannot make it large), and how many rows there are.
    ranks: Vec<u32>,
    rows_count: u32,
    /// With buckets: each bucket's first row, and the row count last.
    starts: Vec<u32>,
    /// The rows loaded (checked): by row without buckets, by key with them.
    loaded: HashMap<u32, (Vec<i8>, f32)>,
    /// With buckets: the rows loaded.
    held: std::collections::HashSet<u32>,
    /// What a row is called in errors ("static row", "the model's word row").
    name: &'static str,
}

impl StaticTable {
    /// A table with no row loaded yet; `rows` must have passed `validate`.
    pub fn new(rows: StaticRows) -> Self {
        let mut ranks = Vec::with_capacity(rows.present.len().div_ceil(8));
        let mut next = 0u32;
        for block in rows.present.chunks(8) {
            ranks.push(next);
            next = next.saturating_add(block.iter().map(|b| b.count_ones()).sum::<u32>());
        }
        let mut starts = Vec::with_capacity(rows.buckets.len() + 1);
        starts.push(0u32);
        for &n in &rows.buckets {
            starts.push(starts[starts.len() - 1].saturating_add(n as u32));
        }
        StaticTable {
            rows,
            ranks,
            rows_count: next,
            starts,
            loaded: HashMap::new(),
            held: Default::default(),
            name: "static row",
        }
    }

    /// The same table, its rows called `name` in errors.
    pub fn named(self, name: &'static str) -> Self {
        StaticTable { name, ..self }
    }

    fn bucketed(&self) -> bool {
        !self.rows.buckets.is_empty()
    }

    /// Key `term`'s row number in a table without buckets, if it has one: the rows of the keys
    /// before it.
    pub fn row_of(&self, term: u32) -> Option<u32> {
        if !self.has(term) {
            return None;
        }
        let (byte, bit) = (term as usize / 8, term % 8);
        let b = self.rows.present[byte];
        let block = byte / 8;
        let before: u32 = self.rows.present[block * 8..byte]
            .iter()
            .map(|b| b.count_ones())
            .sum();
        Some(self.ranks[block] + before + (b & ((1u8 << bit) - 1)).count_ones())
    }

    /// The rows of the bucket of a term whose text is `name`.
    fn bucket_rows(&self, name: &str) -> std::ops::Range<u32> {
        let b = bucket_of(name, self.rows.buckets.len()) as usize;
        self.starts[b]..self.starts[b + 1]
    }

    /// The rows of the buckets of terms whose texts are `names` that are not loaded yet, a
    /// request a bucket (two when it spans packs): what a search fetches with the terms
    /// themselves, before it knows their ids. None for a table without buckets.
    pub fn wanted<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<RowRequest> {
        let mut out: Vec<RowRequest> = Vec::new();
        if !self.bucketed() {
            return out;
        }
        let per_pack = self.rows.per_pack;
        for name in names {
            let rows = self.bucket_rows(name);
            let mut first = rows.start;
            while first < rows.end {
                let end = rows
                    .end
                    .min((first / per_pack + 1).saturating_mul(per_pack));
                if (first..end).any(|r| !self.held.contains(&r))
                    && !out.iter().any(|r| r.row == first)
                {
                    out.push(self.rows.rows_request(first, first, end - first));
                }
                first = end;
            }
        }
        out
    }

    /// The rows a query's terms need that are not loaded yet.
    pub fn missing(&self, terms: &[Weighted]) -> Vec<RowRequest> {
        if self.bucketed() {
            let absent = |t: &&Weighted| self.has(t.0) && !self.loaded.contains_key(&t.0);
            return self.wanted(terms.iter().filter(absent).map(|t| t.2));
        }
        terms
            .iter()
            .filter_map(|&(t, _, _)| self.row_of(t))
            .filter(|r| !self.loaded.contains_key(r))
            .map(|r| self.rows.request(r))
            .collect()
    }

    /// Whether key `term` has a row.
    fn has(&self, term: u32) -> bool {
        self.rows
            .present
            .get(term as usize / 8)
            .is_some_and(|b| b >> (term % 8) & 1 == 1)
    }

    /// Adds the rows from `row` on from their bytes (as `missing` or `wanted` located them; one
    /// row in a table without buckets), checking each.
    pub fn add(&mut self, row: u32, bytes: &[u8]) -> Result<()> {
        let name = self.name;
        let length = self.rows.row_length();
        let count = (bytes.len() / length) as u32;
        if row >= self.rows_count
            || bytes.len() % length != 0
            || count == 0
            || count > self.rows_count - row
            || (!self.bucketed() && count != 1)
        {
            return Err(Error::InvalidIndex(format!(
                "{} bytes were given as {name}s from {row}, which are not whole rows of the {} there are; build the index again and upload all of it",
                bytes.len(),
                self.rows_count
            )));
        }
        let dimension = self.rows.dimension as usize;
        let damaged = |r: u32| {
            Error::InvalidIndex(format!(
                "{name} {r} is damaged (its length or checksum is wrong); build the index again and upload all of it"
            ))
        };
        if !self.bucketed() {
            let row_values =
                decode_record(bytes, dimension, row as u64).ok_or_else(|| damaged(row))?;
            self.loaded.insert(row, row_values);
            return Ok(());
        }
        // All checked before any is kept.
        let mut rows = Vec::with_capacity(count as usize);
        for (r, bytes) in (row..).zip(bytes.chunks_exact(length)) {
            let (key, record) = bytes.split_at(4);
            let key = u32::from_le_bytes(key.try_into().expect("four bytes"));
            let id = (key as u64) << 32 | r as u64;
            rows.push((
                r,
                key,
                decode_record(record, dimension, id).ok_or_else(|| damaged(r))?,
            ));
        }
        for (r, key, row_values) in rows {
            self.held.insert(r);
            self.loaded.insert(key, row_values);
        }
        Ok(())
    }

    /// Adds every row of a selection of this table (`write_selection`), all checked before
    /// any is kept; how many there were.
    pub fn add_selection(&mut self, bytes: &[u8]) -> Result<usize> {
        let name = self.name;
        let refused = |why: &str| {
            Error::InvalidIndex(format!(
                "{name}s given at once {why}; build the index again and upload all of it"
            ))
        };
        if self.bucketed() {
            return Err(refused("are for a table addressed by text"));
        }
        let rest = bytes
            .strip_prefix(SELECTION_MAGIC)
            .ok_or_else(|| refused("are not a file of rows"))?;
        let (length, rest) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| refused("are cut short"))?;
        let length = u32::from_le_bytes(*length) as usize;
        if rest.len() < length
            || self.rows.packs.first().map(String::as_bytes) != Some(&rest[..length])
        {
            return Err(refused("are of another table (another model's)"));
        }
        let rest = &rest[length..];
        let dimension = self.rows.dimension as usize;
        let row_length = 4 + record_length(dimension);
        if rest.len() % row_length != 0 {
            return Err(refused("are cut short"));
        }
        if rest.len() / row_length > self.rows_count as usize {
            return Err(refused("are more than the table's rows"));
        }
        let mut rows = Vec::with_capacity(rest.len() / row_length);
        for bytes in rest.chunks_exact(row_length) {
            let (key, record) = bytes.split_at(4);
            let key = u32::from_le_bytes(key.try_into().expect("four bytes"));
            let row = self
                .row_of(key)
                .ok_or_else(|| refused(&format!("name key {key}, which has no row")))?;
            let values = decode_record(record, dimension, row as u64)
                .ok_or_else(|| refused(&format!("hold a damaged row ({key})")))?;
            rows.push((row, values));
        }
        let count = rows.len();
        self.loaded.extend(rows);
        Ok(count)
    }

    /// Row `row` (by key, in a table without buckets) when it is loaded: its int8 values and
    /// scale.
    pub fn row(&self, term: u32) -> Option<(&[i8], f32)> {
        let (values, scale) = self.loaded.get(&self.row_of(term)?)?;
        Some((values, *scale))
    }

    /// A term's row in a table with buckets, once its bucket is loaded. An error when the
    /// directory says it has a row and its bucket is loaded without it.
    fn lookup(&self, term: u32, name: &str) -> Result<Option<(&[i8], f32)>> {
        if let Some((values, scale)) = self.loaded.get(&term) {
            return Ok(Some((values, *scale)));
        }
        if !self.has(term) || self.bucket_rows(name).any(|r| !self.held.contains(&r)) {
            return Ok(None);
        }
        Err(Error::InvalidIndex(format!(
            "the {} of the term {name:?} is not in its bucket; build the index again and upload all of it",
            self.name
        )))
    }

    /// How many rows are loaded.
    pub fn loaded(&self) -> usize {
        self.loaded.len()
    }

    /// A query's static vector from its weighted terms: the normalized weighted sum of the
    /// loaded rows; `None` when none weighs anything.
    pub fn encode(&self, terms: &[Weighted]) -> Result<Option<Vec<f32>>> {
        let dimension = self.rows.dimension as usize;
        let mut sum = vec![0f32; dimension];
        let mut any = false;
        for &(t, w, name) in terms {
            let row = if self.bucketed() {
                self.lookup(t, name)?
            } else {
                self.row(t)
            };
            let Some((values, scale)) = row else { continue };
            if w > 0.0 {
                any = true;
                let k = w * scale;
                for (s, &v) in sum.iter_mut().zip(values) {
                    *s += k * v as f32;
                }
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        Ok((any && norm > 0.0 && norm.is_finite()).then(|| sum.iter().map(|x| x / norm).collect()))
    }
}

/// Packs of `rows` (`dimension` f32 each, with their keys) in the given order, about a
/// megabyte each, named by content, as `StaticRows` says (`keyed`: with buckets): (rows a pack,
/// packs).
#[cfg(not(browser))]
fn write_records<'a>(
    dimension: usize,
    keyed: bool,
    rows: impl Iterator<Item = (u32, &'a [f32])>,
) -> (u32, Vec<(String, Vec<u8>)>) {
    let length = record_length(dimension) + if keyed { 4 } else { 0 };
    let per_pack = ((1usize << 20) / length).max(1);
    let mut values = Vec::with_capacity(dimension);
    let mut packs = Vec::new();
    let mut bytes = Vec::new();
    for (row, (key, values_f32)) in (0u64..).zip(rows) {
        values.clear();
        let scale = super::pack::quantize_into(values_f32, &mut values);
        let id = if keyed {
            bytes.extend_from_slice(&key.to_le_bytes());
            (key as u64) << 32 | row
        } else {
            row
        };
        super::pack::encode_record(&values, scale, id, &mut bytes);
        if bytes.len() == per_pack * length {
            packs.push((
                super::pack::pack_name(&bytes, "cairnrows"),
                std::mem::take(&mut bytes),
            ));
        }
    }
    if !bytes.is_empty() {
        packs.push((super::pack::pack_name(&bytes, "cairnrows"), bytes));
    }
    (per_pack as u32, packs)
}

/// A table of a row for every one of `rows.len() / dimension` keys, in key order (the model's
/// word table): its directory and packs.
#[cfg(not(browser))]
pub fn write(dimension: usize, rows: &[f32]) -> (StaticRows, Vec<(String, Vec<u8>)>) {
    let count = rows.len() / dimension.max(1);
    let (per_pack, packs) =
        write_records(dimension, false, (0u32..).zip(rows.chunks_exact(dimension)));
    let names = packs.iter().map(|(n, _)| n.clone()).collect();
    (
        StaticRows::every(dimension as u32, count as u32, per_pack, names),
        packs,
    )
}

/// The static tier's rows: `rows` (`dimension` f32 each) of the terms `terms` (ids, ascending)
/// whose texts are `names`, of a lexical index of `term_count` terms, in buckets by text.
#[cfg(not(browser))]
pub fn write_terms(
    dimension: usize,
    term_count: usize,
    terms: &[u32],
    names: &[&str],
    rows: &[f32],
) -> (StaticRows, Vec<(String, Vec<u8>)>) {
    // A bucket counts its rows in a byte: more buckets while one would hold more.
    let mut buckets = terms.len().div_ceil(PER_BUCKET).max(1);
    let placed = loop {
        let placed: Vec<u32> = names.iter().map(|n| bucket_of(n, buckets)).collect();
        let mut counts = vec![0usize; buckets];
        placed.iter().for_each(|&b| counts[b as usize] += 1);
        if counts.iter().all(|&n| n <= u8::MAX as usize) {
            break placed;
        }
        buckets *= 2;
    };
    let mut order: Vec<usize> = (0..terms.len()).collect();
    order.sort_by_key(|&i| (placed[i], terms[i]));
    let mut counts = vec![0u8; buckets];
    placed.iter().for_each(|&b| counts[b as usize] += 1);
    let mut present = vec![0u8; term_count.div_ceil(8)];
    for &t in terms {
        present[t as usize / 8] |= 1 << (t % 8);
    }
    let (per_pack, packs) = write_records(
        dimension,
        true,
        order
            .iter()
            .map(|&i| (terms[i], &rows[i * dimension..(i + 1) * dimension])),
    );
    (
        StaticRows {
            dimension: dimension as u32,
            present,
            per_pack,
            packs: packs.iter().map(|(n, _)| n.clone()).collect(),
            buckets: counts,
        },
        packs,
    )
}

/// A file of some rows of a table without buckets (`keys`, each that has a row; the model's
/// word rows a site's text uses most): a magic, the table's first pack's name (packs are named
/// by content, so it names the table), then each row as its key (u32, little-endian) and its
/// record as the packs hold it. What a browser fetches whole, beside the packs it reads by row.
#[cfg(not(browser))]
pub fn write_selection(rows: &StaticRows, packs: &[(String, Vec<u8>)], keys: &[u32]) -> Vec<u8> {
    let first = rows.packs.first().map_or("", String::as_str);
    let mut bytes = SELECTION_MAGIC.to_vec();
    bytes.extend_from_slice(&(first.len() as u32).to_le_bytes());
    bytes.extend_from_slice(first.as_bytes());
    let table = StaticTable::new(rows.clone());
    for &key in keys {
        let Some(row) = table.row_of(key) else {
            continue;
        };
        let at = rows.request(row);
        let Some((_, pack)) = packs.iter().find(|(n, _)| *n == at.pack) else {
            continue;
        };
        bytes.extend_from_slice(&key.to_le_bytes());
        bytes.extend_from_slice(&pack[at.offset as usize..at.offset as usize + at.length as usize]);
    }
    bytes
}

/// The rows' packs as (name, bytes), read from `dir/p/` (to copy them into another layout).
#[cfg(not(browser))]
pub fn read_packs(rows: &StaticRows, dir: &std::path::Path) -> Result<Vec<(String, Vec<u8>)>> {
    rows.packs
        .iter()
        .map(|name| {
            let path = dir.join(super::pack::PACK_DIR).join(name);
            let bytes = std::fs::read(&path).map_err(|e| {
                Error::InvalidIndex(format!(
                    "cannot read the static rows {} ({e}); build the index again",
                    path.display()
                ))
            })?;
            Ok((name.clone(), bytes))
        })
        .collect()
}

/// The whole table, every row read from the packs under `dir/p/` (native search and eval).
#[cfg(not(browser))]
pub fn read_all(rows: &StaticRows, dir: &std::path::Path) -> Result<StaticTable> {
    let packs: Vec<Vec<u8>> = read_packs(rows, dir)?.into_iter().map(|(_, b)| b).collect();
    from_packs(rows, &packs)
}

/// The whole table from its packs' bytes, in order.
pub fn from_packs(rows: &StaticRows, packs: &[Vec<u8>]) -> Result<StaticTable> {
    let mut table = StaticTable::new(rows.clone());
    let length = rows.row_length();
    let records = packs.iter().flat_map(|p| p.chunks(length));
    for (row, record) in (0..table.rows_count).zip(records) {
        table.add(row, record)?;
    }
    if packs.iter().map(|p| p.len()).sum::<usize>() != table.rows_count as usize * length {
        return Err(Error::InvalidIndex(format!(
            "the {}s' packs are not {} whole rows; build the index again",
            table.name, table.rows_count
        )));
    }
    if table.loaded() < table.rows_count as usize {
        return Err(Error::InvalidIndex(format!(
            "the static rows' packs hold {} of {} rows; build the index again",
            table.loaded(),
            table.rows_count
        )));
    }
    Ok(table)
}

#[cfg(all(test, not(browser)))]
mod tests {
    use super::*;

    /// A static tier of 300 terms (of 400) with rows wide enough that a pack holds 130, so
    /// buckets cross packs; and the packs by name.
    fn tier() -> (StaticRows, HashMap<String, Vec<u8>>, Vec<u32>, Vec<String>) {
        let dimension = 8000;
        let terms: Vec<u32> = (0..400).filter(|t| t % 4 != 3).collect();
        let names: Vec<String> = terms.iter().map(|t| format!("term{t}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let rows: Vec<f32> = terms
            .iter()
            .flat_map(|&t| (0..dimension).map(move |i| ((t as usize * 31 + i) % 97) as f32 - 48.0))
            .collect();
        let (table, packs) = write_terms(dimension, 400, &terms, &refs, &rows);
        assert_eq!(table.validate(400), Ok(()));
        (table, packs.into_iter().collect(), terms, names)
    }

    fn bytes(packs: &HashMap<String, Vec<u8>>, r: &RowRequest) -> Vec<u8> {
        let pack = &packs[&r.pack];
        assert_eq!(pack.len() as u64, r.pack_length);
        pack[r.offset as usize..r.offset as usize + r.length as usize].to_vec()
    }

    #[test]
    fn a_terms_row_is_found_by_its_text_across_packs() {
        let (rows, packs, terms, names) = tier();
        assert!(rows.packs.len() > 2);
        let mut table = StaticTable::new(rows);
        let mut spanning = 0;
        for (&t, name) in terms.iter().zip(&names) {
            let wanted = table.wanted([name.as_str()]);
            spanning += (wanted.len() > 1) as usize;
            for r in &wanted {
                table.add(r.row, &bytes(&packs, r)).unwrap();
            }
            assert!(table.wanted([name.as_str()]).is_empty());
            let (values, scale) = table.lookup(t, name).unwrap().expect("its row");
            // The row's first value, (31t mod 97) − 48, back from int8.
            let first = ((t as usize * 31) % 97) as f32 - 48.0;
            assert!((values[0] as f32 * scale - first).abs() <= scale, "{name}");
        }
        assert!(spanning > 0, "no bucket crossed a pack");
        // A term without a row has none, and asks for nothing once its bucket is in.
        assert_eq!(table.lookup(3, "term3").unwrap(), None);
        assert!(table.missing(&[(3, 1.0, "term3")]).is_empty());
    }

    #[test]
    fn a_damaged_or_misplaced_bucket_is_refused_whole() {
        let (rows, packs, _, _) = tier();
        let mut table = StaticTable::new(rows);
        let r = table.wanted(["term0"]).remove(0);
        let good = bytes(&packs, &r);
        let mut damaged = good.clone();
        let last = damaged.len() - 9;
        damaged[last] ^= 1;
        assert!(table
            .add(r.row, &damaged)
            .unwrap_err()
            .to_string()
            .contains("damaged"));
        assert_eq!(table.loaded(), 0, "a bucket is kept whole or not at all");
        // Its bytes at another row: each row's checksum covers its place.
        assert!(table.add(r.row + 1, &good).is_err());
        assert!(table.add(r.row, &good[..good.len() - 1]).is_err());
        table.add(r.row, &good).unwrap();
        assert!(table.lookup(0, "term0").unwrap().is_some());
    }
}
