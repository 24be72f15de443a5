import { canWrite } from '../../core/roles.ts';
import {
  ActionButton,
  type Column,
  DateTime,
  EmptyState,
  Form,
  type FormState,
  Money,
  Notice,
  Pill,
  Table,
} from '../../platform/web/components.tsx';
import { Layout } from '../../platform/web/layout.tsx';
import { bookPath, type Shell, type ShellBook } from '../../platform/web/shell.ts';

// The Chats screen: the contacts whose client group is connected to the bot, and per contact
// the group, what the client wrote and sent, an answer form, and the invoices waiting on the
// seller after "I paid" or "Need more time".

type BookShell = Shell & { book: ShellBook };

export type ChatListItem = { contact_id: string; contact_name: string; title: string; connected_at: string };

export type ChatMessageView = {
  id: string;
  direction: 'in' | 'out';
  kind: 'text' | 'file';
  text: string;
  author: string;
  file: { name: string; size: number; content_type: string } | null;
  created_at: string;
};

export type PendingView = {
  invoice_id: string;
  number: string;
  total: string;
  currency: string;
  due_on: string;
  payer_marked_paid_at: string | null;
  promised_on: string | null;
};

export type ContactChatView = {
  contact_id: string;
  contact_name: string;
  bot_enabled: boolean;
  can_post: boolean;
  connected: boolean;
  title: string | null;
  connected_at: string | null;
  messages: ChatMessageView[];
  pending: PendingView[];
};

function BotDisabled() {
  return (
    <Notice kind="warn">
      The chat bot is not enabled on this server. The operator creates a bot with @BotFather in Telegram and
      starts Tollbook with <code>TELEGRAM_BOT_TOKEN</code> set (see the README, “Chat (Telegram)”).
    </Notice>
  );
}

