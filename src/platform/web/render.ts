import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

// Every HTML this server writes (the app's pages, the public pages, the bodies of its mails)
// is TSX rendered here: the renderer escapes each text and attribute, so no caller escapes by
// hand and no caller joins markup from strings.

/** A whole HTML document: the doctype, then the rendered page. */
export function renderDocument(page: VNode): string {
  return `<!doctype html>${renderToString(page)}`;
}
