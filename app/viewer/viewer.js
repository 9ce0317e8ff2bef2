/* viewer.js — the attention viewer that `translate --html FILE` writes.
 *
 * The page embeds one or more attention documents (docs/attention-json.md)
 * as JSON script elements of class "attention-data".  For one
 * sentence at a time this script draws
 *   - a large heatmap of one attention map (a kind, a layer, and a head or
 *     the mean of the heads) beside a line view of the same map;
 *   - a grid of small heatmaps, one per layer and head plus each layer's
 *     mean of heads; clicking one shows it large;
 *   - a step slider that replays decoding: decoder and cross-attention rows
 *     appear one step at a time, with the token each step chose, its
 *     probability and the alternatives;
 *   - with a subword vocabulary, a "Whole words" toggle that merges each
 *     word's pieces ("shang", "##hai" → "shanghai") on both axes.
 * Pointing at a cell shows its exact weight, its query and key tokens and
 * the entropy of its row.  The large figure can be saved as SVG or PNG and
 * the selected matrix as CSV.  The view is kept in the address's #fragment
 * (e.g. #sentence=2&kind=decoder&layer=1&head=mean&step=3&words), so a
 * view can be bookmarked.
 *
 * Everything is drawn as SVG with colours as attributes, so the export is
 * the drawing itself.  No library is used and nothing is fetched.
 *
 * Reading order: data, state, matrices, drawing, panels, controls, export,
 * start.  Layers, heads and steps are 0-based in the code and 1-based on
 * screen and in the #fragment. */
'use strict';

// ---- the data ---------------------------------------------------------------

/* The three kinds of attention, and which tokens label their axes.  Rows
 * are queries, columns keys.  Decoder row t is computed while the decoder
 * reads decoder_input.tokens[t] and predicts output.tokens[t]: labelling
 * decoder rows with the output tokens instead is the classic off-by-one of
 * attention viewers (docs/attention-json.md, "Token roles"). */
const KINDS = {
    encoder: {
        field: 'encoder_attentions', title: 'Encoder self-attention',
        rows: 'source', cols: 'source', causal: false, stepped: false, colour: '#2171b5',
    },
    decoder: {
        field: 'decoder_attentions', title: 'Decoder masked self-attention',
        rows: 'decoder_input', cols: 'decoder_input', causal: true, stepped: true, colour: '#6a51a3',
    },
    cross: {
        field: 'cross_attentions', title: 'Cross-attention',
        rows: 'decoder_input', cols: 'source', causal: false, stepped: true, colour: '#238b45',
    },
};

/* Every sentence of every embedded document, in input order.  A run that
 * translated both ways (no -c) embeds two documents, one per model. */
function loadSentences() {
    const sentences = [];
    for (const element of document.querySelectorAll('script.attention-data')) {
        const doc = JSON.parse(element.textContent);
        for (const s of doc.sentences) sentences.push({ doc, s });
    }
    sentences.sort((a, b) => a.s.line - b.s.line);
    return sentences;
}

let sentences = loadSentences();

// ---- the state of the view ----------------------------------------------------

/* What is shown.  The default, the mean of the last layer's cross-attention
 * heads, is the map that fairseq and others use as a word alignment: the
 * most readable first picture. */
const state = {
    sentence: 0,
    kind: 'cross',
    layer: Infinity,   // clamped to the last layer
    head: 'mean',      // a head index or 'mean'
    step: Infinity,    // 1..T: rows 0..step-1 are revealed; clamped to T
    words: false,      // merge each word's pieces (the "Whole words" toggle)
    selftest: false,   // #selftest: also run the exports (tests/test_browser.c)
};
let playTimer = null;
/* The live page (make web, web/page.js) keeps its own fields in the
 * #fragment too (the text, the direction): its hook returns them. */
let fragmentExtra = () => '';

function current() { return sentences[state.sentence]; }
function layerCount(entry, kind) { return entry.s[KINDS[kind].field].length; }
function headCount(entry) { return entry.doc.model.heads; }
function stepCount(entry) { return entry.s.output.tokens.length; }

/* Bring every field into range for the current sentence (a #fragment or a
 * sentence with fewer steps may have put it out). */
function clampState() {
    const entry = current();
    const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));
    state.layer = clamp(state.layer, 0, layerCount(entry, state.kind) - 1);
    if (state.head !== 'mean') state.head = clamp(state.head, 0, headCount(entry) - 1);
    state.step = clamp(state.step, 1, stepCount(entry));
}

/* #sentence=2&kind=decoder&layer=1&head=mean&step=3 (1-based); anything
 * missing or malformed keeps its default. */
function readFragment() {
    const params = new URLSearchParams(location.hash.slice(1));
    const number = (key) => {
        const n = parseInt(params.get(key), 10);
        return Number.isFinite(n) ? n : null;
    };
    if (number('sentence') !== null) state.sentence = Math.min(Math.max(number('sentence') - 1, 0), sentences.length - 1);
    if (Object.prototype.hasOwnProperty.call(KINDS, params.get('kind'))) state.kind = params.get('kind'); /* not __proto__ */
    if (number('layer') !== null) state.layer = number('layer') - 1;
    if (params.get('head') === 'mean') state.head = 'mean';
    else if (number('head') !== null) state.head = number('head') - 1;
    if (number('step') !== null) state.step = number('step');
    state.words = params.has('words');
    state.selftest = params.has('selftest');
}

/* Only what means something: with no sentence shown (the live page's box
 * emptied) no sentence and no step, and the layer only once a sentence
 * has made it a number (Infinity, "the last", before: the live page
 * emptied before its first translation wrote layer=Infinity&step=Infinity). */
