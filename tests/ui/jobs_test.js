// jobs_test.js - issue 26 in the page, in headless Chromium against a real `fanyi serve`
// (its --data-dir a temporary directory): the Documents panel runs a file as a document
// job (POST /documents) and follows it: a text file and a PDF, translated or bilingual,
// each download the server's own result; a long PDF shows its progress in pages and
// the time left, is found again after a reload (its id kept in localStorage) and stopped
// by Cancel (the server's job canceled); axe on each state, light and dark, desktop and
// phone. PDFs are made with tests/docs/make_pdfs.py (python3-reportlab).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ART, check, startServer, stopServer, modelsRoot, newPage, waitFor, axe, run } = require('./uilib');

const DESK = { viewport: { width: 1280, height: 800 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const ZH = '这家饭馆的饺子又便宜又好吃。\n孩子们在公园里放风筝。\n';
// Long enough to be still running after axe, a screenshot and a reload on a loaded machine
// (about 15 pages a second on Zen 5: over a minute; 1.2 million characters, over the
// server's default limit); Cancel ends it.
const LONG_PAGES = 1000;

// The page's job (its id kept in the page's localStorage) as the API shows it, and its
// result's bytes. (Not a second job of the same file: a batch's neighbours may change
// a synthetic model's words.)
async function pageJob(base, page) {
  const id = JSON.parse(await kept(page) || '{}').id;
  const job = await (await fetch(`${base}/documents/${id}`)).json();
  const bytes = Buffer.from(await (await fetch(`${base}/documents/${id}/result`)).arrayBuffer());
  return { job, bytes };
}

const pdfPages = (bytes) => {
  const f = path.join(os.tmpdir(), `fanyi-ui-${process.pid}.pdf`);
  fs.writeFileSync(f, bytes);
  try { return Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [f], { encoding: 'utf8' }))[1]); } finally { fs.rmSync(f); }
};

const status = (page) => page.textContent('#doc-status');

// Hands a file to the panel and waits for its download: {name, bytes}, or null.
async function upload(page, name, bytes) {
  await page.setInputFiles('#doc-file', { name, mimeType: '', buffer: bytes });
  return download(page);
}

async function download(page) {
  const ready = await waitFor(page, () => !document.querySelector('#doc-download').hidden ||
    /refused|failed|cancelled/.test(document.querySelector('#doc-status').textContent), null, 60000);
  if (!ready || await page.$eval('#doc-download', (a) => a.hidden)) return null;
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#doc-download')]);
  return { name: d.suggestedFilename(), bytes: fs.readFileSync(await d.path()) };
}

const kept = (page) => page.evaluate(() => localStorage.getItem('fanyi.document'));

async function axeClean(page, what, colours) {
  const found = await axe(page, colours);
  check(found.length === 0, `axe, ${what}: ${found.join('; ') || 'clean'}`);
}

