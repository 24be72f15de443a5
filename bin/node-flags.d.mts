/** The node flags of package.json's start script (bin/node-flags.mjs). */
export function serverNodeFlags(root?: string): string[];
