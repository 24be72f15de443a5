import {
  type Column,
  DateTime,
  EmptyState,
  Field,
  type FormState,
  hrefWith,
  Money,
  Notice,
  Select,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';

// The Ledger screen: entries with their postings, filtered by account and by day, and one
// entry on its own page (every money row elsewhere links here).

type BookShell = Shell & { book: ShellBook };

export type LedgerPosting = {
  ledger_account_id: string;
  account_kind: string;
  account_ref: string;
  currency: string;
  amount: string;
};

export type LedgerEntry = {
  id: string;
  occurred_on: string;
  origin: string;
  kind: string;
  cause_type: string;
  counterparty: string;
  memo: string;
  reverses_entry_id: string | null;
  created_at: string;
  postings: LedgerPosting[];
};

/** Names for ledger accounts: a book account by its name, the rest by what they are. */
export type AccountNames = Record<string, string>;

function accountName(posting: LedgerPosting, names: AccountNames): string {
  if (posting.account_kind === 'asset') return names[posting.account_ref] ?? 'Account';
  if (posting.account_kind === 'income')
    return posting.account_ref === 'general' ? 'Income' : 'Income · endpoint';
  if (posting.account_kind === 'client_credit') return `Client credit · ${posting.account_ref}`;
  if (posting.account_kind === 'clearing') {
    const pair = /^peg:([A-Z0-9]+)\/([A-Z0-9]+)$/.exec(posting.account_ref);
    return pair ? `Conversion ${pair[1]} to ${pair[2]}` : 'Clearing';
  }
  if (posting.account_kind === 'equity')
    return posting.account_ref === 'opening' ? 'Opening balance' : 'Equity';
  if (posting.account_kind === 'expense')
    return posting.account_ref.startsWith('import:') ? 'Expenses · imported' : 'Expenses';
  return 'Other';
}

/** Where an entry came from, as people say it. */
const ORIGIN_WORDS: Record<string, string> = {
  rail: 'Payment received',
  manual: 'Entered by hand',
  import: 'Imported',
  internal: 'Bookkeeping',
};

const originWords = (origin: string) => ORIGIN_WORDS[origin] ?? origin;

/** Debits and credits in two columns, as a bookkeeper reads them. */
function Postings({ entry, names }: { entry: LedgerEntry; names: AccountNames }) {
  return (
    <table class="postings">
      <caption class="skip">Postings</caption>
      <thead>
        <tr>
          <th scope="col">Account</th>
          <th scope="col" class="num">
            Debit
          </th>
          <th scope="col" class="num">
            Credit
          </th>
        </tr>
      </thead>
      <tbody>
        {entry.postings.map((posting) => {
          const credit = posting.amount.startsWith('-');
          const amount = credit ? posting.amount.slice(1) : posting.amount;
          return (
            <tr>
              <td>{accountName(posting, names)}</td>
              <td class="num">{credit ? '' : <Money amount={amount} currency={posting.currency} />}</td>
              <td class="num">{credit ? <Money amount={amount} currency={posting.currency} /> : ''}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function describe(entry: LedgerEntry): string {
  const what = entry.reverses_entry_id
    ? 'Reversal'
    : entry.kind.charAt(0).toUpperCase() + entry.kind.slice(1);
  return [what, entry.counterparty, entry.memo].filter((part) => part !== '').join(' · ');
}

export function LedgerPage(props: {
  shell: BookShell;
  entries: LedgerEntry[];
  names: AccountNames;
  accounts: { id: string; name: string; currency: string }[];
  filter: { account_id?: string | undefined; from?: string | undefined; to?: string | undefined };
  nextHref: string | null;
  firstHref: string | null;
  form?: FormState | undefined;
}) {
  const { shell, names, filter } = props;
  const columns: Column<LedgerEntry>[] = [
    { header: 'Day', cell: (entry) => <DateTime at={`${entry.occurred_on}T00:00:00Z`} dateOnly /> },
    {
      header: 'Entry',
      cell: (entry) => (
        <a href={bookPath(shell.book.id, `ledger/${entry.id}`)} id={`entry-${entry.id}`}>
          {describe(entry)}
        </a>
      ),
    },
    { header: 'Origin', cell: (entry) => originWords(entry.origin) },
    { header: 'Postings', cell: (entry) => <Postings entry={entry} names={names} /> },
  ];
  const filtered = Boolean(filter.account_id || filter.from || filter.to);
  return (
    <Layout shell={shell} title="Ledger">
      <h1>Ledger</h1>
      {props.form?.sentence && <Notice kind="error">{props.form.sentence}</Notice>}
      <form method="get" action={bookPath(shell.book.id, 'ledger')} class="card" aria-label="Filter entries">
        <div class="row">
          <Select
            name="account_id"
            label="Account"
            options={[
              ['', 'All accounts'],
              ...props.accounts.map(
                (account) => [account.id, `${account.name} (${account.currency})`] as const,
              ),
            ]}
            value={filter.account_id ?? ''}
            form={props.form}
          />
          <Field name="from" label="From" type="date" value={filter.from ?? ''} form={props.form} />
          <Field name="to" label="To" type="date" value={filter.to ?? ''} form={props.form} />
        </div>
        <button type="submit" class="secondary">
          Show
        </button>
      </form>
      <Table
        caption="Ledger entries"
        columns={columns}
        rows={props.entries}
        nextHref={props.nextHref}
        firstHref={props.firstHref}
        empty={
          <EmptyState title={filtered ? 'No entries match' : 'No entries yet'}>
            <p>
              {filtered
                ? 'Try another account or a wider range of days.'
                : 'Every payment, charge, pushed row and transfer is booked here as an entry whose postings balance.'}
            </p>
          </EmptyState>
        }
      />
    </Layout>
  );
}

export function LedgerEntryPage(props: { shell: BookShell; entry: LedgerEntry; names: AccountNames }) {
  const { shell, entry } = props;
  return (
    <Layout shell={shell} title="Ledger entry">
      <p>
        <a href={bookPath(shell.book.id, 'ledger')}>← Ledger</a>
      </p>
      <h1>{describe(entry)}</h1>
      <dl class="figures">
        <div>
          <dt>Occurred on</dt>
          <dd>
            <DateTime at={`${entry.occurred_on}T00:00:00Z`} dateOnly />
          </dd>
        </div>
        <div>
          <dt>Filed</dt>
          <dd>
            <DateTime at={entry.created_at} />
          </dd>
        </div>
        <div>
          <dt>Origin</dt>
          <dd>{originWords(entry.origin)}</dd>
        </div>
        <div>
          <dt>Cause</dt>
          <dd>{entry.cause_type}</dd>
        </div>
      </dl>
      {entry.reverses_entry_id && (
        <p>
          Reverses <a href={bookPath(shell.book.id, `ledger/${entry.reverses_entry_id}`)}>this entry</a>.
        </p>
      )}
      <div class="card">
        <Postings entry={entry} names={props.names} />
      </div>
      <p>
        <a href={hrefWith(bookPath(shell.book.id, 'ledger'), {})}>All entries</a>
      </p>
    </Layout>
  );
}
