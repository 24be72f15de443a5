import { lapseProposals, repairAgentWrites } from './features/agents/index.ts';
import { watchOnce } from './features/chain-watch/index.ts';
import { type ChatSetup, invoiceChatPort, pruneChatRecords } from './features/chat/index.ts';
import {
  invoiceMailAttachments,
  sendAutomaticReminders,
  sendInvoiceChatPosts,
} from './features/invoices/index.ts';
import { remindExpiringKeys } from './features/keys/index.ts';
import { settleAllIncomeDays } from './features/ledger/index.ts';
import { lapseRequests, settleAllOpenSums } from './features/payment-requests/index.ts';
import { followChainPayouts } from './features/payouts/index.ts';
import { refreshDue, refreshScreeningList } from './features/screening/index.ts';
import { pruneAttemptThrottles } from './platform/http/attempt-throttle.ts';
import { pruneRateBuckets } from './platform/http/rate-limit.ts';
import { pruneIdempotencyRecords } from './platform/http/write.ts';
import { applyRetention, RETENTION_RULES } from './platform/jobs/retention.ts';
import type { PeriodicTask } from './platform/jobs/scheduler.ts';
import { mailerFromConfig } from './platform/mail/mailer.ts';
import { drainMailOutbox } from './platform/mail/outbox.ts';
import type { Runtime } from './runtime.ts';

/** The periodic tasks every server process runs (each is safe to run in many processes). */
export function housekeepingTasks(runtime: Runtime, chat?: ChatSetup): PeriodicTask[] {
  const { db } = runtime.database;
  const { clock } = runtime;
  const logger = runtime.logger || undefined;
  const mailer = mailerFromConfig(runtime.config, logger);
  return [
    ...chainTasks(runtime),
    ...screeningTasks(runtime),
    // Income postings' arrivals moved into their days, so Home and Income read a few rows a day.
    { name: 'settle-income-days', everyMs: 2_000, run: () => settleAllIncomeDays(db) },
    // Open requests' changes moved into their book's sums, so Home reads a few rows a book.
    { name: 'settle-open-request-sums', everyMs: 2_000, run: () => settleAllOpenSums(db) },
    { name: 'prune-rate-buckets', everyMs: 60_000, run: () => pruneRateBuckets(db, clock) },
    { name: 'prune-attempt-throttles', everyMs: 600_000, run: () => pruneAttemptThrottles(db, clock) },
    {
      name: 'prune-idempotency-records',
      everyMs: 10 * 60_000,
      run: () => pruneIdempotencyRecords(db, clock),
    },
    { name: 'remind-expiring-keys', everyMs: 10 * 60_000, run: () => remindExpiringKeys({ db, clock }) },
    { name: 'lapse-payment-requests', everyMs: 30_000, run: () => lapseRequests({ db, clock }) },
    { name: 'lapse-agent-proposals', everyMs: 10 * 60_000, run: () => lapseProposals({ db, clock }) },
    {
      name: 'invoice-reminders',
      everyMs: 10 * 60_000,
      run: () =>
        sendAutomaticReminders({
          db,
          clock,
          publicUrl: runtime.config.publicUrl,
          mailer,
          chat: chat && invoiceChatPort(chat.deps),
        }),
    },
    {
      // Mail queued by committed transactions (invoices, reminders), sent outside any of them.
      name: 'send-mail',
      everyMs: 2_000,
      run: () =>
        drainMailOutbox({
          db,
          clock,
          mailer,
          logger,
          attachmentsFor: ({ spaceId, invoiceId }) =>
            invoiceMailAttachments(db, runtime.config.publicUrl, spaceId, invoiceId),
        }),
    },
    ...(chat
      ? [
          {
            // Invoices queued for a client's chat group by committed sends and reminders.
            name: 'post-invoices-to-chat',
            everyMs: 2_000,
            run: () =>
              sendInvoiceChatPosts({
                db,
                clock,
                publicUrl: runtime.config.publicUrl,
                chat: invoiceChatPort(chat.deps),
                logger,
              }),
          },
        ]
      : []),
    { name: 'prune-chat-records', everyMs: 60 * 60_000, run: () => pruneChatRecords({ db, clock }) },
    ...RETENTION_RULES.map((rule) => ({
      name: `retain-${rule.table}`,
      everyMs: 60 * 60_000,
      run: () => applyRetention(db, clock, rule),
    })),
  ];
}

/** The chain's tasks, when a chain is configured: the account watch, the payout follower, repair. */
function chainTasks(runtime: Runtime): PeriodicTask[] {
  const { db } = runtime.database;
  const { clock, chain } = runtime;
  if (!chain) return [];
  const confirmations = runtime.config.confirmations;
  const logger = runtime.logger || undefined;
  return [
    {
      name: 'chain-watch',
      everyMs: 2_000,
      run: async () => {
        await watchOnce({ db, clock, chain, confirmations, logger });
        // Chain payments out: executed at their confirmations, undone by a reorganisation.
        await followChainPayouts({ db, clock, chain, confirmations, logger });
      },
    },
    {
      // Agent wallet transfers and x402 payments a dead process left on their way.
      name: 'repair-agent-writes',
      everyMs: 60_000,
      run: () => repairAgentWrites({ db, clock, chain, confirmations, logger }),
    },
  ];
}

/** How often a process looks whether the list is due for a refresh (SCREENING_REFRESH_HOURS). */
const SCREENING_LOOK_MS = 10 * 60_000;

/** The sanctions list's refresh from SCREENING_LIST_URL, when set (see screening/refresh.ts). */
function screeningTasks(runtime: Runtime): PeriodicTask[] {
  const { listUrl, refreshHours } = runtime.config.screening;
  if (listUrl === undefined) return [];
  const { db } = runtime.database;
  const { clock } = runtime;
  const logger = runtime.logger || undefined;
  const deps = { db, clock, resolver: runtime.resolver, allowPrivate: runtime.config.webhookAllowPrivate };
  return [
    {
      name: 'refresh-screening-list',
      everyMs: SCREENING_LOOK_MS,
      run: async () => {
        if (!(await refreshDue(db, listUrl, clock.now(), refreshHours))) return;
        const outcome = await refreshScreeningList(deps, listUrl);
        if (outcome.kind === 'refused' || outcome.kind === 'unknown') {
          logger?.warn(
            { outcome: outcome.kind, problem: outcome.problem },
            'the sanctions list was not refreshed',
          );
        } else if (outcome.kind === 'loaded') {
          logger?.info(
            { published: outcome.publishedOn, entries: outcome.entries },
            'sanctions list refreshed',
          );
        }
      },
    },
  ];
}
