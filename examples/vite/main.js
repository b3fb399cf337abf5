// The element registers itself; the client is used directly too, to show both imports.
import "cairn-search/element";
import { Cairn } from "cairn-search/client";

const cairn = await Cairn.open({ index: "/index/index.cairn" });
const hits = await cairn.search("index", { limit: 3 });
document.getElementById("count").textContent = `${cairn.info.documentCount} documents; "index" has ${hits.length} hits (${cairn.mode})`;
document.body.dataset.ready = "true";
