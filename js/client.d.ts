// Declarations for client.js. The result and option types are the ones generated from the Rust
// types (web/cairn.d.ts); this file only declares the client around them.
import type { ContextOptions, ContextResponse, DocumentSearchOptions, DocumentSearchResponse, SearchHit, SearchOptions } from "./web/cairn.js";
export type * from "./web/cairn.js";

/** A download's progress in bytes: the index file (or a fragmented index's meta) and the model;
 * on a fragmented index also "fragments", after each round of fragments a search fetched: the
 * bytes (`loaded` = `total`) and `requests` its fragments have cost so far, as `fragmentStats()`
 * counts them. */
export interface ProgressEvent { what: "index" | "model" | "fragments"; loaded: number; total: number; fromCache?: boolean; requests?: number }
export interface ModelEvent { ready: boolean; fromCache?: boolean; error?: string }
export interface OpenOptions {
  /** URL of index.cairn, or of a fragmented index's meta.cairn. */
  index: string;
  /** URL of the index's model/ folder; leave out for lexical search only. */
  model?: string;
  /** Run in a Web Worker (default true where Worker exists). */
  worker?: boolean;
  /** How long a request for fragments or rows may take, in ms, before the search that needs it
   * fails (30000); the next search asks again. */
  fetchTimeout?: number;
  onProgress?: (event: ProgressEvent) => void;
  onModelReady?: (event: ModelEvent) => void;
}

/** A hit's URL resolved against `base` (the page) if it is http(s), or file: on a file: page; otherwise null. */
export declare function safeUrl(url: string, base?: string): string | null;

export declare class Cairn {
  static open(options: OpenOptions): Promise<Cairn>;
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
