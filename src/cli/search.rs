//! `cairn search`: the flags and `--options` JSON as options, one query or a queries file, and
//! hits printed for a terminal (or JSON).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use cairn::hit::{ContextOptions, DocumentSearchOptions, Options, SearchHit, SearchOptions};
use cairn::open::open;
use rayon::prelude::*;

use super::{read_queries, terminal_safe, Output, SearchArgs};

/// A search as the command line asked for it.
pub(super) struct SearchRequest {
    /// The options from the flags.
    pub(super) base: SearchOptions,
    /// Whether `--limit` was given (else the options type's own default limit applies).
    pub(super) limit_given: bool,
    /// `--options` JSON, laid over them.
    pub(super) extra: Option<String>,
    pub(super) output: Output,
}

impl SearchRequest {
    /// The flags' options with the `--options` JSON laid over them, as type `T`.
    pub(super) fn parse<T: Options>(&self) -> Result<T> {
        let mut merged = serde_json::to_value(&self.base)?;
        let object = merged.as_object_mut().expect("options are an object");
        if !self.limit_given {
            object.remove("limit");
        }
        if let Some(extra) = &self.extra {
            match serde_json::from_str(extra).context("--options is not JSON")? {
                serde_json::Value::Object(extra) => object.extend(extra),
                _ => bail!("--options must be a JSON object"),
            }
        }
        T::from_json(merged).context("invalid --options")
    }
}

#[derive(clap::Args)]
pub(super) struct SearchCommand {
    /// The index folder (or an index.cairn file).
    index: PathBuf,
    /// The query.
    query: Option<String>,
    /// Run every query of a BEIR queries.jsonl instead, printing one JSON line per query.
    #[arg(long, conflicts_with = "query")]
    queries: Option<PathBuf>,
    /// How many hits (documents for --output documents; candidates for --output context).
    /// Default: 10, and 20 for --output context.
    #[arg(long)]
    limit: Option<u32>,
    #[arg(long)]
    json: bool,
    /// What to return: chunk hits, documents (searchDocuments) or a prompt context
    /// (buildContext); the last two print JSON.
    #[arg(long, value_enum, default_value_t = Output::Hits)]
    output: Output,
    /// More options as JSON, exactly as JavaScript passes them, e.g.
    /// '{"explain": true, "expand": 1, "filter": {"tags": "wasm"}, "tokenBudget": 500}'.
    #[arg(long)]
    options: Option<String>,
    #[command(flatten)]
    search: SearchArgs,
}

pub(super) fn run_search(args: SearchCommand) -> Result<()> {
    let SearchCommand {
        index: path,
        query,
        queries,
        limit,
        json,
        output,
        options,
        search,
    } = args;
    let request = SearchRequest {
        base: search.options(limit.unwrap_or(10)),
        limit_given: limit.is_some(),
        extra: options,
        output,
    };
    let search = match request.output {
        Output::Hits => request.parse::<SearchOptions>()?,
        Output::Documents => request.parse::<DocumentSearchOptions>()?.search,
        Output::Context => request.parse::<ContextOptions>()?.search,
    };
    let mut opened = open(&path, search.mode)?;
    if let Some(rerank) = &search.rerank {
        opened.load_reranker(rerank)?;
    }
    let searcher = &opened;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let answer = |query: &str| -> Result<serde_json::Value> {
        Ok(match request.output {
            Output::Hits => {
                serde_json::to_value(searcher.search(query, &request.parse::<SearchOptions>()?)?)?
            }
            Output::Documents => serde_json::to_value(
                searcher.search_documents(query, &request.parse::<DocumentSearchOptions>()?)?,
            )?,
            Output::Context => serde_json::to_value(
                searcher.build_context(query, &request.parse::<ContextOptions>()?)?,
            )?,
        })
    };
    if let Some(queries) = queries {
        let queries = read_queries(&queries)?;
        let results: Vec<Result<serde_json::Value>> =
            queries.par_iter().map(|(_, text)| answer(text)).collect();
        for ((id, _), result) in queries.iter().zip(results) {
            match result {
                Ok(value) => {
                    let key = if request.output == Output::Hits {
                        "hits"
                    } else {
                        "result"
                    };
                    serde_json::to_writer(
                        &mut out,
                        &serde_json::json!({ "queryId": id, key: value }),
                    )?;
                    writeln!(out)?;
                }
                Err(e) => eprintln!(
                    "query {}: {}",
                    terminal_safe(id, 200),
                    terminal_safe(&format!("{e:#}"), 1000)
                ),
            }
        }
        return Ok(());
    }
    let Some(query) = query else {
        bail!("give a QUERY, or --queries FILE")
    };
    if json || request.output != Output::Hits {
        serde_json::to_writer_pretty(&mut out, &answer(&query)?)?;
        writeln!(out)?;
    } else {
        print_hits(&mut out, &searcher.search(&query, &request.parse()?)?)?;
    }
    Ok(())
}

fn print_hits(out: &mut impl Write, hits: &[SearchHit]) -> Result<()> {
    if hits.is_empty() {
        writeln!(out, "no hits")?;
    }
    for hit in hits {
        let c = &hit.citation;
        let mut place = c.title.clone();
        for heading in c.heading_path.iter().filter(|h| **h != c.title) {
            place.push_str(" › ");
            place.push_str(heading);
        }
        let place = terminal_safe(&place, 200);
        let location = terminal_safe(c.url.as_deref().unwrap_or(&c.doc_id), 200);
        writeln!(
            out,
            "{:>2}. {place}  [{location}, lines {}-{}]",
            hit.rank, c.line_start, c.line_end
        )?;
        let mut signals = format!("{:.4} {:?}", hit.score, hit.score_kind).to_lowercase();
        if let Some(s) = &hit.signals.lexical {
            signals.push_str(&format!(
                "; lexical #{} {:.3} (document {:.3})",
                s.rank, s.score, s.document_score
            ));
        }
        if let Some(s) = &hit.signals.semantic {
            signals.push_str(&format!("; semantic #{} {:.3}", s.rank, s.score));
        }
        writeln!(out, "    {signals}")?;
        writeln!(out, "    {}", terminal_safe(&excerpt(hit, 240), 300))?;
    }
    Ok(())
}

/// The hit's text cut to about `max` characters around its first highlight, terms in «».
fn excerpt(hit: &SearchHit, max: usize) -> String {
    let units: Vec<u16> = hit.text.encode_utf16().collect();
    let first = hit.highlights.first().map_or(0, |h| h.start as usize);
    let start = first.saturating_sub(max / 3);
    let end = (start + max * 2).min(units.len());
    let mut out = String::new();
    let mut at = start;
    for h in hit
        .highlights
        .iter()
        .filter(|h| h.start as usize >= start && (h.end as usize) <= end)
    {
        out.push_str(&String::from_utf16_lossy(&units[at..h.start as usize]));
        out.push('«');
        out.push_str(&String::from_utf16_lossy(
            &units[h.start as usize..h.end as usize],
        ));
        out.push('»');
        at = h.end as usize;
    }
    out.push_str(&String::from_utf16_lossy(&units[at.min(end)..end]));
    let chars: Vec<char> = out
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect();
    let mut text: String = chars.iter().take(max).collect();
    if start > 0 {
        text.insert(0, '…');
    }
    if chars.len() > max || end < units.len() {
        text.push('…');
    }
    text
}
