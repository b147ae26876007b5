/**
 * media/upload, download, index, view, delete (API.md §10.7), in JSON and XML, on each store:
 * real image bytes built in the test, the type read from the
 * content (never the name or the declared type), every API.md §10.7 error with its exact message and
 * nothing stored, the 413 body limit (declared and streamed), uploads over app.inject and over a
 * real socket, the download's bytes, Content-Type, Content-Length and Range, Idempotency-Key.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from '../../helpers/app.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { assert422, assertBody, assertError, fieldError, fmtTime, isXml, UNUSED_ID, WIRES, type Wire } from '../../helpers/operations.ts';
import { bmpImage, gifImage, jpegImage, multipart, pngImage, tiffImage } from '../../helpers/images.ts';
import { storeTest } from '../../helpers/stores.ts';

const UPLOAD = '/v1/media/upload';
const ONLY = 'Only files with these extensions are allowed: jpg, gif, bmp, png, tiff.';
const ANIMATED = 'Animated GIF files are not supported.';

function acceptOf(wire: Wire): Record<string, string> {
  return { accept: wire === 'xml' ? 'application/xml' : 'application/json' };
}
function urlOf(path: string, token: string, wire: Wire = 'json', extra = ''): string {
  return `${path}?access_token=${encodeURIComponent(token)}${extra ? `&${extra}` : ''}${wire === 'xml-param' ? '&_format=xml' : ''}`;
}

/** Uploads `data` as the multipart field `file` through app.inject. */
function upload(
  ctx: TestApp,
  token: string,
  data: Buffer,
  o: { filename?: string; type?: string; wire?: Wire; field?: string; headers?: Record<string, string> } = {},
) {
  const mp = multipart([
    { name: o.field ?? 'file', filename: o.filename ?? 'picture.png', type: o.type ?? 'application/octet-stream', data },
  ]);
  return ctx.app.inject({
    method: 'POST',
    url: urlOf(UPLOAD, token, o.wire),
    headers: { ...acceptOf(o.wire ?? 'json'), 'content-type': mp.contentType, ...o.headers },
    payload: mp.body,
  });
}

/** The media record from the raw row (API.md §10.7 field order). */
async function mediaFromDb(ctx: TestApp, id: number) {
  const r = await ctx.store.db.selectFrom('media').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return {
    Id: r.id,
    FileName: r.file_name,
    MimeType: r.mime_type,
    Size: Number(r.size),
    Width: r.width,
    Height: r.height,
    DateCreated: fmtTime(Number(r.created_at)),
  };
}

/** The stored bytes of a media, from its chunks in order. */
async function bytesFromDb(ctx: TestApp, id: number): Promise<Buffer> {
  const rows = await ctx.store.db.selectFrom('media_chunks').select(['seq', 'data']).where('media_id', '=', id).orderBy('seq').execute();
  rows.forEach((r, i) => assert.equal(r.seq, i));
  return Buffer.concat(rows.map((r) => Buffer.from(r.data)));
}

/** How many media rows and chunks exist (all accounts): "nothing stored" compares these. */
async function stored(ctx: TestApp) {
  const m = await ctx.store.db
    .selectFrom('media')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  const c = await ctx.store.db
    .selectFrom('media_chunks')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return { media: Number(m.n), chunks: Number(c.n) };
}

const SAMPLES = [
  { name: 'photo.jpg', bytes: jpegImage(640, 480), mime: 'image/jpeg', width: 640, height: 480 },
  { name: 'still.gif', bytes: gifImage(12, 9), mime: 'image/gif', width: 12, height: 9 },
  { name: 'plain.bmp', bytes: bmpImage(7, 5), mime: 'image/bmp', width: 7, height: 5 },
  { name: 'pixels.png', bytes: pngImage(33, 21, (x, y) => [x * 7, y * 11, 99]), mime: 'image/png', width: 33, height: 21 },
  { name: 'scan.tiff', bytes: tiffImage(9, 4), mime: 'image/tiff', width: 9, height: 4 },
];

