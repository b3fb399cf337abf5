// Types of `cairn-search/indexer`: building an index from Node (node/indexer.mjs).

/** What `cairn index` takes, camel-cased; each is optional. */
export interface IndexOptions {
  /** A model folder, a hub id (`hf:owner/name@revision`) or URL; by default
   * sentence-transformers/all-MiniLM-L6-v2 from the Hugging Face hub, cached. */
  model?: string;
  /** A lexical index: no model, no embeddings. */
  noEmbed?: boolean;
  /** No static tier (the browser's query encoder until the model is in). */
  noStatic?: boolean;
  /** Each document's summary, for `includeSummary`. */
  summaries?: boolean;
  /** "auto" (the default: one file up to 300 kB, else fragments), "single" or "fragments". */
  layout?: "auto" | "single" | "fragments";
  /** Prefix of every file's URL. */
  baseUrl?: string;
  /** The largest chunk, in words. */
  chunkWords?: number;
  /** The documents' language, a language tag ("en" by default; "de", "fr", "pt-BR", "zh"…): its stemmer and stop words. */
  language?: string;
  /** In a built site, index every file, not only its pages. */
  allFiles?: boolean;
  /** Globs of files to leave out. */
  exclude?: string[];
  /** Write the index even when every input was skipped. */
  allowEmpty?: boolean;
  webWeights?: "q8" | "f16" | "f32";
  vectors?: "i8" | "f32";
  /** The arithmetic chunks are embedded in: "f32" (the default), or "int8" (8-bit products:
   * natively about 1.5 to 2.5 times the chunks a second, vectors within cosine 0.999 of f32's). */
  arithmetic?: "f32" | "int8";
  graphFrom?: number;
  /** Hears each line the command line says as it goes (skipped files, warnings, estimates). */
  onMessage?: (line: string) => void;
  /** Hears how far a stage has got: files read, chunks embedded (on every thread, summed). */
  onProgress?: (event: ProgressEvent) => void;
}

/** A stage of a build and how far it has got, at most ten times a second and at its end. */
export interface ProgressEvent {
  stage: "reading" | "embedding";
  done: number;
  total: number;
}

/** A record, as a line of a JSONL input. */
export interface IndexRecord {
  id: string | number;
  title?: string;
  text?: string;
  url?: string;
  metadata?: Record<string, unknown>;
  createdAt?: string;
  updatedAt?: string;
  author?: string;
}

/** What `write` wrote. */
export interface WriteResult {
  documents: number;
  chunks: number;
  bytes: number;
  /** The command line's summary line. */
  message: string;
  /** What it said on the way (skipped inputs, warnings). */
  warnings: string[];
  /** Pages in several languages make one index a language, under `out/<language>/`, listed in
   * `out/languages.json`: each one's counts (the fields above are their sums). */
  languages?: { language: string; documents: number; chunks: number; bytes: number }[];
}

export interface Index {
  /** A folder, as `cairn index <path>` reads it. */
  addDirectory(path: string): void;
  /** A file: Markdown, HTML, text, PDF or JSONL. */
  addFile(path: string): void;
  /** A page from memory, at its URL path on the site (`/guide/install/`). */
  addHTMLFile(page: { url: string; content: string }): void;
  addRecord(record: IndexRecord): void;
  /** Writes the index into `out`; throws a `CairnError` with the command line's message when
   * the build fails (the previous index is kept). */
  write(out: string): Promise<WriteResult>;
}

export class CairnError extends Error {}

export function createIndex(options?: IndexOptions): Promise<Index>;
