// glossary_test.js - issue 25 in the page, in headless Chromium against a real `fanyi
// serve` (its --data-dir a temporary directory): the confidence marks (the sentences whose
// margin is under 0.5 underlined, as the native API's scores say, with a note that
// explains them) and the Glossary panel (one stored glossary picked per direction, terms
// added, removed, imported from TSV and exported, a bad file refused and named; every
// change stored by the server, so the API lists the same glossaries and the page's
// translations are the API's with that glossary_id), axe on each state, light and dark,
// desktop and phone.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ART, check, startServer, stopServer, modelsRoot, newPage, waitForText, waitFor, axe, run } = require('./uilib');

const DESK = { viewport: { width: 1280, height: 800 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
// Sentences of the synthetic model's: it is sure of some and unsure of others (its
// weights are random: the numbers rank nothing, they only have to be shown as given).
const POOL = ['这家饭馆的饺子又便宜又好吃。', '孩子们在公园里放风筝。', '今天天气很好。', '我们明天去北京。',
  '他每天早上跑步。', '这本书很有意思。', '你好。', '谢谢你的帮助。'];
const ZH = POOL[0];
const UNSURE = 0.5;  // web/translator.js UNSURE_MARGIN, docs/api.md "Confidence"

async function api(base, method, url, body) {
  const r = await fetch(base + url, { method, headers: { 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
  const text = await r.text();
  try { return { status: r.status, body: JSON.parse(text) }; } catch { return { status: r.status, body: text }; }
}

const translateApi = async (base, fields) => (await api(base, 'POST', '/translate', { source: 'zh', target: 'en', ...fields })).body;

// ---- confidence ---------------------------------------------------------------------------

async function confidence(browser, server) {
  const margins = [];
  for (const s of POOL) margins.push((await translateApi(server.base, { text: s, scores: true })).scores[0].margin);
  const sure = POOL.filter((s, i) => margins[i] >= UNSURE), unsure = POOL.filter((s, i) => margins[i] < UNSURE);
  check(sure.length >= 2 && unsure.length >= 1, `the pool has sure and unsure sentences (margins ${margins.map((m) => m.toFixed(2))})`);
  const text = [sure[0], unsure[0], sure[1]].join('');
  const want = await translateApi(server.base, { text, scores: true, spans: true });
  const wantMarked = want.scores.map((s, i) => (s && s.margin < UNSURE ? i : -1)).filter((i) => i >= 0);
  for (const [opts, scheme, where] of [[DESK, 'light', 'desktop'], [DESK, 'dark', 'desktop'], [PHONE, 'light', 'phone']]) {
    const { page, context, consoleErrors } = await newPage(browser, server.base, { ...opts, colorScheme: scheme, bypassCSP: true });
    await page.fill('#source', text);
    check(await waitForText(page, '#target', want.translation), `${where} ${scheme}: the API's translation`);
    const marked = await page.$$eval('#target .sent.unsure', (l) => l.map((e) => Number(e.dataset.i)));
    check(JSON.stringify(marked) === JSON.stringify(wantMarked), `${where} ${scheme}: the unsure sentences marked (${marked}; the API's margins: ${wantMarked})`);
    const note = await page.$eval('#unsure-note', (n) => ({ shown: !n.hidden, text: n.textContent }));
    check(note.shown && /unsure of this sentence: (click|tap) it for alternatives\./.test(note.text),
      `${where}: the note says what the mark means (${note.text})`);
    check(await page.$eval('#target .sent.unsure', (e) => e.getAttribute('aria-describedby')) === 'unsure-note' &&
      await page.$eval('#target .sent:not(.unsure)', (e) => !e.hasAttribute('aria-describedby')), `${where}: a marked sentence is described by the note`);
    if (where === 'desktop') {
      const h = await page.$$eval('.pane', (l) => l.map((p) => Math.round(p.getBoundingClientRect().height)));
      check(h[0] === h[1], `desktop: the note keeps the two panes one height (${h})`);
    }
    const style = await page.$eval('#target .sent.unsure', (e) => getComputedStyle(e).textDecorationStyle);
    check(style === 'dotted', `${where} ${scheme}: a dotted underline (${style})`);
    const found = await axe(page, scheme === 'dark');
    check(found.length === 0, `axe, ${where} ${scheme}, unsure sentences marked: ${found.join('; ') || 'clean'}`);
    if (where === 'desktop' && scheme === 'light') {
      await page.screenshot({ path: path.join(ART, 'confidence.png') });
      // An alternative picked for the unsure sentence is the user's: no longer marked.
      await page.click(`#target .sent[data-i="${wantMarked[0]}"]`);
      const picked = await waitFor(page, () => document.querySelector('#alts-list button'), null, 10000);
      if (picked) {
        await page.click('#alts-list button');
        check(await waitFor(page, () => !document.querySelector('#target .sent.unsure') && document.querySelector('#unsure-note').hidden),
          'an alternative picked for it: the mark and the note go');
      }
      // A text the model is sure of: no mark, no note.
      await page.fill('#source', sure[0]);
      await waitForText(page, '#target', (await translateApi(server.base, { text: sure[0] })).translation);
      check(await page.$$eval('#target .sent.unsure', (l) => l.length) === 0 && await page.$eval('#unsure-note', (n) => n.hidden),
        'a sure sentence: no mark, no note');
    }
    check(consoleErrors.length === 0, `${where}: no page errors (${consoleErrors.join('; ')})`);
    await context.close();
  }
}

// ---- the Glossary panel ---------------------------------------------------------------------

const listed = async (base, src, tgt) => (await api(base, 'GET', `/glossaries?source=${src}&target=${tgt}`)).body.glossaries;
const entriesOf = async (base, id) => (await api(base, 'GET', `/glossaries/${id}/entries?source=zh&target=en&format=json`)).body.entries;
const rows = (page) => page.$$eval('#gl-terms tr', (l) => l.map((r) => [...r.cells].slice(0, 2).map((c) => c.textContent)));

async function glossary(browser, server) {
  const { page, context, consoleErrors } = await newPage(browser, server.base, { ...DESK, acceptDownloads: true, bypassCSP: true });
  const sent = [];
  page.on('request', (r) => { if (r.url().endsWith('/translate/stream')) sent.push(JSON.parse(r.postData())); });
  check(/choose the source language/.test(await page.textContent('#gl-dir')) && await page.$eval('#gl-editor', (e) => e.hidden),
    'before a language is known the panel says glossaries are per direction');
  // Detect finds Chinese: the panel is for Chinese → English.
  await page.fill('#source', ZH);
  await waitForText(page, '#target', (await translateApi(server.base, { text: ZH })).translation);
  check(await waitFor(page, () => document.querySelector('#gl-dir').textContent === 'Glossary for Chinese → English' &&
    !document.querySelector('#gl-editor').hidden), `the panel follows the detected direction (${await page.textContent('#gl-dir')})`);
  // A first term: a glossary is made for the direction, picked, stored by the server.
  await page.fill('#gl-add-src', '饺子');
  await page.fill('#gl-add-tgt', 'dumplings');
  await page.click('#gl-add button');
  check(await waitFor(page, () => document.querySelectorAll('#gl-terms tr').length === 1), 'the term is listed');
  let list = await listed(server.base, 'zh', 'en');
  check(list.length === 1 && list[0].dictionaries[0].entries === 1, `the server stores it (${JSON.stringify(list)})`);
  const id = list[0].id;
  check(await page.inputValue('#gl-pick') === id, 'and it is picked for Chinese → English');
  const withGl = (await translateApi(server.base, { text: ZH, glossary_id: id })).translation;
  check(withGl.includes('dumplings') && await waitForText(page, '#target', withGl), `the text is translated again with it (${withGl})`);
  check(sent.length > 0 && sent[sent.length - 1].glossary_id === id, 'the request carries the glossary\'s id');
  // Import: the TSV's terms merged in; a bad file named, nothing changed.
  await page.setInputFiles('#gl-import', { name: 'terms.tsv', mimeType: 'text/tab-separated-values', buffer: Buffer.from('公园\tpark\n风筝\tkite\nFanyi\t\n') });
  check(await waitFor(page, () => document.querySelectorAll('#gl-terms tr').length === 4), 'imported: four terms');
  check(/terms\.tsv: 3 new terms/.test(await page.textContent('#gl-status')), `and said (${await page.textContent('#gl-status')})`);
  const sorted = (l) => JSON.stringify(l.map((r) => r.join('\t')).sort());
  check(sorted(await rows(page)) === sorted([['饺子', 'dumplings'], ['公园', 'park'], ['风筝', 'kite'], ['Fanyi', 'kept as it is']]),
    `the rows, a keep-as-is term said so (${JSON.stringify(await rows(page))})`);
  await page.setInputFiles('#gl-import', { name: 'bad.tsv', mimeType: 'text/tab-separated-values', buffer: Buffer.from('茶\ttea\n茶\tT\n') });
  check(await waitFor(page, () => /line 2: duplicate source term/.test(document.querySelector('#gl-status').textContent)) &&
    await page.$eval('#gl-status', (s) => s.classList.contains('error')), `a bad file: its line named (${await page.textContent('#gl-status')})`);
  check(Object.keys(await entriesOf(server.base, id)).length === 4, 'and nothing of it stored');
  // Remove one: the server's entries follow.
  await page.click('#gl-terms button[aria-label="Remove “公园”"]');
  check(await waitFor(page, () => document.querySelectorAll('#gl-terms tr').length === 3), 'a term removed');
  check(JSON.stringify(Object.keys(await entriesOf(server.base, id)).sort()) === JSON.stringify(['Fanyi', '饺子', '风筝'].sort()), 'and removed on the server');
  // Export: the server's TSV.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#gl-export')]);
  const tsv = fs.readFileSync(await download.path(), 'utf8');
  const want = (await api(server.base, 'GET', `/glossaries/${id}/entries?source=zh&target=en&format=tsv`)).body;
  check(tsv === want && download.suggestedFilename().endsWith('.zh-en.tsv'), `export: the server's TSV as ${download.suggestedFilename()}`);
  let found = await axe(page);
  check(found.length === 0, `axe, a glossary with terms: ${found.join('; ') || 'clean'}`);
  await page.screenshot({ path: path.join(ART, 'glossary.png'), fullPage: true });
  // A glossary made through the API is offered too; the pick is kept across a reload.
  const other = (await api(server.base, 'POST', '/glossaries', { name: 'From the API', source: 'zh', target: 'en', entries: { 饭馆: 'restaurant' } })).body;
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('#gl-pick option').length === 3, null, { timeout: 10000 }).catch(() => {});
  check(await page.inputValue('#gl-pick') === id && await page.$$eval('#gl-pick option', (l) => l.map((o) => o.textContent).includes('From the API')),
    'after a reload: the pick kept, the API\'s glossary offered');
  await page.selectOption('#gl-pick', other.id);
  const withOther = (await translateApi(server.base, { text: ZH, glossary_id: other.id })).translation;
  check(await waitForText(page, '#target', withOther) && sent[sent.length - 1].glossary_id === other.id, 'another picked: used at once');
  // Per direction: English → Chinese has none of them.
  await page.selectOption('#source-lang', 'en');
  await page.selectOption('#target-lang', 'zh');
  check(await waitFor(page, () => document.querySelector('#gl-dir').textContent === 'Glossary for English → Chinese' &&
    document.querySelectorAll('#gl-pick option').length === 1), 'English → Chinese: a direction of its own, no glossary');
  await page.selectOption('#source-lang', 'zh');
  await page.selectOption('#target-lang', 'en');
  check(await waitFor(page, () => document.querySelector('#gl-pick').value !== ''), 'back to Chinese → English: its pick');
  // None: no glossary sent.
  await page.selectOption('#gl-pick', '');
  await waitForText(page, '#target', (await translateApi(server.base, { text: ZH })).translation);
  check(!('glossary_id' in sent[sent.length - 1]), 'none picked: no glossary sent');
  // Delete: gone from the server (after the confirmation).
  await page.selectOption('#gl-pick', other.id);
  page.once('dialog', (d) => d.accept());
  await page.click('#gl-delete');
  check(await waitFor(page, () => document.querySelectorAll('#gl-pick option').length === 2), 'deleted: no longer offered');
  list = await listed(server.base, 'zh', 'en');
  check(list.length === 1 && list[0].id === id, 'and no longer on the server');
  check(consoleErrors.length === 0, `glossary: no page errors (${consoleErrors.join('; ')})`);
  await context.close();
  // Dark, phone, Chinese interface: axe on the panel with its terms.
  for (const [opts, scheme, locale] of [[DESK, 'dark', 'en-US'], [PHONE, 'light', 'zh-CN']]) {
    // The pick is in the context's storage before the page's first script runs (one set
    // by the page, then a reload, can race the page's own first load).
    const storageState = { cookies: [], origins: [{ origin: server.base, localStorage: [{ name: 'fanyi.glossaries', value: JSON.stringify({ 'zh-en': id }) }] }] };
    const c = await newPage(browser, server.base, { ...opts, colorScheme: scheme, locale, bypassCSP: true, storageState });
    await c.page.goto(`${server.base}/#sl=zh&tl=en`);
    await c.page.reload();
    const shown = await waitFor(c.page, () => document.querySelectorAll('#gl-terms tr').length === 3, null, 20000);
    check(shown, `${scheme} ${locale}: the picked glossary's terms after a reload`);
    if (locale === 'zh-CN') {
      check(await c.page.textContent('#gl-title') === '术语表' && /3 条术语/.test(await c.page.textContent('#gl-count')),
        `the panel in Chinese (${await c.page.textContent('#gl-title')}, ${await c.page.textContent('#gl-count')})`);
    }
    found = await axe(c.page, scheme === 'dark');
    check(found.length === 0, `axe, glossary, ${scheme} ${locale}: ${found.join('; ') || 'clean'}`);
    await c.context.close();
  }
}

run(async (browser) => {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-ui-data-'));
  const root = modelsRoot({ 'zh-en': 'tiny-int8-sl', 'en-zh': 'firefox-en-zh' });
  let server = null;
  try {
    server = await startServer(['--data-dir', data], undefined, ['--models', root]);
    for (const [name, part] of [['confidence', () => confidence(browser, server)], ['glossary', () => glossary(browser, server)]]) {
      const t0 = Date.now();
      await part();
      console.log(`${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    if (server) await stopServer(server);
    fs.rmSync(data, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  }
});