function writeFragment() {
    const shown = sentences.length > 0;
    const fields = [];
    if (shown) fields.push(`sentence=${state.sentence + 1}`);
    fields.push(`kind=${state.kind}`);
    if (Number.isFinite(state.layer)) fields.push(`layer=${state.layer + 1}`);
    fields.push(`head=${state.head === 'mean' ? 'mean' : state.head + 1}`);
    if (shown && Number.isFinite(state.step)) fields.push(`step=${state.step}`);
    if (state.words) fields.push('words');
    if (state.selftest) fields.push('selftest');
    const fragment = fields.join('&') + fragmentExtra();
    // replaceState, not location.hash: no history entry per slider move.
    history.replaceState(null, '', '#' + fragment);
}

// ---- matrices -------------------------------------------------------------------

/* The map to draw: values[i][j] with i the query row and j the key column,
 * the tokens on both axes, and how many rows the step slider reveals.
 * With state.words, rows and columns are whole words (mergeWords). */
function selectedMatrix(entry, kind, layer, head) {
    const info = KINDS[kind];
    const heads = entry.s[info.field][layer];
    const values = head === 'mean' ? meanOfHeads(heads) : heads[head];
    const m = {
        kind, layer, head, values,
        rowTokens: entry.s[info.rows].tokens,
        colTokens: entry.s[info.cols].tokens,
        produced: info.stepped ? entry.s.output.tokens : null,  // what row t chose
        revealed: info.stepped ? state.step : values.length,
        step: state.step,                                       // the slider's
        rowStep: (i) => i + 1,                                  // the step that computes row i
    };
    return state.words && hasPieces(entry) ? mergeWords(m, entry.s[info.rows], entry.s[info.cols]) : m;
}

/* Does any token list of the sentence join pieces into words?  (Format
 * 1.0 documents, and word vocabularies, have one token per word.) */
function hasPieces(entry) {
    return ['source', 'decoder_input'].some((field) => {
        const list = entry.s[field];
        return list.words && list.words.length < list.tokens.length;
    });
}

/* The groups of a token list: for each word, its first and last token. */
function wordSpans(list) {
    const spans = list.words.map(() => [Infinity, -1]);
    list.word_of.forEach((w, t) => {
        spans[w][0] = Math.min(spans[w][0], t);
        spans[w][1] = Math.max(spans[w][1], t);
    });
    return spans;
}

/* m with each word's pieces merged.  Attention *to* a word is the sum of
 * the attention to its pieces, and attention *from* a word the mean of its
 * pieces' rows: every row is still a distribution summing to 1 (Clark et
 * al. 2019, "What Does BERT Look At?", section 4.3).  A summed column says
 * how much the query looked at the word; a mean row weighs each piece of
 * the looking word alike.  A decoder word's row is revealed once the step
 * slider has passed all of its pieces; it produced its pieces' outputs. */
function mergeWords(m, rowList, colList) {
    const rows = wordSpans(rowList), cols = wordSpans(colList);
    const values = rows.map(([r0, r1]) => cols.map(([c0, c1]) => {
        let sum = 0;
        for (let i = r0; i <= r1; i++) for (let j = c0; j <= c1; j++) sum += m.values[i][j];
        return sum / (r1 - r0 + 1);
    }));
    return Object.assign({}, m, {
        values,
        rowTokens: rowList.words,
        colTokens: colList.words,
        produced: m.produced && rows.map(([r0, r1]) => m.produced.slice(r0, r1 + 1).join(' ')),
        revealed: rows.filter(([, r1]) => r1 < m.revealed).length,
        rowStep: (i) => rows[i][1] + 1,                         // a word's row: its last piece's step
    });
}

/* The element-wise mean of a layer's heads, each [rows][cols]. */
function meanOfHeads(heads) {
    return heads[0].map((row, i) => row.map((_, j) => {
        let sum = 0;
        for (const h of heads) sum += h[i][j];
        return sum / heads.length;
    }));
}

/* Shannon entropy of one row in nats: 0 when all attention is on one key,
 * ln(n) when it is spread evenly over n keys. */
function entropy(row) {
    let h = 0;
    for (const p of row) if (p > 0) h -= p * Math.log(p);
    return h;
}

/* 'masked' (the causal mask hides it: key after query), 'future' (the
 * step slider has not reached this row yet) or 'weight'. */
function cellState(m, i, j) {
    if (KINDS[m.kind].causal && j > i) return 'masked';
    if (i >= m.revealed) return 'future';
    return 'weight';
}

// ---- drawing: SVG helpers ---------------------------------------------------------

/* The SVG namespace name, asked of the HTML parser rather than spelled out:
 * the page then contains no web address at all, and the test that checks
 * it fetches nothing can simply reject any. */
const SVG_NS = (() => {
    const probe = document.createElement('div');
    probe.innerHTML = '<svg></svg>';
    return probe.firstChild.namespaceURI;
})();

/* Keep in step with --font in viewer.css. */
const FONT = '"Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "DejaVu Sans", sans-serif';
const FUTURE_GREY = '#dcdfe3';
const MASK_GREY = '#eceff2';

function svgElement(tag, attributes, parent) {
    const element = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
    if (parent) parent.appendChild(element);
    return element;
}