storeTest(
  'media/upload stores jpg, gif, bmp, png and tiff: 201, the record, Location, and download gives the bytes back (JSON, XML)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    for (const wire of WIRES) {
      for (const s of SAMPLES) {
        const res = await upload(ctx, demo.token, s.bytes, { filename: s.name, type: 'text/plain', wire });
        assert.equal(res.statusCode, 201, res.body);
        const id = Number(isXml(wire) ? /<Id>(\d+)<\/Id>/.exec(res.body)![1] : JSON.parse(res.body).Id);
        const record = await mediaFromDb(ctx, id);
        assert.deepEqual(
          { FileName: record.FileName, MimeType: record.MimeType, Size: record.Size, Width: record.Width, Height: record.Height },
          { FileName: s.name, MimeType: s.mime, Size: s.bytes.length, Width: s.width, Height: s.height },
        );
        assertBody(res, wire, 201, record);
        assert.equal(res.headers.location, `http://localhost:80/v1/media/view?id=${id}`);
        assert.deepEqual(await bytesFromDb(ctx, id), s.bytes);
        const view = await ctx.app.inject({ url: urlOf('/v1/media/view', demo.token, wire, `id=${id}`), headers: acceptOf(wire) });
        assertBody(view, wire, 200, record);
        // download: the bytes, their image Content-Type and Content-Length, whatever Accept says.
        const dl = await ctx.app.inject({ url: urlOf('/v1/media/download', demo.token, wire, `id=${id}`), headers: acceptOf(wire) });
        assert.equal(dl.statusCode, 200);
        assert.equal(dl.headers['content-type'], s.mime);
        assert.equal(dl.headers['content-length'], String(s.bytes.length));
        assert.deepEqual(dl.rawPayload, s.bytes);
      }
    }
  },
);

storeTest('media/upload reads the type from the bytes, never from the name or the declared type', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const png = pngImage(4, 4, () => [0, 0, 0]);
  const res = await upload(ctx, demo.token, png, { filename: 'lies.gif', type: 'image/gif' });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(JSON.parse(res.body).MimeType, 'image/png');
  assert.equal(JSON.parse(res.body).FileName, 'lies.gif');
  const text = await upload(ctx, demo.token, Buffer.from('not an image at all'), { filename: 'photo.png', type: 'image/png' });
  assert422(text, [fieldError('file', ONLY)]);
  // A directory in the name is dropped.
  const dir = await upload(ctx, demo.token, png, { filename: 'C:\\Users\\me\\cat.png' });
  assert.equal(JSON.parse(dir.body).FileName, 'cat.png');
});

storeTest('media/upload errors (API.md §10.7): exact messages on `file`, in JSON and XML, and nothing stored', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const before = await stored(ctx);
  const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x1a, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(18)]);
  const pdf = Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n');
  const cases: { name: string; send: (wire: Wire) => ReturnType<typeof upload>; errors: { field: string; message: string }[] }[] = [
    {
      name: 'an animated GIF',
      send: (wire) => upload(ctx, demo.token, gifImage(8, 8, 3), { filename: 'anim.gif', type: 'image/gif', wire }),
      errors: [fieldError('file', ANIMATED)],
    },
    {
      name: 'a WebP',
      send: (wire) => upload(ctx, demo.token, webp, { filename: 'x.png', type: 'image/png', wire }),
      errors: [fieldError('file', ONLY)],
    },
    { name: 'a PDF', send: (wire) => upload(ctx, demo.token, pdf, { filename: 'x.jpg', wire }), errors: [fieldError('file', ONLY)] },
    {
      name: 'a PNG signature with nothing behind it',
      send: (wire) => upload(ctx, demo.token, pngImage(2, 2, () => [1, 1, 1]).subarray(0, 12), { wire }),
      errors: [fieldError('file', ONLY)],
    },
    {
      name: 'an empty file',
      send: (wire) => upload(ctx, demo.token, Buffer.alloc(0), { wire }),
      errors: [fieldError('file', 'File cannot be blank.')],
    },
    {
      name: 'the file under another field name',
      send: (wire) =>
        upload(
          ctx,
          demo.token,
          pngImage(2, 2, () => [1, 1, 1]),
          { field: 'picture', wire },
        ),
      errors: [fieldError('file', 'File cannot be blank.')],
    },
    {
      name: 'file sent as a plain field (no file name)',
      send: (wire) => {
        const mp = multipart([{ name: 'file', data: 'hello' }]);
        return ctx.app.inject({
          method: 'POST',
          url: urlOf(UPLOAD, demo.token, wire),
          headers: { ...acceptOf(wire), 'content-type': mp.contentType },
          payload: mp.body,
        });
      },
      errors: [fieldError('file', 'File cannot be blank.')],
    },
    {
      name: 'no body',
      send: (wire) => ctx.app.inject({ method: 'POST', url: urlOf(UPLOAD, demo.token, wire), headers: acceptOf(wire) }),
      errors: [fieldError('file', 'File cannot be blank.')],
    },
  ];
  for (const c of cases) {
    for (const wire of WIRES) {
      const res = await c.send(wire);
      try {
        assert422(res, c.errors, wire);
      } catch (err) {
        (err as Error).message = `case "${c.name}" (${wire}): ${(err as Error).message}`;
        throw err;
      }
      assert.deepEqual(await stored(ctx), before, `nothing stored: ${c.name}`);
    }
  }
});

