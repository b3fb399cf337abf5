//! `cairn index`: reads the inputs, embeds their chunks and writes the index folder (or, with
//! `--shard`, one part of a split build), through the library's build path (`cairn::build`).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use cairn::analyze::AnalyzerSettings;
use cairn::build::shard as build_shard;
use cairn::build::{
    self, choose_language, distill_static, embedding_estimate, load_source_model, reusable,
    split_by_language, write_index, write_synced, write_web_model, LanguageManifest, Layout,
    Staging, WebWeights, MODEL_DIR, PART_FILE,
};
use cairn::chunk::{ChunkLimit, TokenLimit};
use cairn::encoder::Arithmetic;
use cairn::index::{format, vector, IndexSettings};
use cairn::ingest;

use super::{terminal_safe, Progress};

#[derive(clap::Args)]
pub(super) struct IndexArgs {
    /// Files or folders to index.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The index folder to write (index.cairn, and model/ for the browser).
    #[arg(long)]
    out: PathBuf,
    /// The sentence model's folder (model.safetensors, tokenizer.json, config.json).
    #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
    model: PathBuf,
    /// Build a lexical-only index: no embeddings, no model.
    #[arg(long)]
    no_embed: bool,
    /// Leave out the static tier (the query encoder a browser uses until the model is in):
    /// saves its distillation (about a minute for 10,000 terms) and its rows on disk.
    #[arg(long)]
    no_static: bool,
    /// Choose each document's summary (a few of its sentences) for `includeSummary`: by
    /// meaning with a model, else by its title's words. Costs build time and index bytes.
    #[arg(long)]
    summaries: bool,
    /// The largest chunk, in words. With a model, a chunk also fits the model's window (256
    /// tokens, the title and headings it reads with the chunk included).
    #[arg(long, default_value_t = IndexSettings::default().chunk_words, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    chunk_words: u32,
    /// The language the documents are written in, as a language tag (en, de, fr, es, pt-BR,
    /// ru, zh, ...): words are stemmed and stop words dropped as that language's are (Snowball
    /// stemmers and NLTK stop lists; languages without them are folded only). `auto`: the one
    /// most documents say (`<html lang>`, front matter or JSONL `lang`), else English.
    #[arg(long, default_value = "auto")]
    language: String,
    /// Prefix of each file's URL (its path under the input folder follows; with several input
    /// folders, the folder's name first: std/index.html, book/index.html).
    #[arg(long, default_value = "")]
    base_url: String,
    /// In a built site (a folder with an index.html at its top), index every file cairn reads,
    /// not only the HTML pages (Sphinx's _sources/*.txt copies, robots.txt, PDFs, ...).
    #[arg(long)]
    all_files: bool,
    /// Leave out files matching this glob (repeatable), e.g. '**/drafts/**'.
    #[arg(long)]
    exclude: Vec<String>,
    /// Build an HNSW graph when there are at least this many chunks; fewer are scanned exactly.
    #[arg(long, default_value_t = 20_000)]
    graph_from: usize,
    /// Embed only this share of the chunks, I of N (from 1), and write a part
    /// (`part.cairn`) for `cairn merge` instead of an index: one build spread over machines.
    #[arg(long, value_parser = build_shard::Shard::parse, conflicts_with_all = ["no_embed"])]
    shard: Option<build_shard::Shard>,
    /// Write the index even when every input was skipped (otherwise that run fails and the
    /// previous index stays).
    #[arg(long)]
    allow_empty: bool,
    /// Precision of the model weights written for the browser.
    #[arg(long, value_enum, default_value_t = WebWeights::Q8)]
    web_weights: WebWeights,
    /// Precision of the chunk vectors of a scanned index (i8: a quarter of the bytes); an
    /// index with a graph keeps f32.
    #[arg(long, value_enum, default_value_t = vector::Precision::Int8)]
    vectors: vector::Precision,
    /// The arithmetic the model embeds chunks in: f32, or int8 (the linear layers in 8-bit
    /// blocks: about 1.5 times the chunks a second, vectors within cosine 0.999 of f32's).
    /// Queries are embedded in f32 either way; the index records which its vectors are.
    #[arg(long, value_enum, default_value_t = Arithmetic::F32)]
    arithmetic: Arithmetic,
    /// One file, or fragments a browser fetches only as a query needs them; auto writes
    /// fragments when index.cairn (compressed) would be over 300 kB, what a browser downloads
    /// before its first answer.
    #[arg(long, value_enum, default_value_t = Layout::Auto)]
    layout: Layout,
}