/* Characters XML 1.0 cannot hold at all (C0 controls but tab, newline and
 * carriage return; lone surrogates; U+FFFE, U+FFFF), as U+FFFD: the user's
 * text goes into the exported SVG, and an ESC pasted from a terminal made
 * the file not well-formed and the PNG export fail. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function svgText(parent, x, y, text, attributes) {
    const element = svgElement('text', Object.assign({ x, y }, attributes), parent);
    element.textContent = String(text).replace(NOT_XML, '\uFFFD');
    return element;
}

/* Width of a label in pixels, measured with the font the SVG will use, so
 * long English words and CJK characters both get the room they need. */
const measure = document.createElement('canvas').getContext('2d');
function textWidth(text, size) {
    measure.font = `${size}px ${FONT}`;
    return measure.measureText(text).width;
}
function widest(tokens, size) {
    return Math.max(0, ...tokens.map((t) => textWidth(t, size)));
}

/* Weight 0..1 to a colour on ColorBrewer's "Blues" scale: near-white for
 * nothing, dark blue for everything.  The scale is absolute (not stretched
 * to each map's maximum), so maps can be compared by eye. */
const BLUES = [[247, 251, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
function colour(weight) {
    const x = Math.min(1, Math.max(0, weight)) * (BLUES.length - 1);
    const i = Math.min(Math.floor(x), BLUES.length - 2);
    const f = x - i;
    const mix = (k) => Math.round(BLUES[i][k] + f * (BLUES[i + 1][k] - BLUES[i][k]));
    return `rgb(${mix(0)},${mix(1)},${mix(2)})`;
}

/* A hatch pattern for masked cells, defined inside each SVG so that an
 * exported file carries it.  Ids must be unique in the page. */
let patternCount = 0;
function addHatch(svg) {
    const id = `hatch-${++patternCount}`;
    const defs = svgElement('defs', {}, svg);
    const pattern = svgElement('pattern', {
        id, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)',
    }, defs);
    svgElement('rect', { width: 6, height: 6, fill: MASK_GREY }, pattern);
    svgElement('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: '#a9b1ba', 'stroke-width': 2 }, pattern);
    return `url(#${id})`;
}

// ---- drawing: heatmaps ---------------------------------------------------------------

/* The cells of matrix m, `size` pixels each, into group g.  Each cell is a
 * <rect class="cell"> that knows its row and column (data-i, data-j), for
 * the pointer; masked and future cells also carry that word as a class
 * (tests count them). */
function drawCells(g, m, size, hatch) {
    m.values.forEach((row, i) => row.forEach((weight, j) => {
        const kind = cellState(m, i, j);
        const fill = kind === 'masked' ? hatch : kind === 'future' ? FUTURE_GREY : colour(weight);
        svgElement('rect', {
            x: j * size, y: i * size, width: size, height: size, fill,
            class: kind === 'weight' ? 'cell' : `cell ${kind}`, 'data-i': i, 'data-j': j,
        }, g);
    }));
}

/* A thumbnail of matrix m for the grid: cells only, about 100 pixels. */
function drawThumbnail(m, title) {
    const size = Math.max(2, Math.floor(100 / Math.max(m.values.length, m.colTokens.length)));
    const svg = svgElement('svg', {
        class: 'heatmap thumb', width: m.colTokens.length * size, height: m.values.length * size,
    });
    svgElement('title', {}, svg).textContent = title;
    drawCells(svg, m, size, addHatch(svg));
    return svg;
}

/* The large heatmap with its token labels, at (x, y) in svg.  Returns its
 * width and height.  Columns are labelled on top: upright when every label
 * fits its column (Chinese characters usually do), else slanted so long
 * words fit; rows on the left.  Decoder rows also say, on the right, which
 * token that step produced. */
function drawHeatmap(svg, m, x, y, size) {
    const font = Math.min(13, Math.max(9, size - 4));
    const rowLabelWidth = widest(m.rowTokens, font) + 8;
    const upright = widest(m.colTokens, font) <= size - 2;
    const colLabelHeight = upright ? font + 8 : widest(m.colTokens, font) * 0.87 + font + 4;   // sin 60°
    const left = x + rowLabelWidth, top = y + colLabelHeight;
    const rows = m.values.length, cols = m.colTokens.length;

    m.colTokens.forEach((token, j) => {
        const cx = left + (j + 0.5) * size, cy = top - 5;
        svgText(svg, cx, cy, token, upright ? { 'font-size': font, 'text-anchor': 'middle' } : {
            'font-size': font, transform: `rotate(-60 ${cx} ${cy})`,
        });
    });
    m.rowTokens.forEach((token, i) => {
        svgText(svg, left - 6, top + (i + 0.5) * size, token, {
            'font-size': font, 'text-anchor': 'end', 'dominant-baseline': 'central',
            class: 'row-label', 'data-i': i, fill: i < m.revealed ? '#1d2731' : '#a0a8b0',
        });
    });
    const cells = svgElement('g', { transform: `translate(${left} ${top})`, class: 'cells' }, svg);
    drawCells(cells, m, size, addHatch(svg));

    let width = rowLabelWidth + cols * size;
    if (m.produced) width += drawProduced(svg, m, left + cols * size + 6, top, size, font);
    return { width, height: colLabelHeight + rows * size, cells, left, top };
}

/* "→ token" after each decoder row: what that step chose. */
function drawProduced(svg, m, x, top, size, font) {
    svgText(svg, x, top - 5, 'produced', { 'font-size': font - 1, fill: '#66727f' });
    m.produced.forEach((token, i) => {
        if (i >= m.revealed) return;
        svgText(svg, x, top + (i + 0.5) * size, `→ ${token}`, {
            'font-size': font, 'dominant-baseline': 'central', fill: '#66727f',
        });
    });
    return 6 + Math.max(widest(m.produced.map((t) => `→ ${t}`), font), textWidth('produced', font - 1)) + 4;
}

/* A colour bar from 0 to 1, then swatches for what is not a weight.
 * Returns its width and height. */
function drawLegend(svg, x, y, kind, hatch) {
    const steps = 40, width = 160;
    for (let k = 0; k < steps; k++) {
        svgElement('rect', {
            x: x + k * width / steps, y, width: width / steps + 0.5, height: 10, fill: colour(k / (steps - 1)),
        }, svg);
    }
    [0, 0.5, 1].forEach((v) => svgText(svg, x + v * width, y + 24, String(v), {
        'font-size': 11, 'text-anchor': 'middle', fill: '#66727f',
    }));
    let sx = x + width + 24;
    const swatch = (fill, label) => {
        svgElement('rect', { x: sx, y, width: 10, height: 10, fill, stroke: '#a9b1ba' }, svg);
        svgText(svg, sx + 14, y + 9, label, { 'font-size': 11, fill: '#66727f' });
        sx += 24 + textWidth(label, 11);
    };
    if (KINDS[kind].causal) swatch(hatch, 'masked (future key)');
    if (KINDS[kind].stepped) swatch(FUTURE_GREY, 'not decoded yet');
    return { width: sx - x, height: 30 };
}

// ---- drawing: the line view -------------------------------------------------------------

/* Queries on the left, keys on the right, one line per weight with its
 * opacity equal to the weight (bertviz's head view).  Pointing at a token
 * leaves only its lines.  Rows not decoded yet and masked cells have no
 * line.  Tokens are spaced like the heatmap's rows when that is roomy
 * enough, and never too far apart. */
function drawLineView(svg, m, x, y, cellSize) {
    const font = 13, gap = Math.max(18, Math.min(cellSize, 28)), span = 160;
    const leftWidth = widest(m.rowTokens, font), rightWidth = widest(m.colTokens, font);
    const x1 = x + leftWidth + 6, x2 = x1 + span;
    const rowY = (i) => y + 22 + (i + 0.5) * gap;
    const g = svgElement('g', { class: 'line-view' }, svg);
    svgText(g, x1, y + 10, 'queries', { 'font-size': 11, 'text-anchor': 'end', fill: '#66727f' });
    svgText(g, x2, y + 10, 'keys', { 'font-size': 11, fill: '#66727f' });

    const stroke = KINDS[m.kind].colour;
    m.values.forEach((row, i) => row.forEach((weight, j) => {
        if (cellState(m, i, j) !== 'weight') return;
        svgElement('line', {
            x1, y1: rowY(i), x2, y2: rowY(j), stroke, 'stroke-width': 2,
            'stroke-opacity': weight.toFixed(3), class: 'attn', 'data-i': i, 'data-j': j,
        }, g);
    }));
    m.rowTokens.forEach((token, i) => svgText(g, x1 - 6, rowY(i), token, {
        'font-size': font, 'text-anchor': 'end', 'dominant-baseline': 'central', class: 'token',
        'data-side': 'i', 'data-index': i, fill: i < m.revealed ? '#1d2731' : '#a0a8b0',
    }));
    m.colTokens.forEach((token, j) => svgText(g, x2 + 6, rowY(j), token, {
        'font-size': font, 'dominant-baseline': 'central', class: 'token', 'data-side': 'j', 'data-index': j,
    }));
    g.addEventListener('mouseover', (e) => focusToken(g, e.target));
    g.addEventListener('mouseleave', () => focusToken(g, null));
    const height = 22 + Math.max(m.rowTokens.length, m.colTokens.length) * gap;
    return { width: leftWidth + 12 + span + rightWidth, height };
}

/* Show only the lines of the token under the pointer (all when none). */
function focusToken(g, target) {
    const side = target && target.getAttribute('data-side');
    const index = side && target.getAttribute('data-index');
    for (const line of g.querySelectorAll('line.attn')) {
        const mine = !side || line.getAttribute(`data-${side}`) === index;
        line.style.visibility = mine ? 'visible' : 'hidden';
    }
    for (const token of g.querySelectorAll('text.token')) {
        token.style.fontWeight = side && token === target ? 'bold' : '';
    }
}

// ---- the large figure ----------------------------------------------------------------------

function headLabel(head, heads) {
    return head === 'mean' ? `mean of ${heads} heads` : `head ${head + 1} of ${heads}`;
}

/* Title, heatmap, legend and line view in one <svg>: the thing the SVG and
 * PNG exports save. */
function renderFigure() {
    const entry = current();
    const m = selectedMatrix(entry, state.kind, state.layer, state.head);
    const container = document.getElementById('figure');
    container.textContent = '';
    const svg = svgElement('svg', {
        id: 'figure-svg', class: 'heatmap large', 'font-family': FONT, fill: '#1d2731',
    }, container);

    const layers = layerCount(entry, state.kind);
    let title = `${KINDS[state.kind].title} · layer ${state.layer + 1} of ${layers} · ` +
        headLabel(state.head, headCount(entry));
    if (KINDS[state.kind].stepped) title += ` · step ${state.step} of ${stepCount(entry)}`;
    svgText(svg, 10, 20, title, { 'font-size': 15, 'font-weight': 'bold' });
    svgText(svg, 10, 38, `line ${entry.s.line}: ${entry.s.text}`, { 'font-size': 12, fill: '#66727f' });

    const size = Math.min(36, Math.max(10, Math.floor(440 / Math.max(m.values.length, m.colTokens.length))));
    const map = drawHeatmap(svg, m, 10, 50, size);
    const legendY = 50 + map.height + 14;
    const legend = drawLegend(svg, map.left, legendY, state.kind, addHatch(svg));
    // The line view goes right of the heatmap and of its legend.
    const linesX = Math.max(10 + map.width, map.left + legend.width) + 40;
    const lines = drawLineView(svg, m, linesX, 50, size);

    const width = linesX + lines.width + 20;
    const height = Math.max(legendY + legend.height, 50 + lines.height) + 10;
    svg.setAttribute('width', Math.ceil(Math.max(width, textWidth(title, 15) + 30)));
    svg.setAttribute('height', Math.ceil(height));
    connectHover(svg, map, m, size);
}

/* Pointing at a cell: outline it and describe it in the side panel.  The
 * outline is marked "transient" so the exports leave it out. */
function connectHover(svg, map, m, size) {
    const outline = svgElement('rect', {
        width: size, height: size, fill: 'none', stroke: '#e6550d', 'stroke-width': 2,
        visibility: 'hidden', class: 'transient', 'pointer-events': 'none',
    }, map.cells);
    map.cells.addEventListener('mouseover', (e) => {
        if (!e.target.classList.contains('cell')) return;
        const i = Number(e.target.getAttribute('data-i')), j = Number(e.target.getAttribute('data-j'));
        outline.setAttribute('x', j * size);
        outline.setAttribute('y', i * size);
        outline.setAttribute('visibility', 'visible');
        showCell(m, i, j);
    });
    map.cells.addEventListener('mouseleave', () => {
        outline.setAttribute('visibility', 'hidden');
        showCell(null);
    });
}

// ---- the grid of every head -------------------------------------------------------------------

/* Rows are layers; columns are the heads and then their mean (a
 * mean-of-heads view of every layer).  The selected map is outlined. */
function renderGrid() {
    const entry = current();
    const layers = layerCount(entry, state.kind), heads = headCount(entry);
    const grid = document.getElementById('grid');
    grid.textContent = '';
    grid.style.gridTemplateColumns = `auto repeat(${heads + 1}, auto)`;
    document.getElementById('grid-title').textContent = `Every head: ${KINDS[state.kind].title.toLowerCase()}`;

    const label = (text) => {
        const div = document.createElement('div');
        div.className = 'axis';
        div.textContent = text;
        grid.appendChild(div);
    };
    label('');
    for (let h = 0; h < heads; h++) label(`head ${h + 1}`);
    label('mean');
    for (let l = 0; l < layers; l++) {
        label(`layer ${l + 1}`);
        for (const h of [...Array(heads).keys(), 'mean']) {
            const m = selectedMatrix(entry, state.kind, l, h);
            const thumb = drawThumbnail(m, `layer ${l + 1}, ${headLabel(h, heads)}`);
            if (l === state.layer && h === state.head) thumb.classList.add('selected');
            thumb.addEventListener('click', () => {
                state.layer = l;
                state.head = h;
                render();
                document.getElementById('figure-panel').scrollIntoView({ behavior: 'smooth' });
            });
            grid.appendChild(thumb);
        }
    }
}

// ---- the side panels -----------------------------------------------------------------------------

/* Builds small pieces of HTML safely: text is always set as text. */
function html(tag, className, text) {
    const element = document.createElement(tag);
    if (className) element.className = className;
    if (text !== undefined) element.textContent = text;
    return element;
}
function tokenChip(token) { return html('span', 'tok', token); }

/* The side panel for the cell under the pointer (m null: none). */
function showCell(m, i, j) {
    const panel = document.getElementById('cell-info');
    panel.textContent = '';
    panel.appendChild(html('h3', '', 'Cell'));
    if (!m) {
        panel.appendChild(html('div', 'dim', 'Point at a cell of the large heatmap to see its weight.'));
        return;
    }
    const kind = cellState(m, i, j);
    if (kind === 'masked') {
        panel.appendChild(html('div', 'big', 'masked'));
        panel.appendChild(html('div', 'dim', 'The key comes after the query. The causal mask hides it, ' +
            'so this is no small weight: it is never computed (exactly 0).'));
    } else if (kind === 'future') {
        panel.appendChild(html('div', 'big', 'not decoded yet'));
        panel.appendChild(html('div', 'dim', `Row ${i + 1} is computed at step ${m.rowStep(i)}; the slider is at step ${m.step}.`));
    } else {
        // 7 significant digits: the precision of the JSON (a mean of heads
        // would otherwise show float noise).
        const w = m.values[i][j];
        panel.appendChild(html('div', 'big', `${Number(w.toPrecision(7))}  (${(100 * w).toFixed(1)}%)`));
    }
    const query = html('div', '', `query (row ${i + 1}): `);
    query.appendChild(tokenChip(m.rowTokens[i]));
    if (m.produced && kind !== 'future') {
        query.appendChild(document.createTextNode(' which produced '));
        query.appendChild(tokenChip(m.produced[i]));
    }
    panel.appendChild(query);
    const key = html('div', '', `key (column ${j + 1}): `);
    key.appendChild(tokenChip(m.colTokens[j]));
    panel.appendChild(key);
    if (kind !== 'future') {
        const keys = KINDS[m.kind].causal ? i + 1 : m.colTokens.length;
        panel.appendChild(html('div', '', `row entropy: ${entropy(m.values[i]).toFixed(3)} nats`));
        panel.appendChild(html('div', 'dim', `(0: all on one key; ln ${keys} = ${Math.log(keys).toFixed(3)}: spread evenly)`));
    }
}

/* The side panel for the step slider: what step t read and chose, how
 * sure the model was, and what else it considered. */
function showStep() {
    const entry = current(), out = entry.s.output, t = state.step - 1;
    const panel = document.getElementById('step-info');
    panel.textContent = '';
    panel.appendChild(html('h3', '', `Step ${t + 1} of ${out.tokens.length}`));
    const line = html('div', '', 'reads ');
    line.appendChild(tokenChip(entry.s.decoder_input.tokens[t]));
    line.appendChild(document.createTextNode(', chooses '));
    line.appendChild(tokenChip(out.tokens[t]));
    panel.appendChild(line);
    panel.appendChild(html('div', 'big', `p = ${Math.exp(out.logprobs[t]).toFixed(4)}`));
    panel.appendChild(html('div', 'dim', `log p = ${out.logprobs[t]}`));
    panel.appendChild(html('div', '', 'the best candidates:'));
    panel.appendChild(alternativesTable(out.top_k[t], out.ids[t]));
    if (!out.top_k[t].some((alt) => alt.id === out.ids[t]))
        panel.appendChild(html('div', 'dim', whyNotTheMostProbable(entry.doc, out)));
    if (t === out.tokens.length - 1 && !out.finished)
        panel.appendChild(html('div', 'dim', 'Decoding stopped at the length limit, not at </s>.'));
    if (!KINDS[state.kind].stepped)
        panel.appendChild(html('div', 'dim', 'The encoder reads the whole source at once: steps apply to the decoder and cross maps.'));
}

/* top_k of one step as rows of token, probability and a bar. */
function alternativesTable(alternatives, chosenId) {
    const table = html('table', 'alternatives');
    for (const alt of alternatives) {
        const p = Math.exp(alt.logprob);
        const row = html('tr', alt.id === chosenId ? 'chosen' : '');
        const token = html('td');
        token.appendChild(tokenChip(alt.token));
        row.appendChild(token);
        row.appendChild(html('td', '', p.toFixed(4)));
        const bar = html('td', 'bar');
        const fill = html('div');
        fill.style.width = `${(100 * p).toFixed(1)}%`;
        bar.appendChild(fill);
        row.appendChild(bar);
        table.appendChild(row);
    }
    return table;
}

/* The source and the translation; the translation's tokens mark the step. */
function showTexts() {
    const entry = current();
    const texts = document.getElementById('texts');
    texts.textContent = '';
    /* isolated (the CSS's .source), so that a right-to-left override in the
     * user's text cannot reverse the arrow and the output tokens after it */
    texts.appendChild(html('span', 'source', entry.s.text));
    texts.appendChild(html('span', 'arrow', '→'));
    entry.s.output.tokens.forEach((token, t) => {
        const stepped = KINDS[state.kind].stepped;
        const kind = !stepped ? '' : t === state.step - 1 ? 'current' : t >= state.step ? 'later' : '';
        const span = html('span', `token ${kind}`, token);
        span.title = `step ${t + 1}`;
        texts.appendChild(span);
        texts.appendChild(document.createTextNode(' '));
    });
    const model = entry.doc.model;
    document.getElementById('model-info').textContent =
        `model ${model.name} (${model.source_language} → ${model.target_language}): ` +
        `${model.encoder_layers} encoder + ${model.decoder_layers} decoder layers, ` +
        `${model.heads} heads, d_model ${model.d_model}` + decodingText(entry.doc.decoding);
}

/* "; decoded: beam 4, length penalty 1, copy_numbers" (documents before
 * format 1.2 do not say). */
function decodingText(d) {
    if (!d) return '';
    const parts = [d.beam > 1 ? `beam ${d.beam}, length penalty ${d.length_penalty}` : 'greedy'];
    if (d.copy_numbers) parts.push('copy_numbers');
    if (d.no_repeat_ngram) parts.push(`no-repeat-ngram ${d.no_repeat_ngram}`);
    if (d.int8) parts.push('int8 weights');
    return `; decoded: ${parts.join(', ')}`;
}

/* Why step t kept a token that is not among the model's most probable:
 * what else chose it, as far as the document says. */
function whyNotTheMostProbable(doc, out) {
    const d = doc.decoding;
    if (!d) return 'Beam search or a decoding rule chose it, not this step\'s probabilities alone.';
    const why = [];
    if (d.beam > 1) why.push(`beam search (${d.beam}) ranks whole translations, not single steps`);
    if (out.copied_numbers) why.push('copy_numbers: where the source has numbers, a digit is written only where it copies one of them');
    if (d.no_repeat_ngram) why.push(`--no-repeat-ngram ${d.no_repeat_ngram} bans repeats`);
    return why.length ? `Not among the most probable: ${why.join('; ')}.` : '';
}

// ---- the controls --------------------------------------------------------------------------------

/* Fill the controls from the state (options depend on the sentence). */
function syncControls() {
    const entry = current();
    for (const button of document.querySelectorAll('#kinds button'))
        button.setAttribute('aria-checked', String(button.dataset.kind === state.kind));
    const options = (select, items) => {
        select.textContent = '';
        for (const [value, text] of items) {
            const option = html('option', '', text);
            option.value = value;
            select.appendChild(option);
        }
    };
    const layers = document.getElementById('layer');
    options(layers, [...Array(layerCount(entry, state.kind)).keys()].map((l) => [l, String(l + 1)]));
    layers.value = state.layer;
    const heads = document.getElementById('head');
    options(heads, [...[...Array(headCount(entry)).keys()].map((h) => [h, String(h + 1)]), ['mean', 'mean of heads']]);
    heads.value = state.head;
    const step = document.getElementById('step');
    step.max = stepCount(entry);
    step.value = state.step;
    document.getElementById('step-label').textContent = `t = ${state.step} / ${stepCount(entry)}`;
    document.getElementById('stepper').classList.toggle('off', !KINDS[state.kind].stepped);
    const words = document.getElementById('words');
    words.checked = state.words;
    words.disabled = !hasPieces(entry);
    document.getElementById('words-control').classList.toggle('off', !hasPieces(entry));
}

/* `text` cut to `max` characters, '...' included, when it is longer.
 * Characters as a reader sees them (grapheme clusters: an emoji with its
 * ZWJ sequence or skin tone, a letter with its combining marks), never
 * part of one: slice() counted UTF-16 units and left half of an emoji, a
 * lone surrogate, shown as U+FFFD (and headless Chromium's --dump-dom
 * died on it with SIGILL).  Code points where the browser has no
 * Intl.Segmenter (Firefox before 125). */
function shorten(text, max) {
    const chars = typeof Intl !== 'undefined' && Intl.Segmenter
        ? Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text), (g) => g.segment)
        : Array.from(text);
    return chars.length > max ? chars.slice(0, max - 3).join('') + '...' : text;
}

