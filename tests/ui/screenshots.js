// Remakes the README's pictures of the web UI (docs/img/ui-*.png) in headless Chromium.
//
//   node tests/ui/screenshots.js [--fanyi BIN] [--models DIR | --model DIR] [--out DIR]
//
// Default: build/src/fanyi with the synth_models fixture (zh-en, en-zh, en-de, de-en under
// build/models, random weights: the translations are nonsense, the page is real). With
// real models (`fanyi model fetch`) pass --models ROOT for pictures with real output.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const REPO = path.resolve(__dirname, '..', '..');

function args() {
  const a = { fanyi: path.join(REPO, 'build/src/fanyi'), out: path.join(REPO, 'docs/img') };
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i += 2) {
    const k = v[i].replace(/^--/, '');
    if (!['fanyi', 'models', 'model', 'out'].includes(k) || v[i + 1] === undefined) {
      console.error('usage: node tests/ui/screenshots.js [--fanyi BIN] [--models DIR | --model DIR] [--out DIR]');
      process.exit(2);
    }
    a[k] = v[i + 1];
  }
  return a;
}

// The fixture's three tiny models as a models root (symlinks in a temporary directory).
function fixtureRoot() {
  const models = path.join(REPO, 'build/models');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-shots-'));
  for (const [dir, model] of [['zh-en', 'tiny-int8-sl'], ['en-zh', 'firefox-en-zh'], ['en-de', 'tiny-en-de'], ['de-en', 'tiny-de-en']]) {
    if (!fs.existsSync(path.join(models, model))) throw new Error(`no ${model} under ${models}: run ctest -R synth_models_setup`);
    fs.symlinkSync(path.join(models, model), path.join(root, dir));
  }
  return root;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

// A server of its own data directory (glossaries, document jobs), removed with it.
async function serve(bin, modelArgs) {
  const port = await freePort();
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-shots-data-'));
  const proc = spawn(bin, ['serve', ...modelArgs, '--host', '127.0.0.1', '--port', String(port), '--quiet', '--data-dir', data],
    { stdio: 'ignore' });
  proc.on('exit', () => fs.rmSync(data, { recursive: true, force: true }));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200 && proc.exitCode === null; i++) {
    try { if ((await fetch(`${base}/health`)).ok) return { proc, base }; } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error('fanyi serve did not start');
}

async function shoot(browser, base, out, name, opts, act) {
  const context = await browser.newContext({ viewport: opts.viewport, colorScheme: opts.scheme || 'light',
    locale: opts.locale || 'en-US', isMobile: Boolean(opts.phone), hasTouch: Boolean(opts.phone) });
  const page = await context.newPage();
  await page.goto(`${base}${opts.path || '/'}${opts.hash || ''}`);
  if (!opts.path) await page.waitForFunction(() => document.querySelectorAll('#source-lang option').length > 1);
  await act(page);
  if (!opts.path) await page.waitForFunction(() => document.querySelector('#target').getAttribute('aria-busy') === 'false');
  await page.screenshot({ path: path.join(out, `ui-${name}.png`), fullPage: Boolean(opts.full) });
  await context.close();
}

async function main() {
  const a = args();
  const root = a.models || a.model ? null : fixtureRoot();
  const server = await serve(a.fanyi, a.model ? ['--model', a.model] : ['--models', a.models || root]);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    ignoreDefaultArgs: ['--hide-scrollbars'],
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  fs.mkdirSync(a.out, { recursive: true });
  // Sentences the synthetic models translate to something (random weights make nothing of some).
  const text = '这家饭馆的饺子又便宜又好吃。今天天气很好。\n\n孩子们在公园里放风筝。';
  const type = (t) => async (page) => {
    await page.fill('#source', t);
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => document.querySelector('#target').textContent.length > 0);
  };
  const settle = (page) => page.waitForFunction(() => document.querySelector('#target').getAttribute('aria-busy') === 'false');
  try {
    const desk = { viewport: { width: 1100, height: 620 } };
    await shoot(browser, server.base, a.out, 'light', { ...desk, hash: '#sl=auto&tl=en' }, type(text));
    await shoot(browser, server.base, a.out, 'dark', { ...desk, scheme: 'dark', hash: '#sl=zh&tl=en' }, async (page) => {
      await type(text)(page);
      await page.hover('#target .sent');
    });
    await shoot(browser, server.base, a.out, 'phone', { viewport: { width: 390, height: 844 }, phone: true, scheme: 'dark', hash: '#sl=auto&tl=en' }, type(text));
    // Detect → English, English typed: the target switches to Chinese by itself.
    await shoot(browser, server.base, a.out, 'detect', { ...desk, hash: '#sl=auto&tl=en' }, async (page) => {
      await page.fill('#source', 'The weather is nice today. Good morning.');
      await page.waitForFunction(() => /detected/.test(document.querySelector('#status').textContent));
    });
    await shoot(browser, server.base, a.out, 'alternatives', { ...desk, hash: '#sl=zh&tl=en' }, async (page) => {
      await type(text)(page);
      await settle(page);
      await page.click('#target .sent[data-i="1"]');
      await page.waitForSelector('#alts-list button');
    });
    await shoot(browser, server.base, a.out, 'document', { viewport: { width: 1100, height: 900 }, hash: '#sl=auto&tl=en' }, async (page) => {
      await type(text)(page);
      await settle(page);
      await page.setInputFiles('#doc-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(`${text}\n`) });
      await page.waitForSelector('#doc-download:not([hidden])');
      await page.evaluate(() => document.querySelector('.documents').scrollIntoView());
    });
    // A long PDF running as a job: its pages, the time left, Cancel.
    const pdfs = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-shots-pdf-'));
    try {
      execFileSync('/usr/bin/python3', [path.join(REPO, 'tests/docs/make_pdfs.py'), pdfs, '--pages', '200']);
      await shoot(browser, server.base, a.out, 'job', { viewport: { width: 1100, height: 900 }, hash: '#sl=auto&tl=zh' }, async (page) => {
        await type(text)(page);
        await settle(page);
        await page.setInputFiles('#doc-file', { name: 'long.pdf', mimeType: 'application/pdf', buffer: fs.readFileSync(path.join(pdfs, 'long.pdf')) });
        await page.waitForFunction(() => / left…$/.test(document.querySelector('#doc-status').textContent), null, { timeout: 60000 });
        await page.evaluate(() => document.querySelector('.documents').scrollIntoView());
      });
    } finally {
      fs.rmSync(pdfs, { recursive: true, force: true });
    }
    // The Glossary panel with its terms, and a sentence the model was unsure of underlined.
    await shoot(browser, server.base, a.out, 'glossary', { viewport: { width: 1100, height: 1300 }, hash: '#sl=zh&tl=en' }, async (page) => {
      await type(text)(page);
      await settle(page);
      const terms = [['饺子', 'dumplings'], ['公园', 'park'], ['Fanyi', '']];
      for (let k = 0; k < terms.length; k++) {
        await page.waitForSelector('#gl-editor:not([hidden])');
        await page.fill('#gl-add-src', terms[k][0]);
        await page.fill('#gl-add-tgt', terms[k][1]);
        await page.click('#gl-add button');
        await page.waitForFunction((n) => document.querySelectorAll('#gl-terms tr').length === n, k + 1);
      }
      await settle(page);
      await page.evaluate(() => { document.activeElement.blur(); window.scrollTo(0, 0); });
    });
    await shoot(browser, server.base, a.out, 'zh', { ...desk, locale: 'zh-CN', scheme: 'dark', hash: '#sl=auto&tl=en' }, type(text));
    await shoot(browser, server.base, a.out, 'plugins', { viewport: { width: 1100, height: 900 }, path: '/plugins' }, async (page) => {
      await page.waitForSelector('.setup');
      for (const id of ['immersive/custom', 'immersive/openai', 'kiss/custom']) {
        await page.click(`[data-check="${id}"] button.test`);
        await page.waitForSelector(`[data-check="${id}"] .result.pass, [data-check="${id}"] .result.fail`);
      }
      await page.evaluate(() => { document.activeElement.blur(); window.scrollTo(0, 0); });
    });
  } finally {
    await browser.close();
    server.proc.kill('SIGTERM');
    await new Promise((r) => (server.proc.exitCode !== null ? r() : server.proc.on('exit', r)));
    if (root) fs.rmSync(root, { recursive: true, force: true });
  }
  for (const f of fs.readdirSync(a.out).filter((x) => x.startsWith('ui-')))
    console.log(`${path.join(a.out, f)}: ${fs.statSync(path.join(a.out, f)).size} bytes`);
}

main().catch((e) => { console.error(e); process.exit(1); });
