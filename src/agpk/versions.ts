/** The order of AGPK package versions (upgrade, market choice, source re-probes). */
import semver from 'semver';

function byCodeUnits(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Compares dot/dash/plus-separated parts: numeric parts numerically, anything else as text; a longer list wins a tie. */
function compareParts(a: string, b: string, separators: RegExp): number {
  const pa = a.split(separators);
  const pb = b.split(separators);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    // Semantic versioning: a numeric identifier sorts before an alphanumeric one.
    const c =
      !Number.isNaN(nx) && !Number.isNaN(ny)
        ? nx - ny
        : !Number.isNaN(nx)
          ? -1
          : !Number.isNaN(ny)
            ? 1
            : byCodeUnits(x, y);
    if (c !== 0) return Math.sign(c);
  }
  return 0;
}

/** `1.2.3-rc.1+build.5` as {core: "1.2.3", pre: "rc.1", build: "build.5"} when its core is dotted numbers. */
function semverParts(v: string): { core: string; pre: string | undefined; build: string | undefined } | undefined {
  const m = /^(\d+(?:\.\d+)*)(?:-([^+]+))?(?:\+(.+))?$/.exec(v);
  return m ? { core: m[1]!, pre: m[2], build: m[3] } : undefined;
}

/**
 * Compares versions. Two SemVer 2.0.0 versions compare by `semver` (pre-release identifiers in
 * ASCII order, so `1.0.0-Beta` < `1.0.0-alpha`); build metadata only breaks a tie (absent first),
 * so the order is total. Anything else falls back to {@link compareLoose}.
 */
export function compareVersions(a: string, b: string): number {
  if (isSemver(a) && isSemver(b)) return semver.compareBuild(a, b);
  return compareLoose(a, b);
}

/** Exactly a SemVer 2.0.0 version: no `v`/`=` prefix or white space, which `semver` would forgive. */
function isSemver(version: string): boolean {
  return semver.parse(version) !== null && /^\d/.test(version) && version.trim() === version;
}

/**
 * The fallback for versions SemVer does not cover (`0.9`, `1.2.3.4`, `2024-01-05`, `latest`,
 * `v2`): dotted numbers compare numerically and a pre-release (`-rc.1`) sorts before its release,
 * as SemVer would; a version whose core is not dotted numbers compares part by part, numbers
 * numerically, anything else by code units (never the host's locale, so every machine agrees).
 */
function compareLoose(a: string, b: string): number {
  const sa = semverParts(a);
  const sb = semverParts(b);
  if (!sa || !sb) return compareParts(a, b, /[.+-]/);
  const core = compareParts(sa.core, sb.core, /\./);
  if (core !== 0) return core;
  if (sa.pre !== sb.pre) {
    if (sa.pre === undefined) return 1;
    if (sb.pre === undefined) return -1;
    const pre = compareParts(sa.pre, sb.pre, /\./);
    if (pre !== 0) return pre;
  }
  if (sa.build === sb.build) return 0;
  if (sa.build === undefined) return -1;
  if (sb.build === undefined) return 1;
  return compareParts(sa.build, sb.build, /\./);
}