storeTest(
  'media/upload: a file over 70.00MB gives 422 `The file "{name}" is too big.`; a body over the limit gives 413; nothing stored',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const before = await stored(ctx);
    // 73,400,321 bytes of a real PNG head: the type passes, the size does not.
    const big = Buffer.alloc(73_400_321, 7);
    pngImage(8, 8, () => [1, 2, 3]).copy(big);
    for (const wire of ['json', 'xml'] as const) {
      const res = await upload(ctx, demo.token, big, { filename: 'huge.png', wire });
      assert422(res, [fieldError('file', 'The file "huge.png" is too big. Its size cannot exceed 70.00MB.')], wire);
      assert.deepEqual(await stored(ctx), before);
    }
    // Exactly 73,400,320 bytes is allowed (the body limit leaves room for the multipart envelope).
    const atLimit = big.subarray(0, 73_400_320);
    const ok = await upload(ctx, demo.token, atLimit, { filename: 'max.png' });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(JSON.parse(ok.body).Size, 73_400_320);
    const id = JSON.parse(ok.body).Id as number;
    const chunks = await ctx.store.db
      .selectFrom('media_chunks')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('media_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(chunks.n), 73_400_320 / (256 * 1024), 'stored in 256 KiB chunks');
    const dl = await ctx.app.inject({ url: urlOf('/v1/media/download', demo.token, 'json', `id=${id}`) });
    assert.equal(dl.rawPayload.length, 73_400_320);
    assert.ok(dl.rawPayload.equals(atLimit));
    await ctx.app.inject({ method: 'DELETE', url: urlOf('/v1/media/delete', demo.token, 'json', `id=${id}`) });
    assert.deepEqual(await stored(ctx), before, 'delete removes the chunks');
  },
);

