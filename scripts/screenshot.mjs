// Takes the demo's screenshot for the README: serves www/, types a query once the model is in,
// and saves docs/demo.png. Usage: node scripts/screenshot.mjs ["query"]
import { chromium } from "playwright-core";
import { serve } from "./serve.mjs";

const query = process.argv[2] ?? "how does the browser get the model";
const server = await serve(0);
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
});
const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
await page.goto(`http://127.0.0.1:${server.address().port}/`);
await page.waitForSelector("cairn-search[data-model]", { timeout: 120_000 });
await page.fill("cairn-search input", query);
await page.waitForSelector("cairn-search li[role=option]");
await page.waitForTimeout(300);
await page.screenshot({ path: new URL("../docs/demo.png", import.meta.url).pathname });
await browser.close();
server.close();
console.log("wrote docs/demo.png");
