// Loads report pages from disk in headless Chromium: fails on any console error, page
// error, failed request, request that leaves the disk, or link to an anchor that does not
// exist, or a report whose verdict sentence and findings are not on the first screen
// (1280×800); saves a full-page screenshot of each. Usage: node check.mjs OUT_DIR PAGE.html...
import { chromium } from "playwright-core";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [outDir, ...pages] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
let problems = 0;
for (const file of pages) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const found = [];
  page.on("console", (m) => { if (m.type() === "error") found.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => found.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => found.push(`failed: ${r.url()}`));
  page.on("request", (r) => { if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) found.push(`leaves the disk: ${r.url()}`); });
  await page.goto(pathToFileURL(path.resolve(file)).href, { waitUntil: "load" });
  const broken = await page.evaluate(() =>
    [...document.querySelectorAll('a[href^="#"]')]
      .map((a) => a.getAttribute("href").slice(1))
      .filter((id) => !document.getElementById(id)));
  broken.forEach((id) => found.push(`link to a missing anchor #${id}`));
  const firstScreen = await page.evaluate(() => {
    const cause = document.querySelector(".cause");
    if (!cause) return [];
    const out = [];
    if (cause.getBoundingClientRect().bottom > window.innerHeight) out.push("the verdict sentence is below the first screen");
    const findings = [...document.querySelectorAll("h2")].find((h) => h.textContent.startsWith("Worst findings"));
    if (!findings || findings.getBoundingClientRect().top > window.innerHeight) out.push("the findings do not start on the first screen");
    return out;
  });
  firstScreen.forEach((f) => found.push(f));
  const svgs = await page.evaluate(() => document.querySelectorAll("svg").length);
  const shot = path.join(outDir, path.basename(path.dirname(path.resolve(file))) + "-" + path.basename(file, ".html") + ".png");
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`${file}: ${found.length} problems, ${svgs} inline charts, screenshot ${shot}`);
  found.forEach((f) => console.log(`  ${f}`));
  problems += found.length;
  await page.close();
}
await browser.close();
process.exit(problems ? 1 : 0);
