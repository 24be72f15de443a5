import { canAdminister, type Role } from '../../core/roles.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EMPTY_FORM,
  EmptyState,
  Field,
  Form,
  type FormState,
  hrefWith,
  Pill,
  Select,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell } from '../../platform/web/shell.ts';
import { canSetRole, PLANS, ROLES } from './domain.ts';
import { FormatCard } from './pages-format.tsx';
import { LogoCard, NumberingCard, ProfileCard } from './pages-profile.tsx';
import type { SellerProfile } from './profile.ts';

// Books (spaces): the list and creation, a book's settings (name, plan, rollout switches), and
// its members with their roles.

type Space = {
  id: string;
  name: string;
  time_zone: string;
  locale: string;
  base_currency: string;
  plan: string;
  integration_enabled: boolean;
  payments_enabled: boolean;
  public_handle: string;
  role: Role;
  created_at: string;
};

type Invitation = { id: string; email: string; role: Role; created_at: string; expires_at: string };

type Member = { user_id: string; email: string; name: string; role: Role; created_at: string };

const PLAN_OPTIONS = PLANS.map((plan) => [plan, plan.charAt(0).toUpperCase() + plan.slice(1)] as const);
const ROLE_OPTIONS = ROLES.map((role) => [role, role] as const);

function CreateBookForm({ shell, form }: { shell: Shell; form: FormState }) {
  return (
    <div class="card">
      <h2>New book</h2>
      <Form action="/app/books" csrf={shell.csrfToken} form={form} label="New book">
        <div class="row">
          <Field name="name" label="Name" form={form} required maxLength={120} />
          <Field
            name="base_currency"
            label="Base currency"
            form={form}
            value="USD"
            hint="The currency the books are kept in, e.g. USD, EUR or USDC."
            required
          />
          <Select name="plan" label="Plan" options={PLAN_OPTIONS} form={form} value="free" />
        </div>
        {/* app.js fills in the browser's own time zone; without script the book starts in UTC. */}
        <input type="hidden" name="time_zone" value="" data-browser-time-zone />
        <button type="submit">Create the book</button>
      </Form>
    </div>
  );
}

export function BooksPage(props: {
  shell: Shell;
  page: { items: Space[]; next_cursor: string | null };
  cursor: string | undefined;
  form: FormState;
}) {
  const { shell, page, form } = props;
  const columns: Column<Space>[] = [
    { header: 'Name', cell: (space) => <a href={bookPath(space.id)}>{space.name}</a> },
    { header: 'Base currency', cell: (space) => space.base_currency },
    { header: 'Plan', cell: (space) => space.plan },
    { header: 'Your role', cell: (space) => space.role },
    { header: 'Created', cell: (space) => <DateTime at={space.created_at} /> },
  ];
  return (
    <Layout shell={shell} title="Books">
      <h1>Books</h1>
      <p class="muted">A book holds one business's money: its accounts, keys, clients and records.</p>
      <Table
        caption="Your books"
        columns={columns}
        rows={page.items}
        nextHref={page.next_cursor ? hrefWith('/app/books', { cursor: page.next_cursor }) : null}
        firstHref={props.cursor ? '/app/books' : null}
        empty={
          <EmptyState title="No books yet">
            <p>Create your first book below; then issue a key so your server can ask for payments.</p>
          </EmptyState>
        }
      />
      <CreateBookForm shell={shell} form={form} />
    </Layout>
  );
}

function Switch({ name, label, on, hint }: { name: string; label: string; on: boolean; hint: string }) {
  return (
    <div class="field">
      <label>
        <input type="checkbox" name={name} value="true" checked={on} /> {label}
      </label>
      <span class="hint">{hint}</span>
    </div>
  );
}

