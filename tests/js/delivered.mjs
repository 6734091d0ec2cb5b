// A component's script as the browser gets it (mha_app/components/__init__.py: source puts shared.js in front), loaded
// as a module with its named helpers exported, so that the tests call the very code the page runs.
import { readFileSync } from 'node:fs';

const read = path => readFileSync(new URL(`../../mha_app/components/${path}`, import.meta.url), 'utf8');

// The explorer's first line keeps its registry on the page's window; node has none, so an empty one stands in.
globalThis.window ??= {};

// The module `path` (under mha_app/components), after shared.js, exporting `names` (a missing one fails the import).
export function delivered(path, names) {
  const source = `${read('shared.js')}\n${read(path)}\nexport { ${names.join(', ')} };\n`;
  return import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`);
}
