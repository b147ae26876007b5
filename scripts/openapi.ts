/**
 * `npm run openapi`: writes docs/openapi.json, the OpenAPI 3.1 document of the default
 * configuration's operations (what a server with default settings serves at /openapi.json;
 * test/http/openapi.test.ts checks the two are the same), and docs/openapi-admin.json, the
 * operator's `/admin/v1` operations (docs/API.md §16.4; test/http/admin/admin-openapi.test.ts
 * checks it is current).
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.ts';
import { adminOperationsFor } from '../src/http/admin/index.ts';
import { adminOpenApiDocument } from '../src/http/admin/openapi.ts';
import { openApiDocument } from '../src/http/docs.ts';
import { operationsFor } from '../src/http/routes/index.ts';

export const OPENAPI_FILE = new URL('../docs/openapi.json', import.meta.url);
export const OPENAPI_ADMIN_FILE = new URL('../docs/openapi-admin.json', import.meta.url);

/** The document as the file holds it: two-space indented, with a final newline. */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(operationsFor(loadConfig({}))), null, 2)}\n`;
}

/** The operator's document as docs/openapi-admin.json holds it. */
export function adminOpenApiText(): string {
  return `${JSON.stringify(adminOpenApiDocument(adminOperationsFor(loadConfig({}))), null, 2)}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(OPENAPI_FILE, openApiText());
  writeFileSync(OPENAPI_ADMIN_FILE, adminOpenApiText());
  console.log('wrote docs/openapi.json and docs/openapi-admin.json');
}
