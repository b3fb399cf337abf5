// `cairn-search/docusaurus`: a Docusaurus plugin. After `docusaurus build` it indexes the built
// pages into `build/search/` and copies the browser's runtime (the element, its worker and the
// wasm modules) to `build/_cairn/`; the navbar's search (`@theme/SearchBar`) is a
// `<cairn-search modal>` on that index (Ctrl/⌘ K opens it). `docusaurus start` serves the last
// build's index and the runtime, so search works while writing.
//
//   // docusaurus.config.js
//   plugins: [["cairn-search/docusaurus", { noEmbed: true }]],   // createIndex's options,
//   // and `out` ("search"), `attributes` (more attributes of the element: placeholder, filters…)
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { CLIENT_DIR, copyClient, indexSite } from "./site.mjs";

// `id` is Docusaurus's (each plugin instance has one), not an option of the index.
export default function cairn(context, { id: _id, out = "search", attributes = {}, ...options } = {}) {
  const base = context.baseUrl.replace(/\/?$/, "/");
  return {
    name: "cairn-search",
    getThemePath: () => fileURLToPath(new URL("./docusaurus-theme", import.meta.url)),
    async contentLoaded({ actions }) {
      // What the SearchBar renders, as the element's attributes.
      const model = options.noEmbed ? {} : { model: `${base}${out}/model` };
      actions.setGlobalData({ element: `${base}${CLIENT_DIR}/element.js`, attributes: { index: `${base}${out}/`, ...model, ...attributes } });
    },
    configureWebpack(_config, isServer) {
      // `docusaurus start`: the last build's index and the runtime, by range too (serve-static).
      if (isServer || process.env.NODE_ENV === "production") return {};
      const built = join(context.outDir, out);
      return { devServer: { static: [{ publicPath: `${base}${out}/`, directory: built, watch: false }, { publicPath: `${base}${CLIENT_DIR}/`, directory: join(context.outDir, CLIENT_DIR), watch: false }] } };
    },
    async postBuild({ outDir }) {
      await indexSite(outDir, { ...options, out, base, log: (line) => console.log(line) });
      copyClient(join(outDir, CLIENT_DIR));
    },
  };
}
