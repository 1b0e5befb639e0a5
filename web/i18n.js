// i18n.js - every word the pages show, in English and Chinese: one table, read by
// t(key, vars). The interface follows the browser's language (Chinese for zh-*,
// English otherwise) until the user picks one in the menu (kept in localStorage).
//
// A value is a string with {name} holes, or a function of the vars (plurals, language
// names). A var that is itself {key, vars} is a message of this table, translated too.
// Static elements carry their key: data-t (text), data-t-label (aria-label),
// data-t-title, data-t-placeholder; applyStrings() fills them.
import { KEYS, storageGet, storageSet } from './common.js';

// A sentence from the server ends with its punctuation.
const end = (s) => (!s ? '' : /[.!?。！？]$/.test(s) ? s : `${s}.`);
const endZh = (s) => (!s ? '' : /[.!?。！？]$/.test(s) ? s : `${s}。`);
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

const EN = {
  'menu.label': 'Menu',
  'menu.button': 'Menu',
  'menu.token': 'API token',
  'menu.plugins': 'Connect a plug-in',
  'menu.docs': 'API docs',
  'menu.uiLang': 'Interface',
  'menu.translator': 'Translator',
  'progress': 'Translating',

  'dir.from': 'Translate from',
  'dir.to': 'Translate into',
  'dir.detect': 'Detect language',
  'dir.detected': (v) => `Detect (${name(v.lang)})`,
  'swap.title': 'Swap the languages and the texts',
  'swap.none': (v) => `No model translates ${v.from} into ${v.to} here`,
  'swap.detected': 'the detected language',

  'pane.source': 'Text to translate',
  'pane.target': 'Translation',
  'pane.text': 'Text',
  'pane.translation': 'Translation',
  'pane.detected': (v) => `${name(v.lang)} (detected)`,
  'pane.output': (v) => `Translation output (${v.lang})`,
  'pane.placeholder': 'Type or paste text (Ctrl+Enter translates)',
  'pane.placeholder.touch': 'Type or paste text',
  'pane.clear': 'Clear',
  'pane.translate': 'Translate',
  'pane.share': 'Share link',
  'pane.share.title': 'Copy a link to this direction and text',
  'pane.copy': 'Copy',

  'counter.count': (v) => plural(v.n, 'character', 'characters'),
  'counter.of': '{n} / {max}',
  'counter.over': '{n} / {max} — too long for this server',
  'counter.near': '{n} / {max} — close to the limit',

  'status.translating': 'Translating…',
  'status.done': (v) => `${plural(v.n, 'sentence', 'sentences')} · ${v.ms} ms`,
  'status.switched': (v) => `${plural(v.n, 'sentence', 'sentences')} · ${v.ms} ms · ${name(v.from)} detected: translated into ${name(v.to)}`,
  'status.firstN': (v) => `${t(v.before.key, v.before.vars)} · the first ${v.n} characters`,
  'status.nothing': 'Nothing to translate: no words in a language this server knows.',
  'status.already': (v) => `This text is ${name(v.lang)}, already the target language (${name(v.target)}): nothing to translate.`,
  'status.connectionLost': 'the connection was lost',
  'status.stopped': (v) => `Stopped after ${plural(v.n, 'sentence', 'sentences')}: ${v.why}. The rest is missing.`,
  'status.failed': (v) => `Translation failed: ${v.why}`,
  'status.offline': 'Cannot reach the Fanyi server. Your text is kept; it is translated as soon as the server is back.',
  'status.tooLong': 'Too long: {n} characters, this server takes {max}. Your text is kept.',
  'status.serverTooLong': (v) => `Too long: ${end(v.why || 'the text is over the server\'s limit')} Your text is kept; shorten it to translate.`,
  'status.tokenNeeded': 'This server needs an API token.',
  'status.tokenRejected': 'The API token was rejected.',
  'status.timeout': 'The translation took too long and was stopped. Try a shorter text.',
  'status.httpFailed': (v) => `Translation failed (${v.status})${v.why ? `: ${end(v.why)}` : '.'}`,
  'status.busy': 'The server is busy. Retrying in {s} s…',
  'status.picked': 'Alternative chosen: Copy and the history use it.',
  'status.fromHistory': 'From the history.',
  'status.copied': 'Copied to the clipboard.',
  'status.cleared': 'Cleared.',
  'status.linkCopied': 'Link copied: it opens this direction and text.',
  'status.shareLink': 'Share this link: {link}',
  'action.firstN': 'Translate the first {max} characters',
  'action.retry': 'Retry now',
  'action.undo': 'Undo',

  'alts.hint': 'Click a sentence, or Enter on it, for alternatives',
  'alts.hint.touch': 'Tap a sentence for alternatives',
  'alts.finding': 'Finding alternatives…',
  'alts.none': 'No alternatives: {why}',
  'alts.unreachable': 'the server cannot be reached',
  'alts.for': 'Alternatives for “{sentence}”',
  'alts.empty': 'No other translation found for this sentence.',
  'alts.close': 'Close',

  'doc.title': 'Documents',
  'doc.choose': 'Drop a file here or choose one',
  'doc.formats': '.txt .md .html .srt .vtt .docx .odt .pptx .epub: the language is detected, the translation goes into the language chosen above',
  'doc.progress.label': 'Document progress',
  'doc.sending': 'Sending {name}…',
  'doc.translating': (v) => `Translating ${v.name} (${plural(v.n, 'sentence', 'sentences')})…`,
  'doc.progress': 'Translating {name}: {done} of {total} sentences…',
  'doc.switching': (v) => `${v.name} is ${name(v.from)}: translating it into ${name(v.to)}…`,
  'doc.done': (v) => `${v.name} translated from ${name(v.from)} into ${name(v.to)}.`,
  'doc.download': 'Download {name}',
  'doc.already': (v) => `${v.name} is already ${name(v.lang)}: nothing to translate, no copy made.`,
  'doc.noText': '{name} has no text in a language this server knows: nothing to translate, no copy made.',
  'doc.refused': (v) => `${v.name} was refused (${v.status}): ${end(v.why || 'no reason given')}`,
  'doc.failed': (v) => `${v.name} failed: ${end(v.why)}`,
  'doc.error': '{message}',
  'doc.offline': '{name}: cannot reach the Fanyi server.',

  'history.title': 'Recent translations',
  'history.search': 'Search',
  'history.search.label': 'Search the history',
  'history.clear': 'Clear history',
  'history.show': 'Show this translation again',
  'history.direction': '{from} → {to}',
  'history.delete': 'Delete “{text}” from the history',

  'token.title': 'API token',
  'token.needed': 'API token needed',
  'token.rejected': 'API token rejected',
  'token.needed.why': 'This server requires an API token for translations.',
  'token.rejected.why': 'The saved token was rejected. Enter the correct token.',
  'token.saved.why': 'A token is saved. Enter a new one, or leave it empty to send none.',
  'token.required.why': 'This server requires an API token: enter it once, it is kept in this browser.',
  'token.optional.why': 'This server needs no token. Enter one only if it asks for one (empty: none).',
  'token.label': 'Token',
  'token.cancel': 'Cancel',
  'token.save': 'Save',
  'plug.title': 'Connect a plug-in',
  'plug.intro': 'Point a translation plug-in at this server, {base}: enter the settings below in it (Copy puts a value on the clipboard). Test sends the plug-in\'s own request to this server and shows the answer.',
  'plug.doctor': 'The same checks from a terminal, for operators:',
  'plug.doctor.what': 'command',
  'plug.token.needed': 'This server requires an API token: the plug-ins send it as their key. Enter it (menu → API token) to test them.',
  'plug.token.saved': 'Your saved API token is filled in below and sent with the tests.',
  'plug.direction': 'Test direction',
  'plug.clients': 'Clients',
  'plug.testAll': 'Test all',
  'plug.test': 'Test',
  'plug.testLabel': 'Test {what}',
  'plug.copy': 'Copy',
  'plug.copyLabel': 'Copy the {what}',
  'plug.copied': 'Copied',
  'plug.running': 'Testing…',
  'plug.pass': 'Works ({ms} ms):',
  'plug.fail': 'Fails:',
  'plug.request': 'The request sent',
  'plug.summary': (v) => `${v.passed} of ${v.done} checks passed${v.done < v.total ? ` (${v.total} in all)` : ''}`,
  'plug.noDirection': 'No direction here has a test sample (zh, en, de, fr, es, ja): nothing to test.',
  'plug.key.any': 'any text: this server needs no token',
  'plug.key.token': 'your API token',
  'plug.field.url': 'URL',
  'plug.field.key': 'API key',
  'plug.field.model': 'Model',
  'plug.field.path': 'API path',
  'plug.field.service': 'Service',
  'plug.field.endpoint': 'apiEndpoint (HTTPS only)',
  'plug.why.unreachable': 'the request did not reach the server ({error})',
  'plug.why.status': 'HTTP {status}: {message}',
  'plug.why.noAnswer': 'no translation in the answer (at {path})',
  'plug.why.expect': '{path} is {got}, the plug-in expects {want}',
  'plug.why.native': 'the server\'s own translation failed: {error}',
  'plug.why.differs': 'the translation “{got}” is not the server\'s own “{want}”',
  'client.immersive': 'Immersive Translate',
  'client.kiss': 'Kiss Translator',
  'client.pot': 'pot',
  'client.bob': 'Bob',
  'client.openai-translator': 'openai-translator',
  'client.hcfy': 'Selection Translator (hcfy)',
  'client.zotero': 'Zotero PDF Translate',
  'client.deepl': 'DeepL SDKs (deepl-node, deepl-python)',
  'client.google': 'Google Cloud Translation SDKs',
  'client.libre': 'LibreTranslate clients',
  'client.deeplx': 'DeepLX plug-ins',
  'setup.immersive.custom': 'Custom API: Settings → Translation services → Custom API, its API URL',
  'setup.immersive.openai': 'OpenAI: its OpenAI service with a custom API URL; keep its default prompts',
  'setup.kiss.custom': 'Custom: Options → Translation services → Custom, URL and key, no hooks',
  'setup.kiss.openai': 'OpenAI: Options → Translation services → OpenAI; keep its default prompts',
  'setup.kiss.google': 'Google: Options → Translation services → Google, its URL',
  'setup.kiss.deeplx': 'DeepLX: Options → Translation services → DeepLX',
  'setup.pot.openai': 'OpenAI: Preferences → Services → OpenAI, request path, key, model',
  'setup.pot.deeplx': 'DeepLX: Preferences → Services → DeepL, type DeepLX, custom URL',
  'setup.bob.openai': 'OpenAI Translator plug-in: API URL, API key, custom model',
  'setup.bob.responses': 'The same plug-in in its newer versions (the Responses API)',
  'setup.bob.deeplx': 'DeepLX plug-in (bob-plugin-deeplx): its URL',
  'setup.openai-translator.openai': 'Settings → OpenAI: API URL, API URL path, API key, model "custom"',
  'setup.hcfy.custom': 'Settings → Custom translator (自定义翻译源): the URL, any name',
  'setup.zotero.libre': 'LibreTranslate: Settings → Services → LibreTranslate, its endpoint; the token as its secret',
  'setup.zotero.deeplx': 'DeepLX(API): Settings → Services → DeepLX(API); the URL goes in its secret field',
  'setup.deepl.sdk': 'serverUrl (deepl-node) or server_url (deepl-python), and the key',
  'setup.google.v2': '@googleapis/translate: rootUrl; @google-cloud/translate: apiEndpoint (HTTPS only); the token as its key',
  'setup.libre.api': 'npm libretranslate and translate, and any LibreTranslate client: the URL, the token as API key',
  'setup.libre.web': 'LibreTranslate\'s own web page, pointed at this server',
  'setup.deeplx.api': 'Any plug-in with a DeepLX service: its URL',
};

