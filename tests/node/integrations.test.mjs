// The site-generator integrations with the real generators from npm: an Astro site (astro 5),
// a Docusaurus site (Docusaurus 3 with its classic preset), each installed into an empty project
// with the package, and a Vite multi-page app (the Vite of examples/vite) build with
// `cairn-search/astro`, `/docusaurus` or `/vite`, which index the built pages (no copies of the
// sources, no assets); the index answers with the page's URL (under the site's base), a page of
// each built site finds another in Chromium (Docusaurus's own navbar search, opened by Ctrl+K),
// and each dev server serves the last build's index, by range too.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { cairn, launchChromium, root, scratch } from "./helpers.mjs";
import { serve } from "../../scripts/serve.mjs";

const work = scratch("integrations");
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

/** Serves the built site `dir` at / and opens `path` of it in Chromium; `use(page, base)` runs there. */
async function inChromium(dir, path, use) {
  const site = await serve(0, [["/pkg/", join(root, "pkg")], ["/", dir]]);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const base = `http://127.0.0.1:${site.address().port}`;
    await page.goto(`${base}${path}`);
    return await use(page, base);
  } finally {
    await browser.close();
    site.close();
  }
}

/** In Chromium, a `<cairn-search>` added to a page of the built site `dir` (the package's element
 * at /pkg/, the index by its folder's URL) finds `query`'s page first: resolves to its URL. */
const firstInChromium = (dir, query) =>
  inChromium(dir, "/", async (page) => {
    await page.evaluate(() => {
      document.body.insertAdjacentHTML("beforeend", `<cairn-search index="/search/"></cairn-search>`);
      const script = Object.assign(document.createElement("script"), { type: "module", src: "/pkg/element.js" });
      document.head.append(script);
    });
    await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
    await page.fill("cairn-search input", query);
    await page.waitForSelector("cairn-search li[role=option]", { timeout: 30_000 });
    return page.$eval("cairn-search li[role=option]", (li) => li.dataset.url);
  });

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
  assert.equal(top(index, "lantern flame wind"), "/lantern/");
  assert.equal(top(index, "stones trail turns"), "/guide/");
  assert.equal(await firstInChromium(join(site, "dist"), "lantern flame"), "/lantern/");
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
  assert.equal(top(index, "lantern flame wind"), "/lantern.html");
  assert.equal(await firstInChromium(join(app, "dist"), "lantern flame"), "/lantern.html");

  const base = await devServer(app, [vite, "--port", "0", "--host", "127.0.0.1", "--strictPort", "false"]);
  await servesIndex(base, index, "index.cairn");
});

test("a Docusaurus site builds its index with cairn-search/docusaurus, its navbar searches it, and docusaurus start serves it", { timeout: 400_000 }, async () => {
  const site = join(work, "docusaurus");
  const doc = (title, text) => `---\ntitle: ${title}\n---\n\n${text}\n`;
  write(site, {
    "package.json": JSON.stringify({ name: "site", private: true }),
    "docusaurus.config.js": `module.exports = {
  title: "Trail notes", url: "http://127.0.0.1", baseUrl: "/",
  presets: [["classic", { docs: { routeBasePath: "/docs" }, blog: false }]],
  plugins: [["cairn-search/docusaurus", { noEmbed: true }]],
};\n`,
    "src/pages/index.md": "# Trail notes\n\nNotes from the trail.\n",
    "docs/intro.md": doc("Welcome", "Welcome to the trail notes."),
    ...Object.fromEntries(Object.entries(PAGES).map(([name, [title, text]]) => [`docs/${name}.md`, doc(title, text)])),
    "static/notes.txt": "A copy of the lantern page that must not be indexed.",
  });
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--install-links", "@docusaurus/core@3", "@docusaurus/preset-classic@3", "react@18", "react-dom@18", join(root, "pkg")], { cwd: site, stdio: "pipe" });
  const docusaurus = join(site, "node_modules/@docusaurus/core/bin/docusaurus.mjs");
  const env = { ...process.env, DOCUSAURUS_TELEMETRY_DISABLED: "1", NO_UPDATE_NOTIFIER: "1" };
  execFileSync(process.execPath, [docusaurus, "build"], { cwd: site, stdio: "pipe", env });
  const index = join(site, "build/search");
  assert.ok(existsSync(join(index, "index.cairn")), "no index after docusaurus build");
  assert.equal(top(index, "lantern flame wind"), "/docs/lantern/");
  const ids = JSON.parse(cairn(["search", index, "lantern", "--json", "--limit", "10"])).map((h) => h.citation.docId);
  assert.ok(!ids.some((id) => id.endsWith(".txt")), `a built site's other files were indexed: ${ids}`);

  // The navbar's search: Ctrl+K opens the dialog; the first result is the page, and choosing it goes there.
  const landed = await inChromium(join(site, "build"), "/docs/guide/", async (page, base) => {
    // The modal loads its index when first opened.
    await page.waitForFunction(() => customElements.get("cairn-search"), null, { timeout: 30_000 });
    await page.keyboard.press("Control+k");
    await page.waitForSelector("cairn-search dialog[open]");
    await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
    await page.keyboard.type("lantern flame");
    await page.waitForSelector("cairn-search li[role=option]", { timeout: 30_000 });
    assert.equal(await page.$eval("cairn-search li[role=option]", (li) => li.dataset.url), "/docs/lantern/");
    await page.keyboard.press("ArrowDown");
    await Promise.all([page.waitForURL(`${base}/docs/lantern/`), page.keyboard.press("Enter")]);
    return page.url();
  });
  assert.ok(landed.endsWith("/docs/lantern/"), landed);

  const port = await freePort();
  const base = await devServer(site, [docusaurus, "start", "--port", String(port), "--host", "127.0.0.1", "--no-open"]);
  // It says where it runs before it answers (the first compile is under way).
  for (let tries = 0; !(await fetch(base).then((r) => r.ok, () => false)); tries++) {
    assert.ok(tries < 120, "docusaurus start never answered");
    await new Promise((ok) => setTimeout(ok, 500));
  }
  await servesIndex(base, index, "index.cairn");
  const element = await fetch(`${base}/_cairn/element.js`);
  assert.equal(element.status, 200, "docusaurus start does not serve the search box's script");
});

/** A TCP port nobody listens on now. */
function freePort() {
  return new Promise((ok) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}
