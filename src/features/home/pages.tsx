import { formatEther } from 'viem';
import { type AmountE8, formatAmount } from '../../core/money.ts';
import { networkForPeople, networkLabel } from '../../platform/chain/networks.ts';
import { ActionButton, DateTime, EmptyState, Money, Notice } from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import type { BookShell } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { barHeight, type Checklist, type CurrencySeries, WINDOWS, type WindowDays } from './domain.ts';
import type { Home } from './service.ts';

// Home: what came in, what the book holds, what waits for the viewer and what is wrong, each
// figure a link to the screen that shows it in full.

const WINDOW_LABEL: Record<WindowDays, string> = { 1: 'Today', 7: 'Last 7 days', 30: 'Last 30 days' };

const CHART_WIDTH = 300;
const CHART_HEIGHT = 64;

function amountText(amount: AmountE8 | bigint) {
  return formatAmount(amount as AmountE8);
}

/** One currency's money in per day: bars drawn on the server; the table beside it is for readers. */
function IncomeChart({ series }: { series: CurrencySeries }) {
  let largest = 0n;
  for (const point of series.days) if (point.amount > largest) largest = point.amount;
  const slot = CHART_WIDTH / series.days.length;
  const captionId = `income-${series.currency}-caption`;
  return (
    <figure class="income-chart">
      <svg
        class="chart wide"
        viewBox={`0 0 ${CHART_WIDTH} ${CHART_HEIGHT}`}
        preserveAspectRatio="none"
        aria-hidden="true"
        focusable="false"
      >
        <line x1="0" y1={CHART_HEIGHT - 0.5} x2={CHART_WIDTH} y2={CHART_HEIGHT - 0.5} class="axis" />
        {series.days.map((point, index) => {
          const height = barHeight(point.amount, largest, CHART_HEIGHT - 4);
          return (
            <rect
              x={index * slot + 1}
              y={CHART_HEIGHT - 1 - height}
              width={Math.max(1, slot - 2)}
              height={height}
              data-day={point.day}
            />
          );
        })}
      </svg>
      <figcaption id={captionId} class="muted small">
        Per day, {series.days[0]?.day} to {series.days.at(-1)?.day}
      </figcaption>
      <div class="visually-hidden">
        <table aria-describedby={captionId}>
          <caption>{`Money in per day in ${series.currency}`}</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Amount</th>
            </tr>
          </thead>
          <tbody>
            {series.days.map((point) => (
              <tr>
                <td>{point.day}</td>
                <td>
                  <Money amount={amountText(point.amount)} currency={series.currency} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}

function MoneyIn({ shell, home }: { shell: BookShell; home: Home }) {
  return (
    <section class="card" aria-labelledby="money-in">
      <h2 id="money-in">Money in</h2>
      {home.moneyIn.length === 0 ? (
        <EmptyState title="Nothing received in the last 30 days">
          <p>
            Payments appear here as they arrive.{' '}
            <a href={bookPath(shell.book.id, 'payment-requests')}>Payment requests</a>
          </p>
        </EmptyState>
      ) : (
        home.moneyIn.map((series) => (
          <div class="income-currency" data-currency={series.currency}>
            <dl class="figures">
              {WINDOWS.map((window) => (
                <div>
                  <dt>{WINDOW_LABEL[window]}</dt>
                  <dd data-window={window}>
                    <Money amount={amountText(series.totals[window])} currency={series.currency} />
                  </dd>
                </div>
              ))}
            </dl>
            <IncomeChart series={series} />
          </div>
        ))
      )}
      <p>
        <a href={bookPath(shell.book.id, 'income')}>See income by endpoint and day</a>
      </p>
    </section>
  );
}

function ChecklistCard({ shell, checklist }: { shell: BookShell; checklist: Checklist }) {
  const done = checklist.steps.filter((step) => step.done).length;
  return (
    <section class="card checklist" aria-labelledby="first-steps">
      <h2 id="first-steps">First steps</h2>
      <p class="muted">
        {done} of {checklist.steps.length} done. Each step ticks itself when it happens.
      </p>
      <ol>
        {checklist.steps.map((step) => (
          <li class={step.done ? 'done' : undefined} data-step={step.key}>
            <span class="tick" aria-hidden="true">
              {step.done ? '✓' : '○'}
            </span>{' '}
            {step.done ? (
              <span>
                {step.label} <span class="visually-hidden">(done)</span>
              </span>
            ) : (
              <a href={bookPath(shell.book.id, step.screen)}>{step.label}</a>
            )}
          </li>
        ))}
      </ol>
      <ActionButton
        action={bookPath(shell.book.id, 'home/checklist/dismiss')}
        csrf={shell.csrfToken}
        label="Hide this list"
      />
    </section>
  );
}

/** A gas wallet lane below its threshold: the network by its name, the balance in its coin. */
function LowGasLane({ lane }: { lane: Home['lowGas'][number] }) {
  const network = networkForPeople(lane.network);
  const balance = network.nativeUnit
    ? `${formatEther(lane.wei)} ${network.nativeUnit}`
    : formatEther(lane.wei);
  return (
    <li>
      Gas wallet <code>{lane.address}</code> on {network.label} is low: it holds {balance}, and x402
      settlements it sends may fail.
    </li>
  );
}

function Warnings({ shell, home }: { shell: BookShell; home: Home }) {
  if (home.failing.length === 0 && home.lagging.length === 0 && home.lowGas.length === 0) return null;
  return (
    <Notice kind="warn">
      <ul class="warnings">
        {home.failing.map((subscription) => (
          <li>
            {subscription.paused ? 'Paused after failing: ' : 'Failing: '}
            <a href={bookPath(shell.book.id, `subscriptions/${subscription.id}`)}>{subscription.url}</a>
            {subscription.failingSince && (
              <>
                {' '}
                since <DateTime at={subscription.failingSince} />
              </>
            )}
          </li>
        ))}
        {home.lagging.map((lag) => (
          <li>
            The chain watch for {networkLabel(lag.network)} has not moved since <DateTime at={lag.since} />:
            payments on it are not seen.
          </li>
        ))}
        {home.lowGas.map((lane) => (
          <LowGasLane lane={lane} />
        ))}
      </ul>
    </Notice>
  );
}

function Balances({ shell, home }: { shell: BookShell; home: Home }) {
  return (
    <section class="card" aria-labelledby="balances">
      <h2 id="balances">Balances</h2>
      {home.accounts.items.length === 0 ? (
        <p>
          No accounts yet. <a href={bookPath(shell.book.id, 'accounts')}>Add an account</a>
        </p>
      ) : (
        <ul class="plain">
          {home.accounts.items.map((account) => (
            <li class="figure-row">
              <a href={bookPath(shell.book.id, `accounts/${account.id}`)}>{account.name}</a>
              <Money amount={account.balance} currency={account.currency} />
            </li>
          ))}
        </ul>
      )}
      {home.accounts.more && <a href={bookPath(shell.book.id, 'accounts')}>All accounts</a>}
    </section>
  );
}

function Totals(props: {
  id: string;
  title: string;
  href: string;
  none: string;
  rows: { currency: string; count: number; amount: bigint }[];
  noun: [string, string];
}) {
  return (
    <section class="card" aria-labelledby={props.id}>
      <h2 id={props.id}>
        <a href={props.href}>{props.title}</a>
      </h2>
      {props.rows.length === 0 ? (
        <p class="muted">{props.none}</p>
      ) : (
        <ul class="plain">
          {props.rows.map((row) => (
            <li class="figure-row" data-currency={row.currency}>
              <span>
                {row.count} {row.count === 1 ? props.noun[0] : props.noun[1]}
              </span>
              <Money amount={amountText(row.amount)} currency={row.currency} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Waiting({ shell, home }: { shell: BookShell; home: Home }) {
  const book = shell.book.id;
  return (
    <>
      <section class="card" aria-labelledby="approvals">
        <h2 id="approvals">
          <a href={bookPath(book, 'payments-out?status=awaiting_approval')}>Waiting for your approval</a>
        </h2>
        {home.approvals.items.length === 0 ? (
          <p class="muted">No payment out waits for you.</p>
        ) : (
          <ul class="plain">
            {home.approvals.items.map((payment) => (
              <li class="figure-row">
                <a href={bookPath(book, `payments-out/${payment.id}`)}>{payment.payee || 'Payment'}</a>
                <Money amount={payment.amount} currency={payment.currency} />
              </li>
            ))}
          </ul>
        )}
      </section>
      <section class="card" aria-labelledby="proposals">
        <h2 id="proposals">
          <a href={bookPath(book, 'agents')}>Agent proposals</a>
        </h2>
        {home.proposals.count === 0 ? (
          <p class="muted">No agent proposal is waiting.</p>
        ) : (
          <>
            <p>
              {home.proposals.count} waiting for a person
              {home.proposals.count > home.proposals.items.length
                ? `; the newest ${home.proposals.items.length}:`
                : ':'}
            </p>
            <ul class="plain">
              {home.proposals.items.map((proposal) => (
                <li>
                  <a href={bookPath(book, 'agents')}>{proposal.agent_name}</a>:{' '}
                  {proposal.message || 'a proposal'} <DateTime at={proposal.created_at} />
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
    </>
  );
}

export function HomePage({ shell, home }: { shell: BookShell; home: Home }) {
  const book = shell.book.id;
  return (
    <Layout shell={shell} title="Home">
      <h1>{shell.book.name}</h1>
      <Warnings shell={shell} home={home} />
      {home.checklist && <ChecklistCard shell={shell} checklist={home.checklist} />}
      <MoneyIn shell={shell} home={home} />
      <div class="cards">
        <Balances shell={shell} home={home} />
        <Totals
          id="open-requests"
          title="Open payment requests"
          href={bookPath(book, 'payment-requests?status=active')}
          none="No payment request is open."
          rows={home.openRequests.map((row) => ({
            currency: row.currency,
            count: row.count,
            amount: row.open,
          }))}
          noun={['request', 'requests']}
        />
        <Totals
          id="overdue"
          title="Overdue invoices"
          href={bookPath(book, 'invoices?kind=invoice')}
          none="No invoice is overdue."
          rows={home.overdueInvoices.map((row) => ({
            currency: row.currency,
            count: row.count,
            amount: row.owed,
          }))}
          noun={['invoice', 'invoices']}
        />
        <Waiting shell={shell} home={home} />
      </div>
    </Layout>
  );
}