const ZH = {
  'menu.label': '菜单',
  'menu.button': '菜单',
  'menu.token': 'API 令牌',
  'menu.plugins': '连接插件',
  'menu.docs': 'API 文档',
  'menu.uiLang': '界面语言',
  'menu.translator': '翻译',
  'progress': '正在翻译',

  'dir.from': '源语言',
  'dir.to': '目标语言',
  'dir.detect': '检测语言',
  'dir.detected': (v) => `检测（${name(v.lang)}）`,
  'swap.title': '互换语言和文本',
  'swap.none': (v) => `本服务器没有把${v.from}译成${v.to}的模型`,
  'swap.detected': '检测到的语言',

  'pane.source': '原文',
  'pane.target': '译文',
  'pane.text': '原文',
  'pane.translation': '译文',
  'pane.detected': (v) => `${name(v.lang)}（检测）`,
  'pane.output': (v) => `译文（${v.lang}）`,
  'pane.placeholder': '在此输入或粘贴文本（Ctrl+Enter 翻译）',
  'pane.placeholder.touch': '在此输入或粘贴文本',
  'pane.clear': '清空',
  'pane.translate': '翻译',
  'pane.share': '分享链接',
  'pane.share.title': '复制指向此翻译方向和文本的链接',
  'pane.copy': '复制',

  'counter.count': '{n} 字',
  'counter.of': '{n} / {max}',
  'counter.over': '{n} / {max}——超出本服务器的限制',
  'counter.near': '{n} / {max}——接近上限',

  'status.translating': '正在翻译…',
  'status.done': '{n} 句 · {ms} 毫秒',
  'status.switched': (v) => `${v.n} 句 · ${v.ms} 毫秒 · 检测到${name(v.from)}，已译成${name(v.to)}`,
  'status.firstN': (v) => `${t(v.before.key, v.before.vars)} · 前 ${v.n} 字`,
  'status.nothing': '没有需要翻译的内容：没有本服务器认识的语言的文字。',
  'status.already': (v) => `这段文字是${name(v.lang)}，已经是目标语言（${name(v.target)}），无需翻译。`,
  'status.connectionLost': '连接中断',
  'status.stopped': (v) => `翻译了 ${v.n} 句后中断：${v.why}。其余部分缺失。`,
  'status.failed': (v) => `翻译失败：${v.why}`,
  'status.offline': '无法连接 Fanyi 服务器。文本已保留，服务器恢复后自动翻译。',
  'status.tooLong': '太长：{n} 字，本服务器最多 {max} 字。文本已保留。',
  'status.serverTooLong': (v) => `太长：${endZh(v.why || '超出服务器的限制')}文本已保留，缩短后即可翻译。`,
  'status.tokenNeeded': '本服务器需要 API 令牌。',
  'status.tokenRejected': 'API 令牌被拒绝。',
  'status.timeout': '翻译超时，已停止。请缩短文本再试。',
  'status.httpFailed': (v) => `翻译失败（${v.status}）${v.why ? `：${endZh(v.why)}` : '。'}`,
  'status.busy': '服务器繁忙，{s} 秒后重试…',
  'status.picked': '已选用此译法：复制和历史记录都使用它。',
  'status.fromHistory': '来自历史记录。',
  'status.copied': '已复制到剪贴板。',
  'status.cleared': '已清空。',
  'status.linkCopied': '链接已复制：打开它即是此翻译方向和文本。',
  'status.shareLink': '分享此链接：{link}',
  'action.firstN': '翻译前 {max} 字',
  'action.retry': '立即重试',
  'action.undo': '撤销',

  'alts.hint': '点击句子或在句子上按 Enter 查看其他译法',
  'alts.hint.touch': '轻触句子查看其他译法',
  'alts.finding': '正在查找其他译法…',
  'alts.none': '没有其他译法：{why}',
  'alts.unreachable': '无法连接服务器',
  'alts.for': '“{sentence}”的其他译法',
  'alts.empty': '这句没有其他译法。',
  'alts.close': '关闭',

  'doc.title': '文档',
  'doc.choose': '把文件拖到这里，或选择文件',
  'doc.formats': '.txt .md .html .srt .vtt .docx .odt .pptx .epub：自动检测语言，译成上方选择的语言',
  'doc.progress.label': '文档进度',
  'doc.sending': '正在发送 {name}…',
  'doc.translating': '正在翻译 {name}（{n} 句）…',
  'doc.progress': '正在翻译 {name}：{done} / {total} 句…',
  'doc.switching': (v) => `${v.name} 是${name(v.from)}：改为译成${name(v.to)}…`,
  'doc.done': (v) => `${v.name} 已从${name(v.from)}译成${name(v.to)}。`,
  'doc.download': '下载 {name}',
  'doc.already': (v) => `${v.name} 已经是${name(v.lang)}：无需翻译，不生成副本。`,
  'doc.noText': '{name} 中没有本服务器认识的语言的文字：无需翻译，不生成副本。',
  'doc.refused': (v) => `${v.name} 被拒绝（${v.status}）：${end(v.why || '未说明原因')}`,
  'doc.failed': (v) => `${v.name} 翻译失败：${end(v.why)}`,
  'doc.error': '{message}',
  'doc.offline': '{name}：无法连接 Fanyi 服务器。',

  'history.title': '最近的翻译',
  'history.search': '搜索',
  'history.search.label': '搜索历史记录',
  'history.clear': '清除历史记录',
  'history.show': '再次显示这条翻译',
  'history.direction': '{from} → {to}',
  'history.delete': '从历史记录中删除“{text}”',

  'token.title': 'API 令牌',
  'token.needed': '需要 API 令牌',
  'token.rejected': 'API 令牌被拒绝',
  'token.needed.why': '本服务器的翻译需要 API 令牌。',
  'token.rejected.why': '已保存的令牌被拒绝，请输入正确的令牌。',
  'token.saved.why': '已保存一个令牌。输入新令牌，或留空表示不发送令牌。',
  'token.required.why': '本服务器需要 API 令牌：输入一次，保存在此浏览器中。',
  'token.optional.why': '本服务器不需要令牌。只有在它要求时才需输入（留空：不发送）。',
  'token.label': '令牌',
  'token.cancel': '取消',
  'token.save': '保存',
  'plug.title': '连接插件',
  'plug.intro': '把翻译插件指向本服务器 {base}：在插件中填入下面的设置（“复制”把值放到剪贴板）。“测试”用插件自己的请求格式向本服务器发送请求并显示结果。',
  'plug.doctor': '运维人员可在终端运行同样的检查：',
  'plug.doctor.what': '命令',
  'plug.token.needed': '本服务器需要 API 令牌：插件把它作为密钥发送。请先输入令牌（菜单 → API 令牌）再测试。',
  'plug.token.saved': '下面已填入你保存的 API 令牌，测试时会一并发送。',
  'plug.direction': '测试方向',
  'plug.clients': '客户端',
  'plug.testAll': '全部测试',
  'plug.test': '测试',
  'plug.testLabel': '测试 {what}',
  'plug.copy': '复制',
  'plug.copyLabel': '复制{what}',
  'plug.copied': '已复制',
  'plug.running': '正在测试…',
  'plug.pass': '可用（{ms} 毫秒）：',
  'plug.fail': '不可用：',
  'plug.request': '发送的请求',
  'plug.summary': (v) => `${v.done} 项检查中 ${v.passed} 项通过${v.done < v.total ? `（共 ${v.total} 项）` : ''}`,
  'plug.noDirection': '本服务器没有可测试的方向（测试样句有 zh、en、de、fr、es、ja）。',
  'plug.key.any': '任意文字：本服务器不需要令牌',
  'plug.key.token': '你的 API 令牌',
  'plug.field.url': '地址',
  'plug.field.key': 'API 密钥',
  'plug.field.model': '模型',
  'plug.field.path': 'API 路径',
  'plug.field.service': '服务',
  'plug.field.endpoint': 'apiEndpoint（仅 HTTPS）',
  'plug.why.unreachable': '请求未到达服务器（{error}）',
  'plug.why.status': 'HTTP {status}：{message}',
  'plug.why.noAnswer': '回答中没有译文（{path}）',
  'plug.why.expect': '{path} 是 {got}，插件需要 {want}',
  'plug.why.native': '服务器自己的翻译失败：{error}',
  'plug.why.differs': '译文“{got}”与服务器自己的译文“{want}”不同',
  'client.immersive': '沉浸式翻译 (Immersive Translate)',
  'client.kiss': '简约翻译 (Kiss Translator)',
  'client.pot': 'pot',
  'client.bob': 'Bob',
  'client.openai-translator': 'openai-translator',
  'client.hcfy': '划词翻译 (Selection Translator)',
  'client.zotero': 'Zotero PDF Translate',
  'client.deepl': 'DeepL SDK（deepl-node、deepl-python）',
  'client.google': 'Google Cloud Translation SDK',
  'client.libre': 'LibreTranslate 客户端',
  'client.deeplx': 'DeepLX 插件',
  'setup.immersive.custom': '自定义 API：设置 → 翻译服务 → 自定义 API，填入 API 地址',
  'setup.immersive.openai': 'OpenAI：其 OpenAI 服务，自定义 API 地址；保留默认提示词',
  'setup.kiss.custom': 'Custom：选项 → 翻译服务 → Custom，填入地址和密钥，不要钩子',
  'setup.kiss.openai': 'OpenAI：选项 → 翻译服务 → OpenAI；保留默认提示词',
  'setup.kiss.google': 'Google：选项 → 翻译服务 → Google，填入地址',
  'setup.kiss.deeplx': 'DeepLX：选项 → 翻译服务 → DeepLX',
  'setup.pot.openai': 'OpenAI：偏好设置 → 服务 → OpenAI，请求路径、密钥、模型',
  'setup.pot.deeplx': 'DeepLX：偏好设置 → 服务 → DeepL，类型 DeepLX，自定义地址',
  'setup.bob.openai': 'OpenAI Translator 插件：API 地址、API 密钥、自定义模型',
  'setup.bob.responses': '同一插件的新版本（Responses API）',
  'setup.bob.deeplx': 'DeepLX 插件（bob-plugin-deeplx）：填入地址',
  'setup.openai-translator.openai': '设置 → OpenAI：API 地址、API 路径、API 密钥，模型选“自定义”',
  'setup.hcfy.custom': '设置 → 自定义翻译源：填入地址，名称任意',
  'setup.zotero.libre': 'LibreTranslate：设置 → 服务 → LibreTranslate，填入地址；令牌作为密钥',
  'setup.zotero.deeplx': 'DeepLX(API)：设置 → 服务 → DeepLX(API)；地址填在密钥栏',
  'setup.deepl.sdk': 'serverUrl（deepl-node）或 server_url（deepl-python），以及密钥',
  'setup.google.v2': '@googleapis/translate：rootUrl；@google-cloud/translate：apiEndpoint（仅 HTTPS）；令牌作为 key',
  'setup.libre.api': 'npm 的 libretranslate 和 translate，以及任何 LibreTranslate 客户端：地址，令牌作为 API 密钥',
  'setup.libre.web': 'LibreTranslate 自己的网页，指向本服务器',
  'setup.deeplx.api': '任何带 DeepLX 服务的插件：填入地址',
};

