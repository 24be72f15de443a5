import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { testJpeg, testPng } from '../../test/support/images.ts';
import { fittedSize, LOGO_SIDE_MAX, prepareLogo, shrink, sniffLogoType } from './image.ts';

// Logos: recognised by their first bytes, shrunk to 512 pixels on the long side, encoded again.

describe('logo images', () => {
  it('knows PNG and JPEG by their first bytes, and nothing else', () => {
    expect(sniffLogoType(testPng(2, 2))).toBe('image/png');
    expect(sniffLogoType(testJpeg(2, 2))).toBe('image/jpeg');
    expect(sniffLogoType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(sniffLogoType(Buffer.from('GIF89a........................'))).toBeNull();
    expect(sniffLogoType(Buffer.alloc(0))).toBeNull();
  });

  it('fits the long side into 512 pixels and keeps the proportions', () => {
    expect(fittedSize(2000, 1000)).toEqual({ width: 512, height: 256 });
    expect(fittedSize(300, 1200)).toEqual({ width: 128, height: 512 });
    expect(fittedSize(400, 200)).toEqual({ width: 400, height: 200 });
    expect(fittedSize(5000, 3)).toEqual({ width: 512, height: 1 });
  });

  it('averages colour by alpha, so a transparent neighbour does not darken an edge', () => {
    const source = { width: 2, height: 1, data: new Uint8Array([255, 0, 0, 255, 0, 0, 0, 0]) };
    expect(Array.from(shrink(source, 1, 1).data)).toEqual([255, 0, 0, 128]);
  });

  it('shrinks a large PNG to 512 on its long side and encodes it as a PNG again', () => {
    const outcome = prepareLogo(testPng(1024, 600));
    if (!outcome.ok) throw new Error(outcome.reason);
    expect(outcome.image).toMatchObject({ contentType: 'image/png', width: LOGO_SIDE_MAX, height: 300 });
    const decoded = PNG.sync.read(outcome.image.bytes);
    expect([decoded.width, decoded.height]).toEqual([512, 300]);
    // Left half red and opaque, right half transparent, as drawn.
    expect(Array.from(decoded.data.subarray(0, 4))).toEqual([255, 0, 0, 255]);
    expect(decoded.data[(300 * 512 - 1) * 4 + 3]).toBe(0);
  });

  it('keeps a small JPEG at its size, as a JPEG', () => {
    const outcome = prepareLogo(testJpeg(120, 40));
    if (!outcome.ok) throw new Error(outcome.reason);
    expect(outcome.image).toMatchObject({ contentType: 'image/jpeg', width: 120, height: 40 });
    expect(jpeg.decode(outcome.image.bytes).width).toBe(120);
  });

  it('refuses SVG, a broken file, and a picture of too many pixels before decoding it', () => {
    expect(prepareLogo(Buffer.from('<svg/>'))).toEqual({ ok: false, reason: 'type' });
    const broken = Buffer.concat([testPng(4, 4).subarray(0, 40), Buffer.alloc(20)]);
    expect(prepareLogo(broken)).toEqual({ ok: false, reason: 'unreadable' });
    // A header claiming 10,000 × 10,000 pixels is refused from the header alone.
    const huge = Buffer.from(testPng(1, 1));
    huge.writeUInt32BE(10_000, 16);
    huge.writeUInt32BE(10_000, 20);
    expect(prepareLogo(huge)).toEqual({ ok: false, reason: 'pixels' });
  });
});
