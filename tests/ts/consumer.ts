// A TypeScript consumer of the generated declarations (pkg/cairn.d.ts), type-checked with
// `tsc --strict` by scripts/test.sh: it uses every field of SearchHit, DocumentSearchResponse and
// ContextResponse and every option, so a change to the Rust types that breaks callers fails.
import init, { SearchIndex } from "../../pkg/web/cairn.js";
import { Cairn, safeUrl } from "../../pkg/client.js";
import type { EditReport, IndexDocument } from "../../pkg/client.js";
import type {
  Citation, CitationKind, ContextCandidate, ContextOptions, ContextResponse, DocumentChunk, DocumentResult, DocumentSearchOptions,
  DocumentSearchResponse, Explain, Highlight, HitLink, MatchRange, Neighbors, RejectReason, ScoreKind, ScoreTerm,
  Encoder, Rerank, RowRequest, SearchHit, SearchMode, SearchOptions, Signals, Snippet, Via,
} from "../../pkg/web/cairn.js";

function describe(hit: SearchHit): string {
  const c: Citation = hit.citation;
  const claim: CitationKind = c.kind;
  const where = [c.docId, c.docType, claim, c.author ?? "", c.title, c.url ?? "", c.headingPath.join(" › "), c.chunkIndex, c.lineStart, c.lineEnd, c.sourceOffset, c.pageFrom ?? "", c.pageTo ?? ""];
  const marked = hit.highlights.map((h: Highlight) => `${h.term}:${hit.text.slice(h.start, h.end)}`);
  const m: MatchRange | undefined = hit.match;
  const sentence = m ? hit.text.slice(m.start, m.start + m.length) : "";
  const snippet: Snippet | undefined = hit.snippet;
  const snippetMarks = snippet?.highlights.map((h) => snippet.text.slice(h.start, h.end)) ?? [];
  const s: Signals = hit.signals;
  const signals = [s.lexical?.rank, s.lexical?.score, s.lexical?.documentScore, s.semantic?.rank, s.semantic?.score, s.semantic?.distance, s.semantic?.encoder satisfies Encoder | undefined];
  const explain: Explain | undefined = hit.explain;
  const terms = explain?.terms.map((t: ScoreTerm) => `${t.signal}#${t.rank}:${t.score}→${t.contribution}`) ?? [];
  const why = [explain?.foundBy.join("+"), explain?.method, explain?.recencyFactor, explain?.matchedTerms.join(" ")];
  const neighbors: Neighbors | undefined = hit.neighbors;
  const links = hit.links.map((l: HitLink) => `${l.direction}:${l.rel ?? ""}:${l.targetId}:${l.targetType}:${l.title}:${l.text}`);
  const via: Via | undefined = hit.via;
  const kind: ScoreKind = hit.scoreKind;
  const when = [hit.createdAt, hit.updatedAt, hit.ageDays, hit.stale, JSON.stringify(hit.metadata ?? {})];
  return [
    hit.id, hit.rank, hit.score, kind, where.join(","), marked.join(" "), sentence, snippetMarks.join(" "), signals.join(","),
    hit.retrievalRank, hit.retrievalScore, terms.join(" "), why.join(","), neighbors?.before.length, neighbors?.after.length,
    links.join(";"), hit.linksElided, via?.text, via?.path, via?.fromId, via?.hops, when.join(","), hit.summary ?? "",
    hit.rerankerScore ?? "",
  ].join("|");
}

function documents(response: DocumentSearchResponse): string[] {
  const facets: Record<string, Record<string, number>> = response.facets;
  return response.results.map((d: DocumentResult) => {
    const chunks = d.chunks.map((c: DocumentChunk) => `${c.id}:${c.chunkIndex}:${c.score}:${c.isRelevant}:${c.content.length}:${c.highlights.length}`);
    return [d.docId, d.docType, d.title, d.url, d.score, d.rank, chunks.join(","), d.createdAt, d.updatedAt, d.content?.length, d.summary ?? "", JSON.stringify(d.metadata), response.timing, response.total, response.scoreKind, JSON.stringify(facets)].join("|");
  });
}

function context(response: ContextResponse): string[] {
  const admitted = response.candidates.filter((c: ContextCandidate) => c.admitted).sort((a, b) => (a.promptPosition ?? 0) - (b.promptPosition ?? 0));
  const roundTrip = admitted.map((c) => c.promptFragment ?? "").join("\n\n") === response.prompt;
  const reasons: (RejectReason | undefined)[] = response.candidates.map((c) => c.reason);
  return [String(roundTrip), String(response.tokens), response.order, response.scoreKind, reasons.join(","), ...response.candidates.map((c) => `${c.id}:${c.rank}:${c.score}:${c.tokens}:${c.citation.docId}:${c.updatedAt}`)];
}

