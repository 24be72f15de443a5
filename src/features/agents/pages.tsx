import { canAdminister } from '../../core/roles.ts';
import { networkLabel } from '../../platform/chain/networks.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EmptyState,
  Field,
  Form,
  type FormState,
  Money,
  Notice,
  Pill,
  SecretBox,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';
import type { presentCardIntent } from './card-intents.ts';
import { AGENT_PERMS } from './domain.ts';
import type { presentAgent, presentProposal } from './service.ts';

// Agents: issue (perms, fence, accounts), the oat_ token shown once, the list with status moves
// and revoke, and the proposals that wait for a person (approve, reject with a reason).

export type AgentView = ReturnType<typeof presentAgent>;
export type ProposalView = ReturnType<typeof presentProposal>;
export type CardIntentView = ReturnType<typeof presentCardIntent>;
export type IssuedAgent = { name: string; token: string; wallet_address: string };

type BookShell = Shell & { book: ShellBook };

const HOST_SLOTS = 3;
const MERCHANT_SLOTS = 3;

function PermPicker({ form }: { form: FormState }) {
  const chosen = Array.isArray(form.values.perms) ? (form.values.perms as string[]) : ['transactions'];
  const error = form.errors.perms;
  return (
    <fieldset class="field">
      <legend>Perms</legend>
      {AGENT_PERMS.map((perm) => (
        <label>
          <input type="checkbox" name="perms" value={perm} checked={chosen.includes(perm)} /> {perm}
        </label>
      ))}
      <span class="hint">
        What the agent may ask to do. Everything it does waits for you while it observes.
      </span>
      {error && <span class="error">{error}</span>}
    </fieldset>
  );
}

function ListSlots(props: { name: string; label: string; count: number; form: FormState; hint: string }) {
  const given = (props.form.values as { fence?: Record<string, unknown> }).fence?.[
    props.name.split('.')[1] ?? ''
  ];
  const values = Array.isArray(given) ? (given as string[]) : [];
  const error = props.form.errors[props.name];
  return (
    <fieldset class="field">
      <legend>{props.label}</legend>
      {Array.from({ length: props.count }, (_, index) => (
        <label>
          <span class="muted">
            {props.label} {index + 1}
          </span>
          <input name={props.name} value={values[index] ?? ''} maxLength={253} />
        </label>
      ))}
      <span class="hint">{props.hint}</span>
      {error && <span class="error">{error}</span>}
    </fieldset>
  );
}

function IssueForm({ shell, form }: { shell: BookShell; form: FormState }) {
  return (
    <div class="card">
      <h2>Issue an agent</h2>
      <Form
        action={bookPath(shell.book.id, 'agents')}
        csrf={shell.csrfToken}
        form={form}
        label="Issue an agent"
      >
        <Field
          name="name"
          label="Name"
          form={form}
          hint="What the agent is, e.g. “expenses bot”."
          required
          maxLength={120}
        />
        <PermPicker form={form} />
        <div class="row">
          <Field
            name="fence.per_request_usd"
            label="Per request (USD)"
            form={form}
            hint="The most one write may spend."
            required
          />
          <Field
            name="fence.daily_usd"
            label="Per day (USD)"
            form={form}
            hint="The most it may spend in a UTC day."
            required
          />
          <Field
            name="fence.expires_at"
            label="Fence ends (optional)"
            form={form}
            hint="ISO date-time, e.g. 2027-01-01T00:00:00Z."
          />
        </div>
        <div class="row">
          <ListSlots
            name="fence.x402_hosts"
            label="x402 host"
            count={HOST_SLOTS}
            form={form}
            hint="Hosts it may pay with x402."
          />
          <ListSlots
            name="fence.allowed_merchants"
            label="Merchant"
            count={MERCHANT_SLOTS}
            form={form}
            hint="Payees it may pay without you."
          />
        </div>
        <button type="submit">Issue the agent</button>
      </Form>
    </div>
  );
}

function statusTone(status: string) {
  return status === 'active' ? 'ok' : status === 'observing' ? 'warn' : 'bad';
}