function fillSentencePicker() {
    const picker = document.getElementById('sentence');
    picker.textContent = '';
    const models = new Set(sentences.map((e) => e.doc.model.name));
    sentences.forEach((entry, k) => {
        const text = shorten(entry.s.text, 60);
        const prefix = models.size > 1 ? `[${entry.doc.model.name}] ` : '';
        const option = html('option', '', `${entry.s.line}: ${prefix}${text}`);
        option.value = k;
        picker.appendChild(option);
    });
    document.getElementById('sentence-picker').hidden = sentences.length < 2;
}

function connectControls() {
    document.getElementById('sentence').addEventListener('change', (e) => {
        state.sentence = Number(e.target.value);
        state.step = Infinity;   // a new sentence starts fully decoded
        render();
    });
    for (const button of document.querySelectorAll('#kinds button')) {
        button.addEventListener('click', () => { state.kind = button.dataset.kind; render(); });
    }
    document.getElementById('layer').addEventListener('change', (e) => {
        state.layer = Number(e.target.value);
        render();
    });
    document.getElementById('head').addEventListener('change', (e) => {
        state.head = e.target.value === 'mean' ? 'mean' : Number(e.target.value);
        render();
    });
    document.getElementById('step').addEventListener('input', (e) => {
        stopPlaying();
        state.step = Number(e.target.value);
        render();
    });
    document.getElementById('play').addEventListener('click', togglePlay);
    document.getElementById('words').addEventListener('change', (e) => {
        state.words = e.target.checked;
        render();
    });
    document.getElementById('export-svg').addEventListener('click', () =>
        download(new Blob([figureSvgText()], { type: 'image/svg+xml' }), exportName('svg')));
    document.getElementById('export-png').addEventListener('click', () =>
        figurePng().then((blob) => download(blob, exportName('png'))));
    document.getElementById('export-csv').addEventListener('click', () =>
        download(new Blob([matrixCsv()], { type: 'text/csv' }), exportName('csv')));
}

