// test_openai.js - the official `openai` Node SDK (6.49.0, pinned) with
// baseURL http://127.0.0.1:PORT/v1 against `fanyi serve`: models.list,
// chat.completions.create plain and streamed (its own chunk parser,
// usage with stream_options), responses.create plain and streamed (Bob),
// with the prompts openai-translator, pot-desktop and Bob build (their
// templates, tests/server/test_prompt.c has every version), and its error
// classes for what is not a translation prompt. The plug-ins' default model
// names (gpt-4o-mini, gpt-3.5-turbo) are served as "fanyi" and echoed,
// unless --openai-models strict.
'use strict';
const { default: OpenAI, BadRequestError, NotFoundError, AuthenticationError } = require('openai');
const { run, T, ZH, EN } = require('./serve_clients2');

const POT_SYSTEM = 'You are a professional translation engine, please translate the text into a colloquial, ' +
  'professional, elegant and fluent content, without the style of machine translation. You must only ' +
  'translate the text content, never interpret it.';
const BOB_SYSTEM = 'You are a translation engine that can only translate text and cannot interpret it.';

async function chat(client, s) {
  const models = [];
  for await (const m of client.models.list()) models.push(m.id);
  T.eq(models.sort(), ['en-zh', 'fanyi', 'zh-en'], 'models.list: "fanyi" and one id per direction');

  // openai-translator (2024): one user message.
  const want0 = await s.native(ZH[0], { target: 'en' });
  const c = await client.chat.completions.create({
    model: 'fanyi', temperature: 0, stream: false,
    messages: [{ role: 'user', content: `Only reply the translated result and nothing else. Please translate to English:\n\n${ZH[0]}` }],
  });
  T.eq([c.object, c.choices.length, c.choices[0].message.role, c.choices[0].finish_reason],
    ['chat.completion', 1, 'assistant', 'stop'], 'chat.completion shape');
  T.eq(c.choices[0].message.content, want0, 'openai-translator prompt translated');
  T.ok(c.usage.prompt_tokens > 0 && c.usage.completion_tokens > 0 &&
    c.usage.total_tokens === c.usage.prompt_tokens + c.usage.completion_tokens, `usage counts ${JSON.stringify(c.usage)}`);
  T.eq(c.model, 'fanyi', 'the model echoed');

  // pot-desktop: system prompt, then Translate into …:\n"""…""", streamed.
  const want1 = await s.native(EN[0], { target: 'zh' });
  const stream = await client.chat.completions.create({
    model: 'en-zh', stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'system', content: POT_SYSTEM },
      { role: 'user', content: `Translate into Simplified Chinese:\n"""\n${EN[0]}\n"""` }],
  });
  let text = '', finish = null, usage = null, chunks = 0, ids = new Set();
  for await (const chunk of stream) {
    chunks++;
    ids.add(chunk.id);
    T.ok(chunk.object === 'chat.completion.chunk', `chunk object ${chunk.object}`);
    if (chunk.usage) usage = chunk.usage;
    for (const ch of chunk.choices) {
      if (ch.delta.content) text += ch.delta.content;
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  T.eq(text, want1, 'pot-desktop prompt, streamed: the chunks make the translation');
  T.eq([finish, ids.size, chunks >= 3], ['stop', 1, true], 'stream: one id, finish_reason stop');
  T.ok(usage && usage.completion_tokens > 0, `stream_options.include_usage: ${JSON.stringify(usage)}`);

  // Bob (chat): translate from zh-CN to en.
  const b = await client.chat.completions.create({
    model: 'zh-en',
    messages: [{ role: 'system', content: BOB_SYSTEM }, { role: 'user', content: `translate from zh-CN to en:\n\n${ZH[1]}` }],
  });
  T.eq(b.choices[0].message.content, await s.native(ZH[1], { source: 'zh', target: 'en' }), 'Bob prompt (chat)');

  // Not a translation prompt: 400 in OpenAI's shape, never a guess.
  await T.throws(() => client.chat.completions.create({
    model: 'fanyi', messages: [{ role: 'user', content: 'Hello, how are you?' }],
  }), (e) => e instanceof BadRequestError && e.status === 400 && /translation prompt/.test(e.message) &&
    e.type === 'invalid_request_error', 'a chat message: BadRequestError');
  // The plug-ins' default model names work out of the box: any name this
  // server does not know is served as "fanyi" (the prompt says the
  // direction), and the answer echoes it.
  const want2 = await s.native(ZH[0], { target: 'en' });
  for (const model of ['gpt-4o-mini', 'gpt-3.5-turbo', 'ja-en']) {
    const d = await client.chat.completions.create({
      model, messages: [{ role: 'user', content: `Translate into English:\n"""\n${ZH[0]}\n"""` }],
    });
    T.eq([d.model, d.choices[0].message.content], [model, want2], `model "${model}": served as fanyi, echoed`);
  }
  const ds = await client.chat.completions.create({
    model: 'gpt-4o-mini', stream: true,
    messages: [{ role: 'user', content: `Translate into English:\n"""\n${ZH[0]}\n"""` }],
  });
  let streamed = '', streamModel = null;
  for await (const chunk of ds) {
    streamModel = chunk.model;
    for (const ch of chunk.choices) if (ch.delta.content) streamed += ch.delta.content;
  }
  T.eq([streamModel, streamed], ['gpt-4o-mini', want2], 'model "gpt-4o-mini" streamed');
  await T.throws(() => client.chat.completions.create({
    model: 'en-zh', messages: [{ role: 'user', content: `Translate into English:\n"""\n${ZH[0]}\n"""` }],
  }), (e) => e instanceof BadRequestError && /en-zh/.test(e.message), 'a model of another direction than the prompt');
}

async function responses(client, s) {
  // Bob's OpenAI plug-in calls the Responses API with instructions and input.
  const want = await s.native(EN[1], { source: 'en', target: 'zh' });
  const r = await client.responses.create({
    model: 'fanyi', instructions: BOB_SYSTEM, input: `translate from en to zh-CN:\n\n${EN[1]}`,
  });
  T.eq([r.object, r.status, r.output_text], ['response', 'completed', want], 'responses.create: output_text');
  T.ok(r.usage.input_tokens > 0 && r.usage.output_tokens > 0, 'responses usage');
  const r2 = await client.responses.create({
    model: 'fanyi', input: [{ role: 'system', content: BOB_SYSTEM },
      { role: 'user', content: [{ type: 'input_text', text: `translate from auto to en:\n\n${ZH[2]}` }] }],
  });
  T.eq(r2.output_text, await s.native(ZH[2], { target: 'en' }), 'responses.create with input messages');
  const stream = await client.responses.create({
    model: 'fanyi', stream: true, input: `translate from en to zh-CN:\n\n${EN[1]}`,
  });
  let delta = '', done = null;
  const types = [];
  for await (const e of stream) {
    types.push(e.type);
    if (e.type === 'response.output_text.delta') delta += e.delta;
    if (e.type === 'response.completed') done = e.response;
  }
  T.eq([types[0], types[types.length - 1]], ['response.created', 'response.completed'], 'responses stream events');
  T.eq([delta, done && done.status, done && done.output[0].content[0].text], [want, 'completed', want],
    'responses stream: deltas and the final response');
  await T.throws(() => client.responses.create({ model: 'fanyi', input: 'Write me a poem.' }),
    (e) => e instanceof BadRequestError, 'responses: not a translation prompt');
}

run(async (serve) => {
  const s = await serve();
  const client = new OpenAI({ baseURL: `${s.base}/v1`, apiKey: 'unused', maxRetries: 0 });
  await chat(client, s);
  await responses(client, s);

  // With --api-token the SDK's key is the bearer token.
  const k = await serve({ args: ['--api-token', 'sk-fanyi'] });
  const good = new OpenAI({ baseURL: `${k.base}/v1`, apiKey: 'sk-fanyi', maxRetries: 0 });
  const c = await good.chat.completions.create({
    model: 'fanyi', messages: [{ role: 'user', content: `Translate into English:\n"""\n${ZH[2]}\n"""` }],
  });
  T.eq(c.choices[0].message.content, await k.native(ZH[2], { target: 'en' }), 'apiKey as the token');
  const bad = new OpenAI({ baseURL: `${k.base}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await T.throws(() => bad.chat.completions.create({
    model: 'fanyi', messages: [{ role: 'user', content: `Translate into English:\n"""\n${ZH[2]}\n"""` }],
  }), (e) => e instanceof AuthenticationError || e.status === 403, 'a wrong key: an authentication error');
  // Listing models needs no key, as listing languages does on every dialect.
  const listed = [];
  for await (const m of bad.models.list()) listed.push(m.id);
  T.ok(listed.includes('fanyi'), 'models.list without the key');

  // --openai-models strict: only the names /v1/models lists.
  const st = await serve({ args: ['--openai-models', 'strict'] });
  const strict = new OpenAI({ baseURL: `${st.base}/v1`, apiKey: 'unused', maxRetries: 0 });
  await T.throws(() => strict.chat.completions.create({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: `Translate into English:\n"""\n${ZH[0]}\n"""` }],
  }), (e) => e instanceof NotFoundError && e.code === 'model_not_found', 'strict: an unknown model is a NotFoundError');
  const f = await strict.chat.completions.create({
    model: 'fanyi', messages: [{ role: 'user', content: `Translate into English:\n"""\n${ZH[0]}\n"""` }],
  });
  T.eq(f.choices[0].message.content, await st.native(ZH[0], { target: 'en' }), 'strict: "fanyi" still works');
  const strictModels = [];
  for await (const m of strict.models.list()) strictModels.push(m.id);
  T.eq(strictModels.sort(), ['en-zh', 'fanyi', 'zh-en'], 'strict: models.list unchanged');
});
