// test_deepl_node.js - DeepL's official Node client (deepl-node, pinned in
// package-lock.json) pointed at `fanyi serve` with serverUrl, unchanged:
// translateText and its options, TextResult fields, usage, languages,
// glossaries (v2: createGlossary, createGlossaryWithCsv, listGlossaries,
// getGlossary, getGlossaryEntries, translateText with { glossary },
// deleteGlossary, getGlossaryLanguagePairs; v3 through DeepLClient: the
// multilingual glossary calls; documents: test_deepl_node_documents.js),
// auth with the key, and errors as deepl-node's own error classes.
'use strict';

const deepl = require('deepl-node');
const { Checks, makeModels, serve, native, cliRaw } = require('./serve_clients1');

const T = new Checks();
const KEY = 'fanyi-test-key';
const ZH = '今天天气很好。我们去公园吧。';
const ZH2 = '这家饭馆的饺子又便宜又好吃。';
const EN = 'The weather is nice today.';

// maxRetries 0: a 5xx must show, not be retried away. minTimeout: its
// default 5 s is less than a translation takes in a sanitizer build on a
// loaded machine.
const client = (url, key = KEY) => new deepl.Translator(key, { serverUrl: url, maxRetries: 0,
  minTimeout: 600000 });

async function translate(s, models) {
  const t = client(s.url);
  const want = await native(s.url, ZH, 'en');
  let r = await t.translateText(ZH, null, 'en-US');
  T.eq(r, { text: want, detectedSourceLang: 'zh', billedCharacters: [...ZH].length,
    modelTypeUsed: undefined }, 'translateText: one text, auto source -> TextResult');
  r = await t.translateText(ZH, 'zh', 'en-GB');
  T.eq([r.text, r.detectedSourceLang], [want, 'zh'], 'translateText zh -> en-GB');
  const list = await t.translateText([ZH, ZH2, EN], null, 'en-US');
  T.eq(list.map((x) => [x.text, x.detectedSourceLang, x.billedCharacters]),
    [[want, 'zh', [...ZH].length], [await native(s.url, ZH2, 'en'), 'zh', [...ZH2].length],
      [EN, 'en', EN.length]], 'translateText: a list, each its own TextResult (EN passes through)');
  r = await t.translateText(EN, 'en', 'zh');
  T.eq([r.text, r.detectedSourceLang], [await native(s.url, EN, 'zh'), 'en'], 'en -> zh');
  r = await t.translateText('12345', null, 'en-US');
  T.eq([r.text, r.detectedSourceLang], ['12345', 'en'], 'no letters: unchanged, a language named');

  // split_sentences: off is one unsplit sentence (the CLI's --raw).
  r = await t.translateText(ZH, 'zh', 'en-US', { splitSentences: 'off' });
  T.eq(r.text, cliRaw(models, ZH, 'zh', 'en'), "splitSentences 'off' = fanyi translate --raw");
  T.ok(r.text !== want, 'unsplit differs from split (the test can tell them apart)');
  r = await t.translateText(ZH, 'zh', 'en-US', { splitSentences: 'on' });
  T.eq(r.text, want, "splitSentences 'on' is the default");
  const lines = '今天天气很好\n我们去公园吧。';
  const split = await t.translateText(lines, 'zh', 'en-US');
  T.eq(split.text, await native(s.url, lines, 'en'), 'a line break ends a sentence by default');
  r = await t.translateText(lines, 'zh', 'en-US', { splitSentences: 'nonewlines' });
  T.ok(r.text !== split.text && r.text.includes('\n'),
    `'nonewlines': one sentence across the line break, which is kept (${JSON.stringify(r.text)})`);
  r = await t.translateText('a < b & c', 'en', 'zh', { splitSentences: 'nonewlines' });
  T.ok(!r.text.includes('&lt;') && !r.text.includes('&amp;'), `nonewlines: no entities ${r.text}`);

  // tag_handling: markup kept.
  const html = '<p>今天天气很好。</p><p><b>我们</b>去公园吧。</p>';
  r = await t.translateText(html, 'zh', 'en-US', { tagHandling: 'html' });
  T.eq(r.text, await native(s.url, html, 'en', { body: { html: true } }), "tagHandling 'html'");
  r = await t.translateText('<par>今天天气很好。</par>', 'zh', 'en-US', { tagHandling: 'xml' });
  T.ok(/^<par>.*<\/par>$/.test(r.text), `tagHandling 'xml' keeps the elements: ${r.text}`);

  // preserve_formatting and formality.
  r = await t.translateText(ZH, 'zh', 'en-US', { preserveFormatting: true });
  T.eq(r.text, want, 'preserveFormatting: the source ends a sentence as the translation does');
  const open = '今天天气很好';
  const plain = await native(s.url, open, 'en');
  r = await t.translateText(open, 'zh', 'en-US', { preserveFormatting: true });
  T.eq(r.text, plain.replace(/(\.|!|\?|。|！|？)$/, ''),
    'preserveFormatting: no final mark the source lacks (the rule itself: test_deepl_format)');
  r = await t.translateText(ZH, 'zh', 'en-US', { formality: 'prefer_less' });
  T.eq(r.text, want, "formality 'prefer_less' falls back to the default");
  let e = await T.throws(() => t.translateText(EN, 'en', 'zh', { formality: 'more' }),
    "formality 'more'");
  T.ok(e instanceof deepl.DeepLError && /Bad request.*formality/.test(e.message),
    `formality 'more': DeepLError Bad request: ${e && e.message}`);
  e = await T.throws(() => t.translateText(EN, 'en', 'zh', { glossary: 'abc' }), 'glossary_id');
  T.ok(e && /Bad request.*no glossary 'abc'/.test(e.message),
    `an unknown glossary: Bad request naming it: ${e && e.message}`);
  e = await T.throws(() => t.translateText(EN, null, 'ja'), 'unsupported pair');
  T.ok(e instanceof deepl.DeepLError && /Bad request.*zh->en/.test(e.message),
    `no model for ja: DeepLError listing the pairs: ${e && e.message}`);
}

