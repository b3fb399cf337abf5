// `cairn-search/astro`: an Astro integration that indexes the built site after `astro build`
// (its pages, from the output folder), and in `astro dev` serves the last build's index.
//
//   import cairn from "cairn-search/astro";
//   export default defineConfig({ integrations: [cairn()] });   // createIndex's options, and `out`
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { indexSite, serveIndex } from "./site.mjs";

export default function cairn(options = {}) {
  const out = options.out ?? "search";
  let outDir, base;
  return {
    name: "cairn-search",
    hooks: {
      "astro:config:done": ({ config }) => {
        outDir = fileURLToPath(config.outDir);
        base = config.base.replace(/\/?$/, "/");
      },
      "astro:server:setup": ({ server }) => {
        server.middlewares.use(serveIndex(join(outDir, out), `${base}${out}/`));
      },
      "astro:build:done": async ({ dir, logger }) => {
        await indexSite(fileURLToPath(dir), { ...options, out, base, log: (line) => logger.info(line) });
      },
    },
  };
}
