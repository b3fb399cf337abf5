// <cairn-search>: a search box for static sites.
//
//   <script type="module" src="/pkg/element.js"></script>
//   <cairn-search index="/search/index.cairn" model="/search/model" placeholder="Search the docs"></cairn-search>
//   <cairn-search modal index="/search/index.cairn"></cairn-search>   (a button; Ctrl/⌘ K opens a dialog)
//
// Results as you type (debounced), by meaning from the first query when the index has a static
// tier and again, in place, when the model has loaded; one result a page (`limit` pages, 5 by
// default, as Pagefind's UI shows at first), with
// its next best sections as sub-results (`sections`, 3 by default), each linking to its heading;
// ARIA combobox semantics (a listbox of groups, one a page) with arrow keys, Enter and Escape,
// highlighted terms, the citation (title, heading path, page) on each result, a marker on hits
// only the meaning signal found, empty and loading states. `filters="tags,section"` adds a
// filter pane: a group of checkboxes a metadata field, its values counted in the results (a
// field's under the other fields' filters), narrowing them to any of a field's checked values,
// in every field; "More results" shows the next `limit` pages. Its strings come from
// js/strings.js in the element's language (its `lang`, its closest ancestor's, <html lang>, else
// English), or from the `strings` property or attribute (JSON); a right-to-left language lays
// it out right to left. Styling through CSS custom properties (--cairn-accent, --cairn-mark, --cairn-text,
// --cairn-muted, --cairn-background, --cairn-border, --cairn-radius, --cairn-font,
// --cairn-selected, --cairn-dialog-width, --cairn-backdrop, --cairn-shadow) and ::part (input,
// status, list, group, result, sub-result, trigger, dialog, close, filters, filter, more).
// Indexed text is only ever inserted as text nodes, and a result's URL is followed only when it
// is http(s) or relative (see safeUrl).
import { Cairn, safeUrl } from "./client.js";
import { STRINGS, RTL } from "./strings.js";

/** Pages a results list shows at first, and "More results" adds. */
const PAGES = 5;

