import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Where `npm run build` writes the console (scripts/build-console.ts): dist/console below the
 * project root, the same directory from src/http (sources) and from dist/http (the build).
 */
export function defaultConsoleDir(): string {
  return fileURLToPath(new URL('../../dist/console/', import.meta.url));
}

/**
 * The Content-Security-Policy of every console response: scripts, styles, connections and images
 * from this origin only (images also `data:` and `blob:` for uPlot's canvas export), no inline
 * script or style element, no framing, no `<base>`.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** Hashed assets (`assets/name-<hash>.js`) never change under their name: cached for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

function securityHeaders(reply: FastifyReply): void {
  reply.header('Content-Security-Policy', CONSOLE_CSP);
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Referrer-Policy', 'no-referrer');
}

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>msgsvc console not built</title></head><body>' +
  '<h1>The console is not built</h1><p>Run <code>npm run build</code> (it needs the development dependencies: ' +
  '<code>npm install</code> without <code>--omit=dev</code>), then restart the server.</p></body></html>\n';

/**
 * `GET /console`, the web console (docs/guides/console.md), outside /v1 like /docs: no token, no
 * rate limit (the page itself holds no data; every call it makes goes through /v1 with the token).
 * `/console` answers index.html (`Cache-Control: no-cache`, so a new build is picked up at once),
 * `/console/assets/…` the hashed files (cached for a year, immutable); a file is sent Brotli- or
 * gzip-encoded when the browser accepts it and the build has that copy (`Vary: Accept-Encoding`
 * on every file answer). Every response carries
 * CONSOLE_CSP, `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`. When `dir`
 * holds no build, `/console` and everything below answer 503 with a page saying how to build it.
 * @param dir the built console (default defaultConsoleDir()).
 */
export function registerConsole(app: FastifyInstance, dir: string = defaultConsoleDir()): void {
  const built = existsSync(join(dir, 'index.html'));
  app.register(async (scope) => {
    scope.addHook('onRequest', (_request, reply, done) => {
      securityHeaders(reply);
      done();
    });
    if (!built) {
      const notBuilt = (_request: unknown, reply: FastifyReply) =>
        reply.code(503).header('Content-Type', 'text/html; charset=utf-8').header('Cache-Control', 'no-store').send(NOT_BUILT);
      scope.get('/console', notBuilt);
      scope.get('/console/*', notBuilt);
      return;
    }
    await scope.register(fastifyStatic, {
      root: dir,
      prefix: '/console/',
      index: false,
      redirect: false,
      cacheControl: false,
      dotfiles: 'deny',
      // The build's `.br` and `.gz` copies (scripts/build-console.ts) are sent to a browser that
      // accepts them, Brotli first; the file itself otherwise.
      preCompressed: true,
      setHeaders: (res, path) => {
        // `path` is the file sent: index.html.br is still the page.
        res.setHeader('Cache-Control', /\.html(?:\.br|\.gz)?$/.test(path) ? 'no-cache' : IMMUTABLE);
        // The answer depends on Accept-Encoding: a shared cache must keep one copy per encoding.
        res.setHeader('Vary', 'Accept-Encoding');
      },
    });
    // The page's path (canonicalUrl makes `/console/` this one too).
    scope.get('/console', (_request, reply) => reply.sendFile('index.html'));
  });
}
