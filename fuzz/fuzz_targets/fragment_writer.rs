//! The fragment writer on documents of any size: the first byte picks the format and how many
//! times the rest is repeated to make one document (up to about 4 MB, so a writer whose time
//! grows faster than its input's bytes overruns the run's time limit); the document is read,
//! built into an index (with the stand-in vectors, so the vector fragments are cut too) and
//! cut into fragments, and the layout must read back: every fragment decodes and agrees with
//! the meta, and a search over the fragments gives the single file's hits.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use cairn::chunk::ChunkLimit;
use cairn::fragment::load::{Fragmented, Step};
use cairn::fragment::write::{layout, Options};
use cairn::build::build;
use cairn::index::IndexSettings;
use cairn::ingest::{ingest_file, IngestOptions, InputFile};
use cairn::search::QueryContext;
use cairn_fuzz::{stand_in_vectors, write_seeds_if_asked};
use libfuzzer_sys::fuzz_target;

const FORMATS: [&str; 4] = ["md", "html", "jsonl", "txt"];
/// The largest document made, in bytes.
const MAX_BYTES: usize = 4 << 20;

fn folder() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        let dir = base.join(format!("cairn-fuzz-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        dir
    })
}

fuzz_target!(
    init: {
        write_seeds_if_asked("fragment_writer", || {
            let seed = |name: &str, selector: u8, body: &str| (name.to_string(), [&[selector][..], body.as_bytes()].concat());
            vec![
                // One long line, repeated to megabytes: the case that made writing quadratic.
                seed("one-line-md", 0xfc, "word another third fourth fifth sixth seventh eighth ninth tenth "),
                seed("paragraphs-txt", 0xf3, "A paragraph of plain text with several words.\n\n"),
                seed("jsonl-record", 0x02, "{\"id\":\"a\",\"title\":\"T\",\"text\":\"some text here\"}\n"),
                seed("html", 0x81, "<main><h1 id=a>Title</h1><p>text of the page, more words</p></main>"),
            ]
        });
    },
    |data: &[u8]| {
        let Some((&selector, body)) = data.split_first() else { return };
        if body.is_empty() {
            return;
        }
        let format = FORMATS[(selector & 3) as usize];
        // Up to 2^(selector >> 2 / 3) copies: from one to about MAX_BYTES of text.
        let copies = (1usize << ((selector >> 2) / 3)).min(MAX_BYTES / body.len()).max(1);
        let path = folder().join(format!("input.{format}"));
        std::fs::write(&path, body.repeat(copies)).expect("scratch file");
        let file = InputFile { root: folder().clone(), path };
        let options = IngestOptions { chunk_limit: ChunkLimit::words(200), base_url: String::new() };
        let Ok(ingested) = ingest_file(&file, &options) else { return };
        let Ok(index) = build(ingested.documents, IndexSettings::default(), Some(stand_in_vectors()), |_, _| {}) else { return };
        let cut = Options { text_bytes: 300, ..Options::default() };
        let layout = layout(&index, &cut).expect("an index always cuts into fragments");
        let mut reader = Fragmented::open(&layout.meta).expect("a written meta reads back");
        let pack = |name: &str| &layout.packs.iter().find(|(n, _)| n == name).expect("a named pack").1;
        let query: String = index.chunks.iter().flat_map(|c| c.text.split_whitespace().take(2)).take(3).collect::<Vec<_>>().join(" ");
        let search = cairn::hit::SearchOptions { limit: 5, ..Default::default() };
        let single = cairn::search::search(&index, &query, QueryContext::default(), &search).map(|hits| hits.into_iter().map(|h| h.id.clone()).collect::<Vec<_>>());
        for _round in 0..8 {
            match cairn::search::Query::new(&cairn::search::Source::analyzer(&reader), &query).and_then(|q| cairn::search::answer::search(&reader, &q, QueryContext::default(), &search)) {
                Ok(Step::Done(hits)) => {
                    let ids: Vec<_> = hits.into_iter().map(|h| h.id.clone()).collect();
                    assert_eq!(Ok(ids), single.as_ref().map(Clone::clone).map_err(|_| ()), "fragments and the single file differ");
                    return;
                }
                Ok(Step::Need(cairn::search::Need { fragments, records, rows })) => {
                    for f in fragments {
                        let (name, offset, length) = reader.address(f).expect("an address");
                        let slot = pack(name)[offset as usize..offset as usize + length as usize].to_vec();
                        reader.add_slot(f, &slot).expect("a written fragment reads back");
                    }
                    assert!(records.is_empty() && rows.is_empty(), "a lexical search asks for no records or rows");
                }
                Ok(_) => panic!("a lexical search asked for scores"),
                Err(e) => {
                    assert!(single.is_err(), "the fragments refused a query the single file answers: {e}");
                    return;
                }
            }
        }
        panic!("the search did not settle in 8 rounds");
    }
);
