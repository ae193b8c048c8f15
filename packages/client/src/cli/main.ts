/**
 * `a2a`: the command line of a2aproject/a2a-cli `specification/SPEC.md` v0.2 (see
 * docs/compliance.md for what is covered), on this package's client — so a send is retried with
 * its messageId, and a stream resumes after a drop by itself.
 *
 * Output is `text` (labelled fields), `json` (one document) or JSON Lines (`--stream`, or
 * `-o jsonl`); errors are the spec's envelope, and the exit status says whether the CLI did its
 * job, never how the task ended (§4.6). The commands are in commands.ts, the options in options.ts.
 */

import { type Context, cardGet, pushConfig, send, taskCancel, taskGet, taskList, taskSubscribe } from './commands.js';
import { completion } from './completion.js';
import { conformance } from './conformance.js';
import { taskDownload } from './download.js';
import { classify, UsageError } from './errors.js';
import { COMMANDS, help, outputFormat, parse, parseDuration, serviceParameters, str, version } from './options.js';
import { redactSecrets } from './redact.js';
import { type Format, Printer, terminalSafe } from './render.js';
import { authLogin, authLogout, authStatus, configShow } from './settings.js';

// ---- entry ----

/** `-o`/`--output` as given on the command line (or A2ACLI_OUTPUT), read before full parsing. */
function formatOf(argv: string[]): Format {
  let value = process.env.A2ACLI_OUTPUT;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-o' || arg === '--output') value = argv[i + 1];
    else if (arg.startsWith('--output=')) value = arg.slice('--output='.length);
    else if (arg.startsWith('-o') && arg.length > 2) value = arg.slice(2);
  }
  return value === 'json' || value === 'jsonl' ? value : 'text';
}

export async function main(
  argv: string[],
  io: { stdout?: NodeJS.WritableStream; stderr?: NodeJS.WritableStream } = {},
): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  // Everything on stderr is text for a terminal, whatever -o says: warnings quote agents' words.
  const stderr = terminalSafe(io.stderr ?? process.stderr);
  // Known before parsing, so that even a usage error comes in the format asked for.
  let format: Format = formatOf(argv);
  let credentialsGiven = false;
  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  let redact = (text: string) => text;
  const redactors: ((text: string) => string)[] = [];
  let ctx: Context | undefined;
  try {
    const parsed = parse(argv);
    const { values, command } = parsed;
    format = outputFormat(values);
    credentialsGiven = [values.bearer, values['api-key'], values['svc-param']].some((v) => v !== undefined);
    // Credential values given directly are redacted from every message, even before a request.
    const secrets = [
      str(values, 'bearer'),
      str(values, 'api-key'),
      str(values, 'client-secret'),
      ...Object.values(serviceParameters(values)),
    ].filter((s): s is string => s !== undefined && s.length >= 4 && !/^(file|exec|exec-shell):/.test(s));
    redact = (text) => secrets.reduce((out, secret) => out.split(secret).join('***'), text);
    if (values.version === true) {
      stdout.write(`${version()}\n`);
      return 0;
    }
    if (command === '' || command === 'help' || values.help === true) {
      const topic = command === 'help' ? parsed.positionals.join(' ') || undefined : command || undefined;
      if (topic !== undefined && COMMANDS[topic] === undefined) throw new UsageError(`Unknown command "${topic}".`);
      stdout.write(help(topic));
      return 0;
    }
    if (COMMANDS[command] === undefined) throw new UsageError(`Unknown command "${command}".`);
    for (const warning of parsed.warnings) stderr.write(`warning: ${warning}\n`);
    if (values.insecure === true) {
      stderr.write('WARNING: --insecure: TLS certificates are not verified; credentials may go to an impostor.\n');
    }
    const timeout = str(values, 'timeout');
    const poll = str(values, 'poll-interval');
    ctx = {
      values,
      printer: new Printer(format, stdout, values.verbose === true),
      format,
      reference: str(values, 'agent-card'),
      timeoutMs: timeout === undefined ? undefined : parseDuration(timeout, 'timeout'),
      pollIntervalMs: poll === undefined ? 2000 : parseDuration(poll, 'poll-interval'),
      signal: controller.signal,
      credentialsGiven,
      stderr,
      redactors,
    };
    if (command !== 'send' && command !== 'task subscribe' && values.stream === true) {
      throw new UsageError('--stream is for send and task subscribe.');
    }
    switch (command) {
      case 'card get':
        await cardGet(ctx, parsed);
        break;
      case 'send':
        await send(ctx, parsed);
        break;
      case 'task get':
        await taskGet(ctx, parsed);
        break;
      case 'task cancel':
        await taskCancel(ctx, parsed);
        break;
      case 'task list':
        await taskList(ctx);
        break;
      case 'task download':
        await taskDownload(ctx, parsed);
        break;
      case 'config show':
        configShow(ctx, parsed);
        break;
      case 'auth login':
        await authLogin(ctx);
        break;
      case 'auth logout':
        authLogout(ctx);
        break;
      case 'auth status':
        authStatus(ctx);
        break;
      case 'conformance':
        await conformance(ctx, parsed);
        break;
      case 'completion':
        stdout.write(completion(parsed.positionals[0]));
        break;
      case 'task subscribe':
        await taskSubscribe(ctx, parsed);
        break;
      default:
        await pushConfig(ctx, parsed, command.split(' ')[2] as string);
    }
    return 0;
  } catch (error) {
    const { envelope, exitCode } = classify(error, {
      // A credential stored by `auth login` counts as given once the command has read it.
      credentialsGiven: credentialsGiven || ctx?.credentialsGiven === true,
      debugHint: true,
    });
    // The literal values, then what each client read from file: and exec: (known only to it).
    // Then what no one knew beforehand: a URL's password, a secret member of a body.
    envelope.error.message = redactSecrets(
      redactors.reduce((text, more) => more(text), redact(envelope.error.message)),
    );
    if (format === 'text') {
      const { code, message, hint } = envelope.error;
      stderr.write(`a2a: ${message} [${code}]${hint ? ` Hint: ${hint}` : ''}\n`);
    } else stdout.write(`${JSON.stringify(envelope)}\n`);
    return exitCode;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** The process entry (bin/a2a.js): runs `main` on argv and sets the exit status. */
export async function run(): Promise<void> {
  // A reader that stops early (`a2a … | head`) closes the pipe: stop quietly, as other tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  process.exitCode = await main(process.argv.slice(2));
}
