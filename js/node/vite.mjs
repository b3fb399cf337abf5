// `cairn-search/vite`: a Vite plugin that indexes the built site after `vite build` (an MPA, or a
// static site a Vite plugin renders), and in `vite dev` serves the last build's index, so the
// search box works while developing.
//
//   import cairn from "cairn-search/vite";
//   export default { plugins: [cairn({ noEmbed: true })] };   // createIndex's options, and `out`
import { join, resolve } from "node:path";
import { indexSite, serveIndex } from "./site.mjs";

export default function cairn(options = {}) {
  let config;
  const out = options.out ?? "search";
  return {
    name: "cairn-search",
    configResolved(resolved) {
      config = resolved;
    },
    configureServer(server) {
      const built = join(resolve(config.root, config.build.outDir), out);
      server.middlewares.use(serveIndex(built, `${config.base.replace(/\/?$/, "/")}${out}/`));
    },
    async closeBundle() {
      // Once a build: the browser's environment (Vite 6+ builds others too), or the only one.
      if (config.command !== "build" || (this.environment && this.environment.name !== "client")) return;
      await indexSite(resolve(config.root, config.build.outDir), { ...options, out, base: config.base, log: (line) => config.logger.info(line) });
    },
  };
}
