// test_libre_webui.js - the requests LibreTranslate's own web page makes
// (libretranslate/templates/app.js.template, upstream main), sent as a
// browser sends them: GET /frontend/settings and /languages at start, a
// multipart FormData POST /translate on input (q, source, target, format,
// alternatives=3, api_key), a FormData POST /suggest, and the JSON calls its
// API examples show; CORS as LibreTranslate sends it; api_key in JSON, form
// and multipart bodies.
'use strict';
const { run, T, ZH, EN } = require('./serve_clients2');

function form(fields) {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, String(v));
  return f;
}

// The native API's answer for text with n alternatives: asking for them
// widens the beam (N + 1), which may change the best translation too.
async function nativeAlt(s, text, { source = 'auto', target, html = false, n }) {
  const r = await fetch(`${s.base}/translate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(s.token ? { Authorization: `Bearer ${s.token}` } : {}) },
    body: JSON.stringify({ text, source, target, html, alternatives: n }),
  });
  return r.json();
}

async function webPage(s) {
  // mounted(): settings, then languages; both must load or the page shows an error.
  const settings = await (await fetch(`${s.base}/frontend/settings`)).json();
  T.eq(typeof settings.charLimit, 'number', 'settings.charLimit');
  T.eq(settings.language.source.code, 'auto', 'settings: source language auto');
  T.ok(typeof settings.language.target.code === 'string', 'settings: a target language');
  T.eq([settings.suggestions, typeof settings.frontendTimeout, Array.isArray(settings.supportedFilesFormat),
    typeof settings.filesTranslation], [false, 'number', true, 'boolean'], 'settings the page reads');
  T.ok(settings.filesTranslation && ['.txt', '.html', '.srt'].every((e) => settings.supportedFilesFormat.includes(e)),
    `files: /translate_file and its formats: ${JSON.stringify(settings.supportedFilesFormat)}`);
  const langs = await (await fetch(`${s.base}/languages`)).json();
  T.ok(langs.length > 0 && langs.every((l) => l.code && l.name && Array.isArray(l.targets)),
    '/languages: code, name, targets');
  T.eq(langs.map((l) => l.code).sort(), ['en', 'zh-Hans'], '/languages codes, as LibreTranslate writes them');
  T.ok(langs.some((l) => l.code === settings.language.target.code), 'the default target is listed');

  // handleInput(): FormData, the way XMLHttpRequest.send(FormData) posts it.
  const res = await (await fetch(`${s.base}/translate`, {
    method: 'POST',
    body: form({ q: ZH[0], source: 'auto', target: 'en', format: 'text', alternatives: 3, api_key: s.token || '' }),
  })).json();
  const want = await nativeAlt(s, ZH[0], { target: 'en', n: 3 });
  T.eq(res.translatedText, want.translation, 'web page translation (beam 4, as for 3 alternatives)');
  const lang = langs.find((l) => l.code === res.detectedLanguage.language);
  T.ok(lang && lang.name === 'Chinese', `detectedLanguage names a listed language: ${JSON.stringify(res.detectedLanguage)}`);
  T.ok(res.detectedLanguage.confidence > 0 && res.detectedLanguage.confidence <= 100, 'confidence in percent');
  // The engine's n-best lists, as the native API gives them for the same text.
  T.eq(res.alternatives, want.alternatives, 'alternatives: the engine\'s');
  T.ok(res.alternatives.length <= 3 && !res.alternatives.includes(res.translatedText) &&
    new Set(res.alternatives).size === res.alternatives.length, 'alternatives: at most 3, distinct, not the translation');
  const html = await (await fetch(`${s.base}/translate`, {
    method: 'POST',
    body: form({ q: '<p>你好，<b>世界</b>。</p>', source: 'zh-Hans', target: 'en', format: 'html', alternatives: 3, api_key: s.token || '' }),
  })).json();
  const wantHtml = await nativeAlt(s, '<p>你好，<b>世界</b>。</p>', { source: 'zh', target: 'en', html: true, n: 3 });
  T.eq([html.translatedText, html.alternatives], [wantHtml.translation, wantHtml.alternatives], 'web page, html');
  T.eq(html.detectedLanguage, undefined, 'no detectedLanguage for a given source');

  // sendSuggestion(): the page shows res.error when res.success is not set.
  const sug = await fetch(`${s.base}/suggest`, {
    method: 'POST', body: form({ q: ZH[0], s: 'x', source: 'zh-Hans', target: 'en', api_key: s.token || '' }),
  });
  const sb = await sug.json();
  T.eq([sug.status, sb.success, sb.error], [403, undefined, 'Suggestions are disabled on this server.'],
    'suggestions are disabled, in LibreTranslate\'s words');

  // The API examples: JSON bodies, /detect.
  const j = await (await fetch(`${s.base}/translate`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ q: [ZH[1], EN[1]], source: 'auto', target: 'zh-Hans', format: 'text', alternatives: 2, api_key: s.token || '' }),
  })).json();
  const wantEn = await nativeAlt(s, EN[1], { target: 'zh', n: 2 });
  T.eq(j.translatedText, [ZH[1], wantEn.translation], 'array q (Chinese passes through)');
  T.eq(j.alternatives, [[], wantEn.alternatives],
    'alternatives per text (none for a text passed through)');
  const plain = await (await fetch(`${s.base}/translate`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ q: ZH[1], source: 'zh-Hans', target: 'en', api_key: s.token || '' }),
  })).json();
  T.eq(plain.alternatives, undefined, 'no alternatives field unless asked for');
  T.eq(j.detectedLanguage.map((d) => d.language), ['zh-Hans', 'en'], 'detected per text');
  const det = await (await fetch(`${s.base}/detect`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ q: ZH[2], api_key: s.token || '' }),
  })).json();
  T.eq(det[0].language, 'zh-Hans', '/detect');
  const bad = await fetch(`${s.base}/translate`, { method: 'POST', body: form({ q: 'x', source: 'en', target: 'zh-Hans', alternatives: 'three', api_key: s.token || '' }) });
  T.eq([bad.status, typeof (await bad.json()).error], [400, 'string'], 'alternatives must be a number');
  const spec = await fetch(`${s.base}/spec`);
  T.eq([spec.status, typeof (await spec.json()).paths], [200, 'object'], '/spec: the API description');
}

async function cors(s) {
  // A page on another origin: the preflight of a JSON POST, then the answer.
  const pre = await fetch(`${s.base}/translate`, {
    method: 'OPTIONS',
    headers: { Origin: 'https://example.org', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
  });
  T.eq(pre.status, 204, 'preflight');
  T.eq(pre.headers.get('access-control-allow-origin'), '*', 'preflight: any origin');
  T.ok(/POST/.test(pre.headers.get('access-control-allow-methods')) &&
    /Content-Type/i.test(pre.headers.get('access-control-allow-headers')), 'preflight allows POST with Content-Type');
  for (const p of ['/languages', '/frontend/settings']) {
    const r = await fetch(`${s.base}${p}`, { headers: { Origin: 'https://example.org' } });
    T.eq(r.headers.get('access-control-allow-origin'), '*', `CORS on ${p}`);
  }
  const native = await fetch(`${s.base}/health`, { headers: { Origin: 'https://example.org' } });
  T.eq(native.headers.get('access-control-allow-origin'), null, 'no CORS on routes that are not LibreTranslate\'s');
}

async function keys(s) {
  const urlenc = new URLSearchParams({ q: ZH[0], source: 'zh', target: 'en', api_key: 'sesame' });
  const want = await s.native(ZH[0], { source: 'zh', target: 'en' });
  const bodies = [
    ['JSON', { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ q: ZH[0], source: 'zh', target: 'en', api_key: 'sesame' }) }],
    ['form', { body: urlenc }],
    ['multipart', { body: form({ q: ZH[0], source: 'zh', target: 'en', api_key: 'sesame' }) }],
  ];
  for (const [what, init] of bodies) {
    const r = await fetch(`${s.base}/translate`, { method: 'POST', ...init });
    T.eq([r.status, (await r.json()).translatedText], [200, want], `api_key in a ${what} body`);
  }
  const wrong = await fetch(`${s.base}/translate`, { method: 'POST', body: form({ q: 'x', source: 'zh', target: 'en', api_key: 'nope' }) });
  T.eq([wrong.status, typeof (await wrong.json()).error], [403, 'string'], 'a wrong api_key: 403 in LibreTranslate\'s shape');
  const none = await fetch(`${s.base}/translate`, { method: 'POST', body: form({ q: 'x', source: 'zh', target: 'en' }) });
  T.eq([none.status, typeof (await none.json()).error], [401, 'string'], 'no api_key: 401');
  const settings = await (await fetch(`${s.base}/frontend/settings`)).json();
  T.eq([settings.apiKeys, settings.keyRequired], [true, true], 'settings say a key is needed');
}

run(async (serve) => {
  await webPage(await serve());
  await cors(await serve());
  const k = await serve({ args: ['--api-token', 'sesame'] });
  await keys(k);
  k.token = 'sesame';
  await webPage(k);
  // --cors-origin '' turns CORS off; an origin applies to every route.
  const off = await serve({ args: ['--cors-origin', ''] });
  const r = await fetch(`${off.base}/languages`, { headers: { Origin: 'https://example.org' } });
  T.eq(r.headers.get('access-control-allow-origin'), null, "--cors-origin '': no CORS");
  const one = await serve({ args: ['--cors-origin', 'https://example.org'] });
  for (const p of ['/languages', '/v1/models', '/health']) {
    const h = (await fetch(`${one.base}${p}`, { headers: { Origin: 'https://example.org' } })).headers;
    T.eq([h.get('access-control-allow-origin'), h.get('vary')], ['https://example.org', 'Origin'], `--cors-origin on ${p}`);
  }
});
