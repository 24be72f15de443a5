import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '../../platform/http/schema-kit.ts';
import { type TypedApp, typedRoutes } from '../../platform/http/typed.ts';
import { EMPTY_FORM, type FormState } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { AgentsPage, type IssuedAgent } from './pages.tsx';
import { AgentIssue, AgentStatusIn, RejectIn } from './schemas.ts';
import * as service from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const AgentPageParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  aid: Type.String({ format: 'uuid' }),
});
const ProposalPageParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  pid: Type.String({ format: 'uuid' }),
});
const RejectForm = Type.Object({ ...RejectIn.properties, proposal_id: Type.Optional(Type.String()) });

type Render = (
  request: FastifyRequest,
  forms: { issue?: FormState; decision?: FormState },
  issued?: IssuedAgent,
) => Promise<ReturnType<typeof AgentsPage>>;

function renderer(deps: service.AgentsDeps): Render {
  return async (request, forms, issued) => {
    const shell = shellOf(request);
    const [agents, proposals, intents] = await Promise.all([
      service.listAgents(deps, shell.user.id, shell.book.id),
      service.listProposals(deps, shell.user.id, shell.book.id, 'pending'),
      service.listCardIntents(deps, shell.user.id, shell.book.id),
    ]);
    return AgentsPage({
      shell,
      agents,
      proposals,
      intents,
      form: forms.issue ?? EMPTY_FORM,
      ...(forms.decision ? { decisionForm: forms.decision } : {}),
      ...(issued ? { issued } : {}),
    });
  };
}

function registerProposalPages(scope: TypedApp, deps: service.AgentsDeps, render: Render) {
  const path = '/app/books/:book_id/agents/proposals/:pid';
  scope.post(
    `${path}/approve`,
    { schema: { hide: true, params: ProposalPageParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, () =>
        service.approveProposal(deps, shell.user.id, shell.book.id, request.params.pid),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'agents'));
      return sendPage(reply, await render(request, { decision: outcome.form }), outcome.status);
    },
  );
  scope.post(
    `${path}/reject`,
    formRoute({ params: ProposalPageParams, body: RejectForm }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { pid } = request.params;
      const outcome = await runForm(request, ({ body }) =>
        service.rejectProposal(deps, shell.user.id, shell.book.id, pid, body.reason),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'agents'));
      const form = { ...outcome.form, values: { ...outcome.form.values, proposal_id: pid } };
      return sendPage(reply, await render(request, { decision: form }), outcome.status);
    },
  );
}

export function registerAgentPages(server: FastifyInstance, deps: service.AgentsDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/agents';
  const render = renderer(deps);
  scope.get(path, { schema: { hide: true, params: BookParams } }, async (request, reply) =>
    sendPage(reply, await render(request, {})),
  );
  scope.post(
    path,
    formRoute(
      { params: BookParams, body: AgentIssue },
      { form: { arrays: ['perms', 'fence.x402_hosts', 'fence.allowed_merchants'] } },
    ),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        service.issueAgent(deps, shell.user.id, shell.book.id, body),
      );
      if (!outcome.ok) return sendPage(reply, await render(request, { issue: outcome.form }), outcome.status);
      // The token exists only in this answer: rendered here, never kept for a GET.
      const issued = {
        name: outcome.value.name,
        token: outcome.value.token,
        wallet_address: outcome.value.wallet_address,
      };
      return sendPage(reply, await render(request, {}, issued), 201);
    },
  );
  scope.post(
    `${path}/:aid/status`,
    formRoute({ params: AgentPageParams, body: AgentStatusIn }),
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, ({ body }) =>
        service.setAgentStatus(deps, shell.user.id, shell.book.id, request.params.aid, body.status),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'agents'));
      return sendPage(reply, await render(request, { decision: outcome.form }), outcome.status);
    },
  );
  scope.post(
    `${path}/:aid/revoke`,
    { schema: { hide: true, params: AgentPageParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, () =>
        service.revokeAgent(deps, shell.user.id, shell.book.id, request.params.aid),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'agents'));
      return sendPage(reply, await render(request, { decision: outcome.form }), outcome.status);
    },
  );
  registerProposalPages(scope, deps, render);
}