/** The status moves an administrator may make from here (DECISIONS "Agents"). */
function moves(agent: AgentView): [string, string][] {
  if (agent.revoked_at !== null) return [];
  if (agent.status === 'observing')
    return [
      ['active', 'Make active'],
      ['frozen', 'Freeze'],
    ];
  if (agent.status === 'active') return [['frozen', 'Freeze']];
  return [['observing', 'Unfreeze (observe)']];
}

function agentColumns(shell: BookShell): Column<AgentView>[] {
  const columns: Column<AgentView>[] = [
    { header: 'Name', cell: (agent) => agent.name },
    { header: 'Token', cell: (agent) => <code>{agent.prefix}…</code> },
    {
      header: 'Status',
      cell: (agent) =>
        agent.revoked_at ? (
          <Pill tone="bad">revoked</Pill>
        ) : (
          <Pill tone={statusTone(agent.status)}>{agent.status}</Pill>
        ),
    },
    { header: 'Perms', cell: (agent) => agent.perms.join(', ') || '—' },
    {
      header: 'Fence',
      cell: (agent) => (
        <span>
          <Money amount={agent.fence.per_request_usd} currency="USD" /> a request,{' '}
          <Money amount={agent.fence.daily_usd} currency="USD" /> a day
        </span>
      ),
    },
    { header: 'Wallet (fund it)', cell: (agent) => <code>{agent.wallet_address}</code> },
  ];
  if (!canAdminister(shell.book.role)) return columns;
  columns.push({
    header: '',
    cell: (agent) => (
      <span class="actions">
        {moves(agent).map(([status, label]) => (
          <ActionButton
            action={bookPath(shell.book.id, `agents/${agent.id}/status`)}
            csrf={shell.csrfToken}
            label={label}
            fields={{ status }}
            tone={status === 'frozen' ? 'danger' : 'secondary'}
          />
        ))}
        {agent.revoked_at === null && (
          <ActionButton
            action={bookPath(shell.book.id, `agents/${agent.id}/revoke`)}
            csrf={shell.csrfToken}
            label="Revoke"
            tone="danger"
            confirm={`Revoke ${agent.name}? Its token stops working at once.`}
          />
        )}
      </span>
    ),
  });
  return columns;
}