export function ChatsPage(props: { shell: BookShell; chats: ChatListItem[]; botEnabled: boolean }) {
  const { shell } = props;
  const columns: Column<ChatListItem>[] = [
    {
      header: 'Contact',
      cell: (chat) => <a href={bookPath(shell.book.id, `chats/${chat.contact_id}`)}>{chat.contact_name}</a>,
    },
    { header: 'Group', cell: (chat) => chat.title },
    { header: 'Connected', cell: (chat) => <DateTime at={chat.connected_at} /> },
  ];
  return (
    <Layout shell={shell} title="Chats">
      <h1>Chats</h1>
      <p class="muted">
        Client groups connected to the bot. A key with the <code>chats</code> scope mints a link code (
        <code>POST /integration/contacts/&#123;id&#125;/telegram-link</code>); the client’s group posts the
        command.
      </p>
      {!props.botEnabled && <BotDisabled />}
      <Table
        caption="Connected groups"
        columns={columns}
        rows={props.chats}
        empty={
          <EmptyState title="No connected groups yet">
            <p>
              Mint a link code for a contact, add the bot to the client’s group and post the command there.
            </p>
          </EmptyState>
        }
      />
    </Layout>
  );
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function MessageItem(props: { shell: BookShell; chat: ContactChatView; message: ChatMessageView }) {
  const { message } = props;
  const who = message.direction === 'in' ? message.author || props.chat.contact_name : 'You';
  const href = bookPath(props.shell.book.id, `chats/${props.chat.contact_id}/files/${message.id}`);
  return (
    <li class={`chat-message ${message.direction}`}>
      <div class="muted">
        <strong>{who}</strong> · <DateTime at={message.created_at} />
      </div>
      {message.file ? (
        <div>
          File: <a href={href}>{message.file.name}</a>{' '}
          <span class="muted">
            ({message.file.content_type}, {sizeText(message.file.size)})
          </span>
        </div>
      ) : (
        <div class="chat-text">{message.text}</div>
      )}
    </li>
  );
}

function PendingCard(props: { shell: BookShell; item: PendingView; writer: boolean; contactId: string }) {
  const { shell, item } = props;
  const base = `chats/invoices/${item.invoice_id}`;
  return (
    <li class="card">
      <strong>Invoice {item.number}</strong> · <Money amount={item.total} currency={item.currency} /> · due{' '}
      <DateTime at={item.due_on} />
      {item.payer_marked_paid_at && (
        <div>
          <Pill tone="warn">I paid</Pill> The client says it is paid (
          <DateTime at={item.payer_marked_paid_at} />
          ). Nothing is booked until you confirm.
          {props.writer && (
            <div>
              <ActionButton
                action={bookPath(shell.book.id, `${base}/payer-claim/confirm`)}
                csrf={shell.csrfToken}
                label="Confirm payment"
                confirm="Record the open amount as paid?"
                fields={{ contact_id: props.contactId }}
              />{' '}
              <ActionButton
                action={bookPath(shell.book.id, `${base}/payer-claim/reject`)}
                csrf={shell.csrfToken}
                label="Reject"
                fields={{ contact_id: props.contactId }}
                tone="secondary"
              />
            </div>
          )}
        </div>
      )}
      {item.promised_on && (
        <div>
          <Pill tone="warn">Need more time</Pill> The client asks to pay by <DateTime at={item.promised_on} />
          .
          {props.writer && (
            <div>
              <ActionButton
                action={bookPath(shell.book.id, `${base}/deferral/accept`)}
                csrf={shell.csrfToken}
                label="Accept new due date"
                fields={{ contact_id: props.contactId }}
              />{' '}
              <ActionButton
                action={bookPath(shell.book.id, `${base}/deferral/decline`)}
                csrf={shell.csrfToken}
                label="Decline"
                fields={{ contact_id: props.contactId }}
                tone="secondary"
              />
            </div>
          )}
        </div>
      )}
    </li>
  );
}

function AnswerForm(props: { shell: BookShell; chat: ContactChatView; form?: FormState | undefined }) {
  const { shell, chat, form } = props;
  const error = form?.errors.text;
  const value = typeof form?.values.text === 'string' ? form.values.text : '';
  return (
    <Form
      action={bookPath(shell.book.id, `chats/${chat.contact_id}/answer`)}
      csrf={shell.csrfToken}
      form={form}
      label="Answer the client"
    >
      <div class="field">
        <label for="field-text">Answer (posted in the group in this book’s name)</label>
        <textarea
          id="field-text"
          name="text"
          rows={3}
          maxLength={4000}
          required
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'field-text-error' : undefined}
        >
          {value}
        </textarea>
        {error && (
          <span class="error" id="field-text-error">
            {error}
          </span>
        )}
      </div>
      <button type="submit">Send answer</button>
    </Form>
  );
}

export function ContactChatPage(props: {
  shell: BookShell;
  chat: ContactChatView;
  form?: FormState | undefined;
  done?: string | undefined;
  /** A refused decision on a pending answer, shown above the list. */
  refused?: string | undefined;
}) {
  const { shell, chat } = props;
  const writer = canWrite(shell.book.role);
  return (
    <Layout shell={shell} title={`Chat: ${chat.contact_name}`}>
      <p>
        <a href={bookPath(shell.book.id, 'chats')}>← Chats</a>
      </p>
      <h1>Chat with {chat.contact_name}</h1>
      {!chat.bot_enabled && <BotDisabled />}
      {props.done && <Notice kind="ok">{props.done}</Notice>}
      {chat.connected ? (
        <p>
          Group <strong>{chat.title}</strong>, connected <DateTime at={chat.connected_at} />.
        </p>
      ) : (
        <Notice kind="warn">No group is connected for this contact.</Notice>
      )}
      {chat.connected && !chat.can_post && (
        <Notice kind="warn">
          This book’s plan does not include chat: the group is read-only (Pro and up post to it).
        </Notice>
      )}
      <h2>Waiting on you</h2>
      {props.refused && <Notice kind="error">{props.refused}</Notice>}
      {chat.pending.length === 0 ? (
        <p class="muted">Nothing: no “I paid” or “Need more time” to decide.</p>
      ) : (
        <ul class="plain">
          {chat.pending.map((item) => (
            <PendingCard shell={shell} item={item} writer={writer} contactId={chat.contact_id} />
          ))}
        </ul>
      )}
      {writer && chat.connected && chat.can_post && chat.bot_enabled && (
        <AnswerForm shell={shell} chat={chat} form={props.form} />
      )}
      <h2>Messages and files</h2>
      {chat.messages.length === 0 ? (
        <p class="muted">Nothing yet.</p>
      ) : (
        <ul class="plain chat-log">
          {chat.messages.map((message) => (
            <MessageItem shell={shell} chat={chat} message={message} />
          ))}
        </ul>
      )}
    </Layout>
  );
}
