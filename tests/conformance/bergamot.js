// bergamot.js - drives the reference engine, the npm package
// @browsermt/bergamot-translator (WASM), from Node on local model files.
//
// Why it is done this way:
// - The package's package.json says "type": "module" while its
//   worker/translator-worker.js is CommonJS (it calls require()), so Node
//   refuses to load the worker in place. We copy the three worker files into
//   a scratch directory next to a package.json of {"type": "commonjs"} and
//   start the copy with worker_threads. Nothing of the package is committed.
// - The worker already emulates a WebWorker under Node (self, postMessage,
//   importScripts via eval, fetch of file: URLs for the .wasm), so we only
//   speak its message protocol: {id, name, args} -> {id, result | error},
//   with name one of initialize, loadTranslationModel, translate.
// - We bypass the package's model registry entirely: the model, shortlist and
//   vocabulary files are read here and handed over as ArrayBuffers.
//
// Settings (the worker adds its own: see loadTranslationModel in
// translator-worker.js): beam-size 1 (or opts.beam), normalize 1.0, word-penalty 0,
// skip-cost true, cpu-threads 0, gemm-precision from the model's tensor types;
// the worker then forces max-length-factor 2.0, max-length-break 128,
// mini-batch-words 1024, workspace 128, alignment soft. Per text we pass
// html false and qualityScores false (alignment false is fixed by the worker);
// the translation cache is off (cacheSize 0).
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {Worker} = require('node:worker_threads');

const PACKAGE = '@browsermt/bergamot-translator';
const WORKER_FILES = ['translator-worker.js', 'bergamot-translator-worker.js', 'bergamot-translator-worker.wasm'];
const LANG = {from: 'zh', to: 'en'};

// Marian binary type codes (common/types.h).
const TYPE_INTGEMM8 = 0x4101;

function packageDir() {
    let manifest;
    try {
        manifest = require.resolve(`${PACKAGE}/package.json`, {paths: [__dirname, process.cwd()]});
    } catch (err) {
        throw new Error(`${PACKAGE} is not installed (run npm ci at the repository root)`);
    }
    const dir = path.dirname(manifest);
    const version = JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
    if (version !== '0.4.9')
        throw new Error(`${manifest}: version ${version}, expected 0.4.9 (run npm ci at the repository root)`);
    return dir;
}

// Copies the worker files into workDir (created if needed) beside a CommonJS
// package.json; returns the path of the copied translator-worker.js.
function prepareWorkerDir(workDir) {
    const src = path.join(packageDir(), 'worker');
    fs.mkdirSync(workDir, {recursive: true});
    for (const name of WORKER_FILES)
        fs.copyFileSync(path.join(src, name), path.join(workDir, name));
    fs.writeFileSync(path.join(workDir, 'package.json'), '{"type": "commonjs"}\n');
    return path.join(workDir, 'translator-worker.js');
}

function findOne(dir, re, what, optional) {
    let names;
    try {
        names = fs.readdirSync(dir).filter(n => re.test(n)).sort();
    } catch (err) {
        throw new Error(`${dir}: cannot read model directory: ${err.message}`);
    }
    if (names.length > 1)
        throw new Error(`${dir}: more than one ${what} (${names.join(', ')})`);
    if (names.length === 0) {
        if (optional)
            return null;
        throw new Error(`${dir}: no ${what} found`);
    }
    return path.join(dir, names[0]);
}

// Finds the model files in dir the way fy_model_discover does: model.*.bin,
// lex.*.s2t.bin (optional), vocab.*.spm or srcvocab.*.spm + trgvocab.*.spm.
function discoverModel(dir) {
    const files = {
        model: findOne(dir, /^model\..*\.bin$/, 'model.*.bin'),
        shortlist: findOne(dir, /^lex\..*\.s2t\.bin$/, 'lex.*.s2t.bin', true),
    };
    const shared = findOne(dir, /^vocab\..*\.spm$/, 'vocab.*.spm', true);
    if (shared) {
        files.vocabs = [shared];
    } else {
        files.vocabs = [findOne(dir, /^srcvocab\..*\.spm$/, 'srcvocab.*.spm or vocab.*.spm'),
                        findOne(dir, /^trgvocab\..*\.spm$/, 'trgvocab.*.spm')];
    }
    return files;
}

// Reads the tensor headers of a Marian binary model (version 1) and returns
// [{name, type}]. Only as much validation as choosing a precision needs.
function readTensorTypes(buf, file) {
    const bad = what => new Error(`${file}: not a Marian binary model (${what})`);
    if (buf.length < 16)
        throw bad('too short');
    if (buf.readBigUInt64LE(0) !== 1n)
        throw bad('version is not 1');
    const n = Number(buf.readBigUInt64LE(8));
    let pos = 16 + 32 * n;
    if (n <= 0 || pos > buf.length)
        throw bad('bad tensor count');
    const out = [];
    for (let i = 0; i < n; i++) {
        const h = 16 + 32 * i;
        const nameLen = Number(buf.readBigUInt64LE(h));
        if (nameLen < 1 || pos + nameLen > buf.length)
            throw bad(`bad name length in header ${i}`);
        out.push({name: buf.toString('latin1', pos, pos + nameLen - 1), type: Number(buf.readBigUInt64LE(h + 8))});
        pos += nameLen;
    }
    return out;
}

