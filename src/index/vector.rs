//! The vector index: one L2-normalized embedding per chunk, searched by cosine similarity.
//! Small collections are scanned exactly with a SIMD dot product (wasm `simd128`, or the same
//! lane layout natively so both targets add in the same order). By default a scanned vector is
//! stored in 8 bits a component with one scale per vector (a quarter of the f32 bytes); the query
//! stays f32. Large collections carry an HNSW graph (instant-distance) built natively at index
//! time; the graph holds its f32 vectors itself, so they are stored once either way.

use instant_distance::{Hnsw, Point, Search};
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{Error, Result};

/// A chunk's cosine similarity to a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredChunk {
    pub chunk: u32,
    pub score: f32,
}

/// Which model made the embeddings; a query must be embedded by the same one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// e.g. `sentence-transformers/all-MiniLM-L6-v2`.
    pub name: String,
    pub dimension: u32,
    /// SHA-256 (hex) of the weights the index's embeddings were computed with.
    pub source_weights_sha256: String,
    /// SHA-256 (hex) of the weights shipped beside the index for query embedding, and their
    /// file's name in `model/` (`model.gguf`, the 8-bit model, or `model.safetensors`).
    pub web_weights_sha256: String,
    pub web_weights_file: String,
    /// SHA-256 (hex) of the model's `config.json` and `tokenizer.json` (shipped as they are): a
    /// changed shape or vocabulary changes the embeddings as surely as changed weights.
    pub config_sha256: String,
    pub tokenizer_sha256: String,
    /// The arithmetic the vectors were computed in (f32, or the 8-bit products).
    pub arithmetic: Arithmetic,
}

impl ModelIdentity {
    /// Whether an index of `other` has the vectors this model would give: the same model, the
    /// same source weights, whatever the browser's copy of it is.
    pub fn same_embeddings(&self, other: &ModelIdentity) -> bool {
        self.name == other.name
            && self.dimension == other.dimension
            && self.source_weights_sha256 == other.source_weights_sha256
            && self.config_sha256 == other.config_sha256
            && self.tokenizer_sha256 == other.tokenizer_sha256
            && self.arithmetic == other.arithmetic
    }
}

/// An embedding as an HNSW point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Embedding(pub Vec<f32>);

impl Point for Embedding {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

#[derive(Serialize, Deserialize)]
enum Store {
    /// Chunk i's vector at `[i * dim, (i + 1) * dim)`.
    Flat(Vec<f32>),
    /// The graph holds the vectors; `chunk_of_point[pid]` is the chunk of graph point `pid`.
    Graph {
        #[serde(deserialize_with = "checked_graph")]
        hnsw: Hnsw<Embedding>,
        chunk_of_point: Vec<u32>,
    },
    /// Chunk i's vector is `scales[i] * values[i * dim..(i + 1) * dim]`.
    Int8 { values: Vec<i8>, scales: Vec<f32> },
}

/// The HNSW graph as instant-distance serializes it (the same fields in the same order, so the
/// same postcard bytes): read first, so that its structure is checked before instant-distance
/// walks it. A checksum guards against accidents, not against a crafted file: without this, a
/// neighbor id out of range made a search index out of bounds inside instant-distance.
#[derive(Serialize, Deserialize)]
struct GraphParts {
    ef_search: usize,
    points: Vec<Embedding>,
    /// Layer 0: 64 neighbor slots a point (two arrays of 32: serde's largest).
    zero: Vec<(Slots, Slots)>,
    /// The layers above, lowest first: 32 neighbor slots a point.
    layers: Vec<Vec<Slots>>,
}

/// 32 neighbor slots, encoded as serde encodes `[u32; 32]` (a tuple of 32), but decoded by a
/// loop: serde's own decoder for arrays is unrolled, 5 kB of every page's wasm.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slots([u32; 32]);

impl Serialize for Slots {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Slots {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Slots;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("32 neighbor slots")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Slots, A::Error> {
                let mut slots = [0u32; 32];
                for (i, slot) in slots.iter_mut().enumerate() {
                    *slot = seq
                        .next_element()?
                        .ok_or_else(|| serde::de::Error::invalid_length(i, &self))?;
                }
                Ok(Slots(slots))
            }
        }
        deserializer.deserialize_tuple(32, Visitor)
    }
}

