/** What a network client's own words send: files it uploads, and whether it sends its standard input. */

/** What a command sends besides the text of its arguments. */
export interface Upload {
  /** It sends what it reads on its standard input (`curl -d @-`, `curl -T -`). */
  stdin: boolean;
  /** Local files it sends (`curl -d @f`, `-F x=@f`, `-T f`, `wget --post-file=f`, `scp f host:`). */
  files: string[];
}

/** curl's options whose value may be `@file` (or, for a form, `name=@file`/`name=<file`), and the one whose value is a file. */
const CURL_DATA = /^(?:-d|--data|--data-binary|--data-ascii|--data-urlencode|--json)$/;
const CURL_FORM = /^(?:-F|--form)$/;
const CURL_UPLOAD = /^(?:-T|--upload-file)$/;

/** The file or standard input (`-`) a curl option's `value` sends, if it sends one. */
function curlPayload(option: string, value: string): string | undefined {
  if (CURL_UPLOAD.test(option)) return value === '.' ? '-' : value;
  if (CURL_FORM.test(option)) {
    const m = /^[^=]*=[@<]([^;]*)/.exec(value);
    return m?.[1];
  }
  // `--data-urlencode name@file` as well as `@file`.
  const at = option === '--data-urlencode' ? value.indexOf('@') : value.startsWith('@') ? 0 : -1;
  return at < 0 ? undefined : value.slice(at + 1);
}

function curl(args: readonly string[]): Upload {
  const payloads: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    let option: string | undefined;
    let value: string | undefined;
    const eq = a.indexOf('=');
    if (a.startsWith('--')) {
      option = eq < 0 ? a : a.slice(0, eq);
      value = eq < 0 ? args[++i] : a.slice(eq + 1);
      if (!CURL_DATA.test(option) && !CURL_FORM.test(option) && !CURL_UPLOAD.test(option)) {
        if (eq < 0) i--;
        continue;
      }
    } else if (/^-[a-zA-Z]/.test(a)) {
      // A cluster of short options: the first of d, F, T takes the rest of the word or the next one.
      const at = a.slice(1).search(/[dFT]/);
      if (at < 0) continue;
      option = `-${a[at + 1]}`;
      value = a.length > at + 2 ? a.slice(at + 2) : args[++i];
    } else continue;
    const payload = value === undefined ? undefined : curlPayload(option, value);
    if (payload !== undefined) payloads.push(payload);
  }
  return { stdin: payloads.includes('-'), files: payloads.filter((p) => p !== '-' && p !== '') };
}

function wget(args: readonly string[]): Upload {
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const m = /^--(?:post|body)-file(?:=(.*))?$/.exec(args[i]!);
    if (m) files.push(m[1] ?? args[++i] ?? '');
  }
  return {
    stdin: files.includes('-') || files.includes('/dev/stdin'),
    files: files.filter((f) => f !== '' && f !== '-' && f !== '/dev/stdin'),
  };
}

/** `scp`/`rsync` of local files to `host:path` (the last operand). */
function copyOut(args: readonly string[]): Upload | undefined {
  const operands = args.filter((a) => !a.startsWith('-'));
  const to = operands.at(-1);
  if (operands.length < 2 || to === undefined || !/^[^/\s:]+:/.test(to)) return undefined;
  return { stdin: false, files: operands.slice(0, -1).filter((f) => !/^[^/\s:]+:/.test(f)) };
}

/**
 * What the command `name` (a base name) with `args` (its own words, without redirections) uploads, if it is a
 * client that sends to another host: curl and wget always (their arguments travel), with the files
 * and standard input their options send; scp and rsync to `host:`.
 */
export function uploads(name: string, args: readonly string[]): Upload | undefined {
  if (name === 'curl') return curl(args);
  if (name === 'wget') return wget(args);
  if (name === 'scp' || name === 'rsync') return copyOut(args);
  return undefined;
}
