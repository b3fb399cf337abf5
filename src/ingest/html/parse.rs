//! The page parsed by html5ever into scraper's tree, noting where each text node begins in the
//! source and refusing pages that nest too deep or make too many elements.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};
use std::collections::hash_map::{Entry, HashMap};

use ego_tree::{NodeId, NodeRef};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{BufferQueue, Tokenizer};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeBuilder, TreeSink};
use html5ever::{Attribute, QualName, TokenizerResult};
use scraper::{Html, HtmlTreeSink, Node};

/// The deepest nesting of elements read.
const MAX_DEPTH: usize = 1024;

/// Parses a page as scraper does, noting where each text node's first non-blank character
/// stands in the source. The page is fed in pieces, so that parsing stops soon after the
/// elements nest too deep.
pub(super) fn parse(source: &str) -> Result<(Html, HashMap<NodeId, usize>), String> {
    let input = BufferQueue::default();
    let sink = Sink {
        tree: HtmlTreeSink::new(Html::new_document()),
        source,
        input: &input,
        fed: Cell::new(0),
        starts: RefCell::default(),
        cursor: Cell::new(0),
        depths: RefCell::default(),
        too_deep: Cell::new(false),
        elements: Cell::new(0),
    };
    let most_elements = source.len() / 2 + 10_000;
    let tokenizer = Tokenizer::new(
        TreeBuilder::new(sink, Default::default()),
        Default::default(),
    );
    let mut start = 0;
    while start < source.len() {
        let mut end = (start + 8192).min(source.len());
        while !source.is_char_boundary(end) {
            end += 1;
        }
        input.push_back(StrTendril::from_slice(&source[start..end]));
        tokenizer.sink.sink.fed.set(end);
        while let TokenizerResult::Script(_) = tokenizer.feed(&input) {}
        if tokenizer.sink.sink.too_deep.get() {
            return Err(format!("its elements nest deeper than {MAX_DEPTH} levels (a browser nests no deeper than 512)"));
        }
        if tokenizer.sink.sink.elements.get() > most_elements {
            return Err(format!(
                "its {} bytes make more than {most_elements} elements (misnested formatting tags, reopened in every paragraph)",
                source.len()
            ));
        }
        start = end;
    }
    tokenizer.end();
    let sink = tokenizer.sink.sink;
    Ok((sink.tree.finish(), sink.starts.into_inner()))
}

/// scraper's tree sink, where each text node begins, and how deep each element is. When text is
/// added, the input the tokenizer has consumed ends with the token that made it.
struct Sink<'a> {
    tree: HtmlTreeSink,
    source: &'a str,
    input: &'a BufferQueue,
    /// How much of the source has been put in `input`.
    fed: Cell<usize>,
    starts: RefCell<HashMap<NodeId, usize>>,
    /// Where the last text node was placed: the next one begins at or after it.
    cursor: Cell<usize>,
    depths: RefCell<HashMap<NodeId, usize>>,
    too_deep: Cell<bool>,
    /// Elements made so far.
    elements: Cell<usize>,
}

impl Sink<'_> {
    /// Notes where `piece`, just added to `node`, begins, if it is the node's first non-blank text.
    fn note(&self, node: Option<NodeId>, piece: &str) {
        let (Some(node), Some(lead)) = (node, piece.find(|c: char| !c.is_whitespace())) else {
            return;
        };
        let mut starts = self.starts.borrow_mut();
        let Entry::Vacant(entry) = starts.entry(node) else {
            return;
        };
        let left = self.input.clone();
        let end = self.fed.get()
            - std::iter::from_fn(|| left.pop_front())
                .map(|b| b.len())
                .sum::<usize>();
        // The piece as written, else a character reference (`&ldquo;`, `&#122;`) ending there,
        // else the piece a character or so before (the tokenizer read on to decide), else text
        // the parser moved (out of a table), placed by its length.
        let near = floor_char_boundary(self.source, end.saturating_sub(piece.len() + 8));
        let reference = self.source[near..end]
            .rfind('&')
            .filter(|&at| is_reference(&self.source[near + at + 1..end]));
        // The tokenizer may have read past the piece (several text tokens from one read): the
        // piece as written is then its first occurrence after the last text node's start that
        // begins where text can, after a tag (`>`) or at the very beginning, maybe after blanks
        // the parser dropped. (A piece with `<` or `&` came from a character reference, placed
        // below.)
        let from = self.cursor.get().min(end);
        let after_tag = |at: usize| {
            let before = self.source[..at].trim_end();
            before.is_empty() || before.ends_with('>')
        };
        let written = (!piece.contains(['<', '&']))
            .then(|| {
                self.source[from..end]
                    .match_indices(piece)
                    .map(|(at, _)| from + at)
                    .find(|&at| after_tag(at))
            })
            .flatten();
        let start = if let Some(at) = written {
            at + lead
        } else if self.source[..end].ends_with(piece) {
            end - piece.len() + lead
        } else if let Some(at) = reference {
            near + at
        } else if let Some(at) = self.source[near..end].rfind(piece) {
            near + at + lead
        } else if let Some(at) = self.source[from..end].find(piece) {
            from + at + lead
        } else {
            floor_char_boundary(self.source, end.saturating_sub(piece.len()))
        };
        entry.insert(start);
        // The next text node begins after this one's first character.
        self.cursor.set(
            start
                + self.source[start..]
                    .chars()
                    .next()
                    .map_or(0, char::len_utf8),
        );
    }

    fn text_node(&self, node: Option<NodeRef<Node>>) -> Option<NodeId> {
        node.filter(|n| n.value().is_text()).map(|n| n.id())
    }

    /// Notes the depth of an element placed `below` levels under `at`.
    fn nest(&self, at: NodeId, child: &NodeOrText<NodeId>, below: usize) {
        if let NodeOrText::AppendNode(child) = child {
            let mut depths = self.depths.borrow_mut();
            let depth = depths.get(&at).copied().unwrap_or(0) + below;
            depths.insert(*child, depth);
            if depth > MAX_DEPTH {
                self.too_deep.set(true);
            }
        }
    }
}

