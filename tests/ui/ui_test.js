// End-to-end test of the web UI in headless Chromium (Debian's), driven by playwright-core,
// against a real `fanyi serve` with a synthetic model. Screenshots go to $FANYI_BUILD_DIR/ui-artifacts.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { chromium } = require('playwright-core');

const BIN = process.env.FANYI_BIN;
const MODEL = process.argv[2];
const ART = path.join(process.env.FANYI_BUILD_DIR || '.', 'ui-artifacts');
const MAX_CHARS = 300;
let passed = 0, failed = 0;

function check(cond, what) {
  if (cond) passed++;
  else { failed++; console.error(`FAIL: ${what}`); }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

async function startServer(extra) {
  const port = await freePort();
  const proc = spawn(BIN, ['serve', '--model', MODEL, '--host', '127.0.0.1', '--port', String(port),
    '--threads', '2', '--max-chars', String(MAX_CHARS), ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (d) => { log += d; });
  proc.stderr.on('data', (d) => { log += d; });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try { if ((await fetch(`${base}/health`)).ok) return { proc, base, log: () => log }; } catch { /* not yet */ }
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

async function apiTranslate(base, text, token) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const r = await fetch(`${base}/translate`, { method: 'POST', headers, body: JSON.stringify({ text }) });
  if (!r.ok) throw new Error(`API ${r.status}`);
  return (await r.json()).translation;
}

async function newPage(browser, base, opts) {
  const context = await browser.newContext(opts || {});
  const page = await context.newPage();
  const foreign = [];
  page.on('request', (req) => { if (!req.url().startsWith(base) && !req.url().startsWith('data:')) foreign.push(req.url()); });
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.goto(base + '/');
  return { page, context, foreign, consoleErrors };
}

async function waitForText(page, sel, expected, ms) {
  try {
    await page.waitForFunction(([s, e]) => document.querySelector(s).textContent === e, [sel, expected], { timeout: ms || 10000 });
    return true;
  } catch { return false; }
}

async function mainFlows(browser, server) {
  const { page, context, foreign, consoleErrors } = await newPage(browser, server.base, { viewport: { width: 1200, height: 800 } });
  const src = '今天天气很好。我们去公园散步吧！';
  const expected = await apiTranslate(server.base, src);
  check(expected.length > 0, 'the API translates the sample');

  // Typing translates (debounced) to exactly the API's answer.
  await page.click('#source');
  await page.keyboard.type(src, { delay: 20 });
  check(await waitForText(page, '#target', expected), 'typing shows the API translation');
  check(await page.$$eval('#target .sent', (s) => s.length) >= 1, 'translation has sentence spans');
  await page.screenshot({ path: path.join(ART, 'translated.png') });

  // Hovering a translated sentence highlights its source.
  await page.hover('#target .sent');
  check(await page.$$eval('#backdrop mark.hl', (m) => m.length) === 1, 'hover highlights the source sentence');
  await page.screenshot({ path: path.join(ART, 'highlight.png') });

  // The counter reads the server's limit.
  check((await page.textContent('#counter')).includes(String(MAX_CHARS)), 'counter shows the server limit');

  // Ctrl+Enter translates at once (well before the debounce would fire again).
  const src2 = '北京是中国的首都。';
  const expected2 = await apiTranslate(server.base, src2);
  await page.fill('#source', src2);
  await page.keyboard.press('Control+Enter');
  check(await waitForText(page, '#target', expected2, 5000), 'Ctrl+Enter translates');

  // Stale answers never win: type, let a request start, then type more quickly.
  await page.fill('#source', '');
  await page.click('#source');
  await page.keyboard.type('他说', { delay: 10 });
  await page.waitForTimeout(350);
  await page.keyboard.type('他明天会来。你呢？', { delay: 5 });
  const finalText = await page.inputValue('#source');
  const expectedFinal = await apiTranslate(server.base, finalText);
  check(await waitForText(page, '#target', expectedFinal), 'the newest text\'s translation wins');
  await page.waitForTimeout(600);
  check((await page.textContent('#target')) === expectedFinal, 'no stale answer overwrites the newest');

  // History keeps recent translations.
  check(await page.$$eval('#history li', (l) => l.length) >= 2, 'history lists recent translations');

  // Over the limit: warning before sending, then the server's 413 in plain words; text kept.
  const long = '这是一个很长的句子。'.repeat(40);
  await page.fill('#source', long);
  check(await page.$eval('#counter', (c) => c.classList.contains('over')), 'counter warns over the limit');
  check(await page.waitForFunction(() => /Too long/.test(document.querySelector('#status').textContent), null, { timeout: 5000 }).then(() => true, () => false), '413 shown in words');
  check((await page.inputValue('#source')) === long, 'the user\'s text is kept after an error');
  check((await page.textContent('#target')) === '', 'no stale translation is shown for the new text');
  await page.screenshot({ path: path.join(ART, 'too-long.png') });

  // Narrow screens stack the panes; dark mode follows the system.
  await page.setViewportSize({ width: 420, height: 900 });
  const boxes = await page.$$eval('.pane', (p) => p.map((e) => e.getBoundingClientRect().top));
  check(boxes[1] > boxes[0], 'panes stack on narrow screens');
  await page.screenshot({ path: path.join(ART, 'narrow.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize({ width: 1200, height: 800 });
  await page.fill('#source', src);
  await page.keyboard.press('Control+Enter');
  await waitForText(page, '#target', expected);
  const bg = await page.$eval('body', (b) => getComputedStyle(b).backgroundColor);
  check(bg !== 'rgb(246, 247, 249)', 'dark mode changes the background');
  await page.screenshot({ path: path.join(ART, 'dark.png') });

  // The API docs page renders from /openapi.json with curl examples.
  await page.goto(server.base + '/docs');
  check(await page.waitForSelector('.endpoint pre code', { timeout: 5000 }).then(() => true, () => false), 'docs page lists endpoints');
  const curl = await page.textContent('.endpoint pre code');
  check(curl.startsWith('curl'), 'docs page has curl examples');
  await page.screenshot({ path: path.join(ART, 'docs.png'), fullPage: true });

  check(foreign.length === 0, `no request to another host (${foreign.join(', ')})`);
  check(consoleErrors.length === 0, `no page errors (${consoleErrors.join('; ')})`);
  await context.close();
}

async function tokenFlow(browser) {
  const server = await startServer(['--api-token', 'sesame']);
  try {
    const { page, context } = await newPage(browser, server.base);
    const src = '你好，世界。';
    const expected = await apiTranslate(server.base, src, 'sesame');
    await page.fill('#source', src);
    await page.keyboard.press('Control+Enter');
    check(await page.waitForSelector('#token-dialog[open]', { timeout: 5000 }).then(() => true, () => false), 'token prompt appears');
    await page.screenshot({ path: path.join(ART, 'token.png') });
    await page.fill('#token-input', 'sesame');
    await page.click('#token-form button.primary');
    check(await waitForText(page, '#target', expected), 'translation after entering the token');
    await page.reload();
    await page.fill('#source', src + ' ');
    await page.keyboard.press('Control+Enter');
    check(await waitForText(page, '#target', await apiTranslate(server.base, src + ' ', 'sesame')), 'token kept across reloads');
    check(!(await page.$('#token-dialog[open]')), 'no second prompt');
    await context.close();
  } finally {
    await stopServer(server);
  }
}

async function main() {
  fs.mkdirSync(ART, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const server = await startServer([]);
  try {
    await mainFlows(browser, server);
    await tokenFlow(browser);
  } finally {
    await stopServer(server);
    await browser.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e); console.log(`${passed} passed, ${failed + 1} failed`); process.exit(1); });
