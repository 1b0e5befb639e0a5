// test_libretranslate.js - the npm `libretranslate` package (1.0.1, pinned in
// package-lock.json) pointed at `fanyi serve`: it lists /languages, checks
// its codes against them, and posts JSON to /translate (its key as "apiKey").
'use strict';
const { translate } = require('libretranslate');
const { run, T, ZH, EN } = require('./serve_clients2');

run(async (serve) => {
  const s = await serve();
  const apiurl = s.base;
  T.eq(await translate({ query: ZH[0], source: 'auto', target: 'en', apiurl }), await s.native(ZH[0], { target: 'en' }),
    'auto-detected Chinese into English');
  T.eq(await translate({ query: ZH[1], source: 'zh-Hans', target: 'en', apiurl }),
    await s.native(ZH[1], { source: 'zh', target: 'en' }), 'zh-Hans (the code /languages lists) into English');
  T.eq(await translate({ query: EN[0], source: 'en', target: 'zh-Hans', apiurl }),
    await s.native(EN[0], { source: 'en', target: 'zh' }), 'English into zh-Hans');
  // (<p>你好，<b>世界</b>。</p> came back as <p><b></b></p>: no text to compare.)
  const html = '<p>这家饭馆的饺子<b>又便宜</b>又好吃。</p>';
  T.eq(await translate({ query: html, source: 'zh-Hans', target: 'en', format: 'html', apiurl }),
    await s.native(html, { source: 'zh', target: 'en', html: true }), 'format html');
  // The package refuses codes /languages does not list, before any request.
  await T.throws(() => translate({ query: 'x', source: 'en', target: 'tlh', apiurl }),
    (e) => e instanceof TypeError, 'a code the server does not list');

  // With an API token the package's "apiKey" field authenticates.
  const k = await serve({ args: ['--api-token', 'sesame'] });
  T.eq(await translate({ query: ZH[2], source: 'auto', target: 'en', apiurl: k.base, apiKey: 'sesame' }),
    await k.native(ZH[2], { target: 'en' }), 'apiKey accepted');
  T.eq(await translate({ query: ZH[2], source: 'auto', target: 'en', apiurl: k.base, apiKey: 'wrong' }), undefined,
    'a wrong apiKey: no translatedText (403)');
});