/// Whether `text` is what follows the `&` of a character reference: a name or number, `;` maybe.
fn is_reference(text: &str) -> bool {
    let name = text.strip_suffix(';').unwrap_or(text);
    let name = name.strip_prefix('#').unwrap_or(name);
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric())
}

pub(super) fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn text_of(child: &NodeOrText<NodeId>) -> Option<StrTendril> {
    match child {
        NodeOrText::AppendText(text) => Some(text.clone()),
        NodeOrText::AppendNode(_) => None,
    }
}

impl TreeSink for Sink<'_> {
    type Handle = NodeId;
    type Output = Self;
    type ElemName<'b>
        = Ref<'b, QualName>
    where
        Self: 'b;

    fn finish(self) -> Self {
        self
    }
    fn append(&self, parent: &NodeId, child: NodeOrText<NodeId>) {
        self.nest(*parent, &child, 1);
        let text = text_of(&child);
        self.tree.append(parent, child);
        if let Some(piece) = text {
            let node = self.text_node(
                self.tree
                    .0
                    .borrow()
                    .tree
                    .get(*parent)
                    .and_then(|p| p.last_child()),
            );
            self.note(node, &piece);
        }
    }
    fn append_before_sibling(&self, sibling: &NodeId, child: NodeOrText<NodeId>) {
        self.nest(*sibling, &child, 0);
        let text = text_of(&child);
        self.tree.append_before_sibling(sibling, child);
        if let Some(piece) = text {
            let node = self.text_node(
                self.tree
                    .0
                    .borrow()
                    .tree
                    .get(*sibling)
                    .and_then(|s| s.prev_sibling()),
            );
            self.note(node, &piece);
        }
    }
    fn append_based_on_parent_node(
        &self,
        element: &NodeId,
        prev_element: &NodeId,
        child: NodeOrText<NodeId>,
    ) {
        let has_parent = self
            .tree
            .0
            .borrow()
            .tree
            .get(*element)
            .is_some_and(|e| e.parent().is_some());
        if has_parent {
            self.append_before_sibling(element, child)
        } else {
            self.append(prev_element, child)
        }
    }
    fn parse_error(&self, msg: Cow<'static, str>) {
        self.tree.parse_error(msg)
    }
    fn get_document(&self) -> NodeId {
        self.tree.get_document()
    }
    fn elem_name<'b>(&'b self, target: &'b NodeId) -> Ref<'b, QualName> {
        self.tree.elem_name(target)
    }
    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> NodeId {
        self.elements.set(self.elements.get() + 1);
        self.tree.create_element(name, attrs, flags)
    }
    fn create_comment(&self, text: StrTendril) -> NodeId {
        self.tree.create_comment(text)
    }
    fn create_pi(&self, target: StrTendril, data: StrTendril) -> NodeId {
        self.tree.create_pi(target, data)
    }
    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.tree
            .append_doctype_to_document(name, public_id, system_id)
    }
    fn get_template_contents(&self, target: &NodeId) -> NodeId {
        self.tree.get_template_contents(target)
    }
    fn same_node(&self, x: &NodeId, y: &NodeId) -> bool {
        x == y
    }
    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.tree.set_quirks_mode(mode)
    }
    fn add_attrs_if_missing(&self, target: &NodeId, attrs: Vec<Attribute>) {
        self.tree.add_attrs_if_missing(target, attrs)
    }
    fn remove_from_parent(&self, target: &NodeId) {
        self.tree.remove_from_parent(target)
    }
    fn reparent_children(&self, node: &NodeId, new_parent: &NodeId) {
        self.tree.reparent_children(node, new_parent)
    }
}
