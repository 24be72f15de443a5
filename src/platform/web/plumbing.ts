import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { AppError } from '../../core/errors.ts';
import { UTC_ENGLISH } from '../../core/people-format.ts';
import { canWrite } from '../../core/roles.ts';
import { RenderedRefusal, sendRendered } from '../http/errors.ts';
import type { Member } from '../http/member.ts';
import { assetAt } from './assets.ts';
import { checkOutsideForm } from './forms.ts';
import { errorPage } from './layout.tsx';
import { renderDocument } from './render.ts';
import type { Shell, ShellBook, Viewer } from './shell.ts';

// The plumbing under every page of the owner's web app (/app): form bodies, the session
// cookie, CSRF, the shell of the signed-in viewer, security headers and error pages. Features
// register their page routes inside the scope this builds (see README.md beside this file).

export const SESSION_COOKIE = 'tb_session';
const FORM_BODY_LIMIT_BYTES = 64 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The same headers as the public pages: no framing, no inline script, nothing cached. */
const APP_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const PAGE_HEADERS = {
  'content-security-policy': APP_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** What app.ts passes in: the features' functions the plumbing needs, so platform imports none. */
export type WebAppDeps = {
  /**
   * The viewer a session token opens (undefined: none live), with their books and the book
   * `bookId` names when they are a member of it; one statement a page.
   */
  loadViewer: (token: string, bookId: string | undefined) => Promise<Viewer | undefined>;
};

/** How a form's text fields become the body the route's schema checks. */
export type FormShape = {
  /** Fields sent as repeated names (checkbox groups): always an array, maybe empty. */
  arrays?: string[];
  /** Checkboxes: present → true, absent → false. */
  booleans?: string[];
  /** Whole numbers typed as text. */
  integers?: string[];
};

declare module 'fastify' {
  interface FastifyRequest {
    shell: Shell | null;
  }
  interface FastifyContextConfig {
    /** A page anyone may open (log in, sign up). */
    webPublic?: boolean;
    form?: FormShape;
    /** A post a viewer may make: it changes only their own state (marking notifications read). */
    viewerMay?: boolean;
  }
}

function parseFormBody(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const held = fields[name];
    if (held === undefined) fields[name] = value;
    else fields[name] = Array.isArray(held) ? [...held, value] : [held, value];
  }
  return fields;
}

/**
 * Dotted names nest ("addresses.0.requisites.iban" → addresses[0].requisites.iban), so a form
 * can fill the same body the app API takes; objects left empty by blank fields are dropped.
 */
function nest(flat: Record<string, unknown>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(flat)) {
    const path = name.split('.');
    if (
      path.length > 4 ||
      path.some(
        (part) => part === '' || part === '__proto__' || part === 'constructor' || part === 'prototype',
      )
    ) {
      continue;
    }
    let node: Record<string, unknown> = root;
    path.forEach((part, index) => {
      if (index === path.length - 1) {
        node[part] = value;
        return;
      }
      const nextIsIndex = /^\d{1,2}$/.test(path[index + 1] ?? '');
      node[part] ??= nextIsIndex ? [] : {};
      node = node[part] as Record<string, unknown>;
    });
  }
  return root;
}

/** Empty text is "not given"; the route's shape turns checkboxes and numbers into their types. */
function shapeForm(fields: Record<string, string | string[]>, shape: FormShape | undefined) {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (shape?.arrays?.includes(name)) body[name] = (Array.isArray(value) ? value : [value]).filter(Boolean);
    else if (typeof value === 'string' && value.trim() !== '') body[name] = value.trim();
    else if (Array.isArray(value)) body[name] = value.at(-1);
  }
  for (const name of shape?.arrays ?? []) body[name] ??= [];
  for (const name of shape?.booleans ?? []) body[name] = body[name] !== undefined && body[name] !== 'false';
  for (const name of shape?.integers ?? []) {
    const text = body[name];
    if (typeof text === 'string' && /^-?\d{1,15}$/.test(text)) body[name] = Number(text);
  }
  return Object.keys(body).some((name) => name.includes('.')) ? nest(body) : body;
}

/** A write that came from another site is refused before it is read any further. */
function crossSite(request: FastifyRequest): boolean {
  if (request.headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = request.headers.origin;
  if (origin === undefined || origin === 'null') return origin === 'null';
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}

function sentCsrf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-csrf-token'];
  if (typeof header === 'string') return header;
  const body = request.body;
  const field = typeof body === 'object' && body !== null && '_csrf' in body ? body._csrf : undefined;
  return typeof field === 'string' ? field : undefined;
}

/** Renders a page: a doctype and the escaped markup. */
export function sendPage(reply: FastifyReply, page: VNode, status = 200) {
  return reply.code(status).type('text/html; charset=utf-8').send(renderDocument(page));
}

/** After a write: back to a page with GET (a reload never repeats the write). */
export function seeOther(reply: FastifyReply, location: string) {
  return reply.code(303).header('location', location).send();
}

/** A book page's shell: the open book and the viewer's proven membership of it. */
export type BookShell = Shell & { book: ShellBook; member: Member };

/** The signed-in viewer's shell; only called from routes behind the session (not webPublic). */
export function shellOf(request: FastifyRequest): BookShell {
  const shell = request.shell;
  if (!shell?.book || !shell.member) throw new AppError('not_found', 'No such book.');
  return shell as BookShell;
}

/** The shell of a page outside any book (the Books list). */
export function viewerShellOf(request: FastifyRequest): Shell {
  if (!request.shell) throw new AppError('unauthorized', 'Log in first.');
  return request.shell;
}

