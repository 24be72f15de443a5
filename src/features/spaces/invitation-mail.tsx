import { renderDocument } from '../../platform/web/render.ts';

// The invitation mail: who invites, to which space, with which role; the link in both parts.

type InvitationMailFacts = { spaceName: string; inviter: string; role: string; link: string };

function InvitationMailBody({ spaceName, inviter, role, link }: InvitationMailFacts) {
  return (
    <html lang="en">
      <body>
        <p>
          {inviter} invites you to the books of {spaceName} on Tollbook, as {role}.
        </p>
        <p>
          <a href={link}>Accept the invitation</a> within 7 days; the link works once. If you have no Tollbook
          account yet, you make one on the way.
        </p>
        <p>If you did not expect this, ignore this mail.</p>
      </body>
    </html>
  );
}

/** The mail that carries an invitation's link to `to`. */
export function invitationMail(to: string, facts: InvitationMailFacts) {
  const text =
    `${facts.inviter} invites you to the books of ${facts.spaceName} on Tollbook, as ${facts.role}.\n\n` +
    `Open this link within 7 days to accept; it works once. If you have no Tollbook account yet, ` +
    `you make one on the way:\n${facts.link}\n\n` +
    `If you did not expect this, ignore this mail.\n`;
  return {
    to,
    subject: `Join ${facts.spaceName} on Tollbook`,
    text,
    html: renderDocument(<InvitationMailBody {...facts} />),
  };
}
