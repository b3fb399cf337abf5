// <cairn-search>: a search box for static sites.
//
//   <script type="module" src="/pkg/element.js"></script>
//   <cairn-search index="/search/index.cairn" model="/search/model" placeholder="Search the docs"></cairn-search>
//
// Results as you type (debounced), by meaning from the first query when the index has a static
// tier and again, in place, when the model has loaded; ARIA combobox semantics with arrow keys, Enter and Escape,
// highlighted terms, the citation (title, heading path, page) on each result, a marker on hits
// only the meaning signal found, empty and loading states, and styling through CSS custom
// properties (--cairn-accent, --cairn-mark, --cairn-text, --cairn-muted, --cairn-background,
// --cairn-border, --cairn-radius, --cairn-font). Indexed text is only ever inserted as text nodes,
// and a result's URL is followed only when it is http(s) or relative (see safeUrl).
import { Cairn, safeUrl } from "./client.js";

const STYLE = `
:host { display: block; position: relative; font: var(--cairn-font, inherit); color: var(--cairn-text, #1d232a); }
input { box-sizing: border-box; width: 100%; font: inherit; font-size: 1.05em; padding: .6em .8em; border: 2px solid var(--cairn-border, #c9cfc9); border-radius: var(--cairn-radius, .5em); background: var(--cairn-background, #fff); color: inherit; }
input:focus { outline: none; border-color: var(--cairn-accent, #2f6f4f); }
.status { color: var(--cairn-muted, #5b6470); font-size: .85em; margin: .3em .2em; min-height: 1.2em; }
ul { list-style: none; margin: 0; padding: 0; }
li { padding: .6em .5em; border-bottom: 1px solid var(--cairn-border, #e3e6e3); cursor: pointer; border-radius: var(--cairn-radius, .5em); }
li[aria-selected="true"] { background: color-mix(in srgb, var(--cairn-accent, #2f6f4f) 12%, transparent); }
.title { font-weight: 600; color: var(--cairn-accent, #2f6f4f); }
.where { color: var(--cairn-muted, #5b6470); font-size: .8em; }
.text { margin: .25em 0 0; font-size: .92em; line-height: 1.4; }
mark { background: var(--cairn-mark, #ffe58a); color: inherit; border-radius: 2px; }
.meaning { font-size: .7em; border: 1px solid currentColor; border-radius: 999px; padding: 0 .45em; margin-left: .4em; color: var(--cairn-accent, #2f6f4f); font-weight: 500; }
`;

let instances = 0;

export class CairnSearch extends HTMLElement {
  static observedAttributes = ["placeholder"];
  #cairn = null;
  #hits = [];
  #active = -1;
  #timer = 0;
  #query = 0;
  /** The query the list shows. */
  #shown = null;

  constructor() {
    super();
    const id = `cairn-${++instances}`;
    const root = this.attachShadow({ mode: "open" });
    const style = document.createElement("style");
    style.textContent = STYLE;
    this.input = Object.assign(document.createElement("input"), { type: "search", autocomplete: "off", spellcheck: false });
    this.input.setAttribute("role", "combobox");
    this.input.setAttribute("aria-autocomplete", "list");
    this.input.setAttribute("aria-expanded", "false");
    this.input.setAttribute("aria-controls", `${id}-list`);
    this.status = Object.assign(document.createElement("div"), { className: "status" });
    this.status.setAttribute("role", "status");
    this.status.setAttribute("aria-live", "polite");
    this.list = Object.assign(document.createElement("ul"), { id: `${id}-list` });
    this.list.setAttribute("role", "listbox");
    this.list.setAttribute("aria-label", "Search results");
    this.listId = id;
    root.append(style, this.input, this.status, this.list);
    this.input.addEventListener("input", () => {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => this.#search(), Number(this.getAttribute("debounce") ?? 120));
    });
    this.input.addEventListener("keydown", (e) => this.#key(e));
  }

  attributeChangedCallback() {
    this.input.placeholder = this.getAttribute("placeholder") ?? "Search…";
  }

  async connectedCallback() {
    this.input.placeholder = this.getAttribute("placeholder") ?? "Search…";
    if (this.#cairn) return;
    this.#say("Loading the index…");
    try {
      this.#cairn = await Cairn.open({
        index: this.getAttribute("index"),
        model: this.getAttribute("model") ?? undefined,
        worker: this.getAttribute("worker") !== "false",
        onProgress: (e) => {
          if (e.what === "model" && !this.input.value) this.#say(`Loading the model… ${Math.min(100, Math.round((100 * e.loaded) / (e.total || e.loaded)))}%`);
          this.dispatchEvent(new CustomEvent("cairn-progress", { detail: e }));
        },
        onModelReady: (e) => {
          this.dataset.model = e.ready ? (e.fromCache ? "cached" : "ready") : "failed";
          this.dispatchEvent(new CustomEvent("cairn-model", { detail: e }));
          if (this.input.value) this.#search();
          else this.#say("");
        },
      });
      this.dataset.ready = "true";
      const info = this.#cairn.info;
      this.#say(info.hasVectors && this.getAttribute("model") ? `Loading the model… ${info.hasStatic ? "search works now" : "keyword search works now"}` : "");
      if (this.input.value) this.#search();
    } catch (e) {
      this.#say(`Search is unavailable: ${e.message}`);
    }
  }

