import { canAdminister } from '../../core/roles.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EmptyState,
  Filters,
  Form,
  type FormState,
  hrefWith,
  Money,
  Notice,
  Pill,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import { HTTP_METHODS } from './domain.ts';

// The Endpoints screen (a card per resource) and the Income screen (a row per endpoint per day,
// expanding to its payments). Components take plain data from the resources service.

type BookShell = Shell & { book: ShellBook };

export type EndpointCard = {
  id: string;
  address: string;
  name: string;
  findable: boolean;
  description: string;
  http_method: string | null;
  input_schema: Record<string, unknown> | null;
  input_example: Record<string, unknown> | null;
  output_schema: Record<string, unknown> | null;
  output_example: Record<string, unknown> | null;
  call_count: number;
  last_payment_at: string | null;
  payers_per_day: { date: string; payers: number }[];
};

/** The JSON fields of the bazaar form, each a JSON object typed as text. */
const JSON_FIELDS = [
  ['input_schema', 'Input schema (JSON Schema)'],
  ['input_example', 'Input example'],
  ['output_schema', 'Output schema (JSON Schema)'],
  ['output_example', 'Output example'],
] as const;

/** The card's description for x402 clients (the bazaar form), edited by owners and admins. */
function BazaarForm({ shell, card, form }: { shell: BookShell; card: EndpointCard; form?: FormState }) {
  const sent = form?.values ?? {};
  const text = (name: (typeof JSON_FIELDS)[number][0]) =>
    sent[name] !== undefined ? String(sent[name]) : card[name] ? JSON.stringify(card[name], null, 2) : '';
  const method = sent.http_method !== undefined ? String(sent.http_method) : (card.http_method ?? '');
  const id = (name: string) => `bazaar-${card.id}-${name}`;
  return (
    <details class="bazaar" open={form !== undefined}>
      <summary>Describe for x402 clients</summary>
      <Form
        action={bookPath(shell.book.id, `endpoints/${card.id}/bazaar`)}
        csrf={shell.csrfToken}
        form={form}
      >
        <div class="field">
          <label for={id('description')}>Description</label>
          <textarea id={id('description')} name="description" maxLength={1000} rows={2}>
            {sent.description !== undefined ? String(sent.description) : card.description}
          </textarea>
        </div>
        <div class="field">
          <label for={id('http_method')}>HTTP method</label>
          <select id={id('http_method')} name="http_method">
            <option value="" selected={method === ''}>
              Not described
            </option>
            {HTTP_METHODS.map((name) => (
              <option value={name} selected={method === name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        {JSON_FIELDS.map(([name, label]) => (
          <div class="field">
            <label for={id(name)}>{label}</label>
            <textarea id={id(name)} name={name} maxLength={20000} rows={4} class="code">
              {text(name)}
            </textarea>
            {form?.errors[name] && <span class="error">{form.errors[name]}</span>}
          </div>
        ))}
        <button type="submit">Save the description</button>
      </Form>
    </details>
  );
}

const CHART_WIDTH = 240;
const CHART_HEIGHT = 48;

/** Payers per day for 30 days as bars: an inline SVG, no script, with a text summary for readers. */
export function PayersChart({ days }: { days: { date: string; payers: number }[] }) {
  const most = Math.max(1, ...days.map((day) => day.payers));
  const slot = CHART_WIDTH / Math.max(1, days.length);
  const total = days.reduce((sum, day) => sum + day.payers, 0);
  const first = days[0]?.date ?? '';
  const last = days.at(-1)?.date ?? '';
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${CHART_WIDTH} ${CHART_HEIGHT}`}
      role="img"
      aria-label={`Payers per day from ${first} to ${last}: ${total} in all, at most ${most === 1 && total === 0 ? 0 : most} a day`}
    >
      <line x1="0" y1={CHART_HEIGHT - 0.5} x2={CHART_WIDTH} y2={CHART_HEIGHT - 0.5} class="axis" />
      {days.map((day, index) => {
        const height = day.payers === 0 ? 0 : Math.max(2, (day.payers / most) * (CHART_HEIGHT - 4));
        return (
          <rect
            x={index * slot + 1}
            y={CHART_HEIGHT - 1 - height}
            width={Math.max(1, slot - 2)}
            height={height}
            data-date={day.date}
            data-payers={day.payers}
          >
            <title>{`${day.date}: ${day.payers} payer${day.payers === 1 ? '' : 's'}`}</title>
          </rect>
        );
      })}
    </svg>
  );
}

function Card({ shell, card, form }: { shell: BookShell; card: EndpointCard; form?: FormState }) {
  const admin = canAdminister(shell.book.role);
  return (
    <article class="card endpoint" id={`endpoint-${card.id}`} aria-labelledby={`endpoint-${card.id}-name`}>
      <h2 id={`endpoint-${card.id}-name`}>{card.name || 'Endpoint'}</h2>
      <p>
        <code class="address">{card.address}</code>
      </p>
      <dl class="figures">
        <div>
          <dt>Calls</dt>
          <dd data-field="calls">{card.call_count}</dd>
        </div>
        <div>
          <dt>Last payment</dt>
          <dd data-field="last-payment">
            <DateTime at={card.last_payment_at} />
          </dd>
        </div>
        <div>
          <dt>Findable</dt>
          <dd data-field="findable">{card.findable ? 'Yes' : 'No'}</dd>
        </div>
        <div>
          <dt>Method</dt>
          <dd data-field="method">{card.http_method ?? '—'}</dd>
        </div>
      </dl>
      {card.description && <p data-field="description">{card.description}</p>}
      <p class="muted">Payers per day, last 30 days</p>
      <PayersChart days={card.payers_per_day} />
      <p class="actions">
        <a href={hrefWith(bookPath(shell.book.id, 'income'), { ref: card.id })}>Income of this endpoint</a>
        {admin && (
          <ActionButton
            action={bookPath(shell.book.id, `endpoints/${card.id}/findable`)}
            csrf={shell.csrfToken}
            label={card.findable ? 'Make unfindable' : 'Make findable'}
            fields={{ findable: card.findable ? 'false' : 'true' }}
          />
        )}
      </p>
      {admin && <BazaarForm shell={shell} card={card} form={form} />}
    </article>
  );
}

export function EndpointsPage(props: {
  shell: BookShell;
  page: { items: EndpointCard[]; next_cursor: string | null };
  cursor: string | undefined;
  form?: FormState;
  /** The card whose bazaar form was sent and refused: it opens with what was sent. */
  bazaarOf?: string;
}) {
  const { shell, page, form } = props;
  const cards = page.items;
  const path = bookPath(shell.book.id, 'endpoints');
  return (
    <Layout shell={shell} title="Endpoints">
      <h1>Endpoints</h1>
      <p class="muted">
        One card per address you charge for. Findable cards are listed, by address, name and the description
        you give x402 clients (never volumes or prices), in the public x402 discovery list.
      </p>
      {form?.sentence && props.bazaarOf === undefined && <Notice kind="error">{form.sentence}</Notice>}
      {cards.length === 0 ? (
        <EmptyState title="No endpoints yet">
          <p>
            Mint a payment request or a charge with a <code>resource</code> (the address you charge for): its
            card appears here with the first payment.
          </p>
        </EmptyState>
      ) : (
        <div class="cards">
          {cards.map((card) => (
            <Card shell={shell} card={card} form={props.bazaarOf === card.id ? form : undefined} />
          ))}
        </div>
      )}
      {(page.next_cursor || props.cursor) && (
        <nav class="pager" aria-label="Pages">
          <span>{props.cursor && <a href={path}>← First page</a>}</span>
          <span>
            {page.next_cursor && <a href={hrefWith(path, { cursor: page.next_cursor })}>Next page →</a>}
          </span>
        </nav>
      )}
    </Layout>
  );
}

export type IncomeRow = {
  ref: string;
  resource_id: string | null;
  label: string;
  address: string | null;
  day: string;
  currency: string;
  amount: string;
  entries: number;
  /** Payments on the row from senders on the sanctions list (booked, and flagged). */
  listed_senders: number;
};

export type IncomePayment = {
  entry_id: string;
  amount: string;
  payer: string;
  origin: string;
  cause_type: string;
  memo: string;
  reverses_entry_id: string | null;
  created_at: string;
  listed_sender: { listed: string; programs: string } | null;
  /** The payment's signed x402 receipt, when it has one (downloadable). */
  receipt_id: string | null;
};

function paymentsHref(shell: BookShell, row: { ref: string; day: string; currency: string }) {
  return hrefWith(bookPath(shell.book.id, 'income/payments'), {
    ref: row.ref,
    day: row.day,
    currency: row.currency,
  });
}

/** Each payment of an income row with its payer and a link to its ledger entry. */
export function PaymentsTable(props: {
  shell: BookShell;
  currency: string;
  payments: IncomePayment[];
  nextHref: string | null;
}) {
  const { shell, currency } = props;
  const columns: Column<IncomePayment>[] = [
    { header: 'When', cell: (payment) => <DateTime at={payment.created_at} /> },
    {
      header: 'Payer',
      cell: (payment) =>
        payment.reverses_entry_id ? (
          <span class="pill bad">Reversed</span>
        ) : (
          <>
            <span class="address">{payment.payer || '—'}</span>
            {payment.listed_sender && (
              <div data-field="listed-sender">
                <Pill tone="bad">Listed sender</Pill> {payment.listed_sender.listed} (
                {payment.listed_sender.programs})
              </div>
            )}
          </>
        ),
    },
    { header: 'How', cell: (payment) => payment.origin },
    {
      header: 'Amount',
      numeric: true,
      cell: (payment) => <Money amount={payment.amount} currency={currency} />,
    },
    {
      header: 'Entry',
      cell: (payment) => (
        <>
          <a href={bookPath(shell.book.id, `ledger/${payment.entry_id}`)}>Entry</a>
          {payment.receipt_id && (
            <div data-field="receipt">
              <a href={bookPath(shell.book.id, `income/receipts/${payment.receipt_id}`)} download>
                Receipt
              </a>
            </div>
          )}
        </>
      ),
    },
  ];
  return (
    <Table
      caption="Payments"
      columns={columns}
      rows={props.payments}
      nextHref={props.nextHref}
      empty={<EmptyState title="No payments on this row" />}
    />
  );
}

/** An income row's endpoint, and a mark when payments on it came from listed senders. */
function EndpointCell({ shell, row }: { shell: BookShell; row: IncomeRow }) {
  return (
    <>
      <span title={row.address ?? undefined} class="income-label">
        {row.label}
      </span>
      {row.listed_senders > 0 && (
        <>
          {' '}
          <a href={bookPath(shell.book.id, 'payments-out/screening')} data-field="listed-senders">
            <Pill tone="bad">
              {row.listed_senders === 1 ? 'A listed sender' : `${row.listed_senders} listed senders`}
            </Pill>
          </a>
        </>
      )}
    </>
  );
}

export function IncomePage(props: {
  shell: BookShell;
  rows: IncomeRow[];
  nextHref: string | null;
  firstHref: string | null;
  filter: { ref?: string | undefined; label?: string | undefined };
}) {
  const { shell, rows } = props;
  const columns: Column<IncomeRow>[] = [
    { header: 'Day', cell: (row) => <DateTime at={`${row.day}T00:00:00Z`} dateOnly /> },
    { header: 'Endpoint', cell: (row) => <EndpointCell shell={shell} row={row} /> },
    { header: 'Amount', numeric: true, cell: (row) => <Money amount={row.amount} currency={row.currency} /> },
    {
      header: 'Payments',
      cell: (row) => (
        <details
          class="expand"
          hx-get={paymentsHref(shell, row)}
          hx-trigger="toggle once"
          hx-target="find .payments"
          hx-select=".payments > *"
          hx-swap="innerHTML"
          // The links loaded inside (each payment's Entry) are boosted page loads: they must not
          // inherit this lazy load's target, select and swap.
          hx-disinherit="*"
        >
          <summary>
            {row.entries} {row.entries === 1 ? 'payment' : 'payments'}
          </summary>
          <div class="payments">
            <a href={paymentsHref(shell, row)}>Show each payment and its payer</a>
          </div>
        </details>
      ),
    },
  ];
  const base = bookPath(shell.book.id, 'income');
  return (
    <Layout shell={shell} title="Income">
      <h1>Income</h1>
      <p class="muted">
        A row per endpoint per day that grows with each payment. A reorganisation or an undone batch shrinks
        it; the reversal shows among its payments.
      </p>
      {props.filter.ref && (
        <Filters
          label="Showing"
          options={[
            { href: base, label: 'All endpoints', current: false },
            {
              href: hrefWith(base, { ref: props.filter.ref }),
              label: props.filter.label ?? 'One endpoint',
              current: true,
            },
          ]}
        />
      )}
      <Table
        caption="Income by day"
        columns={columns}
        rows={rows}
        nextHref={props.nextHref}
        firstHref={props.firstHref}
        empty={
          <EmptyState title="No income yet">
            <p>Payments to your endpoints, charges and pushed income appear here, a row per day.</p>
          </EmptyState>
        }
      />
    </Layout>
  );
}

export function IncomePaymentsPage(props: {
  shell: BookShell;
  row: { ref: string; day: string; currency: string };
  payments: IncomePayment[];
  nextHref: string | null;
}) {
  const { shell, row } = props;
  return (
    <Layout shell={shell} title="Payments">
      <p>
        <a href={hrefWith(bookPath(shell.book.id, 'income'), { ref: row.ref })}>← Income</a>
      </p>
      <h1>
        Payments on {row.day} ({row.currency})
      </h1>
      <div class="payments">
        <PaymentsTable
          shell={shell}
          currency={row.currency}
          payments={props.payments}
          nextHref={props.nextHref}
        />
      </div>
    </Layout>
  );
}
