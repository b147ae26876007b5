import { readFileSync } from 'node:fs';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { buildOpenApi } from './openapi.ts';
import type { Operation } from './operation.ts';
import { CONTROLLERS } from './routes/index.ts';
import { JSON_TYPE, setWireHeader } from './wire.ts';

/** The package's version (package.json, two levels up from src/http and from dist/http). */
export function apiVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** The OpenAPI document of the operations of one configuration (what /openapi.json serves, and docs/openapi.json holds for the defaults). */
export function openApiDocument(operations: readonly Operation[]): Record<string, unknown> {
  return buildOpenApi(operations, { version: apiVersion(), controllers: CONTROLLERS });
}

/**
 * `GET /openapi.json` (always JSON, no token) and the Swagger UI page at `/docs`, outside /v1 like
 * the probes. The UI's assets are served from @fastify/swagger-ui's own files (nothing from outside);
 * @fastify/swagger runs in static mode only because the UI depends on it, holding the same
 * document, which the page loads from /openapi.json.
 */
export function registerApiDocs(app: FastifyInstance, operations: readonly Operation[]): void {
  const document = openApiDocument(operations);
  const text = JSON.stringify(document);
  app.get('/openapi.json', async (_request, reply) => {
    setWireHeader(reply, 'Content-Type', JSON_TYPE);
    return reply.send(text);
  });
  app.register(async (scope) => {
    await scope.register(fastifySwagger, { mode: 'static', specification: { document: document as never } });
    await scope.register(fastifySwaggerUi, {
      routePrefix: '/docs',
      uiConfig: { urls: [{ url: '/openapi.json', name: 'msgsvc v1' }], deepLinking: false, displayOperationId: true },
      theme: { title: 'msgsvc API v1' },
    });
  });
}
