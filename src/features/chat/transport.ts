// What the chat service needs from the messenger, spoken in its own words. bot.ts implements it
// with grammY against the Bot API; the service never sees grammY.

export type Button = { text: string; data: string };

export type Download =
  | { ok: true; bytes: Uint8Array; path: string }
  | { ok: false; reason: 'too_large' | 'failed'; detail: string };

export type ChatTransport = {
  /** The bot's @username (without the @), read once from getMe. */
  username(): Promise<string>;
  sendText(chatId: string, text: string): Promise<{ messageId: number }>;
  sendDocument(
    chatId: string,
    file: { bytes: Uint8Array; name: string },
    caption: string,
    buttons: Button[][],
  ): Promise<{ messageId: number }>;
  /** getFile, then the file itself, refusing anything larger than maxBytes. */
  download(fileId: string, maxBytes: number): Promise<Download>;
  answerButton(callbackQueryId: string, text: string): Promise<void>;
};