function SwitchesCard({ shell, space, admin }: { shell: Shell; space: Space; admin: boolean }) {
  return (
    <div class="card">
      <h2>Rollout switches</h2>
      {admin ? (
        <Form
          action={bookPath(space.id, 'settings/switches')}
          csrf={shell.csrfToken}
          label="Rollout switches"
        >
          <Switch
            name="integration_enabled"
            label="Integration API on"
            on={space.integration_enabled}
            hint="Off: every key of this book is refused until it is switched back on."
          />
          <Switch
            name="payments_enabled"
            label="Payments on"
            on={space.payments_enabled}
            hint="Off: no new payment request or charge is accepted."
          />
          <button type="submit">Save switches</button>
        </Form>
      ) : (
        <p>
          Integration API {space.integration_enabled ? 'on' : 'off'} · payments{' '}
          {space.payments_enabled ? 'on' : 'off'}
        </p>
      )}
    </div>
  );
}

export function SettingsPage(props: {
  shell: Shell & { book: { id: string } };
  space: Space;
  profile: SellerProfile;
  numbering: Parameters<typeof NumberingCard>[0]['numbering'];
  form: FormState;
  /** The state of the seller profile's form, when it was the one posted. */
  profileForm?: FormState;
  /** The state of the numbering form, when it was the one posted. */
  numberingForm?: FormState;
  /** The state of the time zone and locale form, when it was the one posted. */
  formatForm?: FormState;
  /** The book's logo (its public address), and the state of the logo form when it was posted. */
  logo: string | null;
  logoForm?: FormState;
  saved?: string;
}) {
  const { shell, space, form } = props;
  const admin = canAdminister(space.role);
  const owner = space.role === 'owner';
  return (
    <Layout shell={shell} title="Book settings">
      <h1>Book settings</h1>
      {props.saved && (
        <div class="notice ok" role="status">
          {props.saved}
        </div>
      )}
      <div class="card">
        <p>
          Base currency <strong>{space.base_currency}</strong> · public handle{' '}
          <code>{space.public_handle}</code> · your role <Pill>{space.role}</Pill>
        </p>
        {admin ? (
          <Form
            action={bookPath(space.id, 'settings')}
            csrf={shell.csrfToken}
            form={form}
            label="Name and plan"
          >
            <div class="row">
              <Field name="name" label="Name" form={form} value={space.name} required maxLength={120} />
              {owner ? (
                <Select name="plan" label="Plan" options={PLAN_OPTIONS} form={form} value={space.plan} />
              ) : (
                <p>
                  Plan: <strong>{space.plan}</strong> <span class="muted">(only an owner changes it)</span>
                </p>
              )}
            </div>
            <button type="submit">Save</button>
          </Form>
        ) : (
          <p>
            <strong>{space.name}</strong> on the <strong>{space.plan}</strong> plan.
          </p>
        )}
      </div>
      <FormatCard shell={shell} space={space} form={props.formatForm ?? EMPTY_FORM} admin={admin} />
      <SwitchesCard shell={shell} space={space} admin={admin} />
      <ProfileCard
        shell={shell}
        profile={props.profile}
        form={props.profileForm ?? EMPTY_FORM}
        admin={admin}
      />
      <LogoCard
        shell={shell}
        spaceId={space.id}
        logo={props.logo}
        form={props.logoForm ?? EMPTY_FORM}
        admin={admin}
      />
      <NumberingCard
        shell={shell}
        spaceId={space.id}
        numbering={props.numbering}
        form={props.numberingForm ?? EMPTY_FORM}
        admin={admin}
      />
    </Layout>
  );
}

function RoleCell(props: { shell: Shell & { book: { id: string } }; member: Member; admin: boolean }) {
  const { shell, member } = props;
  if (!props.admin || member.user_id === shell.user.id) return <Pill>{member.role}</Pill>;
  return (
    <Form
      action={bookPath(shell.book.id, `members/${member.user_id}`)}
      csrf={shell.csrfToken}
      label={`Role of ${member.email}`}
    >
      <div class="actions">
        <label class="skip" for={`role-${member.user_id}`}>
          Role of {member.email}
        </label>
        <select id={`role-${member.user_id}`} name="role">
          {ROLES.map((role) => (
            <option value={role} selected={role === member.role}>
              {role}
            </option>
          ))}
        </select>
        <button type="submit" class="small secondary">
          Change
        </button>
      </div>
    </Form>
  );
}

