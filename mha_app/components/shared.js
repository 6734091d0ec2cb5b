// Helpers every component's script shares (mha_app/components/__init__.py puts this file in front of each).
/* exported download, lut, wrap, labelEvery, fill, pick */  // what the components' scripts take (eslint.config.mjs)

// Save a blob as a file named `name`, as a download link does.
function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// A colour as [r, g, b]: '#rrggbb' (the palettes of figures.base) or 'rgb(r, g, b)' (plotly's named scales).
const rgbOf = c => (c.startsWith('#') ? [1, 3, 5].map(i => parseInt(c.slice(i, i + 2), 16))
  : c.match(/\d+/g).slice(0, 3).map(Number));

function lut(stops) {  // 256 RGB entries, linear between the stops (as plotly interpolates its scales)
  const rgb = stops.map(([p, c]) => [p, ...rgbOf(c)]);
  const out = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = i / 255;
    let k = 1;
    while (k < rgb.length - 1 && rgb[k][0] < t) k++;
    const [p0, ...a] = rgb[k - 1], [p1, ...b] = rgb[k];
    const f = p1 > p0 ? Math.min(1, Math.max(0, (t - p0) / (p1 - p0))) : 0;
    for (let j = 0; j < 3; j++) out[3 * i + j] = a[j] + f * (b[j] - a[j]);
  }
  return out;
}

// Every k-th label: the smallest k that gives labels `room` px tall (or wide) on cells `cell` px apart room to fit.
const labelEvery = (cell, room) => Math.max(1, Math.ceil(room / cell));

// A text in lines of at most `width` px, broken at spaces: a title in a narrow column.
function wrap(measurer, s, width, size, bold = false) {
  const fits = t => measurer.measure(t, size) * (bold ? 1.08 : 1) <= width;  // bold runs about 8% wider
  const lines = [];
  let line = '';
  for (const word of s.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (line && !fits(next)) { lines.push(line); line = word; } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

// A sentence from its template (the copy package's, in a payload's header): each {name} replaced by values[name]
// as text, in one pass, so that a value holding braces (a token) is never read as a placeholder; a placeholder
// with no value stays as it is written.
const fill = (template, values) => template.replace(/\{(\w+)\}/g, (whole, name) => (
  Object.hasOwn(values, name) ? String(values[name]) : whole));

// The form of a sentence ({one, many}, copy.explorer.forms) for a count of n.
const pick = (forms, n) => (n === 1 ? forms.one : forms.many);