export async function run(url: string, modelUrl: string): Promise<string[]> {
  await init();
  const index: SearchIndex = await SearchIndex.load(url, (loaded: number, total: number) => void [loaded, total]);
  const mode: SearchMode = "hybrid";
  const options: SearchOptions = {
    limit: 5, mode, fusion: "weighted", rrfK: 60, semanticWeight: 0.5, candidates: 100, highlight: true,
    prefixHeadings: true, snippetLength: 120, explain: true, expand: 1, related: true, relatedHops: 2, maxLinks: 3, maxDocuments: 5, maxPerDocument: 4,
    filter: { tags: "wasm", year: { gte: 2020 } }, staleDays: 365, recencyWeight: 0.5, recencyHalfLifeDays: 90, now: Date.now(),
    includeSummary: true, encoder: "static",
  };
  const rows: RowRequest[] = index.staticRows("install", options);
  for (const r of rows) index.addStaticRow(r.row, new Uint8Array(r.length));
  const quick: boolean = index.hasStatic;
  const rerank: Rerank = { model: "models/reranker/", topN: 20 };
  const before: SearchHit[] = index.search("install", { mode: "lexical" });
  await index.loadModel(modelUrl, (loaded: number, total: number) => void [loaded, total]);
  const ready: boolean = index.modelReady && index.hasVectors && index.documentCount > 0 && index.chunkCount > 0;
  const vector: Float32Array = index.embed("install");
  const after: SearchHit[] = index.searchWithVector("install", vector, options);
  await index.loadReranker(rerank.model, (loaded: number, total: number) => void [loaded, total]);
  const loaded: string | undefined = index.rerankerModel;
  const reranked: SearchHit[] = index.search("install", { rerank });
  const docOptions: DocumentSearchOptions = { ...options, chunkThreshold: 0.01, onlyMatchingChunks: false, includeFullDocs: true, facets: ["tags"] };
  const ctxOptions: ContextOptions = { ...options, tokenBudget: 500, order: "recency", minScore: 0 };
  return [
    ...[...before, ...after, ...reranked, ...index.search("install")].map(describe),
    loaded ?? "",
    ...documents(index.searchDocuments("install", docOptions)),
    ...context(index.buildContext("install", ctxOptions)),
    String(ready),
    String(quick),
  ];
}

export async function viaWorker(): Promise<number> {
  const cairn: Cairn = await Cairn.open({
    index: "/search/index.cairn",
    model: "/search/model",
    worker: true,
    onProgress: (e) => void [e.what === "fragments" ? e.requests : e.fromCache, e.loaded, e.total],
    onModelReady: (e) => void [e.ready, e.fromCache, e.error],
  });
  const hits: SearchHit[] = await cairn.search("q", { highlight: true });
  const followable: (string | null)[] = hits.map((h) => safeUrl(h.citation.url ?? "", "https://example.org/"));
  const docs: DocumentSearchResponse = await cairn.searchDocuments("q", { facets: ["tags"] });
  const ctx: ContextResponse = await cairn.buildContext("q", { tokenBudget: 100 });
  cairn.close();
  return followable.length + hits.length + docs.total + ctx.tokens + cairn.info.chunkCount + Number(cairn.modelReady) + cairn.mode.length;
}

export async function mutable(): Promise<number> {
  const notes: Cairn = await Cairn.create({ model: "/search/model", store: "notes", index: "/search/index.cairn", weightsFile: "model.gguf", worker: true, fetchTimeout: 10_000 });
  const doc: IndexDocument = { id: "n1", title: "t", text: "x", url: "/n1", metadata: { tags: ["a"] }, created: "2024-01-01", updated: 1700000000, author: "me" };
  const added: EditReport = await notes.add([doc]);
  const updated: EditReport = await notes.update([{ id: 2, text: "y" }]);
  const removed: EditReport = await notes.remove(["n1", 2]);
  const bytes: Uint8Array = await notes.export();
  const counts = [added.added, added.replaced, added.removed, added.embedded, added.documentCount, added.chunkCount, added.warnings.length];
  return counts.length + updated.replaced + removed.removed + bytes.length;
}