/** What a proposal asks, in one line a person reads. */
function describe(proposal: ProposalView) {
  const input = proposal.input as Record<string, unknown>;
  const amount =
    typeof input.amount === 'string' || typeof input.amount === 'number' ? String(input.amount) : null;
  const currency =
    typeof input.currency === 'string' ? input.currency : typeof input.asset === 'string' ? input.asset : '';
  const payee = typeof input.payee === 'string' && input.payee ? input.payee : text(input.destination);
  const url = text(input.url);
  // An x402 proposal shows the quote it was made for: an approval pays only that quote.
  const quoted = text(input.quoted);
  const payTo = text(input.pay_to);
  const network = text(input.network);
  return (
    <span>
      {proposal.kind.replace('_', ' ')}
      {amount !== null && (
        <>
          {' '}
          <Money amount={amount} currency={currency} />
        </>
      )}
      {quoted && (
        <>
          {' '}
          <Money amount={quoted} currency={currency} />
          {network && <> on {networkLabel(network)}</>}
        </>
      )}
      {payTo && (
        <>
          {' '}
          to <code>{payTo}</code>
        </>
      )}
      {payee && <> to {payee}</>}
      {url && (
        <>
          {' '}
          <code>{url}</code>
        </>
      )}
    </span>
  );
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** Why a proposal waits, and what went wrong when a person last tried to approve it. */
function whyItWaits(proposal: ProposalView) {
  const failure = proposal.result as { error?: unknown; detail?: unknown } | null;
  return (
    <span>
      {proposal.message}
      {failure && typeof failure.error === 'string' && (
        <span class="failure">Approving failed: {text(failure.detail) || failure.error}</span>
      )}
    </span>
  );
}

function ProposalActions({
  shell,
  proposal,
  form,
}: {
  shell: BookShell;
  proposal: ProposalView;
  form: FormState;
}) {
  const path = bookPath(shell.book.id, `agents/proposals/${proposal.id}`);
  const mine = form.values.proposal_id === proposal.id;
  return (
    <div class="actions">
      <ActionButton action={`${path}/approve`} csrf={shell.csrfToken} label="Approve" />
      <Form action={`${path}/reject`} csrf={shell.csrfToken} form={mine ? form : undefined} label="Reject">
        <input type="hidden" name="proposal_id" value={proposal.id} />
        <Field
          name="reason"
          label="Reason to reject"
          form={mine ? form : undefined}
          maxLength={500}
          required
        />
        <button type="submit" class="secondary">
          Reject
        </button>
      </Form>
    </div>
  );
}

function proposalColumns(shell: BookShell, form: FormState): Column<ProposalView>[] {
  const columns: Column<ProposalView>[] = [
    { header: 'Asked', cell: (proposal) => <DateTime at={proposal.created_at} /> },
    { header: 'Agent', cell: (proposal) => proposal.agent_name },
    { header: 'What', cell: describe },
    { header: 'Why it waits', cell: whyItWaits },
  ];
  if (canAdminister(shell.book.role)) {
    columns.push({
      header: '',
      cell: (proposal) => <ProposalActions shell={shell} proposal={proposal} form={form} />,
    });
  }
  return columns;
}

function intentColumns(agents: AgentView[]): Column<CardIntentView>[] {
  const nameOf = (id: string) => agents.find((agent) => agent.id === id)?.name ?? '—';
  return [
    { header: 'Declared', cell: (intent) => <DateTime at={intent.created_at} /> },
    { header: 'Agent', cell: (intent) => nameOf(intent.agent_id) },
    { header: 'Merchant', cell: (intent) => intent.merchant },
    { header: 'Purpose', cell: (intent) => intent.purpose },
    {
      header: 'Ceiling',
      cell: (intent) => <Money amount={intent.ceiling_usd} currency="USD" />,
      numeric: true,
    },
    {
      header: 'Status',
      cell: (intent) => (
        <Pill tone={intent.status === 'open' ? 'warn' : intent.status === 'matched' ? 'ok' : 'bad'}>
          {intent.status}
        </Pill>
      ),
    },
  ];
}

export function AgentsPage(props: {
  shell: BookShell;
  agents: AgentView[];
  proposals: ProposalView[];
  intents: CardIntentView[];
  form: FormState;
  decisionForm?: FormState;
  issued?: IssuedAgent;
}) {
  const { shell, agents, proposals, form, issued } = props;
  const decisionForm = props.decisionForm ?? { values: {}, errors: {} };
  const admin = canAdminister(shell.book.role);
  return (
    <Layout shell={shell} title="Agents">
      <h1>Agents</h1>
      {issued && (
        <>
          <Notice kind="ok">
            Agent “{issued.name}” issued. It observes until you make it active. Fund its wallet{' '}
            <code>{issued.wallet_address}</code> to let it pay.
          </Notice>
          <SecretBox id="issued-agent-token" label="Agent token (shown once)" value={issued.token} />
        </>
      )}
      {decisionForm.sentence && decisionForm.values.proposal_id === undefined && (
        <Notice kind="error">{decisionForm.sentence}</Notice>
      )}
      <h2>Proposals waiting for a person</h2>
      <Table
        caption="Proposals"
        columns={proposalColumns(shell, decisionForm)}
        rows={proposals}
        empty={
          <EmptyState title="Nothing waits">
            <p>Writes an agent may not make alone wait here for an owner or admin.</p>
          </EmptyState>
        }
      />
      <h2>Agents</h2>
      <Table
        caption="Agents"
        columns={agentColumns(shell)}
        rows={agents}
        empty={
          <EmptyState title="No agents yet">
            <p>Issue an agent to let an automated assistant book rows and propose payments inside a fence.</p>
          </EmptyState>
        }
      />
      <h2>Card intents</h2>
      <Table
        caption="Card intents"
        columns={intentColumns(agents)}
        rows={props.intents}
        empty={
          <EmptyState title="No card intents">
            <p>An agent with the cards perm declares a card payment here before its card pays.</p>
          </EmptyState>
        }
      />
      {admin ? (
        <IssueForm shell={shell} form={form} />
      ) : (
        <p class="muted">Owners and admins issue agents and decide their proposals.</p>
      )}
    </Layout>
  );
}
