// cairn's Web Worker: loads the index and the model and answers searches off the main thread.
// Spoken to by client.js: requests { id, method, args } → replies { id, result } or
// { id, error }; progress and model readiness are posted as { event, ... }.
import { methods as methodsFor } from "./fetch.js";

const post = (message) => self.postMessage(message);
const methods = methodsFor(post);

self.onmessage = async ({ data: { id, method, args } }) => {
  try {
    post({ id, result: await methods[method](...args) });
  } catch (e) {
    post({ id, error: e?.message ?? String(e) });
  }
};