const STYLE = `
:host { display: block; position: relative; font: var(--cairn-font, inherit); color: var(--cairn-text, #1d232a); }
:host([modal]) { display: inline-block; }
[hidden] { display: none !important; }
input { box-sizing: border-box; inline-size: 100%; font: inherit; font-size: 1.05em; padding: .6em .8em; border: 2px solid var(--cairn-border, #c9cfc9); border-radius: var(--cairn-radius, .5em); background: var(--cairn-background, #fff); color: inherit; }
input:focus { outline: none; border-color: var(--cairn-accent, #2f6f4f); }
.status { color: var(--cairn-muted, #5b6470); font-size: .85em; margin: .3em .2em; min-block-size: 1.2em; }
ul { list-style: none; margin: 0; padding: 0; }
.group { border-block-end: 1px solid var(--cairn-border, #e3e6e3); padding-block: .2em; }
[role="option"] { padding: .55em .5em; cursor: pointer; border-radius: var(--cairn-radius, .5em); }
[role="option"][aria-selected="true"] { background: var(--cairn-selected, color-mix(in srgb, var(--cairn-accent, #2f6f4f) 12%, transparent)); }
.sub { margin-inline-start: 1.25em; padding-block: .35em; border-start-start-radius: 0; border-end-start-radius: 0; border-inline-start: 2px solid var(--cairn-border, #e3e6e3); }
.title { font-weight: 600; color: var(--cairn-accent, #2f6f4f); }
.sub .title { font-weight: 500; font-size: .92em; }
.where { color: var(--cairn-muted, #5b6470); font-size: .8em; }
.text { margin: .25em 0 0; font-size: .92em; line-height: 1.4; }
.sub .text { font-size: .85em; }
mark { background: var(--cairn-mark, #ffe58a); color: inherit; border-radius: 2px; }
.meaning { font-size: .7em; border: 1px solid currentColor; border-radius: 999px; padding: 0 .45em; margin-inline-start: .4em; color: var(--cairn-accent, #2f6f4f); font-weight: 500; }
button { font: inherit; color: inherit; cursor: pointer; }
.trigger { display: inline-flex; align-items: center; gap: .5em; padding: .45em .7em; border: 1px solid var(--cairn-border, #c9cfc9); border-radius: var(--cairn-radius, .5em); background: var(--cairn-background, #fff); color: var(--cairn-muted, #5b6470); }
.trigger:hover, .trigger:focus-visible { border-color: var(--cairn-accent, #2f6f4f); color: var(--cairn-text, #1d232a); }
.trigger svg { inline-size: 1em; block-size: 1em; }
kbd { font: inherit; font-size: .8em; padding: 0 .35em; border: 1px solid var(--cairn-border, #c9cfc9); border-radius: .3em; }
dialog { box-sizing: border-box; inline-size: min(var(--cairn-dialog-width, 40rem), calc(100vw - 2rem)); max-block-size: calc(100vh - 4rem); margin-block: 8vh auto; margin-inline: auto; padding: 1em; border: 1px solid var(--cairn-border, #c9cfc9); border-radius: var(--cairn-radius, .5em); background: var(--cairn-background, #fff); color: var(--cairn-text, #1d232a); box-shadow: var(--cairn-shadow, 0 1em 3em rgb(0 0 0 / .25)); }
dialog[open] { display: flex; flex-direction: column; }
dialog::backdrop { background: var(--cairn-backdrop, rgb(20 24 28 / .45)); }
dialog ul { overflow: auto; min-block-size: 0; }
.field { display: flex; gap: .5em; align-items: center; }
.filters { display: flex; flex-wrap: wrap; gap: .3em 1em; margin: .2em .2em .5em; padding: 0; border: 0; font-size: .85em; }
.hidden-legend { position: absolute; inline-size: 1px; block-size: 1px; overflow: hidden; clip-path: inset(50%); }
.filters fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .2em .7em; align-items: center; }
.filters legend { float: inline-start; font-weight: 600; margin-inline-end: .5em; padding: 0; }
.filters label { display: inline-flex; gap: .3em; align-items: center; cursor: pointer; }
.filters .n { color: var(--cairn-muted, #5b6470); }
.more { display: block; margin: .4em auto; padding: .4em .9em; border: 1px solid var(--cairn-border, #c9cfc9); border-radius: var(--cairn-radius, .5em); background: transparent; }
.close { flex: none; padding: .5em .7em; border: 1px solid var(--cairn-border, #c9cfc9); border-radius: var(--cairn-radius, .5em); background: transparent; }
`;

const ICON = `<svg viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2.5" stroke-linecap="round"><circle cx="10.5" cy="10.5" r="6.5"/><path d="m20 20-4.5-4.5"/></svg>`;
const MAC = /mac|iphone|ipad|ipod/i.test(globalThis.navigator?.userAgentData?.platform ?? globalThis.navigator?.platform ?? "");

let instances = 0;

