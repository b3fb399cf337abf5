//! Which layout an index folder gets (one file, or fragments when one file would cost a first
//! answer too much) and writing the index in it, published through the staging folder.

use super::publish::{write_synced, Staging};
use crate::error::Result;
use crate::fragment;
use crate::index::{format, Index, INDEX_FILE};

/// What `cairn index` writes.
#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Layout {
    /// One file when index.cairn (compressed) is at most 300 kB; else fragments, whose first
    /// query costs a few hundred kB whatever the site's size.
    Auto,
    /// `index.cairn`: one download, the only kind Node apps and `cairn search --output
    /// documents|context` read.
    Single,
    /// `meta.cairn` and packs of fragments under `p/`, fetched as a query needs them.
    Fragments,
}

/// What a first answer should cost at most, in bytes: past it, `--layout auto` writes fragments.
/// A single `index.cairn` is downloaded whole before the first answer (the model comes
/// separately, in the background), while a fragmented index's first query fetches a few
/// hundred kB (277 kB for the Rust docs, page included; Pagefind's about 520 kB).
pub const FIRST_ANSWER_BUDGET: usize = 300_000;

/// Writes `index` into the staging folder's output in `layout`, with the static tier's
/// `rows_packs`, and commits it (the model too when `with_model`): `index.cairn`, or `meta.cairn`
/// and its packs. Returns what it wrote, for the summary line, and its bytes.
pub fn write_index(
    index: &Index,
    mut rows_packs: Vec<(String, Vec<u8>)>,
    layout: Layout,
    staging: Staging,
    with_model: bool,
) -> Result<(String, usize)> {
    let out = staging.out.clone();
    // The single file, compressed, is what a browser downloads before its first answer: auto
    // writes it when that is within the budget.
    let single = match layout {
        Layout::Fragments => None,
        Layout::Auto | Layout::Single => Some(format::write(index)?),
    };
    let size = single.as_ref().map_or(0, Vec::len);
    let fragments = match layout {
        Layout::Auto => size > FIRST_ANSWER_BUDGET,
        Layout::Single => false,
        Layout::Fragments => true,
    };
    let why = (layout == Layout::Auto).then(|| {
        let (size, budget) = (kilobytes(size), kilobytes(FIRST_ANSWER_BUDGET));
        if fragments {
            format!("{INDEX_FILE} would be {size}, over the {budget} a first answer should cost: wrote fragments")
        } else {
            format!("{size}, within the {budget} a first answer should cost: one file")
        }
    });
    if fragments {
        drop(single);
        // Packs are named by their content, so new ones never overwrite the live index's; the
        // meta file that names them is renamed into place like index.cairn.
        let mut layout = fragment::write::layout(index, &fragment::write::Options::default())?;
        layout.packs.append(&mut rows_packs);
        fragment::write::save_packs(&layout.packs, &out)?;
        write_synced(&staging.path.join(fragment::META_FILE), &layout.meta)?;
        let owned = staging.commit(with_model, fragment::META_FILE)?;
        fragment::write::remove_owned(
            &out,
            &owned.packs,
            layout.packs.iter().map(|(n, _)| n.as_str()),
        )?;
        if owned.index_file {
            let _ = std::fs::remove_file(out.join(INDEX_FILE));
        }
        let total = layout.meta.len() + layout.packs.iter().map(|(_, b)| b.len()).sum::<usize>();
        let path = format!(
            "{} ({} fragments in {} packs{})",
            out.join(fragment::META_FILE).display(),
            layout.fragments,
            layout.packs.len(),
            why.map_or(String::new(), |why| format!("; {why}"))
        );
        Ok((path, total))
    } else {
        let bytes = single.expect("a single file is written in memory first");
        fragment::write::save_packs(&rows_packs, &out)?;
        write_synced(&staging.path.join(INDEX_FILE), &bytes)?;
        let owned = staging.commit(with_model, INDEX_FILE)?;
        if owned.meta {
            let _ = std::fs::remove_file(out.join(fragment::META_FILE));
        }
        fragment::write::remove_owned(
            &out,
            &owned.packs,
            rows_packs.iter().map(|(n, _)| n.as_str()),
        )?;
        let path = out.join(INDEX_FILE).display().to_string();
        Ok((
            why.map_or(path.clone(), |why| format!("{path}: {why}")),
            bytes.len(),
        ))
    }
}

/// Bytes as the summary line writes them, in decimal units as hosts and browsers count:
/// 300 kB, 4.7 MB.
fn kilobytes(bytes: usize) -> String {
    match bytes {
        b if b < 1_000 => format!("{b} bytes"),
        b if b < 100_000 => format!("{:.1} kB", b as f64 / 1e3),
        b if b < 1_000_000 => format!("{:.0} kB", b as f64 / 1e3),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}
