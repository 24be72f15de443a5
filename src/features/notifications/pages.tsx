import { networkForPeople } from '../../platform/chain/networks.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EmptyState,
  hrefWith,
  Pill,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import type { listForMember } from './service.ts';

// Notifications: what the book told this member (keys about to expire, a paused subscription…),
// newest first; the shell's badge counts the unread ones.

type Item = Awaited<ReturnType<typeof listForMember>>['items'][number];

/** A payload's value as people read it: a network by its name, a gas balance in its coin. */
function shownDetail(item: Item, name: string, value: string | number): string {
  const network = typeof item.payload.network === 'string' ? networkForPeople(item.payload.network) : null;
  if (name === 'network' && network) return network.label;
  if (name === 'balance' && item.kind === 'gas_wallet_low' && network?.nativeUnit)
    return `${String(value)} ${network.nativeUnit}`;
  return String(value);
}

function summary(item: Item): string {
  const detail = Object.entries(item.payload)
    .filter((entry): entry is [string, string | number] => ['string', 'number'].includes(typeof entry[1]))
    .map(([name, value]) => `${name}: ${shownDetail(item, name, value)}`)
    .join(' · ');
  return detail || '—';
}

export function NotificationsPage(props: {
  shell: Shell & { book: ShellBook };
  page: { items: Item[]; next_cursor: string | null };
  cursor: string | undefined;
}) {
  const { shell, page } = props;
  const items = page.items;
  const path = bookPath(shell.book.id, 'notifications');
  const columns: Column<Item>[] = [
    { header: 'When', cell: (item) => <DateTime at={item.created_at} /> },
    { header: 'What', cell: (item) => <code>{item.kind}</code> },
    { header: 'Details', cell: (item) => summary(item) },
    { header: '', cell: (item) => (item.read_at ? null : <Pill tone="warn">new</Pill>) },
  ];
  const unread = items.some((item) => item.read_at === null);
  return (
    <Layout shell={shell} title="Notifications">
      <h1>Notifications</h1>
      {unread && (
        <p>
          <ActionButton
            action={bookPath(shell.book.id, 'notifications/read')}
            csrf={shell.csrfToken}
            label="Mark all read"
          />
        </p>
      )}
      <Table
        caption="Notifications"
        columns={columns}
        rows={items}
        nextHref={page.next_cursor ? hrefWith(path, { cursor: page.next_cursor }) : null}
        firstHref={props.cursor ? path : null}
        empty={
          <EmptyState title="Nothing new">
            <p>Tollbook tells you here when a key is about to expire or something needs your attention.</p>
          </EmptyState>
        }
      />
    </Layout>
  );
}
