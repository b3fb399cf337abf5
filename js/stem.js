// The stemmers of languages other than English, for the browser's wasm modules (which compile
// English's only, to stay small): `stem/<language>.wasm` of the package (15 kB gzip, built from
// `stem/` with the Snowball stemmer cairn indexes with natively, so queries stem as the index
// did), fetched once a page and registered with each module that opens an index in it.
const loading = new Map(); // language → Promise<(word) => stem>

/** The stemmer of `language` from `stem/<language>.wasm` beside this file: a function of a word. */
function stemmerOf(language) {
  let stemmer = loading.get(language);
  if (!stemmer) {
    const url = new URL(`./stem/${language}.wasm`, import.meta.url);
    stemmer = (async () => {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`cannot fetch the ${language} stemmer (${url}): HTTP ${response.status}; serve the package's stem/ folder beside its other files`);
      const { instance } = await WebAssembly.instantiate(await response.arrayBuffer());
      const { memory, input, stem, output } = instance.exports;
      const encoder = new TextEncoder(), decoder = new TextDecoder();
      // `input` and `stem` may grow the module's memory, which detaches the old buffer: each
      // view is made after the call that could move it.
      const run = (word) => {
        const bytes = encoder.encode(word);
        const at = input(bytes.length);
        new Uint8Array(memory.buffer, at, bytes.length).set(bytes);
        const length = stem(bytes.length);
        return decoder.decode(new Uint8Array(memory.buffer, output(), length));
      };
      if (typeof run("tests") !== "string") throw new Error(`${url} is not a cairn stemmer`);
      return run;
    })();
    loading.set(language, stemmer);
    stemmer.catch(() => loading.delete(language)); // a failed fetch is tried again next time
  }
  return stemmer;
}

/**
 * Makes `module` (a cairn wasm module) stem `index`'s language, loading its stemmer if the
 * module has none: after this, searches of the index analyze queries as its build did.
 */
export async function stemFor(module, index) {
  const language = index.language;
  if (module.canStem(language)) return;
  // The language comes from the index (data): only a bare language code names a file.
  if (!/^[a-z]{2,3}$/.test(language)) throw new Error(`the index's language ${JSON.stringify(language)} is not a language code`);
  module.registerStemmer(language, await stemmerOf(language));
}
