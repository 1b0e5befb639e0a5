// test_kiss_gtx.js - the Google web endpoint translate_a/single as Kiss
// Translator's "Google" engine calls it (src/apis/trans.js genGoogle: GET
// ?client=gtx&dt=t&dj=1&ie=UTF-8&sl=&tl=&q=, its texts joined by a space,
// "Authorization: Bearer KEY" when a key is set; the answer read as
// sentences[].trans joined by a space, and src), its language detection
// (apiGoogleLangdetect: sl=auto, reads src), its documented custom-API hook
// (sentences[0].trans), and the positional-array answer without dj=1 that
// other gtx clients read. Kiss has no npm package: these are its requests,
// sent with Node's fetch.
'use strict';

const fs = require('node:fs');
const { Checks, makeModels, serve, native } = require('./serve_clients1');

const T = new Checks();
const KEY = 'kiss-test-key';
const ZH = '今天天气很好。我们去公园吧。';
const EN = 'The weather is nice today.';

// Kiss builds the query with query-string's stringify: keys sorted, values
// percent-encoded.
const stringify = (p) => Object.keys(p).sort()
  .map((k) => `${encodeURIComponent(k)}=${encodeURIComponent(p[k])}`).join('&');

async function gtx(s, params, key = KEY) {
  const headers = { 'Content-type': 'application/json' };
  if (key) headers.Authorization = `Bearer ${key}`;
  const r = await fetch(`${s.url}/translate_a/single?${stringify(params)}`, { headers });
  return { status: r.status, body: await r.json() };
}

// genGoogle's request and the way Kiss reads the answer.
async function kiss(s, texts, from, to) {
  const r = await gtx(s, { client: 'gtx', dt: 't', dj: 1, ie: 'UTF-8', sl: from, tl: to,
    q: texts.join(' ') });
  T.eq(r.status, 200, `Kiss google ${from}->${to}: 200`);
  return [r.body.sentences.map((item) => item.trans).join(' '), r.body.src];
}

async function checks(s) {
  const auth = { headers: { Authorization: `Bearer ${KEY}` } };
  const zhEn = await native(s.url, ZH, 'en', auth);
  T.eq(await kiss(s, [ZH], 'auto', 'en'), [zhEn, 'zh-CN'], 'Kiss google: [text, src] (auto)');
  T.eq(await kiss(s, [EN], 'en', 'zh-CN'), [await native(s.url, EN, 'zh', auth), 'en'],
    'Kiss google: en -> zh-CN');
  const two = ['今天天气很好。', '我们去公园吧。'];
  T.eq(await kiss(s, two, 'zh-CN', 'en'), [await native(s.url, two.join(' '), 'en', auth), 'zh-CN'],
    'Kiss google: texts joined by a space');
  // apiGoogleLangdetect: the source language from src.
  let r = await gtx(s, { client: 'gtx', dt: 't', dj: 1, ie: 'UTF-8', sl: 'auto', tl: 'zh-CN',
    q: EN });
  T.eq(r.body.src, 'en', 'Kiss language detection reads src');
  T.ok(r.body.confidence > 0 && r.body.confidence <= 1 &&
    r.body.ld_result.srclangs[0] === 'en', `confidence and ld_result ${JSON.stringify(r.body)}`);
  // The custom-API example hook: sentences[0].trans holds the whole text.
  r = await gtx(s, { client: 'gtx', dj: 1, dt: 't', ie: 'UTF-8', q: ZH, sl: 'zh', tl: 'en' });
  T.eq([r.body.sentences[0].trans || '', r.body.src], [zhEn, 'zh-CN'],
    'custom-API hook: sentences[0].trans, src (sl=zh is zh-CN)');
  T.eq(r.body.sentences[0].orig, ZH, 'orig is the source text');
  // Without dj=1: Google's positional arrays.
  r = await gtx(s, { client: 'gtx', sl: 'auto', tl: 'en', dt: 't', q: ZH });
  T.ok(Array.isArray(r.body) && r.body[0].map((x) => x[0]).join('') === zhEn &&
    r.body[0][0][1] === ZH && r.body[2] === 'zh-CN',
  `array answer: [[[trans, orig, ...]], null, src, ...] ${JSON.stringify(r.body).slice(0, 200)}`);
  // dt repeated (t, bd, ex...) as other gtx clients send it.
  const multi = await fetch(`${s.url}/translate_a/single?client=gtx&sl=auto&tl=en&dt=t&dt=bd&dt=ex&` +
    `dj=1&q=${encodeURIComponent(ZH)}`, auth);
  T.eq((await multi.json()).sentences[0].trans, zhEn, 'dt repeated');
  // Errors in Google's shape; the key as Kiss sends it.
  r = await gtx(s, { client: 'gtx', sl: 'auto', dj: 1, q: ZH });
  T.ok(r.status === 400 && r.body.error.status === 'INVALID_ARGUMENT' && /'tl'/.test(r.body.error.message),
    `no tl: 400 naming it ${JSON.stringify(r.body)}`);
  r = await gtx(s, { client: 'gtx', sl: 'auto', tl: 'en', dj: 1, q: ZH }, null);
  T.eq([r.status, r.body.error.status], [401, 'UNAUTHENTICATED'], 'no key: 401');
  r = await gtx(s, { client: 'gtx', sl: 'auto', tl: 'en', dj: 1, q: ZH }, 'wrong');
  T.eq([r.status, r.body.error.status], [403, 'PERMISSION_DENIED'], 'wrong key: 403');
  const post = await fetch(`${s.url}/translate_a/single?client=gtx&sl=zh&tl=en&dt=t&dj=1`, {
    method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...auth.headers },
    body: `q=${encodeURIComponent(ZH)}` });
  T.eq((await post.json()).sentences[0].trans, zhEn, 'POST with q in a form body (long texts)');
}

(async () => {
  const models = makeModels();
  const s = await serve(['--threads', '1', '--api-token', KEY], { models });
  try {
    await checks(s);
  } finally {
    await s.stop(T);
  }
  fs.rmSync(models, { recursive: true, force: true });
  T.finish();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