/// An empty neighbor slot; slots after it are unused.
const NO_POINT: u32 = u32::MAX;
/// The largest search beam a graph may ask for.
const MAX_EF_SEARCH: usize = 10_000;

impl GraphParts {
    fn check(&self) -> Result<(), String> {
        let points = self.points.len();
        if self.zero.len() != points {
            return Err(format!(
                "the vector graph has {} points but {} nodes on its lowest layer",
                points,
                self.zero.len()
            ));
        }
        if !(1..=MAX_EF_SEARCH).contains(&self.ef_search) {
            return Err(format!(
                "the vector graph's search beam is {}, expected 1 to {MAX_EF_SEARCH}",
                self.ef_search
            ));
        }
        let in_range =
            |slots: &[u32], len: usize| slots.iter().all(|&p| p == NO_POINT || (p as usize) < len);
        if !self
            .zero
            .iter()
            .all(|(a, b)| in_range(&a.0, points) && in_range(&b.0, points))
        {
            return Err(
                "a point of the vector graph's lowest layer names a neighbor it does not have"
                    .into(),
            );
        }
        // Each layer holds a prefix of the points of the layer below; a search starts at point 0
        // of the top layer, so every layer has it.
        let mut below = points;
        for (i, layer) in self.layers.iter().enumerate() {
            if layer.is_empty() || layer.len() > below {
                return Err(format!(
                    "layer {} of the vector graph has {} points, expected 1 to {below}",
                    i + 1,
                    layer.len()
                ));
            }
            if !layer.iter().all(|slots| in_range(&slots.0, layer.len())) {
                return Err(format!(
                    "a point of layer {} of the vector graph names a neighbor outside it",
                    i + 1
                ));
            }
            below = layer.len();
        }
        Ok(())
    }
}

fn checked_graph<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Hnsw<Embedding>, D::Error> {
    use serde::de::Error as _;
    let parts = GraphParts::deserialize(deserializer)?;
    parts.check().map_err(D::Error::custom)?;
    let bytes = postcard::to_allocvec(&parts).map_err(D::Error::custom)?;
    drop(parts);
    postcard::from_bytes(&bytes).map_err(D::Error::custom)
}

/// The arithmetic of the encoder's linear layers: f32, or 8-bit blocks (`encoder::int8`: about twice
/// as fast a product, vectors within cosine 0.999 of f32's). An index records the one its
/// vectors were made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(browser), derive(clap::ValueEnum))]
pub enum Arithmetic {
    #[default]
    F32,
    Int8,
}

/// How a scanned (graphless) index stores its vectors (`cairn index --vectors i8|f32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(not(browser), derive(clap::ValueEnum))]
pub enum Precision {
    /// 8 bits a component and a scale per vector: a quarter of the bytes, cosine within 0.01.
    #[default]
    #[cfg_attr(not(browser), value(name = "i8"))]
    Int8,
    F32,
}

#[derive(Serialize, Deserialize)]
pub struct VectorIndex {
    pub model: ModelIdentity,
    store: Store,
    /// The graph's search beam (ef); larger is slower and more exact.
    ef_search: u32,
}

/// The HNSW builder's settings, chosen by measurement (see `docs/benchmarks.md`).
#[derive(Debug, Clone, Copy)]
pub struct GraphSettings {
    pub ef_construction: usize,
    pub ef_search: usize,
}

impl Default for GraphSettings {
    fn default() -> Self {
        GraphSettings {
            ef_construction: 40,
            ef_search: 96,
        }
    }
}

