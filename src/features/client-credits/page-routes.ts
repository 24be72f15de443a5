import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { type Static, Text, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import type { FormState } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { listContactsInApp } from '../contacts/index.ts';
import { ClientCreditPage, ClientCreditsPage } from './pages.tsx';
import { AdjustmentIn, CreditListQuery, NameContactIn } from './routes.ts';
import { adjustCredit, clientDetail, listClientCredits, nameContact, parseSignedAmount } from './service.ts';

type Deps = { db: Db; clock: Clock; publicUrl: string };
const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const CreditParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  client_ref: Text({ minLength: 1, maxLength: 120 }),
});

async function render(
  deps: Deps,
  request: FastifyRequest,
  form?: FormState,
  query: Static<typeof CreditListQuery> = {},
) {
  const shell = shellOf(request);
  const [page, contacts] = await Promise.all([
    listClientCredits(deps, shell.user.id, shell.book.id, query),
    listContactsInApp(deps, shell.user.id, shell.book.id, {}),
  ]);
  return ClientCreditsPage({ shell, page, cursor: query.cursor, contacts: contacts.items, form });
}

async function renderClient(deps: Deps, request: FastifyRequest, clientRef: string, form?: FormState) {
  const shell = shellOf(request);
  const detail = await clientDetail(deps, shell.user.id, shell.book.id, clientRef);
  return ClientCreditPage({ shell, detail, form });
}

export function registerClientCreditPages(server: FastifyInstance, deps: Deps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/clients';
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: CreditListQuery } },
    async (request, reply) => sendPage(reply, await render(deps, request, undefined, request.query)),
  );
  scope.post(
    `${path}/:client_ref/contact`,
    formRoute({ params: CreditParams, body: NameContactIn }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { client_ref } = request.params;
      const outcome = await runForm(request, ({ body }) =>
        nameContact(deps, shell.user.id, shell.book.id, client_ref, body.contact_id),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'clients'));
      return sendPage(reply, await render(deps, request, outcome.form), outcome.status);
    },
  );
  scope.get(`${path}/:client_ref`, { schema: { hide: true, params: CreditParams } }, async (request, reply) =>
    sendPage(reply, await renderClient(deps, request, request.params.client_ref)),
  );
  scope.post(
    `${path}/:client_ref/adjustments`,
    formRoute({ params: CreditParams, body: AdjustmentIn }, { form: { booleans: ['refund'] } }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { client_ref } = request.params;
      const outcome = await runForm(request, ({ body }) =>
        adjustCredit(deps, shell.user.id, shell.book.id, client_ref, {
          amount: parseSignedAmount(body.amount),
          reason: body.reason,
          refund: body.refund ?? false,
        }),
      );
      if (outcome.ok)
        return seeOther(reply, bookPath(shell.book.id, `clients/${encodeURIComponent(client_ref)}`));
      return sendPage(reply, await renderClient(deps, request, client_ref, outcome.form), outcome.status);
    },
  );
}
