import { Field, Form, type FormState, Notice } from '../../platform/web/components.tsx';
import { PublicLayout } from '../../platform/web/layout.tsx';
import type { ResetLinkState } from './password-reset.ts';

// Log in and sign up: the two pages a person meets before they have a session. Their forms
// carry no CSRF token (there is no session yet); the plumbing refuses posts from other sites.

export function LoginPage({ form, next }: { form: FormState; next: string }) {
  return (
    <PublicLayout title="Log in">
      <h1>Log in</h1>
      <div class="card">
        <Form action={`/app/login${next ? `?next=${encodeURIComponent(next)}` : ''}`} csrf="" form={form}>
          <Field name="email" label="Email" type="email" form={form} autocomplete="username" required />
          <Field
            name="password"
            label="Password"
            type="password"
            form={{ ...form, values: {} }}
            autocomplete="current-password"
            required
          />
          <button type="submit">Log in</button>
        </Form>
      </div>
      <p>
        <a href="/app/forgot-password">Forgot your password?</a>
      </p>
      <p>
        New here?{' '}
        <a href={`/app/signup${next ? `?next=${encodeURIComponent(next)}` : ''}`}>Create an account</a>.
      </p>
    </PublicLayout>
  );
}

export function SignupPage({ form, next = '' }: { form: FormState; next?: string }) {
  return (
    <PublicLayout title="Sign up">
      <h1>Create your account</h1>
      <div class="card">
        <Form action={`/app/signup${next ? `?next=${encodeURIComponent(next)}` : ''}`} csrf="" form={form}>
          <Field name="name" label="Your name" form={form} autocomplete="name" required maxLength={120} />
          <Field name="email" label="Email" type="email" form={form} autocomplete="username" required />
          <Field
            name="password"
            label="Password"
            type="password"
            hint="At least 10 characters."
            form={{ ...form, values: {} }}
            autocomplete="new-password"
            required
          />
          <button type="submit">Sign up</button>
        </Form>
      </div>
      <p>
        Already have an account?{' '}
        <a href={`/app/login${next ? `?next=${encodeURIComponent(next)}` : ''}`}>Log in</a>.
      </p>
    </PublicLayout>
  );
}

// A way back in without the password: ask for a link by mail, open it, choose a new password.
// The reset pages answer with Referrer-Policy no-referrer, so the link's token never leaves.

function AskForLinkForm({ form, label }: { form: FormState; label: string }) {
  return (
    <Form action="/app/forgot-password" csrf="" form={form}>
      <Field
        name="email"
        label="Email"
        type="email"
        form={form}
        autocomplete="username"
        hint="The address you log in with."
        required
      />
      <button type="submit">{label}</button>
    </Form>
  );
}

export function ForgotPasswordPage({ form }: { form: FormState }) {
  return (
    <PublicLayout title="Forgot your password?">
      <h1>Forgot your password?</h1>
      <p>Type the address you log in with; we mail it a link to choose a new password.</p>
      <div class="card">
        <AskForLinkForm form={form} label="Send me a link" />
      </div>
      <p>
        Remembered it? <a href="/app/login">Log in</a>.
      </p>
    </PublicLayout>
  );
}

export function LinkSentPage() {
  return (
    <PublicLayout title="Check your mail">
      <h1>Check your mail</h1>
      <Notice kind="ok">
        If an account uses that address, a link to choose a new password is on its way. It works once, for 30
        minutes.
      </Notice>
      <p>Nothing after a few minutes? Look in your spam folder, or check the address and ask again.</p>
      <p>
        <a href="/app/forgot-password">Ask for another link</a> · <a href="/app/login">Log in</a>
      </p>
    </PublicLayout>
  );
}

export function ResetPasswordPage({ token, form }: { token: string; form: FormState }) {
  return (
    <PublicLayout title="Choose a new password">
      <h1>Choose a new password</h1>
      <div class="card">
        <Form action="/app/reset-password" csrf="" form={form}>
          <input type="hidden" name="token" value={token} />
          <Field
            name="password"
            label="New password"
            type="password"
            hint="At least 10 characters."
            form={{ ...form, values: {} }}
            autocomplete="new-password"
            required
            maxLength={200}
          />
          <Field
            name="password_confirm"
            label="The same password again"
            type="password"
            form={{ ...form, values: {} }}
            autocomplete="new-password"
            required
            maxLength={200}
          />
          <button type="submit">Set the new password</button>
        </Form>
      </div>
      <p>Setting it signs you out everywhere else.</p>
    </PublicLayout>
  );
}

const REFUSED_LINK: Record<Exclude<ResetLinkState, 'live'>, { title: string; sentence: string }> = {
  used: {
    title: 'This link was already used',
    sentence:
      'A reset link works once, and this one has already set a password (or a newer link did). If you still cannot log in, ask for a new link.',
  },
  expired: {
    title: 'This link has expired',
    sentence: 'A reset link works for 30 minutes, and this one is older. Ask for a new link below.',
  },
  unknown: {
    title: 'This link does not work',
    sentence:
      'This is not a reset link we sent, or it was cut short when copied. Open the link from the mail again, or ask for a new one.',
  },
};

export function ResetLinkRefusedPage({ state }: { state: Exclude<ResetLinkState, 'live'> }) {
  const { title, sentence } = REFUSED_LINK[state];
  return (
    <PublicLayout title={title}>
      <h1>{title}</h1>
      <Notice kind="error">{sentence}</Notice>
      <div class="card">
        <AskForLinkForm form={{ values: {}, errors: {} }} label="Send me a new link" />
      </div>
      <p>
        <a href="/app/login">Log in</a>
      </p>
    </PublicLayout>
  );
}

export function PasswordResetDonePage() {
  return (
    <PublicLayout title="Your new password is set">
      <h1>Your new password is set</h1>
      <Notice kind="ok">Log in with it now. Every other session of your account was signed out.</Notice>
      <p>
        <a class="button" href="/app/login">
          Log in
        </a>
      </p>
    </PublicLayout>
  );
}