/** Invite by email, and the invitations still waiting for an answer (owners and admins). */
function InvitationsCard(props: {
  shell: Shell & { book: { id: string; role: Role } };
  pending: Invitation[];
  form: FormState;
}) {
  const { shell, form } = props;
  const columns: Column<Invitation>[] = [
    { header: 'Email', cell: (invitation) => invitation.email },
    { header: 'Role', cell: (invitation) => <Pill>{invitation.role}</Pill> },
    { header: 'Link works until', cell: (invitation) => <DateTime at={invitation.expires_at} /> },
    {
      header: '',
      cell: (invitation) =>
        canSetRole(shell.book.role, null, invitation.role) ? (
          <ActionButton
            action={bookPath(shell.book.id, `members/invitations/${invitation.id}/revoke`)}
            csrf={shell.csrfToken}
            label="Revoke"
            tone="danger"
            confirm={`Revoke the invitation to ${invitation.email}?`}
          />
        ) : null,
    },
  ];
  return (
    <div class="card">
      <h2>Invite by email</h2>
      <Form
        action={bookPath(shell.book.id, 'members/invite')}
        csrf={shell.csrfToken}
        form={form}
        label="Invite by email"
      >
        <div class="row">
          <Field
            name="email"
            idPrefix="invite"
            label="Their email"
            type="email"
            form={form}
            hint="We mail them a link that works once, for 7 days; they sign up on the way if they are new."
            required
          />
          <Select
            name="role"
            idPrefix="invite"
            label="Role"
            options={ROLE_OPTIONS}
            form={form}
            value="member"
          />
        </div>
        <button type="submit">Send invitation</button>
      </Form>
      <h3>Pending invitations</h3>
      <Table
        caption="Pending invitations"
        columns={columns}
        rows={props.pending}
        stacked
        empty={<EmptyState title="No pending invitations" />}
      />
    </div>
  );
}

export function MembersPage(props: {
  shell: Shell & { book: { id: string; role: Role } };
  page: { items: Member[]; next_cursor: string | null };
  cursor: string | undefined;
  form: FormState;
  /** Pending invitations, or null for a person who may not see them. */
  pending?: Invitation[] | null;
  inviteForm?: FormState;
}) {
  const { shell, page, form } = props;
  const path = bookPath(shell.book.id, 'members');
  const admin = canAdminister(shell.book.role);
  const columns: Column<Member>[] = [
    { header: 'Name', cell: (member) => member.name },
    { header: 'Email', cell: (member) => member.email },
    { header: 'Role', cell: (member) => <RoleCell shell={shell} member={member} admin={admin} /> },
    { header: 'Since', cell: (member) => <DateTime at={member.created_at} dateOnly /> },
  ];
  if (admin) {
    columns.push({
      header: '',
      cell: (member) =>
        member.user_id === shell.user.id ? null : (
          <ActionButton
            action={bookPath(shell.book.id, `members/${member.user_id}/remove`)}
            csrf={shell.csrfToken}
            label="Remove"
            tone="danger"
            confirm={`Remove ${member.email} from this book?`}
          />
        ),
    });
  }
  return (
    <Layout shell={shell} title="Members">
      <h1>Members</h1>
      <p class="muted">Owners and admins manage the book; members work in it; viewers only look.</p>
      <Table
        caption="Members"
        columns={columns}
        rows={page.items}
        nextHref={page.next_cursor ? hrefWith(path, { cursor: page.next_cursor }) : null}
        firstHref={props.cursor ? path : null}
        empty={<EmptyState title="No members" />}
      />
      {admin && props.pending && (
        <InvitationsCard shell={shell} pending={props.pending} form={props.inviteForm ?? EMPTY_FORM} />
      )}
      {admin && (
        <div class="card">
          <h2>Add a member</h2>
          <Form
            action={bookPath(shell.book.id, 'members')}
            csrf={shell.csrfToken}
            form={form}
            label="Add a member"
          >
            <div class="row">
              <Field
                name="email"
                label="Their email"
                type="email"
                form={form}
                hint="They must have signed up already."
                required
              />
              <Select name="role" label="Role" options={ROLE_OPTIONS} form={form} value="member" />
            </div>
            <button type="submit">Add</button>
          </Form>
        </div>
      )}
    </Layout>
  );
}
