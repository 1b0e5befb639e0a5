#!/usr/bin/env node
// test_output_scale.js - which activation scale the int8 output layer uses,
// measured against the reference engine (bergamot-translator 0.4.9, WASM).
//
//   node test_output_scale.js     (FANYI_BIN, FANYI_BUILD_DIR, FANYI_SOURCE_DIR set;
//                                  needs the synth_models fixture's vocabularies)
//
// An int8 file can hold two candidates for the tied output layer's scale:
// none_QuantMultA and Wemb_QuantMultA (decoder_Wemb_QuantMultA with separate
// vocabularies). For each layout - shared or separate vocabularies, with or
// without a shortlist - this writes tiny models whose candidates have
// different values (A: none x1, wemb x0.1; B: none x0.1, wemb x1) and checks:
//  - the reference's outputs on A and B differ (so the values matter), and
//    fanyi's equal the reference's on both: an engine reading the other
//    candidate would translate A as the reference translates B;
//  - without the wemb-named scale the reference aborts naming it and fanyi
//    refuses the model naming it; without none_QuantMultA both translate.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const {spawnSync} = require('node:child_process');
const {Reference} = require('./bergamot.js');
const {parseGapOutput, usable, comparable, evenlySpaced} = require('./conformance.js');

const LINES = 40;
const MAX_GAP = 1e-4;

let passed = 0;
let failed = 0;

function check(cond, what) {
    if (cond) {
        passed++;
    } else {
        failed++;
        console.log(`FAIL: ${what}`);
    }
}

function env(name) {
    const v = process.env[name];
    if (!v)
        throw new Error(`${name} must be set`);
    return v;
}

function synth(dir, layout, scales) {
    const fixture = path.join(env('FANYI_BUILD_DIR'), 'models');
    const args = ['model', 'synth', '--preset', 'tiny', '--int8', '--seed', '3', '--out', dir,
                  '--output-scales', scales];
    if (layout.separate)
        args.push('--separate-vocab', '--src-vocab', path.join(fixture, 'srcvocab.zhen.spm'),
                  '--trg-vocab', path.join(fixture, 'trgvocab.zhen.spm'));
    else
        args.push('--vocab', path.join(fixture, 'vocab.zhen.spm'));
    if (layout.shortlist)
        args.push('--shortlist');
    fs.rmSync(dir, {recursive: true, force: true});
    const r = spawnSync(env('FANYI_BIN'), args, {encoding: 'utf8'});
    if (r.status !== 0)
        throw new Error(`fanyi ${args.join(' ')}: ${r.stderr.trim()}`);
    return dir;
}

async function reference(dir, lines) {
    const ref = await Reference.open({workDir: path.join(env('FANYI_BUILD_DIR'), 'conformance-worker', 'output-scale')});
    try {
        await ref.loadModel(dir);
        const out = [];
        for (const line of lines)
            out.push((await ref.translate([line]))[0]);
        return {outputs: out};
    } catch (err) {
        return {error: err.message};
    } finally {
        await ref.close();
    }
}

function fanyi(dir, lines) {
    const r = spawnSync(env('FANYI_BIN'), ['translate', '--model', dir, '--raw', '--min-gap'],
                        {input: lines.join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 26});
    if (r.status !== 0)
        return {error: r.stderr.trim(), status: r.status};
    return {recs: parseGapOutput(r.stdout, lines.length)};
}

// Every line identical (after the control characters fanyi drops from every
// output: comparable()), or a measured near-tie.
function agree(what, ref, ours, lines) {
    if (ref.error || ours.error) {
        check(false, `${what}: ${ref.error || ours.error}`);
        return;
    }
    const differs = i => ours.recs[i].text !== comparable(ref.outputs[i]);
    const bad = lines.map((_, i) => i).filter(i => differs(i) && !(ours.recs[i].gap < MAX_GAP));
    const same = lines.length - lines.filter((_, i) => differs(i)).length;
    console.log(`${what}: ${same} of ${lines.length} lines identical to the reference`);
    check(bad.length === 0, `${what}: ${bad.length} lines differ from the reference (first: line ${bad[0] + 1})`);
}

async function testLayout(layout, lines, root) {
    const name = `${layout.separate ? 'separate' : 'shared'}${layout.shortlist ? '-shortlist' : ''}`;
    const wemb = layout.separate ? 'decoder_Wemb_QuantMultA' : 'Wemb_QuantMultA';
    const a = synth(path.join(root, `${name}-a`), layout, 'none=1,wemb=0.1');
    const b = synth(path.join(root, `${name}-b`), layout, 'none=0.1,wemb=1');
    const refA = await reference(a, lines);
    const refB = await reference(b, lines);
    check(!refA.error && !refB.error, `${name}: reference failed: ${refA.error || refB.error}`);
    if (!refA.error && !refB.error) {
        const differ = lines.filter((_, i) => refA.outputs[i] !== refB.outputs[i]).length;
        console.log(`${name}: the reference translates ${differ} of ${lines.length} lines differently when the scales change`);
        check(differ > 0, `${name}: the scales' values do not change the reference's outputs`);
    }
    agree(`${name} A (none x1, wemb x0.1)`, refA, fanyi(a, lines), lines);
    agree(`${name} B (none x0.1, wemb x1)`, refB, fanyi(b, lines), lines);

    const few = lines.slice(0, 3);
    const noWemb = synth(path.join(root, `${name}-none-only`), layout, 'none');
    const r = await reference(noWemb, few);
    check(r.error && r.error.includes('Aborted'), `${name} without ${wemb}: the reference did not abort`);
    const o = fanyi(noWemb, few);
    check(o.status === 1 && o.error.includes(`'${wemb}'`) && !o.error.includes('\n'),
          `${name} without ${wemb}: fanyi should refuse the model in one line naming it, got ${JSON.stringify(o)}`);
    const noNone = synth(path.join(root, `${name}-wemb-only`), layout, 'wemb');
    agree(`${name} without none_QuantMultA`, await reference(noNone, few), fanyi(noNone, few), few);
}

async function main() {
    const text = path.join(env('FANYI_SOURCE_DIR'), 'tests/data/text/zh_conformance.txt');
    const all = fs.readFileSync(text, 'utf8').split('\n').map(l => l.trim()).filter(l => usable(l, 'zh'));
    const lines = evenlySpaced(all, LINES);
    if (lines.length < LINES)
        throw new Error(`${text}: only ${lines.length} usable lines, need ${LINES}`);
    const root = path.join(env('FANYI_BUILD_DIR'), 'output-scale-models');
    for (const separate of [false, true])
        for (const shortlist of [false, true])
            await testLayout({separate, shortlist}, lines, root);
    fs.rmSync(root, {recursive: true, force: true});
    console.log(`${passed} passed, ${failed} failed`);
    return failed ? 1 : 0;
}

main().then(code => {
    process.exitCode = code;
}, err => {
    process.stderr.write(`test_output_scale: ${err.message}\n`);
    process.exitCode = 1;
});
