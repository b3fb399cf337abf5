//! Chunking: cuts a document's sections into passages of at most so many words and, when a model
//! embeds them, no more tokens than the model reads (its title and headings counted), never
//! across a heading. Blocks (paragraphs, list items, code blocks) are packed whole while they
//! fit; a block too long for one chunk is cut at sentence boundaries (and a sentence too long, at
//! word boundaries). Every chunk keeps its line range and the byte offset in the source where it
//! starts, through each block's map from text offsets to source offsets.

use unicode_segmentation::UnicodeSegmentation;

/// A run of text from the source, e.g. a paragraph.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Block {
    pub text: String,
    /// Pairs (offset in `text`, offset in the source), increasing: text from one pair's offset
    /// up to the next pair's is a verbatim copy of the source from the pair's source offset.
    pub source_map: Vec<(usize, u64)>,
}

impl Block {
    /// A block whose text is a verbatim copy of the source from `source_offset`.
    pub fn verbatim(text: String, source_offset: u64) -> Self {
        Block {
            text,
            source_map: vec![(0, source_offset)],
        }
    }

    /// The source offset of byte `offset` of the text.
    pub fn source_offset(&self, offset: usize) -> u64 {
        let i = self.source_map.partition_point(|&(t, _)| t <= offset);
        match i.checked_sub(1).and_then(|i| self.source_map.get(i)) {
            Some(&(t, s)) => s + (offset - t) as u64,
            None => self.source_map.first().map_or(0, |&(_, s)| s),
        }
    }
}

/// The blocks under one heading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    pub heading_path: Vec<String>,
    pub anchor: Option<String>,
    pub blocks: Vec<Block>,
}

/// A chunk before it joins an index.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkDraft {
    pub heading_path: Vec<String>,
    pub anchor: Option<String>,
    pub text: String,
    pub source_start: u64,
    pub source_end: u64,
}

/// How much one chunk may hold: at most `words` words and, when a model embeds the chunks, at
/// most `tokens.max` of the model's tokens, counting the title and headings the model reads with
/// the chunk (see [`crate::index::heading_prefix`]).
#[derive(Debug, Clone, Copy)]
pub struct ChunkLimit<'a> {
    pub words: usize,
    pub tokens: Option<TokenLimit<'a>>,
}

/// A bound in a model's tokens, and how to count them (no special tokens; counts of texts joined
/// by whitespace add up, as a BERT tokenizer's do).
#[derive(Clone, Copy)]
pub struct TokenLimit<'a> {
    pub max: usize,
    pub count: &'a (dyn Fn(&str) -> usize + Sync),
}

impl std::fmt::Debug for TokenLimit<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenLimit")
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl ChunkLimit<'_> {
    pub fn words(words: usize) -> ChunkLimit<'static> {
        ChunkLimit {
            words,
            tokens: None,
        }
    }
}

/// A size in both units (tokens stay 0 without a token limit).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Size {
    words: usize,
    tokens: usize,
}

impl std::ops::Add for Size {
    type Output = Size;
    fn add(self, other: Size) -> Size {
        Size {
            words: self.words + other.words,
            tokens: self.tokens + other.tokens,
        }
    }
}

/// The bounds of one section's chunks: the most a chunk may hold, and the size aimed at.
struct Bounds<'a> {
    max: Size,
    target: Size,
    count: Option<&'a (dyn Fn(&str) -> usize + Sync)>,
}

impl Bounds<'_> {
    fn size(&self, text: &str) -> Size {
        Size {
            words: text.unicode_words().count(),
            tokens: self.count.map_or(0, |count| count(text)),
        }
    }

    fn fits(&self, size: Size) -> bool {
        size.words <= self.max.words && size.tokens <= self.max.tokens
    }

    /// How full `size` makes a chunk, against the target (the fuller unit counts), scaled so
    /// that the target is [`Bounds::full`]: integers, so ties are decided exactly.
    fn fill(&self, size: Size) -> u128 {
        let (w, t) = (self.target.words as u128, self.target.tokens as u128);
        (size.words as u128 * t).max(size.tokens as u128 * w)
    }

    fn full(&self) -> u128 {
        self.target.words as u128 * self.target.tokens as u128
    }
}

