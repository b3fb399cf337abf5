//! Crafted index files: the payload is changed and framed with a correct header and CRC-32, so
//! every change reaches the decoder and its cross-checks instead of stopping at the checksum.
//! Two kinds of input, told apart by the first byte:
//!
//! - even: the rest is a payload, used as it is (the committed seeds are the payloads of valid
//!   indexes: lexical, int8, f32 and an HNSW graph);
//! - odd: the rest is an edit script for the payload of a valid index built in `init` (so the
//!   script never goes stale when the format changes): bits 1–2 of the first byte pick the index
//!   (lexical, int8, f32, HNSW graph); then each 4 bytes are an offset (u16, little-endian, modulo
//!   the length), an operation (set, xor, insert, remove up to 8 bytes) and a value.
//!
//! Whatever decodes must answer every kind of search without panicking.
#![no_main]

use std::sync::OnceLock;

use cairn_fuzz::{frame, payload, sample_files, search_everything, write_seeds_if_asked};
use libfuzzer_sys::fuzz_target;

fn payloads() -> &'static [Vec<u8>] {
    static PAYLOADS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    PAYLOADS.get_or_init(|| sample_files().into_iter().map(|(_, file)| payload(&file)).collect())
}

fn edit(mut payload: Vec<u8>, script: &[u8]) -> Vec<u8> {
    for op in script.chunks_exact(4) {
        if payload.is_empty() {
            break;
        }
        let at = u16::from_le_bytes([op[0], op[1]]) as usize % payload.len();
        let value = op[3];
        match op[2] % 4 {
            0 => payload[at] = value,
            1 => payload[at] ^= value,
            2 => payload.insert(at, value),
            _ => {
                let end = (at + 1 + value as usize % 8).min(payload.len());
                payload.drain(at..end);
            }
        }
    }
    payload
}

fuzz_target!(
    init: {
        write_seeds_if_asked("index_payload", || {
            let mut seeds: Vec<(String, Vec<u8>)> =
                sample_files().into_iter().map(|(name, file)| (name, [&[0u8][..], &payload(&file)].concat())).collect();
            // Edit scripts: one byte of the graph's index changed, two bytes of int8 vectors removed.
            seeds.push(("edit-graph".into(), vec![0b111, 0x00, 0x10, 0, 0x7f, 0x40, 0x10, 1, 0x55]));
            seeds.push(("edit-int8".into(), vec![0b011, 0x20, 0x0c, 3, 1]));
            seeds
        });
        payloads();
    },
    |data: &[u8]| {
        let Some((&mode, rest)) = data.split_first() else { return };
        let payload = if mode & 1 == 0 {
            rest.to_vec()
        } else {
            edit(payloads()[(mode as usize >> 1) % 4].clone(), rest)
        };
        if let Ok(index) = cairn::index::format::read(&frame(&payload)) {
            search_everything(&index);
        }
    }
);
