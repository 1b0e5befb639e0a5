// test_deeplx.js - DeepLX (github.com/OwO-Network/DeepLX) has no npm client:
// its plug-ins post its request shape themselves. These are the exact
// requests of DeepLX's own routes (service/service.go) and of the plug-ins
// that call one (pot-desktop's deepl service in "deeplx" mode, Bob's
// bob-plugin-deeplx, Kiss Translator's genDeeplX), sent with Node's fetch as
// those plug-ins send them, against `fanyi serve`; every field DeepLX
// returns is checked. POST /translate stays native and LibreTranslate for
// their own bodies.
'use strict';

const { Checks, serve, native } = require('./serve_clients1');

const T = new Checks();
const ZH = '今天天气很好。我们去公园吧。';
const EN = 'The weather is nice today.';
const TOKEN = 'deeplx-token';

async function post(url, body, headers = { 'Content-Type': 'application/json' }) {
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    json = text;
  }
  return { status: r.status, body: json };
}

// DeepLX's answer: exactly its seven fields, with their types.
function deeplxAnswer(b, data, source, target, method, what) {
  T.eq(Object.keys(b).sort(),
    ['alternatives', 'code', 'data', 'id', 'method', 'source_lang', 'target_lang'],
    `${what}: DeepLX's fields`);
  T.ok(Number.isInteger(b.id) && b.id > 0, `${what}: id is a positive integer (${b.id})`);
  T.ok(Array.isArray(b.alternatives) && b.alternatives.every((a) => typeof a === 'string'),
    `${what}: alternatives is a list of strings`);
  T.eq([b.code, b.data, b.source_lang, b.target_lang, b.method], [200, data, source, target, method],
    `${what}: code, data, source_lang, target_lang, method`);
}

async function shapes(s) {
  const zhEn = await native(s.url, ZH, 'en');
  const enZh = await native(s.url, EN, 'zh');
  // DeepLX's README request.
  let r = await post(`${s.url}/translate`, { text: ZH, source_lang: 'ZH', target_lang: 'EN' });
  T.eq(r.status, 200, 'POST /translate with source_lang/target_lang: 200');
  deeplxAnswer(r.body, zhEn, 'ZH', 'EN', 'Free', 'DeepLX /translate');
  r = await post(`${s.url}/translate`, { text: ZH, source_lang: 'auto', target_lang: 'EN-US' });
  deeplxAnswer(r.body, zhEn, 'ZH', 'EN-US', 'Free', 'auto source, EN-US echoed');
  r = await post(`${s.url}/translate`, { text: EN, target_lang: 'zh' });
  deeplxAnswer(r.body, enZh, 'EN', 'zh', 'Free', 'no source_lang (DeepLX detects), zh echoed');
  // /v1/translate: DeepLX's route for Pro sessions.
  r = await post(`${s.url}/v1/translate`, { text: ZH, source_lang: 'ZH', target_lang: 'EN' });
  deeplxAnswer(r.body, zhEn, 'ZH', 'EN', 'Pro', 'DeepLX /v1/translate');
  r = await post(`${s.url}/deeplx`, { text: ZH, source_lang: 'ZH', target_lang: 'EN' });
  deeplxAnswer(r.body, zhEn, 'ZH', 'EN', 'Free', 'POST /deeplx');
  // /v2/translate: DeepLX's official-format route (JSON with a list, or a form).
  r = await post(`${s.url}/v2/translate`, { text: [ZH], target_lang: 'EN' });
  T.eq([r.status, r.body], [200, { translations: [{ detected_source_language: 'ZH', text: zhEn }] }],
    'DeepLX /v2/translate, JSON');
  const f = await fetch(`${s.url}/v2/translate`, { method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ text: ZH, target_lang: 'EN' }).toString() });
  T.eq([f.status, await f.json()],
    [200, { translations: [{ detected_source_language: 'ZH', text: zhEn }] }],
    'DeepLX /v2/translate, form');
  // tag_handling.
  const html = '<p>今天天气很好。<b>我们</b>去公园吧。</p>';
  r = await post(`${s.url}/translate`, { text: html, source_lang: 'ZH', target_lang: 'EN',
    tag_handling: 'html' });
  deeplxAnswer(r.body, await native(s.url, html, 'en', { body: { html: true } }), 'ZH', 'EN', 'Free',
    'tag_handling html keeps the markup');
  r = await post(`${s.url}/translate`, { text: ZH, source_lang: 'ZH', target_lang: 'EN',
    tag_handling: 'markdown' });
  T.eq([r.status, r.body], [400, { code: 400,
    message: "Invalid tag_handling value. Allowed values are 'html' and 'xml'." }],
  'tag_handling other than html/xml: DeepLX\'s 400');
}

