//! Arbitrary bytes as an index file: `format::read` must answer with an error or an index, and
//! an index that reads must answer every kind of search without panicking.
#![no_main]

use cairn_fuzz::{sample_files, search_everything, write_seeds_if_asked};
use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: {
        write_seeds_if_asked("index_decode", || {
            let mut seeds = sample_files();
            let lexical = seeds[0].1.clone();
            seeds.push(("truncated".into(), lexical[..lexical.len() / 2].to_vec()));
            seeds.push(("magic-only".into(), b"CAIRNIDX".to_vec()));
            seeds
        });
    },
    |data: &[u8]| {
        if let Ok(index) = cairn::index::format::read(data) {
            search_everything(&index);
        }
    }
);
