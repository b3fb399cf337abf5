// The site-generator integrations with the real generators from npm: an Astro site (astro 5,
// installed into an empty project with the package) and a Vite multi-page app (the Vite of
// examples/vite) each build with `cairn-search/astro` or `cairn-search/vite`, which index the
// built pages (no copies of the sources, no assets); the index answers with the page's URL, and
// each dev server serves the last build's index, by range too.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cairn, root } from "./helpers.mjs";

const work = mkdtempSync(join(tmpdir(), "cairn-integrations-"));
const children = [];
after(() => children.forEach((c) => c.kill()));

function write(dir, files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** The first hit's URL for `query` in the index folder `dir`, by the native CLI. */
const top = (dir, query) => JSON.parse(cairn(["search", dir, query, "--json", "--limit", "3"]))[0]?.citation.url;

/** Starts a dev server (`args` run by node in `cwd`) and resolves to its URL once it prints one. */
function devServer(cwd, args) {
  return new Promise((ok, reject) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } });
    children.push(child);
    let said = "";
    const hear = (d) => {
      said += d;
      const url = said.match(/http:\/\/(?:localhost|127\.0\.0\.1):\d+\/?/);
      if (url) ok(url[0].replace(/\/$/, "").replace("localhost", "127.0.0.1"));
    };
    child.stdout.on("data", hear);
    child.stderr.on("data", hear);
    child.on("exit", (code) => reject(new Error(`the dev server exited (${code}): ${said}`)));
    setTimeout(() => reject(new Error(`no URL from the dev server in 60 s: ${said}`)), 60_000);
  });
}

/** The dev server at `base` serves the index file as built, and a range of it. */
async function servesIndex(base, dir, file) {
  const whole = Buffer.from(await (await fetch(`${base}/search/${file}`)).arrayBuffer());
  assert.deepEqual(whole, readFileSync(join(dir, file)));
  const part = await fetch(`${base}/search/${file}`, { headers: { range: "bytes=0-7" } });
  assert.equal(part.status, 206);
  assert.equal(Buffer.from(await part.arrayBuffer()).toString("latin1"), whole.subarray(0, 8).toString("latin1"));
}

const PAGES = {
  guide: ["Guide", "Stack flat stones into a cairn to mark where the trail turns."],
  lantern: ["Lanterns", "A lantern with a shutter keeps the flame out of the wind at night."],
};

test("an Astro site builds its index with cairn-search/astro, and astro dev serves it", { timeout: 300_000 }, async () => {
  const site = join(work, "astro");
  write(site, {
    "package.json": JSON.stringify({ name: "site", private: true, type: "module" }),
    "astro.config.mjs": `import { defineConfig } from "astro/config";\nimport cairn from "cairn-search/astro";\nexport default defineConfig({ integrations: [cairn({ noEmbed: true })] });\n`,
    "src/pages/index.astro": `<html lang="en"><head><title>Home</title></head><body><main><h1>Home</h1><p>Welcome to the trail notes.</p></main></body></html>\n`,
    ...Object.fromEntries(Object.entries(PAGES).map(([name, [title, text]]) => [`src/pages/${name}.astro`, `<html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>\n`])),
    "public/notes.txt": "A copy of the lantern page that must not be indexed.",
  });
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--install-links", "astro@5", join(root, "pkg")], { cwd: site, stdio: "pipe" });
  execFileSync(process.execPath, ["node_modules/astro/astro.js", "build"], { cwd: site, stdio: "pipe", env: { ...process.env, ASTRO_TELEMETRY_DISABLED: "1" } });
  const index = join(site, "dist/search");
  assert.ok(existsSync(join(index, "index.cairn")), "no index after astro build");
  assert.equal(top(index, "lantern flame wind"), "lantern/");
  assert.equal(top(index, "stones trail turns"), "guide/");
  const ids = JSON.parse(cairn(["search", index, "lantern", "--json", "--limit", "10"])).map((h) => h.citation.docId);
  assert.ok(!ids.some((id) => id.endsWith(".txt")), `a built site's other files were indexed: ${ids}`);

  const base = await devServer(site, ["node_modules/astro/astro.js", "dev", "--port", "0", "--host", "127.0.0.1"]);
  await servesIndex(base, index, "index.cairn");
});

test("a Vite app builds its index with cairn-search/vite, and vite dev serves it", { timeout: 300_000 }, async () => {
  const app = join(work, "vite");
  const vite = join(root, "examples/vite/node_modules/vite/bin/vite.js");
  const page = (title, text) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>\n`;
  write(app, {
    "vite.config.mjs": `import cairn from ${JSON.stringify(join(root, "pkg/vite.mjs"))};\nexport default { plugins: [cairn({ noEmbed: true })], build: { rollupOptions: { input: ["index.html", "guide.html", "lantern.html"] } } };\n`,
    "index.html": page("Home", "Welcome to the trail notes."),
    "guide.html": page(...PAGES.guide),
    "lantern.html": page(...PAGES.lantern),
  });
  execFileSync(process.execPath, [vite, "build", "--logLevel", "warn"], { cwd: app, stdio: "pipe" });
  const index = join(app, "dist/search");
  assert.ok(existsSync(join(index, "index.cairn")), "no index after vite build");
  assert.equal(top(index, "lantern flame wind"), "lantern.html");

  const base = await devServer(app, [vite, "--port", "0", "--host", "127.0.0.1", "--strictPort", "false"]);
  await servesIndex(base, index, "index.cairn");
});