storeTest(
  'media/upload: 413 past MSGSVC_MEDIA_BODY_LIMIT, declared or streamed over a real socket, nothing stored; 415 for another body type',
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_MEDIA_BODY_LIMIT: '4096' });
    const demo = await ctx.seed();
    const before = await stored(ctx);
    const big = pngImage(64, 64, (x, y) => [(x * y) & 255, x, y], 0);
    assert.ok(big.length > 4096);
    for (const wire of ['json', 'xml'] as const) {
      const res = await upload(ctx, demo.token, big, { wire });
      assert.equal(res.statusCode, 413);
      assert.match(res.body, wire === 'json' ? /"status":413/ : /<status>413<\/status>/);
    }
    assert.deepEqual(await stored(ctx), before);
    // Over a real socket, chunked (no Content-Length): the stream is cut at the limit.
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (ctx.app.server.address() as AddressInfo).port;
    const mp = multipart([{ name: 'file', filename: 'big.png', data: big }]);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: urlOf(UPLOAD, demo.token),
          headers: { 'content-type': mp.contentType, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < mp.body.length; i += 1000) req.write(mp.body.subarray(i, i + 1000));
      req.end();
    });
    assert.equal(status, 413);
    assert.deepEqual(await stored(ctx), before);
    const json = await ctx.app.inject({
      method: 'POST',
      url: urlOf(UPLOAD, demo.token),
      headers: { 'content-type': 'image/png' },
      payload: pngImage(2, 2, () => [0, 0, 0]),
    });
    assert.equal(json.statusCode, 415);
    const noBoundary = await ctx.app.inject({
      method: 'POST',
      url: urlOf(UPLOAD, demo.token),
      headers: { 'content-type': 'multipart/form-data' },
      payload: 'x',
    });
    assert.equal(noBoundary.statusCode, 415);
    // A form cut short (no closing boundary): 400, nothing stored.
    const small = multipart([{ name: 'file', filename: 'cut.png', data: pngImage(8, 8, () => [5, 5, 5]) }]);
    const cut = await ctx.app.inject({
      method: 'POST',
      url: urlOf(UPLOAD, demo.token, 'xml'),
      headers: { 'content-type': small.contentType, accept: 'application/xml' },
      payload: small.body.subarray(0, small.body.length - 40),
    });
    assert.equal(cut.statusCode, 400);
    assert.match(cut.body, /<status>400<\/status>/);
    assert.deepEqual(await stored(ctx), before);
  },
);

storeTest('media/upload over a real socket (fetch + FormData, and a chunked multipart body) stores the file', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const png = pngImage(400, 300, (x, y) => [x & 255, y & 255, (x ^ y) & 255], 0);
  const form = new FormData();
  form.append('note', 'ignored');
  form.append('file', new Blob([png], { type: 'image/jpeg' }), 'socket.png');
  const res = await fetch(`${base}${urlOf(UPLOAD, demo.token)}`, { method: 'POST', body: form });
  assert.equal(res.status, 201);
  const record = (await res.json()) as { Id: number; Size: number; Width: number; Height: number; MimeType: string };
  assert.deepEqual([record.Size, record.Width, record.Height, record.MimeType], [png.length, 400, 300, 'image/png']);
  assert.equal(res.headers.get('location'), `${base}/v1/media/view?id=${record.Id}`);
  const dl = await fetch(`${base}${urlOf('/v1/media/download', demo.token, 'json', `id=${record.Id}`)}`, {
    headers: { accept: 'image/*' },
  });
  assert.equal(dl.status, 200);
  assert.equal(dl.headers.get('content-type'), 'image/png');
  assert.equal(dl.headers.get('content-length'), String(png.length));
  assert.ok(Buffer.from(await dl.arrayBuffer()).equals(png));
  // Range: one span, then past the end.
  const part = await fetch(`${base}${urlOf('/v1/media/download', demo.token, 'json', `id=${record.Id}`)}`, {
    headers: { range: 'bytes=100-9999999' },
  });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get('content-range'), `bytes 100-${png.length - 1}/${png.length}`);
  assert.ok(Buffer.from(await part.arrayBuffer()).equals(png.subarray(100)));
  const mid = await fetch(`${base}${urlOf('/v1/media/download', demo.token, 'json', `id=${record.Id}`)}`, {
    headers: { range: 'bytes=262140-262150' },
  });
  assert.equal(mid.status, 206);
  assert.ok(Buffer.from(await mid.arrayBuffer()).equals(png.subarray(262140, 262151)), 'a range across two chunks');
  const past = await fetch(`${base}${urlOf('/v1/media/download', demo.token, 'json', `id=${record.Id}`)}`, {
    headers: { range: `bytes=${png.length}-` },
  });
  assert.equal(past.status, 416);
  assert.equal(past.headers.get('content-range'), `bytes */${png.length}`);
  await past.arrayBuffer();
  // A chunked multipart body (no Content-Length), written in small pieces.
  const bmp = bmpImage(50, 40);
  const mp = multipart([{ name: 'file', filename: 'chunked.bmp', data: bmp }]);
  const body = await new Promise<string>((resolve, reject) => {
    const req = httpRequest(
      `${base}${urlOf(UPLOAD, demo.token)}`,
      { method: 'POST', headers: { 'content-type': mp.contentType, 'transfer-encoding': 'chunked' } },
      (r) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (d: string) => (text += d));
        r.on('end', () => resolve(`${r.statusCode} ${text}`));
      },
    );
    req.on('error', reject);
    for (let i = 0; i < mp.body.length; i += 333) req.write(mp.body.subarray(i, i + 333));
    req.end();
  });
  assert.match(body, /^201 \{"Id":\d+,"FileName":"chunked.bmp","MimeType":"image\/bmp","Size":6134,"Width":50,"Height":40,/);
});

