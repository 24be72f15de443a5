import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { EMPTY_FORM, type FormState } from '../../platform/web/components.tsx';
import { runForm, seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
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

function registerProposalPages(scope: FastifyInstance, deps: service.AgentsDeps, render: Render) {
  const path = '/app/books/:book_id/agents/proposals/:pid';
  scope.post(
    `${path}/approve`,
    { schema: { hide: true, params: ProposalPageParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { pid } = request.params as Static<typeof ProposalPageParams>;
      const outcome = await runForm(request, () =>
        service.approveProposal(deps, shell.user.id, shell.book.id, pid),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'agents'));
      return sendPage(reply, await render(request, { decision: outcome.form }), outcome.status);
    },
  );
  scope.post(
    `${path}/reject`,
    { schema: { hide: true, params: ProposalPageParams, body: RejectForm }, attachValidation: true },
    async (request, reply) => {
      const shell = shellOf(request);
      const { pid } = request.params as Static<typeof ProposalPageParams>;
      const outcome = await runForm(request, () =>
        service.rejectProposal(
          deps,
          shell.user.id,
          shell.book.id,
          pid,
          (request.body as { reason: string }).reason,
        ),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'agents'));
      const form = { ...outcome.form, values: { ...outcome.form.values, proposal_id: pid } };
      return sendPage(reply, await render(request, { decision: form }), outcome.status);
    },
  );
}

export function registerAgentPages(scope: FastifyInstance, deps: service.AgentsDeps) {
  const path = '/app/books/:book_id/agents';
  const render = renderer(deps);
  scope.get(path, { schema: { hide: true, params: BookParams } }, async (request, reply) =>
    sendPage(reply, await render(request, {})),
  );
  scope.post(
    path,
    {
      schema: { hide: true, params: BookParams, body: AgentIssue },
      attachValidation: true,
      config: { form: { arrays: ['perms', 'fence.x402_hosts', 'fence.allowed_merchants'] } },
    },
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, () =>
        service.issueAgent(deps, shell.user.id, shell.book.id, request.body as service.AgentIssueInput),
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
    { schema: { hide: true, params: AgentPageParams, body: AgentStatusIn }, attachValidation: true },
    async (request, reply) => {
      const shell = shellOf(request);
      const { aid } = request.params as Static<typeof AgentPageParams>;
      const { status } = (request.body ?? {}) as Static<typeof AgentStatusIn>;
      const outcome = await runForm(request, () =>
        service.setAgentStatus(deps, shell.user.id, shell.book.id, aid, status),
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
      const { aid } = request.params as Static<typeof AgentPageParams>;
      const outcome = await runForm(request, () =>
        service.revokeAgent(deps, shell.user.id, shell.book.id, aid),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'agents'));
      return sendPage(reply, await render(request, { decision: outcome.form }), outcome.status);
    },
  );
  registerProposalPages(scope, deps, render);
}