/// Cuts sections into chunks within `limit`, never across a heading. A section that needs n
/// chunks is cut into n of about equal size, not n − 1 full ones and a scrap. `title` is the
/// document's, which the model reads with every chunk.
pub fn chunk_sections(
    sections: &[Section],
    title: &str,
    limit: &ChunkLimit<'_>,
) -> Vec<ChunkDraft> {
    let mut out = Vec::new();
    for section in sections {
        let (bounds, block_sizes) = section_bounds(section, title, limit);
        let mut pieces: Vec<Piece> = Vec::new();
        for (block, size) in section.blocks.iter().zip(block_sizes) {
            split_block(block, size, &bounds, &mut pieces);
        }
        let mut current: Vec<Piece> = Vec::new();
        let mut size = Size::default();
        for piece in pieces {
            let next = size + piece.size;
            // Past the target, add the piece only if that lands nearer the target than stopping.
            let (full, fill) = (bounds.full(), bounds.fill(next));
            let over_target = fill > full && fill - full > full - bounds.fill(size).min(full);
            if !current.is_empty() && (!bounds.fits(next) || over_target) {
                out.push(draft(section, std::mem::take(&mut current)));
                size = Size::default();
            }
            size = size + piece.size;
            current.push(piece);
        }
        if !current.is_empty() {
            out.push(draft(section, current));
        }
    }
    out
}

/// A section's bounds: the limit (less the tokens of the title and headings), and a target that
/// cuts the section into as few chunks as fit, of equal size; and the size of each block.
fn section_bounds<'a>(
    section: &Section,
    title: &str,
    limit: &ChunkLimit<'a>,
) -> (Bounds<'a>, Vec<Size>) {
    let max_tokens = limit.tokens.map_or(usize::MAX, |t| {
        // However long the headings, a chunk keeps at least a quarter of the window for itself.
        t.max
            .saturating_sub((t.count)(&crate::index::heading_prefix(
                title,
                &section.heading_path,
            )))
            .max(t.max / 4)
            .max(1)
    });
    let mut bounds = Bounds {
        max: Size {
            words: limit.words.max(1),
            tokens: max_tokens,
        },
        target: Size::default(),
        count: limit.tokens.map(|t| t.count),
    };
    let block_sizes: Vec<Size> = section
        .blocks
        .iter()
        .map(|b| bounds.size(&b.text))
        .collect();
    let total = block_sizes
        .iter()
        .fold(Size::default(), |sum, &size| sum + size);
    let chunks = total
        .words
        .div_ceil(bounds.max.words)
        .max(total.tokens.div_ceil(bounds.max.tokens))
        .max(1);
    bounds.target = Size {
        words: total.words.div_ceil(chunks).max(1),
        tokens: total.tokens.div_ceil(chunks).max(1),
    };
    (bounds, block_sizes)
}

/// A part of a block that goes into one chunk whole.
struct Piece {
    text: String,
    size: Size,
    source_start: u64,
    source_end: u64,
    /// Whether the piece starts a new block (joined with a blank line) or continues one (a space).
    starts_block: bool,
}

/// Splits a block (of size `whole`) into pieces for packing: the whole block when it is within
/// the target, else its sentences, with any sentence over the limit cut at words as the target
/// fills.
fn split_block(block: &Block, whole: Size, bounds: &Bounds<'_>, out: &mut Vec<Piece>) {
    let text = block.text.trim_end();
    let start = text.len() - text.trim_start().len();
    if start >= text.len() {
        return;
    }
    let mut first = true;
    let mut piece = |from: usize, to: usize, size: Option<Size>| {
        let slice = &text[from..to];
        let lead = slice.len() - slice.trim_start().len();
        let slice = slice.trim();
        if slice.is_empty() {
            return;
        }
        out.push(Piece {
            text: slice.to_string(),
            size: size.unwrap_or_else(|| bounds.size(slice)),
            source_start: block.source_offset(from + lead),
            source_end: block.source_offset(from + lead + slice.len()),
            starts_block: std::mem::replace(&mut first, false),
        });
    };
    if bounds.fill(whole) <= bounds.full() {
        piece(start, text.len(), Some(whole));
        return;
    }
    for (offset, sentence) in text.split_sentence_bound_indices() {
        if offset + sentence.len() <= start {
            continue;
        }
        let size = bounds.size(sentence);
        if bounds.fits(size) {
            piece(offset, offset + sentence.len(), Some(size));
            continue;
        }
        // Each word is measured with the spaces and punctuation before it (the last, with the
        // rest of the sentence too), so the steps add up to the sentence.
        let mut from = offset;
        let mut measured_to = offset;
        let mut filled = Size::default();
        let mut words = sentence
            .unicode_word_indices()
            .map(|(o, w)| (offset + o, offset + o + w.len()))
            .peekable();
        while let Some((word_start, word_end)) = words.next() {
            let end = if words.peek().is_none() {
                offset + sentence.len()
            } else {
                word_end
            };
            let step = bounds.size(&text[measured_to..end]);
            measured_to = end;
            if filled != Size::default() && bounds.fill(filled + step) > bounds.full() {
                piece(from, word_start, None);
                from = word_start;
                filled = Size::default();
            }
            filled = filled + step;
        }
        piece(from, offset + sentence.len(), None);
    }
}

