// serve_clients1.js - what the DeepL, DeepLX and Google client tests share:
// a models directory with the synthetic zh-en and en-zh models (fixture
// synth_models), the real `fanyi serve` on a free loopback port, a test CA
// and server certificate made with openssl, and counted checks.
//
//   const { Checks, makeModels, serve } = require('./serve_clients1');
//   const T = new Checks();
//   const s = await serve(['--threads', '1']);
//   T.eq(await something(s.url), want, 'what');
//   await s.stop(T);
//   T.finish();
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const BIN = process.env.FANYI_BIN;
const BUILD = process.env.FANYI_BUILD_DIR;
if (!BIN || !BUILD) {
  console.error('FANYI_BIN and FANYI_BUILD_DIR must be set (run through ctest)');
  process.exit(2);
}

class Checks {
  constructor() {
    this.passed = 0;
    this.failed = 0;
  }

  ok(cond, what) {
    if (cond) this.passed++;
    else {
      this.failed++;
      console.error(`FAIL: ${what}`);
    }
    return cond;
  }

  eq(got, want, what) {
    const g = JSON.stringify(got), w = JSON.stringify(want);
    return this.ok(g === w, `${what}: got ${g}, want ${w}`);
  }

  // Runs fn, which must throw (reject); returns the error (or null).
  async throws(fn, what) {
    try {
      await fn();
    } catch (e) {
      this.passed++;
      return e;
    }
    this.ok(false, `${what}: no error`);
    return null;
  }

  finish() {
    console.log(`${this.passed} passed, ${this.failed} failed`);
    process.exit(this.failed || !this.passed ? 1 : 0);
  }
}

// A temporary models directory: zh-en (tiny-int8-sl) and en-zh
// (firefox-en-zh), symbolic links into the fixture's models.
function makeModels() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-clients-'));
  const models = path.join(BUILD, 'models');
  fs.symlinkSync(path.join(models, 'tiny-int8-sl'), path.join(dir, 'zh-en'));
  fs.symlinkSync(path.join(models, 'firefox-en-zh'), path.join(dir, 'en-zh'));
  return dir;
}

// A CA and a server certificate for 127.0.0.1 signed by it, in a new
// directory: ca.pem, cert.pem, key.pem (and other.pem/other-key.pem: a
// second, self-signed certificate no client trusts).
function makeCerts() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-tls-'));
  const ssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem',
    '-days', '2', '-subj', '/CN=Fanyi test CA');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.csr', '-subj',
    '/CN=127.0.0.1');
  fs.writeFileSync(path.join(dir, 'ext.cnf'),
    'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  ssl('x509', '-req', '-in', 'cert.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem',
    '-CAcreateserial', '-out', 'cert.pem', '-days', '2', '-extfile', 'ext.cnf');
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other-key.pem', '-out',
    'other.pem', '-days', '2', '-subj', '/CN=127.0.0.1', '-addext',
    'subjectAltName=IP:127.0.0.1');
  return dir;
}

// `fanyi serve --port 0 --models DIR ARGS` until stop(): resolves once its
// ready line is printed, with {url, port, log(), stop(T)}.
function serve(args = [], { models } = {}) {
  const dir = models || makeModels();
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FANYI_')) env[k] = v;
  // Document jobs are kept under a data directory of its own, removed with it.
  const data = args.includes('--data-dir') ? null
    : fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-data-'));
  const proc = spawn(BIN, ['serve', '--port', '0', '--models', dir, '--timeout-ms', '600000',
    ...(data ? ['--data-dir', data] : []), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (d) => { log += d; });
  return new Promise((resolve, reject) => {
    let out = '';
    const fail = (why) => reject(new Error(`fanyi serve did not start: ${why}\n${log}`));
    proc.on('exit', (code) => fail(`exit ${code}`));
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (https?):\/\/127\.0\.0\.1:(\d+) /.exec(out);
      if (!m) return;
      proc.removeAllListeners('exit');
      const port = Number(m[2]);
      resolve({
        port,
        url: `${m[1]}://127.0.0.1:${port}`,
        log: () => log,
        // SIGTERM and wait; the exit status must be 0 (sanitizer builds
        // report leaks through it).
        stop: (T) => new Promise((done) => {
          proc.on('exit', (code, sig) => {
            if (!T.eq([code, sig], [0, null], 'fanyi serve exit status after SIGTERM'))
              console.error(log.slice(-3000));
            if (!models) fs.rmSync(dir, { recursive: true, force: true });
            if (data) fs.rmSync(data, { recursive: true, force: true });
            done();
          });
          proc.kill('SIGTERM');
        }),
      });
    });
  });
}

// The native API's translation of text into target (what every dialect's
// answer must equal). One without visible text (a sentence the synthetic model
// turns into nothing) would let an answer that lost the text pass: an error.
async function native(url, text, target, extra = {}) {
  const r = await fetch(`${url}/translate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(extra.headers || {}) },
    body: JSON.stringify({ text, target, ...(extra.body || {}) }),
  });
  const b = await r.json();
  if (r.status !== 200) throw new Error(`native /translate ${r.status}: ${JSON.stringify(b)}`);
  if (!visible(b.translation) && visible(text)) {
    throw new Error(`native /translate of ${JSON.stringify(text)} has no visible text ` +
      `(${JSON.stringify(b.translation)}): pick a sentence with visible output`);
  }
  return b.translation;
}

// Whether a text (or markup) has something to read: not only tags and white space.
function visible(text) {
  return typeof text === 'string' && text.replace(/<[^>]*>/g, '').trim() !== '';
}

// `fanyi translate --raw` of one line (each line one sentence, unsplit).
function cliRaw(models, text, from, to) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FANYI_')) env[k] = v;
  const out = execFileSync(BIN, ['translate', '--models', models, '--from', from, '--to', to,
    '--raw'], { input: `${text}\n`, env, encoding: 'utf8' });
  return out.replace(/\n$/, '');
}

module.exports = { Checks, makeModels, makeCerts, serve, native, cliRaw, BIN, BUILD };
