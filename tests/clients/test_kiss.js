// test_kiss.js - Kiss Translator has no npm client: its requests as its code
// (src/apis/trans.js, genCustom/parseTransRes and its AI prompts) makes them.
// Its "Custom" service, URL http://127.0.0.1:PORT/kiss: POST JSON {texts,
// from, to} with "Authorization: Bearer <key>" (sent even when the key is
// empty), read back as (res.translations ?? res).map(i => [i.text, i.src]);
// page texts come as escaped HTML with its placeholders (<i1>…</i1>, {1}).
// Its OpenAI service (…/v1/chat/completions): the batch prompt - a system
// prompt naming the answer format and a JSON user message {targetLanguage,
// segments: [{id, text}]} - read back by its parseAIRes.
'use strict';
const { run, T, ZH, EN } = require('./serve_clients2');

// What Kiss Translator's parseTransRes reads from a custom answer.
const parseCustom = (res) => (res.translations ?? res).map((item) => [item.text, item.src]);
// What its parseAIRes reads from the model's content.
function parseAIRes(raw) {
  const m = /({.*}|\[.*\])/s.exec(raw || '');
  const data = m ? JSON.parse(m[0]) : {};
  return Array.isArray(data.translations) ? data.translations.map((i) => [i.text ?? '', i.sourceLanguage ?? '']) : [];
}
const marks = (s) => s.match(/<\/?[a-z]\d+>|\{\d+\}/g) || [];

async function custom(s, key) {
  const post = async (body) => {
    const r = await fetch(`${s.base}/kiss`, {
      method: 'POST', headers: { 'Content-type': 'application/json', Authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return [r.status, await r.json()];
  };
  const texts = ['Click <i1>here</i1> &amp; read {1} more', ZH[0], EN[1]];
  const [st, res] = await post({ texts, from: 'auto', to: 'zh-CN' });
  const got = parseCustom(res);
  T.eq([st, got.length], [200, 3], 'custom: one [text, src] per text');
  T.eq(marks(got[0][0]), ['<i1>', '</i1>', '{1}'], `its placeholders in place: ${JSON.stringify(got[0][0])}`);
  T.eq(got[1], [ZH[0], 'zh-CN'], 'Chinese into zh-CN passes through, src zh-CN');
  T.eq(got[2], [await s.native(EN[1], { target: 'zh', html: true }), 'en'], 'English into zh-CN');
  const [, one] = await post({ texts: [ZH[1]], from: 'zh-CN', to: 'en' });
  T.eq(parseCustom(one), [[await s.native(ZH[1], { source: 'zh', target: 'en', html: true }), 'zh-CN']], 'from zh-CN');
  const [bad, err] = await post({ texts: ['x'], from: 'auto', to: 'tlh' });
  T.eq([bad, typeof err.error], [400, 'object'], 'an unknown target: 400');
}

const BATCH_SYSTEM = 'Act as a translation API. Output a single raw JSON object only. No extra text or fences.\n\n' +
  'Input:\n{"targetLanguage":"<lang>","title":"<context>","description":"<context>","segments":[{"id":1,"text":"..."}],' +
  '"glossary":{"sourceTerm":"targetTerm"},"tone":"<formal|casual>"}\n\nOutput:\n' +
  '{"translations":[{"id":1,"text":"...","sourceLanguage":"<detected>"}]}';

async function openaiBatch(s, key) {
  const texts = [EN[0], 'Hello <b>world</b> {1}'];
  // genOpenAI: model, system and user messages, temperature, max_completion_tokens.
  const r = await fetch(`${s.base}/v1/chat/completions`, {
    method: 'POST', headers: { 'Content-type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: 'fanyi',
      messages: [{ role: 'system', content: BATCH_SYSTEM }, {
        role: 'user',
        content: JSON.stringify({
          targetLanguage: 'zh-CN', title: 'A page', description: '',
          segments: texts.map((text, id) => ({ id, text })), glossary: {}, tone: 'neutral',
        }),
      }],
      temperature: 0, max_completion_tokens: 20480,
    }),
  });
  const res = await r.json();
  T.eq(r.status, 200, 'batch: 200');
  const got = parseAIRes(res.choices[0].message.content);
  T.eq(got.length, 2, 'batch: parseAIRes reads one translation per segment');
  T.eq(got[0], [await s.native(EN[0], { target: 'zh', html: true }), 'en'], 'batch segment 0');
  T.eq(marks(got[1][0]), ['{1}'], 'batch: placeholder kept');
  T.ok(/<b>.*<\/b>/.test(got[1][0]), `batch: markup kept: ${got[1][0]}`);
  T.ok(res.usage.prompt_tokens > 0, 'batch: usage');
  const ids = JSON.parse(/({.*})/s.exec(res.choices[0].message.content)[1]).translations.map((t) => t.id);
  T.eq(ids, [0, 1], 'batch: ids as sent');
}

run(async (serve) => {
  const open = await serve();
  await custom(open, '');
  await openaiBatch(open, '');
  const k = await serve({ args: ['--api-token', 'kiss-key'] });
  await custom(k, 'kiss-key');
  const r = await fetch(`${k.base}/kiss`, {
    method: 'POST', headers: { 'Content-type': 'application/json', Authorization: 'Bearer nope' },
    body: JSON.stringify({ texts: ['x'], from: 'en', to: 'zh-CN' }),
  });
  T.eq(r.status, 403, 'a wrong key: 403');
});
