// The view the server holds (head, query, stage, layer, and the last change it has seen from the explorer), handed to
// the explorer on the page. Kept tiny: this element is sent again on every rerun, the explorer's data is not.
export default function ({ data }) {
  const registry = (window.__mhaExplorer ??= {});
  registry.view = data;
  if (registry.listener) registry.listener(data);
}
