/**
 * The length in lines of each named function, method and function-valued const in a source
 * file, from the line that opens it to the line that closes it. It reads the code as this
 * repository formats it (a body's closing brace at the indentation of the line that
 * opened it), which is what lets a line scan find the end without parsing TypeScript.
 */
export interface FunctionLength {
  name: string;
  line: number;
  lines: number;
}

const KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'else', 'function', 'do', 'try', 'with', 'new']);
/** `function name(`, `async function name(`, exported or not. */
const FUNCTION = /^(\s*)(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)/;
/** `const name = (...) => {` and `const name = async (...): T => {` opening a body on that line. */
const ARROW = /^(\s*)(?:export\s+)?(?:const|let)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|[\w$]+)\s*(?::[^=]+)?=>\s*\{\s*$/;
/** A class member opening a body: `  name(...) {`, `  async name(): T {`, `  constructor(...) {`, `  get name() {`. */
const METHOD = /^(\s+)(?:(?:public|private|protected|static|async|override|get|set)\s+)*(#?[\w$]+)\s*(?:<[^>]*>)?\(.*\)\s*(?::[^{]+)?\{\s*\}?\s*$/;

export function functionLengths(source: string): FunctionLength[] {
  const lines = source.split('\n');
  const found: FunctionLength[] = [];
  lines.forEach((text, index) => {
    const match = FUNCTION.exec(text) ?? ARROW.exec(text) ?? METHOD.exec(text);
    if (match === null || KEYWORDS.has(match[2]!)) return;
    const indent = match[1]!;
    for (let end = index; end < lines.length; end++) {
      const line = lines[end]!;
      // a one-line body, or the closing brace at the opening line's indentation
      if ((end === index && /\}\s*;?\s*$/.test(line) && !/\{\s*$/.test(line)) || (end > index && line.startsWith(`${indent}}`))) {
        found.push({ name: match[2]!, line: index + 1, lines: end - index + 1 });
        return;
      }
      // a less indented line before the close: not a body this scan understands (a type, an overload)
      if (end > index && line.trim() !== '' && !line.startsWith(indent)) return;
    }
  });
  return found;
}