/* Replay: from step 1 (or where the slider is, if not at the end), one
 * step every 0.8 s, stopping at the last. */
function togglePlay() {
    if (playTimer) return stopPlaying();
    if (state.step >= stepCount(current())) state.step = 1;
    if (!KINDS[state.kind].stepped) state.kind = 'cross';   // the encoder has no steps to replay
    render();
    document.getElementById('play').textContent = 'Pause';
    playTimer = setInterval(() => {
        if (state.step >= stepCount(current())) return stopPlaying();
        state.step++;
        render();
    }, 800);
}

function stopPlaying() {
    clearInterval(playTimer);
    playTimer = null;
    document.getElementById('play').textContent = 'Play';
}

// ---- export ------------------------------------------------------------------------------------------

function exportName(extension) {
    const head = state.head === 'mean' ? 'mean' : `head${state.head + 1}`;
    return `attention-line${current().s.line}-${state.kind}-layer${state.layer + 1}-${head}.${extension}`;
}

/* The large figure as a standalone SVG document: a copy without the hover
 * outline, on a white background.  XMLSerializer adds the xmlns. */
function figureSvgText() {
    const copy = document.getElementById('figure-svg').cloneNode(true);
    for (const transient of copy.querySelectorAll('.transient')) transient.remove();
    for (const hidden of copy.querySelectorAll('[style]')) hidden.removeAttribute('style');
    const background = svgElement('rect', { width: '100%', height: '100%', fill: '#fff' });
    copy.insertBefore(background, copy.firstChild);
    return new XMLSerializer().serializeToString(copy);
}

