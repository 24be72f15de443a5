import type { PeopleFormat } from '../../core/people-format.ts';
import type { Role } from '../../core/roles.ts';
import type { Member } from '../http/member.ts';

// What every signed-in page knows about its viewer: who they are, their books, the book open
// now and their role in it. Loaded once per request by the web plumbing (see plumbing.ts).

export type ShellBook = { id: string; name: string; role: Role };

export type Shell = {
  user: { id: string; name: string; email: string };
  /** The session's CSRF token: every form carries it, every htmx request sends it. */
  csrfToken: string;
  books: ShellBook[];
  /** The book in the address (/app/books/{id}/…), or null on pages outside a book. */
  book: ShellBook | null;
  /**
   * The viewer's proven membership of the open book (null with `book`): a book page hands it to
   * the feature's service, which then does not read the role again.
   */
  member: Member | null;
  /** Unread notifications of the viewer in the open book: the badge in the top bar. */
  unread: number;
  /** The request's path, to mark the current screen in the navigation. */
  path: string;
  /** The open book's time zone and locale (UTC and English outside a book). */
  format: PeopleFormat;
};

/** What a session cookie opens: the person, their CSRF token, their books and the open book. */
export type Viewer = {
  user: Shell['user'];
  csrfToken: string;
  books: ShellBook[];
  /** The book the address names, when the viewer is a member of it; null otherwise. */
  open: { book: ShellBook; member: Member; unread: number; format: PeopleFormat } | null;
};

/** The book's base path; every screen of a book lives under it. */
export function bookPath(bookId: string, screen = ''): string {
  return `/app/books/${bookId}${screen ? `/${screen}` : ''}`;
}

export type NavEntry = { screen: string; label: string; group: string; sub?: boolean };

/**
 * The navigation, in the spec's words and order. A screen is listed once its page exists;
 * Payments out and Agents wait for their features (no service to call yet).
 */
export const NAV: readonly NavEntry[] = [
  { screen: '', label: 'Home', group: '' },
  { screen: 'endpoints', label: 'Endpoints', group: 'Money in' },
  { screen: 'income', label: 'Income', group: 'Money in' },
  { screen: 'payment-requests', label: 'Payment requests', group: 'Money in' },
  { screen: 'invoices', label: 'Invoices', group: 'Money in' },
  { screen: 'clients', label: 'Client credits', group: 'Money in' },
  { screen: 'payments-out', label: 'Payments out', group: 'Money out' },
  { screen: 'accounts', label: 'Accounts', group: 'Books' },
  { screen: 'contacts', label: 'Contacts', group: 'Books' },
  { screen: 'chats', label: 'Chats', group: 'Books', sub: true },
  { screen: 'ledger', label: 'Ledger', group: 'Books' },
  { screen: 'push', label: 'Push sources', group: 'Books' },
  { screen: 'agents', label: 'Agents', group: 'Books' },
  { screen: 'keys', label: 'Keys', group: 'Settings' },
  { screen: 'subscriptions', label: 'Connections', group: 'Settings' },
  { screen: 'members', label: 'Members', group: 'Settings' },
  { screen: 'sites', label: 'Sites', group: 'Settings' },
  { screen: 'settings', label: 'Book settings', group: 'Settings' },
];
