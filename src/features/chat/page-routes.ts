import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { type FormState, hrefWith } from '../../platform/web/components.tsx';
import { formRoute, runForm } from '../../platform/web/forms.ts';
import { seeOther, sendPage, shellOf } from '../../platform/web/plumbing.ts';
import { bookPath } from '../../platform/web/shell.ts';
import { ChatsPage, ContactChatPage } from './pages.tsx';
import { sendFile } from './routes.ts';
import { AnswerIn, DECISIONS } from './schemas.ts';
import * as service from './service.ts';

const BookParams = Type.Object({ book_id: Type.String({ maxLength: 64 }) });
const ContactPageParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  contact_id: Type.String({ format: 'uuid' }),
});
const FilePageParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  contact_id: Type.String({ format: 'uuid' }),
  file_id: Type.String({ format: 'uuid' }),
});
const DecisionParams = Type.Object({
  book_id: Type.String({ maxLength: 64 }),
  invoice_id: Type.String({ format: 'uuid' }),
  kind: Type.Union([Type.Literal('payer-claim'), Type.Literal('deferral')]),
  decision: Type.Union(DECISIONS.map((d) => Type.Literal(d))),
});
const DoneQuery = Type.Object({ done: Type.Optional(Type.String({ maxLength: 40 })) });

const DONE_SENTENCES: Record<string, string> = {
  answered: 'Your answer was posted in the group.',
  confirm: 'The payment was recorded.',
  reject: 'The client’s “I paid” was cleared.',
  accept: 'The due date moved to the date the client asked for.',
  decline: 'The request for more time was declined.',
};

const PAIRS: Record<string, readonly string[]> = {
  'payer-claim': ['confirm', 'reject'],
  deferral: ['accept', 'decline'],
};

async function renderContact(
  deps: service.ChatDeps,
  request: FastifyRequest,
  contactId: string,
  extra: { form?: FormState; done?: string | undefined; refused?: string | undefined } = {},
) {
  const shell = shellOf(request);
  const chat = await service.contactChat(deps, shell.user.id, shell.book.id, contactId);
  return ContactChatPage({ shell, chat, ...extra });
}

export function registerChatPages(server: FastifyInstance, deps: service.ChatDeps) {
  const scope = typedRoutes(server);
  const path = '/app/books/:book_id/chats';
  scope.get(path, { schema: { hide: true, params: BookParams } }, async (request, reply) => {
    const shell = shellOf(request);
    const chats = await service.listChats(deps, shell.user.id, shell.book.id);
    return sendPage(reply, ChatsPage({ shell, chats, botEnabled: deps.transport !== undefined }));
  });
  scope.get(
    `${path}/:contact_id`,
    { schema: { hide: true, params: ContactPageParams, querystring: DoneQuery } },
    async (request, reply) => {
      const { contact_id } = request.params;
      const { done } = request.query;
      return sendPage(
        reply,
        await renderContact(deps, request, contact_id, { done: DONE_SENTENCES[done ?? ''] }),
      );
    },
  );
  scope.get(
    `${path}/:contact_id/files/:file_id`,
    { schema: { hide: true, params: FilePageParams } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { contact_id, file_id } = request.params;
      return sendFile(reply, await service.readFile(deps, shell.user.id, shell.book.id, contact_id, file_id));
    },
  );
  scope.post(
    `${path}/:contact_id/answer`,
    formRoute({ params: ContactPageParams, body: AnswerIn }),
    async (request, reply) => {
      const shell = shellOf(request);
      const { contact_id } = request.params;
      const outcome = await runForm(request, ({ body }) =>
        service.answerClient(deps, shell.user.id, shell.book.id, contact_id, body.text),
      );
      if (!outcome.ok) {
        if (outcome.status === 404) throw new AppError('not_found', 'No such contact in this book.');
        return sendPage(
          reply,
          await renderContact(deps, request, contact_id, { form: outcome.form }),
          outcome.status,
        );
      }
      return seeOther(reply, hrefWith(bookPath(shell.book.id, `chats/${contact_id}`), { done: 'answered' }));
    },
  );
  registerDecisionPages(scope, deps);
}

const DecisionForm = Type.Object({ contact_id: Type.Optional(Type.String({ format: 'uuid' })) });

function registerDecisionPages(server: FastifyInstance, deps: service.ChatDeps) {
  const scope = typedRoutes(server);
  scope.post(
    '/app/books/:book_id/chats/invoices/:invoice_id/:kind/:decision',
    { schema: { hide: true, params: DecisionParams, body: DecisionForm } },
    async (request, reply) => {
      const shell = shellOf(request);
      const { invoice_id, kind, decision } = request.params;
      const contactId = request.body.contact_id;
      if (!PAIRS[kind]?.includes(decision)) throw new AppError('not_found', 'No such action.');
      const outcome = await runForm(request, () =>
        service.decideAnswer(deps, shell.user.id, shell.book.id, invoice_id, decision),
      );
      if (!outcome.ok) {
        // Refused in place on the contact's screen; a missing invoice (or no screen to go back to) is a 404 page.
        if (outcome.status === 404 || outcome.status === 403 || contactId === undefined)
          throw new AppError(
            outcome.status === 403 ? 'forbidden' : 'not_found',
            outcome.form.sentence ?? 'Refused.',
          );
        const page = await renderContact(deps, request, contactId, { refused: outcome.form.sentence });
        return sendPage(reply, page, outcome.status);
      }
      const back = outcome.value.contact_id ? `chats/${outcome.value.contact_id}` : 'chats';
      return seeOther(reply, hrefWith(bookPath(shell.book.id, back), { done: decision }));
    },
  );
}
