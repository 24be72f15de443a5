import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { type Static, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { type FormState, hrefWith } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { MarkPaidPage, PaymentRequestsPage } from './pages.tsx';
import { MarkPaidIn, RequestListQuery } from './schemas.ts';
import * as service from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const TokenParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  token: Type.String({ minLength: 1, maxLength: 100 }),
});

async function render(
  deps: service.RequestsDeps,
  request: FastifyRequest,
  query: Static<typeof RequestListQuery>,
) {
  const shell = shellOf(request);
  const page = await service.listRequests(deps, shell.member, query);
  return PaymentRequestsPage({ shell, page, status: query.status, cursor: query.cursor });
}

async function renderMarkPaid(
  deps: service.RequestsDeps,
  request: FastifyRequest,
  token: string,
  form?: FormState,
  notice?: string,
) {
  const shell = shellOf(request);
  const found = await service.getRequestInApp(deps, shell.member, token);
  return MarkPaidPage({ shell, request: found, form, notice });
}

export function registerPaymentRequestPages(scope: FastifyInstance, deps: service.RequestsDeps) {
  const app = typedRoutes(scope);
  const path = '/app/books/:book_id/payment-requests';
  app.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: RequestListQuery } },
    async (request, reply) => sendPage(reply, await render(deps, request, request.query)),
  );
  app.get(
    `${path}/:token/mark-paid`,
    { schema: { hide: true, params: TokenParams } },
    async (request, reply) => sendPage(reply, await renderMarkPaid(deps, request, request.params.token)),
  );
  app.post(
    `${path}/:token/mark-paid`,
    formRoute({ params: TokenParams, body: MarkPaidIn }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { token } = request.params;
      const outcome = await runForm(request, ({ body }) => service.markPaid(deps, shell.member, token, body));
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'payment-requests'));
      if (outcome.status === 404)
        throw new AppError('not_found', 'No payment request with this token in this space.');
      return sendPage(reply, await renderMarkPaid(deps, request, token, outcome.form), outcome.status);
    },
  );
  app.post(
    `${path}/:token/cancel`,
    { schema: { hide: true, params: TokenParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { token } = request.params;
      const outcome = await runForm(request, () => service.cancelRequestInApp(deps, shell.member, token));
      if (outcome.ok)
        return seeOther(
          reply,
          hrefWith(bookPath(shell.book.id, 'payment-requests'), { status: 'cancelled' }),
        );
      if (outcome.status === 404)
        throw new AppError('not_found', 'No payment request with this token in this space.');
      return sendPage(
        reply,
        await renderMarkPaid(deps, request, token, undefined, outcome.form.sentence),
        outcome.status,
      );
    },
  );
}
