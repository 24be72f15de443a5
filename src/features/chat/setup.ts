import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/database.ts';
import { type ChatBot, createChatBot } from './bot.ts';
import { createFileStore, fileStoreRoot } from './file-store.ts';
import type { ChatDeps } from './service.ts';

/** The chat feature as one server process runs it: its deps, and the bot when a token is set. */
export type ChatSetup = { deps: ChatDeps; bot: ChatBot | undefined };

export function setUpChat(
  config: Config,
  base: { db: Db; clock: Clock; logger?: Logger | undefined },
): ChatSetup {
  const files = createFileStore(fileStoreRoot(config.dataDir));
  const shared = { db: base.db, clock: base.clock, publicUrl: config.publicUrl, files, logger: base.logger };
  const bot = config.telegram
    ? createChatBot({ ...config.telegram, publicUrl: config.publicUrl }, shared)
    : undefined;
  return { deps: { ...shared, transport: bot?.transport }, bot };
}