// What the plug-ins send and read.
async function plugins(s) {
  const zhEn = await native(s.url, ZH, 'en');
  // pot-desktop: body source_lang/target_lang/text in its codes (auto,
  // ZH-HANS), reads result.data when res.ok.
  let r = await post(`${s.url}/translate`, { source_lang: 'auto', target_lang: 'EN', text: ZH });
  T.eq([r.status, r.body.data], [200, zhEn], 'pot-desktop deeplx: data');
  r = await post(`${s.url}/translate`, { source_lang: 'EN', target_lang: 'ZH-HANS', text: EN });
  T.eq([r.status, r.body.data, r.body.target_lang], [200, await native(s.url, EN, 'zh'), 'ZH-HANS'],
    'pot-desktop deeplx: ZH-HANS');
  // Bob: paragraphs by data.split('\n'), alternatives joined.
  const paras = '今天天气很好。\n我们去公园吧。';
  r = await post(`${s.url}/translate`, { text: paras, source_lang: 'ZH-HANS', target_lang: 'EN' });
  T.eq(r.body.data.split('\n'), (await native(s.url, paras, 'en')).split('\n'),
    'Bob: one paragraph per line, as the native translation');
  T.eq(r.body.alternatives.join('\n'), '', 'Bob: alternatives (none without n-best)');
  // Kiss Translator: texts joined by a space, Bearer key, [data, source_lang].
  r = await post(`${s.url}/translate`, { text: ['今天天气很好。', '我们去公园吧。'].join(' '),
    target_lang: 'en', source_lang: 'zh' });
  T.eq([r.body.data, r.body.source_lang],
    [await native(s.url, '今天天气很好。 我们去公园吧。', 'en'), 'ZH'], 'Kiss deeplx: [data, source_lang]');
}

async function errors(s) {
  let r = await post(`${s.url}/translate`, { text: ZH, source_lang: 'ZH' });
  T.ok(r.status === 400 && r.body.code === 400 && /target_lang/.test(r.body.message),
    `no target_lang: 400 {code, message} naming it ${JSON.stringify(r.body)}`);
  T.eq(Object.keys(r.body).sort(), ['code', 'message'], 'DeepLX error shape');
  r = await post(`${s.url}/translate`, { text: [ZH], target_lang: 'EN' });
  T.ok(r.status === 400 && /'text'/.test(r.body.message), `text must be a string: ${r.body.message}`);
  r = await post(`${s.url}/translate`, { text: 'x', source_lang: 'FR', target_lang: 'EN' });
  T.ok(r.status === 400 && r.body.code === 400 && /zh->en/.test(r.body.message),
    `unsupported pair: 400 listing the pairs: ${r.body.message}`);
  const bad = await fetch(`${s.url}/translate`, { method: 'POST', body: '{"text":1,"target_lang":"EN"}',
    headers: { 'Content-Type': 'application/json' } });
  T.eq([bad.status, Object.keys(await bad.json()).sort()], [400, ['code', 'message']],
    'wrong type: DeepLX shape');
}

// POST /translate is told apart by its fields: the other dialects stay theirs.
async function disambiguation(s) {
  let r = await post(`${s.url}/translate`, { text: ZH, target: 'en' });
  T.eq([r.status, Object.keys(r.body).sort()], [200, ['alternatives', 'source', 'target', 'translation']],
    'native body on /translate: native answer');
  r = await post(`${s.url}/translate`, { q: ZH, source: 'zh', target: 'en' });
  T.eq([r.status, Object.keys(r.body)], [200, ['translatedText']],
    'LibreTranslate body on /translate: LibreTranslate answer');
  r = await post(`${s.url}/translate`, { text: ZH });
  T.eq(r.status === 200 && r.body.translation, await native(s.url, ZH, 'en'),
    'native without a target stays native');
  r = await post(`${s.url}/translate`, { text: ZH, target_lang: 'EN' });
  T.ok('data' in r.body && !('translation' in r.body), 'target_lang alone makes it DeepLX');
}

async function auth(models) {
  const s = await serve(['--threads', '1', '--api-token', TOKEN], { models });
  const body = { text: ZH, source_lang: 'ZH', target_lang: 'EN' };
  let r = await post(`${s.url}/translate`, body);
  T.eq([r.status, Object.keys(r.body).sort(), r.body.code], [401, ['code', 'message'], 401],
    'no token: 401 in DeepLX\'s shape');
  r = await post(`${s.url}/translate?token=nope`, body);
  T.eq([r.status, r.body.code], [403, 403], 'wrong token: 403 in DeepLX\'s shape');
  for (const [how, url, headers] of [
    ['?token= (DeepLX)', `${s.url}/translate?token=${TOKEN}`, {}],
    ['Bearer (DeepLX, Kiss)', `${s.url}/translate`, { Authorization: `Bearer ${TOKEN}` }],
    ['DeepL-Auth-Key (DeepLX)', `${s.url}/v1/translate`, { Authorization: `DeepL-Auth-Key ${TOKEN}` }],
  ]) {
    r = await post(url, body, { 'Content-Type': 'application/json', ...headers });
    T.eq([r.status, r.body.code], [200, 200], `token via ${how}`);
  }
  await s.stop(T);
}

(async () => {
  const models = require('./serve_clients1').makeModels();
  const s = await serve(['--threads', '1'], { models });
  try {
    await shapes(s);
    await plugins(s);
    await errors(s);
    await disambiguation(s);
  } finally {
    await s.stop(T);
  }
  await auth(models);
  require('node:fs').rmSync(models, { recursive: true, force: true });
  T.finish();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
