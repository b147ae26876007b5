import { apiVersion } from '../docs.ts';
import { buildOpenApi } from '../openapi.ts';
import type { Operation } from '../operation.ts';
import { ADMIN_CONTROLLERS, ADMIN_OPERATIONS } from './index.ts';

type Json = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document of the operator's API (docs/API.md §16.4), `npm run openapi` writes it
 * to docs/openapi-admin.json. A document of its own, not a part of docs/openapi.json: that one is
 * the public API's (served at /openapi.json, the Swagger UI, the generated client, the console's
 * reachability test), and an operator's operations are none of an account's business.
 *
 * Built by the same builder as the public document (src/http/openapi.ts), from the descriptors of
 * ADMIN_CONTROLLERS, then narrowed: the operator's title and description, operator keys as the only
 * credential (`access_token` or `Authorization: Bearer`; no console cookie), no probes, and only the
 * components its operations use. `x-scope` is `admin:read` or `admin:write`.
 */
export function adminOpenApiDocument(operations: readonly Operation[] = ADMIN_OPERATIONS): Json {
  const doc = buildOpenApi(operations, { version: apiVersion(), controllers: ADMIN_CONTROLLERS });
  const paths = Object.fromEntries(Object.entries(doc.paths as Json).filter(([path]) => path.startsWith('/admin/')));
  const components = doc.components as Json;
  const schemes = components.securitySchemes as Record<string, Json>;
  const used = reachableSchemas({ paths, responses: components.responses, headers: components.headers }, components.schemas as Json);
  return {
    ...doc,
    info: {
      ...(doc.info as Json),
      title: 'msgsvc operator API (/admin/v1)',
      description:
        'The operator of a msgsvc service manages every account, the numbers, the carriers and the audit log over /admin/v1 (docs/API.md §16.4), ' +
        'with an operator key made by `msgsvc operators create`. Conventions as the public API (docs/openapi.json): JSON or XML (`Accept`, ' +
        'or `_format=json|xml`), errors `{name, message, code, status}`, 422 lists of `{field, message}`, `page` and `per-page` with a `Link` ' +
        'header, the rate limit per operator key. An account key or a console cookie is answered 401 here; an operator key is answered 401 on /v1.',
    },
    security: [{ access_token: [] }, { bearer: [] }],
    tags: (doc.tags as { name: string }[])
      .filter((t) => Object.hasOwn(ADMIN_CONTROLLERS, t.name))
      .map((t) => ({ name: t.name, description: `/admin/v1/${t.name}/…` })),
    paths,
    components: {
      ...components,
      schemas: Object.fromEntries(Object.entries(components.schemas as Json).filter(([name]) => used.has(name))),
      securitySchemes: {
        access_token: {
          ...schemes.access_token,
          description: "An operator key's secret (`msgsvc operators create`). Repeated: the last wins.",
        },
        bearer: { ...schemes.bearer, description: "An operator key's secret as `Authorization: Bearer {secret}`." },
      },
    },
  };
}

/** The component schemas `root` refers to, at any depth, through other schemas too. */
function reachableSchemas(root: unknown, schemas: Json): Set<string> {
  const seen = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    const ref = (value as Json).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length);
      if (seen.has(name)) return;
      seen.add(name);
      return visit(schemas[name]);
    }
    Object.values(value).forEach(visit);
  };
  visit(root);
  return seen;
}
