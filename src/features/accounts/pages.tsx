import { canAdminister, canWrite } from '../../core/roles.ts';
import { networkLabel } from '../../platform/chain/networks.ts';
import {
  ActionButton,
  type Column,
  EmptyState,
  Field,
  Form,
  type FormState,
  hrefWith,
  Money,
  Notice,
  Pill,
  Select,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import { NETWORKS } from './domain.ts';
import { ACCOUNT_KINDS } from './schemas.ts';

// Accounts: where money is kept, with balances; a crypto account proves its address by signing
// a challenge (a browser wallet's personal_sign, or a signature pasted from elsewhere).

export type AccountView = {
  id: string;
  kind: string;
  name: string;
  currency: string;
  address: string | null;
  network: string | null;
  balance: string;
  address_proven: boolean;
};

type BookShell = Shell & { book: ShellBook };

function AddressCell({ shell, account }: { shell: BookShell; account: AccountView }) {
  if (!account.address) return <span class="muted">—</span>;
  return (
    <>
      <code>{account.address}</code>{' '}
      {account.address_proven ? (
        <Pill tone="ok">proven</Pill>
      ) : canAdminister(shell.book.role) && account.kind === 'crypto' ? (
        <ActionButton
          action={bookPath(shell.book.id, `accounts/${account.id}/prove`)}
          csrf={shell.csrfToken}
          label="Prove"
        />
      ) : (
        <Pill tone="warn">not proven</Pill>
      )}
    </>
  );
}

function CreateForm({ shell, form }: { shell: BookShell; form: FormState }) {
  return (
    <div class="card">
      <h2>New account</h2>
      <Form
        action={bookPath(shell.book.id, 'accounts')}
        csrf={shell.csrfToken}
        form={form}
        label="New account"
      >
        <div class="row">
          <Select
            name="kind"
            label="Kind"
            options={ACCOUNT_KINDS.map((kind) => [kind, kind] as const)}
            form={form}
            value="bank"
          />
          <Field name="name" label="Name" form={form} required maxLength={120} />
          <Field name="currency" label="Currency" form={form} hint="USD, EUR, USDC…" required />
        </div>
        <div class="row">
          <Field
            name="address"
            label="Address (crypto)"
            form={form}
            hint="The pay-to address, 0x…"
            maxLength={128}
          />
          <Select
            name="network"
            label="Network (crypto)"
            options={[['', '—'], ...NETWORKS.map((network) => [network, networkLabel(network)] as const)]}
            form={form}
          />
          <Field name="opening_balance" label="Opening balance" form={form} hint="Optional; 0 by default." />
        </div>
        <button type="submit">Create the account</button>
      </Form>
    </div>
  );
}

export function AccountsPage(props: {
  shell: BookShell;
  accounts: AccountView[];
  next_cursor: string | null;
  cursor: string | undefined;
  form: FormState;
  notice?: string | undefined;
}) {
  const { shell, form } = props;
  const path = bookPath(shell.book.id, 'accounts');
  const columns: Column<AccountView>[] = [
    {
      header: 'Name',
      cell: (account) => <a href={bookPath(shell.book.id, `accounts/${account.id}`)}>{account.name}</a>,
    },
    { header: 'Kind', cell: (account) => account.kind },
    {
      header: 'Balance',
      numeric: true,
      cell: (account) => <Money amount={account.balance} currency={account.currency} />,
    },
    { header: 'Address', cell: (account) => <AddressCell shell={shell} account={account} /> },
    {
      header: 'Network',
      cell: (account) => (account.network ? networkLabel(account.network) : <span class="muted">—</span>),
    },
  ];
  return (
    <Layout shell={shell} title="Accounts">
      <h1>Accounts</h1>
      {props.notice && <Notice kind="ok">{props.notice}</Notice>}
      {form.sentence && !canWrite(shell.book.role) && <Notice kind="error">{form.sentence}</Notice>}
      <Table
        caption="Accounts"
        columns={columns}
        rows={props.accounts}
        nextHref={props.next_cursor ? hrefWith(path, { cursor: props.next_cursor }) : null}
        firstHref={props.cursor ? path : null}
        empty={
          <EmptyState title="No accounts yet">
            <p>Add the bank account or wallet where payments arrive; payment requests are paid into one.</p>
          </EmptyState>
        }
      />
      {canWrite(shell.book.role) && <CreateForm shell={shell} form={form} />}
    </Layout>
  );
}

/** The challenge to sign, and the form that takes the signature (from a wallet or pasted). */
export function ProvePage(props: {
  shell: BookShell;
  account: { id: string; address: string };
  challenge: string;
  form: FormState;
}) {
  const { shell, account, form } = props;
  return (
    <Layout shell={shell} title="Prove an address">
      <p class="muted">
        <a href={bookPath(shell.book.id, 'accounts')}>Accounts</a> › Prove an address
      </p>
      <h1>Prove you control {account.address}</h1>
      <div class="card">
        <Form
          action={bookPath(shell.book.id, `accounts/${account.id}/prove/signature`)}
          csrf={shell.csrfToken}
          form={form}
          label="Signature"
        >
          <p>
            Sign this exact message with the address's wallet (<code>personal_sign</code>). The challenge is
            good for one answer.
          </p>
          <pre class="card mono" data-challenge>
            {props.challenge}
          </pre>
          <p>
            <button type="button" data-wallet-sign data-address={account.address} hidden>
              Sign with my browser wallet
            </button>{' '}
            <span data-wallet-status role="status" />
          </p>
          <div class="field">
            <label for="field-signature">Signature</label>
            <textarea
              id="field-signature"
              name="signature"
              required
              aria-invalid={form.errors.signature ? 'true' : undefined}
              placeholder="0x…"
            />
            <span class="hint">Paste the 0x… signature here if you signed elsewhere.</span>
            {form.errors.signature && <span class="error">{form.errors.signature}</span>}
          </div>
          <button type="submit">Check the signature</button>
        </Form>
      </div>
    </Layout>
  );
}
