// `@theme/SearchBar` of `cairn-search/docusaurus`: the navbar's search as a `<cairn-search modal>`
// on the site's index. The element is loaded by the browser from the copy of the runtime the
// build made (`/_cairn/element.js`), not bundled by webpack: its worker and wasm modules stay
// files the browser fetches as they are needed.
import React, { useEffect } from "react";
import { usePluginData } from "@docusaurus/useGlobalData";

export default function SearchBar() {
  const { element, attributes } = usePluginData("cairn-search");
  useEffect(() => {
    if (!customElements.get("cairn-search")) import(/* webpackIgnore: true */ element).catch((e) => console.error(`cairn: cannot load the search box from ${element}: ${e?.message ?? e}`));
  }, [element]);
  return React.createElement("cairn-search", { modal: "", ...attributes });
}
