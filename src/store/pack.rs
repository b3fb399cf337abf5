//! Packs and records: how cairn's files are cut for a browser to fetch by range. A pack is a
//! file of about a megabyte under `p/`, named by its content (`pack_name`), holding fragments or
//! records end to end; a record is one int8 vector (values, scale, CRC-32 of its id and both),
//! so one record is one range request and a record read from the wrong place is refused.

use sha2::Digest;

/// The folder of packs, beside an index's meta file or in its model folder.
pub const PACK_DIR: &str = "p";

/// The length of a vector record: `dimension` int8 components, the f32 scale and a CRC-32 of
/// both (little-endian). A records fragment is its partition's records end to end, not gzipped,
/// so that one record is one range of its pack.
pub fn record_length(dimension: usize) -> usize {
    dimension + 8
}

/// A pack's file name: `<20 hex digits of its SHA-256>.<kind>` (`cairnpack` for fragments,
/// `cairnrows` for static rows).
#[cfg(not(browser))]
pub fn pack_name(bytes: &[u8], kind: &str) -> String {
    format!("{}.{kind}", &sha256_hex(bytes)[..20])
}

/// The SHA-256 of `bytes` in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha2::Sha256::digest(bytes))
}

/// `bytes` in lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `name` is a file name `pack_name` gives (so a crafted meta cannot name a path).
pub fn is_pack_name(name: &str) -> bool {
    name.strip_suffix(".cairnpack")
        .or_else(|| name.strip_suffix(".cairnrows"))
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Appends record `id` (int8 values, scale, and a CRC-32 of the id and both) to `out`. The id
/// (a vector record's `record_id`, a row's number) is not stored: the reader that asks for
/// record `id` checks it, so bytes read from another record's place are refused, not used.
pub fn encode_record(values: &[i8], scale: f32, id: u64, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend(values.iter().map(|&v| v as u8));
    out.extend_from_slice(&scale.to_le_bytes());
    let crc = crate::store::envelope::crc32_of(id, &out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Record `id`'s int8 values and scale, if it is `record_length(dimension)` bytes, its
/// checksum holds for that id and its scale is finite.
pub fn decode_record(bytes: &[u8], dimension: usize, id: u64) -> Option<(Vec<i8>, f32)> {
    if bytes.len() != record_length(dimension) {
        return None;
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let scale = f32::from_le_bytes(body[dimension..].try_into().ok()?);
    (crate::store::envelope::crc32_of(id, body).to_le_bytes() == crc && scale.is_finite())
        .then(|| (body[..dimension].iter().map(|&b| b as i8).collect(), scale))
}

/// The id a vector record's checksum covers: its records fragment and its place there.
pub fn record_id(fragment: u32, record: u32) -> u64 {
    (fragment as u64) << 32 | record as u64
}

/// Appends `v` in int8 to `values` and returns its scale.
pub fn quantize_into(v: &[f32], values: &mut Vec<i8>) -> f32 {
    let scale = int8_scale(v.iter().fold(0f32, |m, x| m.max(x.abs())));
    values.extend(
        v.iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
    );
    scale
}

/// A vector's int8 scale: its largest magnitude over 127, rounded up to 17 significant bits.
/// Then `code × scale` is exact in f32 and the largest component's code is ±127, so quantizing
/// a dequantized vector gives back the same codes and scale: vectors an index hands to the next
/// build (`build::Previous`) are stored again byte for byte.
pub(crate) fn int8_scale(largest: f32) -> f32 {
    if !(largest > 0.0 && largest.is_finite()) {
        return 1.0;
    }
    const LOW: u32 = (1 << 7) - 1;
    let bits = (largest / 127.0).to_bits();
    f32::from_bits(if bits & LOW == 0 {
        bits
    } else {
        (bits | LOW) + 1
    })
}
