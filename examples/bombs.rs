//! Writes fragmented indexes that are gzip bombs, for `bench/hostile.sh` to measure what a
//! reader holds before it refuses them:
//!   - `OUT/meta-bomb/meta.cairn`: 2 GiB of zeros in about 2 MB of gzip; `OUT/meta-bomb-lying/`
//!     the same with a trailer that understates its size as just under the reader's bound;
//!   - `OUT/fragment-bomb/`: the index in INDEX_DIR (a single file) cut into fragments, whose
//!     first term shard's slot is a megabyte of gzip that inflates to 1 GiB (its meta states the
//!     slot's length, as a crafted one would); `OUT/fragment-bomb-lying/` the same with a trailer
//!     that states the meta's `max_inflated`.
//!
//!   cargo run --release --example bombs -- INDEX_DIR OUT

use std::io::Write;
use std::path::PathBuf;

use cairn::fragment::load::Fragmented;
use cairn::fragment::write::{self, encode_meta, Options};
use cairn::fragment::{pack_name, META_FILE, PACK_DIR};
use cairn::index::format;

/// `n` MiB of zeros, gzipped.
fn zeros_gzip(mib: usize) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..mib {
        encoder.write_all(&zeros).expect("in memory");
    }
    encoder.finish().expect("in memory")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [source, out] = &args[..] else {
        return Err("usage: bombs INDEX_DIR OUT".into());
    };
    let out = PathBuf::from(out);

    let meta_bomb = out.join("meta-bomb");
    std::fs::create_dir_all(&meta_bomb)?;
    let bytes = zeros_gzip(2048);
    std::fs::write(meta_bomb.join(META_FILE), &bytes)?;
    println!(
        "{}: {} bytes inflating to 2 GiB",
        meta_bomb.join(META_FILE).display(),
        bytes.len()
    );
    let lying = out.join("meta-bomb-lying");
    std::fs::create_dir_all(&lying)?;
    let mut understated = bytes.clone();
    let stated = (bytes.len() * cairn::fragment::load::META_RATIO
        + cairn::fragment::load::META_FLOOR
        - 1) as u32;
    let n = understated.len();
    understated[n - 4..].copy_from_slice(&stated.to_le_bytes());
    std::fs::write(lying.join(META_FILE), &understated)?;

    let index = format::read(&std::fs::read(PathBuf::from(source).join("index.cairn"))?)?;
    let layout = write::layout(&index, &Options::default())?;
    let mut meta = Fragmented::open(&layout.meta)?.meta().clone();
    // Fragment 0's slot: the bomb, then the slot's two-byte tail.
    let mut slot = zeros_gzip(1024);
    slot.extend_from_slice(&2u16.to_le_bytes());
    let old = meta.fragment_lengths[0] as usize;
    let mut pack = slot.clone();
    pack.extend_from_slice(&layout.packs[0].1[old..]);
    meta.fragment_lengths[0] = slot.len() as u32;
    meta.packs[0] = pack_name(&pack, "cairnpack");
    let dir = out.join("fragment-bomb");
    write_layout(&dir, &pack, &layout.packs[1..], &meta)?;
    let mut lying = slot.clone();
    let n = lying.len() - 2;
    lying[n - 4..n].copy_from_slice(&meta.max_inflated.to_le_bytes());
    let mut pack = lying;
    pack.extend_from_slice(&layout.packs[0].1[old..]);
    meta.packs[0] = pack_name(&pack, "cairnpack");
    write_layout(
        &out.join("fragment-bomb-lying"),
        &pack,
        &layout.packs[1..],
        &meta,
    )?;
    println!(
        "{}: fragment 0 ({:?}…) is {} bytes inflating to 1 GiB; the largest real fragment is {} bytes",
        dir.display(),
        meta.terms[0],
        slot.len(),
        meta.max_inflated
    );
    Ok(())
}

/// Writes a fragmented layout: `first` as the first pack (named in `meta`), then `rest`.
fn write_layout(
    dir: &std::path::Path,
    first: &[u8],
    rest: &[(String, Vec<u8>)],
    meta: &cairn::fragment::Meta,
) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir.join(PACK_DIR))?;
    std::fs::write(dir.join(PACK_DIR).join(&meta.packs[0]), first)?;
    for (name, bytes) in rest {
        std::fs::write(dir.join(PACK_DIR).join(name), bytes)?;
    }
    std::fs::write(dir.join(META_FILE), write::gzip(&encode_meta(meta)?))?;
    Ok(())
}