pub(super) fn index(args: IndexArgs) -> Result<()> {
    let started = Instant::now();
    let mut globs = globset::GlobSetBuilder::new();
    for pattern in &args.exclude {
        globs.add(
            globset::Glob::new(pattern)
                .with_context(|| format!("--exclude {pattern:?} is not a valid glob"))?,
        );
    }
    let exclude = globs.build()?;
    let files = ingest::collect(
        &args.inputs,
        &exclude,
        &ingest::CollectOptions {
            all_files: args.all_files,
        },
    )?;
    for skipped in &files.skipped {
        eprintln!("skipped {}", terminal_safe(&skipped.to_string(), 1000));
    }
    // A built site's other files (Sphinx's _sources/*.txt) are left out: say so, once a site.
    for site in files.sites.iter().filter(|s| !s.left_out.is_empty()) {
        eprintln!("{}", terminal_safe(&site.to_string(), 1000));
    }
    if files.is_empty() {
        bail!("no files to index in {:?}: cairn reads .md, .markdown, .html, .htm, .pdf, .txt and .jsonl", args.inputs);
    }
    // Load the model first: a missing model should fail before minutes of work.
    let model = if args.no_embed {
        None
    } else {
        let (mut embedder, files) = load_source_model(&args.model)?;
        embedder.set_arithmetic(args.arithmetic);
        Some((embedder, files))
    };

    let mut settings = IndexSettings {
        chunk_words: args.chunk_words,
        summaries: args.summaries,
        ..IndexSettings::default()
    };
    let counter = model
        .as_ref()
        .map(|(embedder, _)| embedder.token_counter())
        .transpose()?;
    let count_tokens = |text: &str| counter.as_ref().map_or(0, |c| c.count(text));
    let chunk_limit = ChunkLimit {
        words: args.chunk_words as usize,
        tokens: counter.as_ref().map(|c| TokenLimit {
            max: c.window(),
            count: &count_tokens,
        }),
    };
    let options = ingest::IngestOptions {
        chunk_limit,
        base_url: args.base_url.clone(),
    };
    let bar = Progress::new(files.len() as u64, "reading");
    let ingested = ingest::ingest(&files, &options, || bar.inc());
    bar.finish();
    for skipped in &ingested.skipped {
        eprintln!("skipped {}", terminal_safe(&skipped.to_string(), 1000));
    }
    for warning in &ingested.warnings {
        eprintln!("warning {}", terminal_safe(&warning.to_string(), 1000));
    }
    if ingested.documents.is_empty() && !args.allow_empty {
        bail!(
            "every input was skipped ({} problems above), so there is nothing to index; the previous index, if any, is kept (pass --allow-empty to write an empty index)",
            files.skipped.len() + ingested.skipped.len()
        );
    }
    // Files left out and warnings, for the summary line.
    let problems = [
        files.skipped.len() + ingested.skipped.len(),
        ingested.warnings.len(),
    ];
    let choice = choose_language(&args.language, &ingested.documents)
        .map_err(|e| anyhow!("--language: {e}"))?;
    // Told `auto`, documents in several languages make one index a language.
    if args.language == "auto" && args.shard.is_none() && choice.declared.len() > 1 {
        return index_languages(
            &args,
            choice,
            ingested.documents,
            &model,
            settings,
            problems,
            started,
        );
    }
    settings.analyzer = analyzer_for(&args.language, &choice)?;
    let built = write_language(
        &args,
        &args.out,
        "",
        ingested.documents,
        &model,
        settings,
        problems,
        started,
    )?;
    // A site that was in several languages and is now in one: its manifest goes (the folders
    // it listed are whole indexes, no longer offered).
    let manifest = args.out.join(LanguageManifest::FILE);
    if std::fs::read(&manifest)
        .ok()
        .and_then(|bytes| LanguageManifest::read(&bytes))
        .is_some()
    {
        std::fs::remove_file(&manifest)
            .with_context(|| format!("cannot remove {}", manifest.display()))?;
        eprintln!(
            "the documents are in one language now: removed {} (the folders it listed are left as they are)",
            manifest.display()
        );
    }
    Ok(built)
}