storeTest('media/upload: a form cut short inside a part other than `file` is a 400, and the server goes on (fuzz: body)', async (t) => {
  // Found by the body fuzz target (fuzz/crashes/body): busboy errored the skipped part's stream,
  // nobody listened, and the uncaught error ended the process.
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  for (const field of ['Name', 'note', 'file2']) {
    const cut = `--xYzZY\r\nContent-Disposition: form-data; name="${field}"; filename="a.png"\r\n\r\n`;
    const res = await fetch(`${base}${urlOf(UPLOAD, demo.token)}`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary="xYzZY"' },
      body: cut,
    });
    assert.equal(res.status, 400, field);
    assert.equal(((await res.json()) as { message: string }).message, 'Invalid multipart body: Unexpected end of form');
  }
  const after = await fetch(`${base}${urlOf('/v1/media/index', demo.token)}`);
  assert.equal(after.status, 200);
  await after.arrayBuffer();
});

storeTest('media/index, view, download, delete: 404 for another account, paging, HEAD, delete removes it from templates', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const ids: number[] = [];
  for (let i = 0; i < 3; i++)
    ids.push(
      JSON.parse(
        (
          await upload(
            ctx,
            demo.token,
            pngImage(i + 1, 2, () => [i, i, i]),
            { filename: `p${i}.png` },
          )
        ).body,
      ).Id,
    );
  const own = (await ctx.store.db.selectFrom('media').select('id').where('account_id', '=', demo.account.id).orderBy('id').execute()).map(
    (r) => r.id,
  );
  for (const wire of WIRES) {
    const list = await ctx.app.inject({ url: urlOf('/v1/media/index', demo.token, wire), headers: acceptOf(wire) });
    const all = [];
    for (const id of own) all.push(await mediaFromDb(ctx, id));
    assertBody(list, wire, 200, all);
    assert.equal(list.headers['x-pagination-total-count'], String(own.length));
    for (const path of ['/v1/media/view', '/v1/media/download', '/v1/media/delete']) {
      const method = path.endsWith('delete') ? 'DELETE' : 'GET';
      const res = await ctx.app.inject({ method, url: urlOf(path, other.token, wire, `id=${ids[0]}`), headers: acceptOf(wire) });
      assertError(res, 404, `Object not found: ${ids[0]}`, wire);
      const missing = await ctx.app.inject({ method, url: urlOf(path, demo.token, wire, `id=${UNUSED_ID}`), headers: acceptOf(wire) });
      assertError(missing, 404, `Object not found: ${UNUSED_ID}`, wire);
      const noId = await ctx.app.inject({ method, url: urlOf(path, demo.token, wire), headers: acceptOf(wire) });
      assertError(noId, 400, 'Missing required parameters: id', wire);
    }
  }
  const paged = await ctx.app.inject({ url: urlOf('/v1/media/index', demo.token, 'json', 'per-page=2&page=2') });
  assert.deepEqual(
    JSON.parse(paged.body).map((r: { Id: number }) => r.Id),
    own.slice(2, 4),
  );
  const head = await ctx.app.inject({ method: 'HEAD', url: urlOf('/v1/media/download', demo.token, 'json', `id=${ids[1]}`) });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['content-type'], 'image/png');
  assert.equal(head.headers['content-length'], String((await mediaFromDb(ctx, ids[1]!)).Size));
  assert.equal(head.rawPayload.length, 0);

  // A template holding ids[0] and ids[1]: deleting ids[0] leaves [ids[1]].
  const tpl = await ctx.app.inject({
    method: 'POST',
    url: urlOf('/v1/mms-templates/create', demo.token),
    payload: { Name: 'Promo', MediaIds: [ids[0], ids[1]] },
  });
  assert.equal(tpl.statusCode, 201, tpl.body);
  const del = await ctx.app.inject({ method: 'DELETE', url: urlOf('/v1/media/delete', demo.token, 'json', `id=${ids[0]}`) });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  const after = await ctx.app.inject({ url: urlOf('/v1/mms-templates/view', demo.token, 'json', `id=${JSON.parse(tpl.body).Id}`) });
  assert.deepEqual(JSON.parse(after.body).MediaIds, [ids[1]]);
  assert.equal((await ctx.app.inject({ url: urlOf('/v1/media/view', demo.token, 'json', `id=${ids[0]}`) })).statusCode, 404);
  assert.equal((await ctx.store.db.selectFrom('media_chunks').select('seq').where('media_id', '=', ids[0]!).execute()).length, 0);
});

