import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';

// A logo as the public pages and documents show it: a PNG or a JPEG, recognised by its first
// bytes (never by the name or the type the sender claims), decoded, shrunk to at most
// LOGO_SIDE_MAX pixels on its long side and encoded again in its own format. Encoding again
// drops whatever the file carried besides the picture (EXIF, comments). Pure JavaScript
// (pngjs, jpeg-js): no native build.

/** The largest upload taken: 1 MiB. */
export const LOGO_BYTES_MAX = 1024 * 1024;
/** The long side of a stored logo, in pixels. */
export const LOGO_SIDE_MAX = 512;
/**
 * The most pixels decoded: a small file can claim a huge picture (a PNG of one colour packs
 * well), and decoding it would take four bytes a pixel. 4096 × 4096 is 64 MiB decoded.
 */
export const LOGO_PIXELS_MAX = 4096 * 4096;

export type LogoType = 'image/png' | 'image/jpeg';
export type LogoImage = { contentType: LogoType; bytes: Buffer; width: number; height: number };
export type LogoOutcome =
  | { ok: true; image: LogoImage }
  | { ok: false; reason: 'type' | 'pixels' | 'unreadable' };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The image's format by its first bytes; SVG, GIF, WebP and anything else are none. */
export function sniffLogoType(bytes: Buffer): LogoType | null {
  if (bytes.length >= 24 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'image/png';
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  return null;
}

type Raster = { width: number; height: number; data: Uint8Array };

/** The size a picture is shown at: its own, or shrunk so its long side is `side`, never below 1. */
export function fittedSize(width: number, height: number, side = LOGO_SIDE_MAX) {
  const long = Math.max(width, height);
  if (long <= side) return { width, height };
  return {
    width: Math.max(1, Math.round((width * side) / long)),
    height: Math.max(1, Math.round((height * side) / long)),
  };
}

/**
 * Shrinks an RGBA raster by averaging the source pixels under each target pixel (a box filter),
 * weighting colour by alpha so transparent edges do not darken.
 */
export function shrink(source: Raster, width: number, height: number): Raster {
  if (width === source.width && height === source.height) return source;
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y += 1) {
    const top = Math.floor((y * source.height) / height);
    const bottom = Math.max(top + 1, Math.floor(((y + 1) * source.height) / height));
    for (let x = 0; x < width; x += 1) {
      const left = Math.floor((x * source.width) / width);
      const right = Math.max(left + 1, Math.floor(((x + 1) * source.width) / width));
      let red = 0;
      let green = 0;
      let blue = 0;
      let alpha = 0;
      for (let sy = top; sy < bottom; sy += 1) {
        for (let sx = left; sx < right; sx += 1) {
          const at = (sy * source.width + sx) * 4;
          const a = source.data[at + 3] ?? 0;
          red += (source.data[at] ?? 0) * a;
          green += (source.data[at + 1] ?? 0) * a;
          blue += (source.data[at + 2] ?? 0) * a;
          alpha += a;
        }
      }
      const count = (bottom - top) * (right - left);
      const out = (y * width + x) * 4;
      data[out] = alpha === 0 ? 0 : Math.round(red / alpha);
      data[out + 1] = alpha === 0 ? 0 : Math.round(green / alpha);
      data[out + 2] = alpha === 0 ? 0 : Math.round(blue / alpha);
      data[out + 3] = Math.round(alpha / count);
    }
  }
  return { width, height, data };
}

/** A PNG's size from its header, read before anything is decoded. */
function pngSize(bytes: Buffer) {
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

function decode(bytes: Buffer, type: LogoType): Raster {
  if (type === 'image/png') {
    const png = PNG.sync.read(bytes);
    return { width: png.width, height: png.height, data: png.data };
  }
  const decoded = jpeg.decode(bytes, {
    useTArray: true,
    formatAsRGBA: true,
    maxResolutionInMP: LOGO_PIXELS_MAX / 1_000_000,
    maxMemoryUsageInMB: 128,
  });
  return { width: decoded.width, height: decoded.height, data: decoded.data };
}

function encode(raster: Raster, type: LogoType): Buffer {
  if (type === 'image/png') {
    const png = new PNG({ width: raster.width, height: raster.height });
    png.data = Buffer.from(raster.data.buffer, raster.data.byteOffset, raster.data.byteLength);
    return PNG.sync.write(png);
  }
  return Buffer.from(jpeg.encode({ width: raster.width, height: raster.height, data: raster.data }, 85).data);
}

/**
 * An upload made into a stored logo, or why not: not a PNG or JPEG (`type`), a picture larger
 * than LOGO_PIXELS_MAX (`pixels`), or a file that does not decode (`unreadable`). The caller
 * refuses files above LOGO_BYTES_MAX before this runs.
 */
export function prepareLogo(bytes: Buffer): LogoOutcome {
  const type = sniffLogoType(bytes);
  if (type === null) return { ok: false, reason: 'type' };
  if (type === 'image/png') {
    const { width, height } = pngSize(bytes);
    if (width * height > LOGO_PIXELS_MAX) return { ok: false, reason: 'pixels' };
  }
  let raster: Raster;
  try {
    raster = decode(bytes, type);
  } catch (error) {
    // jpeg-js refuses an oversized picture with this sentence before it allocates it.
    if (error instanceof Error && /maxResolutionInMP|maxMemoryUsageInMB/.test(error.message))
      return { ok: false, reason: 'pixels' };
    return { ok: false, reason: 'unreadable' };
  }
  if (raster.width < 1 || raster.height < 1) return { ok: false, reason: 'unreadable' };
  const size = fittedSize(raster.width, raster.height);
  const shrunk = shrink(raster, size.width, size.height);
  return {
    ok: true,
    image: { contentType: type, bytes: encode(shrunk, type), width: size.width, height: size.height },
  };
}
