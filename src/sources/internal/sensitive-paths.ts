/**
 * Paths and commands a hook has no business touching at install time: credentials it could read,
 * places that make code run again at login, boot or on a schedule, and the files a command writes.
 */
import { posix } from 'node:path';

/** A home folder as a hook names it. */
const HOME = String.raw`(?:~|\$HOME|\$\{HOME\}|/root|/home/[^/\s]+)`;

/**
 * A word naming a credential (searched in the word, which may be `@file`, `--opt=file`, `<file`):
 * ssh private keys and folders, cloud and registry credentials, git's stored passwords, the
 * shadow files, a process's environment. `.npmrc`, `.netrc`, `.pypirc` count in a home folder only
 * (a package's own `.npmrc` in the root configures its registry; the user's holds their token).
 * Each alternative starts at a fixed character and is bounded by the word: linear in it.
 */
export const CREDENTIAL = new RegExp(
  [
    String.raw`(?:^|/)\.ssh(?:/(?:id_[\w-]+|identity)?)?$`,
    String.raw`(?:^|/)\.aws/credentials$`,
    String.raw`(?:^|/)\.git-credentials$`,
    String.raw`${HOME}/\.(?:npmrc|netrc|pypirc|pgpass)$`,
    String.raw`(?:^|/)\.docker/config\.json$`,
    String.raw`(?:^|/)\.kube/config$`,
    String.raw`(?:^|/)\.config/gcloud/(?:credentials\.db|application_default_credentials\.json)$`,
    String.raw`(?:^|/)\.config/gh/hosts\.yml$`,
    String.raw`(?:^|[=@<:])/etc/g?shadow$`,
    String.raw`(?:^|[=@<:])/proc/(?:self|\d+|\$\$)/environ$`,
  ].join('|'),
);

/** The last component of every {@link CREDENTIAL} path: a word whose last component is none of these is no credential, and costs a short test. */
const CREDENTIAL_NAME =
  /^(?:\.ssh\/?|id_[\w-]+|identity|credentials(?:\.db)?|\.git-credentials|\.npmrc|\.netrc|\.pypirc|\.pgpass|config(?:\.json)?|application_default_credentials\.json|hosts\.yml|g?shadow|environ)$/;

/** Whether `word` names a credential ({@link CREDENTIAL}). */
export function namesCredential(word: string): boolean {
  return CREDENTIAL_NAME.test(word.slice(word.lastIndexOf('/', word.length - 2) + 1)) && CREDENTIAL.test(word);
}

/** A file read each time a shell starts, a service or timer unit, a crontab, an autostart entry: what is written there runs again later. */
export const PERSISTENT = new RegExp(
  '^(?:' +
    [
      String.raw`${HOME}/(?:\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin|xprofile|xinitrc)$|\.config/(?:fish/config\.fish$|autostart(?:/|$)|systemd/user(?:/|$))|\.ssh/(?:authorized_keys2?|rc)$|Library/Launch(?:Agents|Daemons)(?:/|$))`,
      String.raw`/etc/(?:profile$|profile\.d(?:/|$)|bash\.bashrc$|bashrc$|zsh(?:/|rc$)|zprofile$|environment$|cron|anacrontab$|rc\.local$|init\.d(?:/|$)|systemd(?:/|$)|xdg/autostart(?:/|$)|ld\.so\.preload$)`,
      String.raw`/(?:usr/)?lib/systemd(?:/|$)`,
      String.raw`/var/spool/cron(?:/|$)`,
      String.raw`/Library/Launch(?:Agents|Daemons)(?:/|$)`,
    ].join('|') +
    ')',
);

/** Whether `path`, as a hook writes it (quotes removed, `..` folded), is a place of {@link PERSISTENT}. */
export function persists(path: string): boolean {
  const folded = path.includes('/.') || path.includes('//') ? posix.normalize(path) : path;
  return PERSISTENT.test(folded);
}

/** Redirections that write (the file is the next word). */
const WRITES_TO = /^(?:\d?>>?|&>>?)$/;
/** Commands that copy to their last argument, or to `-t DIR`. */
const COPIES = /^(?:cp|mv|install|ln|rsync)$/;
/** Commands whose operands may be files they write. */
const WRITERS = /^(?:cp|mv|install|ln|rsync|tee|dd|sed)$/;

/**
 * The indexes in `all` (a command's words) of the files it writes: redirections' targets, `tee`'s
 * files, the destination of `cp`/`mv`/`install`/`ln`/`rsync` (last, or `-t DIR`), `dd of=`, the
 * files `sed -i` edits. `offset` is where the command's own words start in `all`.
 */
export function writtenWords(all: readonly string[], offset: number): number[] {
  const out: number[] = [];
  for (let j = 1; j < all.length; j++) if (WRITES_TO.test(all[j - 1]!)) out.push(j);
  const first = all[offset] ?? '';
  const name = first.slice(first.lastIndexOf('/') + 1);
  if (!WRITERS.test(name)) return out;
  const operands: number[] = [];
  for (let j = offset + 1; j < all.length; j++) {
    if (WRITES_TO.test(all[j]!) || /^\d?<$/.test(all[j]!)) j++;
    else if (!all[j]!.startsWith('-')) operands.push(j);
  }
  if (name === 'tee') out.push(...operands);
  else if (name === 'dd') out.push(...operands.filter((j) => all[j]!.startsWith('of=')));
  else if (name === 'sed' && all.some((w, j) => j > offset && /^-[a-zA-Z]*i/.test(w)))
    out.push(...operands.slice(all.includes('-e') ? 0 : 1));
  else if (COPIES.test(name)) {
    const target = all.findIndex((w, j) => j > offset && (w === '-t' || w === '--target-directory'));
    if (target > 0 && target + 1 < all.length) out.push(target + 1);
    else if (operands.length >= 2) out.push(operands.at(-1)!);
  }
  return out;
}

/** The file a word written to names (`of=/x` of dd is `/x`). */
export function writtenPath(word: string): string {
  return word.startsWith('of=') ? word.slice(3) : word;
}

/** What a command (`name` and its arguments) does to make something run at boot, login or on a schedule, if it does. */
export function persistentCommand(name: string, args: readonly string[]): string | undefined {
  const has = (re: RegExp) => args.some((a) => re.test(a));
  if (name === 'systemctl' && has(/^(?:enable|reenable|link|add-wants|add-requires)$/))
    return 'enables a service unit to start at boot or login (systemctl enable)';
  if (name === 'update-rc.d' && has(/^(?:defaults|enable)$/)) return 'enables an init script at boot (update-rc.d)';
  if (name === 'chkconfig' && has(/^(?:on|--add)$/)) return 'enables an init script at boot (chkconfig)';
  if (name === 'rc-update' && has(/^add$/)) return 'adds a service to a runlevel (rc-update add)';
  if (name === 'launchctl' && has(/^(?:load|bootstrap|enable|submit)$/)) return 'loads a launchd job (launchctl)';
  // `crontab -l` lists, `-r` removes, `-e` edits by hand: anything else installs a crontab (from a file or `-`).
  if (name === 'crontab' && !has(/^-[lrev]/)) return 'installs a crontab';
  return undefined;
}