async function languages(s) {
  const t = client(s.url);
  const src = await t.getSourceLanguages();
  T.eq(src.sort((a, b) => a.code.localeCompare(b.code)),
    [{ name: 'English', code: 'en' }, { name: 'Chinese', code: 'zh' }], 'getSourceLanguages');
  const tgt = await t.getTargetLanguages();
  T.eq(tgt.map((l) => [l.code, l.supportsFormality]).sort(),
    [['en-GB', false], ['en-US', false], ['zh', false], ['zh-HANS', false]],
    'getTargetLanguages: DeepL\'s regional variants, supportsFormality');
  for (const l of tgt) {
    const r = await t.translateText(l.code.startsWith('en') ? ZH : EN, null, l.code);
    T.ok(typeof r.text === 'string' && r.text.length > 0, `every listed target works: ${l.code}`);
  }
  T.eq(await t.getGlossaryLanguagePairs(),
    [{ sourceLang: 'en', targetLang: 'zh' }, { sourceLang: 'zh', targetLang: 'en' }],
    'getGlossaryLanguagePairs: the pairs this server translates');
}

async function usage(s) {
  const t = client(s.url);
  const before = await t.getUsage();
  T.ok(before.character && before.character.limit >= 1e12 && !before.anyLimitReached(),
    `getUsage: a large limit ${before}`);
  await t.translateText([ZH, ZH2], 'zh', 'en-US');
  const after = await t.getUsage();
  T.eq(after.character.count - before.character.count, [...ZH].length + [...ZH2].length,
    'getUsage counts the characters translated');
  T.ok(/Characters: \d+ of \d+/.test(after.toString()), `Usage.toString ${after}`);
}

// How often each of words occurs in text.
const counts = (text, words) => words.map((w) => text.split(w).length - 1);

