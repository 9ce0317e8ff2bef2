/* worker.js — the Web Worker of the live page (make web): the engine runs
 * here, so that a long sentence never freezes the page.
 *
 * The page builds this worker's script from two parts, one after the
 * other: build/web/engine.js (web/wasm_main.c and the project's C code,
 * compiled by emcc with the .wasm embedded, -sSINGLE_FILE=1) and this
 * file.  Messages, page → worker:
 *   {type: 'load', slot, config, files: [{path, bytes}]}   a model's files
 *   {type: 'translate', id, slot, text, explain}
 * and worker → page:
 *   {type: 'loaded', slot, reply, ms}, {type: 'busy', id},
 *   {type: 'progress', step, limit}   after each decoding step (wasm_main.c)
 *   {type: 'result', id, reply, ms}    reply: the JSON text wasm_main.c returns
 * Requests are handled in order; none starts before the runtime is ready. */
'use strict';

const engine = Module;
const engineReady = new Promise((resolve) => {
    if (engine.calledRun) resolve();
    else engine.onRuntimeInitialized = resolve;
});
let queue = engineReady;

/* Write `bytes` at `path` in the engine's in-memory file system, making
 * its folders ("/configs/../weights/x" needs /configs and /weights). */
function writeFile(path, bytes) {
    const parts = path.split('/').filter((p) => p && p !== '.');
    let dir = '';
    for (const part of parts.slice(0, -1)) {
        if (part === '..') { dir = dir.slice(0, dir.lastIndexOf('/')); continue; }
        dir += '/' + part;
        if (!engine.FS.analyzePath(dir).exists) engine.FS.mkdir(dir);
    }
    engine.FS.writeFile(path, new Uint8Array(bytes));
}

function handle(msg) {
    const t0 = performance.now();
    if (msg.type === 'load') {
        for (const f of msg.files) writeFile(f.path, f.bytes);
        const reply = engine.ccall('web_open', 'string', ['number', 'string'], [msg.slot, msg.config]);
        postMessage({ type: 'loaded', slot: msg.slot, reply, ms: performance.now() - t0 });
    } else if (msg.type === 'translate') {
        postMessage({ type: 'busy', id: msg.id });
        const reply = engine.ccall('web_translate', 'string', ['number', 'string', 'number'],
            [msg.slot, msg.text, msg.explain ? 1 : 0]);
        postMessage({ type: 'result', id: msg.id, reply, ms: performance.now() - t0 });
    }
}

/* A request that throws (the engine ran out of memory, say) is answered
 * with its error, and the next ones are still handled: a rejected `queue`
 * skipped every later request without a reply, and the page waited for
 * them for ever. */
function handleOrSay(msg) {
    try {
        handle(msg);
    } catch (error) {
        const reply = JSON.stringify({ status: 5, error: `the engine failed: ${error.message || error}` });
        if (msg.type === 'load') postMessage({ type: 'loaded', slot: msg.slot, reply, ms: 0 });
        else postMessage({ type: 'result', id: msg.id, reply, ms: 0 });
    }
}

onmessage = (e) => { queue = queue.then(() => handleOrSay(e.data)); };