export const STRINGS = { en: EN, zh: ZH };

function pick() {
  const saved = storageGet(KEYS.uiLang, '');
  if (STRINGS[saved]) return saved;
  const wanted = (typeof navigator !== 'undefined' && (navigator.languages || [navigator.language])) || [];
  for (const l of wanted) {
    const base = String(l).toLowerCase().split('-')[0];
    if (STRINGS[base]) return base;
  }
  return 'en';
}

let lang = pick();
const listeners = [];
const namers = {};

export function uiLang() { return lang; }

export function t(key, vars) {
  const v = (STRINGS[lang] && STRINGS[lang][key]) ?? EN[key];
  if (v === undefined) return key;
  if (typeof v === 'function') return v(vars || {});
  return v.replace(/\{(\w+)\}/g, (m, k) => {
    const x = vars && vars[k];
    if (x === undefined || x === null) return m;
    return typeof x === 'object' && x.key ? t(x.key, x.vars) : String(x);
  });
}

// A language's name in the interface language ("Chinese", "中文"); fallback (the
// server's name) or the code when the browser has no name for it.
export function langName(code, fallback) {
  if (!code) return fallback || '';
  if (!(lang in namers)) {
    try { namers[lang] = new Intl.DisplayNames([lang], { type: 'language' }); } catch { namers[lang] = null; }
  }
  try { return (namers[lang] && namers[lang].of(code)) || fallback || code; } catch { return fallback || code; }
}
const name = (code) => langName(code);

// Fills the elements that carry a key, and the page's own language.
export function applyStrings(root) {
  const r = root || document;
  document.documentElement.lang = lang;
  for (const el of r.querySelectorAll('[data-t]')) el.textContent = t(el.dataset.t);
  for (const [attr, data] of [['aria-label', 'tLabel'], ['title', 'tTitle'], ['placeholder', 'tPlaceholder']])
    for (const el of r.querySelectorAll(`[data-${data.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}]`)) el.setAttribute(attr, t(el.dataset[data]));
}

export function onLangChange(fn) { listeners.push(fn); }

export function setUiLang(l) {
  if (!STRINGS[l] || l === lang) return;
  lang = l;
  storageSet(KEYS.uiLang, l);
  applyStrings();
  for (const fn of listeners) fn(l);
}
