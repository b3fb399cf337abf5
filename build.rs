//! `cfg(browser)`: the wasm module a browser or Node loads through wasm-bindgen
//! (wasm32-unknown-unknown), as against every target with an operating system, WASI included
//! (the npm package's command line runs the native CLI's code as wasm32-wasip1).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(browser)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if arch == "wasm32" && os == "unknown" {
        println!("cargo::rustc-cfg=browser");
    }
}
