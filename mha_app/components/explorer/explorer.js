// The attention explorer: step 2 of every head, drawn on a canvas in the browser (see mha_app/components/explorer/__init__.py).
// The data (payload.py's bytes) arrives once per example; head, query, stage and layer change here, then the choice
// goes back to the server as component state. Queries are rows, keys columns; tokens are only ever set as text.
// The last stage, contributions, shows what each key adds (a share of its row) where the others show weights.
// "Draw as Lines" shows the same numbers as BertViz's head view draws them: queries left, keys right, a line a pair
// (its own section, "the lines view"); "Heatmap" is the matrices.
// Every sentence it shows is the copy package's (copy.explorer), in the payload's header: as it is, or a template
// that shared.js's fill and pick complete with what only the browser knows (the view, the number under the pointer).

const REGISTRY = (window.__mhaExplorer ??= {});
const INSTANCES = new WeakMap();  // component element -> its Explorer (this module is loaded once per page)
const SYNC_MS = 200;              // quiet time before a change goes to the server: a held arrow key sends once
// Colours come from the payload's palettes (figures.base: light and dark), chosen by the page's own background.
let C = null;                     // the palette in use: weights, signed, heads, background, text, muted, ...

function pageIsDark() {
  const app = document.querySelector('[data-testid="stApp"]') || document.body;
  const [r, g, b] = (getComputedStyle(app).backgroundColor.match(/\d+/g) || [255, 255, 255]).map(Number);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b < 128;
}
const GAP = 18;
const WIDE = 760;  // px: from this width the heads, the head's matrix and the query's bars stand side by side
const TYPES = { '<f4': Float32Array, '<f8': Float64Array, '|u1': Uint8Array };

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let explorer = INSTANCES.get(parentElement);
  if (!explorer) {
    explorer = new Explorer(parentElement.querySelector('.mha-explorer'));
    INSTANCES.set(parentElement, explorer);
  }
  explorer.send = setStateValue;
  explorer.setPayload(data);
  return () => explorer.dispose();  // Streamlit calls the last one returned when the element goes away
}

// --- the payload (payload.py's layout) ------------------------------------------------------------------------

function readHeader(bytes) {
  const magic = String.fromCharCode(...bytes.subarray(0, 4));
  if (magic !== 'MHAX') throw new Error('not an explorer payload');
  const size = new DataView(bytes.buffer, bytes.byteOffset + 4, 4).getUint32(0, true);
  return { header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + size))), start: Math.ceil((8 + size) / 8) * 8 };
}

function decode(bytes) {
  const { header, start } = readHeader(bytes);
  // A copy that starts at offset 0, so that every array sits at a multiple of 8 and can be viewed without copying.
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const arrays = {};
  for (const [name, info] of Object.entries(header.arrays)) {
    const count = info.shape.reduce((a, b) => a * b, 1);
    arrays[name] = { data: new TYPES[info.dtype](buffer, start + info.offset, count), shape: info.shape, dtype: info.dtype };
  }
  return { header, arrays };
}

// --- numbers and colours ---------------------------------------------------------------------------------------

// The fewest significant digits that read back as exactly this value: a float32 as float32, a float64 as float64.
function digits(v, dtype) {
  const same = dtype === '<f4' ? s => Math.fround(Number(s)) === v : s => Number(s) === v;
  for (let p = 1; p < 17; p++) if (same(v.toPrecision(p))) return p;
  return 17;
}

// The shortest text that reads back as exactly this value (a tooltip's data-value: what a test compares).
const exact = (v, dtype) => String(Number(v.toPrecision(digits(v, dtype))));

