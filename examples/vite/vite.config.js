// The wasm and the worker are assets Vite bundles as they are; pre-bundling would rewrite the
// package's `new URL(..., import.meta.url)` references in dev.
export default { optimizeDeps: { exclude: ["cairn-search"] }, worker: { format: "es" } };
