// test_deepl_node_documents.js - DeepL's document API through deepl-node
// (pinned in package-lock.json), unchanged, against `fanyi serve`:
// translateDocument (upload, status, download; into a write stream:
// deepl_files.js says why) for every format Fanyi
// reads, PDF included, each file equal to what the native jobs API makes of
// it; the three calls one by one (uploadDocument, getDocumentStatus while it
// translates, downloadDocument before it is done and after; then the
// document is gone); translateDocument with { glossary } (a glossary made
// with createGlossary, enforced on every paragraph); and DeepL's refusals as deepl-node's errors: a wrong
// key, output_format another format, a glossary id the server does not
// have, formality 'more', a file of no known format, a document already in
// the target language (status error), a wrong API key.
'use strict';

const deepl = require('deepl-node');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { Checks, makeModels, serve } = require('./serve_clients1');
const { translateDocumentTo } = require('./deepl_files');

const T = new Checks();
const KEY = 'fanyi-test-key';
const FORMATS = ['txt', 'md', 'html', 'srt', 'vtt', 'docx', 'odt', 'pptx', 'epub', 'pdf'];

const client = (url, key = KEY) => new deepl.Translator(key, { serverUrl: url, maxRetries: 0,
  minTimeout: 600000 });
const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });

// The file the native jobs API makes of the same upload.
async function nativeJob(url, file, headers = {}) {
  const q = `filename=${path.basename(file)}&target=en`;
  let r = await fetch(`${url}/documents?${q}`, { method: 'POST', body: fs.readFileSync(file),
    headers });
  const job = await r.json();
  if (r.status !== 202) throw new Error(`native job ${r.status}: ${JSON.stringify(job)}`);
  for (let state = job.state; state !== 'done';) {
    await sleep(50);
    r = await fetch(`${url}/documents/${job.id}`, { headers });
    state = (await r.json()).state;
    if (state === 'error' || state === 'canceled') throw new Error(`native job ${state}`);
  }
  r = await fetch(`${url}/documents/${job.id}/result`, { headers });
  return Buffer.from(await r.arrayBuffer());
}

async function everyFormat(s, dir) {
  const t = client(s.url);
  await Promise.all(FORMATS.map(async (f) => {
    const src = path.join(dir, `doc.${f}`), out = path.join(dir, `out.${f}`);
    let status;
    try {
      status = await translateDocumentTo(t, src, out, null, 'en-US');
    } catch (e) {
      T.ok(false, `translateDocument ${f}: ${e.message} ${e.error && e.error.message}`);
      return;
    }
    T.ok(status.done() && status.billedCharacters > 0,
      `translateDocument ${f}: done, ${status.billedCharacters} characters billed`);
    const got = fs.readFileSync(out);
    T.ok(got.equals(await nativeJob(s.url, src)) && !got.equals(fs.readFileSync(src)),
      `translateDocument ${f}: translated, the native job's file byte for byte`);
  }));
}

async function threeCalls(s, dir) {
  const t = client(s.url);
  // Big enough to be caught while it translates: 600 distinct sentences.
  const words = ['你好', '谢谢', '朋友', '学校', '火车站', '饺子', '天气', '公园'];
  const lines = [];
  for (const a of words) for (const b of words) for (const c of words) lines.push(`${a}${b}，${c}。`);
  const big = path.join(dir, 'big.txt');
  fs.writeFileSync(big, lines.join('\n\n'));
  const h = await t.uploadDocument(big, 'zh', 'en-US');
  T.ok(/^[0-9A-F]{32}$/.test(h.documentId) && /^[0-9A-F]{64}$/.test(h.documentKey),
    `uploadDocument: an id of 32 and a key of 64 hex digits (${h.documentId})`);
  const early = await T.throws(() => t.downloadDocument(h, path.join(dir, 'early.txt')),
    'downloadDocument before done');
  T.ok(early instanceof deepl.DocumentNotReadyError, `not ready: DocumentNotReadyError (${early})`);
  let st = await t.getDocumentStatus(h), translating = 0;
  while (st.ok() && !st.done()) {
    if (st.status === 'translating') {
      translating++;
      T.ok(Number.isInteger(st.secondsRemaining) && st.secondsRemaining >= 0,
        `translating: secondsRemaining ${st.secondsRemaining}`);
    }
    await sleep(20);
    st = await t.getDocumentStatus(h);
  }
  T.ok(st.done() && st.billedCharacters === lines.join('').length,
    `getDocumentStatus: done, billed ${st.billedCharacters}`);
  T.ok(translating > 0, `seen translating ${translating} times`);
  const out = path.join(dir, 'big.en.txt');
  await t.downloadDocument(h, out);
  T.ok(fs.readFileSync(out).equals(await nativeJob(s.url, big)), 'downloadDocument: the file');
  const gone = await T.throws(() => t.getDocumentStatus(h), 'status after the download');
  T.ok(gone instanceof deepl.DeepLError && /Not found/.test(gone.message),
    `downloaded once, then gone: ${gone && gone.message}`);
  const again = await T.throws(() => t.downloadDocument(h, path.join(dir, 'again.txt')),
    'second download');
  T.ok(again && /Not found/.test(again.message), `no second download: ${again && again.message}`);
}

