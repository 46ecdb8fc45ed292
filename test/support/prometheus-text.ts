/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests:
 * every line must be a HELP, a TYPE or a sample of a family declared before it, with
 * well-formed labels and a number, or this throws naming the line. What a scraper would
 * refuse, this refuses.
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
  help: string;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;
const SUFFIXES: Record<MetricType, string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [index, line] of lines.entries()) {
    const fail = (why: string): never => {
      throw new Error(`line ${index + 1} ${JSON.stringify(line)}: ${why}`);
    };
    if (line === '') continue;
    const help = line.match(new RegExp(`^# HELP (${NAME}) (.*)$`));
    if (help) {
      familyOf(families, help[1]!).help = help[2]!;
      continue;
    }
    const type = line.match(new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`));
    if (type) {
      const family = familyOf(families, type[1]!);
      if (family.samples.length > 0) fail('TYPE after samples');
      family.type = type[2] as MetricType;
      continue;
    }
    if (line.startsWith('#')) fail('a comment that is neither HELP nor TYPE');
    const sample = line.match(SAMPLE) ?? fail('not a sample line');
    const [, name, labelText, valueText] = sample;
    const family = [...families.values()].find((each) => SUFFIXES[each.type].some((suffix) => each.name + suffix === name));
    if (family === undefined) fail(`sample of an undeclared family ${name}`);
    const value = parseValue(valueText!) ?? fail(`value ${valueText} is not a number`);
    family!.samples.push({ name: name!, labels: parseLabels(labelText ?? '', fail), value });
  }
  return families;
}

function familyOf(families: Map<string, Family>, name: string): Family {
  let family = families.get(name);
  if (family === undefined) {
    family = { name, type: 'untyped', help: '', samples: [] };
    families.set(name, family);
  }
  return family;
}

/** As Prometheus reads it (Go's ParseFloat): special values in any case, so prom-client's `Nan` is fine. */
function parseValue(text: string): number | undefined {
  const special = text.toLowerCase();
  if (special === '+inf' || special === 'inf') return Infinity;
  if (special === '-inf') return -Infinity;
  if (special === 'nan') return NaN;
  return /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(text) ? Number(text) : undefined;
}

function parseLabels(text: string, fail: (why: string) => never): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text) ?? fail(`bad labels {${text}}`);
    if (match[1]! in labels) fail(`label ${match[1]} twice`);
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
    if (match[3] === '') break;
  }
  return labels;
}

/** The one sample of `name` whose labels include `labels`; throws when there is none. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) return sample.value;
    }
  }
  throw new Error(`no sample ${name}${JSON.stringify(labels)}`);
}
