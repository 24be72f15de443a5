import type { ComponentChildren } from 'preact';
import { ASSET } from './assets.ts';
import { PeopleFormatProvider } from './components.tsx';
import { bookPath, NAV, type Shell } from './shell.ts';

// The page frame: head (stylesheet, htmx, our script; no inline script or style), the top bar
// with the book switcher, the notification badge and log out, and the side navigation.

// htmx settings, read by htmx from this meta tag: no eval, no injected style (the CSP allows
// neither), error answers are swapped in place (they carry the error sentence), and no page is
// kept in the history cache (a page with a secret shown once must not be stored).
const HTMX_CONFIG = JSON.stringify({
  allowEval: false,
  allowScriptTags: false,
  includeIndicatorStyles: false,
  historyCacheSize: 0,
  refreshOnHistoryMiss: true,
  selfRequestsOnly: true,
  // Settling copies these from old to new elements; `style` would be an inline style the CSP refuses.
  attributesToSettle: ['class', 'width', 'height'],
  responseHandling: [
    { code: '204', swap: false },
    { code: '[2345]..', swap: true, error: false },
  ],
});

function Head({ title }: { title: string }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="htmx-config" content={HTMX_CONFIG} />
      <title>{`${title} · Tollbook`}</title>
      <link rel="stylesheet" href={ASSET.css} />
      <script src={ASSET.htmx} defer />
      <script src={ASSET.app} defer />
    </head>
  );
}

function BookSwitcher({ shell }: { shell: Shell }) {
  if (shell.books.length === 0) return null;
  return (
    <form method="get" action="/app/switch" class="switcher">
      <label class="skip" for="book-switch">
        Book
      </label>
      <select id="book-switch" name="book" data-autosubmit>
        {shell.book === null && <option value="">Choose a book…</option>}
        {shell.books.map((book) => (
          <option value={book.id} selected={book.id === shell.book?.id}>
            {book.name}
          </option>
        ))}
      </select>{' '}
      <button type="submit" class="small secondary">
        Open
      </button>
    </form>
  );
}

function TopBar({ shell }: { shell: Shell }) {
  return (
    <header class="topbar">
      {shell.book && (
        <label for="menu-toggle" class="menu-button">
          Menu
        </label>
      )}
      <a class="brand" href="/app">
        Tollbook
      </a>
      <BookSwitcher shell={shell} />
      {shell.book && (
        <a
          href={bookPath(shell.book.id, 'notifications')}
          aria-label={`Notifications: ${shell.unread} unread`}
        >
          Notifications{' '}
          {shell.unread > 0 && (
            <span class="badge" data-testid="badge">
              {shell.unread}
            </span>
          )}
        </a>
      )}
      <a href="/app/books">Books</a>
      <span class="muted-light" title={shell.user.email}>
        {shell.user.name}
      </span>
      <form method="post" action="/app/logout">
        <input type="hidden" name="_csrf" value={shell.csrfToken} />
        <button type="submit" class="link-button">
          Log out
        </button>
      </form>
    </header>
  );
}

function SideNav({ shell }: { shell: Shell }) {
  const book = shell.book;
  if (!book) return null;
  let group = '';
  return (
    <nav class="sidenav" aria-label="Screens">
      <ul>
        {NAV.map((entry) => {
          const href = bookPath(book.id, entry.screen);
          // Home is the book's root: every screen's path starts with it, so only itself is current.
          const current = shell.path === href || (entry.screen !== '' && shell.path.startsWith(`${href}/`));
          const heading = entry.group !== group ? entry.group : null;
          group = entry.group;
          return (
            <>
              {heading && (
                <li class="group" aria-hidden="true">
                  {heading}
                </li>
              )}
              <li class={entry.sub ? 'sub' : undefined}>
                <a href={href} aria-current={current ? 'page' : undefined}>
                  {entry.label}
                </a>
              </li>
            </>
          );
        })}
      </ul>
    </nav>
  );
}

/** A signed-in page: the shell around the screen's own content. */
export function Layout({
  shell,
  title,
  children,
}: {
  shell: Shell;
  title: string;
  children: ComponentChildren;
}) {
  return (
    <html lang="en">
      <Head title={title} />
      <body hx-boost="true" hx-headers={JSON.stringify({ 'X-CSRF-Token': shell.csrfToken })}>
        <a class="skip" href="#main">
          Skip to the content
        </a>
        {shell.book && (
          <input type="checkbox" id="menu-toggle" class="menu-toggle" aria-label="Show the screens" />
        )}
        <TopBar shell={shell} />
        <div class={shell.book ? 'frame' : undefined}>
          <SideNav shell={shell} />
          <main id="main">
            <PeopleFormatProvider format={shell.format}>{children}</PeopleFormatProvider>
          </main>
        </div>
      </body>
    </html>
  );
}

/** A page for people who are not signed in (log in, sign up, not found). */
export function PublicLayout({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <html lang="en">
      <Head title={title} />
      <body hx-boost="true">
        <header class="topbar">
          <a class="brand" href="/app">
            Tollbook
          </a>
        </header>
        <main id="main" class="narrow">
          {children}
        </main>
      </body>
    </html>
  );
}

const ERROR_TITLES: Record<number, string> = {
  400: 'That did not work',
  403: 'Not allowed',
  404: 'Not found',
  409: 'That did not work',
  422: 'That did not work',
  500: 'Something went wrong',
};

/** The page for a refusal or a failure: one sentence and a way back. */
export function errorPage(status: number, sentence: string, shell: Shell | null) {
  const title = ERROR_TITLES[status] ?? 'That did not work';
  const content = (
    <>
      <h1>{title}</h1>
      <p>{sentence}</p>
      <p>
        <a href="/app">Back to the app</a>
      </p>
    </>
  );
  return shell ? (
    <Layout shell={shell} title={title}>
      {content}
    </Layout>
  ) : (
    <PublicLayout title={title}>{content}</PublicLayout>
  );
}