async function glossaries(s) {
  const t = client(s.url);
  const entries = new deepl.GlossaryEntries({ entries: { 天气: 'WEATHER-T', 公园: 'PARK-T' } });
  const g = await t.createGlossary('Weather', 'zh', 'en', entries);
  T.eq([g.name, g.ready, g.sourceLang, g.targetLang, g.entryCount],
    ['Weather', true, 'zh', 'en', 2], 'createGlossary: a GlossaryInfo');
  T.ok(/^[0-9a-f-]{36}$/.test(g.glossaryId) && !Number.isNaN(g.creationTime.getTime()),
    `an id and a creation time: ${g.glossaryId} ${g.creationTime}`);
  T.ok((await t.listGlossaries()).some((x) => x.glossaryId === g.glossaryId), 'listGlossaries');
  T.eq((await t.getGlossary(g.glossaryId)).name, 'Weather', 'getGlossary');
  T.eq((await t.getGlossaryEntries(g)).entries(), { 天气: 'WEATHER-T', 公园: 'PARK-T' },
    'getGlossaryEntries: the TSV back');
  let r = await t.translateText(ZH, 'zh', 'en-US', { glossary: g });
  T.eq(counts(r.text, ['WEATHER-T', 'PARK-T', '天气']), [1, 1, 0],
    `translateText with { glossary }: each term once: ${r.text}`);
  r = await t.translateText([ZH, ZH2], 'zh', 'en-GB', { glossary: g.glossaryId });
  T.eq(counts(r[0].text, ['WEATHER-T']), [1], `a glossary id, a list of texts: ${r[0].text}`);
  const csv = await t.createGlossaryWithCsv('CSV', 'zh', 'en', Buffer.from('天气,"W, T"\n'));
  r = await t.translateText('天气很好。', 'zh', 'en-US', { glossary: csv });
  T.ok(csv.entryCount === 1 && r.text.includes('W, T'), `createGlossaryWithCsv: ${r.text}`);
  let e = await T.throws(() => t.translateText(ZH, null, 'en-US', { glossary: g }), 'no source');
  T.ok(e instanceof deepl.DeepLError, `a glossary needs sourceLang (deepl-node says): ${e}`);
  // What deepl-node would not send, refused by the server in DeepL's shape.
  const form = (body) => fetch(`${s.url}/v2/glossaries`, { method: 'POST', body,
    headers: { Authorization: `DeepL-Auth-Key ${KEY}`,
      'Content-Type': 'application/x-www-form-urlencoded' } });
  let res = await form('name=d&source_lang=zh&target_lang=en&entries=a%09b%0Aa%09c');
  T.eq([res.status, (await res.json()).message],
    [400, "field 'entries': line 2: duplicate source term 'a' (already in entry 1)"],
    'a duplicate entry: 400 naming the line');
  res = await form('name=d&source_lang=zh&target_lang=en&entries=a');
  T.eq([res.status, (await res.json()).message],
    [400, "field 'entries': line 1: no tab between the source and the target term"],
    'an entry without a tab');
  await t.deleteGlossary(g);
  e = await T.throws(() => t.getGlossary(g.glossaryId), 'a deleted glossary');
  T.ok(e instanceof deepl.GlossaryNotFoundError, `then GlossaryNotFoundError: ${e}`);
  await t.deleteGlossary(csv);

  // v3: multilingual glossaries (DeepLClient).
  const dc = new deepl.DeepLClient(KEY, { serverUrl: s.url, maxRetries: 0, minTimeout: 600000 });
  const dict = (src, tgt, terms) => ({ sourceLangCode: src, targetLangCode: tgt,
    entries: new deepl.GlossaryEntries({ entries: terms }) });
  const mg = await dc.createMultilingualGlossary('Both ways',
    [dict('zh', 'en', { 天气: 'WEATHER-T' }), dict('en', 'zh', { weather: '气候' })]);
  T.eq(mg.dictionaries.map((d) => [d.sourceLangCode, d.targetLangCode, d.entryCount]),
    [['zh', 'en', 1], ['en', 'zh', 1]], 'createMultilingualGlossary: two dictionaries');
  T.ok((await dc.listMultilingualGlossaries()).some((x) => x.glossaryId === mg.glossaryId),
    'listMultilingualGlossaries');
  T.eq((await dc.getMultilingualGlossary(mg.glossaryId)).name, 'Both ways', 'getMultilingualGlossary');
  const got = await dc.getMultilingualGlossaryDictionaryEntries(mg, 'zh', 'en');
  T.eq(got.entries.entries(), { 天气: 'WEATHER-T' }, 'getMultilingualGlossaryDictionaryEntries');
  r = await dc.translateText(ZH, 'zh', 'en-US', { glossary: mg });
  T.eq(counts(r.text, ['WEATHER-T']), [1], `zh -> en with the multilingual glossary: ${r.text}`);
  r = await dc.translateText('The weather is nice.', 'en', 'zh', { glossary: mg });
  T.eq(counts(r.text, ['气候']), [1], `en -> zh with the same glossary: ${r.text}`);
  let upd = await dc.updateMultilingualGlossaryDictionary(mg, dict('zh', 'en', { 公园: 'PARK-T' }));
  T.eq(upd.dictionaries.find((d) => d.sourceLangCode === 'zh').entryCount, 2,
    'updateMultilingualGlossaryDictionary merges');
  const rep = await dc.replaceMultilingualGlossaryDictionary(mg, dict('zh', 'en', { 公园: 'P2' }));
  T.eq([rep.sourceLangCode, rep.entryCount], ['zh', 1], 'replaceMultilingualGlossaryDictionary');
  upd = await dc.updateMultilingualGlossaryName(mg, 'Renamed');
  T.eq(upd.name, 'Renamed', 'updateMultilingualGlossaryName');
  await dc.deleteMultilingualGlossaryDictionary(mg, 'en', 'zh');
  T.eq((await dc.getMultilingualGlossary(mg.glossaryId)).dictionaries.length, 1,
    'deleteMultilingualGlossaryDictionary');
  await dc.deleteMultilingualGlossary(mg);
  e = await T.throws(() => dc.getMultilingualGlossary(mg.glossaryId), 'deleted v3');
  T.ok(e instanceof deepl.GlossaryNotFoundError, `deleteMultilingualGlossary: ${e}`);
}

