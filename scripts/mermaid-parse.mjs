// Parses a Mermaid diagram from standard input with the real Mermaid parser
// (mermaid.parse) under Node.js and jsdom; exit 0 and "ok <type>" when it
// parses, exit 1 with Mermaid's error otherwise. MERMAID_DIR is the directory
// that scripts/install-mermaid.sh installed mermaid and jsdom into.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.MERMAID_DIR;
if (!dir) {
  console.error('MERMAID_DIR is not set (scripts/install-mermaid.sh prints it)');
  process.exit(2);
}
const require = createRequire(join(dir, 'package.json'));
const { JSDOM } = require('jsdom');
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const entry = join(dir, 'node_modules', 'mermaid', 'dist', 'mermaid.core.mjs');
const { default: mermaid } = await import(pathToFileURL(entry).href);
const text = readFileSync(0, 'utf8');
try {
  const res = await mermaid.parse(text);
  console.log('ok', res.diagramType);
} catch (e) {
  console.log('mermaid:', e.message || String(e));
  process.exit(1);
}
