// test_immersive.js - Immersive Translate has no npm client: its requests as
// its documentation and code make them. The custom API ("Custom API" service,
// URL http://127.0.0.1:PORT/imme): POST JSON {source_lang, target_lang,
// text_list} -> {translations: [{detected_source_lang, text}]}, its
// placeholders (<b0></b0>, {0}) back unchanged and in place; its OpenAI
// service (custom API URL …/v1/chat/completions): a system prompt and the
// user prompt "Translate to {{to}}:\n\n{{text}}" (and its Chinese UI form),
// answered in OpenAI's shape.
'use strict';
const { run, T, ZH, EN } = require('./serve_clients2');

// Every placeholder of s, in order.
const marks = (s) => s.match(/<\/?b\d+\/?>|\{\d+\}/g) || [];

async function imme(s, body, headers = {}) {
  const r = await fetch(`${s.base}/imme`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
  return [r.status, await r.json()];
}

async function customApi(s) {
  const texts = ['{0}你好<b0></b0>世界{1}。', '<b0>早上好</b0>，{0}！', ZH[0], 'Hello <b0></b0> world {1}'];
  const [status, res] = await imme(s, { source_lang: 'auto', target_lang: 'en', text_list: texts.slice(0, 3) });
  T.eq([status, res.translations.length], [200, 3], 'custom API: one translation per text');
  for (let i = 0; i < 2; i++) {
    const out = res.translations[i].text;
    T.eq(marks(out), marks(texts[i]), `placeholders kept in order: ${JSON.stringify(out)}`);
  }
  T.ok(res.translations[0].text.startsWith('{0}') && res.translations[0].text.endsWith('{1}'),
    'a placeholder at the start and one at the end stay there');
  T.ok(res.translations[1].text.startsWith('<b0>'), 'a leading tag pair stays first');
  T.eq(res.translations[2].text, await s.native(ZH[0], { target: 'en' }), 'a text without placeholders');
  T.eq(res.translations.map((t) => t.detected_source_lang), ['zh-CN', 'zh-CN', 'zh-CN'], 'its codes: zh-CN');

  const [, zh] = await imme(s, { source_lang: 'en', target_lang: 'zh-CN', text_list: [texts[3], EN[1]] });
  T.eq(marks(zh.translations[0].text), ['<b0>', '</b0>', '{1}'], 'into zh-CN: placeholders kept');
  T.eq(zh.translations[1].text, await s.native(EN[1], { source: 'en', target: 'zh' }), 'zh-CN is Chinese');
  const [bad, err] = await imme(s, { source_lang: 'auto', target_lang: 'tlh', text_list: ['x'] });
  T.eq([bad, typeof err.error], [400, 'object'], 'an unknown target: 400');
}

const SYSTEM = 'You are a professional Simplified Chinese native translator who needs to fluently translate ' +
  'text into Simplified Chinese.\n\n## Translation Rules\n1. Output only the translated content, without ' +
  'explanations or additional content';

async function openaiMode(s) {
  const call = async (messages) => {
    const r = await fetch(`${s.base}/v1/chat/completions`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer x' },
      body: JSON.stringify({ model: 'fanyi', temperature: 0, messages }),
    });
    return [r.status, await r.json()];
  };
  const [st, res] = await call([{ role: 'system', content: SYSTEM },
    { role: 'user', content: `Translate to Simplified Chinese (output translation only):\n\n${EN[0]}` }]);
  T.eq([st, res.choices[0].message.content], [200, await s.native(EN[0], { target: 'zh' })],
    'OpenAI mode: its prompt into Simplified Chinese');
  const [, ph] = await call([{ role: 'user', content: 'Translate to English:\n\n{0}你好<b0></b0>世界{1}。' }]);
  T.eq(marks(ph.choices[0].message.content), ['{0}', '<b0>', '</b0>', '{1}'], 'OpenAI mode: placeholders kept');
  const [, ui] = await call([{ role: 'user', content: `翻译成 English：\n\n${ZH[1]}` }]);
  T.eq(ui.choices[0].message.content, await s.native(ZH[1], { target: 'en' }), 'its Chinese UI prompt');
  const [no, err] = await call([{ role: 'user', content: 'Summarise this page for me.' }]);
  T.eq([no, err.error && err.error.type], [400, 'invalid_request_error'], 'not a translation prompt: 400');
}

run(async (serve) => {
  const s = await serve();
  await customApi(s);
  await openaiMode(s);
});
