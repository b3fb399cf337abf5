//! The `cairn` command line: `index`, `search` and `eval`, a thin shell over the library.

#[cfg(not(browser))]
mod cli;

#[cfg(not(browser))]
fn main() -> std::process::ExitCode {
    // As WASI (the npm package's command line), relative paths start at the working folder the
    // launcher passes; WASI itself starts every program at `/`.
    #[cfg(target_os = "wasi")]
    if let Some(dir) = std::env::var_os("CAIRN_CWD") {
        if let Err(e) = std::env::set_current_dir(&dir) {
            eprintln!("error: cannot enter the working folder {dir:?}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    cli::main()
}

#[cfg(browser)]
fn main() {}
