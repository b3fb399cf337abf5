// Types of `cairn-search/vite`.
import type { IndexOptions } from "./indexer.mjs";

export interface CairnPluginOptions extends IndexOptions {
  /** The index folder under the build's output folder, and its URL path: "search". */
  out?: string;
}

/** A Vite plugin: the built site indexed after `vite build`, the last build's index served in `vite dev`. */
export default function cairn(options?: CairnPluginOptions): { name: string; [hook: string]: unknown };
