//! What the common terms' postings in a fragmented index's term shards would cost in other
//! encodings, gzip term by term as the writer gzips (a term of over 1,000 postings is a shard of
//! its own): what decides whether a term shard can shrink without BM25 moving
//! (`docs/benchmarks.md`, "Postings in other encodings").
//!
//!   cargo run --release --example postings_size -- FRAGMENTS_DIR [BIG]
//!
//! Over the terms with more than BIG postings (1,000), it prints bytes a posting for: the
//! columns as the shards hold them (chunk gaps and frequencies as varints, a length byte each);
//! each column alone; the same bit-packed in blocks of 128 (a width a block, as Lucene and
//! tantivy do); and the gaps (varints or bit-packed) with one 8-bit impact each instead of
//! frequency and length (Anserini's quantized impacts), which would move BM25's scores.
use std::io::{Read, Seek, SeekFrom};

use cairn::fragment::load::{decode, Fragmented};
use cairn::fragment::{unslot, Payload, TermPostings, META_FILE, PACK_DIR};
use cairn::index::lexical::byte_length;
use cairn::store::envelope::gunzip;

fn gzip_len(bytes: &[u8]) -> usize {
    cairn::fragment::write::gzip(bytes).len()
}

fn varints(values: impl IntoIterator<Item = u32>, out: &mut Vec<u8>) {
    for mut x in values {
        while x >= 128 {
            out.push(x as u8 | 128);
            x >>= 7;
        }
        out.push(x as u8);
    }
}

fn bitpacked(values: &[u32], out: &mut Vec<u8>) {
    for block in values.chunks(128) {
        let width = block
            .iter()
            .map(|&x| 32 - x.leading_zeros())
            .max()
            .unwrap_or(0);
        out.push(width as u8);
        let (mut acc, mut bits) = (0u64, 0);
        for &x in block {
            acc |= (x as u64) << bits;
            bits += width;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
        if bits > 0 {
            out.push(acc as u8);
        }
    }
}

/// BM25's term-frequency part (k1 1.2, b 0.75) in 8 bits.
fn impact(freq: u32, byte: u8, average: f32) -> u8 {
    let tf = freq as f32;
    let part = tf / (tf + 1.2 * (0.25 + 0.75 * byte_length(byte) / average));
    (part * 255.0).round() as u8
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let big: usize = args.get(2).map_or(1000, |a| a.parse().expect("BIG"));
    let meta = std::fs::read(dir.join(META_FILE)).expect("read the meta file");
    let index = Fragmented::open(&meta).expect("a meta file");
    let average = index.meta().average_chunk_length;
    let mut common: Vec<TermPostings> = Vec::new();
    for f in 0..index.meta().terms.len() as u32 {
        let (pack, offset, length) = index.address(f).expect("a term shard");
        let mut file = std::fs::File::open(dir.join(PACK_DIR).join(pack)).expect("a pack");
        file.seek(SeekFrom::Start(offset)).expect("seek");
        let mut slot = vec![0u8; length as usize];
        file.read_exact(&mut slot).expect("read");
        let plain =
            gunzip(unslot(&slot).expect("a slot"), usize::MAX, "a term shard").expect("gzip");
        let Payload::Terms(shard) = decode(f, &plain).expect("a fragment").payload else {
            panic!("fragment {f} is not a term shard")
        };
        common.extend(shard.postings.into_iter().filter(|p| p.freqs.len() > big));
    }
    let postings: usize = common.iter().map(|p| p.freqs.len()).sum();
    // Each encoding gzipped term by term.
    let cost = |encode: &dyn Fn(&TermPostings, &mut Vec<u8>)| -> f64 {
        let bytes: usize = common
            .iter()
            .map(|p| {
                let mut out = Vec::new();
                encode(p, &mut out);
                gzip_len(&out)
            })
            .sum();
        bytes as f64 / postings as f64
    };
    println!(
        "{} terms over {big} postings, {postings} postings; bytes a posting, gzip:",
        common.len()
    );
    let rows: [(&str, &dyn Fn(&TermPostings, &mut Vec<u8>)); 7] = [
        (
            "varints: gaps, frequencies; a length byte each (the layout)",
            &|p, out| {
                varints(p.chunk_gaps.iter().copied(), out);
                varints(p.freqs.iter().copied(), out);
                out.extend(&p.length_bytes);
            },
        ),
        ("  gaps alone", &|p, out| {
            varints(p.chunk_gaps.iter().copied(), out)
        }),
        ("  frequencies alone", &|p, out| {
            varints(p.freqs.iter().copied(), out)
        }),
        ("  length bytes alone", &|p, out| {
            out.extend(&p.length_bytes)
        }),
        (
            "bit-packed blocks of 128: gaps, frequencies - 1, length bytes",
            &|p, out| {
                bitpacked(&p.chunk_gaps, out);
                bitpacked(&p.freqs.iter().map(|f| f - 1).collect::<Vec<_>>(), out);
                bitpacked(
                    &p.length_bytes.iter().map(|&b| b as u32).collect::<Vec<_>>(),
                    out,
                );
            },
        ),
        ("varint gaps, an 8-bit impact each", &|p, out| {
            varints(p.chunk_gaps.iter().copied(), out);
            out.extend(
                p.freqs
                    .iter()
                    .zip(&p.length_bytes)
                    .map(|(&f, &l)| impact(f, l, average)),
            );
        }),
        ("bit-packed gaps, an 8-bit impact each", &|p, out| {
            bitpacked(&p.chunk_gaps, out);
            out.extend(
                p.freqs
                    .iter()
                    .zip(&p.length_bytes)
                    .map(|(&f, &l)| impact(f, l, average)),
            );
        }),
    ];
    for (name, encode) in rows {
        println!("{:>6.3}  {name}", cost(encode));
    }
}
