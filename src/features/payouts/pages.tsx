import { canAdminister, canWrite } from '../../core/roles.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EmptyState,
  Field,
  Filters,
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
import type { InboundFlag, PayoutChoices, PayoutDetail } from './screens.ts';

// The Payments out screens: the list with its create form, a payment's detail with the actions
// its status and the viewer's role allow, the approval and policy rules, the screening queue,
// and transfers between the book's own accounts.

type BookShell = Shell & { book: ShellBook };

export type PaymentView = {
  id: string;
  status: string;
  amount: string;
  currency: string;
  rail: string;
  payee: string;
  destination: string;
  blocked_reason: string | null;
  approvals: number;
  required_approvals: number;
  created_at: string;
};

export const STATUS_LABELS: Record<string, string> = {
  awaiting_approval: 'Awaiting approval',
  approved: 'Approved',
  executing: 'Executing',
  executed: 'Executed',
  blocked: 'Blocked',
  rejected: 'Rejected',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** Each stable reason code as a sentence a person understands. */
const REASONS: Record<string, string> = {
  policy_max_per_payment: 'Over the most one payment may be (a policy rule).',
  policy_max_per_day: 'Over what may leave in one day (a policy rule).',
  policy_blocked_destination: 'The destination or payee is blocked (a policy rule).',
  policy_currency: 'The currency is not one the policy allows.',
  screening_hold: 'Held by screening: the payee or destination matches the sanctions list.',
  insufficient_balance: 'The account did not hold enough when it was to leave.',
};

export function reasonText(code: string): string {
  return REASONS[code] ?? code;
}

const RAIL_LABELS: Record<string, string> = {
  book: 'Book (paid by hand)',
  bank: 'Bank (payment file)',
  chain: 'Chain (browser wallet)',
};

function tone(status: string): 'ok' | 'warn' | 'bad' | undefined {
  if (status === 'executed') return 'ok';
  if (status === 'awaiting_approval' || status === 'approved' || status === 'executing') return 'warn';
  if (status === 'blocked' || status === 'rejected' || status === 'failed') return 'bad';
  return undefined;
}

export function StatusPill({ status }: { status: string }) {
  return <Pill tone={tone(status)}>{STATUS_LABELS[status] ?? status}</Pill>;
}

/** The sub-screens of Payments out, as tabs. */
function SubNav({ shell, current }: { shell: BookShell; current: string }) {
  const tabs = [
    ['payments-out', 'Payments'],
    ['payments-out/rules', 'Rules'],
    ['payments-out/screening', 'Screening'],
    ['payments-out/transfers', 'Transfers'],
  ] as const;
  return (
    <nav class="filters" aria-label="Payments out">
      {tabs.map(([screen, label]) => (
        <a href={bookPath(shell.book.id, screen)} aria-current={screen === current ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

function paymentColumns(shell: BookShell): Column<PaymentView>[] {
  return [
    { header: 'Created', cell: (row) => <DateTime at={row.created_at} /> },
    {
      header: 'Payee',
      cell: (row) => <a href={bookPath(shell.book.id, `payments-out/${row.id}`)}>{row.payee}</a>,
    },
    { header: 'Amount', numeric: true, cell: (row) => <Money amount={row.amount} currency={row.currency} /> },
    { header: 'Sent by', cell: (row) => RAIL_LABELS[row.rail] ?? row.rail },
    {
      header: 'Status',
      cell: (row) => (
        <span>
          <StatusPill status={row.status} />
          {row.status === 'awaiting_approval' && (
            <span class="muted">
              {' '}
              {row.approvals}/{row.required_approvals}
            </span>
          )}
          {row.blocked_reason && <span class="muted"> {reasonText(row.blocked_reason)}</span>}
        </span>
      ),
    },
  ];
}

function CreateForm({
  shell,
  choices,
  form,
}: {
  shell: BookShell;
  choices: PayoutChoices;
  form?: FormState | undefined;
}) {
  const accounts = choices.accounts.map(
    (account) => [account.id, `${account.name} (${account.currency})`] as const,
  );
  const contacts = [
    ['', 'None'] as const,
    ...choices.contacts.map((contact) => [contact.id, contact.name] as const),
  ];
  return (
    <details class="card" open={form !== undefined}>
      <summary>New payment</summary>
      <Form
        action={bookPath(shell.book.id, 'payments-out')}
        csrf={shell.csrfToken}
        form={form}
        label="New payment"
      >
        <div class="row">
          <Select name="account_id" label="From account" options={accounts} form={form} />
          <Select name="rail" label="Send by" options={Object.entries(RAIL_LABELS)} form={form} />
        </div>
        <div class="row">
          <Field name="amount" label="Amount" form={form} required placeholder="250.00" maxLength={40} />
          <Field
            name="currency"
            label="Currency"
            form={form}
            hint="Optional: the account's currency."
            maxLength={12}
          />
        </div>
        <Field
          name="payee"
          label="Payee"
          form={form}
          required
          maxLength={200}
          hint="Who is paid; screened."
        />
        <div class="row">
          <Field
            name="destination"
            label="Destination"
            form={form}
            maxLength={128}
            hint="Chain: a 0x address on the account's network. Book: free text."
          />
          <Select
            name="contact_id"
            label="Contact"
            options={contacts}
            form={form}
            hint="Bank: the contact whose bank requisites are paid."
          />
        </div>
        <Field name="note" label="Note" form={form} maxLength={500} />
        <button type="submit">Create the payment</button>
      </Form>
    </details>
  );
}

export type PaymentsPageProps = {
  shell: BookShell;
  page: { items: PaymentView[]; has_more: boolean };
  status: string | undefined;
  startingAfter: string | undefined;
  choices: PayoutChoices;
  form?: FormState | undefined;
};

export function PaymentsPage(props: PaymentsPageProps) {
  const { shell, page, status } = props;
  const path = bookPath(shell.book.id, 'payments-out');
  const last = page.items.at(-1);
  const filters = [
    { href: path, label: 'All', current: status === undefined },
    ...Object.entries(STATUS_LABELS).map(([value, label]) => ({
      href: hrefWith(path, { status: value }),
      label,
      current: status === value,
    })),
  ];
  return (
    <Layout shell={shell} title="Payments out">
      <h1>Payments out</h1>
      <SubNav shell={shell} current="payments-out" />
      {canWrite(shell.book.role) && <CreateForm shell={shell} choices={props.choices} form={props.form} />}
      <Filters label="Status" options={filters} />
      <Table
        caption="Payments out"
        columns={paymentColumns(shell)}
        rows={page.items}
        empty={
          <EmptyState
            title={status ? `No ${STATUS_LABELS[status]?.toLowerCase()} payments` : 'No payments out yet'}
          >
            <p>A payment leaves one of the book's accounts by bank file, browser wallet or by hand.</p>
          </EmptyState>
        }
        nextHref={page.has_more && last ? hrefWith(path, { status, starting_after: last.id }) : null}
        firstHref={props.startingAfter ? hrefWith(path, { status }) : null}
      />
    </Layout>
  );
}

type DetailProps = {
  shell: BookShell;
  detail: PayoutDetail;
  /** A refused action: which one, and what was wrong (shown in its own form). */
  refused?: { action: string; form: FormState } | undefined;
  /** What the last action did, shown in place. */
  done?: string | undefined;
};

function Facts({ shell, detail }: { shell: BookShell; detail: PayoutDetail }) {
  const payment = detail.payment;
  return (
    <dl class="figures payment-facts">
      <div>
        <dt>Amount</dt>
        <dd data-field="amount">
          <Money amount={payment.amount} currency={payment.currency} />
        </dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd data-field="status">
          <StatusPill status={payment.status} />
        </dd>
      </div>
      <div>
        <dt>Sent by</dt>
        <dd>{RAIL_LABELS[payment.rail] ?? payment.rail}</dd>
      </div>
      <div>
        <dt>From</dt>
        <dd>{detail.account.name}</dd>
      </div>
      <div>
        <dt>Payee</dt>
        <dd>{payment.payee}</dd>
      </div>
      {payment.destination && (
        <div>
          <dt>Destination</dt>
          <dd class="address">
            <code>{payment.destination}</code>
          </dd>
        </div>
      )}
      <div>
        <dt>Dated</dt>
        <dd>
          <DateTime at={payment.occurred_on} />
        </dd>
      </div>
      {payment.reference && (
        <div>
          <dt>Bank reference</dt>
          <dd>{payment.reference}</dd>
        </div>
      )}
      {payment.tx_hash && (
        <div>
          <dt>Transaction</dt>
          <dd class="address">
            <code>{payment.tx_hash}</code>
          </dd>
        </div>
      )}
      {payment.transaction_id && (
        <div>
          <dt>Ledger</dt>
          <dd>
            <a href={bookPath(shell.book.id, `ledger/${payment.transaction_id}`)} data-field="entry">
              Ledger entry
            </a>
          </dd>
        </div>
      )}
    </dl>
  );
}

/** Why the payment stopped, or how it was decided: the block, the release, the rejection. */
function Outcome({ detail }: { detail: PayoutDetail }) {
  const payment = detail.payment;
  return (
    <>
      {payment.status === 'blocked' && payment.blocked_reason && (
        <Notice kind="error">
          <strong>Blocked.</strong>{' '}
          <span data-field="blocked-reason">{reasonText(payment.blocked_reason)}</span>{' '}
          <code class="muted">{payment.blocked_reason}</code>
        </Notice>
      )}
      {payment.status === 'failed' && payment.blocked_reason && (
        <Notice kind="error">
          <strong>Failed.</strong> {reasonText(payment.blocked_reason)}
        </Notice>
      )}
      {detail.screening && <ScreeningMatch match={detail.screening} />}
      {payment.release_reason !== null && (
        <Notice kind="warn">
          <span data-field="release">
            Screening hold released by {detail.released_by}: “{payment.release_reason}”
          </span>
        </Notice>
      )}
      {payment.status === 'rejected' && (
        <Notice kind="warn">
          Rejected by {detail.rejected_by}
          {payment.reject_reason ? `: “${payment.reject_reason}”` : '.'}
        </Notice>
      )}
    </>
  );
}

/** The list entry that held the payment, as the owner reads it before releasing or rejecting. */
function ScreeningMatch({ match }: { match: NonNullable<PayoutDetail['screening']> }) {
  return (
    <section class="card" aria-labelledby="screening-match">
      <h2 id="screening-match">What screening matched</h2>
      <dl class="figures" data-field="screening-match">
        <div>
          <dt>Listed as</dt>
          <dd data-field="listed">{match.listed}</dd>
        </div>
        <div>
          <dt>Score</dt>
          <dd data-field="score">
            {match.score} {match.kind === 'address' ? '(the address)' : '(the name)'}
          </dd>
        </div>
        <div>
          <dt>Program</dt>
          <dd data-field="programs">{match.programs || '—'}</dd>
        </div>
        <div>
          <dt>{match.kind === 'address' ? "This payment's address" : "This payment's name"}</dt>
          <dd class="address">
            <code>{match.matched}</code>
          </dd>
        </div>
        <div>
          <dt>Source</dt>
          <dd class="address" data-field="source">
            {match.list_source || '—'} · entry {match.sdn_uid}
          </dd>
        </div>
      </dl>
    </section>
  );
}

function Approvals({ detail }: { detail: PayoutDetail }) {
  const { payment, rule } = detail;
  if (payment.required_approvals === 0 && detail.approvals.length === 0) {
    return <p class="muted">No approval rule applied: the payment needed no approval.</p>;
  }
  return (
    <>
      <p>
        Needs {payment.required_approvals} {payment.required_approvals === 1 ? 'approval' : 'approvals'}
        {rule && (
          <span data-field="rule">
            {' '}
            by the rule “from <Money amount={rule.min_amount} currency={rule.currency} />,{' '}
            {rule.required_approvals} {rule.required_approvals === 1 ? 'approval' : 'approvals'}”
          </span>
        )}
        ; has {payment.approvals}.
      </p>
      {detail.approvals.length > 0 && (
        <ul class="approvals">
          {detail.approvals.map((approval) => (
            <li>
              Approved by <strong>{approval.name}</strong>, <DateTime at={approval.at} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function History({ detail }: { detail: PayoutDetail }) {
  return (
    <ol class="history">
      <li>
        <DateTime at={detail.payment.created_at} /> Created by {detail.maker}
      </li>
      {detail.history.map((change) => (
        <li>
          <DateTime at={change.at} /> <StatusPill status={change.status} />
          {change.reason && <span class="muted"> {reasonText(change.reason)}</span>}
        </li>
      ))}
    </ol>
  );
}

function formOf(props: DetailProps, action: string): FormState | undefined {
  return props.refused?.action === action ? props.refused.form : undefined;
}

function ReasonForm(props: DetailProps & { action: 'reject' | 'release'; required: boolean; label: string }) {
  const { shell, detail } = props;
  const form = formOf(props, props.action);
  return (
    <Form
      action={bookPath(shell.book.id, `payments-out/${detail.payment.id}/${props.action}`)}
      csrf={shell.csrfToken}
      form={form}
      id={`${props.action}-form`}
      label={props.label}
    >
      <Field
        name="reason"
        label={props.required ? 'Reason (recorded)' : 'Reason (optional, recorded)'}
        form={form}
        required={props.required}
        maxLength={500}
      />
      <button type="submit" class={props.action === 'reject' ? 'danger' : undefined}>
        {props.label}
      </button>
    </Form>
  );
}

function BankActions(props: DetailProps) {
  const { shell, detail } = props;
  const path = bookPath(shell.book.id, `payments-out/${detail.payment.id}`);
  const form = formOf(props, 'executed');
  return (
    <>
      {detail.actions.downloadFile && (
        <p>
          <a class="button secondary" href={`${path}/file`} download hx-boost="false" data-field="file">
            Download the payment file
          </a>{' '}
          <span class="muted">SEPA pain.001 XML for SEPA requisites, CSV otherwise.</span>
        </p>
      )}
      {detail.actions.markExecuted && (
        <Form
          action={`${path}/executed`}
          csrf={shell.csrfToken}
          form={form}
          id="executed-form"
          label="Mark executed"
        >
          <Field name="reference" label="The bank's reference" form={form} required maxLength={140} />
          <button type="submit">Mark executed</button>
        </Form>
      )}
    </>
  );
}

/** The unsigned ERC-20 transfer and the button that hands it to the browser wallet (app.js). */
function ChainSend(props: DetailProps) {
  const { shell, detail } = props;
  const transfer = detail.transfer;
  if (!detail.actions.send || transfer === null) return null;
  if (!transfer.ok) return <Notice kind="warn">{transfer.detail}</Notice>;
  const tx = transfer.value;
  const form = formOf(props, 'chain-tx');
  return (
    <div class="card" data-chain-send>
      <h2>Send with a wallet</h2>
      <dl class="figures">
        <div>
          <dt>Chain id</dt>
          <dd>{tx.chain_id}</dd>
        </div>
        <div>
          <dt>From</dt>
          <dd class="address">
            <code>{tx.from}</code>
          </dd>
        </div>
        <div>
          <dt>Token contract</dt>
          <dd class="address">
            <code>{tx.to}</code>
          </dd>
        </div>
      </dl>
      <p class="address">
        <span class="muted">Data </span>
        <code>{tx.data}</code>
      </p>
      <Form
        action={bookPath(shell.book.id, `payments-out/${detail.payment.id}/chain-tx`)}
        csrf={shell.csrfToken}
        form={form}
        id="chain-tx-form"
        label="Report the transaction"
      >
        <button
          type="button"
          data-wallet-send
          data-chain-id={String(tx.chain_id)}
          data-from={tx.from}
          data-to={tx.to}
          data-data={tx.data}
          hidden
        >
          Send with wallet
        </button>{' '}
        <span class="muted" data-wallet-status role="status" />
        <Field
          name="tx_hash"
          label="Transaction hash"
          form={form}
          maxLength={66}
          hint="Filled by the wallet; or paste the hash of a transfer you sent elsewhere."
        />
        <button type="submit" class="secondary">
          Report the transaction
        </button>
      </Form>
    </div>
  );
}

function Decisions(props: DetailProps) {
  const { shell, detail } = props;
  const path = bookPath(shell.book.id, `payments-out/${detail.payment.id}`);
  const { actions } = detail;
  if (!actions.approve && !actions.reject && !actions.release && !actions.cancel) return null;
  return (
    <div class="card">
      <h2>Decide</h2>
      <div class="actions">
        {actions.approve && (
          <ActionButton action={`${path}/approve`} csrf={shell.csrfToken} label="Approve" />
        )}
        {actions.cancel && (
          <ActionButton
            action={`${path}/cancel`}
            csrf={shell.csrfToken}
            label="Cancel the payment"
            tone="danger"
            confirm="Cancel this payment? It will not leave."
          />
        )}
      </div>
      {actions.release && <ReasonForm {...props} action="release" required label="Release the hold" />}
      {actions.reject && <ReasonForm {...props} action="reject" required={false} label="Reject" />}
    </div>
  );
}

/**
 * A refusal whose form is not on the page now (a button, or a form the new status hides): its
 * sentence at the top. A refused form that is still shown carries its own sentence.
 */
function refusedAtTop(props: DetailProps): string | undefined {
  const refused = props.refused;
  if (!refused) return undefined;
  const { actions, transfer } = props.detail;
  const formShown: Record<string, boolean> = {
    reject: actions.reject,
    release: actions.release,
    executed: actions.markExecuted,
    'chain-tx': actions.send && transfer?.ok === true,
  };
  return formShown[refused.action] ? undefined : refused.form.sentence;
}

export function PaymentDetailPage(props: DetailProps) {
  const { shell, detail } = props;
  const payment = detail.payment;
  const refused = refusedAtTop(props);
  return (
    <Layout shell={shell} title={`Payment to ${payment.payee}`}>
      <p>
        <a href={bookPath(shell.book.id, 'payments-out')}>← Payments out</a>
      </p>
      <h1>
        Payment to {payment.payee} <StatusPill status={payment.status} />
      </h1>
      {props.done && <Notice kind="ok">{props.done}</Notice>}
      {refused && <Notice kind="error">{refused}</Notice>}
      <Outcome detail={detail} />
      <div class="card">
        <Facts shell={shell} detail={detail} />
        {payment.note && <p class="muted">{payment.note}</p>}
      </div>
      <Decisions {...props} />
      {(detail.actions.downloadFile || detail.actions.markExecuted) && (
        <div class="card">
          <h2>Bank</h2>
          <BankActions {...props} />
        </div>
      )}
      <ChainSend {...props} />
      <div class="card">
        <h2>Approvals</h2>
        <Approvals detail={detail} />
      </div>
      <div class="card">
        <h2>History</h2>
        <History detail={detail} />
      </div>
    </Layout>
  );
}

export type ApprovalRuleView = {
  id: string;
  min_amount: string;
  currency: string;
  required_approvals: number;
  created_at: string;
};

export type PolicyRuleView = {
  id: string;
  kind: string;
  amount: string | null;
  currency: string | null;
  destination: string | null;
  currencies: string[] | null;
  created_at: string;
};

const POLICY_LABELS: Record<string, string> = {
  max_per_payment: 'Most per payment',
  max_per_day: 'Most per day',
  blocked_destination: 'Blocked destination',
  allowed_currencies: 'Allowed currencies',
};

function policyLimit(rule: PolicyRuleView) {
  if (rule.amount !== null && rule.currency !== null) {
    return <Money amount={rule.amount} currency={rule.currency} />;
  }
  if (rule.destination !== null) return <code class="address">{rule.destination}</code>;
  return (rule.currencies ?? []).join(', ');
}

function removeColumn<T extends { id: string }>(shell: BookShell, kind: string, label: string): Column<T>[] {
  if (!canAdminister(shell.book.role)) return [];
  return [
    {
      header: '',
      cell: (rule) => (
        <ActionButton
          action={bookPath(shell.book.id, `payments-out/rules/${kind}/${rule.id}/remove`)}
          csrf={shell.csrfToken}
          label="Remove"
          tone="danger"
          confirm={`Remove this ${label}? Payments made before it keep what it decided.`}
        />
      ),
    },
  ];
}

export type RulesPageProps = {
  shell: BookShell;
  approvalRules: ApprovalRuleView[];
  policyRules: PolicyRuleView[];
  approvalForm?: FormState | undefined;
  policyForm?: FormState | undefined;
  /** A refused removal's sentence. */
  refused?: string | undefined;
};

function ApprovalRules(props: RulesPageProps) {
  const { shell } = props;
  const form = props.approvalForm;
  const columns: Column<ApprovalRuleView>[] = [
    {
      header: 'From',
      numeric: true,
      cell: (rule) => <Money amount={rule.min_amount} currency={rule.currency} />,
    },
    { header: 'Approvals needed', numeric: true, cell: (rule) => rule.required_approvals },
    { header: 'Added', cell: (rule) => <DateTime at={rule.created_at} /> },
    ...removeColumn<ApprovalRuleView>(shell, 'approval', 'approval rule'),
  ];
  return (
    <section class="card" aria-labelledby="approval-rules">
      <h2 id="approval-rules">Approval rules</h2>
      <p class="muted">
        A payment of at least the amount needs that many approvals from owners and admins other than its
        maker; the highest rule it meets applies.
      </p>
      <Table
        caption="Approval rules"
        columns={columns}
        rows={props.approvalRules}
        empty={<EmptyState title="No approval rules">Every payment is approved when it is made.</EmptyState>}
      />
      {canAdminister(shell.book.role) && (
        <Form
          action={bookPath(shell.book.id, 'payments-out/rules/approval')}
          csrf={shell.csrfToken}
          form={form}
          label="Add an approval rule"
        >
          <div class="row">
            <Field name="min_amount" label="From amount" form={form} required maxLength={40} />
            <Field name="currency" label="Currency" form={form} required maxLength={12} />
            <Field
              name="required_approvals"
              label="Approvals needed (1–5)"
              type="number"
              form={form}
              required
            />
          </div>
          <button type="submit">Add the approval rule</button>
        </Form>
      )}
    </section>
  );
}

function PolicyRules(props: RulesPageProps) {
  const { shell } = props;
  const form = props.policyForm;
  const columns: Column<PolicyRuleView>[] = [
    { header: 'Rule', cell: (rule) => POLICY_LABELS[rule.kind] ?? rule.kind },
    { header: 'Limit', cell: policyLimit },
    { header: 'Added', cell: (rule) => <DateTime at={rule.created_at} /> },
    ...removeColumn<PolicyRuleView>(shell, 'policy', 'policy rule'),
  ];
  return (
    <section class="card" aria-labelledby="policy-rules">
      <h2 id="policy-rules">Policy rules</h2>
      <p class="muted">A payment that breaks one is blocked before it leaves, with the rule's reason.</p>
      <Table
        caption="Policy rules"
        columns={columns}
        rows={props.policyRules}
        empty={<EmptyState title="No policy rules">No limit stops a payment.</EmptyState>}
      />
      {canAdminister(shell.book.role) && (
        <Form
          action={bookPath(shell.book.id, 'payments-out/rules/policy')}
          csrf={shell.csrfToken}
          form={form}
          label="Add a policy rule"
        >
          <Select name="kind" label="Kind" options={Object.entries(POLICY_LABELS)} form={form} />
          <div class="row">
            <Field
              name="amount"
              label="Amount"
              form={form}
              maxLength={40}
              hint="Most per payment or per day."
            />
            <Field
              name="currency"
              label="Currency"
              form={form}
              maxLength={12}
              hint="Of the amount; the book's base currency if empty."
            />
          </div>
          <Field name="destination" label="Blocked destination" form={form} maxLength={128} />
          <Field
            name="currencies"
            label="Allowed currencies"
            form={form}
            maxLength={600}
            hint="Comma separated, e.g. USD, EUR, USDC."
          />
          <button type="submit">Add the policy rule</button>
        </Form>
      )}
    </section>
  );
}

export function RulesPage(props: RulesPageProps) {
  const { shell } = props;
  return (
    <Layout shell={shell} title="Payment rules">
      <h1>Payments out</h1>
      <SubNav shell={shell} current="payments-out/rules" />
      {props.refused && <Notice kind="error">{props.refused}</Notice>}
      {!canAdminister(shell.book.role) && (
        <p class="muted">Owners and admins add and remove rules; you can read them.</p>
      )}
      <ApprovalRules {...props} />
      <PolicyRules {...props} />
    </Layout>
  );
}

export type ScreeningPageProps = {
  shell: BookShell;
  status: {
    loaded: boolean;
    published_on: string | null;
    entries: number;
    loaded_at: string | null;
    source: string | null;
    checked_at: string | null;
    check_outcome: string | null;
    stale: boolean;
  };
  held: PaymentView[];
  inbound: InboundFlag[];
};

/** The current list: where it came from, its date and size, when its source was last asked. */
function ListFigures({ status }: { status: ScreeningPageProps['status'] }) {
  return (
    <>
      {status.stale && (
        <Notice kind="warn">
          <span data-field="stale">
            The list was published more than 7 days ago{status.published_on ? '' : ' (or carries no date)'}:
            names added since are not screened. Check the refresh (SCREENING_LIST_URL) or load a newer list.
          </span>
        </Notice>
      )}
      <dl class="figures">
        <div>
          <dt>Source</dt>
          <dd class="address" data-field="source">
            {status.source}
          </dd>
        </div>
        <div>
          <dt>Published</dt>
          <dd data-field="published">{status.published_on || 'undated'}</dd>
        </div>
        <div>
          <dt>Entries</dt>
          <dd data-field="entries">{status.entries}</dd>
        </div>
        <div>
          <dt>Loaded</dt>
          <dd>
            <DateTime at={status.loaded_at} />
          </dd>
        </div>
        <div>
          <dt>Last check</dt>
          <dd data-field="checked">
            {status.checked_at ? <DateTime at={status.checked_at} /> : '—'}
            {status.check_outcome && <span class="muted"> ({status.check_outcome})</span>}
          </dd>
        </div>
      </dl>
    </>
  );
}

/** Transfers in from listed senders: booked (the money is there), flagged for the owners. */
function InboundTable({ inbound }: { inbound: InboundFlag[] }) {
  const columns: Column<InboundFlag>[] = [
    { header: 'When', cell: (flag) => <DateTime at={flag.flagged_at} /> },
    { header: 'Account', cell: (flag) => flag.account_name },
    {
      header: 'Amount',
      numeric: true,
      cell: (flag) => <Money amount={flag.amount} currency={flag.currency} />,
    },
    {
      header: 'Listed as',
      cell: (flag) => (
        <span data-field="inbound-listed">
          {flag.listed} <span class="muted">({flag.programs || 'no program'})</span>
        </span>
      ),
    },
    {
      header: 'Sender · transaction',
      cell: (flag) => (
        <span class="address">
          <code>{flag.matched}</code> · <code>{flag.tx_hash}</code>
          {flag.status === 'reversed' && <Pill tone="warn">reorganised away</Pill>}
        </span>
      ),
    },
  ];
  return (
    <section aria-labelledby="inbound">
      <h2 id="inbound">Money in from listed senders</h2>
      <p class="muted">
        A direct transfer from an address on the list is booked (the money is on the chain) and shown here;
        owners are notified. What to do with it (a report, a refund) is the owners' decision.
      </p>
      <Table
        caption="Transfers in from listed senders"
        columns={columns}
        rows={inbound}
        stacked
        empty={<EmptyState title="None">Transfers from listed senders would appear here.</EmptyState>}
      />
    </section>
  );
}

export function ScreeningPage(props: ScreeningPageProps) {
  const { shell, status } = props;
  return (
    <Layout shell={shell} title="Screening">
      <h1>Payments out</h1>
      <SubNav shell={shell} current="payments-out/screening" />
      <section class="card" aria-labelledby="screening-list">
        <h2 id="screening-list">Sanctions list</h2>
        {status.loaded ? (
          <ListFigures status={status} />
        ) : (
          <Notice kind="warn">
            No sanctions list is loaded: payments are not screened. The operator loads OFAC's SDN.XML with{' '}
            <code>tollbook screening load URL|FILE</code> or sets <code>SCREENING_LIST_URL</code>.
          </Notice>
        )}
      </section>
      <section aria-labelledby="held">
        <h2 id="held">Held payments</h2>
        <p class="muted">
          An owner releases a hold with a reason, which is recorded, or rejects the payment.
        </p>
        <Table
          caption="Payments held by screening"
          columns={[
            ...paymentColumns(shell),
            {
              header: '',
              cell: (row) => (
                <a href={bookPath(shell.book.id, `payments-out/${row.id}`)}>Release or reject</a>
              ),
            },
          ]}
          rows={props.held}
          stacked
          empty={<EmptyState title="No payment is held">Payments that match the list wait here.</EmptyState>}
        />
      </section>
      <InboundTable inbound={props.inbound} />
    </Layout>
  );
}

export type TransfersPageProps = {
  shell: BookShell;
  choices: PayoutChoices;
  form?: FormState | undefined;
  /** The transfer just made: its ledger entry. */
  doneEntry?: string | undefined;
};

export function TransfersPage(props: TransfersPageProps) {
  const { shell, form } = props;
  const accounts = props.choices.accounts.map(
    (account) => [account.id, `${account.name} (${account.currency})`] as const,
  );
  return (
    <Layout shell={shell} title="Transfers">
      <h1>Payments out</h1>
      <SubNav shell={shell} current="payments-out/transfers" />
      {props.doneEntry && (
        <Notice kind="ok">
          Transfer booked.{' '}
          <a href={bookPath(shell.book.id, `ledger/${props.doneEntry}`)} data-field="entry">
            Ledger entry
          </a>
        </Notice>
      )}
      <section class="card" aria-labelledby="transfer">
        <h2 id="transfer">Move money between the book's accounts</h2>
        {canAdminister(shell.book.role) ? (
          <Form
            action={bookPath(shell.book.id, 'payments-out/transfers')}
            csrf={shell.csrfToken}
            form={form}
            label="Transfer"
          >
            <div class="row">
              <Select name="from_account_id" label="From account" options={accounts} form={form} />
              <Select
                name="to_account_id"
                label="To account"
                options={accounts}
                form={form}
                value={accounts[1]?.[0]}
              />
            </div>
            <div class="row">
              <Field name="amount" label="Amount sent" form={form} required maxLength={40} />
              <Field
                name="to_amount"
                label="Amount received"
                form={form}
                maxLength={40}
                hint="Needed when the two accounts hold different currencies."
              />
            </div>
            <div class="row">
              <Field name="occurred_on" label="Date" type="date" form={form} hint="Today if empty." />
              <Field name="note" label="Note" form={form} maxLength={500} />
            </div>
            <button type="submit">Transfer</button>
          </Form>
        ) : (
          <p class="muted">Owners and admins move money between the book's accounts.</p>
        )}
        <p class="muted">A transfer is one ledger entry of kind transfer; the Ledger lists them.</p>
      </section>
    </Layout>
  );
}