  #say(text) {
    this.status.textContent = text;
  }

  async #search() {
    const query = this.input.value.trim();
    const ticket = ++this.#query;
    if (!query || !this.#cairn) return this.#render([]);
    try {
      // As you type: the last word completes (a trailing space says it is finished) and typos
      // are forgiven.
      const typed = this.input.value.trimStart();
      const options = { limit: Number(this.getAttribute("limit") ?? 8), highlight: true, snippetLength: 160, prefix: true, fuzzy: true };
      const hits = await this.#cairn.search(typed, options);
      if (ticket !== this.#query) return; // a newer query has been asked
      // The same query again (the model came in): better results, the reader's place kept.
      const again = typed === this.#shown;
      this.#shown = typed;
      this.#render(hits, again);
      const encoder = hits.find((h) => h.signals.semantic)?.signals.semantic.encoder;
      if (encoder) this.dataset.encoder = encoder;
      const loading = this.#cairn.info.hasVectors && this.getAttribute("model") && !this.#cairn.modelReady;
      const note = !loading ? "" : encoder === "static" ? " (quick meaning match while the model loads)" : " (keywords only while the model loads)";
      this.#say(hits.length ? `${hits.length} results${note}` : `No results for “${query}”`);
    } catch (e) {
      this.#say(`Search failed: ${e.message}`);
    }
  }

  /** Shows `hits`; with `keepPlace`, the hit the reader had selected stays selected (and the
   * list's scroll where it was) if it is still among them. */
  #render(hits, keepPlace = false) {
    const selected = keepPlace ? this.#hits[this.#active]?.id : undefined;
    const scroll = this.list.scrollTop;
    this.#hits = hits;
    this.#active = -1;
    this.list.replaceChildren(...hits.map((hit, i) => this.#option(hit, i)));
    this.input.setAttribute("aria-expanded", String(hits.length > 0));
    this.input.removeAttribute("aria-activedescendant");
    if (!keepPlace) return;
    this.list.scrollTop = scroll;
    const i = hits.findIndex((h) => h.id === selected);
    if (i >= 0) this.#select(i, false);
  }

  #option(hit, i) {
    const li = document.createElement("li");
    li.id = `${this.listId}-${i}`;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", "false");
    li.dataset.url = hit.citation.url ?? "";
    li.dataset.id = hit.id;
    const c = hit.citation;
    const title = Object.assign(document.createElement("div"), { className: "title", textContent: c.title || c.docId });
    if (!hit.signals.lexical) {
      const meaning = Object.assign(document.createElement("span"), { className: "meaning", textContent: "meaning", title: "Found by meaning: no query word is in this passage" });
      title.append(meaning);
    }
    const where = [c.headingPath.filter((h) => h !== c.title).join(" › ")];
    if (c.pageFrom) where.push(c.pageFrom === c.pageTo ? `p. ${c.pageFrom}` : `pp. ${c.pageFrom}–${c.pageTo}`);
    const place = Object.assign(document.createElement("div"), { className: "where", textContent: where.filter(Boolean).join(" · ") });
    const shown = hit.snippet ?? { text: hit.text, highlights: hit.highlights };
    const text = Object.assign(document.createElement("p"), { className: "text" });
    let at = 0;
    for (const { start, end } of shown.highlights) {
      if (start < at) continue;
      text.append(document.createTextNode(shown.text.slice(at, start)), Object.assign(document.createElement("mark"), { textContent: shown.text.slice(start, end) }));
      at = end;
    }
    text.append(document.createTextNode(shown.text.slice(at)));
    li.append(title, place, text);
    li.addEventListener("mousedown", (e) => e.preventDefault());
    li.addEventListener("click", () => this.#follow(i));
    return li;
  }

  #key(e) {
    const n = this.#hits.length;
    if (e.key === "ArrowDown" && n) this.#select((this.#active + 1) % n);
    else if (e.key === "ArrowUp" && n) this.#select((this.#active - 1 + n) % n);
    else if (e.key === "Enter" && this.#active >= 0) this.#follow(this.#active);
    else if (e.key === "Escape") {
      this.input.value = "";
      this.#render([]);
      this.#say("");
    } else return;
    e.preventDefault();
  }

  #select(i, scroll = true) {
    this.#active = i;
    for (const [j, li] of [...this.list.children].entries()) li.setAttribute("aria-selected", String(j === i));
    const li = this.list.children[i];
    this.input.setAttribute("aria-activedescendant", li.id);
    if (scroll) li.scrollIntoView?.({ block: "nearest" });
  }

  #follow(i) {
    const hit = this.#hits[i];
    const event = new CustomEvent("cairn-select", { detail: hit, cancelable: true });
    const url = hit.citation.url && safeUrl(hit.citation.url);
    if (this.dispatchEvent(event) && url) location.assign(url);
  }
}

if (!customElements.get("cairn-search")) customElements.define("cairn-search", CairnSearch);