/** `tag` with `name` set on it (a part, a class, a role…). */
function make(tag, props = {}, attrs = {}) {
  const node = Object.assign(document.createElement(tag), props);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

export class CairnSearch extends HTMLElement {
  static observedAttributes = ["placeholder", "lang", "dir", "strings", "modal"];
  #cairn = null;
  #opening = null;
  /** The options shown, in order: [{ hit, li }]. */
  #options = [];
  #active = -1;
  #timer = 0;
  #query = 0;
  /** The query the list shows. */
  #shown = null;
  /** What the status says: a key of the strings and its values, to say it again in another language. */
  #status = null;
  #strings = null;
  #code = "en";
  /** The checked filter values: field → Set of values. */
  #checked = new Map();
  /** How many pages the list shows (`limit`, then more with each "More results"). */
  #pages = 0;
  #onShortcut = (e) => this.#shortcut(e);

  constructor() {
    super();
    const id = `cairn-${++instances}`;
    this.listId = id;
    const root = this.attachShadow({ mode: "open" });
    this.box = make("div", { className: "box" });
    this.input = make("input", { type: "search", autocomplete: "off", spellcheck: false }, { role: "combobox", part: "input", "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": `${id}-list` });
    this.status = make("div", { className: "status" }, { role: "status", "aria-live": "polite", part: "status" });
    this.list = make("ul", { id: `${id}-list`, hidden: true }, { role: "listbox", part: "list" });
    this.trigger = make("button", { type: "button", className: "trigger", innerHTML: ICON }, { part: "trigger", "aria-haspopup": "dialog", "aria-keyshortcuts": MAC ? "Meta+K" : "Control+K" });
    this.triggerLabel = make("span");
    const hint = make("kbd", { textContent: MAC ? "⌘K" : "Ctrl K" }, { "aria-hidden": "true" });
    this.trigger.append(this.triggerLabel, hint);
    this.closeButton = make("button", { type: "button", className: "close" }, { part: "close" });
    this.dialog = make("dialog", {}, { role: "dialog", "aria-modal": "true", part: "dialog", "aria-labelledby": `${id}-title` });
    this.field = make("div", { className: "field" });
    this.filterPane = make("fieldset", { className: "filters", hidden: true }, { part: "filters" });
    this.filterLegend = make("legend", { className: "hidden-legend" });
    this.moreButton = make("button", { type: "button", className: "more", hidden: true }, { part: "more" });
    this.moreButton.addEventListener("mousedown", (e) => e.preventDefault());
    this.moreButton.addEventListener("click", () => {
      this.#pages += this.#number("limit", PAGES) || PAGES;
      this.#search();
    });
    root.append(make("style", { textContent: STYLE }), this.box);

    this.input.addEventListener("input", () => {
      clearTimeout(this.#timer);
      this.#pages = 0;
      this.#timer = setTimeout(() => this.#search(), Number(this.getAttribute("debounce") ?? 120));
    });
    this.input.addEventListener("keydown", (e) => this.#key(e));
    this.trigger.addEventListener("click", () => this.show());
    for (const e of ["pointerenter", "focus"]) this.trigger.addEventListener(e, () => this.#open());
    this.closeButton.addEventListener("click", () => this.hide());
    this.dialog.addEventListener("close", () => this.trigger.isConnected && this.trigger.focus());
    this.dialog.addEventListener("keydown", (e) => this.#trap(e));
    // A click on the backdrop (outside the dialog's box) closes it.
    this.dialog.addEventListener("click", (e) => e.target === this.dialog && !this.#inside(e) && this.hide());
  }

  /** Whether the modal variant is on. */
  get modal() {
    return this.hasAttribute("modal");
  }

  /** Strings that override the language's table (an object of keys of js/strings.js). */
  get strings() {
    return this.#strings;
  }
  set strings(value) {
    this.#strings = value && typeof value === "object" ? value : null;
    this.#localize();
  }

  attributeChangedCallback(name) {
    if (name === "strings") {
      try {
        this.#strings = JSON.parse(this.getAttribute("strings") ?? "null");
      } catch {
        this.#strings = null;
      }
    }
    if (name === "modal" && this.isConnected) this.#layout();
    this.#localize();
  }

  connectedCallback() {
    this.#layout();
    document.addEventListener("keydown", this.#onShortcut);
    if (!this.modal) this.#open();
  }

  disconnectedCallback() {
    document.removeEventListener("keydown", this.#onShortcut);
  }

  /** Opens the modal's dialog, its input focused. */
  show() {
    if (!this.modal) return this.input.focus();
    this.#open();
    if (!this.dialog.open) this.dialog.showModal();
    this.input.focus();
    this.input.select();
  }

  /** Closes the modal's dialog; focus returns to its button. */
  hide() {
    if (!this.dialog.open) return;
    this.dialog.close();
    this.trigger.focus();
  }

  /** Places the pieces: inline, or a button and a dialog. */
  #layout() {
    this.field.replaceChildren(this.input);
    if (this.modal) {
      const title = make("h2", { id: `${this.listId}-title`, className: "title-hidden" });
      title.style.cssText = "position:absolute;inline-size:1px;block-size:1px;overflow:hidden;clip-path:inset(50%);margin:0";
      this.dialogTitle = title;
      this.field.append(this.closeButton);
      this.dialog.replaceChildren(title, this.field, this.status, this.filterPane, this.list, this.moreButton);
      this.box.replaceChildren(this.trigger, this.dialog);
    } else {
      if (this.dialog.open) this.dialog.close();
      this.box.replaceChildren(this.field, this.status, this.filterPane, this.list, this.moreButton);
    }
    this.#localize();
  }

  /** The table's code for this element's language, and its direction. */
  #language() {
    const holder = this.closest("[lang]");
    const lang = (holder?.getAttribute("lang") || document.documentElement.lang || "en").toLowerCase();
    const primary = lang.split("-")[0];
    this.#code = STRINGS[lang] ? lang : STRINGS[primary] ? primary : "en";
    // The closest of an explicit dir and a lang decides: an explicit dir (here or above) is
    // inherited as it is; a language sets its own direction.
    const dirHolder = this.closest("[dir]");
    if (!holder || (dirHolder && holder.contains(dirHolder))) this.box.removeAttribute("dir");
    else this.box.dir = RTL.has(primary) ? "rtl" : "ltr";
    this.box.lang = this.#code === primary || this.#code === lang ? lang : "en";
  }

  /** A string of the element's language: `key` with `values` filled in. */
  t(key, values = {}) {
    let text = this.#strings?.[key] ?? STRINGS[this.#code][key] ?? STRINGS.en[key];
    if (typeof text === "object") text = text[new Intl.PluralRules(this.#code).select(values.n ?? 0)] ?? text.other;
    return String(text).replace(/\{(\w+)\}/g, (_, name) => (typeof values[name] === "number" ? values[name].toLocaleString(this.#code) : values[name] ?? ""));
  }

  /** Says every string again in the element's (perhaps new) language. */
  #localize() {
    this.#language();
    this.input.placeholder = this.getAttribute("placeholder") ?? this.t("placeholder");
    this.input.setAttribute("aria-label", this.t("label"));
    this.list.setAttribute("aria-label", this.t("results"));
    this.triggerLabel.textContent = this.t("trigger");
    this.closeButton.textContent = this.t("close");
    this.filterLegend.textContent = this.t("filters");
    this.moreButton.textContent = this.t("more");
    if (this.dialogTitle) this.dialogTitle.textContent = this.t("dialog");
    if (this.#status) this.#say(...this.#status);
    for (const { li, hit } of this.#options) {
      const meaning = li.querySelector(".meaning");
      if (meaning) Object.assign(meaning, { textContent: this.t("meaning"), title: this.t("meaningTitle") });
      const where = li.querySelector(".where");
      if (where) where.textContent = this.#where(hit, li.classList.contains("sub"));
    }
  }

  /** Opens the index (once). */
  #open() {
    this.#opening ??= this.#load();
    return this.#opening;
  }

  async #load() {
    this.#say("loading");
    try {
      this.#cairn = await Cairn.open({
        index: this.getAttribute("index"),
        model: this.getAttribute("model") ?? undefined,
        language: this.closest("[lang]")?.getAttribute("lang") || undefined,
        worker: this.getAttribute("worker") !== "false",
        onProgress: (e) => {
          if (e.what === "model" && !this.input.value) this.#say("model", { percent: Math.min(100, Math.round((100 * e.loaded) / (e.total || e.loaded))) });
          this.dispatchEvent(new CustomEvent("cairn-progress", { detail: e }));
        },
        onModelReady: (e) => {
          this.dataset.model = e.ready ? (e.fromCache ? "cached" : "ready") : "failed";
          this.dispatchEvent(new CustomEvent("cairn-model", { detail: e }));
          if (this.input.value) this.#search();
          else this.#say(null);
        },
      });
      this.dataset.ready = "true";
      const info = this.#cairn.info;
      this.#say(info.hasVectors && this.getAttribute("model") ? (info.hasStatic ? "modelSearch" : "modelKeywords") : null);
      if (this.input.value) this.#search();
    } catch (e) {
      this.#say("unavailable", { error: e.message });
    }
  }

  #say(key, values = {}) {
    this.#status = key ? [key, values] : null;
    let text = "";
    if (key === "count") {
      text = this.t("count", values);
      if (values.note) text = this.t("withNote", { count: text, note: this.t(values.note) });
    } else if (key) text = this.t(key, values);
    this.status.textContent = text;
  }

  /** Searches what the input says (the same query again, with more pages or the model in,
   * keeps the reader's place). */
  async #search() {
    const query = this.input.value.trim();
    const ticket = ++this.#query;
    if (!query || !this.#cairn) {
      this.#facets(null);
      this.moreButton.hidden = true;
      return this.#render([]);
    }
    try {
      // As you type: the last word completes (a trailing space says it is finished) and typos
      // are forgiven. Enough chunks are asked for to fill the pages with their sections.
      const typed = this.input.value.trimStart();
      this.#pages ||= this.#number("limit", PAGES) || PAGES;
      const filter = this.#filter();
      const fields = this.#fields();
      // Only the hits of the pages shown, as many of a page as it shows at most, so a fragmented
      // index fetches no text that is not shown (a page whose best chunks share a heading shows
      // fewer sections than it has).
      const perPage = this.#number("sections", 3) + 1;
      const options = { limit: Math.min(60 * Math.ceil(this.#pages / 8), this.#pages * perPage), maxDocuments: this.#pages, maxPerDocument: perPage, highlight: true, snippetLength: 160, prefix: true, fuzzy: true, maxLinks: 0, ...(filter ? { filter } : {}) };
      // The filter pane's counts, and how many pages there are, from the same query: a field's
      // values are counted under the other fields' filters only, so that its other values can
      // still be added (any of).
      const count = (facets, filter) => this.#cairn.searchDocuments(typed, { prefix: true, fuzzy: true, limit: 1, facets, ...(filter ? { filter } : {}) });
      const checked = fields.filter((f) => this.#checked.get(f)?.size);
      const [hits, documents, ...own] = await Promise.all([
        this.#cairn.search(typed, options),
        fields.length ? count(fields, filter) : null,
        ...checked.map((field) => count([field], this.#filter(field))),
      ]);
      checked.forEach((field, i) => (documents.facets[field] = own[i].facets[field] ?? {}));
      if (ticket !== this.#query) return; // a newer query has been asked
      // The same query again (the model came in, more pages, a filter): the reader's place kept.
      const again = typed === this.#shown;
      this.#shown = typed;
      const groups = this.#group(hits);
      this.#render(groups, again);
      this.#facets(documents?.facets ?? null);
      this.moreButton.hidden = groups.length < this.#pages || (documents !== null && documents.total <= groups.length);
      const encoder = hits.find((h) => h.signals.semantic)?.signals.semantic.encoder;
      if (encoder) this.dataset.encoder = encoder;
      const loading = this.#cairn.info.hasVectors && this.getAttribute("model") && !this.#cairn.modelReady;
      const note = !loading ? undefined : encoder === "static" ? "quickNote" : "keywordNote";
      if (groups.length) this.#say("count", { n: documents?.total ?? groups.length, note });
      else this.#say("none", { query });
    } catch (e) {
      this.#say("failed", { error: e.message });
    }
  }

  /** The metadata fields the filter pane offers (`filters="tags,section"`). */
  #fields() {
    return (this.getAttribute("filters") ?? "").split(",").map((f) => f.trim()).filter(Boolean);
  }

  /** The checked values as a search filter (any of a field's, and every field), but those of
   * the field `except`. */
  #filter(except) {
    const filter = {};
    for (const [field, values] of this.#checked) if (values.size && field !== except) filter[field] = [...values];
    return Object.keys(filter).length ? filter : null;
  }

  /** The filter pane for `facets` (field → value → documents): a checkbox a value, the checked
   * ones kept even when the results have none; hidden without facets. */
  #facets(facets) {
    const fields = this.#fields();
    if (!facets || !fields.length) {
      this.filterPane.hidden = true;
      return;
    }
    const focused = this.shadowRoot.activeElement?.dataset?.key;
    const sets = fields.map((field) => {
      const counts = new Map(Object.entries(facets[field] ?? {}));
      for (const value of this.#checked.get(field) ?? []) if (!counts.has(value)) counts.set(value, 0);
      if (!counts.size) return null;
      const set = make("fieldset", {}, { part: "filter" });
      set.append(make("legend", { textContent: field }));
      for (const [value, n] of [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
        const box = make("input", { type: "checkbox", checked: this.#checked.get(field)?.has(value) ?? false });
        box.dataset.key = `${field}\u0000${value}`;
        box.addEventListener("change", () => {
          const values = this.#checked.get(field) ?? new Set();
          box.checked ? values.add(value) : values.delete(value);
          this.#checked.set(field, values);
          this.#pages = 0;
          this.#search();
        });
        const label = make("label");
        label.append(box, document.createTextNode(value), make("span", { className: "n", textContent: `(${n.toLocaleString(this.#code)})` }));
        set.append(label);
      }
      return set;
    });
    this.filterPane.replaceChildren(this.filterLegend, ...sets.filter(Boolean));
    this.filterPane.hidden = this.filterPane.childElementCount < 2;
    if (focused) [...this.filterPane.querySelectorAll("input")].find((b) => b.dataset.key === focused)?.focus();
  }

  #number(name, fallback) {
    const n = Number(this.getAttribute(name) ?? fallback);
    return Number.isFinite(n) && n >= 0 ? Math.floor(n) : fallback;
  }

  /** Chunk hits as pages, best first: each the page's best hit and its next best sections
   * (distinct URLs), at most `limit` pages of `sections` sections. */
  #group(hits) {
    const limit = this.#pages || this.#number("limit", PAGES) || PAGES;
    const sections = this.#number("sections", 3);
    const pages = new Map();
    for (const hit of hits) {
      const url = hit.citation.url ?? hit.id;
      const page = pages.get(hit.citation.docId);
      if (!page) {
        if (pages.size < limit) pages.set(hit.citation.docId, { hit, sections: [], urls: new Set([url]) });
      } else if (page.sections.length < sections && !page.urls.has(url)) {
        page.urls.add(url);
        page.sections.push(hit);
      }
    }
    return [...pages.values()];
  }

  /** Shows `groups`; with `keepPlace`, the hit the reader had selected stays selected (and the
   * list's scroll where it was) if it is still among them. */
  #render(groups, keepPlace = false) {
    const selected = keepPlace ? this.#options[this.#active]?.hit.id : undefined;
    const scroll = this.list.scrollTop;
    this.#options = [];
    this.#active = -1;
    this.list.replaceChildren(
      ...groups.map((group) => {
        const li = make("li", { className: "group" }, { role: "none" });
        const inner = make("ul", {}, { role: "group", part: "group" });
        inner.append(this.#option(group.hit, false), ...group.sections.map((hit) => this.#option(hit, true)));
        inner.setAttribute("aria-labelledby", `${inner.firstChild.id}-title`);
        li.append(inner);
        return li;
      }),
    );
    this.list.hidden = !groups.length;
    this.input.setAttribute("aria-expanded", String(groups.length > 0));
    this.input.removeAttribute("aria-activedescendant");
    if (!keepPlace) return;
    this.list.scrollTop = scroll;
    const i = this.#options.findIndex((o) => o.hit.id === selected);
    if (i >= 0) this.#select(i, false);
  }

  /** Where a hit is: its heading path under the title (a section's: its parents), and its pages. */
  #where(hit, sub) {
    const c = hit.citation;
    const path = c.headingPath.filter((h) => h !== c.title);
    const where = [(sub ? path.slice(0, -1) : path).join(" › ")];
    if (c.pageFrom) where.push(c.pageFrom === c.pageTo ? this.t("page", { n: c.pageFrom }) : this.t("pages", { from: c.pageFrom, to: c.pageTo }));
    return where.filter(Boolean).join(" · ");
  }

  #option(hit, sub) {
    const i = this.#options.length;
    const li = make("li", { id: `${this.listId}-${i}`, className: sub ? "sub" : "page" }, { role: "option", "aria-selected": "false", part: sub ? "sub-result" : "result" });
    li.dataset.url = hit.citation.url ?? "";
    li.dataset.id = hit.id;
    const c = hit.citation;
    const heading = sub ? c.headingPath.at(-1) || c.title || c.docId : c.title || c.docId;
    const title = make("div", { className: "title", id: `${li.id}-title`, textContent: heading });
    if (!hit.signals.lexical) title.append(make("span", { className: "meaning", textContent: this.t("meaning"), title: this.t("meaningTitle") }));
    const place = make("div", { className: "where", textContent: this.#where(hit, sub) });
    const shown = hit.snippet ?? { text: hit.text, highlights: hit.highlights };
    const text = make("p", { className: "text" });
    let at = 0;
    for (const { start, end } of shown.highlights ?? []) {
      if (start < at) continue;
      text.append(document.createTextNode(shown.text.slice(at, start)), make("mark", { textContent: shown.text.slice(start, end) }));
      at = end;
    }
    text.append(document.createTextNode(shown.text.slice(at)));
    li.append(title, ...(place.textContent ? [place] : []), text);
    li.addEventListener("mousedown", (e) => e.preventDefault());
    li.addEventListener("click", () => this.#follow(i));
    this.#options.push({ hit, li });
    return li;
  }

  #key(e) {
    const n = this.#options.length;
    if (e.key === "ArrowDown" && n) this.#select((this.#active + 1) % n);
    else if (e.key === "ArrowUp" && n) this.#select((this.#active - 1 + n) % n);
    else if (e.key === "Enter" && this.#active >= 0) this.#follow(this.#active);
    else if (e.key === "Escape") {
      // In the dialog, Escape closes it (the query stays for next time); inline, it clears.
      if (this.modal && this.dialog.open) this.hide();
      else {
        this.input.value = "";
        this.#render([]);
        this.#facets(null);
        this.moreButton.hidden = true;
        this.#say(null);
      }
    } else return;
    e.preventDefault();
  }

  #select(i, scroll = true) {
    this.#active = i;
    for (const [j, { li }] of this.#options.entries()) li.setAttribute("aria-selected", String(j === i));
    const { li } = this.#options[i];
    this.input.setAttribute("aria-activedescendant", li.id);
    if (scroll) li.scrollIntoView?.({ block: "nearest" });
  }

  #follow(i) {
    const { hit } = this.#options[i];
    const event = new CustomEvent("cairn-select", { detail: hit, cancelable: true });
    const url = hit.citation.url && safeUrl(hit.citation.url);
    if (this.dispatchEvent(event) && url) {
      this.hide();
      location.assign(url);
    }
  }

  /** Ctrl+K or ⌘K anywhere opens the modal (the first one on the page). */
  #shortcut(e) {
    if (!this.modal || e.defaultPrevented || e.altKey || e.shiftKey || !(e.ctrlKey || e.metaKey) || e.key.toLowerCase() !== "k") return;
    e.preventDefault();
    this.show();
  }

  /** Tab and Shift+Tab stay in the open dialog. */
  #trap(e) {
    if (e.key !== "Tab") return;
    const stops = [this.input, this.closeButton, ...this.filterPane.querySelectorAll("input"), ...(this.moreButton.hidden ? [] : [this.moreButton])];
    const at = stops.indexOf(this.shadowRoot.activeElement);
    e.preventDefault();
    stops[(at + (e.shiftKey ? -1 : 1) + stops.length) % stops.length].focus();
  }

  #inside(e) {
    const r = this.dialog.getBoundingClientRect();
    return e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
  }
}

if (!customElements.get("cairn-search")) customElements.define("cairn-search", CairnSearch);
