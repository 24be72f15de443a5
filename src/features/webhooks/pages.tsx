import { canAdminister } from '../../core/roles.ts';
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
  Notice,
  Pill,
  SecretBox,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import { BOOK_EVENTS } from './domain.ts';

// Connections → Event subscriptions: the book's subscriptions with their actions, the add form
// with an event picker (none = all), secrets shown once, and each subscription's 30-day journal.

type BookShell = Shell & { book: ShellBook };

export type SubscriptionView = {
  id: string;
  url: string;
  events: string[];
  status: string;
  created_at: string;
  paused_at: string | null;
};

export type DeliveryView = {
  id: string;
  event: string;
  status: string;
  attempt: number;
  attempts_max: number;
  response_code: number | null;
  error: string | null;
  created_at: string;
  last_attempt_at: string | null;
};

export type SubscriptionsPageProps = {
  shell: BookShell;
  subscriptions: SubscriptionView[] | null;
  form?: FormState | undefined;
  secret?: { label: string; value: string } | undefined;
  done?: string | undefined;
  problem?: string | undefined;
};

const tone = (status: string) =>
  status === 'active' || status === 'delivered' ? 'ok' : status === 'pending' ? undefined : 'bad';

function actions(shell: BookShell, subscription: SubscriptionView) {
  const path = (action: string) => bookPath(shell.book.id, `subscriptions/${subscription.id}/${action}`);
  return (
    <span class="actions">
      <a href={bookPath(shell.book.id, `subscriptions/${subscription.id}`)}>Journal</a>
      <ActionButton action={path('test')} csrf={shell.csrfToken} label="Send test" />
      <ActionButton
        action={path('rotate')}
        csrf={shell.csrfToken}
        label="New secret"
        confirm="Make a new signing secret? The old one stops working at once."
      />
      {subscription.status === 'paused' && (
        <ActionButton action={path('resume')} csrf={shell.csrfToken} label="Resume" />
      )}
      <ActionButton
        action={path('delete')}
        csrf={shell.csrfToken}
        label="Delete"
        tone="danger"
        confirm={`Delete the subscription to ${subscription.url}?`}
      />
    </span>
  );
}

function AddForm({ shell, form }: { shell: BookShell; form: FormState | undefined }) {
  const chosen = new Set(Array.isArray(form?.values.events) ? (form.values.events as string[]) : []);
  return (
    <div class="card">
      <h2>Add a subscription</h2>
      <Form
        action={bookPath(shell.book.id, 'subscriptions')}
        csrf={shell.csrfToken}
        form={form}
        label="Add a subscription"
      >
        <Field
          name="url"
          label="Address (https)"
          type="url"
          form={form}
          required
          placeholder="https://example.com/hooks/tollbook"
        />
        <fieldset class="field">
          <legend>Events</legend>
          <span class="hint">Pick none to receive every event, including ones added later.</span>
          {BOOK_EVENTS.map((event) => (
            <label>
              <input type="checkbox" name="events" value={event} checked={chosen.has(event)} /> {event}
            </label>
          ))}
        </fieldset>
        <button type="submit">Add</button>
      </Form>
    </div>
  );
}

export function SubscriptionsPage(props: SubscriptionsPageProps) {
  const { shell, subscriptions } = props;
  const columns: Column<SubscriptionView>[] = [
    { header: 'Address', cell: (row) => <code class="address">{row.url}</code> },
    { header: 'Events', cell: (row) => (row.events.length === 0 ? 'All events' : row.events.join(', ')) },
    { header: 'Status', cell: (row) => <Pill tone={tone(row.status)}>{row.status}</Pill> },
    { header: 'Added', cell: (row) => <DateTime at={row.created_at} /> },
    { header: '', cell: (row) => actions(shell, row) },
  ];
  return (
    <Layout shell={shell} title="Connections">
      <h1>Connections → Event subscriptions</h1>
      <p class="muted">
        Signed webhooks for the book's events, retried for 30 days; a subscription that keeps failing pauses.
      </p>
      {props.done && <Notice kind="ok">{props.done}</Notice>}
      {props.problem && <Notice kind="error">{props.problem}</Notice>}
      {props.secret && (
        <SecretBox id="subscription-secret" label={props.secret.label} value={props.secret.value} />
      )}
      {subscriptions === null ? (
        <Notice kind="warn">Only owners and admins manage event subscriptions.</Notice>
      ) : (
        <>
          <Table
            caption="Event subscriptions"
            columns={columns}
            rows={subscriptions}
            empty={
              <EmptyState title="No subscriptions yet">
                <p>Add an address below to receive money.in, invoice.paid and the book's other events.</p>
              </EmptyState>
            }
          />
          {canAdminister(shell.book.role) && <AddForm shell={shell} form={props.form} />}
        </>
      )}
    </Layout>
  );
}

export const DELIVERY_STATUSES = ['pending', 'held', 'delivered', 'given_up'] as const;

export type TestSendView = {
  event_id: string;
  sent_at: string;
  response_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
};

export type AttemptView = {
  attempt: number;
  attempted_at: string;
  response_code: number | null;
  error: string | null;
  duration_ms: number | null;
  response_excerpt: string | null;
};

export type DeliveryDetailView = DeliveryView & {
  event_id: string;
  next_attempt_at: string | null;
  payload: string;
  attempts: AttemptView[];
};

/** An answer's status (or the error when none came), as the journal shows it. */
const answerText = (row: { response_code: number | null; error: string | null }) =>
  row.response_code === null ? (row.error ?? '—') : String(row.response_code);

const durationText = (ms: number | null) => (ms === null ? '—' : `${ms} ms`);

function Excerpt({ text }: { text: string | null }) {
  if (text === null) return <span class="muted">No answer</span>;
  if (text === '') return <span class="muted">Empty body</span>;
  return <pre class="payload mono">{text}</pre>;
}

