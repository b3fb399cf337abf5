//! Split builds (native): `cairn index --shard I/N` reads and chunks every input as any build
//! does, embeds only its share of the chunks (a contiguous range, the I-th of N), and writes a
//! part: the index without vectors, its share's vectors, and how the whole index stores them.
//! `cairn merge` checks that the parts come from one build and joins them into the index that
//! one machine would have written, byte for byte (a vector depends only on its chunk's text, see
//! `embed`). Any batch runner can run the shards; cairn schedules nothing.
//!
//! A part file is `CAIRNPRT`, a format version, and the `Part` in postcard with a CRC-32, the
//! same envelope as the index file (`format`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::format;
use crate::index::vector::{ModelIdentity, Precision};
use crate::index::Index;

pub const PART_MAGIC: &[u8; 8] = b"CAIRNPRT";

/// Which share of a build: number `index` (0-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `I/N` with I counted from 1, as `--shard` takes it.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let bad =
            || format!("{text:?} is not a shard: write I/N, e.g. 2/3 for the second of three");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (i, n): (u32, u32) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if n == 0 || i == 0 || i > n {
            return Err(format!("shard {i}/{n} does not exist: I runs from 1 to N"));
        }
        Ok(Shard {
            index: i - 1,
            count: n,
        })
    }

    /// The chunks this shard embeds, of `total`.
    pub fn range(&self, total: usize) -> std::ops::Range<usize> {
        let at = |i: u32| (total as u64 * i as u64 / self.count.max(1) as u64) as usize;
        at(self.index)..at(self.index + 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

/// What one shard of a split build writes.
#[derive(Serialize, Deserialize)]
pub struct Part {
    pub shard: Shard,
    pub identity: ModelIdentity,
    /// How the merged index stores its vectors (`--graph-from`, `--vectors`).
    pub graph_from: u64,
    pub precision: Precision,
    /// The index without vectors or summaries, as an index file: the same in every part.
    pub index: Vec<u8>,
    /// The vectors of the chunks in `shard.range`, flattened.
    pub vectors: Vec<f32>,
}

impl Part {
    pub fn write(&self) -> Result<Vec<u8>> {
        let payload = postcard::to_allocvec(self)
            .map_err(|e| Error::InvalidIndex(format!("could not encode the part: {e}")))?;
        Ok(crate::store::envelope::seal(PART_MAGIC, &payload))
    }

    pub fn read(bytes: &[u8]) -> Result<Self> {
        let payload = crate::store::envelope::open(PART_MAGIC, bytes, "split-build part")?;
        postcard::from_bytes(payload).map_err(|e| {
            Error::InvalidIndex(format!(
                "the part cannot be decoded ({e}); build it again with this version of cairn"
            ))
        })
    }
}

/// The parts of one build, checked and joined: the index without vectors, every chunk's vector
/// in chunk order, and the part that stands for them all (identity and storage).
pub struct Joined {
    pub index: Index,
    pub vectors: Vec<f32>,
    pub graph_from: usize,
    pub precision: Precision,
    pub identity: ModelIdentity,
}

/// Joins parts given in any order. Each shard of the build must be there once, and all must
/// agree on the inputs (the same index bytes), the model and the storage.
pub fn join(mut parts: Vec<Part>) -> Result<Joined> {
    let problem = |m: String| Err(Error::InvalidIndex(m));
    let Some(first) = parts.first() else {
        return problem("no parts to merge: pass the folders `cairn index --shard` wrote".into());
    };
    let count = first.shard.count;
    parts.sort_by_key(|p| p.shard.index);
    let present: Vec<u32> = parts.iter().map(|p| p.shard.index).collect();
    if parts.iter().any(|p| p.shard.count != count) || present != (0..count).collect::<Vec<_>>() {
        let found: Vec<String> = parts.iter().map(|p| p.shard.to_string()).collect();
        return problem(format!(
            "the parts are shards {} but a merge needs each of 1/{count} to {count}/{count} once",
            found.join(", ")
        ));
    }
    let first = &parts[0];
    for part in &parts[1..] {
        if part.index != first.index {
            return problem(format!(
                "shard {} was built from other inputs or settings than shard {}: run every shard with the same inputs and options",
                part.shard, first.shard
            ));
        }
        if part.identity != first.identity
            || part.graph_from != first.graph_from
            || part.precision != first.precision
        {
            return problem(format!(
                "shard {} was embedded by another model or with other vector options than shard {}: run every shard with the same --model, --graph-from and --vectors",
                part.shard, first.shard
            ));
        }
    }
    let index = format::read(&first.index)?;
    let total = index.chunks.len();
    let dim = first.identity.dimension as usize;
    let mut vectors = Vec::with_capacity(total * dim);
    for part in &parts {
        let expected = part.shard.range(total).len() * dim;
        if part.vectors.len() != expected {
            return problem(format!(
                "shard {} holds {} vector components, not the {expected} of its chunks; build it again",
                part.shard,
                part.vectors.len()
            ));
        }
        vectors.extend_from_slice(&part.vectors);
    }
    let first = parts.swap_remove(0);
    Ok(Joined {
        index,
        vectors,
        graph_from: first.graph_from as usize,
        precision: first.precision,
        identity: first.identity,
    })
}

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn shards_cover_every_chunk_once() {
        for total in [0, 1, 2, 7, 100, 1001] {
            for count in 1..=5u32 {
                let mut next = 0;
                for index in 0..count {
                    let range = Shard { index, count }.range(total);
                    assert_eq!(range.start, next);
                    next = range.end;
                }
                assert_eq!(next, total);
            }
        }
    }

    #[test]
    fn shard_numbers_count_from_one() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 1, count: 3 }));
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
