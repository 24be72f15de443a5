import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { CursorParam, type Static, Type } from '../../platform/http/schema-kit.ts';
import { EMPTY_FORM, type FormState } from '../../platform/web/components.tsx';
import { runForm, seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { AccountsPage, ProvePage } from './pages.tsx';
import { completeProof, startProof } from './proofs.ts';
import { AccountCreate } from './schemas.ts';
import {
  type AccountCreateInput,
  type AccountsDeps,
  createAccountInApp,
  listAccountsInApp,
} from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const AccountParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  account_id: Type.String({ format: 'uuid' }),
});
const ListQuery = Type.Object({ cursor: CursorParam });
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const SignatureIn = Type.Object({ signature: Type.String({ minLength: 1, maxLength: 200 }) });

async function renderList(deps: AccountsDeps, request: FastifyRequest, form: FormState, notice?: string) {
  const shell = shellOf(request);
  const query = (request.query ?? {}) as Static<typeof ListQuery>;
  const page = await listAccountsInApp(deps, shell.user.id, shell.book.id, query);
  return AccountsPage({
    shell,
    accounts: page.items,
    next_cursor: page.next_cursor,
    cursor: query.cursor,
    form,
    notice,
  });
}

async function renderProve(deps: AccountsDeps, request: FastifyRequest, form: FormState) {
  const shell = shellOf(request);
  const { account_id } = request.params as Static<typeof AccountParams>;
  // A challenge is used up by its first answer, so every showing of the page asks for a new one.
  const challenge = await startProof(deps, shell.user.id, shell.book.id, account_id);
  return ProvePage({
    shell,
    account: { id: account_id, address: challenge.address },
    challenge: challenge.message,
    form,
  });
}

export function registerAccountPages(scope: FastifyInstance, deps: AccountsDeps) {
  const path = '/app/books/:book_id/accounts';
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: ListQuery } },
    async (request, reply) => sendPage(reply, await renderList(deps, request, EMPTY_FORM)),
  );
  scope.post(
    path,
    { schema: { hide: true, params: BookParams, body: AccountCreate }, attachValidation: true },
    async (request, reply) => {
      const shell = shellOf(request);
      const outcome = await runForm(request, () =>
        createAccountInApp(deps, shell.user.id, shell.book.id, request.body as AccountCreateInput),
      );
      if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'accounts'));
      return sendPage(reply, await renderList(deps, request, outcome.form), outcome.status);
    },
  );
  scope.post(
    `${path}/:account_id/prove`,
    { schema: { hide: true, params: AccountParams } },
    async (request, reply) => {
      const outcome = await runForm(request, () => renderProve(deps, request, EMPTY_FORM));
      if (outcome.ok) return sendPage(reply, outcome.value);
      return sendPage(reply, await renderList(deps, request, outcome.form), outcome.status);
    },
  );
  scope.post(
    `${path}/:account_id/prove/signature`,
    { schema: { hide: true, params: AccountParams, body: SignatureIn }, attachValidation: true },
    async (request, reply) => {
      const shell = shellOf(request);
      const { account_id } = request.params as Static<typeof AccountParams>;
      const signature = (request.body as { signature?: string }).signature ?? '';
      const outcome = await runForm(request, async () => {
        if (!SIGNATURE.test(signature)) {
          throw new AppError('invalid_request', 'A signature is 0x followed by 130 hexadecimal digits.', {
            field: 'signature',
          });
        }
        return completeProof(deps, shell.user.id, shell.book.id, account_id, signature);
      });
      if (outcome.ok)
        return sendPage(
          reply,
          await renderList(deps, request, EMPTY_FORM, `Address ${outcome.value.address} proven.`),
        );
      return sendPage(reply, await renderProve(deps, request, outcome.form), outcome.status);
    },
  );
}
