import { Form, Notice } from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import type { Shell } from '../../platform/web/shell.ts';
import type { InvitationState } from './invitations.ts';

// The page an invitation's link opens, for a signed-in person (others log in or sign up first
// and come back here): what the invitation offers and a Join button, or why it cannot be used.

const WHY_NOT: Record<Exclude<InvitationState, 'live'>, string> = {
  unknown: 'This invitation link is unknown. Check that you opened the whole link from the mail.',
  accepted: 'This invitation was used already; a link works once.',
  revoked: 'This invitation was revoked by the book’s owners.',
  expired: 'This invitation is older than 7 days.',
};

export function InvitationPage(props: {
  shell: Shell;
  token: string;
  invitation: { state: InvitationState; space_name?: string; role?: string; email?: string };
  error?: string | undefined;
}) {
  const { shell, invitation } = props;
  if (invitation.state !== 'live') {
    return (
      <Layout shell={shell} title="Invitation">
        <h1>This invitation cannot be used</h1>
        <Notice kind="warn">{WHY_NOT[invitation.state]}</Notice>
        <p>Ask the person who invited you for a new invitation.</p>
        <p>
          <a href="/app/books">Go to your books</a>
        </p>
      </Layout>
    );
  }
  return (
    <Layout shell={shell} title="Invitation">
      <h1>Join {invitation.space_name}</h1>
      {props.error && <Notice kind="error">{props.error}</Notice>}
      <div class="card">
        <p>
          You are invited to the books of <strong>{invitation.space_name}</strong> as{' '}
          <strong>{invitation.role}</strong>. The invitation was sent to {invitation.email}; you join as{' '}
          {shell.user.email}.
        </p>
        <Form action="/app/invitation" csrf={shell.csrfToken} label="Accept the invitation">
          <input type="hidden" name="token" value={props.token} />
          <button type="submit">Join {invitation.space_name}</button>
        </Form>
      </div>
    </Layout>
  );
}