/* The figure as PNG, at twice its size: the SVG drawn into a canvas. */
function figurePng() {
    const svg = document.getElementById('figure-svg');
    const scale = 2;
    const width = Number(svg.getAttribute('width')), height = Number(svg.getAttribute('height'));
    return new Promise((resolve, reject) => {
        const image = new Image();
        image.onload = () => {
            const canvas = document.createElement('canvas');
            canvas.width = width * scale;
            canvas.height = height * scale;
            canvas.getContext('2d').drawImage(image, 0, 0, canvas.width, canvas.height);
            canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('PNG encoding failed'))), 'image/png');
        };
        image.onerror = () => reject(new Error('the browser could not draw the SVG for the PNG'));
        image.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(figureSvgText());
    });
}

/* The selected matrix, every row (whatever the step), as CSV: a header of
 * key tokens, then one row per query token.  Masked cells are 0, as in the
 * data. */
function matrixCsv() {
    const m = selectedMatrix(current(), state.kind, state.layer, state.head);
    /* A token that starts as a formula (= + - @, or a tab or CR before one)
     * would run as one in a spreadsheet: a ' before it keeps it text. */
    const field = (text) => {
        const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
        return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
    };
    const lines = [['query \\ key', ...m.colTokens].map(field).join(',')];
    m.values.forEach((row, i) => lines.push([field(m.rowTokens[i]), ...row.map(String)].join(',')));
    return lines.join('\r\n') + '\r\n';
}