fn draft(section: &Section, pieces: Vec<Piece>) -> ChunkDraft {
    let mut text = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            text.push_str(if piece.starts_block { "\n\n" } else { " " });
        }
        text.push_str(&piece.text);
    }
    ChunkDraft {
        heading_path: section.heading_path.clone(),
        anchor: section.anchor.clone(),
        text,
        source_start: pieces.first().map_or(0, |p| p.source_start),
        source_end: pieces.last().map_or(0, |p| p.source_end),
    }
}

/// Maps byte offsets of a source to 1-based line numbers.
pub struct LineIndex {
    starts: Vec<u64>,
}

impl LineIndex {
    pub fn new(source: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(source.match_indices('\n').map(|(i, _)| i as u64 + 1));
        LineIndex { starts }
    }

    pub fn line_of(&self, offset: u64) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(blocks: &[&str]) -> Section {
        let mut offset = 0;
        let blocks = blocks
            .iter()
            .map(|b| {
                let block = Block::verbatim(b.to_string(), offset);
                offset += b.len() as u64 + 2;
                block
            })
            .collect();
        Section {
            heading_path: vec!["H".into()],
            anchor: Some("h".into()),
            blocks,
        }
    }

    #[test]
    fn packs_blocks_and_splits_long_ones_at_sentences() {
        let sections = [section(&[
            "one two three",
            "four five",
            "six seven eight nine. Ten eleven twelve.",
        ])];
        let chunks = chunk_sections(&sections, "", &ChunkLimit::words(5));
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "one two three\n\nfour five",
                "six seven eight nine.",
                "Ten eleven twelve."
            ]
        );
        // The third block starts at 13 + 2 + 9 + 2 = 26; its second sentence 22 bytes later.
        assert_eq!(chunks[1].source_start, 26);
        assert_eq!(chunks[2].source_start, 48);
        assert!(chunks
            .iter()
            .all(|c| c.heading_path == vec!["H".to_string()]));
    }

    #[test]
    fn cuts_a_sentence_longer_than_a_chunk() {
        let sections = [section(&["a b c d e f g h"])];
        let chunks = chunk_sections(&sections, "", &ChunkLimit::words(3));
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, vec!["a b c", "d e f", "g h"]);
        assert_eq!(chunks[1].source_start, 6);
    }

    #[test]
    fn a_token_limit_counts_the_title_and_headings_the_model_reads() {
        // A stand-in tokenizer: every word and every punctuation mark is a token, as in BERT's.
        let count = |text: &str| {
            text.split_word_bounds()
                .filter(|w| !w.trim().is_empty())
                .count()
        };
        let limit = ChunkLimit {
            words: 100,
            tokens: Some(TokenLimit {
                max: 8,
                count: &count,
            }),
        };
        // Title "T" and heading "H" take two tokens, so six remain for each chunk's text. The
        // block's 13 tokens need three chunks: of about 5 tokens and 4 words each.
        let sections = [section(&["a b c d e f g h i j. k l"])];
        let chunks = chunk_sections(&sections, "T", &limit);
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, vec!["a b c d", "e f g h", "i j. k l"]);
        for chunk in &chunks {
            assert!(
                count(&crate::index::heading_prefix("T", &chunk.heading_path)) + count(&chunk.text)
                    <= 8,
                "{:?}",
                chunk.text
            );
        }
        // Without the token limit, the words bound alone keeps the block whole.
        assert_eq!(
            chunk_sections(&sections, "T", &ChunkLimit::words(100)).len(),
            1
        );
    }

    #[test]
    fn source_map_and_lines() {
        let block = Block {
            text: "abcdef".into(),
            source_map: vec![(0, 10), (3, 20)],
        };
        assert_eq!(block.source_offset(1), 11);
        assert_eq!(block.source_offset(4), 21);
        let lines = LineIndex::new("a\nbb\nccc");
        assert_eq!(
            (
                lines.line_of(0),
                lines.line_of(2),
                lines.line_of(5),
                lines.line_of(7)
            ),
            (1, 2, 3, 3)
        );
    }
}
