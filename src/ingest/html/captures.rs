//! The text of elements that can nest (links, `data-cairn-meta`), gathered in one pass, and
//! whitespace folding.

use ego_tree::NodeId;

use super::parse::floor_char_boundary;

/// The most text kept of one link or `data-cairn-meta` element, in bytes.
const CAPTURED: usize = 1000;

/// The text of elements that can nest (links, `data-cairn-meta`), gathered in the same pass:
/// the open ones share one buffer, each knowing where its own text begins, so nesting costs no
/// second reading. Each text is cut at [`CAPTURED`] bytes.
pub(super) struct Captures<T> {
    text: String,
    open: Vec<(NodeId, usize, T)>,
}

impl<T> Default for Captures<T> {
    fn default() -> Self {
        Captures {
            text: String::new(),
            open: Vec::new(),
        }
    }
}

impl<T> Captures<T> {
    pub(super) fn open(&mut self, id: NodeId, what: T) {
        self.open.push((id, self.text.len(), what));
    }

    pub(super) fn push(&mut self, text: &str) {
        if !self.open.is_empty() {
            self.text.push_str(text);
        }
    }

    /// What was opened for `id`, and its text, if `id` is the innermost open element.
    pub(super) fn close(&mut self, id: NodeId) -> Option<(T, String)> {
        if self.open.last()?.0 != id {
            return None;
        }
        let (_, start, what) = self.open.pop()?;
        let end = floor_char_boundary(&self.text, (start + CAPTURED).min(self.text.len()));
        let text = collapse(&self.text[start..end]);
        if self.open.is_empty() {
            self.text.clear();
        }
        Some((what, text))
    }
}

/// Whitespace runs folded to one space, trimmed.
pub(super) fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