/* Save a blob under a name, through a temporary link. */
function download(blob, name) {
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}

// ---- what was drawn, for the tests -----------------------------------------------------------------

/* Counts of what is actually in the page (not what should be), written
 * as attributes of #status for tests/test_browser.c to read from the DOM. */
function writeStatus() {
    const status = document.getElementById('status');
    const count = (selector) => String(document.querySelectorAll(selector).length);
    status.setAttribute('data-sentences', String(sentences.length));
    status.setAttribute('data-kind', state.kind);
    status.setAttribute('data-layer', String(state.layer + 1));
    status.setAttribute('data-head', state.head === 'mean' ? 'mean' : String(state.head + 1));
    status.setAttribute('data-step', String(state.step));
    status.setAttribute('data-words', String(state.words && hasPieces(current())));
    status.setAttribute('data-heatmaps', count('svg.heatmap'));
    status.setAttribute('data-cells', count('svg.heatmap rect.cell'));
    status.setAttribute('data-masked', count('svg.heatmap rect.cell.masked'));
    status.setAttribute('data-future', count('svg.heatmap rect.cell.future'));
    status.setAttribute('data-lines', count('#figure line.attn'));
    status.setAttribute('data-ready', '1');
}

/* #selftest: run the three exports without saving them, and record their
 * sizes, so the test proves they work in a real browser.  The PNG comes
 * later (the image load and canvas.toBlob are asynchronous, at a time of
 * the browser's choosing), so the page says when it is done:
 * data-selftest="done" on #status, and window.selftestDone, a promise that
 * settles then, for the test to await (a failure also counts in #errors). */
