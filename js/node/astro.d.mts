// Types of `cairn-search/astro`.
import type { CairnPluginOptions } from "./vite.mjs";

/** An Astro integration: the built site indexed after `astro build`, the last build's index served in `astro dev`. */
export default function cairn(options?: CairnPluginOptions): { name: string; hooks: Record<string, (...args: any[]) => unknown> };