async function auth(models, data) {
  const s = await serve(['--threads', '1', '--api-token', KEY, '--data-dir', data], { models });
  const r = await client(s.url).translateText(ZH, null, 'en-US');
  T.eq(r.text, await native(s.url, ZH, 'en', { headers: { Authorization: `Bearer ${KEY}` } }),
    'the DeepL-Auth-Key header carries the token');
  const usage = await client(s.url).getUsage();
  T.ok(usage.character.count >= [...ZH].length, 'getUsage with the key');
  for (const [what, fn] of [['translateText', (t) => t.translateText(ZH, null, 'en-US')],
    ['getUsage', (t) => t.getUsage()], ['listGlossaries', (t) => t.listGlossaries()],
    ['createGlossary', (t) => t.createGlossary('g', 'zh', 'en',
      new deepl.GlossaryEntries({ entries: { a: 'b' } }))]]) {
    const e = await T.throws(() => fn(client(s.url, 'wrong-key')), `${what}, wrong key`);
    T.ok(e instanceof deepl.AuthorizationError, `${what}, wrong key: AuthorizationError (${e})`);
  }
  const res = await fetch(`${s.url}/v2/translate`, { method: 'POST', body: 'text=a&target_lang=ZH',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  T.eq([res.status, Object.keys(await res.json())], [403, ['message']],
    'no key at all: 403 in DeepL\'s shape, as DeepL answers');
  await s.stop(T);
}

(async () => {
  const models = makeModels();
  const data = require('node:fs').mkdtempSync(require('node:path').join(require('node:os').tmpdir(),
    'fanyi-deepl-data-'));
  const s = await serve(['--threads', '1', '--data-dir', data], { models });
  try {
    await translate(s, models);
    await languages(s);
    await usage(s);
    await glossaries(s);
  } finally {
    await s.stop(T);
  }
  await auth(models, data);
  require('node:fs').rmSync(models, { recursive: true, force: true });
  require('node:fs').rmSync(data, { recursive: true, force: true });
  T.finish();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