async function shortJobs(browser, server, pdfs) {
  const { page, context, consoleErrors } = await newPage(browser, server.base, { ...DESK, acceptDownloads: true, bypassCSP: true });
  check(/\.pdf\b/.test(await page.getAttribute('#doc-file', 'accept')) && /\.pdf/.test(await page.textContent('#doc-formats')), 'the panel takes PDFs');
  // A text file: a job, its result the API's.
  const txt = Buffer.from(ZH);
  const got = await upload(page, 'notes.txt', txt);
  const want = await pageJob(server.base, page);
  check(got && got.name === 'notes.en.txt' && got.bytes.equals(want.bytes) && want.bytes.length > 0, `a text file: the job's result (${got && got.name})`);
  check(/notes\.txt translated from Chinese into English/.test(await status(page)), `and said (${await status(page)})`);
  const listed = want.job;
  check(listed.state === 'done' && listed.direction === 'zh-en' && /^web-[0-9a-f]{16}$/.test(listed.client),
    `a job of the server's, tagged with this browser (${listed.client})`);
  const mine = await (await fetch(`${server.base}/documents?client=${listed.client}`)).json();
  check(mine.documents.some((d) => d.id === listed.id), 'listed with the browser\'s tag');
  // After a reload the finished job is found again, its file offered.
  await page.reload();
  const again = await download(page);
  check(again && again.name === 'notes.en.txt' && again.bytes.equals(want.bytes), 'after a reload: the finished job found again, its file offered');
  await axeClean(page, 'a document done');
  // A PDF, translated, then bilingual: the server's own files (a PDF is made the same way twice).
  const pdf = fs.readFileSync(path.join(pdfs, 'chinese.pdf'));
  const tr = await upload(page, 'chinese.pdf', pdf);
  const trWant = await pageJob(server.base, page);
  check(tr && tr.name === 'chinese.en.pdf' && tr.bytes.equals(trWant.bytes) && !trWant.job.bilingual && pdfPages(tr.bytes) === 1,
    `a PDF, translated (${tr && tr.name}, ${tr && tr.bytes.length} bytes)`);
  await page.check('#doc-bilingual');
  const bi = await upload(page, 'chinese.pdf', pdf);
  const biWant = await pageJob(server.base, page);
  check(biWant.job.bilingual && bi && bi.bytes.equals(biWant.bytes) && pdfPages(bi.bytes) === 2, `a PDF, bilingual: each page, then its translation (${bi && bi.name})`);
  check(/each page, then its translation/.test(await status(page)), `and said (${await status(page)})`);
  // The glossary picked for Chinese → English goes with a document into English.
  const gl = await (await fetch(`${server.base}/glossaries`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Food', source: 'zh', target: 'en', entries: { 饺子: 'dumplings' } }) })).json();
  await page.evaluate((id) => localStorage.setItem('fanyi.glossaries', JSON.stringify({ 'zh-en': id })), gl.id);
  const withGl = await upload(page, 'notes.txt', txt);
  check(withGl && withGl.bytes.toString().includes('dumplings') && !want.bytes.toString().includes('dumplings'),
    `the glossary picked for the direction is used (${withGl && withGl.bytes.toString().slice(0, 80)})`);
  await page.evaluate(() => localStorage.removeItem('fanyi.glossaries'));
  // Bilingual is for PDFs: a text file is translated.
  const plain = await upload(page, 'notes.txt', txt);
  const plainWant = await pageJob(server.base, page);
  check(plain && plain.name === 'notes.en.txt' && !plainWant.job.bilingual && plain.bytes.equals(plainWant.bytes), 'bilingual chosen, a text file: translated');
  await page.locator('.documents').screenshot({ path: path.join(ART, 'documents-done.png') });
  check(consoleErrors.length === 0, `documents: no page errors (${consoleErrors.join('; ')})`);
  await context.close();
}

async function longJob(browser, server, pdfs) {
  const { page, context, consoleErrors } = await newPage(browser, server.base, { ...DESK, acceptDownloads: true, bypassCSP: true });
  await page.setInputFiles('#doc-file', { name: 'long.pdf', mimeType: 'application/pdf', buffer: fs.readFileSync(path.join(pdfs, 'long.pdf')) });
  const running = (pages) => new RegExp(`Translating long\\.pdf: \\d+% \\(page \\d+ of ${pages}\\) · about \\d+ (s|min) left`)
    .test(document.querySelector('#doc-status').textContent);
  check(await waitFor(page, running, LONG_PAGES, 30000), `a long PDF: its progress in pages and the time left (${await status(page)})`);
  const bar = await page.evaluate(() => {
    const p = document.querySelector('#doc-progress');
    return { shown: !p.hidden, value: p.value, said: Number((/: (\d+)%/.exec(document.querySelector('#doc-status').textContent) || [])[1]) };
  });
  check(await page.isVisible('#doc-cancel') && bar.shown && bar.value === bar.said, `a progress bar at the percent said (${JSON.stringify(bar)}), and Cancel`);
  await page.locator('.documents').screenshot({ path: path.join(ART, 'documents-progress.png') });
  await axeClean(page, 'a document job running');
  const id = JSON.parse(await kept(page) || '{}').id;
  check(/^[0-9a-f]{32}$/.test(id || ''), 'the job\'s id is kept in this browser');
  // A reload finds it running.
  await page.reload();
  check(await waitFor(page, running, LONG_PAGES, 15000), `after a reload the job is found again, running (${await status(page)})`);
  await page.click('#doc-cancel');
  check(await waitFor(page, () => /long\.pdf: cancelled/.test(document.querySelector('#doc-status').textContent), null, 10000),
    `Cancel: said (${await status(page)})`);
  const job = await (await fetch(`${server.base}/documents/${id}`)).json();
  check(job.state === 'canceled' && job.progress.done < job.progress.total, `the server's job is canceled (${job.state}, ${job.progress.done} of ${job.progress.total})`);
  check(await kept(page) === null && await page.$eval('#doc-cancel', (b) => b.hidden) && await page.$eval('#doc-download', (a) => a.hidden),
    'no download, no Cancel, the id forgotten');
  await axeClean(page, 'a document job cancelled');
  await page.reload();
  check(await page.$eval('#doc-bar', (b) => b.hidden), 'a reload after it: nothing to find');
  check(consoleErrors.length === 0, `long job: no page errors (${consoleErrors.join('; ')})`);
  await context.close();
  // Dark and phone: the running state.
  for (const [opts, scheme] of [[DESK, 'dark'], [PHONE, 'light']]) {
    const c = await newPage(browser, server.base, { ...opts, colorScheme: scheme, bypassCSP: true });
    await c.page.setInputFiles('#doc-file', { name: 'long.pdf', mimeType: 'application/pdf', buffer: fs.readFileSync(path.join(pdfs, 'long.pdf')) });
    if (await waitFor(c.page, () => !document.querySelector('#doc-cancel').hidden, null, 30000)) {
      await axeClean(c.page, `a document job running, ${opts === PHONE ? 'phone' : 'desktop'} ${scheme}`, scheme === 'dark');
      await c.page.click('#doc-cancel');
      await waitFor(c.page, () => /cancelled/.test(document.querySelector('#doc-status').textContent));
    } else {
      check(false, `${scheme}: the job did not start (${await status(c.page)})`);
    }
    await c.context.close();
  }
}

run(async (browser) => {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-ui-data-'));
  const pdfs = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-ui-pdf-'));
  const root = modelsRoot({ 'zh-en': 'tiny-int8-sl', 'en-zh': 'firefox-en-zh' });
  let server = null;
  try {
    const make = path.join(process.env.FANYI_SOURCE_DIR || path.join(__dirname, '..', '..'), 'tests', 'docs', 'make_pdfs.py');
    execFileSync('/usr/bin/python3', [make, pdfs]);
    execFileSync('/usr/bin/python3', [make, pdfs, '--pages', String(LONG_PAGES)]);
    server = await startServer(['--data-dir', data, '--cache-mb', '0', '--jobs-batch-chars', '500', '--max-document-chars', '2000000'], undefined, ['--models', root]);
    for (const [name, part] of [['short jobs', () => shortJobs(browser, server, pdfs)], ['long job', () => longJob(browser, server, pdfs)]]) {
      const t0 = Date.now();
      await part();
      console.log(`${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    if (server) await stopServer(server);
    for (const d of [data, pdfs, root]) fs.rmSync(d, { recursive: true, force: true });
  }
});
