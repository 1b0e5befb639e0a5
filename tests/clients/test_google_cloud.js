// test_google_cloud.js - Google's official client @google-cloud/translate
// (its v2 Translate class, pinned in package-lock.json), unchanged, against
// `fanyi serve --tls-cert --tls-key`: the class only speaks https:// to a
// custom apiEndpoint, so the test makes a CA and a certificate for
// 127.0.0.1 with openssl and gives the CA to Node (NODE_EXTRA_CA_CERTS,
// which Node reads at start: the script runs itself again with it set).
// translate, detect, getLanguages, the API key as ?key=, and errors as the
// client's ApiError.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { Checks, makeCerts, makeModels, serve, native } = require('./serve_clients1');

if (!process.env.FANYI_TEST_TLS_DIR) {
  const dir = makeCerts();
  const r = spawnSync(process.execPath, [__filename], { stdio: 'inherit',
    env: { ...process.env, FANYI_TEST_TLS_DIR: dir, NODE_EXTRA_CA_CERTS: path.join(dir, 'ca.pem') } });
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(r.status === null ? 1 : r.status);
}

const { Translate } = require('@google-cloud/translate').v2;

const T = new Checks();
const KEY = 'google-test-key';
const TLS = process.env.FANYI_TEST_TLS_DIR;
const ZH = '今天天气很好。我们去公园吧。';
const ZH2 = '这家饭馆的饺子又便宜又好吃。';
const EN = 'The weather is nice today.';

// autoRetry off: an error must show, not be retried away.
const client = (s, key = KEY) => new Translate({ key, apiEndpoint: `127.0.0.1:${s.port}`,
  autoRetry: false });
const auth = { headers: { Authorization: `Bearer ${KEY}` } };

async function translate(s) {
  const t = client(s);
  const zhEn = await native(s.url, ZH, 'en', auth);
  let [out, resp] = await t.translate(ZH, 'en');
  T.eq(out, zhEn, 'translate(text, "en") over https');
  T.eq(resp.data.translations, [{ translatedText: zhEn, detectedSourceLanguage: 'zh-CN' }],
    'the raw answer: translatedText, detectedSourceLanguage in Google\'s code');
  [out] = await t.translate([ZH, ZH2, EN], 'en');
  T.eq(out, [zhEn, await native(s.url, ZH2, 'en', auth), EN], 'translate(list): one per text');
  [out, resp] = await t.translate(EN, { from: 'en', to: 'zh-CN', model: 'nmt' });
  T.eq(out, await native(s.url, EN, 'zh', auth), 'translate {from, to: zh-CN, model}');
  T.eq(resp.data.translations[0].model, 'nmt', 'the model asked for is named in the answer');
  T.ok(!('detectedSourceLanguage' in resp.data.translations[0]),
    'no detectedSourceLanguage when the source was given (as Google)');
  const html = '<p>今天天气很好。<b>我们</b>去公园吧。</p>';
  [out] = await t.translate(html, 'en'); // the client sends format=html: is-html says so
  T.eq(out, await native(s.url, html, 'en', { ...auth, body: { html: true } }), 'HTML kept');
  [out] = await t.translate('<b>今天天气很好。</b>', { to: 'en', format: 'text' });
  T.eq(out, await native(s.url, '<b>今天天气很好。</b>', 'en', auth), "format 'text': tags are text");
}

async function detect(s) {
  const t = client(s);
  let [d] = await t.detect(ZH);
  T.ok(d.language === 'zh-CN' && d.input === ZH && d.confidence > 0.5 && d.confidence <= 1,
    `detect(text): ${JSON.stringify(d)}`);
  [d] = await t.detect([ZH, EN, '12345']);
  T.eq(d.map((x) => [x.language, x.input]), [['zh-CN', ZH], ['en', EN], ['und', '12345']],
    'detect(list): one result per text, "und" without letters');
}

async function languages(s) {
  const t = client(s);
  // Chinese is listed as "zh" and "zh-CN", as Google's own list has both
  // (a client looking for either finds it).
  let [l] = await t.getLanguages();
  T.eq(l, [{ code: 'en', name: 'English' }, { code: 'zh', name: 'Chinese (Simplified)' },
    { code: 'zh-CN', name: 'Chinese (Simplified)' }], 'getLanguages(): names in English');
  [l] = await t.getLanguages('zh');
  T.eq(l, [{ code: 'en', name: '英语' }, { code: 'zh', name: '中文（简体）' },
    { code: 'zh-CN', name: '中文（简体）' }], 'getLanguages("zh"): names in Chinese');
}

// With a Traditional Chinese model, "zh-TW" too.
async function traditional() {
  const models = makeModels();
  fs.symlinkSync(path.join(process.env.FANYI_BUILD_DIR, 'models', 'tiny-int8-sl'),
    path.join(models, 'zh-Hant-en'));
  const s = await serve(['--threads', '1', '--tls-cert', path.join(TLS, 'cert.pem'), '--tls-key',
    path.join(TLS, 'key.pem')], { models });
  try {
    const [l] = await client(s).getLanguages();
    T.eq(l.map((x) => x.code), ['en', 'zh', 'zh-CN', 'zh-TW'],
      'getLanguages() with zh-Hant-en: zh, zh-CN and zh-TW');
    T.eq(l[3].name, 'Chinese (Traditional)', 'zh-TW named');
  } finally {
    await s.stop(T);
  }
  fs.rmSync(models, { recursive: true, force: true });
}

async function errors(s) {
  let e = await T.throws(() => client(s).translate(ZH, 'xx-!'), 'bad target');
  T.ok(e && e.code === 400 && /'target'/.test(e.message) && e.errors[0].reason === 'invalid',
    `bad target: ApiError 400, reason invalid: ${e && e.code} ${e && e.message}`);
  e = await T.throws(() => client(s).translate(ZH, 'ja'), 'unsupported pair');
  T.ok(e && e.code === 400 && /zh->en/.test(e.message), `no model for ja: ${e && e.message}`);
  e = await T.throws(() => client(s).translate(ZH, { to: 'en', model: 'pbmt' }), 'model');
  T.ok(e && e.code === 400 && /model/.test(e.message), `unknown model: ${e && e.message}`);
  e = await T.throws(() => client(s, 'wrong').translate(ZH, 'en'), 'wrong key');
  T.ok(e && e.code === 403 && e.errors[0].reason === 'forbidden',
    `wrong key: ApiError 403 forbidden: ${e && e.code} ${e && e.message}`);
  const r = await fetch(`${s.url}/language/translate/v2?q=a&target=en`);
  const b = await r.json();
  T.eq([r.status, b.error.code, b.error.status, Object.keys(b.error).sort()],
    [401, 401, 'UNAUTHENTICATED', ['code', 'errors', 'message', 'status']],
    'no key: Google\'s error shape');
}

(async () => {
  const models = makeModels();
  const s = await serve(['--threads', '1', '--api-token', KEY, '--tls-cert',
    path.join(TLS, 'cert.pem'), '--tls-key', path.join(TLS, 'key.pem')], { models });
  T.ok(s.url.startsWith('https://'), `the ready line says https: ${s.url}`);
  try {
    await translate(s);
    await detect(s);
    await languages(s);
    await errors(s);
  } finally {
    await s.stop(T);
  }
  fs.rmSync(models, { recursive: true, force: true });
  await traditional();
  T.finish();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