/// One index a language, each in its own folder under `--out` (`out/de/`), and
/// `languages.json` listing them, written last: a client given the folder chooses by the page's
/// language. An index the folder held before at its top is no longer what it offers, so its
/// entry files (`index.cairn`, `meta.cairn`) go.
fn index_languages(
    args: &IndexArgs,
    choice: cairn::build::LanguageChoice,
    documents: Vec<ingest::SourceDocument>,
    model: &Option<(cairn::embed::Embedder, cairn::embed::ModelFiles)>,
    settings: IndexSettings,
    problems: [usize; 2],
    started: Instant,
) -> Result<()> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    // Held while the languages are written: no other build writes into the folder meanwhile.
    let _held = Staging::new(&args.out)?;
    let groups = split_by_language(&choice, documents);
    eprintln!(
        "the documents are in {} languages: one index a language ({}), listed in {}",
        groups.len(),
        groups
            .iter()
            .map(|(code, docs)| format!("{} in {code}/", docs.len()))
            .collect::<Vec<_>>()
            .join(", "),
        LanguageManifest::FILE
    );
    let mut counts = Vec::new();
    for (i, (code, documents)) in groups.into_iter().enumerate() {
        counts.push((code.clone(), documents.len()));
        let settings = IndexSettings {
            analyzer: AnalyzerSettings::for_language(&code).map_err(|e| anyhow!("{code}: {e}"))?,
            ..settings.clone()
        };
        // The problems of reading are counted once, with the first language.
        let problems = if i == 0 { problems } else { [0, 0] };
        let label = format!("{code}/: ");
        write_language(
            args,
            &args.out.join(&code),
            &label,
            documents,
            model,
            settings,
            problems,
            started,
        )?;
    }
    let path = args.out.join(LanguageManifest::FILE);
    let part = args.out.join(format!(".{}.part", LanguageManifest::FILE));
    write_synced(
        &part,
        &serde_json::to_vec_pretty(&LanguageManifest::new(&counts))?,
    )?;
    std::fs::rename(&part, &path).with_context(|| format!("cannot write {}", path.display()))?;
    let before = cairn::fragment::write::owned(&args.out);
    for (owned, file) in [
        (before.meta, cairn::fragment::META_FILE),
        (before.index_file, cairn::index::INDEX_FILE),
    ] {
        if owned {
            std::fs::remove_file(args.out.join(file))
                .with_context(|| format!("cannot remove {}", args.out.join(file).display()))?;
        }
    }
    Ok(())
}