async function refusals(s, dir) {
  const t = client(s.url);
  const txt = path.join(dir, 'doc.txt');
  const h = await t.uploadDocument(txt, null, 'en-US');
  const wrong = { documentId: h.documentId, documentKey: 'AB'.repeat(32) };
  const e1 = await T.throws(() => t.getDocumentStatus(wrong), 'a wrong document key');
  T.ok(e1 && /Not found/.test(e1.message), `a wrong key: Not found (${e1 && e1.message})`);
  const cases = [
    ['output_format docx of a pdf', () => t.uploadDocument(path.join(dir, 'doc.pdf'), null, 'en-US',
      { extraRequestParameters: { output_format: 'docx' } }), /Bad request.*output_format.*pdf to docx/],
    ['a glossary it does not have', () => t.uploadDocument(txt, 'zh', 'en-US', { glossary: 'abc' }),
      /Not found.*Glossary not found/],
    ["formality 'more'", () => t.uploadDocument(txt, 'zh', 'en-US', { formality: 'more' }),
      /Bad request.*formality/],
    ['a file of no known format', () => t.uploadDocument(Buffer.from('MZ\x90\x00'), null, 'en-US',
      { filename: 'prog.exe' }), /Bad request.*\.docx/],
  ];
  for (const [what, fn, re] of cases) {
    const e = await T.throws(fn, what);
    T.ok(e instanceof deepl.DeepLError && re.test(e.message), `${what}: ${e && e.message}`);
  }
  const en = path.join(dir, 'english.txt');
  fs.writeFileSync(en, 'The weather is nice today. We are going to the park.\n');
  const same = await T.throws(() => t.translateDocument(en, path.join(dir, 'english.en.txt'), null,
    'en-US'), 'already in the target language');
  T.ok(same instanceof deepl.DocumentTranslationError &&
    /Source and target language are equal/.test(same.message) && same.documentHandle,
  `already English: DocumentTranslationError, as DeepL says (${same && same.message})`);
}

async function withGlossary(s, dir) {
  const t = client(s.url);
  const src = path.join(dir, 'glossary.txt');
  fs.writeFileSync(src, '今天天气很好。我们去公园吧。\n\n天气预报说明天下雨。\n');
  const g = await t.createGlossary('Doc', 'zh', 'en',
    new deepl.GlossaryEntries({ entries: { 天气: 'WEATHER-T' } }));
  const out = path.join(dir, 'glossary.en.txt'), plain = path.join(dir, 'plain.en.txt');
  const st = await translateDocumentTo(t, src, out, 'zh', 'en-US', { glossary: g });
  const text = fs.readFileSync(out, 'utf8');
  T.ok(st.done() && text.split('WEATHER-T').length - 1 === 2 && !text.includes('天气'),
    `translateDocument with { glossary }: the term in each paragraph (${text})`);
  await translateDocumentTo(t, src, plain, 'zh', 'en-US');
  const without = fs.readFileSync(plain, 'utf8');
  T.ok(!without.includes('WEATHER-T') && without !== text, `without it: no term (${without})`);
  await t.deleteGlossary(g);
}

async function auth(models, dir) {
  const s = await serve(['--threads', '1', '--api-token', KEY], { models });
  const st = await translateDocumentTo(client(s.url), path.join(dir, 'doc.md'),
    path.join(dir, 'auth.md'), 'zh', 'en-GB');
  T.ok(st.done(), 'with the key (DeepL-Auth-Key)');
  const e = await T.throws(() => client(s.url, 'wrong-key').uploadDocument(
    path.join(dir, 'doc.md'), 'zh', 'en-US'), 'a wrong key');
  T.ok(e instanceof deepl.AuthorizationError, `a wrong key: AuthorizationError (${e})`);
  await s.stop(T);
}

(async () => {
  const models = makeModels();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-deepl-docs-'));
  execFileSync('/usr/bin/python3', [path.join(__dirname, 'make_documents.py'), dir]);
  const s = await serve(['--threads', '1'], { models });
  try {
    await everyFormat(s, dir);
    await threeCalls(s, dir);
    await withGlossary(s, dir);
    await refusals(s, dir);
  } finally {
    await s.stop(T);
  }
  await auth(models, dir);
  fs.rmSync(models, { recursive: true, force: true });
  fs.rmSync(dir, { recursive: true, force: true });
  T.finish();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
