//! Chunking: cuts a document's sections into passages of at most `max_words` words, never across
//! a heading. Blocks (paragraphs, list items, code blocks) are packed whole while they fit; a
//! block too long for one chunk is cut at sentence boundaries (and a sentence too long, at word
//! boundaries). Every chunk keeps its line range and the byte offset in the source where it
//! starts, through each block's map from text offsets to source offsets.

use unicode_segmentation::UnicodeSegmentation;

/// A run of text from the source, e.g. a paragraph.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub text: String,
    /// Pairs (offset in `text`, offset in the source), increasing: text from one pair's offset
    /// up to the next pair's is a verbatim copy of the source from the pair's source offset.
    pub source_map: Vec<(usize, u64)>,
}

impl Block {
    /// A block whose text is a verbatim copy of the source from `source_offset`.
    pub fn verbatim(text: String, source_offset: u64) -> Self {
        Block { text, source_map: vec![(0, source_offset)] }
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

/// Cuts sections into chunks of at most `max_words` words. A section that needs n chunks is cut
/// into n of about equal size, not n − 1 full ones and a scrap.
pub fn chunk_sections(sections: &[Section], max_words: usize) -> Vec<ChunkDraft> {
    let max_words = max_words.max(1);
    let mut out = Vec::new();
    for section in sections {
        let total: usize = section.blocks.iter().map(|b| b.text.unicode_words().count()).sum();
        let target = total.div_ceil(total.div_ceil(max_words).max(1)).max(1);
        let mut pieces: Vec<Piece> = Vec::new();
        for block in &section.blocks {
            split_block(block, target, max_words, &mut pieces);
        }
        let mut current: Vec<Piece> = Vec::new();
        let mut words = 0;
        for piece in pieces {
            let over_max = words + piece.words > max_words;
            // Past the target, add the piece only if that lands nearer the target than stopping.
            let over_target = words + piece.words > target && words + piece.words - target > target - words.min(target);
            if !current.is_empty() && (over_max || over_target) {
                out.push(draft(section, std::mem::take(&mut current)));
                words = 0;
            }
            words += piece.words;
            current.push(piece);
        }
        if !current.is_empty() {
            out.push(draft(section, current));
        }
    }
    out
}

/// A part of a block that goes into one chunk whole.
struct Piece {
    text: String,
    words: usize,
    source_start: u64,
    source_end: u64,
    /// Whether the piece starts a new block (joined with a blank line) or continues one (a space).
    starts_block: bool,
}

/// Splits a block into pieces for packing: the whole block when it has at most `target` words,
/// else its sentences, with any sentence longer than `max_words` cut every `target` words.
fn split_block(block: &Block, target: usize, max_words: usize, out: &mut Vec<Piece>) {
    let text = block.text.trim_end();
    let start = text.len() - text.trim_start().len();
    if start >= text.len() {
        return;
    }
    let mut first = true;
    let mut piece = |from: usize, to: usize| {
        let slice = &text[from..to];
        let lead = slice.len() - slice.trim_start().len();
        let slice = slice.trim();
        if slice.is_empty() {
            return;
        }
        out.push(Piece {
            text: slice.to_string(),
            words: slice.unicode_words().count(),
            source_start: block.source_offset(from + lead),
            source_end: block.source_offset(from + lead + slice.len()),
            starts_block: std::mem::replace(&mut first, false),
        });
    };
    if text.unicode_words().count() <= target {
        piece(start, text.len());
        return;
    }
    for (offset, sentence) in text.split_sentence_bound_indices() {
        if offset + sentence.len() <= start {
            continue;
        }
        if sentence.unicode_words().count() <= max_words {
            piece(offset, offset + sentence.len());
            continue;
        }
        let cuts: Vec<usize> = sentence
            .unicode_word_indices()
            .enumerate()
            .filter(|(i, _)| i % target == 0)
            .map(|(_, (o, _))| offset + o)
            .skip(1)
            .chain([offset + sentence.len()])
            .collect();
        let mut from = offset;
        for cut in cuts {
            piece(from, cut);
            from = cut;
        }
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
        Section { heading_path: vec!["H".into()], anchor: Some("h".into()), blocks }
    }

    #[test]
    fn packs_blocks_and_splits_long_ones_at_sentences() {
        let sections = [section(&["one two three", "four five", "six seven eight nine. Ten eleven twelve."])];
        let chunks = chunk_sections(&sections, 5);
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, vec!["one two three\n\nfour five", "six seven eight nine.", "Ten eleven twelve."]);
        // The third block starts at 13 + 2 + 9 + 2 = 26; its second sentence 22 bytes later.
        assert_eq!(chunks[1].source_start, 26);
        assert_eq!(chunks[2].source_start, 48);
        assert!(chunks.iter().all(|c| c.heading_path == vec!["H".to_string()]));
    }

    #[test]
    fn cuts_a_sentence_longer_than_a_chunk() {
        let sections = [section(&["a b c d e f g h"])];
        let chunks = chunk_sections(&sections, 3);
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, vec!["a b c", "d e f", "g h"]);
        assert_eq!(chunks[1].source_start, 6);
    }

    #[test]
    fn source_map_and_lines() {
        let block = Block { text: "abcdef".into(), source_map: vec![(0, 10), (3, 20)] };
        assert_eq!(block.source_offset(1), 11);
        assert_eq!(block.source_offset(4), 21);
        let lines = LineIndex::new("a\nbb\nccc");
        assert_eq!((lines.line_of(0), lines.line_of(2), lines.line_of(5), lines.line_of(7)), (1, 2, 3, 3));
    }
}
