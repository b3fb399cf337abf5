// The explain page: every hit with its full explain (which signals found it, each one's rank
// and score, the fused score's terms, the retrieval rank). Loads the index (lexical search works
// at once), then the model in the background (hybrid and semantic start when it is ready). Hits
// are DOM nodes built from the highlight offsets, never indexed text injected as HTML, and a hit
// links to its URL only when that is http(s) or relative (never javascript: or data:).
import init, { SearchIndex } from "./pkg/web/cairn.js";
import { safeUrl } from "./pkg/client.js";

const query = document.getElementById("query");
const mode = document.getElementById("mode");
const status = document.getElementById("status");
const results = document.getElementById("results");

let index = null;
let modelState = "loading";

function setStatus(text) {
  status.textContent = text;
}

function mib(bytes) {
  return (bytes / 1048576).toFixed(1) + " MiB";
}

/** Builds `text` as text nodes, with <mark> around each highlight (UTF-16 offsets). */
function highlighted(text, highlights) {
  const fragment = document.createDocumentFragment();
  let at = 0;
  for (const { start, end } of highlights) {
    if (start < at) continue;
    fragment.append(document.createTextNode(text.slice(at, start)));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(start, end);
    fragment.append(mark);
    at = end;
  }
  fragment.append(document.createTextNode(text.slice(at)));
  return fragment;
}

function renderHit(hit) {
  const li = document.createElement("li");
  li.className = "hit";
  li.dataset.id = hit.id;
  const title = document.createElement("a");
  title.className = "hit-title";
  const url = hit.citation.url && safeUrl(hit.citation.url);
  if (url) title.href = url;
  title.textContent = [hit.citation.title, ...hit.citation.headingPath.filter((h) => h !== hit.citation.title)].join(" › ");
  const meta = document.createElement("div");
  meta.className = "hit-meta";
  const signals = [];
  if (hit.signals.lexical) signals.push(`keyword #${hit.signals.lexical.rank}`);
  if (hit.signals.semantic) signals.push(`meaning #${hit.signals.semantic.rank}`);
  meta.textContent = `${hit.citation.docId}, lines ${hit.citation.lineStart}–${hit.citation.lineEnd} · ${hit.scoreKind} ${hit.score.toFixed(4)} · ${signals.join(", ")}`;
  if (!hit.signals.lexical) {
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.title = "Found by meaning: no query word is in this passage";
    badge.textContent = "meaning";
    title.append(" ", badge);
  }
  // The snippet around the best-matching sentence, with its own highlight offsets.
  const shown = hit.snippet ?? { text: hit.text, highlights: hit.highlights };
  const text = document.createElement("p");
  text.className = "hit-text";
  text.append(highlighted(shown.text, shown.highlights));
  li.append(title, meta, text, explainTable(hit));
  return li;
}

/** A table of the hit's explain: one row a signal, then the fused score. */
function explainTable(hit) {
  const table = document.createElement("table");
  table.className = "explain";
  const row = (...cells) => {
    const tr = document.createElement("tr");
    for (const cell of cells) tr.append(Object.assign(document.createElement("td"), { textContent: String(cell) }));
    table.append(tr);
  };
  row("signal", "rank", "score", "adds");
  for (const t of hit.explain?.terms ?? []) row(t.signal, `#${t.rank}`, t.score.toFixed(4), t.contribution.toFixed(4));
  row(hit.explain?.method ?? hit.scoreKind, `retrieval #${hit.retrievalRank ?? "–"}`, (hit.retrievalScore ?? 0).toFixed(4), `final #${hit.rank}`);
  const lexical = hit.signals.lexical;
  if (lexical) row("of which document", "", lexical.documentScore.toFixed(4), "");
  if (hit.explain?.matchedTerms.length) row("terms", hit.explain.matchedTerms.join(" "), "", "");
  return table;
}

function run() {
  if (!index) return;
  const q = query.value.trim();
  results.replaceChildren();
  if (!q) {
    setStatus(readyText());
    return;
  }
  let wanted = mode.value;
  if (wanted === "semantic" && modelState !== "ready") {
    setStatus("The model is still loading; semantic search starts when it is ready.");
    return;
  }
  try {
    const started = performance.now();
    const hits = index.search(q, { limit: 10, mode: wanted, highlight: true, snippetLength: 240, explain: true });
    const ms = (performance.now() - started).toFixed(1);
    results.append(...hits.map(renderHit));
    const how = wanted === "hybrid" && modelState !== "ready" ? "lexical (model loading)" : wanted;
    setStatus(hits.length ? `${hits.length} hits in ${ms} ms · ${how}` : `No results for “${q}”.`);
  } catch (e) {
    setStatus(`Search failed: ${e.message}`);
  }
}

function readyText() {
  const model = modelState === "ready" ? "model ready" : modelState === "failed" ? "model failed to load: lexical only" : "loading the model…";
  return `${index.documentCount} documents, ${index.chunkCount} chunks · ${model}`;
}

let timer;
query.addEventListener("input", () => {
  clearTimeout(timer);
  timer = setTimeout(run, 80);
});
mode.addEventListener("change", run);

// ?index=FOLDER searches another index folder of this site (the browser tests use it for their
// fixtures); another origin's index is not loaded.
const asked = new URLSearchParams(location.search).get("index") ?? "index";
const indexDir = new URL(asked, location.href).origin === location.origin ? asked : "index";

await init();
index = await SearchIndex.load(`${indexDir}/index.cairn`, (loaded, total) => setStatus(`Loading the index… ${mib(loaded)}${total ? " of " + mib(total) : ""}`));
document.body.dataset.indexReady = "true";
setStatus(readyText());
run();
if (index.hasVectors) {
  index
    .loadModel(`${indexDir}/model`, (loaded, total) => {
      if (!query.value.trim()) setStatus(`${index.documentCount} documents · loading the model ${mib(loaded)}${total ? " of " + mib(total) : ""}`);
    })
    .then(() => {
      modelState = "ready";
      document.body.dataset.modelReady = "true";
      run();
    })
    .catch((e) => {
      modelState = "failed";
      setStatus(`The model could not be loaded (${e.message}); searching by keyword only.`);
    });
} else {
  modelState = "none";
}