impl VectorIndex {
    /// An exact-scan index over `vectors` (chunk order, each `model.dimension` long).
    pub fn flat(model: ModelIdentity, vectors: Vec<f32>, precision: Precision) -> Self {
        let store = match precision {
            Precision::F32 => Store::Flat(vectors),
            Precision::Int8 => {
                let dim = (model.dimension as usize).max(1);
                let mut values = Vec::with_capacity(vectors.len());
                let scales = vectors
                    .chunks(dim)
                    .map(|v| crate::store::pack::quantize_into(v, &mut values))
                    .collect();
                Store::Int8 { values, scales }
            }
        };
        VectorIndex {
            model,
            store,
            ef_search: 0,
        }
    }

    /// An index with an HNSW graph over `vectors` (built natively: it is slow), built on one
    /// thread so that it is the same graph every time.
    pub fn graph(model: ModelIdentity, vectors: Vec<f32>, settings: GraphSettings) -> Self {
        let dim = model.dimension as usize;
        let points: Vec<Embedding> = vectors
            .chunks_exact(dim)
            .map(|v| Embedding(v.to_vec()))
            .collect();
        // instant-distance inserts points in parallel, and which thread links first changes the
        // graph; on one thread the same vectors always give the same graph (and index bytes).
        let build = || {
            Hnsw::<Embedding>::builder()
                .ef_construction(settings.ef_construction)
                .ef_search(settings.ef_search)
                .seed(0x0063_6169_726e)
                .build_hnsw(points)
        };
        let (hnsw, point_of_chunk) = match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
            Ok(pool) => pool.install(build),
            Err(_) => build(),
        };
        let mut chunk_of_point = vec![0u32; point_of_chunk.len()];
        for (chunk, pid) in point_of_chunk.iter().enumerate() {
            chunk_of_point[pid.into_inner() as usize] = chunk as u32;
        }
        VectorIndex {
            model,
            store: Store::Graph {
                hnsw,
                chunk_of_point,
            },
            ef_search: settings.ef_search as u32,
        }
    }

    /// Every chunk's vector, in chunk order, flattened.
    pub fn to_flat(&self) -> Vec<f32> {
        match &self.store {
            Store::Flat(v) => v.clone(),
            Store::Int8 { values, scales } => values
                .chunks(self.dimension())
                .zip(scales)
                .flat_map(|(v, s)| v.iter().map(move |&x| x as f32 * s))
                .collect(),
            Store::Graph {
                hnsw,
                chunk_of_point,
            } => {
                let dim = self.dimension();
                let mut flat = vec![0f32; chunk_of_point.len() * dim];
                for (pid, point) in hnsw.iter() {
                    let chunk = chunk_of_point[pid.into_inner() as usize] as usize;
                    flat[chunk * dim..(chunk + 1) * dim].copy_from_slice(&point.0);
                }
                flat
            }
        }
    }

    pub fn dimension(&self) -> usize {
        self.model.dimension as usize
    }

    /// How the vectors are stored, as a scanned index would store them again (a graph's are f32).
    pub fn precision(&self) -> Precision {
        match self.store {
            Store::Int8 { .. } => Precision::Int8,
            _ => Precision::F32,
        }
    }

    pub fn has_graph(&self) -> bool {
        matches!(self.store, Store::Graph { .. })
    }

    pub fn len(&self) -> usize {
        match &self.store {
            Store::Flat(v) => v.len() / self.dimension().max(1),
            Store::Int8 { scales, .. } => scales.len(),
            Store::Graph { chunk_of_point, .. } => chunk_of_point.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn validate(&self, chunk_count: usize) -> Result<(), String> {
        let dim = self.dimension();
        if dim == 0 {
            return Err("the vector index has dimension 0".into());
        }
        match &self.store {
            Store::Flat(v) if v.len() != chunk_count * dim => {
                Err(format!("the vector index holds {} values, expected {} chunks × {dim}", v.len(), chunk_count))
            }
            Store::Int8 { values, scales } if values.len() != chunk_count * dim || scales.len() != chunk_count => {
                Err(format!("the vector index holds {} values and {} scales, expected {chunk_count} chunks × {dim}", values.len(), scales.len()))
            }
            Store::Graph { hnsw, chunk_of_point } => {
                if chunk_of_point.len() != chunk_count || chunk_of_point.iter().any(|&c| c as usize >= chunk_count) {
                    return Err("the vector graph does not cover the index's chunks".into());
                }
                if hnsw.iter().any(|(_, p)| p.0.len() != dim) {
                    return Err("a vector in the graph has the wrong dimension".into());
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The `limit` chunks most similar to `query` (normalized), best first, with cosine scores.
    /// Uses the graph when there is one and no `allowed` mask (a filtered search scans exactly,
    /// so a narrow filter cannot starve the graph's beam).
    pub fn search(
        &self,
        query: &[f32],
        limit: usize,
        allowed: Option<&[bool]>,
    ) -> Result<Vec<ScoredChunk>> {
        self.check_query(query)?;
        match &self.store {
            Store::Flat(_) | Store::Int8 { .. } => Ok(self.search_exact(query, limit, allowed)),
            Store::Graph { .. } if allowed.is_some() => {
                Ok(self.search_exact(query, limit, allowed))
            }
            Store::Graph {
                hnsw,
                chunk_of_point,
            } => {
                let mut search = Search::default();
                let point = Embedding(query.to_vec());
                let mut hits: Vec<ScoredChunk> = hnsw
                    .search(&point, &mut search)
                    .take(limit)
                    .map(|item| ScoredChunk {
                        chunk: chunk_of_point[item.pid.into_inner() as usize],
                        score: dot(query, &item.point.0),
                    })
                    .collect();
                crate::order::top_k(&mut hits, limit, |h| h.score, |h| h.chunk);
                Ok(hits)
            }
        }
    }

    /// Exact search: every (allowed) vector is scored.
    pub fn search_exact(
        &self,
        query: &[f32],
        limit: usize,
        allowed: Option<&[bool]>,
    ) -> Vec<ScoredChunk> {
        let keep = |chunk: u32| allowed.is_none_or(|a| a[chunk as usize]);
        let mut hits: Vec<ScoredChunk> = match &self.store {
            Store::Flat(vectors) => vectors
                .chunks_exact(self.dimension())
                .enumerate()
                .filter(|(chunk, _)| keep(*chunk as u32))
                .map(|(chunk, v)| ScoredChunk {
                    chunk: chunk as u32,
                    score: dot(query, v),
                })
                .collect(),
            Store::Int8 { values, scales } => values
                .chunks_exact(self.dimension())
                .zip(scales)
                .enumerate()
                .filter(|(chunk, _)| keep(*chunk as u32))
                .map(|(chunk, (v, scale))| ScoredChunk {
                    chunk: chunk as u32,
                    score: scale * dot_i8(query, v),
                })
                .collect(),
            Store::Graph {
                hnsw,
                chunk_of_point,
            } => hnsw
                .iter()
                .map(|(pid, p)| (chunk_of_point[pid.into_inner() as usize], p))
                .filter(|(chunk, _)| keep(*chunk))
                .map(|(chunk, p)| ScoredChunk {
                    chunk,
                    score: dot(query, &p.0),
                })
                .collect(),
        };
        crate::order::top_k(&mut hits, limit, |h| h.score, |h| h.chunk);
        hits
    }

    fn check_query(&self, query: &[f32]) -> Result<()> {
        if query.len() != self.dimension() {
            return Err(Error::Model(format!(
                "the query embedding has {} dimensions, the index's model ({}) has {}",
                query.len(),
                self.model.name,
                self.dimension()
            )));
        }
        Ok(())
    }
}

/// Dot product with 16 lanes of partial sums, added in a fixed order. On wasm32 with `simd128`
/// the lanes are four `f32x4` registers; elsewhere the same arithmetic is written on arrays
/// (which the compiler vectorizes), so both targets give bit-identical results.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        simd::dot(a, b, simd::f32s)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        dot_lanes(a, b)
    }
}

/// Dot product of an f32 vector with an 8-bit one, in the lanes and order of [`dot`].
pub fn dot_i8(a: &[f32], b: &[i8]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        simd::dot(a, b, simd::i8s)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        dot_lanes(a, b)
    }
}

/// [`dot`] and [`dot_i8`] without SIMD intrinsics: the same 16 lanes, written on arrays.
#[cfg(any(test, not(all(target_arch = "wasm32", target_feature = "simd128"))))]
fn dot_lanes<T: Copy + Into<f32>>(a: &[f32], b: &[T]) -> f32 {
    let mut acc = [0f32; 16];
    let (a_body, a_tail) = a.split_at(a.len() - a.len() % 16);
    let (b_body, b_tail) = b.split_at(a_body.len());
    for (x, y) in a_body.chunks_exact(16).zip(b_body.chunks_exact(16)) {
        for i in 0..16 {
            acc[i] += x[i] * y[i].into();
        }
    }
    finish(acc, a_tail, b_tail)
}

/// [`dot`] and [`dot_i8`] in `simd128` registers: the 16 lanes of [`dot_lanes`] as four `f32x4`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::*;

    /// `a · b`, where `widen` loads 16 components of `b` as four `f32x4`.
    #[inline(always)]
    pub(super) fn dot<T: Copy + Into<f32>>(
        a: &[f32],
        b: &[T],
        widen: impl Fn(&[T]) -> [v128; 4],
    ) -> f32 {
        let (a_body, a_tail) = a.split_at(a.len() - a.len() % 16);
        let (b_body, b_tail) = b.split_at(a_body.len());
        let mut acc = [f32x4_splat(0.0); 4];
        for (x, y) in a_body.chunks_exact(16).zip(b_body.chunks_exact(16)) {
            let y = widen(y);
            for lane in 0..4 {
                // SAFETY: `x` has 16 f32s, so offsets 0, 4, 8 and 12 each start four in bounds;
                // v128_load has no alignment requirement.
                let xv = unsafe { v128_load(x.as_ptr().add(lane * 4) as *const v128) };
                acc[lane] = f32x4_add(acc[lane], f32x4_mul(xv, y[lane]));
            }
        }
        let mut lanes = [0f32; 16];
        for lane in 0..4 {
            // SAFETY: `lanes` has room for four f32x4; v128_store has no alignment requirement.
            unsafe { v128_store(lanes.as_mut_ptr().add(lane * 4) as *mut v128, acc[lane]) };
        }
        super::finish(lanes, a_tail, b_tail)
    }

    /// 16 f32s as four `f32x4`.
    #[inline(always)]
    pub(super) fn f32s(y: &[f32]) -> [v128; 4] {
        // SAFETY: `dot` passes 16 f32s.
        [0, 4, 8, 12].map(|i| unsafe { v128_load(y.as_ptr().add(i) as *const v128) })
    }

    /// 16 i8s widened to four `f32x4`.
    #[inline(always)]
    pub(super) fn i8s(y: &[i8]) -> [v128; 4] {
        // SAFETY: `dot` passes 16 i8s, one v128.
        let bytes = unsafe { v128_load(y.as_ptr() as *const v128) };
        let (low, high) = (
            i16x8_extend_low_i8x16(bytes),
            i16x8_extend_high_i8x16(bytes),
        );
        [
            f32x4_convert_i32x4(i32x4_extend_low_i16x8(low)),
            f32x4_convert_i32x4(i32x4_extend_high_i16x8(low)),
            f32x4_convert_i32x4(i32x4_extend_low_i16x8(high)),
            f32x4_convert_i32x4(i32x4_extend_high_i16x8(high)),
        ]
    }
}

/// Adds the 16 lane sums pairwise, then the tail, in one fixed order.
fn finish<T: Copy + Into<f32>>(mut acc: [f32; 16], a_tail: &[f32], b_tail: &[T]) -> f32 {
    let mut width = 8;
    while width > 0 {
        for i in 0..width {
            acc[i] += acc[i + width];
        }
        width /= 2;
    }
    acc[0]
        + a_tail
            .iter()
            .zip(b_tail)
            .map(|(x, &y)| x * y.into())
            .sum::<f32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> ModelIdentity {
        ModelIdentity {
            name: "test".into(),
            dimension: 20,
            source_weights_sha256: String::new(),
            web_weights_sha256: String::new(),
            web_weights_file: String::new(),
            config_sha256: String::new(),
            tokenizer_sha256: String::new(),
            arithmetic: Default::default(),
        }
    }

    /// A pseudo-random unit vector (xorshift), distinct for every seed.
    fn unit(seed: u32) -> Vec<f32> {
        unit_of(seed, 20)
    }

    fn unit_of(seed: u32, dim: usize) -> Vec<f32> {
        let mut state = seed.wrapping_mul(2654435761).wrapping_add(1);
        let v: Vec<f32> = (0..dim)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state % 2000) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    #[test]
    fn int8_vectors_quantize_again_to_the_same_bytes() {
        let dim = 384;
        let vectors: Vec<f32> = (0..2000).flat_map(|seed| unit_of(seed, dim)).collect();
        let model = ModelIdentity {
            dimension: dim as u32,
            ..identity()
        };
        let once = VectorIndex::flat(model.clone(), vectors, Precision::Int8);
        let twice = VectorIndex::flat(model, once.to_flat(), Precision::Int8);
        assert_eq!(
            postcard::to_allocvec(&once).unwrap(),
            postcard::to_allocvec(&twice).unwrap()
        );
    }

    #[test]
    fn dot_matches_naive_sum() {
        let a: Vec<f32> = (0..37).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..37).map(|i| 1.0 - i as f32 * 0.25).collect();
        let naive: f64 = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (*x as f64) * (*y as f64))
            .sum();
        assert!((dot_lanes(&a, &b) as f64 - naive).abs() < 1e-3);
        assert_eq!(dot(&a, &b), dot_lanes(&a, &b));
    }

    #[test]
    fn dot_i8_matches_naive_sum() {
        let a: Vec<f32> = (0..37).map(|i| i as f32 * 0.5).collect();
        let b: Vec<i8> = (0..37).map(|i| (i * 7 - 120) as i8).collect();
        let naive: f64 = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (*x as f64) * (*y as f64))
            .sum();
        assert!((dot_lanes(&a, &b) as f64 - naive).abs() < 1e-2 * naive.abs().max(1.0));
        assert_eq!(dot_i8(&a, &b), dot_lanes(&a, &b));
    }

    #[test]
    fn int8_vectors_rank_as_f32_ones_in_a_quarter_of_the_bytes() {
        let vectors: Vec<f32> = (0..60).flat_map(unit).collect();
        let exact = VectorIndex::flat(identity(), vectors.clone(), Precision::F32);
        let small = VectorIndex::flat(identity(), vectors, Precision::Int8);
        assert!(small.validate(60).is_ok() && small.validate(59).is_err());
        for seed in [3, 7, 41] {
            let query = unit(seed);
            let (a, b) = (
                exact.search(&query, 5, None).unwrap(),
                small.search(&query, 5, None).unwrap(),
            );
            assert_eq!(b[0].chunk, seed);
            for (x, y) in a.iter().zip(&b) {
                assert!((x.score - y.score).abs() < 0.01, "{x:?} {y:?}");
            }
        }
        let bytes = |index: &VectorIndex| postcard::to_allocvec(index).unwrap().len();
        assert!(
            bytes(&small) * 3 < bytes(&exact),
            "{} vs {}",
            bytes(&small),
            bytes(&exact)
        );
        let round_trip = small.to_flat();
        assert!(round_trip
            .iter()
            .zip(exact.to_flat())
            .all(|(x, y)| (x - y).abs() < 0.01));
    }

    #[test]
    #[cfg(not(browser))]
    fn graph_and_flat_find_the_same_nearest() {
        let vectors: Vec<f32> = (0..60).flat_map(unit).collect();
        let flat = VectorIndex::flat(identity(), vectors.clone(), Precision::F32);
        let graph = VectorIndex::graph(identity(), vectors, GraphSettings::default());
        assert!(graph.validate(60).is_ok() && flat.validate(60).is_ok());
        let query = unit(7);
        let exact = flat.search(&query, 5, None).unwrap();
        assert_eq!(exact[0].chunk, 7);
        assert!((exact[0].score - 1.0).abs() < 1e-5);
        let approx = graph.search(&query, 5, None).unwrap();
        assert_eq!(
            approx.iter().map(|h| h.chunk).collect::<Vec<_>>(),
            exact.iter().map(|h| h.chunk).collect::<Vec<_>>()
        );
        assert_eq!(graph.search_exact(&query, 5, None), exact);
        assert!(flat.search(&[1.0; 3], 5, None).is_err());
    }

    #[test]
    #[cfg(not(browser))]
    fn the_same_vectors_give_the_same_graph() {
        let vectors: Vec<f32> = (0..3000).flat_map(unit).collect();
        let bytes = || {
            let graph = VectorIndex::graph(identity(), vectors.clone(), GraphSettings::default());
            postcard::to_allocvec(&graph).unwrap()
        };
        assert!(bytes() == bytes());
    }

    #[test]
    #[cfg(not(browser))]
    fn graph_parts_read_the_bytes_instant_distance_writes() {
        let vectors: Vec<f32> = (0..300).flat_map(unit).collect();
        let Store::Graph { hnsw, .. } =
            VectorIndex::graph(identity(), vectors, GraphSettings::default()).store
        else {
            unreachable!()
        };
        let bytes = postcard::to_allocvec(&hnsw).unwrap();
        let parts: GraphParts = postcard::from_bytes(&bytes).unwrap();
        assert!(
            !parts.layers.is_empty(),
            "300 points make more than one layer"
        );
        parts.check().unwrap();
        assert_eq!(postcard::to_allocvec(&parts).unwrap(), bytes);
    }

    #[test]
    #[cfg(not(browser))]
    fn a_crafted_graph_is_refused_not_searched() {
        let vectors: Vec<f32> = (0..300).flat_map(unit).collect();
        let index = VectorIndex::graph(identity(), vectors, GraphSettings::default());
        let Store::Graph { hnsw, .. } = &index.store else {
            unreachable!()
        };
        let mut parts: GraphParts =
            postcard::from_bytes(&postcard::to_allocvec(hnsw).unwrap()).unwrap();
        let decode = |parts: &GraphParts| {
            let graph = postcard::to_allocvec(parts).unwrap();
            let mut graph_index = postcard::to_allocvec(&index).unwrap();
            // Swap the graph's bytes inside the encoded index for the crafted ones.
            let original = postcard::to_allocvec(hnsw).unwrap();
            let at = graph_index
                .windows(original.len())
                .position(|w| w == original)
                .unwrap();
            graph_index.splice(at..at + original.len(), graph);
            postcard::from_bytes::<VectorIndex>(&graph_index)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert!(decode(&parts).is_ok());
        parts.zero[5].0 .0[0] = 300;
        assert!(
            decode(&parts).is_err(),
            "a lowest-layer neighbor past the last point"
        );
        parts.zero[5].0 .0[0] = 1;
        let top = parts.layers.len() - 1;
        parts.layers[top][0].0[0] = parts.layers[top].len() as u32;
        assert!(
            decode(&parts).is_err(),
            "an upper-layer neighbor outside its layer"
        );
        parts.layers[top][0].0[0] = NO_POINT;
        parts.layers.push(Vec::new());
        assert!(decode(&parts).is_err(), "an empty top layer");
        parts.layers.pop();
        parts.ef_search = 0;
        assert!(decode(&parts).is_err(), "no search beam");
    }
}