// Numbers as a student reads them: decimals from 0.0001 up to a million, else a power of ten, 2.08 × 10⁻⁷ (never
// the computer's 2.0797269e-7).
const SUPERSCRIPT = { '-': '⁻', '+': '', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
const power = text => text.replace(/e([+-]?\d+)$/, (_, e) => ` × 10${[...e].map(c => SUPERSCRIPT[c]).join('')}`);
const decimal = v => v === 0 || (Math.abs(v) >= 1e-4 && Math.abs(v) < 1e6);

// A value of the engine as a tooltip says it: "= 0.48213437" (every digit it holds), or, as a power of ten,
// "≈ 2.08 × 10⁻⁷" rounded to 3 digits with the exact value on a line of its own; lines start with `what`.
function said(what, v, dtype) {
  const p = digits(v, dtype);
  if (!Number.isFinite(v) || decimal(v)) return [`${what} = ${exact(v, dtype)}`];
  const whole = power(v.toExponential(p - 1));
  return p <= 3 ? [`${what} = ${whole}`] : [`${what} ≈ ${power(v.toExponential(2))}`, `(exactly ${whole})`];
}

// A mean, rounded to 6 digits as the overviews' hover rounds it, in the same readable form.
const mean6 = v => {
  const r = Number(v.toPrecision(6));
  return decimal(r) || !Number.isFinite(r) ? String(r) : power(r.toExponential());
};

// The 1-based items in block i of a pooled axis, `step` items a block among `count`: "5–8" (the last one may be
// shorter: "9–10").
const blockRange = (i, step, count) => `${i * step + 1}–${Math.min((i + 1) * step, count)}`;

const quoted = t => `“${t.length > 28 ? t.slice(0, 27) + '…' : t}”`;
const short = t => (t.length > 18 ? t.slice(0, 17) + '…' : t);
const esc = s => String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

// --- the lines view: queries in a column on the left, keys on the right, one line a pair (BertViz's head view) -----

// A line's opacity at a stage from its cell's value: the weight or the share itself, 1 − the blocked share at the
// mask (1 for an open pair), |score| ÷ `top` (the head's largest |score|) at the scores; 0, no line, for a pair the
// mask blocks (except at raw: before the mask) and for a value that is not a number.
function lineOpacity(stage, value, blocked, top = 1) {
  if (stage === 'mask') return Math.min(1, Math.max(0, 1 - value));
  if ((stage !== 'raw' && blocked) || !Number.isFinite(value)) return 0;
  if (stage === 'raw' || stage === 'scaled') return Math.min(1, Math.abs(value) / top);
  return Math.min(1, Math.max(0, value));
}

// The y of token i of a column whose tokens take `slot` px each from y0: the middle of its slot.
const slotY = (i, y0, slot) => y0 + (i + 0.5) * slot;

// The lines of one or several heads: each {head, data, blocked, rows, cols, top} (data and blocked row-major, blocked
// null where nothing is), from x1 (the queries' column) to x2 (the keys'), the queries `querySlot` px apart and the
// keys `keySlot` px apart from y0. focus {side: 'query' | 'key', index} keeps that token's lines alone. Only lines
// that show (opacity > 0) are returned: {head, query, key, x1, y1, x2, y2, opacity}.
function lineGeometry(stage, heads, { x1, x2, y0, querySlot, keySlot, focus = null }) {
  const lines = [];
  for (const m of heads) {
    for (let r = 0; r < m.rows; r++) {
      if (focus && focus.side === 'query' && focus.index !== r) continue;
      for (let c = 0; c < m.cols; c++) {
        if (focus && focus.side === 'key' && focus.index !== c) continue;
        const i = r * m.cols + c;
        const opacity = lineOpacity(stage, m.data[i], !!m.blocked && m.blocked[i] >= 1, m.top);
        if (opacity > 0) {
          lines.push({ head: m.head, query: r, key: c, x1, y1: slotY(r, y0, querySlot), x2, y2: slotY(c, y0, keySlot),
                       opacity });
        }
      }
    }
  }
  return lines;
}

// What a test reads of the lines drawn: how many, which heads, queries and keys they join, and the strongest.
function linesSummary(lines) {
  let strongest = null;
  for (const l of lines) if (!strongest || l.opacity > strongest.opacity) strongest = l;
  const distinct = k => [...new Set(lines.map(l => l[k] + 1))].sort((a, b) => a - b);
  return { count: lines.length, heads: distinct('head'), queries: distinct('query'), keys: distinct('key'),
           strongest: strongest && { head: strongest.head + 1, query: strongest.query + 1, key: strongest.key + 1,
                                     opacity: strongest.opacity } };
}

// --- painters: one drawing, on the screen's canvas or into an SVG file --------------------------------------------

let hatchTile = null;
let hatchFor = null;
function hatchPattern(ctx) {
  if (!hatchTile || hatchFor !== C) {
    hatchFor = C;
    hatchTile = document.createElement('canvas');
    hatchTile.width = hatchTile.height = 6;
    const g = hatchTile.getContext('2d');
    g.fillStyle = C.background; g.fillRect(0, 0, 6, 6);
    g.strokeStyle = C.neutral; g.lineWidth = 1;
    g.beginPath(); g.moveTo(0, 6); g.lineTo(6, 0); g.moveTo(-1, 1); g.lineTo(1, -1); g.moveTo(5, 7); g.lineTo(7, 5); g.stroke();
  }
  return ctx.createPattern(hatchTile, 'repeat');
}

// A panel's title (bold, 13 px) and its note (11 px, muted), each wrapped to `width`; returns the height they take.
function heading(p, measurer, x, y, width, title, note = '') {
  const t = wrap(measurer, title, width, 13, true), n = note ? wrap(measurer, note, width, 11) : [];
  if (p) {
    t.forEach((line, i) => p.text(line, x, y + 8 + 17 * i, { size: 13, weight: 'bold' }));
    n.forEach((line, i) => p.text(line, x, y + 9 + 17 * t.length + 14 * i, { size: 11, colour: C.muted }));
  }
  return 17 * t.length + 14 * n.length;
}

function cellsCanvas(img) {
  const c = document.createElement('canvas');
  c.width = img.width; c.height = img.height;
  c.getContext('2d').putImageData(new ImageData(img.rgba, img.width, img.height), 0, 0);
  return c;
}

class CanvasPainter {
  constructor(ctx, font) { this.ctx = ctx; this.font = font; }
  rect(x, y, w, h, fill) { this.ctx.fillStyle = fill; this.ctx.fillRect(x, y, w, h); }
  stroke(x, y, w, h, colour, width = 1) {
    this.ctx.strokeStyle = colour; this.ctx.lineWidth = width; this.ctx.strokeRect(x, y, w, h);
  }
  line(x1, y1, x2, y2, colour, width = 1) {
    const g = this.ctx;
    g.strokeStyle = colour; g.lineWidth = width; g.beginPath(); g.moveTo(x1, y1); g.lineTo(x2, y2); g.stroke();
  }
  text(s, x, y, { size = 12, colour = C.text, align = 'left', baseline = 'middle', weight = 'normal', angle = 0 } = {}) {
    const g = this.ctx;
    g.save(); g.translate(x, y); if (angle) g.rotate(angle * Math.PI / 180);
    g.font = `${weight} ${size}px ${this.font}`; g.fillStyle = colour; g.textAlign = align; g.textBaseline = baseline;
    g.fillText(s, 0, 0); g.restore();
  }
  hatch(x, y, w, h) { this.ctx.fillStyle = hatchPattern(this.ctx); this.ctx.fillRect(x, y, w, h); }
  // Many lines (lineGeometry's), each in colourOf(line) at its opacity: one path per colour and level of alpha
  // (the canvas keeps 256), so that 150 × 150 pairs draw in one frame.
  lines(lines, colourOf, width = 1) {
    const paths = new Map();  // colour -> 256 paths, one per level of alpha
    for (const l of lines) {
      const colour = colourOf(l), level = Math.round(l.opacity * 255);
      if (!paths.has(colour)) paths.set(colour, []);
      const path = (paths.get(colour)[level] ??= new Path2D());
      path.moveTo(l.x1, l.y1); path.lineTo(l.x2, l.y2);
    }
    const g = this.ctx;
    g.save(); g.lineWidth = width;
    for (const [colour, levels] of paths) {
      g.strokeStyle = colour;
      levels.forEach((path, level) => { g.globalAlpha = level / 255; g.stroke(path); });
    }
    g.restore();
  }
  cells(img, x, y, w, h) {
    const g = this.ctx;
    g.imageSmoothingEnabled = false;
    g.drawImage(cellsCanvas(img), x, y, w, h);
  }
  gradient(stops, x, y, w, h) {
    const gr = this.ctx.createLinearGradient(0, y + h, 0, y);
    for (const [p, c] of stops) gr.addColorStop(p, c);
    this.rect(x, y, w, h, gr);
  }
  measure(s, size = 12) { this.ctx.font = `${size}px ${this.font}`; return this.ctx.measureText(s).width; }
}

class SvgPainter {
  constructor(measure, font) { this.parts = []; this.defs = []; this.measureWith = measure; this.font = font; this.ids = 0; }
  rect(x, y, w, h, fill) { this.parts.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="${fill}"/>`); }
  stroke(x, y, w, h, colour, width = 1) {
    this.parts.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="none" stroke="${colour}" stroke-width="${width}"/>`);
  }
  line(x1, y1, x2, y2, colour, width = 1) {
    this.parts.push(`<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="${colour}" stroke-width="${width}"/>`);
  }
  text(s, x, y, { size = 12, colour = C.text, align = 'left', baseline = 'middle', weight = 'normal', angle = 0 } = {}) {
    const anchor = { left: 'start', center: 'middle', right: 'end' }[align];
    const dy = { middle: '0.35em', top: '0.8em', bottom: '0', alphabetic: '0' }[baseline];
    const turn = angle ? ` transform="rotate(${angle} ${x} ${y})"` : '';
    this.parts.push(`<text x="${x}" y="${y}" dy="${dy}" font-size="${size}" font-weight="${weight}" fill="${colour}" `
      + `text-anchor="${anchor}"${turn}>${esc(s)}</text>`);
  }
  hatch(x, y, w, h) {
    if (!this.hatchId) {
      this.hatchId = 'hatch';
      this.defs.push(`<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" `
        + `fill="${C.background}"/><path d="M0,6 L6,0 M-1,1 L1,-1 M5,7 L7,5" stroke="${C.neutral}" stroke-width="1"/></pattern>`);
    }
    this.parts.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="url(#hatch)"/>`);
  }
  lines(lines, colourOf, width = 1) {
    for (const l of lines) {
      this.parts.push(`<line x1="${l.x1.toFixed(2)}" y1="${l.y1.toFixed(2)}" x2="${l.x2.toFixed(2)}" y2="${l.y2.toFixed(2)}" `
        + `stroke="${colourOf(l)}" stroke-opacity="${l.opacity.toFixed(4)}" stroke-width="${width}"/>`);
    }
  }
  cells(img, x, y, w, h) {
    if (img.width * img.height > 2500) {  // as plotly saves a heatmap: one image of the cells, vector text around it
      this.parts.push(`<image x="${x}" y="${y}" width="${w}" height="${h}" preserveAspectRatio="none" `
        + `style="image-rendering:pixelated" href="${cellsCanvas(img).toDataURL('image/png')}"/>`);
      return;
    }
    const cw = w / img.width, ch = h / img.height, px = img.rgba;
    for (let r = 0; r < img.height; r++) {
      for (let c = 0; c < img.width; c++) {
        const i = 4 * (r * img.width + c);
        if (px[i + 3] === 0) continue;
        const opacity = px[i + 3] < 255 ? ` fill-opacity="${(px[i + 3] / 255).toFixed(3)}"` : '';
        this.parts.push(`<rect x="${(x + c * cw).toFixed(2)}" y="${(y + r * ch).toFixed(2)}" width="${cw.toFixed(2)}" `
          + `height="${ch.toFixed(2)}" fill="rgb(${px[i]},${px[i + 1]},${px[i + 2]})"${opacity}/>`);
      }
    }
  }
  gradient(stops, x, y, w, h) {
    const id = `scale${this.ids++}`;
    this.defs.push(`<linearGradient id="${id}" x1="0" y1="1" x2="0" y2="0">`
      + stops.map(([p, c]) => `<stop offset="${p}" stop-color="${c}"/>`).join('') + '</linearGradient>');
    this.rect(x, y, w, h, `url(#${id})`);
  }
  measure(s, size = 12) { return this.measureWith(s, size); }
  svg(width, height) {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" `
      + `font-family="${esc(this.font)}"><defs>${this.defs.join('')}</defs><rect width="100%" height="100%" fill="${C.background}"/>`
      + `${this.parts.join('')}</svg>`;
  }
}

// --- the explorer ----------------------------------------------------------------------------------------------

class Explorer {
  constructor(root) {
    this.root = root;
    this.canvas = root.querySelector('canvas.plot');
    this.tip = root.querySelector('.tip');
    this.payload = null;
    this.derived = {};    // layer -> the parts its carrier left out, made here (payload.build_layer)
    // head and query 0-based here; display: the drawing, 'heatmap' or 'lines'
    this.view = { layer: 1, head: 0, query: 0, stage: 'weights', display: 'heatmap' };
    this.set = [];        // shift-clicked queries (0-based): their weights summed and averaged
    this.lineHeads = [];  // the heads shift-clicked into the lines view beside the head on view (0-based)
    this.focus = null;    // the token under the pointer in the lines view: {side: 'query' | 'key', index}
    this.seq = 0;         // changes made here; the server echoes the last one it has seen
    this.draws = 0;
    this.regions = [];
    this.limits = new Map();
    this.wire();
    this.listener = msg => this.serverView(msg);
    REGISTRY.listener = this.listener;
    this.taker = () => this.takeLayers();
    REGISTRY.takeLayers = this.taker;
    this.carried = new Map();  // id -> layer: the carriers (layer.js) this payload names, when it has no layers
    this.present = new Set();  // the layers whose arrays are here: in the payload, or taken from their carriers
    this.width = 0;  // redrawn when the page gives it another width, not on every resize event
    this.resize = new ResizeObserver(() => this.payload && this.width !== this.root.clientWidth && this.draw());
    this.resize.observe(root);
  }

  dispose() {
    if (REGISTRY.listener === this.listener) REGISTRY.listener = null;
    if (REGISTRY.takeLayers === this.taker) REGISTRY.takeLayers = null;
    this.resize.disconnect();
    clearTimeout(this.timer);
  }

  setPayload(bytes) {
    if (!bytes || !bytes.byteLength) return;
    const { header } = readHeader(bytes);
    if (this.payload && this.payload.header.id === header.id) return;  // the same data again: nothing to draw
    const first = !this.payload;
    this.payload = decode(bytes);
    this.limits.clear();
    this.set = [];
    const h = this.payload.header;
    this.present = new Set(h.layers);
    this.derived = {};
    this.root.dataset.layers = h.layers.join(' ');
    this.carried = new Map(Object.entries(h.carried || {}).map(([layer, id]) => [id, Number(layer)]));
    this.buildControls();
    if (first && REGISTRY.view) this.serverView(REGISTRY.view, true);
    else if (first) this.view.layer = h.layers[0] ?? 1;
    if (!this.takeLayers()) this.draw();
  }

  // The carriers that have arrived (layer.js queues their bytes in the registry): those this payload names are
  // taken (their arrays joined to the payload's), those of no payload yet kept for the next one (the latest few),
  // and the view is drawn again when its layer came. Returns whether it drew.
  takeLayers() {
    const queue = REGISTRY.layers || [];
    if (!this.payload || !queue.length) return false;
    const later = [];
    let drawn = false;
    for (const bytes of queue) {
      const { header } = readHeader(bytes);
      const layer = this.carried.get(header.id);
      if (layer === undefined) { later.push(bytes); continue; }
      if (this.present.has(layer)) continue;
      Object.assign(this.payload.arrays, decode(bytes).arrays);
      this.derived[layer] = header.derived;
      this.present.add(layer);
      drawn ||= layer === this.current().layer;
    }
    REGISTRY.layers = later.slice(-this.payload.header.layer_count);
    this.root.dataset.layers = [...this.present].sort((a, b) => a - b).join(' ');  // the layers here (for tests)
    if (drawn) this.draw();
    return drawn;
  }

  has(layer) { return this.present.has(layer); }

  // The server's view: applied unless a newer change made here has not reached it yet.
  serverView(msg, quiet = false) {
    if (!msg || !msg.view || msg.seq < this.seq) return;
    this.seq = msg.seq;
    const v = msg.view, now = this.view;
    // the drawing is the browser's own when the server holds none
    const next = { layer: v.layer, head: v.head - 1, query: v.query - 1, stage: v.stage, display: v.display ?? now.display };
    if (next.layer === now.layer && next.head === now.head && next.query === now.query && next.stage === now.stage
        && next.display === now.display) return;
    if (next.query !== now.query) this.set = [];
    this.view = next;
    if (!quiet && this.payload) this.draw();
  }

  // A change made here: drawn now, sent to the server once the user pauses (a view it shows already: drawn only,
  // as a click that empties the set of queries).
  change(patch, now = false) {
    const before = this.current();
    if (Object.entries(patch).every(([k, x]) => before[k] === x)) { this.draw(); return; }
    Object.assign(this.view, patch);
    this.seq += 1;
    this.draw();
    clearTimeout(this.timer);
    const send = () => {
      const { layer, head, query, stage, display } = this.current();
      this.send?.('view', { layer, head: head + 1, query: query + 1, stage, display, seq: this.seq });
    };
    if (now) send(); else this.timer = setTimeout(send, SYNC_MS);
  }

  current() {  // the view, within this payload's sizes
    const h = this.payload.header;
    const clamp = (v, n) => Math.min(Math.max(0, v | 0), n - 1);
    const stage = h.stages.some(s => s.key === this.view.stage) ? this.view.stage : 'weights';
    return { layer: this.view.layer, head: clamp(this.view.head, h.heads), query: clamp(this.view.query, h.n), stage,
             display: this.view.display === 'lines' ? 'lines' : 'heatmap' };
  }

  // --- controls ---

  wire() {
    const r = this.root;
    r.querySelector('select.head').addEventListener('change', e => this.change({ head: Number(e.target.value) - 1 }));
    r.querySelector('select.layer').addEventListener('change', e => this.setLayer(Number(e.target.value)));
    r.querySelector('.prev').addEventListener('click', () => this.moveQuery(-1));
    r.querySelector('.next').addEventListener('click', () => this.moveQuery(1));
    r.querySelector('.png').addEventListener('click', () => this.save('png'));
    r.querySelector('.svg').addEventListener('click', () => this.save('svg'));
    r.addEventListener('keydown', e => this.key(e));
    this.canvas.addEventListener('mousemove', e => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => {
      this.tip.hidden = true;
      if (this.focus) { this.focus = null; this.draw(); }
    });
    this.canvas.addEventListener('click', e => this.click(e));
  }

  buildControls() {
    const h = this.payload.header, r = this.root;
    const stages = r.querySelector('.stages');
    stages.replaceChildren(...h.stages.map(s => {
      const b = document.createElement('button');
      b.type = 'button'; b.textContent = s.label; b.dataset.stage = s.key;
      b.addEventListener('click', () => this.change({ stage: s.key }));
      return b;
    }));
    const views = r.querySelector('.views');
    views.setAttribute('aria-label', h.text.lines.view_label);
    views.replaceChildren(...Object.entries(h.text.lines.views).map(([key, label]) => {
      const b = document.createElement('button');
      b.type = 'button'; b.textContent = label; b.dataset.display = key;
      b.addEventListener('click', () => { this.focus = null; this.change({ display: key }); });
      return b;
    }));
    const heads = r.querySelector('select.head');
    heads.replaceChildren(...Array.from({ length: h.heads }, (_, i) => {
      const o = document.createElement('option');
      o.value = String(i + 1);
      o.textContent = `${i + 1}` + (h.group_size > 1 ? ` (K/V ${Math.floor(i / h.group_size) + 1})` : '');
      return o;
    }));
    r.querySelector('.layer-field').hidden = h.layer_count < 2;
    r.querySelector('select.layer').replaceChildren(...Array.from({ length: h.layer_count }, (_, i) => {
      const o = document.createElement('option');
      o.value = String(i + 1); o.textContent = String(i + 1);
      return o;
    }));
  }

  setLayer(layer) {
    // A layer that is not here yet comes from the server (in the payload, or in its carrier, unless that is on its
    // way already): send at once, and draw it when it arrives.
    this.change({ layer }, !this.has(layer));
  }

  moveQuery(by) {
    const { query } = this.current();
    const next = Math.min(Math.max(0, query + by), this.payload.header.n - 1);
    if (next !== query) { this.set = []; this.change({ query: next }); }
  }

  key(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.target.tagName === 'SELECT' || !this.payload) return;
    const h = this.payload.header;
    let handled = true;
    if (/^[1-9]$/.test(e.key) && Number(e.key) <= h.heads) this.change({ head: Number(e.key) - 1 });
    else if (e.key === 'ArrowUp' || e.key === 'ArrowLeft') this.moveQuery(-1);
    else if (e.key === 'ArrowDown' || e.key === 'ArrowRight') this.moveQuery(1);
    else if (e.key === 'PageUp') this.moveQuery(-10);
    else if (e.key === 'PageDown') this.moveQuery(10);
    else if (e.key === 'Home') this.moveQuery(-h.n);
    else if (e.key === 'End') this.moveQuery(h.n);
    else if (e.key === 'Escape' && this.set.length) { this.set = []; this.draw(); }
    else handled = false;
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  }

  // --- data access ---

  array(part, head) {  // {data, rows, cols, dtype} of one head (a mask sent once serves every head)
    const layer = this.current().layer;
    const a = this.payload.arrays[`${layer}/${part}`] ?? this.shares(layer, part) ?? this.derive(layer, part);
    if (!a) return null;  // e.g. the mask of a layer where nothing is blocked
    const [heads, rows, cols] = a.shape, i = heads === 1 ? 0 : head;
    return { data: a.data.subarray(i * rows * cols, (i + 1) * rows * cols), rows, cols, dtype: a.dtype, part };
  }

  // Contribution shares where the payload has the exact weights (every cell, or the zoom window's), made once per
  // layer as mha_core's contribution_shares makes them: |g_i| α_ts ‖v_s W^O_i‖ / Σ_s |g_i| α_ts ‖v_s W^O_i‖, 0 for a
  // row that adds nothing (a head switched off: g_i = 0), in float64 from the sizes, gates and row sums the payload
  // carries (payload.contribution_arrays).
  shares(layer, part) {
    if (part !== 'contributions' && part !== 'zoom/contributions') return null;
    const h = this.payload.header, arrays = this.payload.arrays;
    const weights = arrays[`${layer}/${part === 'contributions' ? 'weights' : 'zoom/weights'}`];
    const sizes = arrays[`${layer}/contributions/sizes`], totals = arrays[`${layer}/contributions/totals`];
    const gates = arrays[`${layer}/contributions/gates`];
    if (!weights || !sizes || !totals || !gates) return null;
    const [heads, rows, cols] = weights.shape;
    const [r0, c0] = part === 'contributions' ? [0, 0] : [h.window[0], h.window[2]];
    const data = new Float64Array(heads * rows * cols);
    for (let i = 0; i < heads; i++) {
      for (let r = 0; r < rows; r++) {
        const total = totals.data[i * h.n + r0 + r], o = (i * rows + r) * cols;
        if (!(total > 0)) continue;
        const g = gates.data[i];
        for (let c = 0; c < cols; c++) data[o + c] = g * weights.data[o + c] * sizes.data[i * h.m + c0 + c] / total;
      }
    }
    return (arrays[`${layer}/${part}`] = { data, shape: [heads, rows, cols], dtype: '<f8' });
  }

  // The scaled scores its carrier left out (payload.scaled_is_derived: they are raw × scale in float32, bit for
  // bit): made once per layer, each the same float32 as the engine's.
  derive(layer, part) {
    if (part !== 'scaled' || !(this.derived[layer] || []).includes('scaled')) return null;
    const raw = this.payload.arrays[`${layer}/raw`], scale = Math.fround(this.payload.header.scale);
    const data = new Float32Array(raw.data.length);
    for (let i = 0; i < data.length; i++) data[i] = Math.fround(raw.data[i] * scale);
    return (this.payload.arrays[`${layer}/${part}`] = { data, shape: raw.shape, dtype: raw.dtype });
  }

  size(head, key) {  // ‖v_s W^O_i‖ of one key (0-based) in one head (computed as usual in a head switched off)
    const h = this.payload.header, sizes = this.payload.arrays[`${this.current().layer}/contributions/sizes`];
    return sizes.data[head * h.m + key];
  }

  off(head) {  // whether Step 3 multiplies this head's output by 0 (a head switched off), so no key of it adds anything
    const gates = this.payload.arrays[`${this.current().layer}/contributions/gates`];
    return !!gates && gates.data[head] === 0;
  }

  offLine(head) {  // copy.explorer.head_off
    return this.payload.header.text.head_off[head];
  }

  // One head's matrix at a stage; the mask stage without a mask: every cell open.
  stage(stage, head) {
    const m = this.array(stage, head);
    if (m || stage !== 'mask') return m;
    const w = this.array('weights', head);
    return { data: new Uint8Array(w.rows * w.cols), rows: w.rows, cols: w.cols, dtype: '|u1', part: 'mask' };
  }

  // The zoom window's cells of one matrix: sent as such when the matrices are pooled, else cut from the whole one.
  window(part, head) {
    const h = this.payload.header, [r0, r1, c0, c1] = h.window;
    if (h.step > 1) return this.array(`zoom/${part}`, head) ?? (part === 'mask' ? this.openWindow() : null);
    const whole = this.stage(part, head);
    if (!whole) return null;
    const rows = r1 - r0, cols = c1 - c0, data = new whole.data.constructor(rows * cols);
    for (let r = 0; r < rows; r++) {
      data.set(whole.data.subarray((r0 + r) * whole.cols + c0, (r0 + r) * whole.cols + c1), r * cols);
    }
    return { data, rows, cols, dtype: whole.dtype, part: `zoom/${part}` };
  }

  openWindow() {
    const [r0, r1, c0, c1] = this.payload.header.window;
    return { data: new Uint8Array((r1 - r0) * (c1 - c0)), rows: r1 - r0, cols: c1 - c0, dtype: '|u1', part: 'zoom/mask' };
  }

  limit(part, head, values, mask) {  // the diverging scale's half-width: the largest |value| drawn
    const key = `${this.current().layer}/${part}/${head}`;
    if (!this.limits.has(key)) {
      let top = 0;
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        if (Number.isFinite(v) && !(mask && mask[i] >= 1) && Math.abs(v) > top) top = Math.abs(v);
      }
      this.limits.set(key, top || 1);
    }
    return this.limits.get(key);
  }

  // The cells of one matrix as RGBA: the stage's scale; blocked cells transparent (the hatch shows through).
  image(m, stage, head, mask) {
    const px = new Uint8ClampedArray(m.rows * m.cols * 4);
    const signed = stage === 'raw' || stage === 'scaled';
    const table = signed ? this.signedLut : this.weightLut;
    const top = signed ? this.limit(m.part, head, m.data, stage === 'raw' ? null : mask) : 1;
    for (let i = 0; i < m.data.length; i++) {
      const v = m.data[i], o = 4 * i;
      if (stage === 'mask') {  // white where open; the share of a block that is blocked lets the hatch through
        px[o] = px[o + 1] = px[o + 2] = 255; px[o + 3] = 255 * (1 - v);
        continue;
      }
      if (!Number.isFinite(v) || (stage !== 'raw' && mask && mask[i] >= 1)) continue;  // blocked: transparent
      const t = signed ? (v / top + 1) / 2 : v;
      const k = 3 * Math.min(255, Math.max(0, Math.round(t * 255)));
      px[o] = table[k]; px[o + 1] = table[k + 1]; px[o + 2] = table[k + 2]; px[o + 3] = 255;
    }
    return { width: m.cols, height: m.rows, rgba: px, top };
  }

  // --- drawing ---

  draw() {
    if (!this.payload) return;
    const h = this.payload.header;
    const theme = pageIsDark() ? 'dark' : 'light';
    if (this.theme !== theme) {  // the page's theme changed: new colours, new lookup tables
      this.theme = theme;
      C = h.palettes[theme];
      this.weightLut = lut(C.weights);
      this.signedLut = lut(C.signed);
    }
    const v = this.current();
    const loading = !this.has(v.layer);
    this.root.dataset.loading = String(loading);
    this.updateControls(v);
    if (loading) { this.drawLoading(v); return; }
    this.width = this.root.clientWidth;
    const width = Math.max(320, Math.floor(this.width || 800));
    const font = getComputedStyle(this.root).fontFamily || 'sans-serif';
    const ctx = this.canvas.getContext('2d');
    const measurer = new CanvasPainter(ctx, font);
    const height = this.paint(null, width, measurer);
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * dpr); this.canvas.height = Math.round(height * dpr);
    this.canvas.style.width = `${width}px`; this.canvas.style.height = `${height}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = C.background; ctx.fillRect(0, 0, width, height);
    this.regions = [];
    this.paint(new CanvasPainter(ctx, font), width, measurer);
    if (v.display !== 'lines') delete this.canvas.dataset.lines;
    this.canvas.dataset.regions = JSON.stringify(this.regions);  // for tests (JSON leaves out info and queryAt, functions)
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', this.describe(v));
    this.draws += 1;
    this.root.dataset.draws = String(this.draws);
    this.root.dataset.view = JSON.stringify({ layer: v.layer, head: v.head + 1, query: v.query + 1, stage: v.stage,
                                              set: this.set.map(q => q + 1) });
    this.root.dataset.payload = h.id;
    this.root.dataset.heads = String(h.heads);
    this.root.dataset.display = v.display;
  }

  // A layer whose numbers are not here yet: the canvas says so (no other layer's matrix under the new layer's name),
  // at the height it had, so that the page does not jump when they come.
  drawLoading(v) {
    const text = this.payload.header.text.loading[v.layer - 1];
    this.root.querySelector('.status').textContent = text;
    const width = Math.max(320, Math.floor(this.root.clientWidth || 800)), height = this.canvas.clientHeight || 300;
    const ctx = this.canvas.getContext('2d'), dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * dpr); this.canvas.height = Math.round(height * dpr);
    this.canvas.style.width = `${width}px`; this.canvas.style.height = `${height}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = C.background; ctx.fillRect(0, 0, width, height);
    const font = getComputedStyle(this.root).fontFamily || 'sans-serif';
    new CanvasPainter(ctx, font).text(text, width / 2, Math.min(height / 2, 150), { size: 14, colour: C.muted, align: 'center' });
    this.regions = [];
    this.canvas.dataset.regions = '[]';
    this.canvas.setAttribute('aria-label', this.payload.header.text.loading_label[v.layer - 1]);
    this.tip.hidden = true;
  }

  updateControls(v) {
    const h = this.payload.header, r = this.root;
    for (const b of r.querySelectorAll('.stages button')) b.setAttribute('aria-pressed', String(b.dataset.stage === v.stage));
    for (const b of r.querySelectorAll('.views button')) b.setAttribute('aria-pressed', String(b.dataset.display === v.display));
    r.querySelector('select.head').value = String(v.head + 1);
    const layers = r.querySelector('select.layer');
    layers.value = String(v.layer);
    // A saved page (standalone.py) has no server to bring a layer it does not hold: those cannot be chosen.
    if (REGISTRY.standalone) for (const o of layers.options) o.disabled = !this.has(Number(o.value));
    r.querySelector('.query-name').textContent = `${v.query + 1} ${quoted(h.tokens[v.query])}`;
    const stage = h.stages.find(s => s.key === v.stage);
    // a set of one is the query alone: no count
    const k = this.set.length, set = k > 1 ? fill(pick(h.text.in_set, k), { count: k }) : '';
    r.querySelector('.status').textContent = fill(h.text.status, {
      layer: v.layer, head: v.head + 1, stage: stage.label, query: v.query + 1, token: quoted(h.tokens[v.query]), set });
  }

  // Lays out and draws everything with painter p (null: only measure); returns the height used. Wide: the heads, the
  // head's matrix and the query's bars side by side, at most 300 px tall at 820 px wide (more on a wider page), so
  // that the explorer fits on one screen under the page's text (one idea per screen); narrow: one above the other.
  // The zoom window, when there is one, goes under them.
  paint(p, width, measurer) {
    const h = this.payload.header, v = this.current();
    if (v.display === 'lines') return this.paintLines(p, measurer, width, v);
    const pad = 4;  // room for the outline of the leftmost panel
    if (width < WIDE) {
      const gridH = this.paintGrid(p, measurer, pad, 0, width - pad, v);
      let y = gridH + GAP;
      y += this.paintMatrix(p, measurer, 0, y, width, v, v.stage, false) + GAP;
      if (h.window) y += this.paintMatrix(p, measurer, 0, y, width, v, v.stage, true) + GAP;
      return y + this.paintBar(p, measurer, 0, y, width, v) + 4;
    }
    const gridW = Math.round(width * 0.22), mainX = gridW + GAP, mainW = Math.round(width * 0.46);
    const barX = mainX + mainW + GAP;
    const mainH = this.paintMatrix(p, measurer, mainX, 0, mainW, v, v.stage, false, Math.max(300, 0.37 * width));
    const gridH = this.paintGrid(p, measurer, pad, 0, gridW - pad, v, mainH);
    const barH = this.paintBar(p, measurer, barX, 0, width - barX, v, mainH);
    const y = Math.max(gridH, mainH, barH);
    return (h.window ? y + GAP + this.paintMatrix(p, measurer, 0, y + GAP, width, v, v.stage, true) : y) + 4;
  }

  // Every head's matrix, small; tall: the height beside it, which the panels fill as far as they can (the fewest
  // columns that fit), else 4 columns; a group of query heads sharing K and V takes a row.
  paintGrid(p, measurer, x, y, width, v, tall = 0) {
    const h = this.payload.header, gap = 10, title = 16;
    const shown = v.stage === 'contributions' ? 'contributions' : 'weights';  // the grid's panels: weights, or shares
    const part = h.grid_step > 1 ? (shown === 'weights' ? 'grid' : 'grid/contributions') : shown;
    const mask = h.grid_step > 1 ? 'grid/mask' : 'mask';
    const sample = this.array(part, 0);
    const top = y + 5 + heading(p, measurer, x, y, width, h.text.grid[shown]);
    const size = c => {  // [panel width, panel height, rows] with c columns
      const w = (width - (c - 1) * gap) / c;
      return [w, Math.min(2 * w, Math.max(0.3 * w, w * sample.rows / sample.cols)), Math.ceil(h.heads / c)];
    };
    const grouped = h.group_size > 1 && h.group_size <= 6;
    const fits = c => { const [, ph, rows] = size(c); return top - y + rows * (ph + title + gap) <= tall; };
    const cols = grouped ? h.group_size
      : (tall && Array.from({ length: h.heads }, (_, i) => i + 1).find(fits)) || Math.min(h.heads, 4);
    const [pw, ph, rows] = size(cols);
    // the panels' names in the longest form that fits every panel's width, so that none runs into the next:
    // "head 1 (K/V 1)", "head 1" or "1"; in the text colour (head colours mean heads: a K/V group is its row)
    const forms = [i => `head ${i + 1}` + (h.group_size > 1 ? ` (K/V ${Math.floor(i / h.group_size) + 1})` : ''),
                   i => `head ${i + 1}`, i => `${i + 1}`];
    const name = forms.find(f => Array.from({ length: h.heads }, (_, i) => f(i))
      .every(s => measurer.measure(s, 11) * 1.08 <= pw)) || forms[2];
    for (let i = 0; i < h.heads; i++) {
      const px = x + (i % cols) * (pw + gap), py = top + Math.floor(i / cols) * (ph + title + gap);
      const m = this.array(part, i), blocked = this.array(mask, i);
      if (p) {
        p.text(name(i), px, py + 7, { size: 11, colour: C.text, weight: i === v.head ? 'bold' : 'normal' });
        p.hatch(px, py + title, pw, ph);
        p.cells(this.image(m, 'weights', i, blocked && blocked.data), px, py + title, pw, ph);
        if (i === v.head) p.stroke(px - 2, py + title - 2, pw + 4, ph + 4, C.highlight, 2.5);
        this.regions.push(this.region('grid', i, px, py + title, pw, ph, m, blocked, h.grid_step, 0, 0, shown));
      }
    }
    return top - y + rows * (ph + title + gap);
  }

  // One head's matrix at a stage (zoom: the zoom window's cells); `most`: the height it may take at most, if any.
  paintMatrix(p, measurer, x, y, width, v, stage, zoom, most = 0) {
    const h = this.payload.header;
    const step = zoom ? 1 : h.step;
    const [r0, r1, c0, c1] = zoom ? h.window : [0, h.n, 0, h.m];
    const m = zoom ? this.window(stage, v.head) : this.stage(stage, v.head);
    const mask = stage === 'raw' || !h.masked ? null : zoom ? this.window('mask', v.head) : this.array('mask', v.head);
    const info = h.stages.find(s => s.key === stage);
    const keys = h.key_tokens || h.tokens;
    const labels = (tokens, lo, hi, s, count) => Array.from({ length: count }, (_, i) => s === 1
      ? `${lo + i + 1} ${short(tokens[lo + i])}` : blockRange(i, s, hi));
    const rowLabels = labels(h.tokens, r0, r1, step, m.rows), colLabels = labels(keys, c0, c1, step, m.cols);
    const left = Math.min(150, 10 + Math.max(...rowLabels.map(s => measurer.measure(s, 11))));
    const bottom = Math.min(120, 14 + 0.72 * Math.max(...colLabels.map(s => measurer.measure(s, 11))));
    const right = 84;  // the colour bar and its ticks
    // the scores' title names their product and scale
    const title = fill(h.text.matrix[zoom ? 'zoom' : 'whole'], { head: v.head + 1, title: info.title });
    const head = 9 + heading(p, measurer, x, y, width, title, info.note);
    // square cells of at most 40 px where the height allows, else as tall as the height allows
    const cw = Math.min(Math.max(60, width - left - right) / m.cols, 40);
    const ch = Math.min(cw, (zoom ? 520 : most ? Math.max(60, most - head - bottom) : 560) / m.rows);
    const w = cw * m.cols, mh = ch * m.rows;
    if (!p) return head + mh + bottom;
    const mx = x + left, my = y + head;
    p.hatch(mx, my, w, mh);
    const img = this.image(m, stage, v.head, mask && mask.data);
    p.cells(img, mx, my, w, mh);
    p.stroke(mx, my, w, mh, C.pale, 1);
    // the pinned query's row, and the set's rows
    const rowOf = q => (q - r0) / step;
    for (const q of this.set) {
      if (q >= r0 && q < r1) p.rect(mx - 7, my + Math.floor(rowOf(q)) * ch + ch / 2 - 2, 4, 4, C.highlight);
    }
    if (v.query >= r0 && v.query < r1) p.stroke(mx - 1, my + Math.floor(rowOf(v.query)) * ch, w + 2, Math.max(ch, 2), C.highlight, 2);
    if (!zoom && h.window) {  // where the zoom window lies
      const [a, b, c, d] = h.window;
      p.stroke(mx + (c / step) * cw, my + (a / step) * ch, ((d - c) / step) * cw, ((b - a) / step) * ch, C.text, 1.5);
    }
    const er = labelEvery(ch, 13), ec = labelEvery(cw, 13);
    for (let i = 0; i < m.rows; i += er) p.text(rowLabels[i], mx - 10, my + (i + 0.5) * ch, { size: 11, align: 'right' });
    for (let j = 0; j < m.cols; j += ec) {
      p.text(colLabels[j], mx + (j + 0.5) * cw, my + mh + 6, { size: 11, align: 'right', angle: -45 });
    }
    this.paintScale(p, mx + w + 18, my, Math.min(mh, 260), stage, img.top);
    this.regions.push(this.region(zoom ? 'zoom' : 'matrix', v.head, mx, my, w, mh, m, mask, step, r0, c0, stage));
    return head + mh + bottom;
  }

  paintScale(p, x, y, height, stage, top) {
    if (stage === 'mask') {
      p.hatch(x, y, 14, 14); p.stroke(x, y, 14, 14, C.pale); p.text('blocked', x + 20, y + 7, { size: 11 });
      p.stroke(x, y + 22, 14, 14, C.pale); p.text('open', x + 20, y + 29, { size: 11 });
      return;
    }
    const signed = stage === 'raw' || stage === 'scaled';
    p.gradient(signed ? C.signed : C.weights, x, y, 14, height);
    const ticks = signed ? [[top, 0], [0, 0.5], [-top, 1]] : [[1, 0], [0.5, 0.5], [0, 1]];
    for (const [value, f] of ticks) p.text(String(Number(value.toPrecision(4))), x + 20, y + f * height, { size: 11 });
  }

  // The query weights (part: 'weights') or contribution shares ('contributions') of the pinned query, or the mean
  // (and sum) of the set's: exact where the engine's numbers are here (every cell, or the zoom window's), else the
  // block means of the overview.
  barData(v, part = 'weights') {
    const h = this.payload.header, w = h.window;
    const queries = this.set.length > 1 ? this.set : [v.query];
    let src;  // where the rows come from: every cell exact, the zoom window's cells, or the overview's blocks
    if (h.step === 1) src = { part, mask: 'mask', rowOf: q => q, c0: 0, step: 1, note: '' };
    else if (w && queries.every(q => q >= w[0] && q < w[1])) {  // pooled: the zoom window's exact cells
      src = { part: `zoom/${part}`, mask: 'zoom/mask', rowOf: q => q - w[0], c0: w[2], step: 1, note: h.text.bar_zoom };
    } else {
      src = { part, mask: 'mask', rowOf: q => Math.floor(q / h.step), c0: 0, step: h.step, note: h.text.bar_pooled };
    }
    const m = this.array(src.part, v.head), blockedBy = this.array(src.mask, v.head);
    const row = q => m.data.subarray(src.rowOf(q) * m.cols, (src.rowOf(q) + 1) * m.cols);
    const mean = new Float64Array(m.cols);
    for (const q of queries) row(q).forEach((x, j) => { mean[j] += x / queries.length; });
    const blocked = j => !!blockedBy && queries.every(q => blockedBy.data[src.rowOf(q) * m.cols + j] >= 1);
    return { ...src, queries, mean, single: queries.length === 1 ? row(queries[0]) : null, blocked, dtype: m.dtype,
             cols: m.cols };
  }

  describe(v) {  // the canvas in words, as figures.describe words a query's weights: its two strongest keys
    const h = this.payload.header, t = h.text.describe, d = this.barData(v), keys = h.key_tokens || h.tokens;
    const who = fill(pick(t.who, d.queries.length),
                     { token: h.tokens[v.query], query: v.query + 1, queries: d.queries.map(q => q + 1).join(', ') });
    const open = Array.from(d.mean, (x, j) => [x, j]).filter(([x, j]) => !d.blocked(j) && Number.isFinite(x));
    open.sort((a, b) => b[0] - a[0]);
    const name = j => d.step === 1 ? fill(t.key, { token: keys[d.c0 + j], key: d.c0 + j + 1 })
      : fill(t.keys, { keys: blockRange(j, d.step, h.m) });
    const [first, next] = open.slice(0, 2);
    const weights = first ? fill(pick(t.strongest, next ? 2 : 1), { key: name(first[1]), weight: first[0].toFixed(2),
      next: next && name(next[1]), next_weight: next && next[0].toFixed(2) }) : t.all_blocked;
    return fill(t.sentence, { layer: v.layer, head: v.head + 1, who, weights });
  }

  // The chosen query's weights as bars; at the contributions stage its contribution shares as bars, each key's weight
  // outlined beside it, so a key with a large weight that adds little stands out. tall: the height to take (the
  // matrix's beside it), else the bars' own.
  paintBar(p, measurer, x, y, width, v, tall = 0) {
    const h = this.payload.header, keys = h.key_tokens || h.tokens;
    const shares = v.stage === 'contributions';
    const d = this.barData(v, shares ? 'contributions' : 'weights'), weights = shares ? this.barData(v) : null;
    const label = j => d.step === 1 ? `${d.c0 + j + 1} ${short(keys[d.c0 + j])}`
      : blockRange(j, d.step, h.m);
    const labels = Array.from({ length: d.cols }, (_, j) => label(j));
    const bottom = Math.min(110, 14 + 0.72 * Math.max(...labels.map(s => measurer.measure(s, 11))));
    const left = 50, k = d.queries.length, right = k > 1 ? 60 : 16;
    const names = d.queries.slice(0, 4).map(q => `${q + 1} ${quoted(h.tokens[q])}`).join(', ') + (k > 4 ? ', …' : '');
    const t = h.text.bar, part = shares ? 'contributions' : 'weights';
    let total = 0;
    for (const value of d.mean) total += value * k;
    const off = shares && this.off(v.head);
    const summed = !off && k === 1 && d.step === 1 && !d.note;  // one query's exact values: their sum too
    const title = fill(summed ? t.summed[part] : pick(t[off ? 'off' : part], k),
                       { head: v.head + 1, count: k, names, total: total.toFixed(4) });
    const note = [off ? this.offLine(v.head) : '', shares ? pick(h.text.shares, k) : '', d.note];
    const head = 24 + heading(p, measurer, x, y, width, title, note.filter(Boolean).join(' · '));  // 24: the axis's name
    const bh = tall ? Math.max(120, tall - head - bottom) : 170;
    if (!p) return head + bh + bottom;
    const colour = C.heads[v.head % C.heads.length];
    const bx = x + left, by = y + head, bw = width - left - right;
    for (const f of [0, 0.5, 1]) {
      p.line(bx, by + bh * (1 - f), bx + bw, by + bh * (1 - f), C.faint);
      p.text(String(f), bx - 8, by + bh * (1 - f), { size: 11, align: 'right' });
      if (k > 1) p.text(mean6(f * k), bx + bw + 8, by + bh * (1 - f), { size: 11 });
    }
    p.text(k > 1 ? 'mean' : shares ? 'share' : 'weight', bx - 8, by - 12, { size: 11, colour: C.muted, align: 'right' });
    if (k > 1) p.text('sum', bx + bw + 8, by - 12, { size: 11, colour: C.muted });
    const cw = bw / d.cols, height = value => bh * Math.min(1, Math.max(0, value));
    for (let j = 0; j < d.cols; j++) {
      if (d.blocked(j)) { p.hatch(bx + j * cw + cw * 0.1, by + bh - 6, Math.max(1, cw * 0.8), 6); continue; }
      p.rect(bx + j * cw + cw * 0.1, by + bh - height(d.mean[j]), Math.max(1, cw * 0.8), height(d.mean[j]), colour);
      if (weights) {
        p.stroke(bx + j * cw + cw * 0.1, by + bh - height(weights.mean[j]), Math.max(1, cw * 0.8), height(weights.mean[j]),
                 C.text, 1.25);
      }
    }
    p.line(bx, by + bh, bx + bw, by + bh, C.neutral);
    const every = labelEvery(cw, 13);
    for (let j = 0; j < d.cols; j += every) p.text(labels[j], bx + (j + 0.5) * cw, by + bh + 6, { size: 11, align: 'right', angle: -45 });
    this.regions.push({ kind: 'bar', head: v.head, x: bx, y: by, w: bw, h: bh, rows: 1, cols: d.cols,
                        info: (r, c) => this.barInfo(d, c, labels, weights, off ? v.head : null) });
    return head + bh + bottom;
  }

  // What a bar says on hover; with `weights` (the contributions stage), d holds shares and the weight follows;
  // offHead: the head on view when it is switched off (its shares are no shares: 0 over 0).
  barInfo(d, j, labels, weights = null, offHead = null) {
    const text = this.payload.header.text, t = text.tip, names = text.names, k = d.queries.length;
    const key = d.step === 1 ? fill(t.key, { key: labels[j] }) : fill(t.keys, { keys: labels[j] });  // a key, or a block
    const name = weights ? names.contributions : names.weight;
    const weightMean = () => fill(t.weight_mean, { mean: mean6(weights.mean[j]) });
    if (d.blocked(j)) return { lines: [key, text.blocked.weights] };
    if (offHead !== null) {
      const weight = k > 1 || d.step > 1 ? [weightMean()] : said(names.weight, weights.single[j], weights.dtype);
      return { lines: [key, this.offLine(offHead), ...weight] };
    }
    if (k > 1) {
      return { lines: [key, fill(pick(text.mean_over, k), { name, count: k, mean: mean6(d.mean[j]) }),
                       fill(t.sum, { sum: mean6(d.mean[j] * k) }), ...(weights ? [weightMean()] : [])] };
    }
    if (d.step > 1) {
      return { lines: [fill(t.keys, { keys: labels[j] }), fill(t.row_mean, { name, mean: mean6(d.mean[j]) }),
                       ...(weights ? [fill(t.weight, { weight: mean6(weights.mean[j]) })] : [])] };
    }
    const value = exact(d.single[j], d.dtype);
    return { lines: [key, ...said(name, d.single[j], d.dtype),
                     ...(weights ? said(names.weight, weights.single[j], weights.dtype) : [])],
             value, weight: weights ? exact(weights.single[j], weights.dtype) : undefined };
  }

  region(kind, head, x, y, w, hgt, m, mask, step, r0, c0, stage = 'weights') {
    const h = this.payload.header, keys = h.key_tokens || h.tokens, t = h.text.tip, name = h.text.names[stage];
    // A share's parts, where it is exact: the weight and the size of the key's transformed value.
    const parts = stage === 'contributions' && step === 1
      ? (kind === 'zoom' ? this.window('weights', head) : this.array('weights', head)) : null;
    const info = (r, c) => {
      const value = m.data[r * m.cols + c], blockedShare = mask ? mask.data[r * m.cols + c] : 0;
      const lines = [];
      let shown;
      if (step === 1) {
        const q = r0 + r, k = c0 + c;
        lines.push(fill(t.pair, { query: q + 1, token: quoted(h.tokens[q]), key: k + 1, key_token: quoted(keys[k]) }));
        if (stage === 'mask') lines.push(h.text.mask[value ? 'blocked' : 'open']);
        else if (stage !== 'raw' && blockedShare >= 1) {
          lines.push(h.text.blocked[stage]);
          if (stage === 'scaled') lines.push(...said(fill(t.before_mask, { name }), value, m.dtype));
        } else if (stage === 'contributions' && this.off(head)) {
          shown = 0; lines.push(this.offLine(head));
        } else {
          shown = exact(value, m.dtype);
          lines.push(...said(fill(t.head_value, { head: head + 1, name }), value, m.dtype));
        }
        if (parts && shown !== undefined) {
          lines.push(...said(h.text.names.alpha, parts.data[r * parts.cols + c], parts.dtype),
                     fill(t.size, { size: mean6(this.size(head, k)) }));
        }
        return { lines, value: shown, query: q + 1, key: k + 1 };
      }
      const q0 = r * step, k0 = c * step, q1 = Math.min(q0 + step, h.n), k1 = Math.min(k0 + step, h.m);
      lines.push(fill(t.block, { queries: blockRange(r, step, h.n), keys: blockRange(c, step, h.m) }));
      const block = { rows: q1 - q0, cols: k1 - k0 };
      if (stage === 'mask') lines.push(fill(t.block_masked, { ...block, percent: mean6(100 * value) }));
      else if (!Number.isFinite(value) || (stage !== 'raw' && blockedShare >= 1)) {
        lines.push(fill(t.block_blocked, block));
      } else if (stage === 'contributions' && this.off(head)) lines.push(this.offLine(head));
      else lines.push(fill(t.block_mean, { ...block, head: head + 1, name, value: mean6(value) }));
      return { lines };
    };
    // the query a click means: the row's query, or, on a pooled matrix, the query under the pointer within its block
    const queryAt = (r, fy) => step === 1 ? r0 + r : Math.min(h.n - 1, Math.floor(fy * h.n));
    return { kind, head, x, y, w, h: hgt, rows: m.rows, cols: m.cols, step, r0, c0, stage, info, queryAt };
  }

  hit(e) {
    const box = this.canvas.getBoundingClientRect();
    const px = e.clientX - box.left, py = e.clientY - box.top;
    for (const g of this.regions) {
      if (px >= g.x && px < g.x + g.w && py >= g.y && py < g.y + g.h) {
        const r = Math.min(g.rows - 1, Math.floor((py - g.y) / g.h * g.rows));
        const c = Math.min(g.cols - 1, Math.floor((px - g.x) / g.w * g.cols));
        return { g, r, c, fy: (py - g.y) / g.h, px, py };
      }
    }
    return null;
  }

  hover(e) {
    const found = this.hit(e);
    if (!found) { this.tip.hidden = true; return; }
    const { g, r, c, px, py } = found;
    if (g.kind === 'heads') { this.tip.hidden = true; return; }
    const about = g.kind === 'queries' || g.kind === 'keys' ? this.hoverToken(g, r) : g.info(r, c);
    this.tip.textContent = about.lines.join('\n');
    this.tip.dataset.value = about.value ?? '';
    this.tip.dataset.query = about.query ?? '';
    this.tip.dataset.key = about.key ?? '';
    this.tip.dataset.weight = about.weight ?? '';
    this.tip.dataset.kind = g.kind;
    this.tip.hidden = false;
    const canvasTop = this.canvas.offsetTop, canvasLeft = this.canvas.offsetLeft;
    const left = Math.min(canvasLeft + px + 14, this.root.clientWidth - this.tip.offsetWidth - 4);
    this.tip.style.left = `${Math.max(0, left)}px`;
    this.tip.style.top = `${canvasTop + py + 16}px`;
  }

  click(e) {
    const found = this.hit(e);
    if (!found) return;
    const { g, r, fy } = found;
    if (g.kind === 'grid') { this.change({ head: g.head }); return; }
    if (g.kind === 'heads') { this.clickHeads(g, r, found.c, e.shiftKey); return; }
    if (g.kind === 'queries' && this.payload.header.step === 1) { this.set = []; this.change({ query: r }); return; }
    if (g.kind !== 'matrix' && g.kind !== 'zoom') return;
    const q = g.queryAt(r, fy);
    if (e.shiftKey) {
      const set = this.set.length ? this.set.slice() : [this.current().query];
      const at = set.indexOf(q);
      if (at >= 0 && set.length > 1) set.splice(at, 1); else if (at < 0) set.push(q);
      this.set = set.sort((a, b) => a - b);
      this.draw();
      return;
    }
    this.set = [];
    this.change({ query: q });
  }

  // --- the lines view (the pure geometry: lineGeometry above) ---

  // The heads the lines view shows: the head on view and those shift-clicked beside it, in order.
  shownHeads(v) {
    return [...new Set([v.head, ...this.lineHeads])].filter(i => i < this.payload.header.heads).sort((a, b) => a - b);
  }

  // One head's matrix at the stage as lineGeometry takes it (the whole matrix: block means where it is pooled).
  lineMatrix(stage, head) {
    const h = this.payload.header, m = this.stage(stage, head);
    const mask = stage === 'raw' || stage === 'mask' || !h.masked ? null : this.array('mask', head);
    const signed = stage === 'raw' || stage === 'scaled';
    const top = signed ? this.limit(m.part, head, m.data, stage === 'raw' ? null : mask && mask.data) : 1;
    return { head, data: m.data, blocked: mask && mask.data, rows: m.rows, cols: m.cols, top };
  }

  // Queries on the left, keys on the right, a line for each pair at the opacity lineOpacity gives it, each head's
  // lines in its colour; a row of squares above, one per head, chooses them. Returns the height used.
  paintLines(p, measurer, width, v) {
    const h = this.payload.header, t = h.text.lines, keys = h.key_tokens || h.tokens;
    const heads = this.shownHeads(v), matrices = heads.map(i => this.lineMatrix(v.stage, i));
    const { rows, cols } = matrices[0];
    const labels = (tokens, count, all) => Array.from({ length: count }, (_, i) => h.step === 1
      ? `${i + 1} ${short(tokens[i])}` : blockRange(i, h.step, all));
    const queryLabels = labels(h.tokens, rows, h.n), keyLabels = labels(keys, cols, h.m);
    const x = 4, block = Math.min(width - 8, 680);
    const title = fill(pick(t.title, heads.length), { heads: heads.map(i => i + 1).join(', ') });
    let y = 4 + heading(p, measurer, x, 0, block, title, `${t.note[v.stage]} · ${t.hint}`) + 8;
    // the heads' squares
    const square = 14, pitch = Math.max(34, measurer.measure(String(h.heads), 11) + square + 10);
    const perRow = Math.max(1, Math.floor(block / pitch)), squareRows = Math.ceil(h.heads / perRow);
    if (p) {
      for (let i = 0; i < h.heads; i++) {
        const sx = x + (i % perRow) * pitch, sy = y + Math.floor(i / perRow) * (square + 8);
        const colour = C.heads[i % C.heads.length], on = heads.includes(i);
        if (on) p.rect(sx, sy, square, square, colour);
        p.stroke(sx, sy, square, square, on ? colour : C.pale, 1.5);
        if (i === v.head) p.stroke(sx - 2.5, sy - 2.5, square + 5, square + 5, C.highlight, 1.5);
        p.text(String(i + 1), sx + square + 4, sy + square / 2, { size: 11, weight: i === v.head ? 'bold' : 'normal' });
      }
      this.regions.push({ kind: 'heads', head: v.head, x, y, w: perRow * pitch, h: squareRows * (square + 8),
                          rows: squareRows, cols: perRow, perRow });
    }
    y += squareRows * (square + 8) + 6;
    // the two columns, as tall as the longer needs
    const slot = Math.min(20, Math.max(3, 600 / Math.max(rows, cols)));
    const tall = slot * Math.max(rows, cols), querySlot = tall / rows, keySlot = tall / cols;
    const labelW = Math.min(150, 8 + Math.max(...queryLabels.concat(keyLabels).map(s => measurer.measure(s, 11))));
    const x1 = x + labelW + 6, x2 = x + block - labelW - 6;
    if (!p) return y + tall + 8;
    const lines = lineGeometry(v.stage, matrices, { x1, x2, y0: y, querySlot, keySlot, focus: this.focus });
    p.lines(lines, l => C.heads[l.head % C.heads.length], slot >= 8 ? 1.5 : 1);
    const focused = (side, i) => this.focus && this.focus.side === side && this.focus.index === i;
    const column = (names, slotH, side, lx, align) => {
      const every = labelEvery(slotH, 13);
      for (let i = 0; i < names.length; i++) {
        const pinned = side === 'query' && h.step === 1 && i === v.query;
        if (i % every && !focused(side, i) && !pinned) continue;
        p.text(names[i], lx, slotY(i, y, slotH), { size: 11, align,
          weight: focused(side, i) || pinned ? 'bold' : 'normal', colour: pinned ? C.highlight : C.text });
      }
    };
    column(queryLabels, querySlot, 'query', x1 - 6, 'right');
    column(keyLabels, keySlot, 'key', x2 + 6, 'left');
    this.regions.push({ kind: 'queries', head: v.head, x, y, w: labelW + 6, h: tall, rows, cols: 1 },
                      { kind: 'keys', head: v.head, x: x2, y, w: labelW + 6, h: tall, rows: cols, cols: 1 });
    this.canvas.dataset.lines = JSON.stringify(linesSummary(lines));
    return y + tall + 8;
  }

  // The pointer over a token of the lines view: its lines alone (redrawn when that changes), and its name.
  hoverToken(g, r) {
    const h = this.payload.header, side = g.kind === 'queries' ? 'query' : 'key';
    if (!this.focus || this.focus.side !== side || this.focus.index !== r) { this.focus = { side, index: r }; this.draw(); }
    const tokens = side === 'query' ? h.tokens : h.key_tokens || h.tokens;
    const name = h.step === 1 ? quoted(tokens[r]) : blockRange(r, h.step, side === 'query' ? h.n : h.m);
    return { lines: [fill(h.text.lines[side], { [side]: r + 1, token: name })],
             query: side === 'query' ? r + 1 : undefined, key: side === 'key' ? r + 1 : undefined };
  }

  // A click on a head's square: that head alone; with shift, that head added to (or taken from) those shown.
  clickHeads(g, r, c, shift) {
    const i = r * g.perRow + c, v = this.current();
    if (i >= this.payload.header.heads) return;
    if (!shift) { this.lineHeads = []; this.change({ head: i }); return; }
    if (i === v.head) return;
    this.lineHeads = this.lineHeads.includes(i) ? this.lineHeads.filter(j => j !== i) : [...this.lineHeads, i];
    this.draw();
  }

  // --- saving ---

  save(format) {
    const h = this.payload.header, v = this.current();
    if (!this.has(v.layer)) return;  // its numbers are still on their way: nothing to save yet
    const width = Math.max(320, Math.floor(this.root.clientWidth || 800));
    const font = getComputedStyle(this.root).fontFamily || 'sans-serif';
    const measurer = new CanvasPainter(document.createElement('canvas').getContext('2d'), font);
    const regions = this.regions;
    const height = this.paint(null, width, measurer);
    const name = `attention_${h.layer_count > 1 ? `layer${v.layer}_` : ''}head${v.head + 1}_${v.stage}`
      + `${v.display === 'lines' ? '_lines' : ''}.${format}`;
    let blob;
    if (format === 'svg') {
      const svg = new SvgPainter((s, size) => measurer.measure(s, size), font);
      this.regions = [];
      this.paint(svg, width, measurer);
      blob = new Blob([svg.svg(width, height)], { type: 'image/svg+xml' });
      this.regions = regions;
      download(blob, name);
    } else {
      const c = document.createElement('canvas');
      c.width = width * 2; c.height = height * 2;
      const g = c.getContext('2d');
      g.scale(2, 2); g.fillStyle = C.background; g.fillRect(0, 0, width, height);
      this.regions = [];
      this.paint(new CanvasPainter(g, font), width, measurer);
      this.regions = regions;
      c.toBlob(b => download(b, name), 'image/png');
    }
  }
}
