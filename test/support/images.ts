import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';

// Small pictures made in the test, for the logo's tests.

/** A PNG of the given size: red on the left half, transparent on the right. */
export function testPng(width: number, height: number): Buffer {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const at = (y * width + x) * 4;
      const left = x < width / 2;
      png.data[at] = left ? 255 : 0;
      png.data[at + 1] = 0;
      png.data[at + 2] = 0;
      png.data[at + 3] = left ? 255 : 0;
    }
  }
  return PNG.sync.write(png);
}

/** A JPEG of the given size, one blue colour. */
export function testJpeg(width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let at = 0; at < data.length; at += 4) {
    data[at + 2] = 200;
    data[at + 3] = 255;
  }
  return Buffer.from(jpeg.encode({ width, height, data }, 90).data);
}
