// Declarations for client.js. The result and option types are the ones generated from the Rust
// types (web/cairn.d.ts); this file only declares the client around them.
import type { ContextOptions, ContextResponse, DocumentSearchOptions, DocumentSearchResponse, SearchHit, SearchOptions } from "./web/cairn.js";
import type { EditReport } from "./web-edit/cairn.js";
export type { EditReport } from "./web-edit/cairn.js";
export type * from "./web/cairn.js";

/** A download's progress in bytes: the index file (or a fragmented index's meta) and the model;
 * on a fragmented index also "fragments", after each round of fragments a search fetched: the
 * bytes (`loaded` = `total`) and `requests` its fragments have cost so far, as `fragmentStats()`
 * counts them. */
export interface ProgressEvent { what: "index" | "model" | "fragments"; loaded: number; total: number; fromCache?: boolean; requests?: number }
export interface ModelEvent { ready: boolean; fromCache?: boolean; error?: string }
export interface OpenOptions {
  /** URL of index.cairn, of a fragmented index's meta.cairn, or of the folder `cairn index --out` wrote ("/search/": its meta.cairn, else its index.cairn, else, for a site in several languages, the index of `language` its languages.json lists). */
  index: string;
  /** URL of the index's model/ folder; leave out for lexical search only. For a site in several
   * languages, a model under the folder given ("/search/model") is the chosen language's
   * ("/search/de/model"). */
  model?: string;
  /** For a folder that holds one index a language: the language to search (a tag, "de" or
   * "pt-BR"). By default the page's `<html lang>`; a language without an index gets the site's
   * most common one. */
  language?: string;
  /** Run in a Web Worker (default true where Worker exists). */
  worker?: boolean;
  /** How long a request for fragments or rows may take, in ms, before the search that needs it
   * fails (30000); the next search asks again. */
  fetchTimeout?: number;
  onProgress?: (event: ProgressEvent) => void;
  onModelReady?: (event: ModelEvent) => void;
}

export interface CreateOptions extends Omit<OpenOptions, "index" | "language"> {
  /** URL of a model folder `cairn index` wrote: documents are embedded (in the worker) and
   * searches are hybrid. Leave out for lexical only. */
  model?: string;
  /** A name (letters, digits, `.`, `-`, `_`) to keep the index under in this origin's storage
   * (the Origin Private File System, else IndexedDB), saved after every change and found again
   * by the next `create` with that name. Leave out to keep it in memory only. */
  store?: string;
  /** URL of an index.cairn to start from when nothing is stored under `store`. */
  index?: string;
  /** The model folder's weights file, for an empty index (`model.gguf`). */
  weightsFile?: string;
}

/** A document for a mutable index: the fields of a JSONL record `cairn index` reads. */
export interface IndexDocument {
  id: string | number;
  title?: string;
  text?: string;
  url?: string;
  metadata?: Record<string, unknown>;
  created?: string | number;
  updated?: string | number;
  author?: unknown;
}

/** A hit's URL resolved against `base` (the page) if it is http(s), or file: on a file: page; otherwise null. */
export declare function safeUrl(url: string, base?: string): string | null;

export declare class Cairn {
  static open(options: OpenOptions): Promise<Cairn>;
  /** A mutable index: add, update and remove documents in the page, searchable at once. */
  static create(options?: CreateOptions): Promise<Cairn>;
  /** Removes the mutable index kept under `store` in this origin's storage. */
  static forget(store: string): Promise<void>;
  /** Adds documents; an id already in the index is an error (use `update`). */
  add(documents: IndexDocument[]): Promise<EditReport>;
  /** Adds documents, each replacing the one of its id if there is one. */
  update(documents: IndexDocument[]): Promise<EditReport>;
  /** Removes the documents with these ids (ids not in the index are ignored). */
  remove(ids: Array<string | number>): Promise<EditReport>;
  /** The index as the bytes of an index.cairn file. */
  export(): Promise<Uint8Array>;
  readonly modelReady: boolean;
  readonly info: { documentCount: number; chunkCount: number; hasVectors: boolean; hasStatic?: boolean; fragmented?: boolean };
  readonly mode: "worker" | "main thread";
  search(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  /** A search with a query embedding computed elsewhere (L2-normalized, by the index's model). */
  searchWithVector(query: string, vector: Float32Array | number[], options?: SearchOptions): Promise<SearchHit[]>;
  /** On a fragmented index, what its fragments have cost so far: requests, bytes (as sent), fragments read from the Cache API. */
  fragmentStats(): Promise<{ requests: number; bytes: number; fromCache: number } | null>;
  searchDocuments(query: string, options?: DocumentSearchOptions): Promise<DocumentSearchResponse>;
  buildContext(query: string, options?: ContextOptions): Promise<ContextResponse>;
  close(): void;
}