// gemm-precision for a model: int8shiftAlphaAll when the weights are intgemm8
// with activation scales (*_QuantMultA), int8shiftAll when without scales,
// float32 otherwise.
function choosePrecision(tensors) {
    if (!tensors.some(t => t.type === TYPE_INTGEMM8))
        return 'float32';
    return tensors.some(t => t.name.endsWith('_QuantMultA')) ? 'int8shiftAlphaAll' : 'int8shiftAll';
}

function toArrayBuffer(buf) {
    return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

class Reference {
    // Use Reference.open().
    constructor(worker, workDir, ownsWorkDir) {
        this.worker = worker;
        this.workDir = workDir;
        this.ownsWorkDir = ownsWorkDir;
        this.nextId = 1;
        this.pending = new Map();
        this.failure = null;
        worker.on('message', ({id, result, error}) => {
            const call = this.pending.get(id);
            if (!call)
                return;
            this.pending.delete(id);
            if (error)
                call.reject(new Error(`reference worker: ${error.name}: ${error.message}`));
            else
                call.accept(result);
        });
        const fail = err => {
            this.failure = err;
            for (const call of this.pending.values())
                call.reject(err);
            this.pending.clear();
        };
        worker.on('error', err => fail(new Error(`reference worker crashed: ${err && err.message || err}`)));
        worker.on('exit', code => fail(new Error(`reference worker exited (code ${code})`)));
    }

    call(name, ...args) {
        if (this.failure)
            return Promise.reject(this.failure);
        const id = this.nextId++;
        return new Promise((accept, reject) => {
            this.pending.set(id, {accept, reject});
            this.worker.postMessage({id, name, args});
        });
    }

    // Starts the worker and the WASM runtime. opts.workDir: where to copy the
    // worker files (default: a fresh temporary directory removed by close()).
    static async open(opts = {}) {
        const ownsWorkDir = !opts.workDir;
        const workDir = opts.workDir || fs.mkdtempSync(path.join(os.tmpdir(), 'fanyi-bergamot-'));
        let script;
        try {
            script = prepareWorkerDir(workDir);
        } catch (err) {
            if (ownsWorkDir)
                fs.rmSync(workDir, {recursive: true, force: true});
            throw err;
        }
        // The emscripten glue prints to stdout/stderr; keep stdout for results.
        const worker = new Worker(script, {stdout: true, stderr: false});
        worker.stdout.on('data', chunk => process.stderr.write(chunk));
        const ref = new Reference(worker, workDir, ownsWorkDir);
        try {
            await ref.call('initialize', {cacheSize: 0, useNativeIntGemm: false});
        } catch (err) {
            await ref.close();
            throw err;
        }
        return ref;
    }

    // Loads the model in dir. opts.shortlist (default true) uses lex.*.s2t.bin
    // when present; opts.precision overrides the gemm-precision chosen from the
    // model's tensor types; opts.beam (default 1) is the beam-size (the
    // reference then returns the best of its n-best list). Returns {files,
    // precision, config}.
    async loadModel(dir, opts = {}) {
        const files = discoverModel(dir);
        const model = fs.readFileSync(files.model);
        const precision = opts.precision || choosePrecision(readTensorTypes(model, files.model));
        const useShortlist = opts.shortlist !== false && files.shortlist !== null;
        const beam = opts.beam || 1;
        if (!Number.isInteger(beam) || beam < 1)
            throw new Error(`beam-size ${beam}: expected a positive whole number`);
        const config = {
            'beam-size': String(beam),
            'normalize': '1.0',
            'word-penalty': '0',
            'skip-cost': 'true',
            'cpu-threads': '0',
            'gemm-precision': precision,
        };
        await this.call('loadTranslationModel', LANG, {
            model: toArrayBuffer(model),
            shortlist: useShortlist ? toArrayBuffer(fs.readFileSync(files.shortlist)) : new ArrayBuffer(0),
            vocabs: files.vocabs.map(f => toArrayBuffer(fs.readFileSync(f))),
            config,
        });
        return {files, precision, shortlist: useShortlist ? files.shortlist : null, config};
    }

    // Translates texts in one call (the engine splits and batches them itself)
    // and returns the translated strings.
    async translate(texts) {
        const result = await this.call('translate', {
            models: [LANG],
            texts: texts.map(text => ({text, html: false, qualityScores: false})),
        });
        return result.map(r => r.target.text);
    }

    async close() {
        if (this.worker) {
            this.worker.removeAllListeners('exit');
            await this.worker.terminate();
            this.worker = null;
        }
        if (this.ownsWorkDir)
            fs.rmSync(this.workDir, {recursive: true, force: true});
    }
}

module.exports = {Reference, discoverModel, readTensorTypes, choosePrecision, packageDir};
