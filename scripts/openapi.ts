/**
 * `npm run openapi`: writes docs/openapi.json, the OpenAPI 3.1 document of the default
 * configuration's operations (what a server with default settings serves at /openapi.json;
 * test/http/openapi.test.ts checks the two are the same).
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.ts';
import { openApiDocument } from '../src/http/docs.ts';
import { operationsFor } from '../src/http/routes/index.ts';

export const OPENAPI_FILE = new URL('../docs/openapi.json', import.meta.url);

/** The document as the file holds it: two-space indented, with a final newline. */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(operationsFor(loadConfig({}))), null, 2)}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(OPENAPI_FILE, openApiText());
  console.log('wrote docs/openapi.json');
}
