import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, viewerShellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { InvitationPage } from './invitation-pages.tsx';
import { acceptInvitation, type InvitationDeps, invitationState } from './invitations.ts';
import { InvitationAccept } from './schemas.ts';

// The invitation link's page: a signed-in person sees the offer and joins with one button; a
// person without a session is sent to log in (or sign up, from there) and comes back here.

const TokenQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 200 })) });

const REFUSED_STATUS = { unknown: 404, accepted: 410, revoked: 410, expired: 410 } as const;

/** The link's token is in the address: no Referer, so it never reaches another origin. */
const noReferrer = async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
  reply.header('referrer-policy', 'no-referrer');
  return payload;
};

export function registerInvitationPages(server: FastifyInstance, deps: Pick<InvitationDeps, 'db' | 'clock'>) {
  const scope = typedRoutes(server);
  scope.get(
    '/app/invitation',
    { schema: { hide: true, querystring: TokenQuery }, onSend: noReferrer },
    async (request, reply) => {
      const shell = viewerShellOf(request);
      const token = request.query.token ?? '';
      const invitation = await invitationState(deps, token);
      const status = invitation.state === 'live' ? 200 : REFUSED_STATUS[invitation.state];
      return sendPage(reply, InvitationPage({ shell, token, invitation }), status);
    },
  );
  scope.post(
    '/app/invitation',
    { ...formRoute({ body: InvitationAccept }), onSend: noReferrer },
    async (request, reply) => {
      const shell = viewerShellOf(request);
      const outcome = await runForm(request, ({ body }) => acceptInvitation(deps, shell.user.id, body.token));
      if (outcome.ok) return seeOther(reply, bookPath(outcome.value.space_id, 'payment-requests'));
      const token = typeof outcome.form.values.token === 'string' ? outcome.form.values.token : '';
      const invitation = await invitationState(deps, token);
      if (invitation.state !== 'live' && outcome.status === 422) {
        return sendPage(
          reply,
          InvitationPage({ shell, token, invitation }),
          REFUSED_STATUS[invitation.state],
        );
      }
      const error = outcome.form.sentence ?? 'The invitation could not be accepted; try again.';
      return sendPage(reply, InvitationPage({ shell, token, invitation, error }), outcome.status);
    },
  );
}