/// Writes one language's index into `out`: embeds, distills, lays out and publishes it, and
/// says what it wrote (after `label`).
#[allow(clippy::too_many_arguments)]
fn write_language(
    args: &IndexArgs,
    out: &std::path::Path,
    label: &str,
    documents: Vec<ingest::SourceDocument>,
    model: &Option<(cairn::embed::Embedder, cairn::embed::ModelFiles)>,
    settings: IndexSettings,
    problems: [usize; 2],
    started: Instant,
) -> Result<()> {
    let chunk_total: usize = documents.iter().map(|d| d.chunks.len()).sum();

    // Everything is written into a staging folder beside the index and renamed into place at the
    // end, so a failed or killed build leaves the previous index whole.
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let staging = Staging::new(out)?;
    // The index being replaced, if it was embedded by the same model: unchanged chunks keep
    // their vectors and unchanged documents their summaries.
    let mut previous = None;
    let mut previous_texts = None;
    let vectors = match model {
        None => None,
        Some((embedder, source)) => {
            // The word rows most chunks' text has go with the browser's 8-bit model, so most
            // queries fetch none of their own.
            let common = match args.web_weights {
                WebWeights::Q8 => {
                    let (tokens, share) = build::common_tokens(
                        embedder,
                        documents
                            .iter()
                            .flat_map(|d| d.chunks.iter().map(|c| c.text.as_str())),
                    )?;
                    eprintln!(
                        "the model's word rows of the {} tokens most chunks have ({:.0}% of the text's tokens) go with it, so most queries fetch none",
                        tokens.len(),
                        share * 100.0
                    );
                    tokens
                }
                _ => Vec::new(),
            };
            let web = write_web_model(
                source,
                &staging.path.join(MODEL_DIR),
                args.web_weights,
                &common,
            )?;
            let identity = embedder.identity(source, web);
            // A shard embeds its whole share; only a full build reads the previous index.
            if args.shard.is_none() {
                (previous, previous_texts) = reusable(out, &identity);
            }
            Some(build::VectorOptions {
                embedder,
                identity,
                previous: previous.as_ref(),
                graph_from: args.graph_from,
                graph: vector::GraphSettings::default(),
                precision: args.vectors,
            })
        }
    };
    if let Some(vectors) = &vectors {
        let range = args.shard.map_or(0..chunk_total, |s| s.range(chunk_total));
        if let Some(line) = embedding_estimate(&documents, range, vectors, previous_texts.as_ref())
        {
            eprintln!("{line}");
        }
    }
    if let Some(shard) = args.shard {
        let options = vectors.expect("--shard needs the model (clap refuses --no-embed)");
        return write_part(shard, documents, settings, options, args, staging, started);
    }
    let bar = Progress::new(chunk_total as u64, "embedding");
    let mut index = build::build(documents, settings, vectors, |done, _| {
        bar.set_position(done as u64)
    })?;
    bar.finish();
    // The static tier's rows; their packs go under p/ in either layout, before the index that
    // names them.
    let (rows_packs, distilled_in) = match (model, args.no_static) {
        (Some((embedder, _)), false) => distill_static(&mut index, embedder)?,
        _ => (Vec::new(), None),
    };
    let rows_bytes: usize = rows_packs.iter().map(|(_, b)| b.len()).sum();
    let (path, bytes) = write_index(&index, rows_packs, args.layout, staging, model.is_some())?;
    println!(
        "{label}indexed {} documents, {} chunks, {} bytes ({}) in {:.1} s{}{}",
        index.documents.len(),
        index.chunks.len(),
        bytes,
        path,
        started.elapsed().as_secs_f64(),
        distilled_in.map_or(String::new(), |(rows, s)| format!(
            "; static tier {rows} rows ({} bytes) in {s:.1} s",
            rows_bytes
        )),
        [
            ("skipped", problems[0]),
            ("warnings", problems[1]),
            (
                "chunk vectors kept from the previous index",
                previous.as_ref().map_or(0, build::Previous::reused)
            ),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("; {what} {n}"))
        .collect::<String>()
    );
    Ok(())
}

/// `cairn index --shard`: embeds the shard's chunks and writes its part (and the model).
fn write_part(
    shard: build_shard::Shard,
    sources: Vec<ingest::SourceDocument>,
    settings: IndexSettings,
    options: build::VectorOptions,
    args: &IndexArgs,
    staging: Staging,
    started: Instant,
) -> Result<()> {
    let (index, texts) = build::assemble(sources, settings);
    let range = shard.range(texts.len());
    let bar = Progress::new(range.len() as u64, "embedding");
    let vectors = build::embed_all(options.embedder, &texts[range.clone()], &|done, _| {
        bar.set_position(done as u64)
    })?;
    bar.finish();
    let part = build_shard::Part {
        shard,
        identity: options.identity,
        graph_from: args.graph_from as u64,
        precision: args.vectors,
        index: format::write(&index)?,
        vectors,
    };
    write_synced(&staging.path.join(PART_FILE), &part.write()?)?;
    // A part replaces no index: what the folder held stays.
    staging.commit(true, PART_FILE)?;
    println!(
        "shard {shard}: embedded chunks {} to {} of {} into {} in {:.1} s; join the parts with `cairn merge`",
        range.start + 1,
        range.end,
        texts.len(),
        args.out.join(PART_FILE).display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The analyzer of `--language` for the documents it was chosen for, saying what was chosen
/// when the documents chose it or disagree with it.
fn analyzer_for(told: &str, choice: &cairn::build::LanguageChoice) -> Result<AnalyzerSettings> {
    let name =
        cairn::analyze::Language::of(&choice.language).map_or(choice.language.as_str(), |l| l.name);
    if told == "auto" && choice.language != "en" {
        eprintln!(
            "analyzing as {name} ({}), the language the documents say they are in",
            choice.language
        );
    }
    let others: Vec<String> = choice
        .others()
        .map(|(code, n)| format!("{n} in {code}"))
        .collect();
    if !others.is_empty() {
        eprintln!(
            "warning: some documents say another language ({}); told --language {told}, they are analyzed as {name} too: with --language auto each language gets an index of its own",
            others.join(", ")
        );
    }
    AnalyzerSettings::for_language(&choice.language).map_err(|e| anyhow!("--language: {e}"))
}
