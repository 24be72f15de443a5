import { DateTime, Enum, NullableDateTime, Type } from '../../platform/http/schema-kit.ts';
import { MESSAGE_CHARS_MAX } from './domain.ts';

// TypeBox shapes of the chat routes: the spec's ChatLinkOut, the chats answer (DECISIONS), and
// the app's chat screen.

export const ChatLinkOut = Type.Object(
  {
    code: Type.String({ description: 'Single-use, valid for 24 hours.' }),
    bot_username: Type.String({ description: 'The bot to add to the client’s group (without @).' }),
    command: Type.String({ description: 'What to post in the group: /link <code>.' }),
  },
  { $id: 'ChatLinkOut', title: 'ChatLinkOut' },
);

export const ChatStateOut = Type.Object(
  {
    connected: Type.Boolean(),
    title: Type.Union([Type.String(), Type.Null()]),
    connected_at: NullableDateTime(),
  },
  { $id: 'ChatStateOut', title: 'ChatStateOut' },
);

export const ContactParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const SpaceContactParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  contact_id: Type.String({ format: 'uuid' }),
});
export const FileParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  contact_id: Type.String({ format: 'uuid' }),
  file_id: Type.String({ format: 'uuid' }),
});
export const SpaceInvoiceParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  invoice_id: Type.String({ format: 'uuid' }),
});

export const AnswerIn = Type.Object({
  text: Type.String({
    minLength: 1,
    maxLength: 4000,
    description: 'Posted in the group in the space’s name.',
  }),
});

export const ChatMessageOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  direction: Enum(['in', 'out'] as const),
  kind: Enum(['text', 'file'] as const),
  text: Type.String({ maxLength: MESSAGE_CHARS_MAX }),
  author: Type.String(),
  file: Type.Union([
    Type.Object({ name: Type.String(), size: Type.Integer(), content_type: Type.String() }),
    Type.Null(),
  ]),
  created_at: DateTime(),
});

export const PendingAnswerOut = Type.Object({
  invoice_id: Type.String({ format: 'uuid' }),
  number: Type.String(),
  total: Type.String(),
  currency: Type.String(),
  due_on: Type.String({ format: 'date' }),
  payer_marked_paid_at: NullableDateTime(),
  promised_on: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
});

export const ContactChatOut = Type.Object({
  contact_id: Type.String({ format: 'uuid' }),
  contact_name: Type.String(),
  bot_enabled: Type.Boolean(),
  can_post: Type.Boolean({
    description: 'False below Pro: a connected group stays readable, nothing is posted.',
  }),
  connected: Type.Boolean(),
  title: Type.Union([Type.String(), Type.Null()]),
  connected_at: NullableDateTime(),
  messages: Type.Array(ChatMessageOut),
  pending: Type.Array(PendingAnswerOut),
});

export const ChatListOut = Type.Object({
  items: Type.Array(
    Type.Object({
      contact_id: Type.String({ format: 'uuid' }),
      contact_name: Type.String(),
      title: Type.String(),
      connected_at: DateTime(),
    }),
  ),
});

export const TelegramParams = Type.Object({ secret: Type.String({ maxLength: 64 }) });
/** The part of a Bot API Update this server reads before grammY does; other fields pass through. */
export const TelegramUpdateChecked = Type.Object({ update_id: Type.Integer({ minimum: 0 }) });

export const DECISIONS = ['confirm', 'reject', 'accept', 'decline'] as const;
