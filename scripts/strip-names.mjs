// Drops the "name" custom section from wasm modules, in place: function names that only stack
// traces read (a tenth of the module; docs/benchmarks.md); and "producers" and
// "target_features", the toolchain's notes to itself, which no browser reads. Every other
// section is kept byte for byte. (wasm-opt would do it, but Debian's binaryen breaks the module and npm's is a large
// dependency for one flag.)
// Usage: node scripts/strip-names.mjs FILE.wasm...
import { readFileSync, writeFileSync } from "node:fs";

function leb128(bytes, at) {
  let value = 0, shift = 0, byte;
  do {
    byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, at];
}

for (const file of process.argv.slice(2)) {
  const bytes = readFileSync(file);
  if (bytes.readUInt32LE(0) !== 0x6d736100) throw new Error(`${file} is not a wasm module`);
  const kept = [bytes.subarray(0, 8)];
  for (let at = 8; at < bytes.length; ) {
    const [size, body] = leb128(bytes, at + 1);
    const end = body + size;
    let name = null;
    if (bytes[at] === 0) {
      const [length, start] = leb128(bytes, body);
      name = bytes.subarray(start, start + length).toString("utf8");
    }
    if (!["name", "producers", "target_features"].includes(name)) kept.push(bytes.subarray(at, end));
    at = end;
  }
  const out = Buffer.concat(kept);
  writeFileSync(file, out);
  console.log(`${file}: ${bytes.length} → ${out.length} bytes`);
}
