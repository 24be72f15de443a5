import { renderDocument } from '../../platform/web/render.ts';

// The password reset mail: the link in both parts, the HTML one rendered from TSX.

function ResetMailBody({ link }: { link: string }) {
  return (
    <html lang="en">
      <body>
        <p>Someone (we hope you) asked to set a new password for your Tollbook account.</p>
        <p>
          <a href={link}>Choose a new password</a> within 30 minutes; the link works once.
        </p>
        <p>If you did not ask, ignore this mail: your password stays as it is.</p>
      </body>
    </html>
  );
}

/** The mail that carries a reset link to `to`. */
export function resetMail(to: string, link: string) {
  const text =
    `Someone (we hope you) asked to set a new password for your Tollbook account.\n\n` +
    `Open this link within 30 minutes to choose one; it works once:\n${link}\n\n` +
    `If you did not ask, ignore this mail: your password stays as it is.\n`;
  return {
    to,
    subject: 'Set a new Tollbook password',
    text,
    html: renderDocument(<ResetMailBody link={link} />),
  };
}