storeTest('media/upload honours Idempotency-Key (API.md §7): a replay stores nothing twice; another body gives 409', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const png = pngImage(5, 5, () => [9, 9, 9]);
  const first = await upload(ctx, demo.token, png, { headers: { 'idempotency-key': 'up-1' } });
  assert.equal(first.statusCode, 201, first.body);
  const before = await stored(ctx);
  const again = await upload(ctx, demo.token, png, { headers: { 'idempotency-key': 'up-1' }, wire: 'xml' });
  assert.equal(again.statusCode, 201);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.headers.location, first.headers.location);
  assert.match(again.body, new RegExp(`<Id>${JSON.parse(first.body).Id}</Id>`));
  assert.deepEqual(await stored(ctx), before);
  const other = await upload(
    ctx,
    demo.token,
    pngImage(6, 5, () => [9, 9, 9]),
    { headers: { 'idempotency-key': 'up-1' } },
  );
  assertError(other, 409, 'Idempotency-Key was used with a different request.');
  assert.deepEqual(await stored(ctx), before);
});

storeTest('a slow upload does not hold up other requests meanwhile (SQLite spools it; PostgreSQL has its own connection)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const png = pngImage(1000, 1000, (x, y) => [x & 255, y & 255, 7], 0);
  const mp = multipart([{ name: 'file', filename: 'slow.png', data: png }]);
  let answer = '';
  const done = new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      `${base}${urlOf(UPLOAD, demo.token)}`,
      { method: 'POST', headers: { 'content-type': mp.contentType, 'content-length': String(mp.body.length) } },
      (r) => {
        r.setEncoding('utf8');
        r.on('data', (d: string) => (answer += d));
        r.on('end', () => resolve());
      },
    );
    req.on('error', reject);
    // Half now (past the 1 MiB head: the upload is under way), the rest after the other requests.
    req.write(mp.body.subarray(0, 2_000_000));
    setTimeout(() => req.end(mp.body.subarray(2_000_000)), 1500);
  });
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  const read = await fetch(`${base}${urlOf('/v1/numbers/index', demo.token)}`, { signal: AbortSignal.timeout(1000) });
  assert.equal(read.status, 200);
  await read.arrayBuffer();
  const write = await fetch(`${base}${urlOf('/v1/groups/create', demo.token)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ fname: 'During upload' }),
    signal: AbortSignal.timeout(1000),
  });
  assert.equal(write.status, 201);
  await write.arrayBuffer();
  assert.ok(Date.now() - started < 1000, 'answered while the upload waits for its bytes');
  assert.equal(answer, '', 'the upload is still going');
  await done;
  assert.equal(JSON.parse(answer).Size, png.length);
});
