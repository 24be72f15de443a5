import { Text, Type } from '../../platform/http/schema-kit.ts';

export const SignupIn = Type.Object({
  email: Text({ maxLength: 200, format: 'email' }),
  password: Text({ minLength: 10, maxLength: 200, description: 'At least 10 characters.' }),
  name: Text({ minLength: 1, maxLength: 120 }),
});

export const LoginIn = Type.Object({
  email: Text({ maxLength: 200, format: 'email' }),
  password: Text({ minLength: 1, maxLength: 200 }),
});

export const UserOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});

export const SessionOut = Type.Object({
  session_token: Type.String({ description: 'Send as Authorization: Bearer <session_token>. Shown once.' }),
  csrf_token: Type.String({
    description: 'Browsers using the session cookie send it as X-CSRF-Token on writes.',
  }),
  expires_at: Type.String({ format: 'date-time' }),
});

export const SignupOut = Type.Object({
  user: UserOut,
  session_token: Type.String(),
  csrf_token: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
});

export const PasswordResetIn = Type.Object({
  email: Text({ maxLength: 200, format: 'email' }),
});

export const PasswordResetAccepted = Type.Object({
  detail: Type.String({ description: 'The same sentence whether or not the address has an account.' }),
});

export const PasswordResetConfirmIn = Type.Object({
  token: Text({ minLength: 1, maxLength: 200, description: 'The token of the link in the mail.' }),
  password: Text({ minLength: 10, maxLength: 200, description: 'The new password: at least 10 characters.' }),
});

export const PasswordResetDone = Type.Object({
  reset: Type.Boolean({
    description: 'True: log in with the new password; every old session is signed out.',
  }),
});
