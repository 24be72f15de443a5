import QRCode from 'qrcode';

// A QR code drawn in SVG from TSX: the code's dark modules as one path, inside a quiet zone one
// module wide, at the error correction the qrcode library uses by default (M).

const QUIET_MODULES = 1;

/** The dark runs of every row as SVG path commands: a run is a rectangle one module high. */
function darkRuns(size: number, dark: (row: number, col: number) => boolean): string {
  const runs: string[] = [];
  for (let row = 0; row < size; row++) {
    let col = 0;
    while (col < size) {
      if (!dark(row, col)) {
        col += 1;
        continue;
      }
      const start = col;
      while (col < size && dark(row, col)) col += 1;
      const length = col - start;
      runs.push(`M${start + QUIET_MODULES} ${row + QUIET_MODULES}h${length}v1h-${length}z`);
    }
  }
  return runs.join('');
}

/** The QR code of `text`, black on white, scaled by its container. */
export function QrCode({ text }: { text: string }) {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const side = modules.size + 2 * QUIET_MODULES;
  return (
    // The element around it names the code for assistive technology (role="img", aria-label).
    <svg
      xmlns="http://www.w3.org/2000/svg"
      viewBox={`0 0 ${side} ${side}`}
      shape-rendering="crispEdges"
      aria-hidden="true"
    >
      <rect width={side} height={side} fill="#ffffff" />
      <path fill="#000000" d={darkRuns(modules.size, (row, col) => modules.get(row, col) === 1)} />
    </svg>
  );
}
