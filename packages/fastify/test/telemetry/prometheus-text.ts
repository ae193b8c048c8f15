/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4), written from the
 * format's specification (prometheus.io, "Exposition formats"), so a test fails on any line a
 * Prometheus server would reject or misread, rather than skipping it:
 * - `# HELP <name> <text>` and `# TYPE <name> <counter|gauge|histogram|summary|untyped>`, at most
 *   one each per family, TYPE before the family's first sample; other `#` lines are comments;
 * - samples `name{label="value",…} value [timestamp]` with the format's name, label and escape
 *   rules (`\\`, `\"`, `\n` in label values; `\\`, `\n` in help), values as Go floats (`NaN`,
 *   `+Inf`, `-Inf`), no duplicate series, a family's lines all together;
 * - histograms: `_bucket` series with an `le` label, cumulative (non-decreasing) counts, a `+Inf`
 *   bucket equal to `_count`, and a `_sum`; a counter's samples are its name (prom-client names
 *   counters `…_total`, and their TYPE line carries that name);
 * - the exposition ends with a line feed.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

class ParseError extends Error {
  constructor(line: number, message: string) {
    super(`Prometheus text format, line ${line}: ${message}`);
  }
}

function parseValue(text: string, line: number): number {
  if (text === 'NaN') return Number.NaN;
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new ParseError(line, `invalid value "${text}"`);
  return Number(text);
}

/** The family a sample name belongs to, given the declared types. */
function familyOf(name: string, types: Map<string, MetricType>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      const type = types.get(base);
      if (type === 'histogram' || (type === 'summary' && suffix !== '_bucket')) return base;
    }
  }
  return name;
}

/** Parses a sample line's labels starting at `i` (just after `{`); returns them and the index after `}`. */
function parseLabels(text: string, start: number, line: number): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  let i = start;
  for (;;) {
    if (text[i] === '}') return [labels, i + 1];
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new ParseError(line, 'label without "="');
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new ParseError(line, `invalid label name "${name}"`);
    if (Object.hasOwn(labels, name)) throw new ParseError(line, `label "${name}" given twice`);
    if (text[eq + 1] !== '"') throw new ParseError(line, `label "${name}" value must be quoted`);
    let value = '';
    let j = eq + 2;
    for (; ; j++) {
      const c = text[j];
      if (c === undefined) throw new ParseError(line, `unterminated value of label "${name}"`);
      if (c === '"') break;
      if (c === '\\') {
        const next = text[++j];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else throw new ParseError(line, `invalid escape "\\${next ?? ''}" in label "${name}"`);
      } else {
        value += c;
      }
    }
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new ParseError(line, `expected "," or "}" after label "${name}"`);
  }
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new ParseError(text.split('\n').length, 'the exposition must end with a line feed');
  const families = new Map<string, Family>();
  const types = new Map<string, MetricType>();
  const helps = new Set<string>();
  const series = new Set<string>();
  const finished = new Set<string>();
  let current: string | undefined;
  const enter = (name: string, line: number): Family => {
    if (current !== name) {
      if (finished.has(name)) throw new ParseError(line, `lines of "${name}" are not together`);
      if (current !== undefined) finished.add(current);
      current = name;
    }
    let family = families.get(name);
    if (family === undefined) {
      family = { name, type: types.get(name) ?? 'untyped', help: undefined, samples: [] };
      families.set(name, family);
    }
    return family;
  };
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const match = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(raw);
      if (match === null) return; // a comment
      const [, keyword, name = '', rest = ''] = match;
      if (!METRIC_NAME.test(name)) throw new ParseError(line, `invalid metric name "${name}"`);
      if (keyword === 'TYPE') {
        if (!TYPES.has(rest as MetricType)) throw new ParseError(line, `unknown type "${rest}"`);
        if (types.has(name)) throw new ParseError(line, `second TYPE line for "${name}"`);
        if (families.get(name)?.samples.length) throw new ParseError(line, `TYPE of "${name}" after its samples`);
        types.set(name, rest as MetricType);
        enter(name, line).type = rest as MetricType;
      } else {
        if (helps.has(name)) throw new ParseError(line, `second HELP line for "${name}"`);
        if (/\\[^\\n]|\\$/.test(rest)) throw new ParseError(line, `invalid escape in HELP of "${name}"`);
        helps.add(name);
        enter(name, line).help = rest.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
      }
      return;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(raw);
    if (nameMatch === null) throw new ParseError(line, `invalid sample line "${raw}"`);
    const name = nameMatch[0];
    let i = name.length;
    let labels: Record<string, string> = {};
    if (raw[i] === '{') [labels, i] = parseLabels(raw, i + 1, line);
    const rest = raw.slice(i);
    const parts = rest.trim().split(/[ \t]+/);
    if (!/^[ \t]/.test(rest) || parts.length < 1 || parts.length > 2) {
      throw new ParseError(line, `expected "<value> [timestamp]" after "${name}"`);
    }
    const value = parseValue(parts[0] as string, line);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1]))
      throw new ParseError(line, `invalid timestamp "${parts[1]}"`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (series.has(key)) throw new ParseError(line, `duplicate series ${key}`);
    series.add(key);
    const family = enter(familyOf(name, types), line);
    if (family.type === 'histogram') {
      if (name === `${family.name}_bucket`) {
        if (labels.le === undefined) throw new ParseError(line, `bucket of "${family.name}" without an "le" label`);
        parseValue(labels.le, line);
      } else if (name !== `${family.name}_sum` && name !== `${family.name}_count`) {
        throw new ParseError(line, `"${name}" is not a sample of histogram "${family.name}"`);
      }
    }
    if (family.type === 'counter' && (value < 0 || Number.isNaN(value))) {
      throw new ParseError(line, `counter "${name}" must be a non-negative number`);
    }
    family.samples.push({ name, labels, value });
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** Cumulative buckets ending in +Inf, which equals _count, and a _sum, for every label set. */
function checkHistogram(family: Family): void {
  const groups = new Map<string, Sample[]>();
  for (const sample of family.samples) {
    const { le: _le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    groups.set(key, [...(groups.get(key) ?? []), sample]);
  }
  for (const [key, samples] of groups) {
    const buckets = samples
      .filter((s) => s.name.endsWith('_bucket'))
      .map((s) => ({ le: parseValue(s.labels.le as string, 0), value: s.value }))
      .sort((a, b) => a.le - b.le);
    const count = samples.find((s) => s.name === `${family.name}_count`);
    const sum = samples.find((s) => s.name === `${family.name}_sum`);
    const where = `histogram "${family.name}" ${key}`;
    if (count === undefined || sum === undefined) throw new Error(`${where}: _count or _sum missing`);
    const inf = buckets.at(-1);
    if (inf === undefined || inf.le !== Number.POSITIVE_INFINITY) throw new Error(`${where}: no +Inf bucket`);
    if (inf.value !== count.value)
      throw new Error(`${where}: +Inf bucket ${inf.value} differs from _count ${count.value}`);
    for (let i = 1; i < buckets.length; i++) {
      if ((buckets[i] as { value: number }).value < (buckets[i - 1] as { value: number }).value) {
        throw new Error(`${where}: buckets are not cumulative`);
      }
    }
  }
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== name) continue;
      if (Object.entries(labels).every(([k, v]) => sample.labels[k] === v)) return sample.value;
    }
  }
  return undefined;
}
