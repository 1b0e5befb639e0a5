#!/usr/bin/env node
// eos_model.js - a copy of a model directory whose output bias for the
// target EOS token is raised by DELTA, so that hypotheses end at all
// lengths (random weights seldom choose EOS: without it every hypothesis of
// a beam runs to the length limit, and the beam never shrinks).
//
//   node eos_model.js --from DIR --to DIR [--delta 8]
//
// The other files are copied as they are. The EOS id is the line of "</s>"
// in the target vocabulary (Debian's spm_export_vocab). Tensor data follows
// the headers, names, shapes and padding (Marian binary format version 1,
// src/model/marian.h); only decoder_ff_logit_out_b[eos] changes.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const {spawnSync} = require('node:child_process');
const {discoverModel} = require('./bergamot.js');

function parseArgs(argv) {
    const o = {from: null, to: null, delta: 8};
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (i + 1 >= argv.length)
            throw new Error(`option ${a} needs a value`);
        const v = argv[++i];
        if (a === '--from')
            o.from = v;
        else if (a === '--to')
            o.to = v;
        else if (a === '--delta')
            o.delta = Number(v);
        else
            throw new Error(`unknown option ${a}`);
    }
    if (!o.from || !o.to || !Number.isFinite(o.delta))
        throw new Error('usage: node eos_model.js --from DIR --to DIR [--delta 8]');
    return o;
}

function eosId(vocab) {
    const r = spawnSync('spm_export_vocab', [`--model=${vocab}`], {encoding: 'utf8', maxBuffer: 1 << 28});
    if (r.error || r.status !== 0)
        throw new Error(`spm_export_vocab ${vocab}: ${r.error ? r.error.message : r.stderr.trim()}`);
    const id = r.stdout.split('\n').findIndex(l => l.split('\t')[0] === '</s>');
    if (id < 0)
        throw new Error(`${vocab}: no </s> piece`);
    return id;
}

// Byte offset of tensor name's data in a Marian binary model.
function tensorOffset(buf, name, file) {
    const n = Number(buf.readBigUInt64LE(8));
    let pos = 16 + 32 * n, shapes = 0;
    const heads = [];
    for (let i = 0; i < n; i++) {
        const h = 16 + 32 * i;
        const len = Number(buf.readBigUInt64LE(h));
        heads.push({name: buf.toString('latin1', pos, pos + len - 1), bytes: Number(buf.readBigUInt64LE(h + 24))});
        shapes += Number(buf.readBigUInt64LE(h + 16));
        pos += len;
    }
    pos += 4 * shapes;
    const pad = Number(buf.readBigUInt64LE(pos));
    pos += 8 + pad;
    for (const h of heads) {
        if (h.name === name)
            return pos;
        pos += h.bytes;
    }
    throw new Error(`${file}: no tensor ${name}`);
}

function main() {
    const o = parseArgs(process.argv.slice(2));
    const files = discoverModel(path.resolve(o.from));
    const eos = eosId(files.vocabs[files.vocabs.length - 1]);
    fs.mkdirSync(o.to, {recursive: true});
    for (const name of fs.readdirSync(o.from))
        if (fs.statSync(path.join(o.from, name)).isFile())
            fs.copyFileSync(path.join(o.from, name), path.join(o.to, name));
    const target = path.join(o.to, path.basename(files.model));
    const buf = fs.readFileSync(target);
    const at = tensorOffset(buf, 'decoder_ff_logit_out_b', target) + 4 * eos;
    buf.writeFloatLE(buf.readFloatLE(at) + o.delta, at);
    fs.writeFileSync(target, buf);
}

try {
    main();
} catch (err) {
    process.stderr.write(`eos_model: ${err.message}\n`);
    process.exitCode = 1;
}
