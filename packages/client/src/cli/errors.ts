/**
 * The a2a-cli error contract (SPEC.md v0.2 §9.4, Appendix B, Appendix E): a protocol failure
 * carries the A2A error's name, a failure of the CLI's own an `A2ACLI_ERR_*` code; each maps to
 * one exit status (§9.6: 1 failure, 2 usage, 3 unreachable, 4 authentication, 5 timeout).
 */

import type { CardViolation } from '../card-schema.js';
import { A2AClientError } from '../errors.js';

export interface ErrorEnvelope {
  error: {
    code: string;
    message: string;
    hint: string | null;
    a2aCode: string | number | null;
    /** Ours, beyond Appendix B: every rule a card broke, for `card get --validate`. */
    violations?: CardViolation[];
  };
}

export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint: string | null = 'Run `a2a --help` (or `a2a <command> --help`).',
  ) {
    super(message);
  }
}

export interface Classified {
  envelope: ErrorEnvelope;
  exitCode: number;
}

/** What each certificate failure means and what to do, by the TLS error code Node gives. */
const TLS_HINTS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT:
    "The agent's certificate is self-signed. Trust its CA with NODE_EXTRA_CA_CERTS=<ca.pem>, or (development only) pass --insecure.",
  SELF_SIGNED_CERT_IN_CHAIN:
    "The agent's certificate chain ends in a self-signed CA this machine does not trust. Add it with NODE_EXTRA_CA_CERTS=<ca.pem>, or (development only) pass --insecure.",
  CERT_HAS_EXPIRED:
    "The agent's certificate has expired; its operator must renew it (--insecure skips the check, development only).",
  CERT_NOT_YET_VALID:
    "The agent's certificate is not valid yet: check this machine's clock, or the certificate's start date.",
  ERR_TLS_CERT_ALTNAME_INVALID:
    "The agent's certificate is for another host name than the one in the URL: use the name the certificate lists, or fix the certificate.",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "The agent's certificate is signed by a CA this machine does not know, or its server omits the intermediate certificates. Add the CA with NODE_EXTRA_CA_CERTS=<ca.pem>.",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    "The agent's certificate is signed by a CA this machine does not know. Add it with NODE_EXTRA_CA_CERTS=<ca.pem>, or (development only) pass --insecure.",
};

/** The hint for a TLS failure, from the error code found down the error's cause chain. */
export function tlsHint(error: unknown): string | undefined {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && TLS_HINTS[code] !== undefined) return TLS_HINTS[code];
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function classify(error: unknown, context: { credentialsGiven: boolean; debugHint: boolean }): Classified {
  const make = (
    code: string,
    message: string,
    hint: string | null,
    exitCode: number,
    a2aCode: string | number | null = null,
  ): Classified => ({
    envelope: { error: { code, message, hint, a2aCode } },
    exitCode,
  });
  if (error instanceof UsageError) return make('A2ACLI_ERR_USAGE', error.message, error.hint, 2);
  if (!A2AClientError.is(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return make('A2ACLI_ERR_INTERNAL', message, 'Run again with --debug to see what the CLI did.', 1);
  }
  switch (error.kind) {
    case 'usage':
      return make('A2ACLI_ERR_USAGE', error.message, 'Run `a2a <command> --help`.', 2);
    case 'card-not-found':
      return make(
        'A2ACLI_ERR_CARD_NOT_FOUND',
        error.message,
        'Check the -a/--agent-card reference: a host, a base URL, a card URL or a file.',
        3,
        error.status ?? null,
      );
    case 'card-invalid': {
      if (Array.isArray(error.data)) {
        const invalid = make(
          'A2ACLI_ERR_CARD_INVALID',
          error.message,
          "The agent's card breaks its version's schema: its operator must fix each listed member.",
          1,
        );
        invalid.envelope.error.violations = error.data as CardViolation[];
        return invalid;
      }
      return make(
        'A2ACLI_ERR_CARD_INVALID',
        error.message,
        'Is this the URL of an A2A agent? Try `a2a card get <url>`.',
        1,
      );
    }
    case 'card-unverified':
      return make(
        'A2ACLI_ERR_CARD_UNVERIFIED',
        error.message,
        "Check the keys given (--jwks, --trusted-jku) are this agent's; a card changed after signing is refused.",
        1,
      );
    case 'unreachable':
      return make(
        'A2ACLI_ERR_UNREACHABLE',
        error.message,
        tlsHint(error) ?? 'Check the URL and that the agent is running; --debug shows each try.',
        3,
        error.status ?? null,
      );
    case 'auth':
      return context.credentialsGiven
        ? make(
            'A2ACLI_ERR_AUTH_FAILED',
            error.message,
            'Check the credential passed with --bearer / --api-key / --svc-param.',
            4,
            error.status ?? null,
          )
        : make(
            'A2ACLI_ERR_CREDENTIALS_MISSING',
            error.message,
            'Pass a credential: --bearer <token> or --api-key <key> (or A2ACLI_BEARER / A2ACLI_API_KEY).',
            4,
            error.status ?? null,
          );
    case 'timeout':
      return make(
        'A2ACLI_ERR_TIMEOUT',
        error.message,
        'Raise --timeout, or use --async and `a2a task get --wait` later.',
        5,
      );
    case 'aborted':
      return make('A2ACLI_ERR_INTERNAL', error.message, null, 1);
    case 'no-interface':
      return make(
        'VersionNotSupportedError',
        error.message,
        /0\.3/.test(error.message)
          ? 'Add --a2a-version 0.3 to talk to a 0.3 agent.'
          : 'Use --transport to pick a binding the card offers.',
        1,
      );
    case 'invalid-response':
      return make(
        'InvalidAgentResponseError',
        error.message,
        'Is this an A2A agent? Run with --debug to see its answers.',
        1,
        error.status ?? null,
      );
    case 'protocol':
      return make(
        error.a2aName ?? 'A2ACLI_ERR_INTERNAL',
        error.message,
        context.debugHint ? 'Run again with --debug to see the protocol exchange.' : null,
        1,
        error.wireCode ?? null,
      );
  }
}
