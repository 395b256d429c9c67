/**
 * Rules for program text a hook runs in another language (a here-document fed to `python3 -`,
 * `node`, `perl`, `ruby`, `php`): a program that downloads and evaluates code it builds at run
 * time (`exec(urlopen(u).read())`, `eval(await (await fetch(u)).text())`) is download-and-execute.
 */
import type { HookLine, ProgramLanguage } from './read-hook.ts';

/** What marks a program as downloading, and as evaluating code built at run time. Each is a plain alternation: linear in a line. */
export const PROGRAM_MARKS: Record<ProgramLanguage, { downloads: RegExp; evaluates: RegExp }> = {
  python: {
    downloads:
      /\b(?:urlopen|urlretrieve|urllib3|http\.client)\b|\b(?:requests|httpx)\.(?:get|post|request|stream)\b|\bwget\.download\b/,
    evaluates: /(?<![\w.])(?:exec|eval)\s*\(/,
  },
  node: {
    downloads: /\bfetch\s*\(|\bhttps?\.(?:get|request)\s*\(|['"](?:axios|got|node-fetch|undici)['"]/,
    evaluates: /(?<![\w.])eval\s*\(|\bnew\s+Function\s*\(|\bvm\.\w+|\brunIn(?:This|New)?Context\b|\.then\(\s*eval\b/,
  },
  perl: { downloads: /\bLWP::|\bHTTP::Tiny\b|\bgetstore\s*\(/, evaluates: /\beval\s*\(?\s*(?:\$|get\s*\()/ },
  ruby: {
    downloads: /\bopen-uri\b|\bURI\.open\b|\bNet::HTTP\b|\bHTTParty\b/,
    evaluates: /(?<![\w.])(?:eval|instance_eval)\b/,
  },
  php: { downloads: /\bfile_get_contents\s*\(\s*['"]https?:|\bcurl_exec\b/, evaluates: /(?<![\w.])eval\s*\(/ },
};

/**
 * The lines (0-based) at which a program that downloads evaluates built code: the first line by
 * which one program has done both.
 */
export function evaluatedDownloads(lines: readonly HookLine[]): number[] {
  const found: number[] = [];
  let unit = 0;
  let downloads = false;
  let evaluates = false;
  lines.forEach((line, i) => {
    if (!line.program) return;
    if (line.program.unit !== unit) {
      ({ unit } = line.program);
      downloads = evaluates = false;
    }
    if (downloads && evaluates) return;
    const marks = PROGRAM_MARKS[line.program.language];
    downloads ||= marks.downloads.test(line.text);
    evaluates ||= marks.evaluates.test(line.text);
    if (downloads && evaluates) found.push(i);
  });
  return found;
}
