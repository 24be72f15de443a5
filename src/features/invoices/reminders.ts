import { randomUUID } from 'node:crypto';
import { queueChatPost } from './chat-posts.ts';
import {
  addDays,
  allows,
  REMIND_AFTER_DAYS,
  REMIND_BEFORE_DAYS,
  type ReminderStage,
  reminderStage,
} from './domain.ts';
import { type InvoicesDeps, queueInvoiceMail, today } from './lifecycle.ts';
import * as store from './store.ts';

// The reminder job: mails the reminders due today for invoices that still wait for payment.

const STAGE_MESSAGES: Record<ReminderStage, string> = {
  before_due: 'A friendly reminder: this invoice is due in a few days.',
  on_due: 'This invoice is due today.',
  after_due: 'This invoice is now overdue; please pay it at your earliest convenience.',
};

/**
 * The automatic reminders job: open invoices with auto_remind on, not paused, with a client
 * email, get one mail per stage (three days before due, on due, a week after). Each stage is
 * claimed in the same transaction that queues its mail (the mail worker sends it after commit,
 * retrying on its own schedule), so no two processes queue the same one. Answers how many were
 * queued or posted.
 */
export async function sendAutomaticReminders(deps: InvoicesDeps, limit = 50): Promise<number> {
  if (!deps.mailer?.available && !deps.chat) return 0;
  const todayText = today(deps.clock);
  const shift = (days: number) => addDays(todayText, days);
  const bounds = {
    afterBefore: shift(-REMIND_AFTER_DAYS),
    onBefore: todayText,
    firstBefore: shift(REMIND_BEFORE_DAYS),
  };
  let sent = 0;
  for (const due of await store.dueForReminder(deps.db, bounds, limit)) {
    try {
      const mailed = await deps.db.transaction().execute(async (tx) => {
        const row = await store.lockInvoiceIfFree(tx, due.space_id, due.id);
        if (!row || !row.auto_remind || row.reminders_paused_at !== null || !allows('remind', row.status))
          return false;
        const stage = reminderStage(row.due_on, todayText);
        if (stage === null) return false;
        // By chat where the contact has a group the space may post to; else by mail.
        const byChat = (await deps.chat?.canPost(tx, row.space_id, row.contact_id)) === true;
        if (!byChat && (!deps.mailer?.available || row.client_email === '')) return false;
        const claimed = await store.claimAutoStage(tx, {
          id: randomUUID(),
          space_id: row.space_id,
          invoice_id: row.id,
          purpose: 'remind',
          via: [byChat ? 'chat' : 'email'],
          recipient: row.client_email,
          cc: [],
          message: STAGE_MESSAGES[stage],
          created_at: deps.clock.now(),
          auto_stage: stage,
        });
        if (!claimed) return false;
        if (byChat) {
          const postId = await queueChatPost(tx, deps, row, STAGE_MESSAGES[stage], 'remind');
          await store.linkAutoDelivery(tx, row.id, stage, { chat_post_id: postId });
          return claimed;
        }
        const mailId = await queueInvoiceMail(
          tx,
          deps,
          row,
          row.client_email,
          [],
          STAGE_MESSAGES[stage],
          'remind',
        );
        await store.linkAutoDelivery(tx, row.id, stage, { mail_id: mailId });
        return claimed;
      });
      if (mailed) sent += 1;
    } catch {
      // Nothing was recorded (the claim and the queued mail roll back together); the next run tries again.
    }
  }
  return sent;
}
