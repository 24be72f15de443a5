import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { CursorParam, type Static, Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { EMPTY_FORM, type FormState } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { AccountsPage, ProvePage } from './pages.tsx';
import { AccountEditPage, type EditableAccount } from './pages-edit.tsx';
import { completeProof, startProof } from './proofs.ts';
import { AccountCreate, AccountPatch } from './schemas.ts';
import {
  type AccountsDeps,
  accountEditsInApp,
  createAccountInApp,
  listAccountsInApp,
  readAccountInApp,
  updateAccountInApp,
} from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const AccountParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  account_id: Type.String({ format: 'uuid' }),
});
const ListQuery = Type.Object({ cursor: CursorParam });
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const SignatureIn = Type.Object({ signature: Type.String({ minLength: 1, maxLength: 200 }) });

type ListQueryType = Static<typeof ListQuery>;

async function renderList(
  deps: AccountsDeps,
  request: FastifyRequest,
  form: FormState,
  query: ListQueryType = {},
  notice?: string,
) {
  const shell = shellOf(request);
  const page = await listAccountsInApp(deps, shell.member, query);
  return AccountsPage({
    shell,
    accounts: page.items,
    next_cursor: page.next_cursor,
    cursor: query.cursor,
    form,
    notice,
  });
}

async function renderProve(deps: AccountsDeps, request: FastifyRequest, accountId: string, form: FormState) {
  const shell = shellOf(request);
  // A challenge is used up by its first answer, so every showing of the page asks for a new one.
  const challenge = await startProof(deps, shell.user.id, shell.book.id, accountId);
  return ProvePage({
    shell,
    account: { id: accountId, address: challenge.address },
    challenge: challenge.message,
    form,
  });
}

async function renderEdit(
  deps: AccountsDeps,
  request: FastifyRequest,
  accountId: string,
  form: FormState,
  scheme?: string,
) {
  const shell = shellOf(request);
  const account = await readAccountInApp(deps, shell.member, accountId);
  const edits = await accountEditsInApp(deps, shell.member, accountId);
  return AccountEditPage({ shell, account: account as EditableAccount, form, scheme, edits });
}

/** The scheme's select asks for the page again with the scheme chosen (its own name and value). */
const EditQuery = Type.Object({ 'requisites.scheme': Type.Optional(Type.String({ maxLength: 16 })) });

/** One account's page and its form (name, colour, notes, bank requisites). */
function registerAccountEdit(server: FastifyInstance, deps: AccountsDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/accounts/:account_id';
  scope.get(
    path,
    { schema: { hide: true, params: AccountParams, querystring: EditQuery } },
    async (request, reply) =>
      sendPage(
        reply,
        await renderEdit(
          deps,
          request,
          request.params.account_id,
          EMPTY_FORM,
          request.query['requisites.scheme'],
        ),
      ),
  );
  scope.post(path, formRoute({ params: AccountParams, body: AccountPatch }), async (request, reply) => {
    const shell = shellOf(request);
    const { account_id } = request.params;
    const outcome = await runForm(request, ({ body }) =>
      updateAccountInApp(deps, shell.member, account_id, body),
    );
    if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, `accounts/${account_id}`));
    return sendPage(reply, await renderEdit(deps, request, account_id, outcome.form), outcome.status);
  });
}

export function registerAccountPages(server: FastifyInstance, deps: AccountsDeps) {
  registerAccountEdit(server, deps);
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/accounts';
  scope.get(
    path,
    { schema: { hide: true, params: BookParams, querystring: ListQuery } },
    async (request, reply) => sendPage(reply, await renderList(deps, request, EMPTY_FORM, request.query)),
  );
  scope.post(path, formRoute({ params: BookParams, body: AccountCreate }), async (request, reply) => {
    const shell = shellOf(request);
    const outcome = await runForm(request, ({ body }) => createAccountInApp(deps, shell.member, body));
    if (outcome.ok) return seeOther(reply, bookPath(shell.book.id, 'accounts'));
    return sendPage(reply, await renderList(deps, request, outcome.form), outcome.status);
  });
  scope.post(
    `${path}/:account_id/prove`,
    { schema: { hide: true, params: AccountParams } },
    async (request, reply) => {
      const outcome = await runForm(request, () =>
        renderProve(deps, request, request.params.account_id, EMPTY_FORM),
      );
      if (outcome.ok) return sendPage(reply, outcome.value);
      return sendPage(reply, await renderList(deps, request, outcome.form), outcome.status);
    },
  );
  scope.post(
    `${path}/:account_id/prove/signature`,
    formRoute({ params: AccountParams, body: SignatureIn }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { account_id } = request.params;
      const outcome = await runForm(request, async ({ body: { signature } }) => {
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
          await renderList(deps, request, EMPTY_FORM, {}, `Address ${outcome.value.address} proven.`),
        );
      return sendPage(reply, await renderProve(deps, request, account_id, outcome.form), outcome.status);
    },
  );
}
