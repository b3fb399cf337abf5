// A TypeScript consumer of the generated declarations (pkg/cairn.d.ts), type-checked with
// `tsc --strict` by scripts/test.sh: it uses every field of SearchHit and every option, so a
// change to the Rust types that breaks callers fails the tests.
import init, { SearchIndex } from "../../pkg/cairn.js";
import type { Citation, Highlight, ScoreKind, SearchHit, SearchMode, SearchOptions, Signals } from "../../pkg/cairn.js";

function describe(hit: SearchHit): string {
  const id: string = hit.id;
  const rank: number = hit.rank;
  const score: number = hit.score;
  const kind: ScoreKind = hit.scoreKind;
  const text: string = hit.text;
  const c: Citation = hit.citation;
  const where = [c.docId, c.docType, c.title, c.url ?? "", c.headingPath.join(" › "), c.chunkIndex, c.lineStart, c.lineEnd, c.sourceOffset];
  const marked = hit.highlights.map((h: Highlight) => `${h.term}:${text.slice(h.start, h.end)}`);
  const s: Signals = hit.signals;
  const lexical = s.lexical ? `${s.lexical.rank}/${s.lexical.score}` : "-";
  const semantic = s.semantic ? `${s.semantic.rank}/${s.semantic.score}/${s.semantic.distance}` : "-";
  return `${id} ${rank} ${score} ${kind} ${where.join(",")} ${marked.join(" ")} ${lexical} ${semantic}`;
}

export async function run(url: string, modelUrl: string): Promise<string[]> {
  await init();
  const index: SearchIndex = await SearchIndex.load(url, (loaded: number, total: number) => void [loaded, total]);
  const mode: SearchMode = "hybrid";
  const options: SearchOptions = {
    limit: 5,
    mode,
    fusion: "weighted",
    rrfK: 60,
    semanticWeight: 0.5,
    candidates: 100,
    highlight: true,
  };
  const before: SearchHit[] = index.search("install", { mode: "lexical" });
  await index.loadModel(modelUrl, (loaded: number, total: number) => void [loaded, total]);
  const ready: boolean = index.modelReady && index.hasVectors && index.documentCount > 0 && index.chunkCount > 0;
  const vector: Float32Array = index.embed("install");
  const after: SearchHit[] = index.searchWithVector("install", vector, options);
  return [...before, ...after, ...index.search("install", undefined)].map(describe).concat(String(ready));
}
