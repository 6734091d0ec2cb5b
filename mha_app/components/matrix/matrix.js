// One heatmap (mha_app/components/matrix/__init__.py: matrix_data) drawn as SVG: the cells as one image, one pixel a cell, and the
// titles, labels, numbers and colour bar as SVG text. New data redraws in the same element, so a rerun that changes the
// numbers does not mount a new chart. Labels and titles are only ever set as text.

const NS = 'http://www.w3.org/2000/svg';
const INSTANCES = new WeakMap();  // component element -> its MatrixView

export default function ({ data, parentElement }) {
  let view = INSTANCES.get(parentElement);
  if (!view) {
    view = new MatrixView(parentElement.querySelector('.mha-matrix'));
    INSTANCES.set(parentElement, view);
  }
  view.show(data);
  return () => view.dispose();
}

// A value as plotly's hover format writes it: ".6g" = 6 significant digits, ".4f" = 4 decimals.
function formatted(v, spec) {
  const m = /^\.(\d+)([gf])$/.exec(spec || '');
  if (!m) return String(v);
  return m[2] === 'f' ? v.toFixed(Number(m[1])) : v.toPrecision(Number(m[1]));
}

// Ticks for the colour bar: round numbers 1, 2 or 5 × 10^k apart, about five from zmin to zmax.
function ticks(lo, hi) {
  const raw = (hi - lo) / 5 || 1, power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map(f => f * power).find(s => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  return out.map(t => [t, t.toFixed(decimals)]);
}

class MatrixView {
  constructor(root) {
    this.root = root;
    this.drawing = root.querySelector('.drawing');
    this.tip = root.querySelector('.tip');
    this.measurer = document.createElement('canvas').getContext('2d');
    this.width = 0;
    root.querySelector('.png').addEventListener('click', () => this.save('png'));
    root.querySelector('.svg').addEventListener('click', () => this.save('svg'));
    this.resize = new ResizeObserver(() => {
      if (this.data && this.root.clientWidth !== this.width) this.draw();
    });
    this.resize.observe(root);
  }

  dispose() { this.resize.disconnect(); }

  show(data) {
    if (data === this.data) return;
    this.data = data;
    this.root.setAttribute('aria-label', data.alt);
    this.draw();
  }

  measure(text, size, weight = 'normal') {
    this.measurer.font = `${weight} ${size}px ${this.font}`;
    return this.measurer.measureText(text).width;
  }

  // A label cut to `most` px, with an ellipsis.
  fit(text, size, most) {
    if (this.measure(text, size) <= most) return text;
    let s = text;
    while (s.length > 1 && this.measure(s + '…', size) > most) s = s.slice(0, -1);
    return s + '…';
  }

  draw() {
    const d = this.data, C = d.colours;
    this.font = getComputedStyle(this.root).fontFamily || 'sans-serif';
    this.width = this.root.clientWidth;
    const W = Math.max(this.width, 320), H = d.height;
    const rows = d.z.length, cols = d.z[0].length;
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('xmlns', NS);
    svg.setAttribute('width', W); svg.setAttribute('height', H);
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('aria-hidden', 'true');  // the figure is named by the chart's words, as st.plotly_chart's are
    svg.setAttribute('font-family', this.font);
    const add = (name, attrs, text) => {
      const el = document.createElementNS(NS, name);
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      if (text !== undefined) el.textContent = text;
      svg.appendChild(el);
      return el;
    };
    add('rect', { x: 0, y: 0, width: W, height: H, fill: C.background });

    // Title: the first line as a chart title, the others smaller and muted.
    let top = 8;
    d.title.forEach((line, i) => {
      const size = i ? 12 : 16;
      for (const part of wrap(this, line, W - 8, size)) {  // a narrow window: the title in lines
        top += size + 4;
        add('text', { x: 2, y: top - 4, 'font-size': size, fill: i ? C.muted : C.text }, part);
      }
    });
    top += 12;

    // The colour bar's ticks and title set the right margin; the longest row label the left one.
    const tickList = ticks(d.zmin, d.zmax);
    const barTitleWidth = Math.max(...d.bar.map(line => this.measure(line, 12)));
    // Room to spare here too (and at the left, below): a saved SVG opened elsewhere may draw text in a wider font.
    const right = 1.12 * Math.max(12 + 6 + Math.max(...tickList.map(([, s]) => this.measure(s, 11))), barTitleWidth) + 20;
    const yTitle = d.y_title ? 20 : 0;
    const yLabels = d.y.map(s => this.fit(s, 12, W * 0.4));
    const left = yTitle + 1.12 * Math.max(...yLabels.map(s => this.measure(s, 12))) + 10;
    const slanted = cols > 6;
    const xLabelWidth = Math.max(...d.x.map(s => this.measure(s, 12)));
    const bottom = (slanted ? xLabelWidth * 0.71 + 16 : 20) + (d.x_title ? 22 : 0);
    const x0 = left, x1 = W - right, y0 = top + 14 * d.bar.length, y1 = H - bottom;
    const cw = (x1 - x0) / cols, ch = (y1 - y0) / rows;
    this.grid = { x0, y0, cw, ch, rows, cols };

    // The cells, one pixel each in a small image the SVG stretches (as plotly draws a heatmap).
    const img = document.createElement('canvas');
    img.width = cols; img.height = rows;
    const g = img.getContext('2d'), pixels = g.createImageData(cols, rows), colours = lut(d.scale);
    const span = d.zmax - d.zmin || 1;
    d.z.forEach((row, r) => row.forEach((v, c) => {
      const at = 4 * (r * cols + c);
      if (v === null) return;  // a blank cell (a blocked pair) shows the background
      let t = Math.min(1, Math.max(0, (v - d.zmin) / span));
      if (d.reverse) t = 1 - t;
      const k = 3 * Math.round(t * 255);
      pixels.data.set([colours[k], colours[k + 1], colours[k + 2], 255], at);
    }));
    g.putImageData(pixels, 0, 0);
    add('image', { x: x0, y: y0, width: x1 - x0, height: y1 - y0, preserveAspectRatio: 'none',
                   href: img.toDataURL('image/png'), 'image-rendering': 'pixelated' });

    // Each cell's number, where the figure prints them and they fit.
    if (d.text && this.measure('-0.00', 11) + 2 <= cw && ch >= 12) {
      d.text.forEach((row, r) => row.forEach((s, c) => {
        if (s) add('text', { x: x0 + (c + 0.5) * cw, y: y0 + (r + 0.5) * ch + 4, 'font-size': 11,
                             'text-anchor': 'middle', fill: d.ink[r][c] }, s);
      }));
    }

    // Axes: a row label beside every row that has room, a column label under every k-th column.
    const rowEvery = labelEvery(ch, 14);
    yLabels.forEach((s, r) => {
      if (r % rowEvery === 0) add('text', { x: x0 - 6, y: y0 + (r + 0.5) * ch + 4, 'font-size': 12, 'text-anchor': 'end',
                                          fill: C.muted }, s);
    });
    const colEvery = labelEvery(cw, slanted ? 15 : xLabelWidth + 8);
    d.x.forEach((s, c) => {
      if (c % colEvery) return;
      const x = x0 + (c + 0.5) * cw, y = y1 + 14;
      add('text', slanted ? { x, y, 'font-size': 12, 'text-anchor': 'end', fill: C.muted,
                              transform: `rotate(-45 ${x} ${y - 4})` }
                          : { x, y, 'font-size': 12, 'text-anchor': 'middle', fill: C.muted }, s);
    });
    if (d.x_title) add('text', { x: (x0 + x1) / 2, y: H - 6, 'font-size': 13, 'text-anchor': 'middle', fill: C.text },
                       d.x_title);
    if (d.y_title) add('text', { x: 14, y: (y0 + y1) / 2, 'font-size': 13, 'text-anchor': 'middle', fill: C.text,
                                 transform: `rotate(-90 14 ${(y0 + y1) / 2})` }, d.y_title);

    // The colour bar: its title above it, a gradient from zmin (bottom) to zmax (top), round ticks beside it.
    const bx = x1 + 10, by0 = y0, by1 = y1;
    d.bar.forEach((line, i) => add('text', { x: bx, y: top + 12 + 14 * i - 14, 'font-size': 12, fill: C.text }, line));
    const defs = add('defs', {});
    const gradient = document.createElementNS(NS, 'linearGradient');
    gradient.setAttribute('id', `bar-${d.name}`);
    for (const [k, v] of Object.entries({ x1: 0, y1: 1, x2: 0, y2: 0 })) gradient.setAttribute(k, v);
    const stops = d.reverse ? d.scale.map(([p, c]) => [1 - p, c]).reverse() : d.scale;
    for (const [p, c] of stops) {
      const stop = document.createElementNS(NS, 'stop');
      stop.setAttribute('offset', p); stop.setAttribute('stop-color', c);
      gradient.appendChild(stop);
    }
    defs.appendChild(gradient);
    add('rect', { x: bx, y: by0, width: 12, height: by1 - by0, fill: `url(#bar-${d.name})` });
    for (const [t, s] of tickList) {
      const y = by1 - (t - d.zmin) / span * (by1 - by0);
      add('line', { x1: bx + 12, x2: bx + 16, y1: y, y2: y, stroke: C.muted });
      add('text', { x: bx + 18, y: y + 4, 'font-size': 11, fill: C.muted }, s);
    }
    this.outline = add('rect', { fill: 'none', stroke: C.highlight, 'stroke-width': 2, visibility: 'hidden' });

    svg.addEventListener('mousemove', e => this.hover(e, svg));
    svg.addEventListener('mouseleave', () => this.unhover());
    this.drawing.replaceChildren(svg);
    this.svg = svg;
    this.root.dataset.draws = String(Number(this.root.dataset.draws || 0) + 1);
  }

  // The cell under the pointer: outlined, with its row, column and exact value in the figure's own words.
  hover(e, svg) {
    const box = svg.getBoundingClientRect(), { x0, y0, cw, ch, rows, cols } = this.grid;
    const c = Math.floor((e.clientX - box.left - x0) / cw), r = Math.floor((e.clientY - box.top - y0) / ch);
    const v = r >= 0 && r < rows && c >= 0 && c < cols ? this.data.z[r][c] : null;
    if (v === null) return this.unhover();
    for (const [k, value] of Object.entries({ x: x0 + c * cw, y: y0 + r * ch, width: cw, height: ch, visibility: 'visible' })) {
      this.outline.setAttribute(k, value);
    }
    this.tip.textContent = this.data.hover.replace(/<extra>.*?<\/extra>/g, '').replace(/<br>/g, '\n')
      .replace(/%\{x\}/g, () => this.data.x[c]).replace(/%\{y\}/g, () => this.data.y[r])
      .replace(/%\{z(?::([^}]*))?\}/g, (_, spec) => formatted(v, spec));
    this.tip.hidden = false;
    const root = this.root.getBoundingClientRect();
    const left = e.clientX - root.left + 14;
    this.tip.style.left = `${Math.min(left, root.width - this.tip.offsetWidth - 4)}px`;
    this.tip.style.top = `${e.clientY - root.top + 14}px`;
  }

  unhover() {
    this.tip.hidden = true;
    if (this.outline) this.outline.setAttribute('visibility', 'hidden');
  }

  save(format) {
    const copy = this.svg.cloneNode(true);
    copy.querySelector('rect[visibility]')?.remove();  // the hover outline
    copy.removeAttribute('aria-hidden');  // a file on its own: named by the chart's words
    copy.setAttribute('role', 'img');
    const title = document.createElementNS(NS, 'title');
    title.textContent = this.data.alt;
    copy.prepend(title);
    const text = new XMLSerializer().serializeToString(copy);
    const name = `${this.data.name}.${format}`;
    if (format === 'svg') return download(new Blob([text], { type: 'image/svg+xml' }), name);
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement('canvas');
      canvas.width = 2 * this.svg.width.baseVal.value; canvas.height = 2 * this.svg.height.baseVal.value;
      const g = canvas.getContext('2d');
      g.imageSmoothingEnabled = false;  // each cell one colour, as on screen
      g.drawImage(image, 0, 0, canvas.width, canvas.height);
      canvas.toBlob(blob => download(blob, name), 'image/png');
    };
    image.src = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
  }
}
