// test_googleapis.js - Google's generated client @googleapis/translate (v2,
// pinned in package-lock.json), unchanged but for its rootUrl option, which
// points it at `fanyi serve` (plain http): translations.translate (POST
// JSON), translations.list (GET, parameters in the query string),
// detections.detect / detections.list, languages.list, the API key (auth:
// KEY is sent as ?key=), and errors as the client's GaxiosError.
'use strict';

const fs = require('node:fs');
const { translate } = require('@googleapis/translate');
const { Checks, makeModels, serve, native } = require('./serve_clients1');

const T = new Checks();
const KEY = 'googleapis-test-key';
const ZH = '今天天气很好。我们去公园吧。';
const ZH2 = '这家饭馆的饺子又便宜又好吃。';
const EN = 'The weather is nice today.';

const client = (s, key = KEY) => translate({ version: 'v2', auth: key, rootUrl: `${s.url}/` });
const auth = { headers: { Authorization: `Bearer ${KEY}` } };

async function translations(s) {
  const t = client(s);
  const zhEn = await native(s.url, ZH, 'en', auth);
  const zh2En = await native(s.url, ZH2, 'en', auth);
  let r = await t.translations.translate({ requestBody: { q: [ZH, ZH2], target: 'en',
    format: 'text' } });
  T.eq([r.status, r.data], [200, { data: { translations: [
    { translatedText: zhEn, detectedSourceLanguage: 'zh-CN' },
    { translatedText: zh2En, detectedSourceLanguage: 'zh-CN' }] } }],
  'translations.translate (POST JSON)');
  r = await t.translations.list({ q: [ZH, ZH2], target: 'en', format: 'text' });
  T.eq(r.data.data.translations.map((x) => x.translatedText), [zhEn, zh2En],
    'translations.list (GET, q repeated in the query string)');
  r = await t.translations.list({ q: [EN], target: 'zh-CN', source: 'en', model: 'base' });
  T.eq(r.data.data.translations, [{ translatedText: await native(s.url, EN, 'zh', auth),
    model: 'base' }], 'translations.list with source and model');
}

async function detections(s) {
  const t = client(s);
  let r = await t.detections.detect({ requestBody: { q: [ZH, EN] } });
  const langs = (d) => d.data.data.detections.map((x) => x[0].language);
  T.eq(langs(r), ['zh-CN', 'en'], 'detections.detect (POST)');
  T.ok(r.data.data.detections.every((x) => typeof x[0].confidence === 'number' &&
    typeof x[0].isReliable === 'boolean'), 'each detection has confidence and isReliable');
  r = await t.detections.list({ q: [EN, ZH] });
  T.eq(langs(r), ['en', 'zh-CN'], 'detections.list (GET)');
}

async function languages(s) {
  const t = client(s);
  let r = await t.languages.list({});
  T.eq(r.data.data.languages, [{ language: 'en' }, { language: 'zh' }, { language: 'zh-CN' }],
    'languages.list: codes only without a target (as Google), zh and zh-CN');
  r = await t.languages.list({ target: 'en', model: 'nmt' });
  T.eq(r.data.data.languages, [{ language: 'en', name: 'English' },
    { language: 'zh', name: 'Chinese (Simplified)' }, { language: 'zh-CN', name: 'Chinese (Simplified)' }],
    'languages.list with target en');
}

async function errors(s) {
  let e = await T.throws(() => client(s).translations.translate({ requestBody: { target: 'en' } }),
    'no q');
  const body = e && e.response && e.response.data;
  T.ok(e && e.response.status === 400 && body.error.status === 'INVALID_ARGUMENT' &&
    /'q'/.test(body.error.message) && body.error.errors[0].reason === 'invalid',
  `no q: 400 INVALID_ARGUMENT naming q: ${JSON.stringify(body)}`);
  const open = await client(s, 'nope').languages.list({ target: 'en' });
  T.eq(open.status, 200, 'languages.list is open whatever the key (as every language list)');
  e = await T.throws(() => client(s, 'nope').translations.list({ q: [ZH], target: 'en' }),
    'wrong key');
  T.ok(e && e.response.status === 403 && e.response.data.error.status === 'PERMISSION_DENIED',
    `wrong key: 403 PERMISSION_DENIED ${e && e.message}`);
}

(async () => {
  const models = makeModels();
  const s = await serve(['--threads', '1', '--api-token', KEY], { models });
  try {
    await translations(s);
    await detections(s);
    await languages(s);
    await errors(s);
  } finally {
    await s.stop(T);
  }
  fs.rmSync(models, { recursive: true, force: true });
  T.finish();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
