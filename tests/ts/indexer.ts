// A TypeScript consumer of the Node API's declarations (pkg/indexer.d.ts), type-checked with
// `tsc --strict`: every option, method and result field.
import { createIndex, CairnError } from "../../pkg/indexer.mjs";
import type { IndexOptions, IndexRecord, ProgressEvent, WriteResult } from "../../pkg/indexer.mjs";

export async function build(): Promise<string> {
  const options: IndexOptions = {
    model: "hf:sentence-transformers/all-MiniLM-L6-v2", noEmbed: false, noStatic: false, summaries: true,
    layout: "auto", baseUrl: "/", chunkWords: 200, allFiles: false, exclude: ["**/drafts/**"], allowEmpty: false,
    webWeights: "q8", vectors: "i8", graphFrom: 20000, onMessage: (line: string) => void line,
    onProgress: (e: ProgressEvent) => void [e.stage === "embedding", e.done / e.total],
  };
  const index = await createIndex(options);
  index.addDirectory("public");
  index.addFile("notes.md");
  index.addHTMLFile({ url: "/guide/", content: "<h1>Guide</h1>" });
  const record: IndexRecord = { id: 1, title: "t", text: "x", url: "/x", metadata: { tags: ["a"] }, createdAt: "2024-01-01", updatedAt: "2024-01-02", author: "me" };
  index.addRecord(record);
  try {
    const wrote: WriteResult = await index.write("public/search");
    return `${wrote.documents} ${wrote.chunks} ${wrote.bytes} ${wrote.message} ${wrote.warnings.join()}`;
  } catch (e) {
    if (e instanceof CairnError) return e.message;
    throw e;
  }
}

// The site-generator integrations take the same options, and `out`.
import cairnVite from "../../pkg/vite.mjs";
import cairnAstro from "../../pkg/astro.mjs";
export const integrations = [cairnVite({ noEmbed: true, out: "search" }).name, cairnAstro({ layout: "auto", onProgress: (e) => void e.done }).hooks];
