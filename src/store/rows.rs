//! The row store: int8 rows addressed by number, in content-named packs of records, loaded
//! whole (natively) or a row at a time as queries need them (in a browser). The static tier
//! keeps a row a term in it (`statics`); the browser's 8-bit model keeps its word-embedding
//! table in it, a row a token (`embed`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::pack::{decode_record, record_length};
use crate::error::{Error, Result};

/// Where the static rows are: which terms have one (a bit a term id, least significant first),
/// and the packs that hold them, `per_pack` rows each (the last may hold fewer), in row order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaticRows {
    pub dimension: u32,
    pub present: Vec<u8>,
    pub per_pack: u32,
    pub packs: Vec<String>,
}

/// One row's bytes: `length` bytes of `p/<pack>` from `offset`.
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
        let length = record_length(self.dimension as usize) as u32;
        let pack = row / self.per_pack;
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
            offset: (row % self.per_pack) as u64 * length as u64,
            length,
            pack_length: rows_in_pack * length as u64,
        }
    }
}

/// The static tier: its directory and the rows loaded so far (all of them natively, the
/// query's in a browser).
#[derive(Debug, Clone)]
pub struct StaticTable {
    pub rows: StaticRows,
    /// The rows before each 8-byte block of `rows.present` (a rank table, half the bitmap's
    /// size, so a crafted bitmap cannot make it large), and how many rows there are.
    ranks: Vec<u32>,
    rows_count: u32,
    loaded: HashMap<u32, (Vec<i8>, f32)>,
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
        StaticTable {
            rows,
            ranks,
            rows_count: next,
            loaded: HashMap::new(),
            name: "static row",
        }
    }

    /// The same table, its rows called `name` in errors.
    pub fn named(self, name: &'static str) -> Self {
        StaticTable { name, ..self }
    }

    /// Term `term`'s row number, if it has one: the rows of the terms before it.
    pub fn row_of(&self, term: u32) -> Option<u32> {
        let (byte, bit) = (term as usize / 8, term % 8);
        let b = *self.rows.present.get(byte)?;
        if b >> bit & 1 == 0 {
            return None;
        }
        let block = byte / 8;
        let before: u32 = self.rows.present[block * 8..byte]
            .iter()
            .map(|b| b.count_ones())
            .sum();
        Some(self.ranks[block] + before + (b & ((1u8 << bit) - 1)).count_ones())
    }

    /// The rows a query's terms (`query_terms`) need that are not loaded yet.
    pub fn missing(&self, terms: &[(u32, f32)]) -> Vec<RowRequest> {
        terms
            .iter()
            .filter_map(|&(t, _)| self.row_of(t))
            .filter(|r| !self.loaded.contains_key(r))
            .map(|r| self.rows.request(r))
            .collect()
    }

    /// Adds row `row` from its record's bytes, checking them.
    pub fn add(&mut self, row: u32, bytes: &[u8]) -> Result<()> {
        let name = self.name;
        if row >= self.rows_count {
            return Err(Error::InvalidIndex(format!(
                "{name} {row} was given, but there are {} rows",
                self.rows_count
            )));
        }
        let (values, scale) = decode_record(bytes, self.rows.dimension as usize, row as u64).ok_or_else(|| {
            Error::InvalidIndex(format!(
                "{name} {row} is damaged (its length or checksum is wrong); build the index again and upload all of it"
            ))
        })?;
        self.loaded.insert(row, (values, scale));
        Ok(())
    }

    /// Row `row` (by term) when it is loaded: its int8 values and scale.
    pub fn row(&self, term: u32) -> Option<(&[i8], f32)> {
        let (values, scale) = self.loaded.get(&self.row_of(term)?)?;
        Some((values, *scale))
    }

    /// How many rows are loaded.
    pub fn loaded(&self) -> usize {
        self.loaded.len()
    }

    /// Whether every row the query's terms have is loaded, and at least one is.
    pub fn ready(&self, terms: &[(u32, f32)]) -> bool {
        let mut any = false;
        for &(t, _) in terms {
            if let Some(r) = self.row_of(t) {
                if !self.loaded.contains_key(&r) {
                    return false;
                }
                any = true;
            }
        }
        any
    }

    /// A query's static vector from its weighted terms (`query_terms`): the normalized
    /// weighted sum of the loaded rows; `None` when none weighs anything.
    pub fn encode(&self, terms: &[(u32, f32)]) -> Option<Vec<f32>> {
        let dimension = self.rows.dimension as usize;
        let mut sum = vec![0f32; dimension];
        let mut any = false;
        for &(t, w) in terms {
            let Some((values, scale)) = self.row_of(t).and_then(|r| self.loaded.get(&r)) else {
                continue;
            };
            if w > 0.0 {
                any = true;
                let k = w * scale;
                for (s, &v) in sum.iter_mut().zip(values) {
                    *s += k * v as f32;
                }
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        (any && norm > 0.0 && norm.is_finite()).then(|| sum.iter().map(|x| x / norm).collect())
    }
}

/// The rows' packs (native): about a megabyte each, named by content. `terms` (ascending) are
/// the term ids of `rows` (`dimension` f32 each), of a lexical index of `term_count` terms.
#[cfg(not(browser))]
pub fn write(
    dimension: usize,
    term_count: usize,
    terms: &[u32],
    rows: &[f32],
) -> (StaticRows, Vec<(String, Vec<u8>)>) {
    let length = record_length(dimension);
    let per_pack = ((1usize << 20) / length).max(1);
    let mut present = vec![0u8; term_count.div_ceil(8)];
    for &t in terms {
        present[t as usize / 8] |= 1 << (t % 8);
    }
    let mut values = Vec::with_capacity(dimension);
    let packs: Vec<(String, Vec<u8>)> = rows
        .chunks_exact(dimension)
        .collect::<Vec<_>>()
        .chunks(per_pack)
        .enumerate()
        .map(|(p, pack)| {
            let mut bytes = Vec::with_capacity(pack.len() * length);
            for (i, row) in pack.iter().enumerate() {
                values.clear();
                let scale = super::pack::quantize_into(row, &mut values);
                let id = (p * per_pack + i) as u64;
                super::pack::encode_record(&values, scale, id, &mut bytes);
            }
            (super::pack::pack_name(&bytes, "cairnrows"), bytes)
        })
        .collect();
    (
        StaticRows {
            dimension: dimension as u32,
            present,
            per_pack: per_pack as u32,
            packs: packs.iter().map(|(n, _)| n.clone()).collect(),
        },
        packs,
    )
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
    let length = record_length(rows.dimension as usize);
    let records = packs.iter().flat_map(|p| p.chunks(length));
    for (row, record) in (0..table.rows_count).zip(records) {
        table.add(row, record)?;
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
