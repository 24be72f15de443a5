import { assert } from '../../core/assert.ts';
import type { Role } from '../db/schema.ts';

// A membership that has been proven: the members row of this person in this space was read
// within the current request. Services that take a Member do not read the role again, so a book
// page, whose shell has read the viewer's books with their roles, spends no statement on it.
// There is still one way of checking access, the members row: only the code that reads it makes
// a Member (spaces' requireMember, for the app API, and the web shell's one read, for pages); the
// architecture test holds every other file to that.

/**
 * A proven membership. A class with a private field, so a plain object of the same shape is
 * not a Member, neither to the compiler nor at run time (`isMember`).
 */
export class Member {
  readonly #proven = true;
  readonly spaceId: string;
  readonly userId: string;
  readonly role: Role;

  private constructor(spaceId: string, userId: string, role: Role) {
    this.spaceId = spaceId;
    this.userId = userId;
    this.role = role;
  }

  /** Only for the code that has just read the members row (see the architecture test). */
  static fromMembersRow(row: { spaceId: string; userId: string; role: Role }): Member {
    return new Member(row.spaceId, row.userId, row.role);
  }

  static isMember(value: unknown): value is Member {
    return typeof value === 'object' && value !== null && #proven in value;
  }
}

/**
 * The space a proven member acts in, for a service that takes a Member instead of reading the
 * role again. A look-alike (a cast plain object) is a bug, refused before any query.
 */
export function spaceOfMember(member: Member): string {
  assert(Member.isMember(member), 'A membership must be proven by the spaces feature.');
  return member.spaceId;
}