function TestSends({ sends }: { sends: TestSendView[] }) {
  const columns: Column<TestSendView>[] = [
    { header: 'Time', cell: (row) => <DateTime at={row.sent_at} /> },
    {
      header: 'Status',
      cell: (row) => <Pill tone={tone(isOk(row.response_code))}>{answerText(row)}</Pill>,
    },
    { header: 'Duration', numeric: true, cell: (row) => durationText(row.duration_ms) },
    { header: 'Response', cell: (row) => <Excerpt text={row.response_excerpt} /> },
  ];
  return (
    <Table
      caption="Test sends of the last 30 days"
      stacked
      columns={columns}
      rows={sends}
      empty={
        <EmptyState title="No test sends yet">
          Send test on Connections posts a webhook.test event.
        </EmptyState>
      }
    />
  );
}

const isOk = (code: number | null) => (code !== null && code >= 200 && code < 300 ? 'delivered' : 'failed');

export function JournalPage(props: {
  shell: BookShell;
  subscription: SubscriptionView;
  deliveries: DeliveryView[];
  testSends: TestSendView[];
  status: string | undefined;
  nextHref: string | null;
  done?: string | undefined;
  problem?: string | undefined;
}) {
  const { shell, subscription } = props;
  const path = bookPath(shell.book.id, `subscriptions/${subscription.id}`);
  const columns: Column<DeliveryView>[] = [
    { header: 'Time', cell: (row) => <DateTime at={row.last_attempt_at ?? row.created_at} /> },
    { header: 'Event', cell: (row) => <a href={`${path}/deliveries/${row.id}`}>{row.event}</a> },
    { header: 'Status', cell: (row) => <Pill tone={tone(row.status)}>{row.status}</Pill> },
    { header: 'Attempt', numeric: true, cell: (row) => `${row.attempt} of ${row.attempts_max}` },
    { header: 'Response', cell: answerText },
    {
      header: '',
      cell: (row) => (
        <ActionButton action={`${path}/deliveries/${row.id}/retry`} csrf={shell.csrfToken} label="Retry" />
      ),
    },
  ];
  return (
    <Layout shell={shell} title="Journal">
      <p>
        <a href={bookPath(shell.book.id, 'subscriptions')}>← Connections</a>
      </p>
      <h1>Journal</h1>
      <p>
        <code class="address">{subscription.url}</code>{' '}
        <Pill tone={tone(subscription.status)}>{subscription.status}</Pill>
      </p>
      {subscription.status === 'paused' && (
        <div class="notice warn" role="status">
          Paused after failing deliveries: its deliveries are held.{' '}
          <ActionButton action={`${path}/resume`} csrf={shell.csrfToken} label="Resume" />
        </div>
      )}
      {props.done && <Notice kind="ok">{props.done}</Notice>}
      {props.problem && <Notice kind="error">{props.problem}</Notice>}
      <Filters
        label="Status"
        options={[
          { href: path, label: 'All', current: props.status === undefined },
          ...DELIVERY_STATUSES.map((status) => ({
            href: hrefWith(path, { status }),
            label: status,
            current: props.status === status,
          })),
        ]}
      />
      <Table
        caption="Deliveries of the last 30 days"
        columns={columns}
        rows={props.deliveries}
        nextHref={props.nextHref}
        empty={<EmptyState title="No deliveries in the last 30 days" />}
      />
      <h2>Test sends</h2>
      <TestSends sends={props.testSends} />
    </Layout>
  );
}

export function DeliveryPage(props: {
  shell: BookShell;
  subscription: SubscriptionView;
  delivery: DeliveryDetailView;
}) {
  const { shell, subscription, delivery } = props;
  const journal = bookPath(shell.book.id, `subscriptions/${subscription.id}`);
  const columns: Column<AttemptView>[] = [
    { header: 'Attempt', numeric: true, cell: (row) => String(row.attempt) },
    { header: 'Time', cell: (row) => <DateTime at={row.attempted_at} /> },
    {
      header: 'Status',
      cell: (row) => <Pill tone={tone(isOk(row.response_code))}>{answerText(row)}</Pill>,
    },
    { header: 'Duration', numeric: true, cell: (row) => durationText(row.duration_ms) },
    { header: 'Response', cell: (row) => <Excerpt text={row.response_excerpt} /> },
  ];
  return (
    <Layout shell={shell} title="Delivery">
      <p>
        <a href={journal}>← Journal</a>
      </p>
      <h1>{delivery.event}</h1>
      <p>
        <code class="address">{subscription.url}</code>
      </p>
      <dl class="figures">
        <div>
          <dt>Status</dt>
          <dd>
            <Pill tone={tone(delivery.status)}>{delivery.status}</Pill>
          </dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd>{`${delivery.attempt} of ${delivery.attempts_max}`}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <DateTime at={delivery.created_at} />
          </dd>
        </div>
        {delivery.next_attempt_at !== null && (
          <div>
            <dt>Next attempt</dt>
            <dd>
              <DateTime at={delivery.next_attempt_at} />
            </dd>
          </div>
        )}
        <div>
          <dt>Event id</dt>
          <dd>
            <code>{delivery.event_id}</code>
          </dd>
        </div>
      </dl>
      <ActionButton
        action={`${journal}/deliveries/${delivery.id}/retry`}
        csrf={shell.csrfToken}
        label="Retry"
      />
      <h2>Payload</h2>
      <pre class="payload mono card">{delivery.payload}</pre>
      <h2>Attempts</h2>
      <Table
        caption="Attempts"
        stacked
        columns={columns}
        rows={delivery.attempts}
        empty={<EmptyState title="Not attempted yet" />}
      />
    </Layout>
  );
}
