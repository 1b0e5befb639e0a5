// uilib.js - what the web UI tests share: counted checks, a real `fanyi serve` on a free
// loopback port, Debian's headless Chromium, the API's own answers to compare with,
// a models directory of synthetic models, axe-core.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const BIN = process.env.FANYI_BIN;
const MODEL = process.argv[2];
const ART = path.join(process.env.FANYI_BUILD_DIR || '.', 'ui-artifacts');
const MAX_CHARS = 300;
const T = { passed: 0, failed: 0 };

function check(cond, what) {
  if (cond) T.passed++;
  else { T.failed++; console.error(`FAIL: ${what}`); }
  return Boolean(cond);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

// `fanyi serve` with MODEL (or models: the arguments naming them) and extra arguments.
async function startServer(extra, atPort, models) {
  const port = atPort || await freePort();
  const proc = spawn(BIN, ['serve', ...(models || ['--model', MODEL]), '--host', '127.0.0.1', '--port', String(port),
    '--threads', '2', '--max-chars', String(MAX_CHARS), ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (d) => { log += d; });
  proc.stderr.on('data', (d) => { log += d; });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try { if ((await fetch(`${base}/health`)).ok) return { proc, base, port, log: () => log }; } catch { /* not yet */ }
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error(`fanyi serve did not start: ${log}`);
}

async function stopServer(s) {
  s.proc.kill('SIGTERM');
  await new Promise((r) => (s.proc.exitCode !== null ? r() : s.proc.on('exit', r)));
}

// A models directory with the given directions (links to the synth_models fixture's
// models beside MODEL): {'zh-en': 'tiny-int8-sl', ...}. Removed by the caller.
function modelsRoot(directions) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-ui-'));
  const models = path.dirname(MODEL);
  for (const [dir, model] of Object.entries(directions)) fs.symlinkSync(path.join(models, model), path.join(root, dir));
  return root;
}

async function apiAnswer(base, text, token, extra) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const r = await fetch(`${base}/translate`, { method: 'POST', headers, body: JSON.stringify({ text, spans: true, ...(extra || {}) }) });
  if (!r.ok) throw new Error(`API ${r.status}`);
  return r.json();
}

async function apiTranslate(base, text, token) {
  return (await apiAnswer(base, text, token)).translation;
}

async function apiDir(base, text, source, target) {
  return (await apiAnswer(base, text, null, { source, target })).translation;
}

// A page of base with its foreign requests and page errors recorded.
async function newPage(browser, base, opts) {
  const context = await browser.newContext(opts || {});
  const page = await context.newPage();
  const foreign = [];
  page.on('request', (req) => { if (!req.url().startsWith(base) && !req.url().startsWith('data:')) foreign.push(req.url()); });
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.goto(base + '/');
  await ready(page);
  return { page, context, foreign, consoleErrors };
}

// The page's load event comes before its start-up fetches (/version, /languages) answer;
// until the translator starts, the panes have no listeners and a draft may still replace
// what a test types. The source selector is filled as the translator starts.
async function ready(page) {
  await page.waitForFunction(() => document.querySelectorAll('#source-lang option').length > 1, null, { timeout: 20000 });
}

// An empty expectation would pass before the page has done anything: a test sentence the
// synthetic model translates to nothing visible (tests/model/README.md) fails here instead.
async function waitForText(page, sel, expected, ms) {
  if (expected === '') {
    console.log(`waitForText(${sel}): the expected text is empty; pick a sentence with visible output`);
    return false;
  }
  // The output's text can be complete before its stream ends: what follows the end (the
  // status, marks, the unsure note, the history) is there once it is neither busy nor stale.
  const settled = ([s, e]) => {
    const el = document.querySelector(s);
    return el.textContent === e && (s !== '#target' || (el.getAttribute('aria-busy') !== 'true' && !el.classList.contains('stale')));
  };
  try {
    await page.waitForFunction(settled, [sel, expected], { timeout: ms || 10000 });
    return true;
  } catch { return false; }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// From now on, every text #status shows, in order, as the page writes it, in
// window.statuses: a check that polled could miss a text the page shows briefly.
function recordStatuses(page) {
  return page.evaluate(() => {
    window.statuses = [];
    const st = document.querySelector('#status');
    new MutationObserver(() => window.statuses.push(st.textContent)).observe(st, { childList: true, subtree: true, characterData: true });
  });
}

async function waitFor(page, fn, arg, ms) {
  return page.waitForFunction(fn, arg, { timeout: ms || 10000 }).then(() => true, () => false);
}

function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    ignoreDefaultArgs: ['--hide-scrollbars'],  // classic scrollbars, as on most desktops
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// axe-core (pinned in package.json): WCAG 2.2 AA and best practices on the page as it is
// (colours: only the rules about colour). The context needs bypassCSP to inject it. The
// violations, as "rule (nodes)" strings.
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];
const AXE_COLOURS = ['color-contrast', 'link-in-text-block', 'non-text-contrast'];
async function axe(page, colours) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(AXE);
  return page.evaluate(([tags, rules]) => {
    const only = rules ? { type: 'rule', values: rules.filter((r) => window.axe.getRules().some((x) => x.ruleId === r)) }
      : { type: 'tag', values: tags };
    return window.axe.run(document, { runOnly: only, resultTypes: ['violations'] })
      .then((r) => r.violations.map((v) => `${v.id} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`));
  }, [AXE_TAGS, colours ? AXE_COLOURS : null]);
}

// Runs main(browser) with a browser, reports the count, exits 1 on a failure.
async function run(main) {
  fs.mkdirSync(ART, { recursive: true });
  const browser = await launch();
  try {
    await main(browser);
  } catch (e) {
    console.error(e);
    T.failed++;
  } finally {
    await browser.close();
  }
  console.log(`${T.passed} passed, ${T.failed} failed`);
  process.exit(T.failed ? 1 : 0);
}

module.exports = {
  BIN, MODEL, ART, MAX_CHARS, check, freePort, startServer, stopServer, modelsRoot, apiAnswer, apiTranslate,
  apiDir, newPage, ready, waitForText, sleep, waitFor, recordStatuses, launch, axe, run,
};