function selftest() {
    const status = document.getElementById('status');
    status.setAttribute('data-selftest', 'running');
    status.setAttribute('data-export-svg', String(figureSvgText().length));
    status.setAttribute('data-export-csv-lines', String(matrixCsv().split('\r\n').length - 1));
    window.selftestDone = figurePng().then((blob) => {
        status.setAttribute('data-export-png', String(blob.size));
        status.setAttribute('data-selftest', 'done');
    }, (error) => {
        status.setAttribute('data-selftest', 'failed');
        console.error(`PNG export: ${error.message}`);
    });
}

// ---- start -------------------------------------------------------------------------------------------------

function render() {
    clampState();
    syncControls();
    showTexts();
    renderFigure();
    renderGrid();
    showCell(null);
    showStep();
    writeFragment();
    writeStatus();
}

/* The live page's way in (web/page.js): show `docs`, attention documents
 * just computed, in place of the embedded ones.  The view (kind, layer,
 * head, words) is kept; the step is the last unless `step` is given. */
let controlsConnected = false;
function showDocuments(docs, step) {
    stopPlaying();
    sentences = [];
    for (const doc of docs) for (const s of doc.sentences) sentences.push({ doc, s });
    state.sentence = 0;
    state.step = step || Infinity;
    document.querySelector('main').hidden = false;
    document.getElementById('controls').hidden = false;
    document.getElementById('grid-panel').hidden = false;
    fillSentencePicker();
    document.getElementById('sentence').value = state.sentence;
    if (!controlsConnected) connectControls();
    controlsConnected = true;
    render();
}
/* Nothing to show (the live page's box was emptied, its text refused or
 * not translated): the maps and their controls go, as before the first
 * translation, and so do the last sentence's text and model line above
 * them, which would be taken for this text's. */
function clearDocuments() {
    stopPlaying();
    sentences = [];
    for (const id of ['controls', 'grid-panel']) document.getElementById(id).hidden = true;
    document.querySelector('main').hidden = true;
    document.getElementById('sentence-picker').hidden = true;
    document.getElementById('texts').textContent = '';
    document.getElementById('model-info').textContent = '';
    writeFragment(); /* the address keeps no text that is gone (a reload brought it back) */
}
window.viewer = {
    show: showDocuments,
    clear: clearDocuments,
    play: togglePlay,
    setFragmentExtra: (hook) => { fragmentExtra = hook; },
    readFragment: () => readFragment(),
    selftest: () => selftest(),
};

function start() {
    if (sentences.length === 0 && document.getElementById('live')) {
        // The live page: nothing to show until the first translation.
        readFragment();
        for (const id of ['controls', 'grid-panel']) document.getElementById(id).hidden = true;
        document.querySelector('main').hidden = true;
        return;
    }
    if (sentences.length === 0) {
        document.querySelector('main').textContent = 'No sentence was translated, so there is nothing to show.';
        document.getElementById('controls').hidden = true;
        writeStatus();
        return;
    }
    readFragment();
    fillSentencePicker();
    document.getElementById('sentence').value = state.sentence;
    connectControls();
    controlsConnected = true;
    render();
    if (state.selftest) selftest();
}

start();
