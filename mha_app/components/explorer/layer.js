// One layer's arrays for the attention explorer (payload.build_layer's bytes), handed to it through the page's
// registry; draws nothing. The explorer takes them when its own data names them (see mha_app/components/explorer/__init__.py).
export default function ({ data }) {
  if (!data || !data.byteLength) return;
  const registry = (window.__mhaExplorer ??= {});
  (registry.layers ??= []).push(data);
  registry.takeLayers?.();
}