function loginRedirect(request: FastifyRequest, reply: FastifyReply) {
  const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
  if (request.headers['hx-request'] === 'true') reply.header('hx-redirect', `/app/login${next}`);
  return seeOther(reply, `/app/login${next}`);
}

/** The book id the address names: undefined outside a book, null when it cannot be one. */
function bookIdOf(request: FastifyRequest): string | null | undefined {
  const params = request.params;
  if (typeof params !== 'object' || params === null || !('book_id' in params)) return undefined;
  const bookId = params.book_id;
  return typeof bookId === 'string' && UUID.test(bookId) ? bookId : null;
}

/** The request's shell from its viewer; a book they are not a member of does not exist for them. */
function shellFrom(viewer: Viewer, request: FastifyRequest, bookId: string | null | undefined): Shell {
  if (bookId === null) throw new AppError('not_found', 'No such book.');
  if (bookId !== undefined && !viewer.open)
    throw new AppError('not_found', 'No such book, or you are not a member of it.');
  const open = bookId === undefined ? null : viewer.open;
  return {
    user: viewer.user,
    csrfToken: viewer.csrfToken,
    books: viewer.books,
    book: open?.book ?? null,
    member: open?.member ?? null,
    unread: open?.unread ?? 0,
    path: request.url.split('?')[0] ?? '',
    format: open?.format ?? UTC_ENGLISH,
  };
}

function registerGuards(scope: FastifyInstance, deps: WebAppDeps) {
  scope.addHook('preHandler', async (request, reply) => {
    // The JSON API's own addresses reach this scope only when no API route took them (the
    // catch-all below answers them in the API's shape); no session is asked for.
    if (request.url.startsWith('/app/api/')) return;
    if (request.method === 'POST' && crossSite(request)) {
      throw new AppError('forbidden', 'This form was sent from another site and was refused.');
    }
    if (request.routeOptions.config.webPublic) return;
    const token = request.cookies?.[SESSION_COOKIE];
    const bookId = bookIdOf(request);
    const viewer = token ? await deps.loadViewer(token, bookId ?? undefined) : undefined;
    if (!viewer) return loginRedirect(request, reply);
    if (request.method === 'POST' && sentCsrf(request) !== viewer.csrfToken) {
      throw new AppError(
        'forbidden',
        'This form is out of date or was not sent by this app; reload the page and try again.',
      );
    }
    const shell = shellFrom(viewer, request, bookId);
    request.shell = shell;
    // Two walls for a viewer: the pages show no write control, and a write is refused here.
    if (
      request.method === 'POST' &&
      shell.book &&
      !canWrite(shell.book.role) &&
      !request.routeOptions.config.viewerMay
    ) {
      throw new AppError('forbidden', 'A viewer can look but not change anything in this book.');
    }
  });
}

function registerErrorPages(scope: FastifyInstance) {
  scope.setErrorHandler(async (error, request, reply) => {
    // A refusal the edge already rendered (a NUL or a lone surrogate in the address): its status
    // and sentence, as a page.
    if (error instanceof RenderedRefusal) {
      if (request.url.startsWith('/app/api/')) return sendRendered(reply, error.rendered);
      const { status, body } = error.rendered;
      const detail =
        'detail' in body && typeof body.detail === 'string' ? body.detail : 'The request could not be read.';
      return sendPage(reply, errorPage(status, detail, request.shell), status);
    }
    if (error instanceof AppError) {
      if (error.code === 'unauthorized') return loginRedirect(request, reply);
      return sendPage(reply, errorPage(error.status, error.message, request.shell), error.status);
    }
    const validation = (error as { validation?: unknown }).validation;
    if (validation) {
      return sendPage(reply, errorPage(400, 'This address is not one the app knows.', request.shell), 400);
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendPage(reply, errorPage(status, 'The request could not be read.', request.shell), status);
    }
    request.log.error({ err: error, reqId: request.id }, 'page failed');
    return sendPage(
      reply,
      errorPage(500, 'Something went wrong on our side; try again.', request.shell),
      500,
    );
  });
  // Any other address under /app: the not-found page, in the shell when signed in.
  scope.get('/app/*', { schema: { hide: true } }, async (request, reply) => {
    // An address under the JSON API that no route takes is answered as the API answers.
    if (request.url.startsWith('/app/api/')) {
      const path = request.url.split('?')[0];
      return sendRendered(reply, {
        status: 404,
        body: { error: 'not_found', detail: `No route ${request.method} ${path}.` },
      });
    }
    return sendPage(reply, errorPage(404, 'There is no page at this address.', request.shell), 404);
  });
}

/**
 * Builds the /app scope and lets app.ts register the features' page routes inside it.
 * Outside it nothing changes: the JSON API keeps its own parsers and error shapes.
 */
export function registerWebApp(
  app: FastifyInstance,
  deps: WebAppDeps,
  registerPages: (scope: FastifyInstance) => void,
) {
  app.decorateRequest('shell', null);
  app.get('/', { schema: { hide: true } }, async (_request, reply) => seeOther(reply, '/app'));
  app.get('/app/assets/:file', { schema: { hide: true } }, async (request, reply) => {
    const asset = assetAt(request.url.split('?')[0] ?? '');
    if (!asset)
      return sendRendered(reply, { status: 404, body: { error: 'not_found', detail: 'No such file.' } });
    return reply
      .type(asset.type)
      .headers({
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      })
      .send(asset.body);
  });
  return app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
      (request, body, done) => {
        done(null, shapeForm(parseFormBody(body as string), request.routeOptions.config.form));
      },
    );
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(PAGE_HEADERS);
      return payload;
    });
    registerGuards(scope, deps);
    scope.addHook('preHandler', async (request) => checkOutsideForm(request));
    registerErrorPages(scope);
    registerPages(scope);
  });
}
