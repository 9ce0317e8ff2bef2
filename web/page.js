/* page.js — the live page of make web: type a sentence, see it translated
 * and every attention head of the translation, in the viewer of
 * app/viewer/ (this script runs right after viewer.js, in the same
 * <script>, and drives it through window.viewer).
 *
 * The model runs in a Web Worker (web/worker.js + build/web/engine.js, the
 * project's C code compiled to WebAssembly), so the page never freezes.
 * The page embeds (web/mkpage.c), before this script:
 *   #web-worker   the worker's script, in base64
 *   #web-models   JSON: for each model its name, languages, config path
 *                 and files [{path, id, bytes}]
 * and after it, while this script already runs:
 *   .web-file     one element per file, its bytes in base64, a model's
 *                 four followed by a 'web-model-parsed' event (its slot)
 * A model's files are decoded and handed to the worker the first time a
 * sentence needs it, once the browser has parsed them.  Nothing is
 * fetched: the worker is a blob: URL.
 *
 * What the page writes for tests/test_browser.c: #web-status attributes
 * (data-results, data-translation, data-first-ms, data-ms, data-progress:
 * the step messages the last translation sent, data-model-ready-by: what
 * told the page its model's files were parsed, 'event' or 'document'), and
 * window.webTranslate(text, direction), a promise of the reply once the
 * viewer shows it.  #text=...&dir=zh-en (or &seed) in the address
 * translates at start; &still turns off the token-by-token replay. */
'use strict';

