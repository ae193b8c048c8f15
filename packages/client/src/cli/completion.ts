/**
 * `a2a completion bash|zsh|fish` (a2a-cli A2ACLI_CLI_002): completion scripts generated from the
 * command table and option specs in options.ts, so a new command or flag completes without
 * touching this file. Each shell gets the same data — the command words and, per command, its
 * options — in its own syntax.
 */

import { UsageError } from './errors.js';
import { COMMANDS, GLOBAL } from './options.js';

/** Words completing after `a2a`, after `a2a <group>` and so on: `task` → get, cancel, … */
function commandTree(): Map<string, string[]> {
  const tree = new Map<string, Set<string>>();
  for (const command of [...Object.keys(COMMANDS), 'help']) {
    const words = command.split(' ');
    for (let i = 0; i < words.length; i++) {
      const prefix = words.slice(0, i).join(' ');
      if (!tree.has(prefix)) tree.set(prefix, new Set());
      tree.get(prefix)?.add(words[i] as string);
    }
  }
  return new Map([...tree].map(([prefix, words]) => [prefix, [...words]]));
}

function flagsOf(command: string): string[] {
  const options = { ...GLOBAL, ...(COMMANDS[command]?.options ?? {}) };
  return Object.entries(options).flatMap(([name, spec]) => [`--${name}`, ...(spec.short ? [`-${spec.short}`] : [])]);
}

function bash(): string {
  const tree = commandTree();
  const cases = [...tree].map(([prefix, words]) => `    "${prefix}") words="${words.join(' ')}" ;;`).join('\n');
  const flags = Object.keys(COMMANDS)
    .map((command) => `    "${command}") flags="${flagsOf(command).join(' ')}" ;;`)
    .join('\n');
  return `# a2a completion for bash: source <(a2a completion bash)
_a2a() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" word words="" flags="${flagsOf('').join(' ')}" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && break
    case "\${path:+$path }$word" in
${[...new Set([...tree.keys(), ...Object.keys(COMMANDS)])]
  .filter((p) => p !== '')
  .map((p) => `      "${p}") path="${p}" ;;`)
  .join('\n')}
      *) break ;;
    esac
  done
  case "$path" in
${cases}
  esac
  case "$path" in
${flags}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
}
complete -o default -F _a2a a2a
`;
}

function zsh(): string {
  // zsh runs bash completion functions through bashcompinit: one generated body, two shells.
  return `#compdef a2a
# a2a completion for zsh: source <(a2a completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bash().split('\n').slice(1).join('\n')}`;
}

function fish(): string {
  const tree = commandTree();
  const lines = ['# a2a completion for fish: a2a completion fish | source', 'complete -c a2a -f'];
  for (const [prefix, words] of tree) {
    const condition =
      prefix === ''
        ? '__fish_use_subcommand'
        : `__fish_seen_subcommand_from ${prefix.split(' ').at(-1)}; and not __fish_seen_subcommand_from ${words.join(' ')}`;
    for (const word of words) {
      const summary = COMMANDS[prefix === '' ? word : `${prefix} ${word}`]?.summary ?? '';
      lines.push(`complete -c a2a -n '${condition}' -a '${word}' -d '${summary.replace(/'/g, "\\'")}'`);
    }
  }
  for (const [name, spec] of Object.entries(GLOBAL)) {
    lines.push(
      `complete -c a2a -l ${name}${spec.short ? ` -s ${spec.short}` : ''}${spec.type === 'string' ? ' -r' : ''}`,
    );
  }
  for (const [command, spec] of Object.entries(COMMANDS)) {
    const last = command.split(' ').at(-1) as string;
    for (const [name, option] of Object.entries(spec.options)) {
      lines.push(
        `complete -c a2a -n '__fish_seen_subcommand_from ${last}' -l ${name}${option.type === 'string' ? ' -r' : ''}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

const SHELLS: Record<string, () => string> = { bash, zsh, fish };

export function completion(shell: string | undefined): string {
  const generate = shell === undefined ? undefined : SHELLS[shell];
  if (generate === undefined) {
    throw new UsageError(
      `completion needs a shell: bash, zsh or fish${shell ? ` (not "${shell}")` : ''}.`,
      'Usage: a2a completion bash|zsh|fish',
    );
  }
  return generate();
}
