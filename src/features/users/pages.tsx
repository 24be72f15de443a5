import { Field, Form, type FormState } from '../../platform/web/components.tsx';
import { PublicLayout } from '../../platform/web/layout.tsx';

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
        New here? <a href="/app/signup">Create an account</a>.
      </p>
    </PublicLayout>
  );
}

export function SignupPage({ form }: { form: FormState }) {
  return (
    <PublicLayout title="Sign up">
      <h1>Create your account</h1>
      <div class="card">
        <Form action="/app/signup" csrf="" form={form}>
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
        Already have an account? <a href="/app/login">Log in</a>.
      </p>
    </PublicLayout>
  );
}
