"""Canvas or Plotly.js for the attention explorer: the time to draw a head change, measured in Chromium.

Run from the repository root:  python -m benchmarks.explorer_draw [--repeats 11]

One page, no Streamlit: the focused head's matrix (n = 64; 512 and 2048 as the app's overviews show them, 171² and
187² block means) and the query's bars, for 16 heads of random numbers. A head change is drawn with Plotly.react
(Plotly.js from the installed plotly package, as the explorer would ship it) or on a canvas (a colour table, one
pixel per cell, scaled up), and timed from the start of the drawing to the next animation frame. The first change of
each kind is left out (warm-up). This is the measurement behind the choice written in
mha_app/components/explorer/__init__.py.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import plotly

CHROMIUM = "/usr/bin/chromium"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
SIZES = ((64, 64), (512, 171), (2048, 187))  # n -> the side of what is drawn

PAGE = """<!doctype html><html><head><meta charset="utf-8"><script src="PLOTLY"></script></head><body>
<div id="plot" style="width:700px;height:600px"></div><div id="bar" style="width:700px;height:300px"></div>
<canvas id="cv" width="700" height="600"></canvas><canvas id="cb" width="700" height="300"></canvas>
<script>
const BLUES = [[0,'rgb(247,251,255)'],[0.125,'rgb(222,235,247)'],[0.25,'rgb(198,219,239)'],[0.375,'rgb(158,202,225)'],
  [0.5,'rgb(107,174,214)'],[0.625,'rgb(66,146,198)'],[0.75,'rgb(33,113,181)'],[0.875,'rgb(8,81,156)'],[1,'rgb(8,48,107)']];
const frame = () => new Promise(r => requestAnimationFrame(() => r()));
const heads = (H, side) => Array.from({length: H}, () => Float32Array.from({length: side * side}, Math.random));
const rows = (a, side) => Array.from({length: side}, (_, r) => Array.from(a.subarray(r * side, (r + 1) * side)));
async function plotlyDraws(side, H, repeats) {
  const data = heads(H, side), labels = Array.from({length: side}, (_, i) => `${i + 1} tok${i}`);
  const gd = document.getElementById('plot'), gb = document.getElementById('bar');
  const layout = {xaxis: {type: 'category'}, yaxis: {type: 'category', autorange: 'reversed'}, margin: {t: 30}};
  const barLayout = {xaxis: {type: 'category'}, yaxis: {range: [0, 1]}};
  const draw = h => Promise.all([
    Plotly.react(gd, [{type: 'heatmap', z: rows(data[h], side), x: labels, y: labels, colorscale: BLUES, zmin: 0,
                       zmax: 1}], layout),
    Plotly.react(gb, [{type: 'bar', x: labels, y: Array.from(data[h].subarray(0, side))}], barLayout)]);
  await draw(0);
  const times = [];
  for (let k = 1; k <= repeats; k++) {
    const t0 = performance.now();
    await draw(k % H);
    await frame();
    times.push(performance.now() - t0);
  }
  Plotly.purge(gd); Plotly.purge(gb);
  return times;
}
async function canvasDraws(side, H, repeats) {
  const data = heads(H, side), labels = Array.from({length: side}, (_, i) => `${i + 1} tok${i}`);
  const scale = document.createElement('canvas'); scale.width = 256; scale.height = 1;
  const sg = scale.getContext('2d'), gradient = sg.createLinearGradient(0, 0, 256, 0);
  for (const [p, c] of BLUES) gradient.addColorStop(p, c);
  sg.fillStyle = gradient; sg.fillRect(0, 0, 256, 1);
  const lut = sg.getImageData(0, 0, 256, 1).data;
  const g = document.getElementById('cv').getContext('2d'), gb = document.getElementById('cb').getContext('2d');
  const off = document.createElement('canvas'); off.width = off.height = side;
  const og = off.getContext('2d'), img = og.createImageData(side, side), px = img.data;
  const times = [];
  for (let k = 1; k <= repeats; k++) {
    const t0 = performance.now(), a = data[k % H];
    for (let i = 0; i < a.length; i++) {
      const c = 4 * Math.min(255, Math.max(0, Math.round(a[i] * 255)));
      px[4 * i] = lut[c]; px[4 * i + 1] = lut[c + 1]; px[4 * i + 2] = lut[c + 2]; px[4 * i + 3] = 255;
    }
    og.putImageData(img, 0, 0);
    g.clearRect(0, 0, 700, 600); g.imageSmoothingEnabled = false; g.drawImage(off, 100, 20, 560, 560);
    g.font = '10px sans-serif';
    for (let i = 0; i < side; i += Math.ceil(side / 40)) g.fillText(labels[i], 2, 20 + (i + 0.5) * 560 / side);
    gb.clearRect(0, 0, 700, 300); gb.fillStyle = '#4c6ef5';
    for (let j = 0, w = 600 / side; j < side; j++) {
      gb.fillRect(50 + j * w, 280 - a[j] * 260, Math.max(1, w - 1), a[j] * 260);
    }
    await frame();
    times.push(performance.now() - t0);
  }
  return times;
}
window.run = async (sizes, repeats) => {
  const out = {};
  for (const [n, side] of sizes) {
    out[`Plotly.react, n = ${n}`] = (await plotlyDraws(side, 16, repeats)).slice(1);
    out[`canvas, n = ${n}`] = (await canvasDraws(side, 16, repeats)).slice(1);
  }
  return out;
};
</script></body></html>"""


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=11, help="head changes per kind and size (default 11)")
    args = parser.parse_args(argv)
    print("Load average: %.2f %.2f %.2f (other processes on these cores slow every number)" % os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_path = Path(tmp) / "draw.html"
        page_path.write_text(PAGE.replace("PLOTLY", PLOTLY_JS.as_uri()))
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu",
                                                                    "--allow-file-access-from-files"])
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        page.goto(page_path.as_uri())
        results = page.evaluate("([sizes, repeats]) => window.run(sizes, repeats)", [SIZES, args.repeats])
        browser.close()
    print(f"{'head change, drawn (ms)':<28} {'median':>7} {'min':>7} {'max':>7}")
    for name, times in results.items():
        print(f"{name:<28} {statistics.median(times):7.1f} {min(times):7.1f} {max(times):7.1f}")
    print(f"Plotly.js from the plotly package: {PLOTLY_JS.stat().st_size / 1e6:.1f} MB of JavaScript.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