(function () {
    const models = JSON.parse(document.getElementById('web-models').textContent);
    const byName = Object.create(null); /* no prototype: #dir=constructor names no model */
    models.forEach((m, slot) => {
        m.slot = slot;
        byName[m.name] = m;
        /* m.readyBy says which came first (the browser test checks that
         * the line after the files did its job): the page's end is only
         * the fallback, and the document is always still loading here. */
        m.parsed = new Promise((resolve) => {
            const ready = (by) => { m.readyBy = m.readyBy || by; resolve(); };
            document.addEventListener('web-model-parsed', (e) => { if (e.detail === slot) ready('event'); });
            if (document.readyState !== 'loading') ready('document');
            else document.addEventListener('DOMContentLoaded', () => ready('document'));
        });
    });
    const SEED_TEXT = '我想吃酸菜鱼';
    const PAUSE_MS = 400;       // typing: translate after this long without a key

    /* Uint8Array.fromBase64 where the browser has it (Chromium 140,
     * Firefox 133, Safari 18.2): several times faster than atob and a
     * loop over 24 MB of text. */
    function decode64(id) {
        const base64 = document.getElementById(id).textContent;
        if (Uint8Array.fromBase64) return Uint8Array.fromBase64(base64); /* skips the newlines */
        const text = atob(base64.trim());
        const bytes = new Uint8Array(text.length);
        for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
        return bytes;
    }

    // ---- the worker -------------------------------------------------------------------------

    const workerUrl = URL.createObjectURL(new Blob([decode64('web-worker')], { type: 'text/javascript' }));
    const worker = new Worker(workerUrl);
    const pending = new Map();  // request id -> {resolve, reject}
    let nextId = 1;
    const loaded = {};          // slot -> promise of the open reply

    worker.onmessage = (e) => {
        const msg = e.data;
        if (msg.type === 'busy') return;
        if (msg.type === 'progress') {
            stepShown = `, step ${msg.step} of at most ${msg.limit}`;
            progressMessages++;
            return;
        }
        const key = msg.type === 'loaded' ? `load-${msg.slot}` : msg.id;
        const waiter = pending.get(key);
        pending.delete(key);
        if (waiter) waiter.resolve(msg);
    };
    worker.onerror = (e) => { console.error(`translation engine: ${e.message}`); };

    function request(key, msg, transfer) {
        return new Promise((resolve, reject) => {
            pending.set(key, { resolve, reject });
            worker.postMessage(msg, transfer || []);
        });
    }

    function loadModel(model) {
        if (!loaded[model.slot]) {
            loaded[model.slot] = model.parsed.then(() => {
                const files = model.files.map((f) => ({ path: f.path, bytes: decode64(f.id).buffer }));
                return request(`load-${model.slot}`, { type: 'load', slot: model.slot, config: model.config, files },
                    files.map((f) => f.bytes));
            }).then((msg) => {
                const reply = JSON.parse(msg.reply);
                if (reply.status !== 0) throw new Error(`${model.name}: ${reply.error}`);
                return msg;
            });
        }
        return loaded[model.slot];
    }

    /* The text the engine may not take, as ./translate refuses such a line:
     * the message, or '' for text it may.  A NUL would end the C string;
     * a lone surrogate (half of an emoji cut off by the program the text
     * was pasted from) Emscripten's string copy joins with the character
     * after it ("bad \ud800 x" became "bad 𐀠x"); a text longer than a
     * line of standard input (MAX_LINE_BYTES, app/translate.c) overflowed
     * the engine's stack, on which ccall copies it, and broke it for
     * every later request. */
    const MAX_LINE_BYTES = 65536;
    const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    function refusal(text) {
        /* a place counted in characters from 1: an emoji is one, not two UTF-16 units */
        const place = (i) => [...text.slice(0, i)].length + 1;
        const nul = text.indexOf('\u0000');
        if (nul >= 0) return `NUL character (U+0000) at character ${place(nul)}: not translated`;
        const lone = text.search(LONE_SURROGATE);
        if (lone >= 0)
            return `half of a character (a lone UTF-16 surrogate, U+${text.charCodeAt(lone).toString(16).toUpperCase()}) ` +
                `at character ${place(lone)}: not translated`;
        const bytes = new TextEncoder().encode(text).length;
        if (bytes > MAX_LINE_BYTES) return `longer than ${MAX_LINE_BYTES} bytes (${bytes}): not translated`;
        return '';
    }

    function translate(model, text, explain) {
        const refused = refusal(text);
        if (refused) return Promise.resolve({ status: 1, ms: 0, error: refused });
        return loadModel(model).then(() => {
            const id = nextId++;
            return request(id, { type: 'translate', id, slot: model.slot, text, explain });
        }).then((msg) => Object.assign(JSON.parse(msg.reply), { ms: msg.ms }));
    }

    // ---- the controls -------------------------------------------------------------------------

    const bar = document.createElement('section');
    bar.id = 'web-bar';
    bar.innerHTML =
        '<div class="web-row">' +
        '<div class="control" id="web-direction" role="radiogroup" aria-label="Direction"></div>' +
        '<button type="button" id="web-seed" title="The walkthrough of translate --explain, beside the maps">' +
        `Walk through ${SEED_TEXT}</button>` +
        '<label class="control"><input type="checkbox" id="web-replay" checked> Replay token by token</label>' +
        '<span id="web-progress" class="dim"></span></div>' +
        '<textarea id="web-input" rows="2" placeholder="Type a sentence (English or Chinese)"></textarea>' +
        '<div id="web-translation" aria-live="polite"></div>' +
        '<div id="web-note" class="dim" hidden>Line breaks are read as spaces: the box is one sentence, ' +
        'as a TEXT argument of translate is (translate -i FILE translates each line alone).</div>' +
        '<div id="web-status" hidden data-results="0"></div>';
    const header = document.querySelector('header');
    header.parentNode.insertBefore(bar, header.nextSibling);
    document.querySelector('header h1').textContent = 'Translate and look inside';
    const explainPanel = document.createElement('section');
    explainPanel.className = 'panel';
    explainPanel.id = 'explain-info';
    explainPanel.hidden = true;
    document.querySelector('aside').appendChild(explainPanel);

    const input = document.getElementById('web-input');
    const progress = document.getElementById('web-progress');
    const output = document.getElementById('web-translation');
    const note = document.getElementById('web-note');
    const status = document.getElementById('web-status');
    const replay = document.getElementById('web-replay');
    let direction = models[0].name;

    const directionButtons = document.getElementById('web-direction');
    for (const m of models) {
        const button = document.createElement('button');
        button.type = 'button';
        button.dataset.model = m.name;
        button.textContent = `${m.source_language} → ${m.target_language}`;
        button.addEventListener('click', () => { setDirection(m.name); schedule(0); });
        directionButtons.appendChild(button);
    }
    function setDirection(name) {
        if (!byName[name]) return;
        direction = name;
        for (const b of directionButtons.querySelectorAll('button'))
            b.setAttribute('aria-checked', String(b.dataset.model === name));
    }
    setDirection(direction);

    // The text and the direction stay in the #fragment beside the viewer's fields
    // (a lone surrogate, which encodeURIComponent throws on, as U+FFFD; an
    // emptied box as no text=).
    const wellFormed = (s) => s.replace(new RegExp(LONE_SURROGATE, 'g'), '\uFFFD');
    window.viewer.setFragmentExtra(() =>
        `&dir=${encodeURIComponent(direction)}` +
        (input.value ? `&text=${encodeURIComponent(wellFormed(input.value))}` : '') +
        (replay.checked ? '' : '&still'));

    // ---- translating ----------------------------------------------------------------------------

    let timer = null, busy = false, queued = null, started = 0, ticker = null, stepShown = '', progressMessages = 0;

    function schedule(delay, explain) {
        clearTimeout(timer);
        timer = setTimeout(() => run({ model: byName[direction], text: input.value, explain: !!explain }), delay);
    }

    /* One request at a time: what is typed meanwhile waits, and only the
     * latest text is translated next. */
    function run(job) {
        if (busy) { queued = job; return Promise.resolve(); }
        if (job.text.trim() === '') { /* an emptied box shows nothing, not the last text's translation */
            showNothing('');
            return Promise.resolve();
        }
        busy = true;
        started = performance.now();
        stepShown = '';
        progressMessages = 0;
        const loading = !loaded[job.model.slot];
        ticker = setInterval(() => {
            const s = ((performance.now() - started) / 1000).toFixed(1);
            progress.textContent = `${loading ? 'loading the model and translating' : 'translating'}… ${s} s${stepShown}`;
        }, 100);
        /* in the chain, so that a throw still reaches .finally and frees `busy` */
        return Promise.resolve().then(() => translate(job.model, job.text, job.explain)).then((reply) => {
            show(job, reply);
            return reply;
        }, (error) => {
            showNothing(String(error.message || error));
            throw error;
        }).finally(() => {
            clearInterval(ticker);
            busy = false;
            if (queued) { const next = queued; queued = null; run(next); }
        });
    }

    /* No translation to show: the box emptied (error ''), the text refused
     * or the engine failed (the error).  The last translation goes with its
     * maps, its text above them and its text in the address: they stayed
     * after an error, taken for this text's, and a reload brought the old
     * text back. */
    function showNothing(error) {
        output.textContent = error;
        output.className = error ? 'error' : '';
        progress.textContent = '';
        note.hidden = true;
        explainPanel.hidden = true;
        status.removeAttribute('data-translation');
        window.viewer.clear();
    }

    function show(job, reply) {
        const elapsed = performance.now() - started;
        if (reply.status !== 0) {
            showNothing(reply.error);
            return;
        }
        output.textContent = reply.translation;
        output.className = '';
        /* A line break is a space to the tokenizer: the box is one sentence,
         * as a TEXT argument of ./translate is, and the page says so rather
         * than translate each line (its maps are one sentence's). */
        note.hidden = !/[\r\n]/.test(job.text);
        progress.textContent = `${job.model.name}: ${reply.ms.toFixed(0)} ms in the engine, ` +
            `${elapsed.toFixed(0)} ms in all` + (reply.unknown ? `; unknown words: ${reply.unknown}` : '');
        explainPanel.hidden = !reply.explain;
        explainPanel.textContent = '';
        if (reply.explain) {
            const title = document.createElement('h3');
            title.textContent = 'translate --explain';
            const pre = document.createElement('pre');
            pre.textContent = reply.explain;
            explainPanel.append(title, pre);
        }
        const n = Number(status.getAttribute('data-results')) + 1;
        status.setAttribute('data-results', String(n));
        status.setAttribute('data-translation', reply.translation);
        status.setAttribute('data-ms', reply.ms.toFixed(1));
        status.setAttribute('data-progress', String(progressMessages));
        status.setAttribute('data-model-ready-by', job.model.readyBy);
        if (n === 1) status.setAttribute('data-first-ms', performance.now().toFixed(0));
        window.viewer.show([reply.attention], replay.checked ? 1 : undefined);
        if (replay.checked) window.viewer.play();
    }

    /* An input method's unfinished text (the pinyin "wo ai" on its way to
     * 我爱) is no sentence yet: a composition's input events are skipped,
     * and its end schedules the translation (an input event after it, as
     * some browsers send, only schedules it again). */
    let composing = false;
    input.addEventListener('compositionstart', () => { composing = true; clearTimeout(timer); });
    input.addEventListener('compositionend', () => { composing = false; schedule(PAUSE_MS); });
    input.addEventListener('input', (e) => { if (!composing && !e.isComposing) schedule(PAUSE_MS); });
    /* The walkthrough: 我想吃酸菜鱼 through the zh → en model, with --explain. */
    function seed() {
        input.value = SEED_TEXT;
        const zh = models.find((m) => m.source_language === 'zh');
        if (zh) setDirection(zh.name);
        clearTimeout(timer);
        return run({ model: byName[direction], text: SEED_TEXT, explain: true });
    }
    document.getElementById('web-seed').addEventListener('click', seed);

    /* For tests and the console: translate `text` in `dir` now. */
    window.webTranslate = (text, dir) => {
        input.value = text;
        if (dir) setDirection(dir);
        clearTimeout(timer);
        return run({ model: byName[direction], text, explain: false });
    };

    // ---- start: #text=...&dir=...&still, or #seed ------------------------------------------------
    const params = new URLSearchParams(location.hash.slice(1));
    if (params.has('still')) replay.checked = false;
    if (params.get('dir')) setDirection(params.get('dir'));
    if (params.has('seed')) {
        window.webFirst = seed();
    } else if (params.get('text')) {
        input.value = params.get('text');
        window.webFirst = run({ model: byName[direction], text: input.value, explain: false });
    } else {
        window.webFirst = Promise.resolve();
    }
})();
