//! The stemmer of the one language this module is built for (its feature of pagefind_stem), for
//! the browser's cairn modules, which compile English's only. Plain wasm, no bindings: the page
//! asks `input(len)` for a buffer, writes a folded word's UTF-8 there, and `stem(len)` returns
//! the stem's length, its bytes at `output()`. js/stem.js is the other side.

use std::cell::RefCell;

thread_local! {
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Where the next word goes: `len` bytes, zeroed.
#[unsafe(no_mangle)]
pub extern "C" fn input(len: usize) -> *mut u8 {
    INPUT.with_borrow_mut(|b| {
        b.clear();
        b.resize(len, 0);
        b.as_mut_ptr()
    })
}

/// Stems the word at `input` (`len` bytes of UTF-8; anything else is left as it is) and returns
/// the stem's length in bytes, at `output()`.
#[unsafe(no_mangle)]
pub extern "C" fn stem(len: usize) -> usize {
    let stemmer = pagefind_stem::Stemmer::try_create_default().ok();
    INPUT.with_borrow(|input| {
        let word = &input[..len.min(input.len())];
        let stemmed = match (std::str::from_utf8(word), &stemmer) {
            (Ok(word), Some(stemmer)) => stemmer.stem(word).into_owned().into_bytes(),
            _ => word.to_vec(),
        };
        OUTPUT.with_borrow_mut(|out| *out = stemmed);
    });
    OUTPUT.with_borrow(|out| out.len())
}

/// The last stem's bytes.
#[unsafe(no_mangle)]
pub extern "C" fn output() -> *const u8 {
    OUTPUT.with_borrow(|out| out.as_ptr())
}
