/**
 * Real image files built in the test (API.md §10.7 uploads): PNG (zlib), GIF (omggif's
 * GifWriter, one frame or several), BMP (24-bit), TIFF (baseline, uncompressed RGB), JPEG (a
 * baseline JFIF head: SOI, APP0, DQT, SOF0, DHT, SOS with one MCU of zero data, EOI).
 */
import omggif from 'omggif';
export { pngImage } from '../../src/lib/sample-images.ts';

/** A GIF of `frames` frames, each width × height, 2-colour palette. */
export function gifImage(width: number, height: number, frames = 1): Buffer {
  const buf = Buffer.alloc(1024 + width * height * frames * 2);
  const writer = new omggif.GifWriter(buf, width, height, { palette: [0x000000, 0xffffff], ...(frames > 1 ? { loop: 0 } : {}) });
  for (let f = 0; f < frames; f++) {
    const pixels = Array.from({ length: width * height }, (_, i) => (i + f) % 2);
    writer.addFrame(0, 0, width, height, pixels, frames > 1 ? { delay: 10 } : {});
  }
  return buf.subarray(0, writer.end());
}

/** A 24-bit BMP (BITMAPINFOHEADER), rows bottom-up padded to 4 bytes. */
export function bmpImage(width: number, height: number): Buffer {
  const row = Math.ceil((width * 3) / 4) * 4;
  const size = 54 + row * height;
  const b = Buffer.alloc(size);
  b.write('BM', 0, 'latin1');
  b.writeUInt32LE(size, 2);
  b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14);
  b.writeInt32LE(width, 18);
  b.writeInt32LE(height, 22);
  b.writeUInt16LE(1, 26);
  b.writeUInt16LE(24, 28);
  b.writeUInt32LE(row * height, 34);
  for (let i = 54; i < size; i++) b[i] = i & 0xff;
  return b;
}

/** A little-endian baseline TIFF: uncompressed 8-bit RGB, one strip. */
export function tiffImage(width: number, height: number): Buffer {
  const entries: [number, number, number, number][] = [
    // tag, type (3 SHORT, 4 LONG), count, value
    [256, 4, 1, width],
    [257, 4, 1, height],
    [258, 3, 1, 8],
    [259, 3, 1, 1],
    [262, 3, 1, 2],
    [273, 4, 1, 0], // StripOffsets, filled below
    [277, 3, 1, 3],
    [278, 4, 1, height],
    [279, 4, 1, width * height * 3],
  ];
  const ifdSize = 2 + entries.length * 12 + 4;
  const dataOffset = 8 + ifdSize;
  entries[5]![3] = dataOffset;
  const b = Buffer.alloc(dataOffset + width * height * 3);
  b.write('II', 0, 'latin1');
  b.writeUInt16LE(42, 2);
  b.writeUInt32LE(8, 4);
  b.writeUInt16LE(entries.length, 8);
  entries.forEach(([tag, type, count, value], i) => {
    const o = 10 + i * 12;
    b.writeUInt16LE(tag, o);
    b.writeUInt16LE(type, o + 2);
    b.writeUInt32LE(count, o + 4);
    if (type === 3) b.writeUInt16LE(value, o + 8);
    else b.writeUInt32LE(value, o + 8);
  });
  b.writeUInt32LE(0, 10 + entries.length * 12);
  for (let i = dataOffset; i < b.length; i++) b[i] = (i * 7) & 0xff;
  return b;
}

/** A baseline JPEG head (JFIF) with its SOF0 dimensions: enough for any reader of type and size. */
export function jpegImage(width: number, height: number): Buffer {
  const seg = (marker: number, data: number[]) =>
    Buffer.from([0xff, marker, ((data.length + 2) >> 8) & 0xff, (data.length + 2) & 0xff, ...data]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    seg(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
    seg(0xdb, [0x00, ...new Array(64).fill(1)]),
    seg(0xc0, [8, (height >> 8) & 0xff, height & 0xff, (width >> 8) & 0xff, width & 0xff, 1, 1, 0x11, 0]),
    seg(0xc4, [0x00, 0, 1, ...new Array(14).fill(0), 0]),
    seg(0xda, [1, 1, 0x00, 0, 63, 0]),
    Buffer.from([0x00, 0xff, 0xd9]),
  ]);
}

/** A multipart/form-data body holding `parts` (a file part when `filename` is given). */
export function multipart(
  parts: { name: string; filename?: string; type?: string; data: Buffer | string }[],
  boundary = '----msgsvc-test-boundary',
): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`, 'latin1'), Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
