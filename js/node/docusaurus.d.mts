// Types of `cairn-search/docusaurus`.
import type { CairnPluginOptions } from "./vite.mjs";

export interface CairnDocusaurusOptions extends CairnPluginOptions {
  /** More attributes of the navbar's `<cairn-search>` (placeholder, filters, lang…). */
  attributes?: Record<string, string>;
}

/** A Docusaurus plugin: the built site indexed after `docusaurus build`, the navbar's search a `<cairn-search modal>`, and the last build's index served by `docusaurus start`. */
export default function cairn(context: { baseUrl: string; outDir: string }, options?: CairnDocusaurusOptions): { name: string; [hook: string]: unknown };
